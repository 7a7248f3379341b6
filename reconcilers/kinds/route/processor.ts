// The Route's claim processor: how a Route becomes paths of the kind-agnostic translation (translate/draft.ts
// ClaimProcessor) — every host × rule × match is a claim with its conditions and priority; its route has the rule's
// timeouts, retries, weighted split and websocket setting. Part of the pure translation (tools/imports.ts).
import type { Route } from '../../config/types.ts';
import { recordsOf } from '../../model/model.ts';
import type { IngressClassInfo, NormalizedRoute, NormalizedUpstream, RouteMatchN, RouteRuleN, ServiceBackendRef } from '../../model/types.ts';
import { isIngressServed, routeRef } from '../../translate/objects.ts';
import { backendIdOf } from '../../translate/claims.ts';
import { fullTimeouts } from '../../translate/profiles.ts';
import type { Claim, ClaimProcessor, Draft, HostContext, KindClaim, Owner, RouteDraft } from '../../translate/draft.ts';

/** One match of a Route rule, as a claim on a host (what it conflicts on includes its conditions). */
export interface RouteClaim extends KindClaim {
  rule: RouteRuleN;
  m: RouteMatchN;
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
    const backends: ServiceBackendRef[] = rule.backends.map((be) => ({ service: be.service, port: { number: be.port } }));
    for (const h of hosts) {
      for (const m of rule.matches) {
        const cond = m.conditions ? ` ${JSON.stringify(m.conditions)}` : '';
        const rc: RouteClaim = {
          pc: { host: h, id: `${m.match} ${m.path}${cond}`, path: m.path, written: m.path, match: m.match, ref, backendId: first ? backendIdOf(rt.namespace, ref) : '', serviceKey: `${rt.namespace}/${ref.service}`, source },
          rule,
          m,
          priority: rule.priority,
          noBackend: !first,
          backends,
          plugins: rule.plugins,
        };
        if (m.conditions) rc.conditions = m.conditions;
        c.push(rc);
      }
    }
  }
  routeClaimCache.set(rt, c);
  return c;
}

/** The hosts a Route reaches (its claims and TLS hosts) and the backends its rules split over. */
const reachCache = new WeakMap<NormalizedRoute, { hosts: string[]; backends: string[] }>();
function routeReach(rt: NormalizedRoute): { hosts: string[]; backends: string[] } {
  const cached = reachCache.get(rt);
  if (cached) return cached;
  const hosts = new Set(rt.hosts.length ? rt.hosts : ['_']);
  for (const t of rt.tls) for (const h of t.hosts) hosts.add(h);
  const backends = new Set<string>();
  for (const rc of claimsOfRoute(rt)) for (const ref of rc.backends ?? []) backends.add(backendIdOf(rt.namespace, ref));
  const r = { hosts: [...hosts], backends: [...backends] };
  reachCache.set(rt, r);
  return r;
}

const rtOf = (ow: Owner): NormalizedRoute => ow.record as NormalizedRoute;

export const routeProcessor: ClaimProcessor = {
  kind: 'Route',
  admit,
  records: (snap) => recordsOf(snap, 'Route').values(),
  reach: (rec) => routeReach(rec as NormalizedRoute),
  claims: (ow) => claimsOfRoute(rtOf(ow)),
  tls: (ow) => rtOf(ow).tls,
  route: crdRoute,
  // Its split, retries and timeouts come from the rule: never reused from the memo.
  volatile: () => true,
};

/** Whether each Route is served (its class). */
function admit(d: Draft, classes: ReadonlyMap<string, IngressClassInfo>): void {
  const { snap, o, status, owners } = d;
  for (const rt of recordsOf(snap, 'Route').values()) {
    const s = isIngressServed({ className: rt.className, classFromAnnotation: false }, classes, o);
    const ref = routeRef(rt.key);
    status.set(ref, { served: s, programmed: false, problems: [] });
    if (s) owners.push({ ref, created: rt.creationTimestamp, ns: rt.namespace, record: rt, proc: routeProcessor });
  }
}

/** The route of a Route object's claim: timeouts, retries, weighted split, websocket. */
function crdRoute(d: Draft, c: Claim, cx: HostContext, up: NormalizedUpstream | undefined): RouteDraft {
  const g = d.snap.global;
  let retries = up?.retries;
  const rc = c.kc as RouteClaim;
  const rule = rc.rule;
  const route: Route = { source: c.pc.source, backendId: c.backendId, sslRedirect: cx.tls && g.sslRedirect };
  const tt = fullTimeouts(rule.timeouts, g) ?? fullTimeouts(up?.timeouts, g);
  if (tt) route.timeouts = tt;
  if (rule.retries) retries = rule.retries;
  if (c.backendId && rule.backends.length > 1) {
    route.split = rule.backends.map((be) => ({ backendId: backendIdOf(c.owner.ns, { service: be.service, port: { number: be.port } }), weight: be.weight }));
  }
  if (!rule.websocket) route.websocket = false;
  if (rc.noBackend && !c.pluginIds.length) route.action = 'unavailable';
  return { route, retries, fromAnnotations: {} };
}
