// The Ingress's claim processor: how an Ingress becomes paths of the kind-agnostic translation (translate/draft.ts
// ClaimProcessor), with ingress-nginx's semantics — its annotations (plugins, redirects, profiles, client
// certificates, passthrough), default backend, canaries (they attach to their main's paths instead of claiming),
// and ingress-nginx's path rules (host-wide regex mode per namespace, a trailing slash that redirects).
// Part of the pure translation (tools/imports.ts: the translation layer): it never imports the kind's reconciler.
import { withAnnotationDefaults } from '../../translate/annotation-defaults.ts';
import { blockedWord } from '../../translate/blocklist.ts';
import type { PathMatch, Route, RouteRule } from '../../config/types.ts';
import type { IngressClassInfo, NormalizedIngress, NormalizedUpstream, ServiceBackendRef } from '../../model/types.ts';
import { ANNOTATIONS, NGINX_PREFIX, type AnnotationName } from '../../annotations/table.ts';
import { noAuthLocation } from '../../annotations/plugins.ts';
import { gateAnnotations } from '../../translate/risk.ts';
import { byAge, ingressRef, isIngressServed } from '../../translate/objects.ts';
import { backendIdOf, hostOrder, type PathClaim } from '../../translate/claims.ts';
import { claimPathOf, needsRewrite, passthroughTarget, regexSourceOf } from '../../translate/matching.ts';
import { annotationInstances, clientCertOf, customHeadersInstance, GLOBAL_AUTH_ID, ingressPluginBase, rewriteInstance } from '../../translate/plugin-instances.ts';
import { annotationProfileSettings, backendProtocolOf, fastcgiProfileSettings, fullTimeouts, modsecuritySettings, proxySslProfileSettings } from '../../translate/profiles.ts';
import { ownHostScoped, useAuthTarget } from '../../translate/auth-targets.ts';
import { isCanary, type Claim, type ClaimProcessor, type Draft, type HostContext, type KindClaim, type Owner, type PassthroughAsk, type PluginNaming, type RouteDraft } from '../../translate/draft.ts';

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

/** The claims the translation uses (with the Plugin objects the Ingress names), once per (risk-gated) record. */
const kindClaimCache = new WeakMap<NormalizedIngress, { paths: KindClaim[]; defaults: KindClaim[] }>();
function kindClaimsOf(ing: NormalizedIngress): { paths: KindClaim[]; defaults: KindClaim[] } {
  let k = kindClaimCache.get(ing);
  if (k) return k;
  const c = claimsOfIngress(ing);
  const plugins = ing.annotations.plugins ?? [];
  k = { paths: c.paths.map((pc) => ({ pc, plugins })), defaults: c.defaults.map((pc) => ({ pc, plugins })) };
  kindClaimCache.set(ing, k);
  return k;
}

/** The hosts an Ingress reaches (its claims, TLS hosts, from-to-www-redirect's other names, server-alias names) and its backends. */
export function ingressReach(ing: NormalizedIngress): { hosts: string[]; backends: string[] } {
  const hosts = new Set<string>();
  const backends = new Set<string>();
  const c = claimsOfIngress(ing);
  for (const pc of c.paths) {
    hosts.add(pc.host);
    backends.add(pc.backendId);
  }
  for (const pc of c.defaults) {
    hosts.add(pc.host);
    backends.add(pc.backendId);
  }
  for (const t of ing.tls) for (const h of t.hosts) hosts.add(h);
  // from-to-www-redirect: the other name of each host gets a redirect server unless it has rules of its own, so
  // it belongs to the closure (and with it every Ingress that claims it).
  if (ing.annotations['from-to-www-redirect'] === true) {
    for (const r of ing.rules) if (r.host && !r.host.startsWith('*.')) hosts.add(r.host.startsWith('www.') ? r.host.slice(4) : `www.${r.host}`);
  }
  // server-alias: each name gets the routes (and certificate) of the Ingress's hosts unless it has rules of its own or
  // is an earlier alias, so it belongs to the closure too (with every Ingress that claims it or names it).
  for (const a of ing.annotations['server-alias'] ?? []) hosts.add(a);
  return { hosts: [...hosts], backends: [...backends] };
}

const ingOf = (ow: Owner): NormalizedIngress => ow.record as NormalizedIngress;
const naming = (ing: NormalizedIngress): PluginNaming => ({ base: ingressPluginBase(ing), name: `${ing.key} (annotations)` });

