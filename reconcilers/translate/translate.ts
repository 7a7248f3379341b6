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
//   - an Exact path ending in "/" never answers the path without the slash (see slashCompanions).
import { forbiddenAddressReason, parseIp } from './addresses.ts';
import type { Backend, Certificate, Endpoint, GatewayConfig, GlobalSettings, Location, PathMatch, Server } from '../gateway/config-types.ts';
import type { ModelSnapshot } from '../model/model.ts';
import type { IngressClassInfo, NormalizedIngress, NormalizedSlice, ServiceBackendRef, TlsMaterial } from '../model/types.ts';

export interface TranslateOptions {
  controllerClass: string;
  /** Class name accepted in the legacy kubernetes.io/ingress.class annotation. */
  ingressClassName: string;
  watchWithoutClass: boolean;
  listen: GlobalSettings['listen'];
  /** Honour the portico.dev/test-invalid-directive annotation (tests of fault isolation only). */
  testHooks?: boolean;
  /** The node's and the pod's own listener addresses: never used as endpoints (any spelling of an IP address). */
  ownAddresses?: readonly string[];
}

export interface TranslateEvent {
  /** "namespace/name" of the Ingress the event is about. */
  objectKey: string;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface IngressStatus {
  served: boolean;
  /** At least one of its paths (or its default backend) is live in the configuration. */
  programmed: boolean;
  problems: string[];
}

export interface TranslateResult {
  config: GatewayConfig;
  ingressStatus: Map<string, IngressStatus>;
  events: TranslateEvent[];
}

/** An endpoint address refused because no tenant may make Portico proxy to it. */
export interface ForbiddenEndpoint {
  address: string;
  reason: string;
}

/**
 * Endpoints of one Service port that may receive new requests: ready and not terminating, from every slice whose
 * port of that name is TCP, de-duplicated and sorted — minus addresses no tenant may reach (loopback, link-local,
 * unspecified, multicast, Portico's own `own` addresses), which are returned in `forbidden`. Shared by the full
 * translation and the gateway's endpoint-only fast path, so both give identical results.
 */
export function endpointsOf(
  slices: readonly NormalizedSlice[],
  servicePortName: string,
  own?: ReadonlySet<string>,
): { endpoints: Endpoint[]; forbidden: ForbiddenEndpoint[] } {
  const seen = new Set<string>();
  const eps: Endpoint[] = [];
  const forbidden: ForbiddenEndpoint[] = [];
  const refused = new Set<string>();
  for (const slice of slices) {
    const port = slice.ports.find((p) => p.name === servicePortName && p.protocol === 'TCP');
    if (!port) continue;
    for (const e of slice.endpoints) {
      if (!e.ready || e.terminating) continue;
      const k = `${e.address}:${port.port}`;
      if (seen.has(k)) continue;
      seen.add(k);
      const why = forbiddenAddressReason(e.address, own);
      if (why) {
        if (!refused.has(e.address)) forbidden.push({ address: e.address, reason: why });
        refused.add(e.address);
        continue;
      }
      eps.push({ address: e.address, port: port.port, weight: 1 });
    }
  }
  eps.sort((x, y) => (x.address < y.address ? -1 : x.address > y.address ? 1 : x.port - y.port));
  forbidden.sort((x, y) => (x.address < y.address ? -1 : x.address > y.address ? 1 : 0));
  return { endpoints: eps, forbidden };
}

/** The endpoints part of endpointsOf (forbidden addresses left out). */
export function endpointsFor(slices: readonly NormalizedSlice[], servicePortName: string, own?: ReadonlySet<string>): Endpoint[] {
  return endpointsOf(slices, servicePortName, own).endpoints;
}

export function isIngressServed(
  ing: Pick<NormalizedIngress, 'className' | 'classFromAnnotation'>,
  classes: ReadonlyMap<string, IngressClassInfo>,
  o: Pick<TranslateOptions, 'controllerClass' | 'ingressClassName' | 'watchWithoutClass'>,
): boolean {
  const mine = [...classes.values()].filter((c) => c.controller === o.controllerClass);
  if (ing.className) {
    if (mine.some((c) => c.name === ing.className)) return true;
    return ing.classFromAnnotation && ing.className === o.ingressClassName;
  }
  return o.watchWithoutClass || mine.some((c) => c.isDefault);
}

const byAge = (a: NormalizedIngress, b: NormalizedIngress) =>
  a.creationTimestamp < b.creationTimestamp ? -1 : a.creationTimestamp > b.creationTimestamp ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0;

const MATCH_LABEL: Record<PathMatch, string> = { exact: 'Exact', prefix: 'Prefix', regex: 'regex' };

function backendIdOf(namespace: string, ref: ServiceBackendRef): string {
  const port = 'number' in ref.port ? String(ref.port.number) : ref.port.name;
  return `${namespace}_${ref.service}_${port}`;
}

function hostOrder(a: string, b: string): number {
  const rank = (h: string) => (h === '_' ? 2 : h.startsWith('*.') ? 1 : 0);
  return rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * nginx answers a request for "/foo" with a 301 to "/foo/" when a location named "/foo/" proxies (its
 * auto-redirect), so an Exact "/foo/" would also "match" "/foo" — the Ingress spec says it must not. For every
 * Exact path ending in "/" whose slash-less form no rule claims, add an exact location for the slash-less path
 * serving what that request gets without the redirect: the longest Prefix location matching it (element-wise), or
 * 404. Repeated for the companion itself when it also ends in "/" ("/a//" → "/a/" → "/a").
 *
 * Limitation: as an exact location the companion takes "/foo" before regex locations are tried; nginx would try
 * them first. The renderer may render companions (slashCompanionOf set) as a plain prefix location "/foo" instead,
 * which makes nginx try the regex locations first and is otherwise equivalent.
 */
export function slashCompanions(locations: readonly Location[]): Location[] {
  const claimed = new Set(locations.filter((l) => l.match !== 'regex').map((l) => l.path));
  const prefixes = locations.filter((l) => l.match === 'prefix');
  const out: Location[] = [];
  const queue = locations.filter((l) => l.match === 'exact' && l.path.length > 1 && l.path.endsWith('/'));
  for (let l = queue.shift(); l; l = queue.shift()) {
    const p = l.path.slice(0, -1);
    if (p === '' || claimed.has(p)) continue;
    claimed.add(p);
    let target: Location | undefined;
    for (const x of prefixes) {
      const matches = x.path === '/' || p === x.path || p.startsWith(`${x.path}/`);
      if (matches && (!target || x.path.length > target.path.length)) target = x;
    }
    const companion: Location = target
      ? { ...target, path: p, match: 'exact', slashCompanionOf: l.path }
      : { path: p, match: 'exact', backendId: null, source: l.source, sslRedirect: false, notFound: true, slashCompanionOf: l.path };
    out.push(companion);
    if (p.length > 1 && p.endsWith('/')) queue.push(companion);
  }
  return out;
}

function locationOrder(a: Location, b: Location): number {
  const rank = (l: Location) => (l.match === 'exact' ? 0 : l.match === 'prefix' ? 1 : 2);
  return rank(a) - rank(b) || (a.match === 'exact' ? 0 : b.path.length - a.path.length) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}

export function translate(snap: ModelSnapshot, o: TranslateOptions): TranslateResult {
  const events: TranslateEvent[] = [];
  const status = new Map<string, IngressStatus>();
  const warn = (objectKey: string, reason: string, message: string) => {
    events.push({ objectKey, type: 'Warning', reason, message });
    status.get(objectKey)?.problems.push(message);
  };

  for (const [key, r] of snap.rejected) {
    status.set(key, { served: false, programmed: false, problems: [r.reason] });
  }
  const served: NormalizedIngress[] = [];
  for (const ing of snap.ingresses.values()) {
    const s = isIngressServed(ing, snap.classes, o);
    status.set(ing.key, { served: s, programmed: false, problems: [] });
    if (s) served.push(ing);
  }
  served.sort(byAge);
  const own = new Set(o.ownAddresses ?? []);
  // Access control Portico cannot apply: the Ingress fails closed (its locations get no backend → 503).
  const closedReason = new Map<string, string>();
  for (const ing of served) {
    if (!ing.accessControl.length) continue;
    const what = ing.accessControl.map((a) => `${a.annotation} (${a.kind})`).join(', ');
    closedReason.set(ing.key, `access control requested by ${what} cannot be applied by Portico`);
  }
  for (const [key, r] of snap.rejected) {
    events.push({ objectKey: key, type: 'Warning', reason: 'Rejected', message: r.reason });
  }

  // ---- locations: host → (match|path) → claim -----------------------------------------------------------------
  interface Claim {
    loc: Location;
    ing: NormalizedIngress;
    ref: ServiceBackendRef;
  }
  const hosts = new Map<string, Map<string, Claim>>();
  const claim = (host: string, path: string, match: PathMatch, ing: NormalizedIngress, ref: ServiceBackendRef, isDefault: boolean) => {
    let locs = hosts.get(host);
    if (!locs) hosts.set(host, (locs = new Map()));
    const id = `${match} ${path}`;
    const prev = locs.get(id);
    if (prev) {
      if (prev.ing.key !== ing.key && !isDefault) {
        warn(
          ing.key,
          'Conflict',
          `host ${host === '_' ? '(any)' : host} path ${path} (${MATCH_LABEL[match]}) is already served by Ingress ${prev.ing.key}, which is older; this path of ${ing.key} is ignored`,
        );
      }
      return;
    }
    const closed = closedReason.get(ing.key);
    const loc: Location = { path, match, backendId: closed ? null : backendIdOf(ing.namespace, ref), source: ing.key, sslRedirect: false };
    if (closed) loc.closedReason = closed;
    locs.set(id, { ing, ref, loc });
  };

  const isCanary = (i: NormalizedIngress) => i.annotations.canary === true;
  for (const ing of served) {
    if (isCanary(ing)) continue;
    for (const rule of ing.rules) for (const p of rule.paths) claim(rule.host ?? '_', p.path, p.match, ing, p.backend, false);
  }
  // Default backends fill "/" where no rule claimed it (oldest Ingress first).
  for (const ing of served) {
    if (!ing.defaultBackend || isCanary(ing)) continue;
    const ownHosts = new Set(ing.rules.map((r) => r.host ?? '_'));
    ownHosts.add('_');
    for (const h of [...ownHosts].sort(hostOrder)) claim(h, '/', 'prefix', ing, ing.defaultBackend, true);
  }

  // ---- canaries: attach to the main Ingress's location (ingress-nginx semantics) -----------------------------
  const canaryOf = new Map<string, { ing: NormalizedIngress; ref: ServiceBackendRef }>(); // main backend id → canary
  for (const ing of served) {
    if (!isCanary(ing)) continue;
    let attached = false;
    for (const rule of ing.rules) {
      for (const p of rule.paths) {
        const host = rule.host ?? '_';
        const main = hosts.get(host)?.get(`${p.match} ${p.path}`);
        if (!main) {
          warn(ing.key, 'CanaryWithoutMain', `canary path ${p.path} on ${host === '_' ? '(any host)' : host} has no main Ingress serving it; ignored`);
          continue;
        }
        // A canary whose own access control cannot be applied gets no traffic; a main that fails closed
        // answers 503 for every request, so there is nothing to split.
        if (closedReason.has(ing.key)) continue;
        const mainId = main.loc.backendId;
        if (!mainId) {
          warn(ing.key, 'CanaryWithoutMain', `canary path ${p.path} on ${host === '_' ? '(any host)' : host}: main Ingress ${main.ing.key} fails closed (unsupported access control); canary not attached`);
          continue;
        }
        const prev = canaryOf.get(mainId);
        if (prev && prev.ing.key !== ing.key) {
          warn(ing.key, 'Conflict', `backend ${mainId} already has canary Ingress ${prev.ing.key} (older); this canary is ignored for it`);
          continue;
        }
        canaryOf.set(mainId, { ing, ref: p.backend });
        attached = true;
      }
    }
    if (attached) status.get(ing.key)!.programmed = true;
  }

  // ---- TLS ------------------------------------------------------------------------------------------------------
  const tlsHosts = new Map<string, { ing: NormalizedIngress; secretKey: string | null }>();
  for (const ing of served) {
    for (const t of ing.tls) {
      const secretKey = t.secretName ? `${ing.namespace}/${t.secretName}` : null;
      for (const h of t.hosts) {
        const prev = tlsHosts.get(h);
        if (!prev) tlsHosts.set(h, { ing, secretKey });
        else if (prev.ing.key !== ing.key && prev.secretKey !== secretKey) {
          warn(ing.key, 'TLSConflict', `TLS for host ${h} is already configured by Ingress ${prev.ing.key} (older, secret ${prev.secretKey ?? 'default'}); this TLS section of ${ing.key} is ignored for ${h}`);
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
      warn(t.ing.key, 'TLSSecretNotFound', `TLS secret ${t.secretKey} for host ${h} was not found (or is not a kubernetes.io/tls Secret); serving the default certificate`);
    } else if (!m.ok) {
      warn(t.ing.key, 'TLSSecretInvalid', `TLS secret ${t.secretKey} for host ${h} is invalid: ${m.error}; serving ${certificates[h] ? 'the previous' : 'the default'} certificate`);
    } else {
      if (m.hosts.length && !m.hosts.some((n) => n === h || (n.startsWith('*.') && h.endsWith(n.slice(1)) && !h.slice(0, -n.length + 1).includes('.')))) {
        events.push({ objectKey: t.ing.key, type: 'Warning', reason: 'TLSHostMismatch', message: `certificate in ${t.secretKey} does not cover host ${h} (SANs: ${m.hosts.slice(0, 5).join(', ')})` });
      }
      certificates[h] = { cert: m.cert, key: m.privateKey, source: m.key, notAfter: m.notAfter };
    }
  }

  // ---- backends -------------------------------------------------------------------------------------------------
  const backends: Record<string, Backend> = {};
  const backendOwner = new Map<string, NormalizedIngress>();
  const reported = new Set<string>();
  /** Backend id → the Warning about endpoint addresses refused for it (given to every Ingress using it). */
  const forbiddenNote = new Map<string, string>();
  const noteForbidden = (ing: NormalizedIngress, id: string) => {
    const note = forbiddenNote.get(id);
    if (!note || reported.has(`forbidden ${ing.key} ${id}`)) return;
    reported.add(`forbidden ${ing.key} ${id}`);
    warn(ing.key, 'ForbiddenEndpoint', note);
  };
  const LB_KEYS = ['load-balance', 'upstream-hash-by', 'affinity', 'affinity-mode', 'session-cookie-name', 'session-cookie-max-age'];
  const resolve = (ing: NormalizedIngress, ref: ServiceBackendRef, id: string): void => {
    const owner = backendOwner.get(id);
    if (owner) {
      const differs = LB_KEYS.some((k) => (ing.annotations as Record<string, unknown>)[k] !== (owner.annotations as Record<string, unknown>)[k]);
      if (differs && owner.key !== ing.key && !reported.has(`lb ${ing.key} ${id}`)) {
        reported.add(`lb ${ing.key} ${id}`);
        warn(ing.key, 'BackendSettingsConflict', `balancing annotations for service backend ${id} differ from Ingress ${owner.key}, which is older and whose settings apply (balancing is per Service port)`);
      }
      noteForbidden(ing, id);
      return;
    }
    backendOwner.set(id, ing);
    const svcKey = `${ing.namespace}/${ref.service}`;
    const ann = ing.annotations;
    const b: Backend = { id, endpoints: [], balance: ann['load-balance'] ?? snap.global.loadBalance };
    if (ann.affinity === 'cookie') {
      b.balance = 'cookie';
      b.cookie = { name: ann['session-cookie-name'] ?? 'INGRESSCOOKIE', mode: ann['affinity-mode'] ?? 'balanced' };
      if (ann['session-cookie-max-age'] !== undefined) b.cookie.maxAgeSeconds = ann['session-cookie-max-age'];
    } else if (ann['upstream-hash-by']) {
      b.balance = 'chash';
      b.hashBy = ann['upstream-hash-by'];
    }
    const svc = snap.services.get(svcKey);
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
        const literal = svc.externalName && parseIp(svc.externalName) ? forbiddenAddressReason(svc.externalName, own) : null;
        if (!svc.externalName) b.unavailableReason = `ExternalName service ${svcKey} has no valid externalName${dropped}`;
        else if (literal) {
          delete b.externalName;
          unavailableKind = 'ForbiddenEndpoint';
          b.unavailableReason = `ExternalName service ${svcKey} points at ${svc.externalName}, ${literal}, which Portico never proxies to`;
        }
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
    backends[id] = b;
    noteForbidden(ing, id);
    if (b.unavailableReason && !reported.has(`${ing.key} ${id}`)) {
      reported.add(`${ing.key} ${id}`);
      warn(ing.key, unavailableKind, `${b.unavailableReason}; paths using it answer 503`);
    }
  };
  for (const [, locs] of [...hosts].sort(([a], [b]) => hostOrder(a, b))) {
    for (const c of locs.values()) if (c.loc.backendId) resolve(c.ing, c.ref, c.loc.backendId);
  }
  for (const [mainId, c] of [...canaryOf].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const cid = backendIdOf(c.ing.namespace, c.ref);
    resolve(c.ing, c.ref, cid);
    const a = c.ing.annotations;
    const main = backends[mainId];
    if (!main || cid === mainId) continue;
    main.canary = { backendId: cid, weight: a['canary-weight'] ?? 0, weightTotal: a['canary-weight-total'] ?? 100 };
    if (a['canary-by-header']) main.canary.header = a['canary-by-header'];
    if (a['canary-by-header-value'] !== undefined) main.canary.headerValue = a['canary-by-header-value'];
    if (a['canary-by-header-pattern'] !== undefined) main.canary.headerPattern = a['canary-by-header-pattern'];
    if (a['canary-by-cookie']) main.canary.cookie = a['canary-by-cookie'];
  }

  // ---- servers --------------------------------------------------------------------------------------------------
  const g = snap.global;
  const servers: Server[] = [];
  for (const [host, locs] of [...hosts].sort(([a], [b]) => hostOrder(a, b))) {
    const tls = tlsHosts.has(host);
    const locations = [...locs.values()].map((c) => {
      const a = c.ing.annotations;
      const loc: Location = { ...c.loc, sslRedirect: a['force-ssl-redirect'] === true || (tls && (a['ssl-redirect'] ?? g.sslRedirect)) };
      if (a['proxy-body-size'] !== undefined) loc.proxyBodySize = a['proxy-body-size'];
      if (a['proxy-connect-timeout'] !== undefined) loc.proxyConnectTimeoutSeconds = a['proxy-connect-timeout'];
      if (a['proxy-read-timeout'] !== undefined) loc.proxyReadTimeoutSeconds = a['proxy-read-timeout'];
      if (a['proxy-send-timeout'] !== undefined) loc.proxySendTimeoutSeconds = a['proxy-send-timeout'];
      if (o.testHooks && c.ing.testInvalidDirective) loc.testInvalidDirective = true;
      if (!loc.closedReason) status.get(c.ing.key)!.programmed = true;
      return loc;
    });
    locations.push(...slashCompanions(locations));
    locations.sort(locationOrder);
    servers.push({ host, tls, locations });
  }

  for (const ing of served) {
    for (const p of ing.problems) warn(ing.key, 'InvalidConfiguration', p);
    const closed = closedReason.get(ing.key);
    if (closed) {
      const them = ing.accessControl.length > 1 ? 'these annotations are' : 'the annotation is';
      warn(ing.key, 'UnsupportedAccessControl', `${closed}; failing closed: every path of this Ingress answers 503 until ${them} supported or removed`);
    }
    const ac = new Set(ing.accessControl.map((a) => a.annotation));
    for (const a of ing.unsupportedAnnotations) {
      if (!ac.has(a)) warn(ing.key, 'UnsupportedAnnotation', `annotation ${a} is not supported by Portico and is ignored`);
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
    listen: o.listen,
  };
  const def: TlsMaterial | null = snap.defaultCertificate;
  return {
    config: {
      structure: { global, servers, backendIds: Object.keys(backends).sort(), observeLatency: Object.values(backends).some((b) => b.balance === 'ewma') },
      data: {
        backends: Object.fromEntries(Object.entries(backends).sort(([a], [b]) => (a < b ? -1 : 1))),
        certificates,
        defaultCertificate: def && def.ok ? { cert: def.cert, key: def.privateKey, source: def.key, notAfter: def.notAfter } : null,
      },
    },
    ingressStatus: status,
    events,
  };
}
