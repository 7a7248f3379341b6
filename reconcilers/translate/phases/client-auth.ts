// Phase: what each server name's TLS handshake asks for.
import { hostOrder } from '../claims.ts';
import { type Draft, describe } from '../draft.ts';

/** Client certificates: what the TLS handshake asks for, per server name (hostCa, and explicit "off" below a wildcard). */
export function askClientCertificates(d: Draft): void {
  const { hostCa, routes, clientAuth } = d;
  for (const [h, w] of hostCa) clientAuth[h] = { id: w.spec.caId, ca: w.spec.ca, depth: w.spec.depth, source: `${w.spec.secret} (${describe(w.owner.ref)})` };
  // The handshake looks a server name up as the router looks up a host (exact, one-label "*." wildcard, "_") but
  // without knowing which hosts have routes: a host with routes of its own, below a wildcard or "_" that asks, gets an
  // explicit "ask for nothing" (wildcards before exact hosts, so an exact host below an "off" wildcard needs none).
  if (hostCa.has('_') || [...hostCa.keys()].some((h) => h.startsWith('*.'))) {
    for (const h of Object.keys(routes).sort(hostOrder).reverse()) {
      if (h === '_' || clientAuth[h]) continue;
      const dot = h.indexOf('.');
      const wild = !h.startsWith('*.') && dot > 0 ? `*${h.slice(dot)}` : undefined;
      const next = (wild && clientAuth[wild]) || clientAuth._;
      if (next && !('off' in next)) clientAuth[h] = { off: true };
    }
  }
}
