// Portico itself, as tenants could point at it. Each replica knows its own listener addresses (app/setup.ts
// ownAddresses), but not the other replicas' pod IPs nor its Service's cluster, external and load-balancer IPs:
// without those, an ExternalName to Portico's Service or a hand-written EndpointSlice listing the Portico pods
// makes every request bounce between replicas until worker_connections runs out, for every tenant. The published
// Service (--publish-service) names them: its addresses and every address of its EndpointSlices (any condition:
// a replica that is not ready yet is still Portico) are refused like loopback. Pure: reads normalized records.
import { createHash } from 'node:crypto';
import type { NormalizedService, NormalizedSlice } from '../model/types.ts';

/** Every address that is Portico's published Service or one of its pods, sorted, without duplicates. */
export function selfAddressesOf(svc: NormalizedService | undefined, slices: readonly NormalizedSlice[]): string[] {
  const out = new Set<string>();
  if (svc) {
    if (svc.clusterIP && svc.clusterIP !== 'None') out.add(svc.clusterIP);
    for (const a of svc.otherIPs ?? []) out.add(a);
  }
  for (const s of slices) for (const e of s.endpoints) out.add(e.address);
  return [...out].sort();
}

/**
 * The id Portico puts in the hop header of every request it proxies (see nginx-assets/templates/http.hbs): the same
 * on every replica of one installation (derived from its Service's uid, which no other cluster or installation
 * shares, and the controller class), so a request that comes back to any replica is recognized at once.
 */
export function loopIdOf(serviceUid: string, controllerClass: string): string {
  return createHash('sha256').update(`portico-loop\u0000${serviceUid}\u0000${controllerClass}`).digest('hex').slice(0, 16);
}

/**
 * Whether a DNS name is the cluster name of Service `key` ("namespace/name"): name.namespace,
 * name.namespace.svc, name.namespace.svc.<cluster domain> (a trailing dot allowed, any case).
 */
export function namesService(host: string, key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return false;
  const ns = key.slice(0, slash);
  const name = key.slice(slash + 1);
  const h = host.toLowerCase().replace(/\.$/, '');
  const base = `${name}.${ns}`;
  return h === base || h === `${base}.svc` || h.startsWith(`${base}.svc.`);
}
