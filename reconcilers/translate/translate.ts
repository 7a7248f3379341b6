// Pure translation: model snapshot → desired gateway configuration (structure + data), per-Ingress status and the
// events to report. No I/O, no clock. Deterministic: same snapshot, same output, byte for byte.
//
// Semantics (Ingress API + ingress-nginx's documented behaviour):
//   - paths of one host merge across Ingresses; for the same host + path + match type the Ingress with the oldest
//     creationTimestamp wins (ties: namespace/name); the loser gets a Warning event naming the winner;
//   - TLS for a host: oldest Ingress wins the same way;
//   - rules without host go to the catch-all server "_"; an Ingress's defaultBackend serves "/" on its hosts and on
//     "_" wherever no rule claims "/" (oldest first);
//   - Prefix is element-wise ("/foo" matches "/foo" and "/foo/bar", not "/foobar"); Exact beats Prefix;
//   - service ports resolve by number or name, target ports through the EndpointSlices' port names; only ready
//     endpoints receive new requests (terminating ones, even if still serving, get none);
//   - a missing Service or port gives a backend with no endpoints: that path answers 503, nothing else changes;
//   - endpoints no tenant may reach (loopback, link-local, Portico's own addresses...) are dropped with a Warning;
//   - an Ingress with an access-control annotation Portico cannot apply fails closed: its paths are claimed but
//     answer 503 (location without backend), so nothing protected is served and nothing falls through;
//   - every other unsupported annotation raises a Warning; none is ignored silently;
//   - hosts and paths become routes (data for the Lua router); what only nginx directives can do becomes a directive
//     profile shared by every route with the same settings (see profileOf), so nginx.conf does not grow with Ingresses;
//   - ssl-passthrough (with --enable-ssl-passthrough): TLS for a host goes undecrypted to one Service port, chosen as
//     ingress-nginx does (see passthroughTarget); the oldest Ingress serving a host decides, its routes stay plain HTTP.
import { forbiddenAddressReason, parseIp } from './addresses.ts';
import { namesService } from './self.ts';
import { clusterIpIndex, serviceOfAddress } from './cluster-ips.ts';
import { createHash } from 'node:crypto';
import type { Backend, Certificate, ClientAuth, ConsumerSet, GlobalSettings, HostRoutes, PassthroughHost, PathMatch, PluginInstance, Profile, Route, RouteRule } from '../config/types.ts';
import type { ModelSnapshot } from '../model/model.ts';
import type { NormalizedIngress, NormalizedRoute, NormalizedUpstream, ServiceBackendRef, TlsMaterial } from '../model/types.ts';
import { ANNOTATIONS, NGINX_PREFIX, PROXY_SSL_ANNOTATIONS, type AnnotationName, type ParsedAnnotations } from '../annotations/table.ts';
import { hostSchema } from './safe.ts';
import { annotationRefusals, gateAnnotations } from '../annotations/risk.ts';
import { globalAuthSpec, noAuthLocation } from '../annotations/plugins.ts';
import type { ClientCertSpec } from '../annotations/auth-tls.ts';
import { fullNginxTuning, nginxTuningOf } from '../config/nginx-tuning.ts';
import type { IngressStatus, TranslateEvent, TranslateOptions, TranslateResult } from './types.ts';
import { endpointsOf } from './endpoints.ts';
import { sameInputs, type TranslateMemo } from './memo.ts';
import { byAge, byOwnerAge, ingressRef, isIngressServed, routeRef, secretNs, type Owner } from './objects.ts';
import { backendIdOf, claimsOfIngress, claimsOfRoute, condCount, hostOrder, type PathClaim, type RouteClaim } from './claims.ts';
import { annotationProfileSettings, fullTimeouts, modsecurityClosedReason, modsecuritySettings, profileOf, proxySslClosedReason, proxySslProfileSettings, sizeBytes } from './profiles.ts';
import { annotationInstances, authBackendId, clientCertOf, customHeadersInstance, externalAuthInstance, GLOBAL_AUTH_ID, globalIpLists, ingressPluginBase, pluginId, PLUGIN_RANK, rewriteInstance, type AnnotationInstance, type AuthTimeouts } from './plugin-instances.ts';
import { certCovers, claimPathOf, ingressNginxOrder, needsRewrite, passthroughTarget, regexSourceOf, ruleOrder, wildcardCovers } from './matching.ts';

// What other modules import from here (the translation's parts live in the modules above).
export type { IngressStatus, TranslateEvent, TranslateOptions, TranslateResult } from './types.ts';
export { endpointsFor, endpointsOf, type ForbiddenEndpoint } from './endpoints.ts';
export { retainMemo, TranslateMemo } from './memo.ts';
export { byAge, ingressKeyOf, ingressRef, isIngressServed, routeRef } from './objects.ts';
export { claimsOfIngress, claimsOfRoute, type PathClaim, type RouteClaim } from './claims.ts';
export { annotationProfileSettings, modsecurityClosedReason, modsecuritySettings, profileOf, PROXY_SSL_DEFAULTS, proxySslClosedReason, proxySslProfileSettings, sizeBytes } from './profiles.ts';
export { annotationInstances, authBackendId, externalAuthInstance, GLOBAL_ALLOW_ID, GLOBAL_AUTH_ID, GLOBAL_DENY_ID, pluginId, type AnnotationInstance, type AuthTimeouts } from './plugin-instances.ts';
export { passthroughTarget } from './matching.ts';

const MATCH_LABEL: Record<PathMatch, string> = { exact: 'Exact', prefix: 'Prefix', regex: 'regex' };

/** The ConfigMap's block-cidrs, block-user-agents and block-referers for nginx.conf (structural: a reload). */
function blocksOf(g: ModelSnapshot['global']): Pick<GlobalSettings, 'blocks'> {
  const lists = [g.blockCidrs, g.blockUserAgents, g.blockReferers];
  if (lists.every((l) => !l || (l.items && !l.items.length))) return {};
  const invalid = lists.some((l) => l?.error !== undefined);
  return {
    blocks: {
      cidrs: g.blockCidrs?.items ?? [],
      userAgents: g.blockUserAgents?.items ?? [],
      referers: g.blockReferers?.items ?? [],
      ...(invalid ? { invalid: true as const } : {}),
    },
  };
}

