// Phase: the route rules and directive profiles of each host.
import type { Profile, Route, RouteRule } from '../../config/types.ts';
import type { NormalizedIngress, NormalizedUpstream } from '../../model/types.ts';
import { fullNginxTuning, type NginxTuning } from '../../config/nginx-tuning.ts';
import { sameInputs } from '../memo.ts';
import { ingressRef } from '../objects.ts';
import { backendIdOf, condCount } from '../claims.ts';
import { annotationProfileSettings, fullTimeouts, modsecuritySettings, profileOf, proxySslProfileSettings, sizeBytes } from '../profiles.ts';
import { ingressPluginBase } from '../plugin-instances.ts';
import { ingressNginxOrder, needsRewrite, regexSourceOf, ruleOrder } from '../matching.ts';
import { type Draft, describe, type Claim } from '../draft.ts';

/**
 * Per-request metric labels of a route (ingress-nginx's namespace, ingress, service, path, host), joined by U+001F
 * for the Lua side (metrics.lua), which hands them back when Prometheus scrapes. `source` is "Kind/namespace/name".
 */
export function metricsLabels(source: string, service: string, path: string, host: string): string {
  const [, ns = '', name = ''] = source.split('/');
  return [ns, name, service, path, host].join('\x1f');
}

/** The routes of each host (rules in router order, directive profiles), reused from the memo while their inputs are. */
export function buildRoutes(d: Draft): void {
  const tuning = fullNginxTuning(d.snap.global);
  for (const host of d.hostList) buildHost(d, host, tuning);
}

/** A rule with what orders rules of the same path and match (dropped once sorted). */
type RankedRule = RouteRule & { prio: number; conds: number; order: number };

/** What the rules of one host are built with besides its claims. */
interface HostContext {
  tls: boolean;
  /** Namespaces whose Ingresses' paths on the host are all regexes (use-regex, rewrite-target). */
  regexNamespaces: ReadonlySet<string>;
  tuning: NginxTuning;
  /** Profiles and objects the host's rules use and program (what the memo replays). */
  used: Profile[];
  programmed: string[];
}

function buildHost(d: Draft, host: string, tuning: NginxTuning): void {
  const { snap, memo, status, plugins, hosts, tlsHosts, passthrough, routes, profiles } = d;
  const locs = hosts.get(host) as Map<string, Claim>;
  const tls = tlsHosts.has(host);
  const passed = passthrough.has(host);
  const inputs = hostInputs(d, locs, [tls, snap.global, d.o.testHooks, passed]);
  const { regexNamespaces, appRoot } = regexAndAppRoot(d, host, locs);
  if (appRoot) inputs.push(NaN);
  const cached = memo?.hosts.get(host);
  if (cached && sameInputs(cached.inputs, inputs)) {
    routes[host] = cached.result;
    for (const k of cached.programmed) status.get(k)!.programmed = true;
    for (const p of cached.profiles) profiles.set(p.name, p);
    return;
  }
  const cx: HostContext = { tls, regexNamespaces, tuning, used: [], programmed: [] };
  const rules: RankedRule[] = [];
  for (const c of locs.values()) rules.push(ruleOf(d, c, cx, rules.length));
  // Same path and match: higher priority first, then more conditions, then older.
  rules.sort((a, b) => ruleOrder(a, b) || b.prio - a.prio || b.conds - a.conds || a.order - b.order);
  const out: RouteRule[] = rules.map(({ prio: _p, conds: _c, order: _o, ...r }) => r);
  if (appRoot) {
    // Before any path, HTTPS redirect or access control: ingress-nginx answers it in the server's rewrite phase.
    const id = `${ingressPluginBase(appRoot.ing)}.approot`;
    plugins[id] ??= { name: `${appRoot.ing.key} (annotations)`, type: 'redirect', status: 302, path: appRoot.ing.annotations['app-root'] as string, keepQuery: false, hostFromRequest: true };
    out.unshift({ path: '/', match: 'exact', route: { source: ingressRef(appRoot.ing.key), backendId: null, sslRedirect: false, plugins: [id] } });
  }
  routes[host] = passed ? { tls, passthrough: true, rules: out } : { tls, rules: out };
  if (d.o.metrics) {
    // ingress-nginx counts a request for a known host that no path matches under the host's first object, path "/".
    const first = locs.values().next().value;
    if (first) routes[host].metrics = metricsLabels(first.pc.source, '', '/', host);
  }
  memo?.hosts.set(host, { inputs, result: routes[host], programmed: cx.programmed, profiles: cx.used });
}

