// The HTTPRoute's claim processor: how an HTTPRoute becomes paths of the kind-agnostic translation. Every
// (attached listener × host × rule × match) is a claim on the listener's host key (translate/gateway-api/attach.ts
// listenerHost: the Gateway port's pod port and the host), so Gateways never share routes with each other or with
// Ingresses. Gateway API's order between the matches of one path (a method match first, then the most header
// matches, then the most query matches, then the oldest route) is encoded as the claim's priority, which the router
// orders by before conditions and age. Filters become plugin instances of the route's own. Part of the pure
// translation (tools/imports.ts).
import type { PluginInstance, Route, RouteConditions, RouteMirror } from '../../config/types.ts';
import { GATEWAY_GROUP, type HttpFilterN, type HttpMatchN, type HttpRouteRecord, type HttpRuleN } from '../../model/gateway-api.ts';
import { recordsOf } from '../../model/model.ts';
import type { IngressClassInfo, ServiceBackendRef } from '../../model/types.ts';
import { backendIdOf } from '../../translate/claims.ts';
import { fullTimeouts } from '../../translate/profiles.ts';
import type { ClaimProcessor, Draft, KindClaim, Owner, RouteDraft } from '../../translate/draft.ts';

type RouteDraftSettings = RouteDraft['fromAnnotations'];
import { gatewayApiState, listenerHost, routeHostKey, type ListenerState, type ParentState } from '../../translate/gateway-api/attach.ts';
import type { PathClaim } from '../../translate/types.ts';
import { byRank } from '../../translate/phases/claims.ts';
import { policyFor, policyUsable } from '../../translate/gateway-api/backend-tls.ts';
import type { Instance as RedirectInstance } from '../../config/plugins/redirect.ts';
import type { Instance as RewriteInstance } from '../../config/plugins/rewrite.ts';

export const HTTPROUTE_REF_PREFIX = 'HTTPRoute/';
/** HTTPRoute and GRPCRoute (a GRPCRoute's record has the HTTPRoute's shape: kinds/grpcroute/normalize.ts). */
type Kind = 'HTTPRoute' | 'GRPCRoute';
const kindOf = (rt: HttpRouteRecord): Kind => (rt.grpc ? 'GRPCRoute' : 'HTTPRoute');
const refOf = (rt: HttpRouteRecord) => `${kindOf(rt)}/${rt.key}`;
/** Its key in the attachment's route states (attach.ts: HTTPRoutes by key, GRPCRoutes by "GRPCRoute/" + key). */
const stateKey = (rt: HttpRouteRecord) => (rt.grpc ? `GRPCRoute/${rt.key}` : rt.key);

/** One match of an HTTPRoute rule on one listener host. */
interface HttpClaim extends KindClaim {
  rule: HttpRuleN;
  ruleIndex: number;
  m: HttpMatchN;
  listener: ListenerState;
  /** The Gateway ("namespace/name") of that listener. */
  gateway: string;
  /** Backends the route may use (the others answer 500 in proportion to their weight). */
  usable: boolean[];
}

/** The Gateway API order of the matches of one path, as a priority (higher first). */
export function precedence(m: HttpMatchN): number {
  return (m.method ? 1_000_000 : 0) + Math.min(m.headers.length, 999) * 1000 + Math.min(m.queryParams.length, 999);
}

function conditionsOf(m: HttpMatchN): RouteConditions | undefined {
  const c: RouteConditions = {};
  if (m.method) c.methods = [m.method];
  if (m.headers.length) c.headers = m.headers.map((h) => ({ name: h.name.toLowerCase(), type: h.type === 'RegularExpression' ? 'regex' : 'exact', value: h.value }));
  if (m.queryParams.length) c.query = m.queryParams.map((q) => ({ name: q.name, type: q.type === 'RegularExpression' ? 'regex' : 'exact', value: q.value }));
  return Object.keys(c).length ? c : undefined;
}

const MATCH = { Exact: 'exact', PathPrefix: 'prefix', RegularExpression: 'regex' } as const;

