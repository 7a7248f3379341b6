// Phase: the certificates of Gateways' HTTPS listeners. nginx picks a certificate by the TLS server name (SNI)
// from one table for every port, so a listener's certificate is entered for its hostname, or — for a listener
// without one — for the hosts of the routes attached to it. A name an Ingress or Route (older users of the table)
// already has a certificate for keeps it; the listener's Gateway hears it (Warning).
import type { Certificate } from '../../config/types.ts';
import type { TlsMaterial } from '../../model/types.ts';
import type { Draft } from '../draft.ts';
import { gatewayApiState } from './attach.ts';

export function loadGatewayCertificates(d: Draft): void {
  if (!d.o.gatewayApi) return;
  const state = gatewayApiState(d.snap, d.o.gatewayApi);
  if (!state.gateways.size) return;
  // The hosts each listener serves (from the attachments), for listeners without a hostname.
  const served = new Map<object, Set<string>>();
  for (const parents of state.routes.values()) {
    for (const p of parents) for (const a of p.attached) for (const h of a.hosts) if (h !== '_') (served.get(a.listener) ?? served.set(a.listener, new Set()).get(a.listener)!).add(h);
  }
  const mine = new Map<string, string>(); // host → Gateway that set it
  for (const gw of state.gateways.values()) {
    for (const l of gw.listeners) {
      if (l.protocol !== 'HTTPS' || !l.usable || l.podPort === undefined || !l.certificates.length) continue;
      const m = d.snap.secrets.get(l.certificates[0]!);
      if (!m || !m.ok) continue;
      // Without a hostname: the certificate of any name on the port ("<pod port>/_", certs.lua), and of the hosts
      // its routes name (so a name an older Ingress has no certificate for is this one's everywhere).
      if (!l.hostname && !d.certificates[`${l.podPort}/_`]) d.certificates[`${l.podPort}/_`] = certOf(d, m);
      const hosts = l.hostname ? [l.hostname] : [...(served.get(l) ?? [])].sort();
      for (const h of hosts) {
        if (d.certificates[h] && !mine.has(h)) {
          d.warn(`Gateway/${gw.key}`, 'TLSConflict', `TLS for host ${h} on listener ${l.name}: an Ingress or Route already configures a certificate for it; that one is served`);
          continue;
        }
        if (mine.has(h)) continue; // the oldest Gateway's listener wins
        d.certificates[h] = certOf(d, m);
        mine.set(h, gw.key);
      }
    }
  }
}

function certOf(d: Draft, m: Extract<TlsMaterial, { ok: true }>): Certificate {
  let c = d.memo?.certificates.get(m);
  if (!c) {
    c = { cert: m.cert, key: m.privateKey, source: m.key, notAfter: m.notAfter };
    d.memo?.certificates.set(m, c);
  }
  return c;
}