/** What a host's routes are made from, compared by identity with the memo's (NaN: never reused). */
function hostInputs(d: Draft, locs: Map<string, Claim>, inputs: unknown[]): unknown[] {
  const { upstreamOf, sideOf } = d;
  for (const c of locs.values()) {
    inputs.push(c.owner.ing ?? c.owner.rt, c.pc, c.backendId, c.closed);
    // Plugins, upstreams, splits and the backends of default-backend / mirror-target are not memoized per host.
    if (c.rr || c.pluginIds.length || (c.owner.ing && sideOf.has(c.owner.ing.key))) inputs.push(NaN);
    else if (c.backendId && upstreamOf.has(c.backendId)) inputs.push(upstreamOf.get(c.backendId));
  }
  return inputs;
}

/** The namespaces whose paths on a host are regexes, and the host's app-root redirect (if one applies). */
function regexAndAppRoot(d: Draft, host: string, locs: Map<string, Claim>): { regexNamespaces: Set<string>; appRoot: { ing: NormalizedIngress; written: string } | undefined } {
  const { warn } = d;
  // ingress-nginx (ingress-path-matching.md): use-regex or rewrite-target on ANY Ingress of a host makes every path
  // of the host, of every Ingress, a case-insensitive regex anchored at the start (`~* "^<path>"`), Exact and
  // Prefix paths included. Portico keeps that within a namespace: the Ingresses of one namespace never change how
  // another namespace's paths match (an Exact "/api/public" must not become a case-insensitive regex prefix through
  // someone else's annotation). Route objects (Portico's own) keep their own matching.
  const regexNamespaces = new Set<string>();
  // app-root: ingress-nginx writes `if ($uri = /) { return 302 $scheme://$http_host<app-root>; }` into the server
  // block for each location whose Ingress sets it, in location order: the first one in that order wins. Portico
  // takes it only from the namespace whose path serves "/" on the host (or any, when none does).
  let appRoot: { ing: NormalizedIngress; written: string } | undefined;
  for (const c of locs.values()) {
    const ci = c.owner.ing;
    if (!ci) continue;
    if (ci.annotations['use-regex'] === true || needsRewrite(ci.annotations, c.pc.written)) regexNamespaces.add(ci.namespace);
    if (ci.annotations['app-root'] !== undefined && (!appRoot || ingressNginxOrder(c.pc.written, appRoot.written) < 0)) appRoot = { ing: ci, written: c.pc.written };
  }
  if (appRoot) {
    const root = locs.get('exact /') ?? locs.get('prefix /');
    if (root && root.owner.ns !== appRoot.ing.namespace) {
      warn(ingressRef(appRoot.ing.key), 'AppRootIgnored', `app-root on ${host === '_' ? '(any host)' : host}: "/" there is served by ${describe(root.owner.ref)} of namespace ${root.owner.ns}; one namespace never redirects another's requests, so app-root is not applied`);
      appRoot = undefined;
    }
  }
  return { regexNamespaces, appRoot };
}

/** A route and the profile settings of its own that an Ingress's claim gets from its annotations. */
interface RouteDraft {
  route: Route;
  bodySize?: string | undefined;
  retries: { attempts: number; on: string[] } | undefined;
  fromAnnotations: Partial<Omit<Profile, 'name'>>;
}