// A route's claims are kept while what they are made of is the same (the record, where it attaches, which of its
// backends it may use), so one route's change does not remake the claims of the others.
const claimCache = new WeakMap<HttpRouteRecord, { sig: string; claims: HttpClaim[] }>();
const byPc = new WeakMap<PathClaim, HttpClaim>();

function claimsOf(d: Draft, rt: HttpRouteRecord): HttpClaim[] {
  const state = gatewayApiState(d.snap, d.o.gatewayApi);
  const parents = state.routes.get(stateKey(rt)) ?? [];
  const refsOk = parents[0]?.resolvedRefs.status === 'True';
  // A backend whose BackendTLSPolicy cannot be applied (no usable CA, or fields Portico does not serve) fails closed.
  const usableOf = rt.rules.map((rule) => rule.backends.map((b) => (refsOk || backendUsable(d, rt, b)) && tlsApplicable(d, b)));
  const sig = JSON.stringify([
    usableOf,
    parents.map((p) => [p.accepted.status, p.attached.map((a) => [a.listener.podPort, a.listener.port, a.listener.protocol, a.hosts])]),
  ]);
  const cached = claimCache.get(rt);
  if (cached && cached.sig === sig) return cached.claims;
  const claims: HttpClaim[] = [];
  const source = refOf(rt);
  for (const p of parents) {
    if (p.accepted.status !== 'True') continue;
    for (const a of p.attached) {
      const podPort = a.listener.podPort;
      if (podPort === undefined) continue;
      rt.rules.forEach((rule, ruleIndex) => {
        const usable = usableOf[ruleIndex]!;
        const first = rule.backends.findIndex((_, i) => usable[i]);
        const fb = first >= 0 ? rule.backends[first]! : undefined;
        const ref: ServiceBackendRef = fb ? { service: fb.name, port: { number: fb.port ?? 0 }, ...(fb.namespace !== rt.namespace ? { namespace: fb.namespace } : {}) } : { service: '', port: { number: 0 } };
        const refOfB = (b: HttpRuleN['backends'][number]): ServiceBackendRef => ({ service: b.name, port: { number: b.port ?? 0 }, ...(b.namespace !== rt.namespace ? { namespace: b.namespace } : {}) });
        const backends: ServiceBackendRef[] = rule.backends.flatMap((b, i) => (usable[i] ? [refOfB(b)] : []));
        // The mirrors' backends are resolved with the others (not part of the split: route() names them).
        for (const mirror of mirrorsOf(rule)) if (backendUsable(d, rt, mirror.backend)) backends.push(refOfB(mirror.backend));
        for (const h of a.hosts) {
          const host = routeHostKey(podPort, h, rt.hostnames);
          for (const m of rule.matches) {
            const cond = conditionsOf(m);
            const match = MATCH[m.path.type];
            let path = m.path.value;
            if (match === 'prefix' && path.length > 1) path = path.replace(/\/+$/, '') || '/';
            const pc: PathClaim = {
              host,
              id: `${match} ${path}${cond ? ` ${JSON.stringify(cond)}` : ''}`,
              path,
              written: m.path.value,
              match,
              ref,
              backendId: fb ? backendIdOf(rt.namespace, ref) : '',
              serviceKey: fb ? `${fb.namespace}/${fb.name}` : '',
              source,
            };
            const hc: HttpClaim = { pc, rule, ruleIndex, m, listener: a.listener, gateway: a.gateway, usable, priority: precedence(m), noBackend: !fb, backends, plugins: rule.plugins };
            if (cond) hc.conditions = cond;
            byPc.set(pc, hc);
            claims.push(hc);
          }
        }
      });
    }
  }
  claimCache.set(rt, { sig, claims });
  return claims;
}

