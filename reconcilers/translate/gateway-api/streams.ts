// Gateway API's TCP, UDP and TLS listeners as the structure holds them: which route's backends each pod port's
// connections go to. A TCP or UDP listener serves the oldest route attached to it (the others stay Accepted and
// counted, as the spec's conflict rule says: oldest wins); a TLS (passthrough) listener gives each server name to the
// route whose own hostname matches it most specifically (a route naming it, then the longest wildcard covering it),
// the oldest among equals — Gateway API's precedence across routes. Pure: the attachment (attach.ts) decides, the
// gateway resolves endpoints (stream.ts).
import type { GatewayStream, GatewayStreamTarget } from '../../config/types.ts';
import { covers, type GatewayApiState, type StreamBackendState } from './attach.ts';

/** How specifically a route's own hostnames match a server name it serves: naming it, else its longest wildcard. */
function ownSpecificity(hostnames: readonly string[], host: string): number {
  if (hostnames.includes(host)) return 1_000_000;
  let best = 0;
  for (const w of hostnames) if (w.startsWith('*.') && covers(w, host) && w.length > best) best = w.length;
  return best;
}

const backendsOf = (bs: readonly StreamBackendState[]): GatewayStreamTarget['backends'] =>
  bs.filter((b) => b.ref.weight > 0).map((b) => ({ namespace: b.ref.namespace, service: b.ref.name, port: b.ref.port ?? 0, weight: b.ref.weight, ok: b.ok && b.ref.port !== undefined }));

export function gatewayStreams(state: Pick<GatewayApiState, 'streams'>): GatewayStream[] {
  return state.streams.map((s) => {
    const targets: GatewayStreamTarget[] = [];
    if (s.protocol === 'TLS') {
      // Routes come oldest first: a later route takes a name only with a more specific hostname of its own.
      const chosen = new Map<string, { spec: number; r: (typeof s.routes)[number] }>();
      for (const r of s.routes) {
        for (const host of r.hosts) {
          const spec = ownSpecificity(r.hostnames, host);
          const cur = chosen.get(host);
          if (!cur || spec > cur.spec) chosen.set(host, { spec, r });
        }
      }
      for (const [host, { r }] of chosen) targets.push({ host, route: r.route, backends: backendsOf(r.backends) });
      targets.sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0));
    } else if (s.routes.length) {
      const r = s.routes[0]!;
      targets.push({ host: '_', route: r.route, backends: backendsOf(r.backends) });
    }
    return { port: s.port, protocol: s.protocol, targets };
  });
}