export const ingressProcessor: ClaimProcessor = {
  kind: 'Ingress',
  admit,
  records: (snap) => snap.ingresses.values(),
  reach: (rec) => ingressReach(rec as NormalizedIngress),
  claims: (ow) => (isCanary(ingOf(ow)) ? [] : kindClaimsOf(ingOf(ow)).paths),
  fallbacks: (ow) => (isCanary(ingOf(ow)) ? [] : kindClaimsOf(ingOf(ow)).defaults),
  annotations: (ow) => ingOf(ow).annotations,
  closedReasons(d, ow) {
    const k = ingOf(ow).key;
    return [d.closedReason.get(k), d.sslClosed.get(k), d.wafClosed.get(k), d.fcgiClosed.get(k)].filter((r): r is string => !!r);
  },
  ownPlugins: (d, ow, pc, reasons) => annotationPlugins(d, pc, ingOf(ow), ow, reasons),
  clientCert: (ow) => clientCertOf(ingOf(ow)),
  tls: (ow) => ingOf(ow).tls,
  passthrough,
  route: (d, c, cx, up) => ingressRoute(d, c, ingOf(c.owner), cx, up),
  volatile: (d, c) => d.sideOf.has(ingOf(c.owner).key),
  regexHost(c) {
    const a = ingOf(c.owner).annotations;
    return a['use-regex'] === true || needsRewrite(a, c.pc.written);
  },
  appRoot(c) {
    const ing = ingOf(c.owner);
    const path = ing.annotations['app-root'];
    return path === undefined ? undefined : { path, naming: naming(ing) };
  },
  finishRule,
  wwwRedirect: (ow) => (ingOf(ow).annotations['from-to-www-redirect'] === true ? naming(ingOf(ow)) : undefined),
};

/** Rejected Ingresses (status and Events), and whether each Ingress is served (its annotations gated by risk). */
function admit(d: Draft, classes: ReadonlyMap<string, IngressClassInfo>): void {
  const { snap, o, events, status, served, owners } = d;
  for (const [key, r] of snap.rejected) {
    status.set(ingressRef(key), { served: false, programmed: false, problems: [r.reason] });
  }
  // The ConfigMap's annotations-risk-level / allow-snippet-annotations decide which annotations apply (risk.ts).
  const risk = { allowSnippetAnnotations: snap.global.allowSnippetAnnotations, annotationsRiskLevel: snap.global.annotationsRiskLevel };
  const blocklist = snap.global.annotationValueWordBlocklist ?? [];
  for (const raw of snap.ingresses.values()) {
    // The ConfigMap's defaults of annotations the Ingress does not set, then the risk gate over all of them.
    const ing = gateAnnotations(withAnnotationDefaults(raw, snap.global), risk);
    const ref = ingressRef(ing.key);
    // annotation-value-word-blocklist: an Ingress with a listed word in an annotation value is not served (as
    // ingress-nginx, which skips it), said once on the Ingress.
    const blocked = blocklist.length ? blockedWord(raw, blocklist) : null;
    if (blocked && isIngressServed(ing, classes, o)) {
      const message = `annotation ${blocked.annotation} contains the word ${JSON.stringify(blocked.word)} of the ConfigMap's annotation-value-word-blocklist: the Ingress is not served`;
      status.set(ref, { served: false, programmed: false, problems: [message] });
      events.push({ ref, type: 'Warning', reason: 'BlockedAnnotationValue', message });
      continue;
    }
    const s = isIngressServed(ing, classes, o);
    status.set(ref, { served: s, programmed: false, problems: [] });
    if (s) {
      served.push(ing);
      owners.push({ ref, created: ing.creationTimestamp, ns: ing.namespace, record: ing, proc: ingressProcessor });
    }
  }
  served.sort(byAge);
  for (const [key, r] of snap.rejected) {
    events.push({ ref: ingressRef(key), type: 'Warning', reason: 'Rejected', message: r.reason });
  }
}

/**
 * ingress-nginx annotations that are plugins (IP lists, CORS, rate limits, auth): the same engine, own ids; and the
 * ConfigMap's global external authentication. no-auth-locations: paths (as written) that get neither external nor
 * basic authentication, as in ingress-nginx. Registers the instances; adds to `reasons` what cannot be used.
 */
