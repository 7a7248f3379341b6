// Which Service a cluster IP belongs to. auth-url and mirror-target may name only Services of the Ingress's own
// namespace (unless the ConfigMap's allow-cross-namespace-auth says otherwise); an IP literal or a host name that
// is, or resolves to, another Service's cluster IP would get around that, so both look the address up here. Pure.
import { addressKey } from '../values/addresses.ts';
import type { NormalizedService } from '../model/types.ts';

/** Every address a Service answers on as a virtual IP (cluster IPs, external and load-balancer IPs) → "namespace/name". */
export function clusterIpIndex(services: Iterable<NormalizedService>): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of services) {
    for (const a of [s.clusterIP, ...(s.otherIPs ?? [])]) {
      const k = a && a !== 'None' ? addressKey(a) : null;
      if (k && !out.has(k)) out.set(k, s.key);
    }
  }
  return out;
}

/** The Service whose virtual IP `address` is (any spelling), or undefined. */
export function serviceOfAddress(index: ReadonlyMap<string, string>, address: string): string | undefined {
  const k = addressKey(address);
  return k ? index.get(k) : undefined;
}