/** Whether one backendRef may be used (when the route's ResolvedRefs is False, only some are at fault). */
function backendUsable(d: Draft, rt: HttpRouteRecord, b: HttpRuleN['backends'][number]): boolean {
  if (b.group !== '' || b.kind !== 'Service' || b.port === undefined) return false;
  if (!d.snap.services.has(`${b.namespace}/${b.name}`)) return false;
  if (b.namespace === rt.namespace) return true;
  for (const g of recordsOf(d.snap, 'ReferenceGrant').values()) {
    if (g.namespace !== b.namespace) continue;
    if (!g.from.some((f) => f.group === GATEWAY_GROUP && f.kind === kindOf(rt) && f.namespace === rt.namespace)) continue;
    if (g.to.some((t) => t.group === '' && t.kind === 'Service' && (t.name === undefined || t.name === b.name))) return true;
  }
  return false;
}

/** Whether the BackendTLSPolicy holding for a backend (if any) can be applied. */
function tlsApplicable(d: Draft, b: HttpRuleN['backends'][number]): boolean {
  if (b.group !== '' || b.kind !== 'Service') return true;
  const p = policyFor(d.snap, b.namespace, b.name, b.port);
  return !p || policyUsable(p);
}

const rtOf = (ow: Owner): HttpRouteRecord => ow.record as HttpRouteRecord;

type MirrorFilter = Extract<HttpFilterN, { type: 'RequestMirror' }>;
/** The copies a rule makes of its requests (its RequestMirror filters, in order), a share of 0 included. */
function mirrorsOf(rule: HttpRuleN): MirrorFilter[] {
  return rule.filters.filter((f): f is MirrorFilter => f.type === 'RequestMirror');
}

/** The start of the plugin ids of a route's filters (cut at 200 characters). */
const pluginBase = (rt: HttpRouteRecord): string => `${rt.grpc ? 'gr' : 'hr'}.${rt.namespace}.${rt.name}`;

/**
 * Whether every plugin instance a route's claims register is its own: the ids of its filters' instances, which
 * no other object registers. Not so when it names Plugin objects (ExtensionRef: shared with other objects, and a
 * missing one fails its rules closed), nor when its name is so long that its ids are cut and could be another
 * route's. The incremental translation merges the plugins of a route only when this holds (else: in full).
 */
export function ownPluginsOnly(rt: HttpRouteRecord): boolean {
  return pluginBase(rt).length < 200 && !rt.rules.some((r) => r.plugins.length > 0);
}

/**
 * The hosts an HTTPRoute claims paths on (the router's keys of the listeners it is attached to, see claimsOf) and
 * every backend it names (its backendRefs and mirrors, usable or not): what the incremental translation follows.
 * `parents`: its parent states (gatewayApiState); a route no parent accepts claims nothing.
 */
export function httpRouteReach(rt: HttpRouteRecord, parents: readonly ParentState[] | undefined): { hosts: string[]; backends: string[] } {
  const hosts = new Set<string>();
  const backends = new Set<string>();
  if (!parents?.some((p) => p.accepted.status === 'True')) return { hosts: [], backends: [] };
  for (const p of parents) {
    if (p.accepted.status !== 'True') continue;
    for (const a of p.attached) {
      const podPort = a.listener.podPort;
      if (podPort !== undefined) for (const h of a.hosts) hosts.add(routeHostKey(podPort, h, rt.hostnames));
    }
  }
  const idOf = (b: HttpRuleN['backends'][number]) => backendIdOf(rt.namespace, { service: b.name, port: { number: b.port ?? 0 }, namespace: b.namespace });
  for (const r of rt.rules) {
    for (const b of r.backends) backends.add(idOf(b));
    for (const m of mirrorsOf(r)) backends.add(idOf(m.backend));
  }
  return { hosts: [...hosts], backends: [...backends] };
}