function annotationPlugins(d: Draft, pc: PathClaim, ing: NormalizedIngress, owner: Owner, reasons: string[]): string[] {
  const { snap, authTimeouts, noAuthList, globalAuth, plugins } = d;
  const g0 = snap.global;
  const noAuth = noAuthLocation(pc.path, noAuthList);
  const extra: string[] = [];
  const unusable = (why: string | null) => {
    if (why) reasons.push(why);
  };
  if (ing.annotationPlugins.length) {
    for (const e of annotationInstances(ing, snap.global.limitReqStatusCode, authTimeouts, snap.global.limitConnStatusCode, d.rateLimitStore)) {
      if (noAuth && (e.auth || (e.inst.type === 'basic-auth' && e.inst.users) || e.inst.type === 'digest-auth')) continue;
      // global-rate-limit without a Redis to count in: never silently — the limit fails open (or closed) per request.
      if (e.inst.type === 'rate-limit' && e.inst.policy === 'redis' && !e.inst.redis) noRedis(d, owner.ref);
      if (e.auth) unusable(useAuthTarget(d, owner.ref, e.auth, 'auth-url', ing.namespace));
      plugins[e.id] ??= e.auth?.target.kind === 'own-host' && !g0.allowCrossNamespaceAuth ? ownHostScoped(e.inst, ing.namespace) : e.inst;
      extra.push(e.id);
    }
  }
  if (ing.annotations['custom-headers'] !== undefined) {
    const ch = customHeadersInstance(ing, g0.globalAllowedResponseHeaders);
    if ('closed' in ch) unusable(ch.closed);
    else {
      plugins[ch.id] ??= ch.inst;
      extra.push(ch.id);
    }
  }
  if (globalAuth && !noAuth && ing.annotations['auth-url'] === undefined && ing.annotations['enable-global-auth'] !== false) {
    if ('error' in globalAuth) unusable(`the ConfigMap's global external authentication cannot be applied (${globalAuth.error})`);
    else {
      unusable(useAuthTarget(d, owner.ref, globalAuth.auth, 'the ConfigMap\'s global-auth-url', null));
      // satisfy: any makes the global authentication one of this Ingress's alternatives: a flagged copy.
      const any = ing.annotations.satisfy === 'any';
      const gid = any ? `${GLOBAL_AUTH_ID}.any` : GLOBAL_AUTH_ID;
      plugins[gid] ??= any ? { ...globalAuth.inst, satisfyAny: true } : globalAuth.inst;
      extra.push(gid);
    }
  }
  // rewrite-target: ingress-nginx writes `rewrite "(?i)<path as written>" <target> break;` into each location
  // of the Ingress — one rewrite per path, with that path's own regex and captures.
  if (needsRewrite(ing.annotations, pc.written)) {
    const rw = rewriteInstance(ing, pc);
    plugins[rw.id] ??= rw.inst;
    extra.push(rw.id);
  }
  return extra;
}

/** A Warning, once per Ingress, that its global-rate-limit has no Redis to count in (the ConfigMap names none). */
function noRedis(d: Draft, ref: string): void {
  const key = `noRedis ${ref}`;
  if (d.reported.has(key)) return;
  d.reported.add(key);
  const how = d.rateLimitStore.failOpen ? 'every request is let through unlimited (global-rate-limit-redis-fail-open)' : 'every request is answered 503 (global-rate-limit-redis-fail-open: "false")';
  d.warn(ref, 'GlobalRateLimitWithoutRedis', `annotation ${NGINX_PREFIX}global-rate-limit needs a Redis to count in, and the ConfigMap sets no global-rate-limit-redis-host: ${how}`);
}

/**
 * ssl-passthrough: the hosts of its rules; a canary is left out (its traffic is the main Ingress's). Without
 * --enable-ssl-passthrough the annotation gets a Warning (the answer is not used then).
 */
function passthrough(d: Draft, ow: Owner): PassthroughAsk {
  const ing = ingOf(ow);
  const asks = ing.annotations['ssl-passthrough'] === true;
  if (!d.o.sslPassthrough) {
    if (asks) d.warn(ow.ref, 'UnsupportedAnnotation', `annotation ${NGINX_PREFIX}ssl-passthrough needs the controller flag --enable-ssl-passthrough (off by default, as in ingress-nginx): it is ignored and Portico terminates TLS for this Ingress's hosts`);
    return 'ignored';
  }
  if (isCanary(ing)) {
    if (asks) d.warn(ow.ref, 'PassthroughIgnored', `annotation ${NGINX_PREFIX}ssl-passthrough is ignored on a canary Ingress (its traffic is the main Ingress's)`);
    return 'ignored';
  }
  const hosts = ing.rules.map((r) => r.host ?? '_');
  if (!asks) return { hosts };
  let noted = false;
  return {
    hosts,
    target: (h) => passthroughTarget(ing, h),
    // Access control of a passthrough Ingress applies to its plain-HTTP requests only: said once, in a Warning.
    passed() {
      if (noted) return;
      noted = true;
      const names = (Object.keys(ing.annotations) as AnnotationName[]).filter((n) => ANNOTATIONS[n]?.access).map((n) => `${NGINX_PREFIX}${n}`);
      for (const a of ing.accessControl) for (const n of a.annotation.split(', ')) if (!names.includes(n)) names.push(n);
      if (names.length) d.warn(ow.ref, 'PassthroughAccessControl', `ssl-passthrough: the access control of ${names.sort().join(', ')} does not apply to the TLS connections passed through (they are never decrypted; ingress-nginx ignores it there too), only to plain-HTTP requests`);
    },
  };
}