export function translate(snap: ModelSnapshot, o: TranslateOptions, memo?: TranslateMemo): TranslateResult {
  const events: TranslateEvent[] = [];
  const status = new Map<string, IngressStatus>();
  const warn = (ref: string, reason: string, message: string) => {
    events.push({ ref, type: 'Warning', reason, message });
    status.get(ref)?.problems.push(message);
  };
  const unresolved = (ref: string, what: string) => {
    const st = status.get(ref);
    if (st && !(st.unresolved ??= []).includes(what)) st.unresolved.push(what);
  };

  for (const [key, r] of snap.rejected) {
    status.set(ingressRef(key), { served: false, programmed: false, problems: [r.reason] });
  }
  const served: NormalizedIngress[] = [];
  // Classes are few; resolve "is it served" against them once instead of per Ingress.
  const mine = [...snap.classes.values()].filter((c) => c.controller === o.controllerClass);
  const classes = new Map(mine.map((c) => [c.name, c]));
  const owners: Owner[] = [];
  // The ConfigMap's annotations-risk-level / allow-snippet-annotations decide which annotations apply (risk.ts).
  const risk = { allowSnippetAnnotations: snap.global.allowSnippetAnnotations, annotationsRiskLevel: snap.global.annotationsRiskLevel };
  for (const raw of snap.ingresses.values()) {
    const ing = gateAnnotations(raw, risk);
    const s = isIngressServed(ing, classes, o);
    const ref = ingressRef(ing.key);
    status.set(ref, { served: s, programmed: false, problems: [] });
    if (s) {
      served.push(ing);
      owners.push({ ref, created: ing.creationTimestamp, ns: ing.namespace, ing });
    }
  }
  const routesServed: NormalizedRoute[] = [];
  for (const rt of snap.routes.values()) {
    const s = isIngressServed({ className: rt.className, classFromAnnotation: false }, classes, o);
    const ref = routeRef(rt.key);
    status.set(ref, { served: s, programmed: false, problems: [] });
    if (s) {
      routesServed.push(rt);
      owners.push({ ref, created: rt.creationTimestamp, ns: rt.namespace, rt });
    }
  }
  served.sort(byAge);
  owners.sort(byOwnerAge);
  const own = new Set(o.ownAddresses ?? []);
  const ownKey = [...own].sort().join(',');
  // Access control Portico cannot apply: the Ingress fails closed (its locations get no backend → 503).
  const closedReason = new Map<string, string>();
  for (const ing of served) {
    if (!ing.accessControl.length) continue;
    const what = ing.accessControl.map((a) => `${a.annotation} (${a.kind})`).join(', ');
    closedReason.set(ing.key, `access control requested by ${what} cannot be applied by Portico`);
  }
  // proxy-ssl-*: a backend is never proxied without the client certificate or verification an Ingress asks for; when
  // that cannot be done its paths fail closed (503) too. A canary's own proxy-ssl-* do not apply (its traffic goes
  // through the main Ingress's location, as in ingress-nginx).
  const sslClosed = new Map<string, string>();
  for (const ing of served) {
    const why = ing.annotations.canary === true ? undefined : proxySslClosedReason(snap.ingresses.get(ing.key) ?? ing, ing);
    if (why) sslClosed.set(ing.key, why);
  }
  // ModSecurity: paths it is on for are never served without it (module or CRS missing, snippet refused). A canary's
  // own ModSecurity annotations do not apply (its traffic goes through the main Ingress's profile).
  const wafClosed = new Map<string, string>();
  for (const ing of served) {
    const why = ing.annotations.canary === true ? undefined : modsecurityClosedReason(snap.ingresses.get(ing.key) ?? ing, ing, snap.global, o.modsecurity);
    if (why) wafClosed.set(ing.key, why);
  }
  for (const [key, r] of snap.rejected) {
    events.push({ ref: ingressRef(key), type: 'Warning', reason: 'Rejected', message: r.reason });
  }

  // ---- plugins: which Plugin objects a path names, resolved to data-plane ids (fail closed when missing) ------
  const plugins: Record<string, PluginInstance> = {};
  /** Auth Services of external-auth plugins: backend id → (plugin ref, service). */
  const authBackends = new Map<string, { ref: string; ns: string; service: string; port: number }>();
  const usePlugin = (ns: string, name: string): { id: string } | { missing: string } => {
    const p = snap.plugins.get(`${ns}/${name}`);
    if (!p) {
      const rej = snap.rejectedCrds.get(`Plugin/${ns}/${name}`);
      return { missing: rej ? `Plugin ${ns}/${name} is invalid: ${rej.reason}` : `Plugin ${ns}/${name} not found` };
    }
    if (!p.instance) return { missing: `Plugin ${ns}/${name} cannot be used: ${p.error ?? 'invalid'}` };
    const id = pluginId(ns, name);
    if (!plugins[id]) {
      const inst = { name: `${ns}/${name}`, ...p.instance } as PluginInstance;
      if (inst.type === 'external-auth' && p.authService) {
        const bid = backendIdOf(ns, { service: p.authService.service, port: { number: p.authService.port } });
        inst.backendId = bid;
        if (!authBackends.has(bid)) authBackends.set(bid, { ref: `Plugin/${ns}/${name}`, ns, service: p.authService.service, port: p.authService.port });
      }
      plugins[id] = inst;
    }
    return { id };
  };
  /** Plugin ids for a path, in execution order, or why the path must fail closed. */
  const pluginMemo = new Map<string, { ids: string[]; closed?: string }>();
  const pluginsFor = (ns: string, names: readonly string[]): { ids: string[]; closed?: string } => {
    if (!names.length) return { ids: [] };
    const k = `${ns} ${names.join(',')}`;
    const hit = pluginMemo.get(k);
    if (hit) return hit;
    const ids: string[] = [];
    const missing: string[] = [];
    for (const n of names) {
      const r = usePlugin(ns, n);
      if ('id' in r) {
        if (!ids.includes(r.id)) ids.push(r.id);
      } else missing.push(r.missing);
    }
    ids.sort((a, b) => (PLUGIN_RANK.get(plugins[a]!.type) ?? 99) - (PLUGIN_RANK.get(plugins[b]!.type) ?? 99) || (a < b ? -1 : 1));
    const out = missing.length ? { ids, closed: missing.join('; ') } : { ids };
    pluginMemo.set(k, out);
    return out;
  };

  // ---- ingress-nginx external authentication (auth-url, global-auth-url): where each subrequest goes ---------
  const g0 = snap.global;
  const authTimeouts: AuthTimeouts = { connect: g0.proxyConnectTimeoutSeconds, send: g0.proxySendTimeoutSeconds, read: g0.proxyReadTimeoutSeconds };
  const noAuthList = g0.noAuthLocations ?? [];
  const gSpec = globalAuthSpec({
    url: g0.globalAuthUrl ?? '',
    method: g0.globalAuthMethod ?? '',
    signin: g0.globalAuthSignin ?? '',
    signinRedirectParam: g0.globalAuthSigninRedirectParam ?? '',
    responseHeaders: g0.globalAuthResponseHeaders ?? '',
    requestRedirect: g0.globalAuthRequestRedirect ?? '',
    cacheKey: g0.globalAuthCacheKey ?? '',
    cacheDuration: g0.globalAuthCacheDuration ?? '',
    alwaysSetCookie: g0.globalAuthAlwaysSetCookie ?? '',
    snippet: g0.globalAuthSnippet ?? '',
  });
  const globalAuth = !gSpec ? null : 'error' in gSpec ? { error: gSpec.error } : externalAuthInstance(gSpec.spec, 'ConfigMap global-auth-url', authTimeouts);
  /** Auth backends that are not a Service: a host Portico resolves (externalName), or an allowed IP literal. */
  const extAuthBackends = new Map<string, { host?: string; address?: string; port: number; noClusterIPs?: true }>();
  let vips: Map<string, string> | undefined;
  const crossNote = 'only Services of the Ingress\'s own namespace may be named (the ConfigMap\'s allow-cross-namespace-auth: "true" allows others)';
  /**
   * Registers the backend of an auth subrequest or mirror; why the paths using it must fail closed (or nothing is
   * mirrored), or null. `ns`: the namespace of the Ingress that names it, whose Services alone it may reach
   * (unless the ConfigMap allows others); null for the ConfigMap's global-auth-url, which is the administrator's.
   */
  const useAuthTarget = (ref: string, a: NonNullable<AnnotationInstance['auth']>, what: string, ns: string | null): string | null => {
    const t = a.target;
    const self = o.selfService;
    if (self && ((t.kind === 'service' && `${t.namespace}/${t.service}` === self) || (t.kind === 'host' && namesService(t.host, self)))) {
      return `${what} ${a.url} names Portico's own Service ${self}, which Portico never proxies to (a request would loop)`;
    }
    const sameNamespaceOnly = ns !== null && !g0.allowCrossNamespaceAuth;
    if (t.kind === 'service') {
      const key = `${t.namespace}/${t.service}`;
      if (sameNamespaceOnly && t.namespace !== ns) return `${what} ${a.url} names Service ${key} of another namespace: ${crossNote}`;
      const svc = snap.services.get(key);
      if (!svc) return `${what} ${a.url} names Service ${key}, which does not exist`;
      if (!svc.ports.some((p) => p.port === t.port)) return `${what} ${a.url} names port ${t.port} of Service ${key}, which it does not have`;
      if (!authBackends.has(a.backendId)) authBackends.set(a.backendId, { ref, ns: t.namespace, service: t.service, port: t.port });
      return null;
    }
    if (t.kind === 'ip') {
      const why = forbiddenAddressReason(t.address, own);
      if (why) return `${what} ${a.url} points at ${t.address}, ${why}, which Portico never proxies to`;
      if (sameNamespaceOnly) {
        vips ??= clusterIpIndex(snap.services.values());
        const owner = serviceOfAddress(vips, t.address);
        if (owner && !owner.startsWith(`${ns}/`)) return `${what} ${a.url} points at ${t.address}, the cluster IP of Service ${owner} of another namespace: ${crossNote}`;
      }
      extAuthBackends.set(a.backendId, { address: t.address, port: t.port });
      return null;
    }
    // A host name: resolved by the gateway, which refuses cluster IPs for it too when one Ingress naming it may
    // reach its own namespace only (the stricter caller wins: the backend is shared by host).
    const prev = extAuthBackends.get(a.backendId);
    extAuthBackends.set(a.backendId, { host: t.host, port: t.port, ...(sameNamespaceOnly || prev?.noClusterIPs ? { noClusterIPs: true as const } : {}) });
    return null;
  };

  /**
   * The default-backend Service (its first port, as ingress-nginx) and the mirror-target of an Ingress, registered
   * as backends; what cannot be used is reported and left out (neither is access control: nothing fails closed).
   */
  const sideBackends = (ing: NormalizedIngress, iref: string): { defaultBackendId?: string; mirror?: NonNullable<Route['mirror']> } => {
    const a = ing.annotations;
    const out: { defaultBackendId?: string; mirror?: NonNullable<Route['mirror']> } = {};
    const name = a['default-backend'];
    if (name !== undefined) {
      const key = `${ing.namespace}/${name}`;
      const port = snap.services.get(key)?.ports[0]?.port;
      if (port === undefined) {
        warn(iref, 'DefaultBackendNotFound', `default-backend: Service ${key} ${snap.services.has(key) ? 'has no port' : 'does not exist'}; requests are not sent to it (without endpoints the paths answer 503, errors get nginx's own page)`);
        unresolved(iref, `Service ${key}`);
      } else {
        const ref: ServiceBackendRef = { service: name, port: { number: port } };
        out.defaultBackendId = backendIdOf(ing.namespace, ref);
        resolve(iref, undefined, ing.namespace, ref, out.defaultBackendId, key);
      }
    }
    const t = a['mirror-target'];
    if (t !== undefined) {
      const backendId = authBackendId(t.target);
      const why = useAuthTarget(iref, { target: t.target, backendId, url: t.url }, 'mirror-target', ing.namespace);
      if (why) warn(iref, 'MirrorUnavailable', `${why}; requests are not mirrored`);
      else {
        // The Host header: mirror-host, else the target's host (an IPv6 literal in brackets, as in a URL).
        const host = a['mirror-host'] ?? (t.host.includes(':') ? `[${t.host}]` : t.host);
        out.mirror = { backendId, scheme: t.scheme, host, serverName: t.host, ...('requestUri' in t.uri ? { requestUri: true as const } : { path: t.uri.path }) };
      }
    }
    return out;
  };

  // ---- paths: host → (match|path[|conditions]) → claim ------------------------------------------------------
  interface Claim {
    pc: PathClaim;
    owner: Owner;
    /** Backend id, or null when the path fails closed or has no backend. */
    backendId: string | null;
    closed: string | undefined;
    /** Route CRD claims: the rule and match. */
    rr?: RouteClaim;
    pluginIds: string[];
    /** Why it is closed was reported already (a Warning of its own). */
    reported?: true;
  }
  const hosts = new Map<string, Map<string, Claim>>();
  const describe = (ref: string) => ref.replace('/', ' ');
  // namespace-exclusive-hosts: the first owner (oldest first) to claim a host gives it to its namespace.
  const hostNamespace = new Map<string, Owner>();
  const exclusiveHosts = snap.global.namespaceExclusiveHosts === true;
  const refusedHost = new Set<string>();
  const claim = (pc: PathClaim, owner: Owner, isDefault: boolean, rr?: RouteClaim) => {
    if (exclusiveHosts) {
      const first = hostNamespace.get(pc.host);
      if (!first) hostNamespace.set(pc.host, owner);
      else if (first.ns !== owner.ns) {
        const once = `${owner.ref} ${pc.host}`;
        if (!refusedHost.has(once)) {
          refusedHost.add(once);
          warn(owner.ref, 'HostOwnedByNamespace', `host ${pc.host === '_' ? '(any: rules without a host)' : pc.host} belongs to namespace ${first.ns} (its oldest object, ${describe(first.ref)}, named it first) and the ConfigMap's namespace-exclusive-hosts is on: the paths of ${describe(owner.ref)} on it are not served`);
        }
        return;
      }
    }
    let locs = hosts.get(pc.host);
    if (!locs) hosts.set(pc.host, (locs = new Map()));
    const prev = locs.get(pc.id);
    if (prev) {
      if (prev.owner.ref !== owner.ref && !isDefault) {
        const cond = rr?.m.conditions ? ' with the same conditions' : '';
        warn(
          owner.ref,
          'Conflict',
          `host ${pc.host === '_' ? '(any)' : pc.host} path ${pc.path} (${MATCH_LABEL[pc.match]})${cond} is already served by ${describe(prev.owner.ref)}, which is older; this path of ${describe(owner.ref)} is ignored`,
        );
      }
      return;
    }
    let closed = owner.ing ? closedReason.get(owner.ing.key) : undefined;
    const sslWhy = owner.ing ? sslClosed.get(owner.ing.key) : undefined;
    if (sslWhy) closed = closed ? `${closed}; ${sslWhy}` : sslWhy;
    const wafWhy = owner.ing ? wafClosed.get(owner.ing.key) : undefined;
    if (wafWhy) closed = closed ? `${closed}; ${wafWhy}` : wafWhy;
    const names = owner.ing ? (owner.ing.annotations.plugins ?? []) : (rr?.rule.plugins ?? []);
    const pl = pluginsFor(owner.ns, names);
    if (pl.closed) {
      closed = closed ? `${closed}; ${pl.closed}` : pl.closed;
      for (const n of names) if (!snap.plugins.get(`${owner.ns}/${n}`)?.instance) unresolved(owner.ref, `Plugin ${n}`);
    }
    let pluginIds = pl.ids;
    const ing = owner.ing;
    const gip = globalIpLists(snap.global, ing);
    for (const why of gip.closed) closed = closed ? `${closed}; ${why}` : why;
    if (gip.ids.length) {
      pluginIds = [...pluginIds];
      for (const [id, inst] of gip.ids) {
        plugins[id] ??= inst;
        if (!pluginIds.includes(id)) pluginIds.push(id);
      }
      pluginIds.sort((a, b) => (PLUGIN_RANK.get(plugins[a]!.type) ?? 99) - (PLUGIN_RANK.get(plugins[b]!.type) ?? 99) || (a < b ? -1 : 1));
    }
    if (ing) {
      // ingress-nginx annotations that are plugins (IP lists, CORS, rate limits, auth): the same engine, own ids;
      // and the ConfigMap's global external authentication. no-auth-locations: paths (as written) that get neither
      // external nor basic authentication, as in ingress-nginx.
      const noAuth = noAuthLocation(pc.path, noAuthList);
      const extra: string[] = [];
      const unusable = (why: string | null) => {
        if (why) closed = closed ? `${closed}; ${why}` : why;
      };
      if (ing.annotationPlugins.length) {
        for (const e of annotationInstances(ing, snap.global.limitReqStatusCode, authTimeouts, snap.global.limitConnStatusCode)) {
          if (noAuth && (e.auth || (e.inst.type === 'basic-auth' && e.inst.users))) continue;
          if (e.auth) unusable(useAuthTarget(owner.ref, e.auth, 'auth-url', ing.namespace));
          plugins[e.id] ??= e.inst;
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
          unusable(useAuthTarget(owner.ref, globalAuth.auth, 'the ConfigMap\'s global-auth-url', null));
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
      if (extra.length) {
        pluginIds = [...pluginIds];
        for (const id of extra) if (!pluginIds.includes(id)) pluginIds.push(id);
        pluginIds.sort((a, b) => (PLUGIN_RANK.get(plugins[a]!.type) ?? 99) - (PLUGIN_RANK.get(plugins[b]!.type) ?? 99) || (a < b ? -1 : 1));
      }
    }
    const backendId = closed || (rr && !rr.hasBackend) ? null : pc.backendId;
    locs.set(pc.id, { pc, owner, backendId, closed, rr, pluginIds });
  };

  const isCanary = (i: NormalizedIngress) => i.annotations.canary === true;
  for (const ow of owners) {
    if (ow.ing) {
      if (isCanary(ow.ing)) continue;
      for (const pc of claimsOfIngress(ow.ing).paths) claim(pc, ow, false);
    } else if (ow.rt) {
      for (const rc of claimsOfRoute(ow.rt)) claim(rc.pc, ow, false, rc);
    }
  }
  const ownerOf = new Map<string, Owner>(owners.filter((x) => x.ing).map((x) => [x.ing!.key, x]));
  // Default backends fill "/" where no rule claimed it (oldest Ingress first).
  for (const ing of served) {
    if (!ing.defaultBackend || isCanary(ing)) continue;
    for (const pc of claimsOfIngress(ing).defaults) claim(pc, ownerOf.get(ing.key)!, true);
  }

  const hostList = [...hosts.keys()].sort(hostOrder);

  // ---- client certificates (auth-tls-*): one CA per host ---------------------------------------------------------
  // The TLS handshake is per server name, so a host asks for client certificates with one CA (and depth): that of the
  // oldest Ingress whose path on the host is served and sets auth-tls (verify-client other than off). A younger
  // Ingress naming another CA cannot have its clients verified against it there: its paths on that host fail closed.
  const hostCa = new Map<string, { owner: Owner; spec: ClientCertSpec }>();
  for (const host of hostList) {
    const locs = hosts.get(host) as Map<string, Claim>;
    let win: { owner: Owner; spec: ClientCertSpec } | undefined;
    for (const c of locs.values()) {
      const spec = clientCertOf(c.owner.ing);
      if (spec && !c.closed && (!win || byOwnerAge(c.owner, win.owner) < 0)) win = { owner: c.owner, spec };
    }
    if (!win) continue;
    hostCa.set(host, win);
    const told = new Set<string>();
    for (const c of locs.values()) {
      const spec = clientCertOf(c.owner.ing);
      if (!spec || c.closed || spec.caId === win.spec.caId) continue;
      const what = spec.secret === win.spec.secret ? `depth ${spec.depth} instead of ${win.spec.depth}` : `Secret ${spec.secret}`;
      // The winner's Secret is named only to an Ingress of its own namespace: Events are read by the namespace's
      // users, and a Secret of another namespace is none of theirs.
      const theirs = secretNs(win.spec.secret) === c.owner.ns ? `Secret ${win.spec.secret}` : 'its auth-tls-secret';
      c.closed = `host ${host} asks for client certificates of the CA in ${theirs} (depth ${win.spec.depth}, auth-tls-secret of ${describe(win.owner.ref)}, which is older); this Ingress names ${what}, and a host has one CA`;
      c.backendId = null;
      c.reported = true;
      if (!told.has(c.owner.ref)) {
        told.add(c.owner.ref);
        warn(c.owner.ref, 'ClientCertificateConflict', `${c.closed}: its paths on ${host} answer 503`);
      }
    }
  }

  // ---- canaries: attach to the main Ingress's location (ingress-nginx semantics) -----------------------------
  const canaryOf = new Map<string, { ing: NormalizedIngress; ref: ServiceBackendRef }>(); // main backend id → canary
  for (const ing of served) {
    if (!isCanary(ing)) continue;
    const iref = ingressRef(ing.key);
    let attached = false;
    for (const rule of ing.rules) {
      for (const p of rule.paths) {
        const host = rule.host ?? '_';
        const main = hosts.get(host)?.get(`${p.match} ${claimPathOf(p)}`);
        if (!main) {
          warn(iref, 'CanaryWithoutMain', `canary path ${p.path} on ${host === '_' ? '(any host)' : host} has no main Ingress serving it; ignored`);
          continue;
        }
        // A canary whose own access control cannot be applied gets no traffic; a main that fails closed
        // answers 503 for every request, so there is nothing to split.
        if (closedReason.has(ing.key)) continue;
        if (main.owner.ns !== ing.namespace) {
          warn(iref, 'CanaryWithoutMain', `canary path ${p.path} on ${host === '_' ? '(any host)' : host}: its main ${describe(main.owner.ref)} is in namespace ${main.owner.ns}, and a canary must be in its main Ingress's namespace (one namespace never takes another's traffic); ignored`);
          continue;
        }
        const mainId = main.backendId;
        if (!mainId) {
          warn(iref, 'CanaryWithoutMain', `canary path ${p.path} on ${host === '_' ? '(any host)' : host}: main ${describe(main.owner.ref)} fails closed (unsupported access control); canary not attached`);
          continue;
        }
        const prev = canaryOf.get(mainId);
        if (prev && prev.ing.key !== ing.key) {
          warn(iref, 'Conflict', `backend ${mainId} already has canary Ingress ${prev.ing.key} (older); this canary is ignored for it`);
          continue;
        }
        canaryOf.set(mainId, { ing, ref: p.backend });
        attached = true;
      }
    }
    if (attached) status.get(iref)!.programmed = true;
  }

  // ---- TLS ------------------------------------------------------------------------------------------------------
  const tlsHosts = new Map<string, { ref: string; secretKey: string | null }>();
  for (const ow of owners) {
    const sections = ow.ing ? ow.ing.tls : (ow.rt?.tls ?? []);
    for (const t of sections) {
      const secretKey = t.secretName ? `${ow.ns}/${t.secretName}` : null;
      for (const h of t.hosts) {
        const first = exclusiveHosts ? hostNamespace.get(h) : undefined;
        if (first && first.ns !== ow.ns) {
          warn(ow.ref, 'HostOwnedByNamespace', `TLS for host ${h}: the host belongs to namespace ${first.ns} (${describe(first.ref)} named it first) and the ConfigMap's namespace-exclusive-hosts is on; this TLS section is ignored for ${h}`);
          continue;
        }
        const prev = tlsHosts.get(h);
        if (!prev) tlsHosts.set(h, { ref: ow.ref, secretKey });
        else if (prev.ref !== ow.ref && prev.secretKey !== secretKey) {
          // The older owner's Secret is named only within its own namespace (see ClientCertificateConflict).
          const theirs = prev.secretKey === null ? 'the default certificate' : secretNs(prev.secretKey) === ow.ns ? `secret ${prev.secretKey}` : 'a secret of its own namespace';
          warn(ow.ref, 'TLSConflict', `TLS for host ${h} is already configured by ${describe(prev.ref)} (older, ${theirs}); this TLS section of ${describe(ow.ref)} is ignored for ${h}`);
        }
      }
    }
  }
  const certificates: Record<string, Certificate> = {};
  for (const [h, t] of [...tlsHosts].sort(([a], [b]) => hostOrder(a, b))) {
    if (!hosts.has(h)) continue;
    if (!t.secretKey) continue; // default certificate
    const m = snap.secrets.get(t.secretKey);
    if (!m) {
      warn(t.ref, 'TLSSecretNotFound', `TLS secret ${t.secretKey} for host ${h} was not found (or is not a kubernetes.io/tls Secret); serving the default certificate`);
      unresolved(t.ref, `Secret ${t.secretKey}`);
    } else if (!m.ok) {
      warn(t.ref, 'TLSSecretInvalid', `TLS secret ${t.secretKey} for host ${h} is invalid: ${m.error}; serving ${certificates[h] ? 'the previous' : 'the default'} certificate`);
      unresolved(t.ref, `Secret ${t.secretKey}`);
    } else {
      if (m.hosts.length && !m.hosts.some((n) => n === h || (n.startsWith('*.') && h.endsWith(n.slice(1)) && !h.slice(0, -n.length + 1).includes('.')))) {
        events.push({ ref: t.ref, type: 'Warning', reason: 'TLSHostMismatch', message: `certificate in ${t.secretKey} does not cover host ${h} (SANs: ${m.hosts.slice(0, 5).join(', ')})` });
      }
      let c = memo?.certificates.get(m);
      if (!c) {
        c = { cert: m.cert, key: m.privateKey, source: m.key, notAfter: m.notAfter };
        memo?.certificates.set(m, c);
      }
      certificates[h] = c;
    }
  }

  // ---- TLS passthrough (ssl-passthrough, with --enable-ssl-passthrough) -----------------------------------------------
  // The oldest object serving a host decides (as ingress-nginx's server for a host is made by its oldest Ingress): a
  // host an older Ingress or Route serves with TLS terminated, or that an older Ingress passes through, is refused to
  // a younger passthrough Ingress; a younger object on a passthrough host keeps its routes for plain HTTP only.
  // Rules without host cannot be passed through (the server name decides), nor can a canary (it has no host of its own).
  const passthrough = new Map<string, PassthroughHost>();
  const passthroughOf = (i: NormalizedIngress) => i.annotations['ssl-passthrough'] === true;
  /** Access control of a passthrough Ingress applies to its plain-HTTP requests only: said once, in a Warning. */
  const accessNoted = new Set<string>();
  const noteAccess = (ref: string, ing: NormalizedIngress) => {
    if (accessNoted.has(ref)) return;
    accessNoted.add(ref);
    const names = (Object.keys(ing.annotations) as AnnotationName[]).filter((n) => ANNOTATIONS[n]?.access).map((n) => `${NGINX_PREFIX}${n}`);
    for (const a of ing.accessControl) for (const n of a.annotation.split(', ')) if (!names.includes(n)) names.push(n);
    if (names.length) warn(ref, 'PassthroughAccessControl', `ssl-passthrough: the access control of ${names.sort().join(', ')} does not apply to the TLS connections passed through (they are never decrypted; ingress-nginx ignores it there too), only to plain-HTTP requests`);
  };
  if (o.sslPassthrough) {
    const passedBy = new Map<string, Owner>();
    const terminatedBy = new Map<string, Owner>();
    for (const ow of owners) {
      const ing = ow.ing;
      if (ing && isCanary(ing)) {
        if (passthroughOf(ing)) warn(ow.ref, 'PassthroughIgnored', `annotation ${NGINX_PREFIX}ssl-passthrough is ignored on a canary Ingress (its traffic is the main Ingress's)`);
        continue;
      }
      const own = ing ? ing.rules.map((r) => r.host ?? '_') : claimsOfRoute(ow.rt as NormalizedRoute).map((c) => c.pc.host);
      for (const h of [...new Set(own)]) {
        const by = passedBy.get(h);
        if (ing && passthroughOf(ing)) {
          const term = terminatedBy.get(h);
          if (h === '_') warn(ow.ref, 'PassthroughIgnored', 'ssl-passthrough: rules without a host cannot be passed through (the server name of the TLS connection decides); they are served as usual');
          else if (by) warn(ow.ref, 'PassthroughConflict', `ssl-passthrough: host ${h} is already passed through by ${describe(by.ref)}, which is older; this Ingress's rules for ${h} are served over plain HTTP only`);
          else if (term) warn(ow.ref, 'PassthroughConflict', `ssl-passthrough: host ${h} is already served by ${describe(term.ref)}, which is older and does not pass TLS through; Portico terminates TLS for ${h} and the annotation is ignored for it`);
          else {
            const t = passthroughTarget(ing, h);
            if (!t) {
              warn(ow.ref, 'PassthroughIgnored', `ssl-passthrough: host ${h} has no path and the Ingress no defaultBackend: there is no Service to pass its TLS connections to`);
              continue;
            }
            passedBy.set(h, ow);
            const port = 'number' in t.ref.port ? t.ref.port.number : t.ref.port.name;
            passthrough.set(h, { host: h, source: ow.ref, namespace: ing.namespace, service: t.ref.service, servicePort: port });
            const rest = t.paths.length ? `; its other paths (${t.paths.slice(0, 5).join(', ')}${t.paths.length > 5 ? ', …' : ''}) are served over plain HTTP only` : '';
            events.push({ ref: ow.ref, type: 'Normal', reason: 'Passthrough', message: `TLS connections for ${h} go undecrypted to service ${ing.namespace}/${t.ref.service} port ${port} (${t.via})${rest}` });
            noteAccess(ow.ref, ing);
          }
        } else if (by) {
          if (h !== '_') warn(ow.ref, 'PassthroughHost', `host ${h} is passed through by ${describe(by.ref)} (ssl-passthrough, older): its TLS connections go undecrypted to that Ingress's backend, and the paths of ${describe(ow.ref)} on ${h} are served over plain HTTP only`);
        } else if (!terminatedBy.has(h)) terminatedBy.set(h, ow);
      }
    }
  } else {
    for (const ing of served) {
      if (passthroughOf(ing)) warn(ingressRef(ing.key), 'UnsupportedAnnotation', `annotation ${NGINX_PREFIX}ssl-passthrough needs the controller flag --enable-ssl-passthrough (off by default, as in ingress-nginx): it is ignored and Portico terminates TLS for this Ingress's hosts`);
    }
  }

  // ---- Upstreams: per Service (and port), win over Ingress balancing annotations --------------------------------
  const upstreamsBySvc = new Map<string, NormalizedUpstream[]>();
  for (const u of [...snap.upstreams.values()].sort((a, b) => (a.creationTimestamp < b.creationTimestamp ? -1 : a.creationTimestamp > b.creationTimestamp ? 1 : a.key < b.key ? -1 : 1))) {
    const l = upstreamsBySvc.get(u.serviceKey);
    if (l) l.push(u);
    else upstreamsBySvc.set(u.serviceKey, [u]);
  }
  const upstreamFor = (svcKey: string, port: number | undefined): NormalizedUpstream | undefined =>
    upstreamsBySvc.get(svcKey)?.find((u) => !u.ports || (port !== undefined && u.ports.includes(port)));
  /** Backend id → the Upstream applied to it (for route timeouts, retries, protocol). */
  const upstreamOf = new Map<string, NormalizedUpstream>();

  // ---- backends -------------------------------------------------------------------------------------------------
  const backends: Record<string, Backend> = {};
  const backendOwner = new Map<string, { ref: string; ann: ParsedAnnotations | undefined }>();
  const reported = new Set<string>();
  /** Backend id → the Warning about endpoint addresses refused for it (given to every Ingress using it). */
  const forbiddenNote = new Map<string, string>();
  const noteForbidden = (ref: string, id: string) => {
    const note = forbiddenNote.get(id);
    if (!note || reported.has(`forbidden ${ref} ${id}`)) return;
    reported.add(`forbidden ${ref} ${id}`);
    warn(ref, 'ForbiddenEndpoint', note);
  };
  const noteUpstreamTls = (ownerRef: string, ann: ParsedAnnotations | undefined, id: string, up: NormalizedUpstream | undefined) => {
    if (!up?.tls || ann?.['proxy-ssl-secret'] === undefined || ann.canary === true || reported.has(`upssl ${ownerRef} ${id}`)) return;
    reported.add(`upssl ${ownerRef} ${id}`);
    events.push({ ref: ownerRef, type: 'Normal', reason: 'UpstreamOverrides', message: `Upstream ${up.key} sets the TLS to service backend ${id}; this Ingress's proxy-ssl-* annotations do not apply to it` });
  };
  const LB_KEYS = ['load-balance', 'upstream-hash-by', 'affinity', 'affinity-mode', 'session-cookie-name', 'session-cookie-max-age', 'session-cookie-path', 'session-cookie-domain', 'session-cookie-samesite', 'session-cookie-conditional-samesite-none', 'session-cookie-secure', 'session-cookie-expires', 'session-cookie-change-on-failure', 'service-upstream'];
  const resolve = (ownerRef: string, ann: ParsedAnnotations | undefined, ns: string, ref: ServiceBackendRef, id: string, svcKey = `${ns}/${ref.service}`): void => {
    const prevOwner = backendOwner.get(id);
    if (prevOwner) {
      const differs = LB_KEYS.some((k) => (ann as Record<string, unknown> | undefined)?.[k] !== (prevOwner.ann as Record<string, unknown> | undefined)?.[k]);
      if (differs && ann && prevOwner.ann && prevOwner.ref !== ownerRef && !upstreamOf.has(id) && !reported.has(`lb ${ownerRef} ${id}`)) {
        reported.add(`lb ${ownerRef} ${id}`);
        warn(ownerRef, 'BackendSettingsConflict', `balancing annotations for service backend ${id} differ from ${describe(prevOwner.ref)}, which is older and whose settings apply (balancing is per Service port)`);
      }
      noteForbidden(ownerRef, id);
      noteUpstreamTls(ownerRef, ann, id, upstreamOf.get(id));
      if (backends[id]?.unavailableReason && !reported.has(`${ownerRef} ${id}`)) {
        reported.add(`${ownerRef} ${id}`);
        if (!ownerRef.startsWith('Ingress/')) {
          warn(ownerRef, 'BackendNotFound', `${backends[id]!.unavailableReason}; requests using it answer 503`);
          unresolved(ownerRef, `Service ${svcKey}`);
        }
      }
      return;
    }
    backendOwner.set(id, { ref: ownerRef, ann });
    const svcRecord = snap.services.get(svcKey);
    const portNumber = 'number' in ref.port ? ref.port.number : svcRecord?.ports.find((p) => p.name === (ref.port as { name: string }).name)?.port;
    const up = upstreamFor(svcKey, portNumber);
    if (up) upstreamOf.set(id, up);
    const inputs: unknown[] = [svcRecord, snap.slices.get(svcKey), ann, snap.global.loadBalance, ownKey, up];
    const cached = memo?.backends.get(id);
    const report = (b: Backend, kind: 'BackendNotFound' | 'ForbiddenEndpoint') => {
      noteForbidden(ownerRef, id);
      noteUpstreamTls(ownerRef, ann, id, up);
      const s = svcRecord;
      if (ann?.['service-upstream'] && !up && s && (s.type === 'ExternalName' || !s.clusterIP || s.clusterIP === 'None') && !reported.has(`su ${ownerRef} ${id}`)) {
        reported.add(`su ${ownerRef} ${id}`);
        const what = s.type === 'ExternalName' ? 'an ExternalName service, its external name is used' : 'a headless service (no cluster IP), its endpoints are used';
        warn(ownerRef, 'UnsupportedAnnotation', `service-upstream ignored for service backend ${id}: ${what}`);
      }
      if (b.unavailableReason && !reported.has(`${ownerRef} ${id}`)) {
        reported.add(`${ownerRef} ${id}`);
        warn(ownerRef, kind, `${b.unavailableReason}; ${ownerRef.startsWith('Ingress/') ? 'paths' : 'requests'} using it answer 503`);
        if (!svcRecord) unresolved(ownerRef, `Service ${svcKey}`);
      }
      if (up && ann && LB_KEYS.some((k) => (ann as Record<string, unknown>)[k] !== undefined) && !reported.has(`up ${ownerRef} ${id}`)) {
        reported.add(`up ${ownerRef} ${id}`);
        events.push({ ref: ownerRef, type: 'Normal', reason: 'UpstreamOverrides', message: `Upstream ${up.key} sets how service backend ${id} is balanced; this Ingress's balancing annotations do not apply to it` });
      }
    };
    if (cached && !cached.result.externalName && sameInputs(cached.inputs, inputs)) {
      backends[id] = cached.result;
      if (cached.forbidden) forbiddenNote.set(id, cached.forbidden);
      report(cached.result, cached.kind);
      return;
    }
    const a: ParsedAnnotations = ann ?? {};
    const b: Backend = { id, endpoints: [], balance: a['load-balance'] ?? snap.global.loadBalance };
    if (a.affinity === 'cookie') {
      b.balance = 'cookie';
      b.cookie = { name: a['session-cookie-name'] ?? 'INGRESSCOOKIE', mode: a['affinity-mode'] ?? 'balanced' };
      if (a['session-cookie-max-age'] !== undefined) b.cookie.maxAgeSeconds = a['session-cookie-max-age'];
      if (a['session-cookie-path'] !== undefined) b.cookie.path = a['session-cookie-path'];
      if (a['session-cookie-domain'] !== undefined) b.cookie.domain = a['session-cookie-domain'];
      if (a['session-cookie-samesite'] !== undefined) b.cookie.sameSite = a['session-cookie-samesite'];
      if (a['session-cookie-conditional-samesite-none']) b.cookie.conditionalSameSiteNone = true;
      if (a['session-cookie-secure']) b.cookie.secure = true;
      if (a['session-cookie-expires'] !== undefined) b.cookie.expiresSeconds = a['session-cookie-expires'];
      if (a['session-cookie-change-on-failure']) b.cookie.changeOnFailure = true;
      if (a['session-cookie-partitioned']) b.cookie.partitioned = true;
    } else if (a['upstream-hash-by']) {
      b.balance = 'chash';
      b.hashBy = a['upstream-hash-by'];
      if (a['upstream-hash-by-subset']) b.hashSubsetSize = a['upstream-hash-by-subset-size'] ?? 3;
    }
    if (up) {
      // The Upstream wins over annotations for this Service port.
      if (up.balance) {
        b.balance = up.balance;
        delete b.cookie;
        delete b.hashBy;
        delete b.hashSubsetSize;
        if (up.balance === 'chash') b.hashBy = up.hashBy ?? '$request_uri';
        if (up.balance === 'cookie') b.cookie = up.cookie ?? { name: 'INGRESSCOOKIE', mode: 'balanced' };
      }
      if (up.passiveHealth) b.passiveHealth = up.passiveHealth;
    }
    const svc = svcRecord;
    const portLabel = 'number' in ref.port ? String(ref.port.number) : ref.port.name;
    let unavailableKind: 'BackendNotFound' | 'ForbiddenEndpoint' = 'BackendNotFound';
    if (!svc) {
      b.unavailableReason = `service ${svcKey} not found`;
    } else {
      const sp = svc.ports.find((p) => ('number' in ref.port ? p.port === ref.port.number : p.name === ref.port.name));
      const dropped = svc.problems.length ? ` (ignored: ${svc.problems.join('; ')})` : '';
      if (!sp) b.unavailableReason = `service ${svcKey} has no port ${portLabel}${dropped}`;
      else if (svc.type === 'ExternalName') {
        b.externalName = svc.externalName ?? undefined;
        b.externalPort = sp.port;
        const literal = svc.externalName && parseIp(svc.externalName)
          ? forbiddenAddressReason(svc.externalName, own)
          : svc.externalName && o.selfService && namesService(svc.externalName, o.selfService)
            ? `the DNS name of Portico's own Service ${o.selfService} (a request would loop)`
            : null;
        if (!svc.externalName) b.unavailableReason = `ExternalName service ${svcKey} has no valid externalName${dropped}`;
        else if (literal) {
          delete b.externalName;
          unavailableKind = 'ForbiddenEndpoint';
          b.unavailableReason = `ExternalName service ${svcKey} points at ${svc.externalName}, ${literal}, which Portico never proxies to`;
        }
      } else if (a['service-upstream'] && !up && svc.clusterIP && svc.clusterIP !== 'None') {
        // service-upstream: one endpoint, the Service's cluster IP and port (kube-proxy balances), as ingress-nginx.
        const why = forbiddenAddressReason(svc.clusterIP, own);
        if (why) {
          unavailableKind = 'ForbiddenEndpoint';
          b.unavailableReason = `service-upstream: the cluster IP ${svc.clusterIP} of service ${svcKey} is ${why}, which Portico never proxies to`;
        } else b.endpoints = [{ address: svc.clusterIP, port: sp.port, weight: 1 }];
      } else {
        const r = endpointsOf(snap.slices.get(svcKey) ?? [], sp.name, own);
        b.endpoints = r.endpoints;
        if (r.forbidden.length) {
          const list = r.forbidden.slice(0, 5).map((f) => `${f.address} (${f.reason})`).join(', ');
          const more = r.forbidden.length > 5 ? ` and ${r.forbidden.length - 5} more` : '';
          forbiddenNote.set(id, `service ${svcKey}: endpoint addresses no tenant may reach were dropped: ${list}${more}`);
        }
      }
    }
    if (up?.tls?.verify && (up.protocol === 'HTTPS' || up.protocol === 'GRPCS') && !up.tls.caPem) {
      // Asked to verify the backend but without a CA to verify against: fail closed, never unverified.
      b.endpoints = [];
      b.unavailableReason = `${up.tls.caError ?? 'no CA bundle'} (Upstream ${up.key} verifies the backend's certificate)`;
    }
    backends[id] = b;
    memo?.backends.set(id, { inputs, result: b, forbidden: forbiddenNote.get(id), kind: unavailableKind });
    report(b, unavailableKind);
  };
  // Oldest first: a backend's balancing settings are those of the oldest Ingress whose path to it is served.
  for (const ow of owners) {
    if (ow.ing) {
      const ing = ow.ing;
      if (isCanary(ing)) continue;
      const c = claimsOfIngress(ing);
      for (const list of [c.paths, c.defaults]) {
        for (const pc of list) {
          const won = hosts.get(pc.host)?.get(pc.id);
          if (won && won.owner === ow && won.pc === pc && won.backendId) resolve(ow.ref, ing.annotations, ing.namespace, pc.ref, won.backendId, pc.serviceKey);
        }
      }
    } else if (ow.rt) {
      for (const rc of claimsOfRoute(ow.rt)) {
        const won = hosts.get(rc.pc.host)?.get(rc.pc.id);
        if (!won || won.owner !== ow || won.pc !== rc.pc || !won.backendId) continue;
        for (const be of rc.rule.backends) {
          const ref: ServiceBackendRef = { service: be.service, port: { number: be.port } };
          resolve(ow.ref, undefined, ow.ns, ref, backendIdOf(ow.ns, ref));
        }
      }
    }
  }
  if (memo) for (const [id, ow] of backendOwner) if (ow.ref.startsWith('Ingress/')) memo.owners.set(id, ow.ref.slice('Ingress/'.length));
  for (const [mainId, c] of [...canaryOf].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const cid = backendIdOf(c.ing.namespace, c.ref);
    resolve(ingressRef(c.ing.key), c.ing.annotations, c.ing.namespace, c.ref, cid);
    const a = c.ing.annotations;
    const main = backends[mainId];
    if (!main || cid === mainId) continue;
    // A new object (the main backend may be a memoized one, shared with the previous configuration).
    const inputs: unknown[] = [main, a, cid];
    const cached = memo?.backends.get(`canary ${mainId}`);
    if (cached && sameInputs(cached.inputs, inputs)) {
      backends[mainId] = cached.result;
      continue;
    }
    const canary: NonNullable<Backend['canary']> = { backendId: cid, weight: a['canary-weight'] ?? 0, weightTotal: a['canary-weight-total'] ?? 100 };
    if (a['canary-by-header']) canary.header = a['canary-by-header'];
    if (a['canary-by-header-value'] !== undefined) canary.headerValue = a['canary-by-header-value'];
    if (a['canary-by-header-pattern'] !== undefined) canary.headerPattern = a['canary-by-header-pattern'];
    if (a['canary-by-cookie']) canary.cookie = a['canary-by-cookie'];
    backends[mainId] = { ...main, canary };
    memo?.backends.set(`canary ${mainId}`, { inputs, result: backends[mainId], forbidden: undefined, kind: 'BackendNotFound' });
  }

  // ---- consumers (auth plugins look them up by namespace) and the plugins they carry ----------------------------
  const consumers: Record<string, ConsumerSet> = {};
  for (const c of [...snap.consumers.values()].sort((a, b) => (a.key < b.key ? -1 : 1))) {
    const ids: string[] = [];
    for (const n of c.plugins) {
      const r = usePlugin(c.namespace, n);
      if ('id' in r) ids.push(r.id);
      else events.push({ ref: `Consumer/${c.key}`, type: 'Warning', reason: 'PluginNotFound', message: `${r.missing}; this consumer's requests use the route's plugins instead` });
    }
    (consumers[c.namespace] ??= { consumers: [] }).consumers.push({ name: c.name, username: c.username, keys: c.keys, basic: c.basic, plugins: ids });
  }
  // ingress-nginx's default-backend and mirror-target: backends the routes of an Ingress name besides their own.
  // Resolved here, after every path's own backend (whose owner's balancing settings win), before the auth
  // backends (a mirror target that is not a Service is one of those: resolved by the gateway, same address filter).
  const sideOf = new Map<string, { defaultBackendId?: string; mirror?: NonNullable<Route['mirror']> }>();
  for (const ing of served) {
    const a = ing.annotations;
    if ((a['default-backend'] === undefined && a['mirror-target'] === undefined) || isCanary(ing) || closedReason.has(ing.key)) continue;
    sideOf.set(ing.key, sideBackends(ing, ingressRef(ing.key)));
  }
  // external-auth services are backends like any other.
  for (const [id, a] of [...authBackends].sort(([x], [y]) => (x < y ? -1 : 1))) {
    resolve(a.ref, undefined, a.ns, { service: a.service, port: { number: a.port } }, id);
  }
  // auth-url hosts that are not Services: resolved by the gateway like an ExternalName (its address filter).
  for (const [id, e] of [...extAuthBackends].sort(([x], [y]) => (x < y ? -1 : 1))) {
    if (backends[id]) continue;
    backends[id] = e.address !== undefined
      ? { id, endpoints: [{ address: e.address, port: e.port, weight: 1 }], balance: 'round_robin' }
      : { id, endpoints: [], balance: 'round_robin', externalName: e.host as string, externalPort: e.port, ...(e.noClusterIPs ? { noClusterIPs: true as const } : {}) };
  }

  // ---- routes ---------------------------------------------------------------------------------------------------
  const g = snap.global;
  const tuning = fullNginxTuning(g);
  const routes: Record<string, HostRoutes> = {};
  const profiles = new Map<string, Profile>();
  for (const host of hostList) {
    const locs = hosts.get(host) as Map<string, Claim>;
    const tls = tlsHosts.has(host);
    const passed = passthrough.has(host);
    const inputs: unknown[] = [tls, g, o.testHooks, passed];
    for (const c of locs.values()) {
      inputs.push(c.owner.ing ?? c.owner.rt, c.pc, c.backendId, c.closed);
      // Plugins, upstreams, splits and the backends of default-backend / mirror-target are not memoized per host.
      if (c.rr || c.pluginIds.length || (c.owner.ing && sideOf.has(c.owner.ing.key))) inputs.push(NaN);
      else if (c.backendId && upstreamOf.has(c.backendId)) inputs.push(upstreamOf.get(c.backendId));
    }
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
    if (appRoot) inputs.push(NaN);
    const cached = memo?.hosts.get(host);
    if (cached && sameInputs(cached.inputs, inputs)) {
      routes[host] = cached.result;
      for (const k of cached.programmed) status.get(k)!.programmed = true;
      for (const p of cached.profiles) profiles.set(p.name, p);
      continue;
    }
    const rules: (RouteRule & { prio: number; conds: number; order: number })[] = [];
    const programmed: string[] = [];
    const used: Profile[] = [];
    let order = 0;
    for (const c of locs.values()) {
      const up = c.backendId ? upstreamOf.get(c.backendId) : undefined;
      let route: Route;
      let bodySize: string | undefined;
      let retries: { attempts: number; on: string[] } | undefined = up?.retries;
      let fromAnnotations: Partial<Omit<Profile, 'name'>> = {};
      if (c.owner.ing) {
        const a = c.owner.ing.annotations;
        route = { source: c.pc.source, backendId: c.backendId, sslRedirect: a['force-ssl-redirect'] === true || (tls && (a['ssl-redirect'] ?? g.sslRedirect)) };
        bodySize = a['proxy-body-size'] !== undefined && a['proxy-body-size'] !== g.proxyBodySize ? a['proxy-body-size'] : undefined;
        const t = { connect: a['proxy-connect-timeout'], send: a['proxy-send-timeout'], read: a['proxy-read-timeout'] };
        const tt = fullTimeouts(up?.timeouts, g) ?? fullTimeouts(t, g);
        if (tt) route.timeouts = tt;
        fromAnnotations = annotationProfileSettings(a, tuning, !!retries);
        if (!c.closed) {
          const side = sideOf.get(c.owner.ing.key);
          const codes = a['custom-http-errors'] ?? g.customHttpErrors;
          if (codes?.length) {
            // custom-http-errors (the annotation, else the ConfigMap's): nginx's error_page for these codes, and
            // proxy_intercept_errors unless disable-proxy-intercept-errors (then only nginx's own errors are caught).
            fromAnnotations.errorCodes = codes;
            if (a['disable-proxy-intercept-errors'] !== true) fromAnnotations.interceptErrors = true;
            const p = c.pc.ref.port;
            route.errorPage = { namespace: c.owner.ing.namespace, ingress: c.owner.ing.name, service: c.pc.ref.service, port: 'number' in p ? String(p.number) : p.name };
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
      } else {
        const rule = c.rr!.rule;
        route = { source: c.pc.source, backendId: c.backendId, sslRedirect: tls && g.sslRedirect };
        const tt = fullTimeouts(rule.timeouts, g) ?? fullTimeouts(up?.timeouts, g);
        if (tt) route.timeouts = tt;
        if (rule.retries) retries = rule.retries;
        if (c.backendId && rule.backends.length > 1) {
          route.split = rule.backends.map((be) => ({ backendId: backendIdOf(c.owner.ns, { service: be.service, port: { number: be.port } }), weight: be.weight }));
        }
        if (!rule.websocket) route.websocket = false;
        if (!c.rr!.hasBackend && !c.pluginIds.length) route.action = 'unavailable';
      }
      if (c.closed) {
        route.action = 'unavailable';
        route.closedReason = c.closed;
      }
      if (c.pluginIds.length && !c.closed) route.plugins = c.pluginIds;
      const ids = route.split ? route.split.map((x) => x.backendId) : c.backendId ? [c.backendId] : [];
      if (ids.some((id) => backends[id]?.passiveHealth)) route.observe = true;
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
      const profile = profileOf({
        ...fromAnnotations,
        proxyBodySize: bodySize,
        testInvalidDirective: o.testHooks && c.owner.ing?.testInvalidDirective ? true : undefined,
        nextUpstream: retries ? (retries.on.length ? retries.on.join(' ') : 'error timeout') : fromAnnotations.nextUpstream,
        nextUpstreamTries: retries ? retries.attempts + 1 : fromAnnotations.nextUpstreamTries,
        backendProtocol: proto,
        sslServerName: overTls ? (up?.tls?.serverName ?? `${upSvc}.${upNs}.svc`) : undefined,
        trustedCa: overTls && up?.tls?.verify && up.tls.caPem ? up.tls.caPem : undefined,
        ...fromProxySsl,
      });
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
      const rule: RouteRule & { prio: number; conds: number; order: number } = { path, match, route, prio: c.rr?.rule.priority ?? 0, conds: condCount(c.rr?.m.conditions), order: order++ };
      if (c.rr?.m.conditions) rule.conditions = c.rr.m.conditions;
      // A plain ImplementationSpecific path written with a trailing slash is nginx's `location /foo/` in
      // ingress-nginx: "/foo" itself is answered 301 to "/foo/" by nginx (proxy_pass locations), unless an exact
      // "/foo" exists. (Only such a path keeps its slash in the claim: a Prefix "/foo/" matches "/foo", per spec.)
      if (c.owner.ing && match === 'prefix' && path.length > 1 && path.endsWith('/')) {
        rule.slashRedirect = true;
        if (c.owner.ing.annotations['use-port-in-redirects'] === true) rule.portInRedirect = true;
      }
      if (route.sslRedirect && c.owner.ing?.annotations['preserve-trailing-slash'] === true) route.preserveTrailingSlash = true;
      rules.push(rule);
    }
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
    memo?.hosts.set(host, { inputs, result: routes[host], programmed, profiles: used });
  }

  // ---- from-to-www-redirect (ingress-nginx's redirect servers) -----------------------------------------------------
  // For a host whose Ingress sets it, the other name (www.<host>, or <host> without "www.") gets a server that
  // answers every request 308 to <scheme>://<host><request URI without its last "/">, unless that name has rules of
  // its own (then ingress-nginx skips the redirect). HTTPS for the other name uses the host's certificate only when it
  // covers that name; otherwise the default certificate answers (ingress-nginx logs a warning; Portico says it in a
  // Warning event).
  for (const h of hostList) {
    if (h === '_' || h.startsWith('*.')) continue;
    const owner = [...(hosts.get(h) as Map<string, Claim>).values()].find((c) => c.owner.ing?.annotations['from-to-www-redirect'] === true)?.owner;
    if (!owner?.ing) continue;
    const from = h.startsWith('www.') ? h.slice(4) : `www.${h}`;
    if (hosts.has(from)) {
      events.push({ ref: owner.ref, type: 'Normal', reason: 'RedirectSkipped', message: `from-to-www-redirect: ${from} has rules of its own, so it is not redirected to ${h} (as in ingress-nginx)` });
      continue;
    }
    if (routes[from] || !hostSchema.safeParse(from).success) continue;
    const id = `${ingressPluginBase(owner.ing)}.www-${createHash('sha256').update(h).digest('hex').slice(0, 12)}`;
    plugins[id] ??= { name: `${owner.ing.key} (annotations)`, type: 'redirect', status: 308, host: h, keepQuery: true, requestUri: true, stripTrailingSlash: true };
    routes[from] = { tls: false, rules: [{ path: '/', match: 'prefix', route: { source: owner.ref, backendId: null, sslRedirect: false, plugins: [id] } }] };
    const t = tlsHosts.get(h);
    const cert = certificates[h];
    if (t?.secretKey && cert) {
      const m = snap.secrets.get(t.secretKey);
      if (m?.ok && certCovers(m.hosts, from)) certificates[from] = cert;
      else warn(owner.ref, 'TLSHostMismatch', `from-to-www-redirect: the certificate in ${t.secretKey} does not cover ${from}; HTTPS requests for ${from} get the default certificate (as in ingress-nginx, the certificate must name both hosts)`);
    }
  }

  // ---- server-alias (ingress-nginx): more names for a host's server --------------------------------------------------
  // In ingress-nginx an alias joins the server_name of each host of the Ingress's rules, so it serves everything the
  // host serves (every Ingress on it). Here the alias name gets the host's routes (the same data) and, for HTTPS, the
  // host's certificate when it covers the name. A name with rules of its own, a from-to-www redirect or an earlier
  // alias keeps what it has (ingress-nginx skips such an alias too), said in an AliasSkipped Event.
  for (const ing of served) {
    const aliases = ing.annotations['server-alias'];
    if (!aliases) continue;
    const iref = ingressRef(ing.key);
    const own = [...new Set(ing.rules.map((r) => r.host).filter((h): h is string => !!h && !!routes[h]))];
    for (const h of own) {
      for (const alias of aliases) {
        if (alias === h) continue;
        if (routes[alias]) {
          events.push({ ref: iref, type: 'Warning', reason: 'AliasSkipped', message: `server-alias ${alias} for ${h}: ${hosts.has(alias) ? 'it is a host with rules of its own' : 'the name is already an alias or a redirect of another host'}; it keeps what it serves` });
          continue;
        }
        // An alias is not passed through (only the host is a passthrough server name, as in ingress-nginx).
        const hr = routes[h] as HostRoutes;
        routes[alias] = hr.passthrough ? { tls: hr.tls, rules: hr.rules } : hr;
        const cert = certificates[h];
        const t = tlsHosts.get(h);
        if (t?.secretKey && cert) {
          const m = snap.secrets.get(t.secretKey);
          if (m?.ok && certCovers(m.hosts, alias)) certificates[alias] = cert;
          else warn(iref, 'TLSHostMismatch', `server-alias ${alias}: the certificate in ${t.secretKey} does not cover it; HTTPS requests for ${alias} get the default certificate`);
        }
      }
    }
  }

  for (const ing of served) {
    const iref = ingressRef(ing.key);
    for (const p of ing.problems) warn(iref, 'InvalidConfiguration', p);
    for (const r of annotationRefusals(ing)) warn(iref, r.reason, r.message);
    const closed = closedReason.get(ing.key);
    if (closed) {
      const them = ing.accessControl.length > 1 ? 'these annotations are' : 'the annotation is';
      warn(iref, 'UnsupportedAccessControl', `${closed}; failing closed: every path of this Ingress answers 503 until ${them} supported or removed`);
    }
    const ssl = sslClosed.get(ing.key);
    if (ssl) {
      warn(iref, 'BackendTLSUnavailable', `${ssl}; failing closed: every path of this Ingress answers 503 rather than being proxied without the backend TLS it asks for`);
      if (ing.proxySsl?.missing && ing.proxySsl.secretKey) unresolved(iref, `Secret ${ing.proxySsl.secretKey}`);
    } else if (!ing.proxySsl) {
      const alone = PROXY_SSL_ANNOTATIONS.filter((n) => ing.annotations[n] !== undefined);
      if (alone.length) warn(iref, 'InvalidConfiguration', `annotation ignored: ${alone.map((n) => `${NGINX_PREFIX}${n}`).join(', ')} ${alone.length > 1 ? 'have' : 'has'} no effect without ${NGINX_PREFIX}proxy-ssl-secret (as in ingress-nginx)`);
    }
    const waf = wafClosed.get(ing.key);
    if (waf) warn(iref, 'ModSecurityUnavailable', `${waf}; failing closed: every path of this Ingress answers 503 rather than being served without the ModSecurity it asks for`);
    const msnip = ing.annotations['modsecurity-snippet'];
    if (msnip && 'error' in msnip) warn(iref, 'InvalidSnippet', `annotation ${NGINX_PREFIX}modsecurity-snippet is refused: ${msnip.error}; nothing of this snippet is applied`);
    const ac = new Set(ing.accessControl.map((a) => a.annotation));
    for (const a of ing.unsupportedAnnotations) {
      if (!ac.has(a)) warn(iref, 'UnsupportedAnnotation', `annotation ${a} is not supported by Portico and is ignored`);
    }
  }
  // Paths failing closed for a plugin reason: one Warning per object.
  const closedSeen = new Set<string>();
  for (const locs of hosts.values()) {
    for (const c of locs.values()) {
      // Reasons of the Ingress's own (access control, proxy-ssl-*, ModSecurity) have their Warnings above.
      const own = c.owner.ing ? [closedReason.get(c.owner.ing.key), sslClosed.get(c.owner.ing.key), wafClosed.get(c.owner.ing.key)].filter(Boolean).join('; ') : '';
      if (!c.closed || c.reported || closedSeen.has(c.owner.ref) || c.closed === own) continue;
      closedSeen.add(c.owner.ref);
      warn(c.owner.ref, 'PluginUnavailable', `${c.closed}; failing closed: the paths using it answer 503 until it is fixed`);
    }
  }
  for (const [ref, r] of snap.rejectedCrds) {
    if (ref.startsWith('Route/')) status.set(ref, { served: false, programmed: false, problems: [r.reason] });
  }

  // ---- client certificates: what the handshake asks for, per server name -------------------------------------------
  const clientAuth: Record<string, ClientAuth> = {};
  for (const [h, w] of hostCa) clientAuth[h] = { id: w.spec.caId, ca: w.spec.ca, depth: w.spec.depth, source: `${w.spec.secret} (${describe(w.owner.ref)})` };
  // The handshake looks a server name up as the router looks up a host (exact, one-label "*." wildcard, "_") but
  // without knowing which hosts have routes: a host with routes of its own, below a wildcard or "_" that asks, gets an
  // explicit "ask for nothing" (wildcards before exact hosts, so an exact host below an "off" wildcard needs none).
  if (hostCa.has('_') || [...hostCa.keys()].some((h) => h.startsWith('*.'))) {
    for (const h of Object.keys(routes).sort(hostOrder).reverse()) {
      if (h === '_' || clientAuth[h]) continue;
      const dot = h.indexOf('.');
      const wild = !h.startsWith('*.') && dot > 0 ? `*${h.slice(dot)}` : undefined;
      const next = (wild && clientAuth[wild]) || clientAuth._;
      if (next && !('off' in next)) clientAuth[h] = { off: true };
    }
  }

  const global: GlobalSettings = {
    workerProcesses: g.workerProcesses,
    workerShutdownTimeoutSeconds: g.workerShutdownTimeoutSeconds,
    keepAliveSeconds: g.keepAliveSeconds,
    keepAliveRequests: g.keepAliveRequests,
    proxyBodySize: g.proxyBodySize,
    proxyConnectTimeoutSeconds: g.proxyConnectTimeoutSeconds,
    proxyReadTimeoutSeconds: g.proxyReadTimeoutSeconds,
    proxySendTimeoutSeconds: g.proxySendTimeoutSeconds,
    useForwardedHeaders: g.useForwardedHeaders,
    logFormatUpstream: g.logFormatUpstream,
    sslRedirect: g.sslRedirect,
    hsts: g.hsts,
    hstsMaxAgeSeconds: g.hstsMaxAgeSeconds,
    hstsIncludeSubdomains: g.hstsIncludeSubdomains,
    hstsPreload: g.hstsPreload,
    luaSharedDicts: g.luaSharedDicts,
    proxyRealIpCidr: g.proxyRealIpCidr,
    ...blocksOf(g),
    ...nginxTuningOf(g),
    listen: o.listen,
    ...(o.loopId ? { loopId: o.loopId } : {}),
  };
  // Passthrough wildcards: the exact names under them that Portico serves itself stay terminated (an exact host wins).
  const terminated: string[] = [];
  const wildcards = [...passthrough.keys()].filter((h) => h.startsWith('*.'));
  if (wildcards.length) {
    for (const h of Object.keys(routes)) {
      if (h !== '_' && !h.startsWith('*.') && !passthrough.has(h) && wildcards.some((w) => wildcardCovers(w, h))) terminated.push(h);
    }
  }
  const def: TlsMaterial | null = snap.defaultCertificate;
  return {
    config: {
      structure: {
        global,
        profiles: [...profiles.values()].sort((a, b) => (a.name < b.name ? -1 : 1)),
        ...(o.sslPassthrough ? { passthrough: { hosts: [...passthrough.values()].sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0)), terminated: terminated.sort() } } : {}),
      },
      data: {
        routes,
        // In a deterministic order already (hosts sorted, claims by age, canaries sorted); not re-sorted, which
        // would cost more than everything else at 10k backends.
        backends,
        certificates,
        defaultCertificate: def && def.ok ? (memo?.certificates.get(def) ?? { cert: def.cert, key: def.privateKey, source: def.key, notAfter: def.notAfter }) : null,
        plugins,
        consumers,
        ...(Object.keys(clientAuth).length ? { clientAuth } : {}),
      },
    },
    status,
    events,
  };
}