/** The rule of one claim: its route, its directive profile, its path as the router matches it. */
function ruleOf(d: Draft, c: Claim, cx: HostContext, order: number): RankedRule {
  const { status, backends, profiles, upstreamOf } = d;
  const g = d.snap.global;
  const { regexNamespaces, used, programmed } = cx;
  const up = c.backendId ? upstreamOf.get(c.backendId) : undefined;
  const { route, bodySize, retries, fromAnnotations } = c.owner.ing ? ingressRoute(d, c, c.owner.ing, cx, up) : crdRoute(d, c, cx, up);
  if (d.o.metrics) route.metrics = metricsLabels(c.pc.source, c.pc.ref.service, c.pc.written, c.pc.host);
  if (c.closed) {
    route.action = 'unavailable';
    route.closedReason = c.closed;
  }
  if (c.pluginIds.length && !c.closed) route.plugins = c.pluginIds;
  const ids = route.split ? route.split.map((x) => x.backendId) : c.backendId ? [c.backendId] : [];
  if (ids.some((id) => backends[id]?.passiveHealth)) route.observe = true;
  const profile = profileFor(d, c, up, retries, fromAnnotations, bodySize);
  if (profile) {
    profiles.set(profile.name, profile);
    used.push(profile);
    route.profile = profile.name;
    route.maxBodyBytes = sizeBytes(profile.proxyBodySize ?? g.proxyBodySize);
  }
  if (!route.closedReason) {
    status.get(c.owner.ref)!.programmed = true;
    programmed.push(c.owner.ref);
  }
  let path = c.pc.path;
  let match = c.pc.match;
  if (c.owner.ing && (regexNamespaces.has(c.owner.ns) || match === 'regex')) {
    // `~* "^<path>"`: the "^" is prepended as ingress-nginx does, so "/a|/b" reads "(^/a)|(/b)" there as here.
    match = 'regex';
    path = `^${regexSourceOf(c.pc)}`;
  }
  const rule: RankedRule = { path, match, route, prio: c.rr?.rule.priority ?? 0, conds: condCount(c.rr?.m.conditions), order };
  if (c.rr?.m.conditions) rule.conditions = c.rr.m.conditions;
  // A plain ImplementationSpecific path written with a trailing slash is nginx's `location /foo/` in
  // ingress-nginx: "/foo" itself is answered 301 to "/foo/" by nginx (proxy_pass locations), unless an exact
  // "/foo" exists. (Only such a path keeps its slash in the claim: a Prefix "/foo/" matches "/foo", per spec.)
  if (c.owner.ing && match === 'prefix' && path.length > 1 && path.endsWith('/')) {
    rule.slashRedirect = true;
    if (c.owner.ing.annotations['use-port-in-redirects'] === true) rule.portInRedirect = true;
  }
  if (route.sslRedirect && c.owner.ing?.annotations['preserve-trailing-slash'] === true) route.preserveTrailingSlash = true;
  return rule;
}

/** The route of an Ingress's claim: redirects, timeouts, error pages, mirror, default backend, ModSecurity. */
function ingressRoute(d: Draft, c: Claim, ing: NormalizedIngress, cx: HostContext, up: NormalizedUpstream | undefined): RouteDraft {
  const { sideOf } = d;
  const g = d.snap.global;
  const { tls, tuning } = cx;
  const retries = up?.retries;
  const a = ing.annotations;
  const route: Route = { source: c.pc.source, backendId: c.backendId, sslRedirect: a['force-ssl-redirect'] === true || (tls && (a['ssl-redirect'] ?? g.sslRedirect)) };
  const bodySize = a['proxy-body-size'] !== undefined && a['proxy-body-size'] !== g.proxyBodySize ? a['proxy-body-size'] : undefined;
  const t = { connect: a['proxy-connect-timeout'], send: a['proxy-send-timeout'], read: a['proxy-read-timeout'] };
  const tt = fullTimeouts(up?.timeouts, g) ?? fullTimeouts(t, g);
  if (tt) route.timeouts = tt;
  const fromAnnotations = annotationProfileSettings(a, tuning, !!retries);
  if (!c.closed) {
    const side = sideOf.get(ing.key);
    const codes = a['custom-http-errors'] ?? g.customHttpErrors;
    if (codes?.length) {
      // custom-http-errors (the annotation, else the ConfigMap's): nginx's error_page for these codes, and
      // proxy_intercept_errors unless disable-proxy-intercept-errors (then only nginx's own errors are caught).
      fromAnnotations.errorCodes = codes;
      if (a['disable-proxy-intercept-errors'] !== true) fromAnnotations.interceptErrors = true;
      const p = c.pc.ref.port;
      route.errorPage = { namespace: ing.namespace, ingress: ing.name, service: c.pc.ref.service, port: 'number' in p ? String(p.number) : p.name };
    }
    if (side?.defaultBackendId) route.defaultBackendId = side.defaultBackendId;
    if (side?.mirror) {
      route.mirror = side.mirror;
      fromAnnotations.mirror = { body: a['mirror-request-body'] ?? true };
    }
    // ModSecurity: the Ingress's annotations and the ConfigMap's keys (modsecuritySettings).
    const waf = modsecuritySettings(a, g);
    if (waf) fromAnnotations.modsecurity = waf;
  }
  return { route, bodySize, retries, fromAnnotations };
}