/** The plugin instances of a claim's filters (ids unique per route, rule, match and listener port). */
function filterPlugins(d: Draft, ow: Owner, pc: PathClaim): string[] {
  const hc = byPc.get(pc);
  if (!hc) return [];
  const rt = rtOf(ow);
  const ids: string[] = [];
  const base = pluginBase(rt).slice(0, 200);
  hc.rule.filters.forEach((f, i) => {
    if (f.type === 'RequestMirror') return; // route data and a directive profile (route()), not a plugin
    const inst = instanceOf(f, hc, `${kindOf(rt)} ${rt.key} rule ${hc.ruleIndex} filter ${i} (${f.type})`);
    const id = `${base}.r${hc.ruleIndex}.${hc.listener.podPort}.${i}.${fnv(JSON.stringify(inst))}`;
    d.plugins[id] ??= inst;
    ids.push(id);
  });
  // One backend and no split: its own filters are the route's (with a split, each share names its own: route()).
  const { good, bad } = shareOf(hc);
  if (good.length === 1 && bad === 0) ids.push(...backendPlugins(d, rt, hc, good[0]!));
  return ids;
}

/** The indexes of the backendRefs a claim's rule may use, and the weight of those it may not (answered 500). */
function shareOf(hc: HttpClaim): { good: number[]; bad: number } {
  const good: number[] = [];
  let bad = 0;
  hc.rule.backends.forEach((b, i) => {
    if (hc.usable[i]) good.push(i);
    else bad += b.weight;
  });
  return { good, bad };
}

/** The plugin instances of one backendRef's own filters (ids unique per route, rule, listener port and backendRef). */
function backendPlugins(d: Draft, rt: HttpRouteRecord, hc: HttpClaim, k: number): string[] {
  const fs = hc.rule.backends[k]?.filters;
  if (!fs?.length) return [];
  const base = pluginBase(rt).slice(0, 200);
  return fs.map((f, i) => {
    const inst = instanceOf(f, hc, `${kindOf(rt)} ${rt.key} rule ${hc.ruleIndex} backendRef ${k} filter ${i} (${f.type})`);
    const id = `${base}.r${hc.ruleIndex}.${hc.listener.podPort}.b${k}.${i}.${fnv(JSON.stringify(inst))}`;
    d.plugins[id] ??= inst;
    return id;
  });
}

function fnv(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16);
}

const lower = (xs: { name: string; value: string }[]) => xs.map((x) => ({ name: x.name.toLowerCase(), value: x.value }));

/** A filter as the plugin that does it (request-headers, response-headers, redirect, rewrite). */
export function instanceOf(f: HttpFilterN, hc: { m: HttpMatchN; listener: { port: number; protocol: string } }, name: string): PluginInstance {
  switch (f.type) {
    case 'RequestHeaderModifier':
      return { name, type: 'request-headers', set: lower(f.set), add: lower(f.add), remove: f.remove.map((n) => n.toLowerCase()) };
    case 'ResponseHeaderModifier':
      return { name, type: 'response-headers', set: lower(f.set), add: lower(f.add), remove: f.remove.map((n) => n.toLowerCase()) };
    case 'RequestRedirect': {
      // Gateway API: without a port, a new scheme means its well-known port, else the listener's port; a port that
      // is the scheme's well-known one is left out of the Location.
      const listenerScheme = hc.listener.protocol === 'HTTPS' ? 'https' : 'http';
      const scheme = f.scheme ?? listenerScheme;
      let port: number | undefined = f.port ?? (f.scheme ? undefined : hc.listener.port);
      if (port !== undefined && ((scheme === 'http' && port === 80) || (scheme === 'https' && port === 443))) port = undefined;
      const inst: RedirectInstance = { type: 'redirect', status: f.statusCode, keepQuery: true, scheme };
      if (f.hostname) inst.host = f.hostname;
      if (port !== undefined) inst.port = port;
      if (f.path?.type === 'ReplaceFullPath') inst.path = f.path.value;
      else if (f.path?.type === 'ReplacePrefixMatch') inst.prefix = { from: prefixOf(hc.m), to: f.path.value };
      return { name, ...inst };
    }
    case 'RequestMirror':
      throw new Error('RequestMirror is route data, not a plugin');
    case 'CORS':
      return { name, type: 'cors', allowOrigins: [...f.allowOrigins], allowMethods: [...f.allowMethods], allowHeaders: [...f.allowHeaders], exposeHeaders: [...f.exposeHeaders], allowCredentials: f.allowCredentials, maxAgeSeconds: f.maxAge, answerPreflights: true };
    case 'URLRewrite': {
      const inst: RewriteInstance = { type: 'rewrite' };
      if (f.hostname) inst.host = f.hostname;
      if (f.path?.type === 'ReplaceFullPath') inst.path = f.path.value;
      else if (f.path?.type === 'ReplacePrefixMatch') inst.prefix = { from: prefixOf(hc.m), to: f.path.value };
      return { name, ...inst };
    }
  }
}

