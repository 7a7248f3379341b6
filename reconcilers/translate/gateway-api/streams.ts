// Gateway API's TCP, UDP and TLS listeners as the structure holds them: which route's backends each pod port's
// connections go to. A TCP or UDP listener serves the oldest route attached to it (the others stay Accepted and
// counted, as the spec's conflict rule says: oldest wins); a TLS (passthrough) listener gives each server name to the
// oldest route naming it. Pure: the attachment (attach.ts) decides, the gateway resolves endpoints (stream.ts).
import type { GatewayStream, GatewayStreamTarget } from '../../config/types.ts';
import type { GatewayApiState, StreamBackendState } from './attach.ts';

const backendsOf = (bs: readonly StreamBackendState[]): GatewayStreamTarget['backends'] =>
  bs.filter((b) => b.ref.weight > 0).map((b) => ({ namespace: b.ref.namespace, service: b.ref.name, port: b.ref.port ?? 0, weight: b.ref.weight, ok: b.ok && b.ref.port !== undefined }));

export function gatewayStreams(state: Pick<GatewayApiState, 'streams'>): GatewayStream[] {
  return state.streams.map((s) => {
    const targets: GatewayStreamTarget[] = [];
    if (s.protocol === 'TLS') {
      const seen = new Set<string>();
      for (const r of s.routes) {
        for (const host of r.hosts) {
          if (seen.has(host)) continue;
          seen.add(host);
          targets.push({ host, route: r.route, backends: backendsOf(r.backends) });
        }
      }
      targets.sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0));
    } else if (s.routes.length) {
      const r = s.routes[0]!;
      targets.push({ host: '_', route: r.route, backends: backendsOf(r.backends) });
    }
    return { port: s.port, protocol: s.protocol, targets };
  });
}
