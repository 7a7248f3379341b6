// Phase: the route rules and directive profiles of each host.
import type { Profile, RouteRule } from '../../config/types.ts';
import type { NormalizedUpstream } from '../../model/types.ts';
import { fullNginxTuning, type NginxTuning } from '../../config/nginx-tuning.ts';
import { sameInputs } from '../memo.ts';
import { condCount } from '../claims.ts';
import { backendProtocolOf, profileOf, sizeBytes } from '../profiles.ts';
import { ingressNginxOrder, ruleOrder } from '../matching.ts';
import { formatNeedsRouteLabels } from '../../values/nginx-variables.ts';
import { type Draft, describe, type Claim, type HostContext, type Owner, type PluginNaming, type RouteDraft } from '../draft.ts';

/**
 * Per-request metric labels of a route (ingress-nginx's namespace, ingress, service, path, host), joined by U+001F
 * for the metrics module in nginx (nginx-assets/modules/portico_metrics), which hands them back when Prometheus scrapes. `source` is "Kind/namespace/name".
 */
export function metricsLabels(source: string, service: string, path: string, host: string): string {
  const [, ns = '', name = ''] = source.split('/');
  // A Gateway route's key may carry its hostname tier ("<port>/<host>#<wildcard>": attach.ts routeHostKey): the host
  // label is the listener host without it.
  const hash = host.indexOf('#');
  return [ns, name, service, path, hash < 0 ? host : host.slice(0, hash)].join('\x1f');
}

/**
 * Whether routes carry their labels: for per-request metrics, and for the access log when its format reads
 * ingress-nginx's $namespace, $ingress_name or $location_path (derived from them in http.hbs).
 */
function routeLabels(d: Draft): boolean {
  if (d.o.metrics) return true;
  const f = d.snap.global.logFormatUpstream;
  if (f !== lastFormat) lastFormat = f, lastNeeds = formatNeedsRouteLabels(f);
  return lastNeeds;
}
let lastFormat = '';
let lastNeeds = false;

/** The routes of each host (rules in router order, directive profiles), reused from the memo while their inputs are. */
export function buildRoutes(d: Draft): void {
  const tuning = fullNginxTuning(d.snap.global);
  for (const host of d.hostList) buildHost(d, host, tuning);
  // --default-backend-service: unknown hosts reach the catch-all host "_", which then exists even without a claim.
  const unmatched = d.unmatchedBackendId;
  if (unmatched && !d.routes._) d.routes._ = { tls: false, rules: [], unmatchedBackendId: unmatched };
}

/** A rule with what orders rules of the same path and match (dropped once sorted). */
type RankedRule = RouteRule & { prio: number; conds: number; order: number };

/** The app-root redirect a host gets: the object asking for it, its path there, where it redirects. */
interface AppRoot {
  owner: Owner;
  written: string;
  path: string;
  naming: PluginNaming;
}

function buildHost(d: Draft, host: string, tuning: NginxTuning): void {
  const { snap, memo, status, plugins, hosts, tlsHosts, passthrough, routes, profiles } = d;
  const locs = hosts.get(host) as Map<string, Claim>;
  const tls = tlsHosts.has(host);
  const passed = passthrough.has(host);
  const inputs = hostInputs(d, locs, [tls, snap.global, d.o.testHooks, passed, d.unmatchedBackendId]);
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
    const id = `${appRoot.naming.base}.approot`;
    plugins[id] ??= { name: appRoot.naming.name, type: 'redirect', status: 302, path: appRoot.path, keepQuery: false, hostFromRequest: true };
    out.unshift({ path: '/', match: 'exact', route: { source: appRoot.owner.ref, backendId: null, sslRedirect: false, plugins: [id] } });
  }
  routes[host] = passed ? { tls, passthrough: true, rules: out } : { tls, rules: out };
  if (d.unmatchedBackendId) routes[host].unmatchedBackendId = d.unmatchedBackendId;
  if (routeLabels(d)) {
    // ingress-nginx counts a request for a known host that no path matches under the host's first object, path "/".
    const first = locs.values().next().value;
    if (first) routes[host].metrics = metricsLabels(first.pc.source, '', '/', host);
  }
  memo?.hosts.set(host, { inputs, result: routes[host], programmed: cx.programmed, profiles: cx.used });
}

