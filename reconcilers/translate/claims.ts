// The paths each object claims on each host, derived once per (immutable) record.
import type { PathMatch, RouteConditions } from '../config/types.ts';
import type { PathClaim } from './types.ts';
import type { NormalizedIngress, NormalizedRoute, RouteMatchN, RouteRuleN, ServiceBackendRef } from '../model/types.ts';
import { claimPathOf } from './matching.ts';
import { ingressRef, routeRef } from './objects.ts';

export function backendIdOf(namespace: string, ref: ServiceBackendRef): string {
  const port = 'number' in ref.port ? String(ref.port.number) : ref.port.name;
  return `${namespace}_${ref.service}_${port}`;
}

export function hostOrder(a: string, b: string): number {
  const rank = (h: string) => (h === '_' ? 2 : h.startsWith('*.') ? 1 : 0);
  return rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0);
}

export type { PathClaim } from './types.ts';

/**
 * The paths of one Ingress record (its rules, and its default backend's "/" on its own hosts and on "_"), derived
 * once per record: records are immutable and replaced on change, so this is a pure function of the record.
 */
const claimCache = new WeakMap<NormalizedIngress, { paths: PathClaim[]; defaults: PathClaim[] }>();
export function claimsOfIngress(ing: NormalizedIngress): { paths: PathClaim[]; defaults: PathClaim[] } {
  let c = claimCache.get(ing);
  if (c) return c;
  const source = ingressRef(ing.key);
  const make = (host: string, path: string, match: PathMatch, ref: ServiceBackendRef, written = path): PathClaim => ({ host, id: `${match} ${path}`, path, written, match, ref, backendId: backendIdOf(ing.namespace, ref), serviceKey: `${ing.namespace}/${ref.service}`, source });
  const paths: PathClaim[] = [];
  for (const rule of ing.rules) for (const p of rule.paths) paths.push(make(rule.host ?? '_', claimPathOf(p), p.match, p.backend, p.written));
  const defaults: PathClaim[] = [];
  if (ing.defaultBackend) {
    const ownHosts = new Set(ing.rules.map((r) => r.host ?? '_'));
    ownHosts.add('_');
    for (const h of [...ownHosts].sort(hostOrder)) defaults.push(make(h, '/', 'prefix', ing.defaultBackend));
  }
  c = { paths, defaults };
  claimCache.set(ing, c);
  return c;
}

export function condCount(c: RouteConditions | undefined): number {
  return c ? (c.methods?.length ? 1 : 0) + (c.headers?.length ?? 0) + (c.query?.length ?? 0) : 0;
}

/** One match of a Route rule, as a claim on a host (what it conflicts on includes its conditions). */
export interface RouteClaim {
  pc: PathClaim;
  rule: RouteRuleN;
  m: RouteMatchN;
  /** false when the rule has no backends (the claim still holds its path). */
  hasBackend: boolean;
}

const routeClaimCache = new WeakMap<NormalizedRoute, RouteClaim[]>();
/** The claims of one Route record (every host × rule × match), derived once per record. */
export function claimsOfRoute(rt: NormalizedRoute): RouteClaim[] {
  let c = routeClaimCache.get(rt);
  if (c) return c;
  c = [];
  const source = routeRef(rt.key);
  const hosts = rt.hosts.length ? rt.hosts : ['_'];
  for (const rule of rt.rules) {
    const first = rule.backends[0];
    const ref: ServiceBackendRef = { service: first?.service ?? '', port: { number: first?.port ?? 0 } };
    for (const h of hosts) {
      for (const m of rule.matches) {
        const cond = m.conditions ? ` ${JSON.stringify(m.conditions)}` : '';
        c.push({
          pc: { host: h, id: `${m.match} ${m.path}${cond}`, path: m.path, written: m.path, match: m.match, ref, backendId: first ? backendIdOf(rt.namespace, ref) : '', serviceKey: `${rt.namespace}/${ref.service}`, source },
          rule,
          m,
          hasBackend: !!first,
        });
      }
    }
  }
  routeClaimCache.set(rt, c);
  return c;
}