/** The route of a Route object's claim: timeouts, retries, weighted split, websocket. */
function crdRoute(d: Draft, c: Claim, cx: HostContext, up: NormalizedUpstream | undefined): RouteDraft {
  const g = d.snap.global;
  let retries = up?.retries;
  const rule = c.rr!.rule;
  const route: Route = { source: c.pc.source, backendId: c.backendId, sslRedirect: cx.tls && g.sslRedirect };
  const tt = fullTimeouts(rule.timeouts, g) ?? fullTimeouts(up?.timeouts, g);
  if (tt) route.timeouts = tt;
  if (rule.retries) retries = rule.retries;
  if (c.backendId && rule.backends.length > 1) {
    route.split = rule.backends.map((be) => ({ backendId: backendIdOf(c.owner.ns, { service: be.service, port: { number: be.port } }), weight: be.weight }));
  }
  if (!rule.websocket) route.websocket = false;
  if (!c.rr!.hasBackend && !c.pluginIds.length) route.action = 'unavailable';
  return { route, retries, fromAnnotations: {} };
}

/** The directive profile of a claim's route (null: nginx's defaults), from its annotations, Upstream and retries. */
function profileFor(d: Draft, c: Claim, up: NormalizedUpstream | undefined, retries: RouteDraft['retries'], fromAnnotations: RouteDraft['fromAnnotations'], bodySize: string | undefined): Profile | null {
  // The Upstream's protocol wins; else an Ingress's backend-protocol annotation (ingress-nginx; AUTO_HTTP = HTTP).
  const annProto = c.owner.ing?.annotations['backend-protocol'];
  const fromAnn = annProto === 'HTTPS' || annProto === 'GRPC' || annProto === 'GRPCS' ? annProto : undefined;
  const proto = up ? (up.protocol !== 'HTTP' ? up.protocol : undefined) : fromAnn;
  // SNI and verification come with an Upstream's tls settings; the annotation alone proxies without SNI, as
  // ingress-nginx does by default (proxy_ssl_server_name off).
  const overTls = !!up && (proto === 'HTTPS' || proto === 'GRPCS');
  const [upNs, upSvc] = (up?.serviceKey ?? '/').split('/');
  // ingress-nginx's proxy-ssl-* (client certificate, verification, SNI, protocols, ciphers), unless an Upstream
  // sets the TLS: they replace the defaults of an Upstream without tls settings.
  const fromProxySsl = c.owner.ing ? proxySslProfileSettings(c.owner.ing, proto, !!up?.tls, c.pc.serviceKey) : undefined;
  return profileOf({
    ...fromAnnotations,
    proxyBodySize: bodySize,
    testInvalidDirective: d.o.testHooks && c.owner.ing?.testInvalidDirective ? true : undefined,
    nextUpstream: retries ? (retries.on.length ? retries.on.join(' ') : 'error timeout') : fromAnnotations.nextUpstream,
    nextUpstreamTries: retries ? retries.attempts + 1 : fromAnnotations.nextUpstreamTries,
    backendProtocol: proto,
    sslServerName: overTls ? (up?.tls?.serverName ?? `${upSvc}.${upNs}.svc`) : undefined,
    trustedCa: overTls && up?.tls?.verify && up.tls.caPem ? up.tls.caPem : undefined,
    ...fromProxySsl,
  });
}