/** What a host's routes are made from, compared by identity with the memo's (NaN: never reused). */
function hostInputs(d: Draft, locs: Map<string, Claim>, inputs: unknown[]): unknown[] {
  const { upstreamOf } = d;
  for (const c of locs.values()) {
    inputs.push(c.owner.record, c.pc, c.backendId, c.closed);
    // Plugins, upstreams, splits and what an object's route depends on besides its claim are not memoized per host.
    if (c.pluginIds.length || c.owner.proc.volatile?.(d, c)) inputs.push(NaN);
    else if (c.backendId && upstreamOf.has(c.backendId)) inputs.push(upstreamOf.get(c.backendId));
  }
  return inputs;
}

/** The namespaces whose paths on a host are regexes, and the host's app-root redirect (if one applies). */
function regexAndAppRoot(d: Draft, host: string, locs: Map<string, Claim>): { regexNamespaces: Set<string>; appRoot: AppRoot | undefined } {
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
  let appRoot: AppRoot | undefined;
  for (const c of locs.values()) {
    const proc = c.owner.proc;
    if (proc.regexHost?.(c)) regexNamespaces.add(c.owner.ns);
    const ar = proc.appRoot?.(c);
    if (ar && (!appRoot || ingressNginxOrder(c.pc.written, appRoot.written) < 0)) appRoot = { owner: c.owner, written: c.pc.written, ...ar };
  }
  if (appRoot) {
    const root = locs.get('exact /') ?? locs.get('prefix /');
    if (root && root.owner.ns !== appRoot.owner.ns) {
      warn(appRoot.owner.ref, 'AppRootIgnored', `app-root on ${host === '_' ? '(any host)' : host}: "/" there is served by ${describe(root.owner.ref)} of namespace ${root.owner.ns}; one namespace never redirects another's requests, so app-root is not applied`);
      appRoot = undefined;
    }
  }
  return { regexNamespaces, appRoot };
}

/** The rule of one claim: its route, its directive profile, its path as the router matches it. */
function ruleOf(d: Draft, c: Claim, cx: HostContext, order: number): RankedRule {
  const { status, backends, profiles, upstreamOf } = d;
  const g = d.snap.global;
  const { used, programmed } = cx;
  const up = c.backendId ? upstreamOf.get(c.backendId) : undefined;
  const draft = c.owner.proc.route(d, c, cx, up);
  const { route } = draft;
  if (routeLabels(d)) route.metrics = metricsLabels(c.pc.source, c.pc.ref.service, c.pc.written, c.pc.host);
  if (c.closed) {
    route.action = 'unavailable';
    route.closedReason = c.closed;
  }
  if (c.pluginIds.length && !c.closed) route.plugins = c.pluginIds;
  const ids = route.split ? route.split.map((x) => x.backendId) : c.backendId ? [c.backendId] : [];
  if (ids.some((id) => backends[id]?.passiveHealth)) route.observe = true;
  const profile = profileFor(d, up, draft);
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
  const rule: RankedRule = { path: c.pc.path, match: c.pc.match, route, prio: c.kc.priority ?? 0, conds: condCount(c.kc.conditions), order };
  if (c.kc.conditions) rule.conditions = c.kc.conditions;
  c.owner.proc.finishRule?.(c, cx, rule);
  return rule;
}

/** The directive profile of a claim's route (null: nginx's defaults), from its own settings, Upstream and retries. */
function profileFor(d: Draft, up: NormalizedUpstream | undefined, r: RouteDraft): Profile | null {
  const { retries, fromAnnotations } = r;
  // The Upstream's protocol wins; else the object's own (an Ingress's backend-protocol annotation).
  const proto = backendProtocolOf(up, r.protocol);
  // SNI and verification come with an Upstream's tls settings; the annotation alone proxies without SNI, as
  // ingress-nginx does by default (proxy_ssl_server_name off).
  const overTls = !!up && (proto === 'HTTPS' || proto === 'GRPCS');
  const [upNs, upSvc] = (up?.serviceKey ?? '/').split('/');
  return profileOf({
    ...fromAnnotations,
    proxyBodySize: r.bodySize,
    testInvalidDirective: d.o.testHooks && r.testInvalidDirective ? true : undefined,
    nextUpstream: retries ? (retries.on.length ? retries.on.join(' ') : 'error timeout') : fromAnnotations.nextUpstream,
    nextUpstreamTries: retries ? retries.attempts + 1 : fromAnnotations.nextUpstreamTries,
    backendProtocol: proto,
    sslServerName: overTls ? (up?.tls?.serverName ?? `${upSvc}.${upNs}.svc`) : undefined,
    trustedCa: overTls && up?.tls?.verify && up.tls.caPem ? up.tls.caPem : undefined,
    // ingress-nginx's proxy-ssl-* (client certificate, verification, SNI, protocols, ciphers), unless an Upstream
    // sets the TLS: they replace the defaults of an Upstream without tls settings.
    ...r.proxySsl,
  });
}