/** The route of an Ingress's claim: redirects, timeouts, error pages, mirror, default backend, ModSecurity. */
function ingressRoute(d: Draft, c: Claim, ing: NormalizedIngress, cx: HostContext, up: NormalizedUpstream | undefined): RouteDraft {
  const { sideOf } = d;
  const g = d.snap.global;
  const { tls, tuning } = cx;
  const retries = up?.retries;
  const a = ing.annotations;
  // no-tls-redirect-locations: paths (as written) that start with one are never redirected to HTTPS, whatever
  // ssl-redirect or force-ssl-redirect say (ingress-nginx's force_no_ssl_redirect: ACME HTTP-01 challenges).
  const noTls = noAuthLocation(c.pc.path, g.noTlsRedirectLocations ?? []);
  const route: Route = { source: c.pc.source, backendId: c.backendId, sslRedirect: !noTls && ((a['force-ssl-redirect'] ?? g.forceSslRedirect) || (tls && (a['ssl-redirect'] ?? g.sslRedirect))) };
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
      // --default-backend-service: the controller-wide default backend takes the errors (the route has no default-backend).
      if (side?.errorBackendId && !side.defaultBackendId) route.errorPage.backendId = side.errorBackendId;
    }
    if (side?.defaultBackendId) route.defaultBackendId = side.defaultBackendId;
    if (side?.mirror) {
      route.mirrors = [side.mirror];
      fromAnnotations.mirror = { body: a['mirror-request-body'] ?? true };
    }
    // ModSecurity: the Ingress's annotations and the ConfigMap's keys (modsecuritySettings).
    const waf = modsecuritySettings(a, g);
    if (waf) fromAnnotations.modsecurity = waf;
  }
  // backend-protocol (ingress-nginx; AUTO_HTTP = HTTP), unless an Upstream sets the protocol.
  const annProto = a['backend-protocol'];
  // FCGI: the FastCGI settings (fastcgi-index, the params); a path failing closed gets none, so a namespace over its
  // bound of FastCGI settings (phases/objects.ts) makes no new profile.
  const protocol = annProto === 'HTTPS' || annProto === 'GRPC' || annProto === 'GRPCS' || (annProto === 'FCGI' && !c.closed) ? annProto : undefined;
  if (backendProtocolOf(up, protocol) === 'FCGI') Object.assign(fromAnnotations, fastcgiProfileSettings(ing, fromAnnotations));
  // ingress-nginx's proxy-ssl-* (client certificate, verification, SNI, protocols, ciphers).
  const proxySsl = proxySslProfileSettings(ing, backendProtocolOf(up, protocol), !!up?.tls, c.pc.serviceKey);
  return { route, bodySize, retries, fromAnnotations, protocol, proxySsl, testInvalidDirective: ing.testInvalidDirective === true };
}

/**
 * ingress-nginx's path rules: a regex path, or any path of a namespace in the host's regex mode, is matched as
 * `~* "^<path>"`; a plain ImplementationSpecific path written with a trailing slash is nginx's `location /foo/`.
 */
function finishRule(c: Claim, cx: HostContext, rule: RouteRule): void {
  const a = ingOf(c.owner).annotations;
  if (cx.regexNamespaces.has(c.owner.ns) || rule.match === 'regex') {
    // `~* "^<path>"`: the "^" is prepended as ingress-nginx does, so "/a|/b" reads "(^/a)|(/b)" there as here.
    rule.match = 'regex';
    rule.path = `^${regexSourceOf(c.pc)}`;
  }
  // "/foo" itself is answered 301 to "/foo/" by nginx (proxy_pass locations), unless an exact "/foo" exists. (Only
  // such a path keeps its slash in the claim: a Prefix "/foo/" matches "/foo", per spec.)
  if (rule.match === 'prefix' && rule.path.length > 1 && rule.path.endsWith('/')) {
    rule.slashRedirect = true;
    if (a['use-port-in-redirects'] === true) rule.portInRedirect = true;
  }
  if (rule.route.sslRedirect && a['preserve-trailing-slash'] === true) rule.route.preserveTrailingSlash = true;
  // OpenTelemetry (route data, read by tracing.lua): each annotation absent = the ConfigMap's.
  const otel = a['enable-opentelemetry'];
  const trust = a['opentelemetry-trust-incoming-span'];
  const name = a['opentelemetry-operation-name'];
  if (otel !== undefined || trust !== undefined || name) {
    rule.route.tracing = {
      ...(otel !== undefined ? { enabled: otel } : {}),
      ...(trust !== undefined ? { trust } : {}),
      ...(name ? { operationName: name } : {}),
    };
  }
}