/** The prefix a ReplacePrefixMatch replaces: the match's path (only PathPrefix matches may use it). */
function prefixOf(m: HttpMatchN): string {
  return m.path.type === 'PathPrefix' ? m.path.value.replace(/\/+$/, '') || '/' : '/';
}

function processorOf(kind: Kind): ClaimProcessor {
  const p: ClaimProcessor = {
  kind,
  admit: (d, classes) => admit(d, classes, kind, p),
  records: (snap) => recordsOf(snap, kind).values(),
  reach: (rec, snap, o) => httpRouteReach(rec as HttpRouteRecord, gatewayApiState(snap, o.gatewayApi).routes.get(stateKey(rec as HttpRouteRecord))),
  claims: () => [],
  ownPlugins: (d, ow, pc) => filterPlugins(d, ow, pc),
  tls: () => [],
  passthrough: () => 'ignored',
  route,
  volatile: () => true,
  };
  // claims() has no Draft: the claims are made in admit (where the Draft is) and kept per owner record.
  p.claims = (ow) => ownerClaims.get(ow.record) ?? [];
  return p;
}

const ownerClaims = new WeakMap<object, HttpClaim[]>();
export const httpRouteProcessor: ClaimProcessor = processorOf('HTTPRoute');
export const grpcRouteProcessor: ClaimProcessor = processorOf('GRPCRoute');

/** Every HTTPRoute (GRPCRoute) attached to a Gateway of Portico's is served; its claims are made here, where the Draft is. */
function admit(d: Draft, _classes: ReadonlyMap<string, IngressClassInfo>, kind: Kind, proc: ClaimProcessor): void {
  if (!d.o.gatewayApi) return;
  const state = gatewayApiState(d.snap, d.o.gatewayApi);
  for (const rt of recordsOf(d.snap, kind).values()) {
    const parents = state.routes.get(stateKey(rt));
    if (!parents) continue;
    const ref = refOf(rt);
    const served = parents.some((p) => p.accepted.status === 'True');
    d.status.set(ref, { served, programmed: false, problems: [] });
    if (!served) continue;
    ownerClaims.set(rt, claimsOf(d, rt));
    d.owners.push({ ref, created: rt.creationTimestamp, ns: rt.namespace, record: rt, proc });
  }
}

/**
 * RequestMirror: each filter is a copy of the requests to its backend with their own URI and Host (nginx's mirror,
 * the directive profile ingress-nginx's mirror-target uses); the copies' answers are dropped. Copies to a backend
 * the route may not use, and those of a share of 0, are not made; with none left, nothing is mirrored. One copy of
 * every request is nginx's one mirror; more copies, or a share, take a slot each, drawn per request (router.lua,
 * balancer.lua mirror_pick).
 */
export function routeMirrors(rule: HttpRuleN, hc: { backends?: readonly ServiceBackendRef[] | undefined }, ns: string): { route: RouteMirror[]; profile: { body: boolean; slots?: number } } | undefined {
  const out: RouteMirror[] = [];
  for (const { backend: m, share } of mirrorsOf(rule)) {
    if (share?.numerator === 0) continue;
    if (!(hc.backends ?? []).some((b) => b.service === m.name && (b.namespace ?? ns) === m.namespace && 'number' in b.port && b.port.number === (m.port ?? 0))) continue;
    const backendId = backendIdOf(ns, { service: m.name, port: { number: m.port ?? 0 }, ...(m.namespace !== ns ? { namespace: m.namespace } : {}) });
    out.push({ backendId, scheme: 'http', host: '', serverName: `${m.name}.${m.namespace}.svc`, requestUri: true, ...(share ? { share: { ...share } } : {}) });
  }
  if (!out.length) return undefined;
  const slots = out.length > 1 || out.some((m) => m.share) ? out.length : undefined;
  return { route: out, profile: { body: true, ...(slots ? { slots } : {}) } };
}

