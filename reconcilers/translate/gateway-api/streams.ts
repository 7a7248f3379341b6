// Gateway API's TCP, UDP and TLS listeners as the structure holds them: which route's backends each pod port's
// connections go to. A TCP or UDP listener serves the oldest route attached to it (the others stay Accepted and
// counted, as the spec's conflict rule says: oldest wins); a TLS listener gives each server name to the route whose
// own hostname matches it most specifically (a route naming it, then the longest wildcard covering it), the oldest
// among equals — Gateway API's precedence across routes. A server name of a Terminate listener is terminated with
// that listener's certificate (one pod port may hold Passthrough and Terminate listeners: Mixed), and its backends
// get TLS again when a BackendTLSPolicy covers them (failing closed when it cannot apply). Pure: the attachment
// (attach.ts) decides, the gateway resolves endpoints (stream.ts).
import type { GatewayStream, GatewayStreamCertificate, GatewayStreamTarget } from '../../config/types.ts';
import type { BackendTlsPolicyRecord } from '../../model/gateway-api.ts';
import type { TlsMaterial } from '../../model/types.ts';
import { covers, terminatesTls, type GatewayApiState, type ListenerState, type StreamBackendState } from './attach.ts';
import { policyUsable } from './backend-tls.ts';

/** What terminated TLS targets read besides the state: the listeners' Secrets and the policies over their backends. */
export interface StreamTlsInputs {
  secret: (key: string) => TlsMaterial | undefined;
  policy: (namespace: string, service: string, port: number | undefined) => BackendTlsPolicyRecord | undefined;
}

/** How specifically a route's own hostnames match a server name it serves: naming it, else its longest wildcard. */
function ownSpecificity(hostnames: readonly string[], host: string): number {
  if (hostnames.includes(host)) return 1_000_000;
  let best = 0;
  for (const w of hostnames) if (w.startsWith('*.') && covers(w, host) && w.length > best) best = w.length;
  return best;
}

const backendsOf = (bs: readonly StreamBackendState[]): GatewayStreamTarget['backends'] =>
  bs.filter((b) => b.ref.weight > 0).map((b) => ({ namespace: b.ref.namespace, service: b.ref.name, port: b.ref.port ?? 0, weight: b.ref.weight, ok: b.ok && b.ref.port !== undefined }));

/**
 * BackendTLSPolicy on a terminated target's backends. One hop proxies the target with one TLS setting, so the
 * policy of its first usable backend decides; a backend with another policy (or none) keeps its share, which fails
 * (MixedBackendTLS). A policy that holds but cannot be applied fails every backend it covers (never plaintext).
 */
function withBackendTls(t: GatewayStreamTarget, tls: StreamTlsInputs['policy']): void {
  const live = t.backends.filter((b) => b.ok);
  if (!live.length) return;
  const first = live[0]!;
  const p = tls(first.namespace, first.service, first.port);
  for (const b of live.slice(1)) {
    if (tls(b.namespace, b.service, b.port) === p) continue;
    b.ok = false;
    b.problem = {
      reason: 'MixedBackendTLS',
      message: `backend ${b.namespace}/${b.service}:${b.port}: its BackendTLSPolicy differs from that of ${first.namespace}/${first.service}:${first.port} (${p ? p.name : 'none'}); the connections of one server name are proxied with one TLS setting, so its share of the connections fails`,
    };
  }
  if (!p) return;
  if (!policyUsable(p) || !p.caPem) {
    for (const b of live) {
      if (!b.ok) continue;
      b.ok = false;
      b.problem = { reason: 'BackendTLSPolicyNotUsable', message: `backend ${b.namespace}/${b.service}:${b.port}: BackendTLSPolicy ${p.key} cannot be applied (${p.unsupported ?? 'no usable CA certificate'}); its share of the connections fails rather than being sent without TLS` };
    }
    return;
  }
  t.backendTls = { policy: p.key, hostname: p.hostname, ca: p.caPem };
}

export function gatewayStreams(state: Pick<GatewayApiState, 'streams'>, tls?: StreamTlsInputs): GatewayStream[] {
  return state.streams.map((s) => {
    const targets: GatewayStreamTarget[] = [];
    const certificates: GatewayStreamCertificate[] = [];
    const certOf = new Map<ListenerState, number | null>();
    /** The index of a Terminate listener's certificate (null: none usable now; its names are closed). */
    const certificateOf = (l: ListenerState): number | null => {
      let i = certOf.get(l);
      if (i !== undefined) return i;
      const m = l.certificates[0] !== undefined ? tls?.secret(l.certificates[0]) : undefined;
      i = m && m.ok ? certificates.push({ source: m.key, cert: m.cert, key: m.privateKey }) - 1 : null;
      certOf.set(l, i);
      return i;
    };
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
      for (const [host, { r }] of chosen) {
        const t: GatewayStreamTarget = { host, route: r.route, backends: backendsOf(r.backends) };
        if (terminatesTls(r.listener)) {
          const cert = certificateOf(r.listener);
          if (cert === null) continue; // no certificate to serve: the name is closed (the listener says why)
          t.terminate = cert;
          if (tls) withBackendTls(t, tls.policy);
        }
        targets.push(t);
      }
      targets.sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0));
    } else if (s.routes.length) {
      const r = s.routes[0]!;
      targets.push({ host: '_', route: r.route, backends: backendsOf(r.backends) });
    }
    return { port: s.port, protocol: s.protocol, targets, ...(certificates.length ? { certificates } : {}) };
  });
}
