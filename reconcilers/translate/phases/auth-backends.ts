// Phase: the backends of external authentication and mirrors.
import type { Draft } from '../draft.ts';
import { resolveBackend } from '../backend.ts';

/** The backends of external authentication and mirrors: Services like any other; other hosts and IPs as they are. */
export function resolveAuthBackends(d: Draft): void {
  const { authBackends, extAuthBackends, backends } = d;
  // external-auth services are backends like any other.
  for (const [id, a] of [...authBackends].sort(([x], [y]) => (x < y ? -1 : 1))) {
    resolveBackend(d, a.ref, undefined, a.ns, { service: a.service, port: { number: a.port } }, id);
  }
  // auth-url hosts that are not Services: resolved by the gateway like an ExternalName (its address filter).
  for (const [id, e] of [...extAuthBackends].sort(([x], [y]) => (x < y ? -1 : 1))) {
    if (backends[id]) continue;
    backends[id] = e.address !== undefined
      ? { id, endpoints: [{ address: e.address, port: e.port, weight: 1 }], balance: 'round_robin' }
      : { id, endpoints: [], balance: 'round_robin', externalName: e.host as string, externalPort: e.port, ...(e.noClusterIPs ? { noClusterIPs: true as const } : {}) };
  }
}