function route(d: Draft, c: Parameters<ClaimProcessor['route']>[1], _cx: Parameters<ClaimProcessor['route']>[2], up: Parameters<ClaimProcessor['route']>[3]): ReturnType<ClaimProcessor['route']> {
  const hc = c.kc as HttpClaim;
  const rule = hc.rule;
  const r: Route = { source: c.pc.source, backendId: c.backendId, sslRedirect: false };
  const ns = c.owner.ns;
  // A weighted split; backendRefs Portico may not use answer 500 for their share of the requests.
  const { good, bad } = shareOf(hc);
  if (c.backendId && (good.length > 1 || bad > 0)) {
    // A backendRef's own filters: its share runs the route's plugins and its own (in plugin order).
    const own = good.map((k) => (c.closed ? [] : backendPlugins(d, rtOf(c.owner), hc, k)));
    const withOwn = own.some((ids) => ids.length > 0);
    r.split = good.map((k, j) => {
      const b = rule.backends[k]!;
      const s: NonNullable<Route['split']>[number] = { backendId: backendIdOf(ns, { service: b.name, port: { number: b.port ?? 0 }, ...(b.namespace !== ns ? { namespace: b.namespace } : {}) }), weight: b.weight };
      if (withOwn) s.plugins = [...c.pluginIds, ...own[j]!].sort(byRank(d));
      return s;
    });
    if (bad > 0) r.split.push({ backendId: '', weight: bad });
  }
  // No backend it may use and no redirect answering: 500 (Gateway API), with or without other filters.
  if (!c.backendId && !rule.filters.some((f) => f.type === 'RequestRedirect')) r.action = 'error';
  const fromAnnotations: RouteDraftSettings = {};
  const mirrors = routeMirrors(rule, hc, ns);
  if (mirrors) {
    r.mirrors = mirrors.route;
    fromAnnotations.mirror = mirrors.profile;
  }
  // The rule's retry (Gateway API) wins over the Upstream's: connection errors and its statuses, `attempts` retries.
  // nginx retries at once: a backoff cannot be served, and is said in a Warning rather than dropped silently.
  let retries = up?.retries;
  if (rule.retry) {
    retries = rule.retry.attempts > 0 ? { attempts: rule.retry.attempts, on: ['error', ...rule.retry.codes.map((c) => `http_${c}`)] } : { attempts: 0, on: ['off'] };
    // The balancer arranges them itself, the same endpoint again when it is the only one (route data, no reload).
    if (rule.retry.attempts > 0) r.retryAttempts = rule.retry.attempts;
    if (rule.retry.backoff) d.warn(c.owner.ref, 'RetryBackoffNotServed', `rule ${hc.ruleIndex}: retry.backoff ${rule.retry.backoff} is not served (nginx retries at once); the retries themselves are`);
  }
  const t = rule.timeouts;
  // The rule's own timeouts win; else those of the backend Service's Upstream (Portico's policy for a Service,
  // the same for Ingresses, Routes and HTTPRoutes).
  if (!t) {
    const ut = fullTimeouts(up?.timeouts, d.snap.global);
    if (ut) r.timeouts = ut;
  }
  if (t) {
    // nginx has no deadline for a whole request: the request timeout bounds each read and send of the proxied
    // request (what the backend takes to answer), the backendRequest timeout the same per attempt.
    const s = Math.max(0.001, Math.min(t.backendRequest ?? Infinity, t.request ?? Infinity));
    const g = d.snap.global;
    r.timeouts = { connect: Math.min(g.proxyConnectTimeoutSeconds, s), send: s, read: s };
  }
  // A GRPCRoute's backends speak gRPC: nginx's grpc_pass (HTTP/2 without TLS), a directive profile. So do an
  // HTTPRoute's whose Service ports say appProtocol kubernetes.io/h2c: grpc_pass carries any HTTP request over h2c
  // (nginx's proxy module has no HTTP/2). One location serves the rule, so only when all its backends are h2c.
  const rt = rtOf(c.owner);
  // TLS to the backends (BackendTLSPolicy): its hostname is the SNI and the name verified against its CA bundle (with
  // subjectAltNames only the SNI: the certificate must carry one of those). One location serves the rule, so the
  // shares of backends with another policy (or none) answer 500, with a Warning.
  const first = good.length ? rule.backends[good[0]!] : undefined;
  const tls = first && c.backendId ? policyFor(d.snap, first.namespace, first.name, first.port) : undefined;
  if (r.split) {
    const other = good.filter((k) => { const b = rule.backends[k]!; return policyFor(d.snap, b.namespace, b.name, b.port) !== tls; });
    if (other.length) {
      const ids = new Set(other.map((k) => { const b = rule.backends[k]!; return backendIdOf(ns, { service: b.name, port: { number: b.port ?? 0 }, ...(b.namespace !== ns ? { namespace: b.namespace } : {}) }); }));
      for (const s of r.split) if (ids.has(s.backendId)) { s.backendId = ''; delete s.plugins; }
      d.warn(c.owner.ref, 'MixedBackendTLS', `rule ${hc.ruleIndex}: its backendRefs differ in BackendTLSPolicy (${other.map((k) => rule.backends[k]!.name).join(', ')} vs ${first!.name}); one rule is proxied with one TLS setting, so their share is answered 500`);
    }
  }
  let grpc = rt.grpc === true;
  if (!grpc && c.backendId) {
    const h2c = good.map((k) => appProtocolOf(d, rule.backends[k]!) === H2C);
    if (h2c.length && h2c.every(Boolean)) grpc = true;
    else if (h2c.some(Boolean)) {
      d.warn(c.owner.ref, 'MixedBackendProtocols', `rule ${hc.ruleIndex}: some backendRefs are ${H2C} Service ports and others are not; one rule is proxied in one protocol, so all of them get HTTP/1.1`);
    }
  }
  if (tls?.caPem) {
    const protocol = grpc ? ('GRPCS' as const) : ('HTTPS' as const);
    const proxySsl: NonNullable<RouteDraft['proxySsl']> = { backendProtocol: protocol, sslServerName: tls.hostname, trustedCa: tls.caPem };
    // subjectAltNames: the certificate must carry one of them, the hostname is only the SNI (portico_upstream_ssl).
    if (tls.subjectAltNames?.length) proxySsl.sslVerifyNames = tls.subjectAltNames.map((n) => `${n.type === 'Hostname' ? 'DNS' : 'URI'}:${n.value}`);
    // The Gateway's client certificate (spec.tls.backend.clientCertificateRef), for backends that ask for one.
    const certKey = d.o.gatewayApi ? gatewayApiState(d.snap, d.o.gatewayApi).gateways.get(hc.gateway)?.backendClientCertificate : undefined;
    const m = certKey ? d.snap.secrets.get(certKey) : undefined;
    if (m?.ok) proxySsl.sslCertificate = { cert: m.cert, key: m.privateKey };
    return { route: r, retries, fromAnnotations, protocol, proxySsl };
  }
  return { route: r, retries, fromAnnotations, ...(grpc ? { protocol: 'GRPC' as const } : {}) };
}

const H2C = 'kubernetes.io/h2c';

/** The appProtocol of the Service port a backendRef names (undefined: none, or no such Service or port). */
function appProtocolOf(d: Draft, b: HttpRuleN['backends'][number]): string | undefined {
  return d.snap.services.get(`${b.namespace}/${b.name}`)?.ports.find((p) => p.port === b.port)?.appProtocol;
}
