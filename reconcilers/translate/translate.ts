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
//     profile shared by every route with the same settings (see profileOf), so nginx.conf does not grow with Ingresses.
import { forbiddenAddressReason, parseIp } from './addresses.ts';
import { createHash } from 'node:crypto';
import type { Backend, Certificate, Endpoint, GatewayConfig, GlobalSettings, HostRoutes, PathMatch, Profile, Route, RouteRule } from '../config/types.ts';
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
  /** Kind-qualified reference of the object the event is about ("Ingress/namespace/name"). */
  ref: string;
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
  /**
   * Set by the incremental translation: the only objects (refs; status, events), hosts (routes, certificates) and
   * backends in which this result can differ from the previous one. Absent: anything may have changed.
   */
  touched?: { objects: ReadonlySet<string>; hosts: ReadonlySet<string>; backends: ReadonlySet<string> };
  /** Per object, keyed by kind-qualified reference ("Ingress/namespace/name"). */
  status: Map<string, IngressStatus>;
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

/**
 * What one translation may reuse from the previous one, so that a change at 10,000 Ingresses costs about what it
 * touches: a host's routes and a backend are rebuilt only when something they are made from is a different
 * object in the model (the model replaces a record when it changes, and keeps it otherwise). Reused results are
 * the previous objects themselves, which also lets the diff skip them by identity. The output is the same with
 * or without a memo (translate.memo.test.ts); nothing may mutate a result that came from it.
 */
export class TranslateMemo {
  readonly hosts = new Map<string, { inputs: unknown[]; result: HostRoutes; programmed: string[]; profiles: Profile[] }>();
  /** Certificates by the model's Secret record: one object per Secret, reused while the Secret is unchanged. */
  readonly certificates = new WeakMap<object, Certificate>();
  /** Backend id → key of the Ingress whose settings it has (the oldest one whose path to it is served). */
  readonly owners = new Map<string, string>();
  readonly backends = new Map<string, { inputs: unknown[]; result: Backend; forbidden: string | undefined; kind: 'BackendNotFound' | 'ForbiddenEndpoint' }>();
}

/** Forgets what the configuration no longer has (the memo must not grow with objects that were deleted). */
export function retainMemo(memo: TranslateMemo, config: GatewayConfig): void {
  const { routes, backends } = config.data;
  for (const h of memo.hosts.keys()) if (!(h in routes)) memo.hosts.delete(h);
  for (const id of memo.backends.keys()) if (!(id in backends) && !(id.startsWith('canary ') && id.slice(7) in backends)) memo.backends.delete(id);
  for (const id of memo.owners.keys()) if (!(id in backends)) memo.owners.delete(id);
}

function sameInputs(a: readonly unknown[] | undefined, b: readonly unknown[]): boolean {
  if (!a || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
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

export const byAge = (a: NormalizedIngress, b: NormalizedIngress): number =>
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

/** Bytes of an nginx size ("1m", "512k", "0"). */
export function sizeBytes(v: string): number {
  const m = /^(\d+)([kKmMgG]?)$/.exec(v);
  if (!m) throw new Error(`invalid size ${v}`);
  const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[(m[2] ?? '').toLowerCase()] ?? 1;
  return Number(m[1]) * unit;
}

/** The profile for nginx-only settings, named by a digest of its content; null when the defaults suffice. */
export function profileOf(settings: Omit<Profile, 'name'>): Profile | null {
  const entries = Object.entries(settings).filter(([, v]) => v !== undefined).sort(([x], [y]) => (x < y ? -1 : 1));
  if (!entries.length) return null;
  const name = `p_${createHash('sha256').update(JSON.stringify(entries)).digest('hex').slice(0, 16)}`;
  return { name, ...Object.fromEntries(entries) };
}

/** Kind-qualified reference of an Ingress ("Ingress/ns/name"): how routes, events and status name their object. */
export const ingressRef = (key: string) => `Ingress/${key}`;
/** "Ingress/ns/name" → "ns/name"; null for a reference to another kind. */
export const ingressKeyOf = (ref: string): string | null => (ref.startsWith('Ingress/') ? ref.slice('Ingress/'.length) : null);

/** One path an Ingress asks for, with every string the translation needs computed once per Ingress record. */
export interface PathClaim {
  host: string;
  /** "<match> <path>": what two claims on one host conflict on. */
  id: string;
  path: string;
  match: PathMatch;
  ref: ServiceBackendRef;
  backendId: string;
  /** "<namespace>/<service>" of the backend. */
  serviceKey: string;
  /** Kind-qualified reference of the claiming object. */
  source: string;
}

/**
 * The paths of one Ingress record (its rules, and its default backend's "/" on its own hosts and on "_"), derived
 * once per record: records are immutable and replaced on change, so this is a pure function of the record.
 */
const claimCache = new WeakMap<NormalizedIngress, { paths: PathClaim[]; defaults: PathClaim[] }>();
export function claimsOfIngress(ing: NormalizedIngress): { paths: PathClaim[]; defaults: PathClaim[] } {
  let c = claimCache.get(ing);
  if (c) return c;
  const source = ingressRef(ing.key);
  const make = (host: string, path: string, match: PathMatch, ref: ServiceBackendRef): PathClaim => ({ host, id: `${match} ${path}`, path, match, ref, backendId: backendIdOf(ing.namespace, ref), serviceKey: `${ing.namespace}/${ref.service}`, source });
  const paths: PathClaim[] = [];
  for (const rule of ing.rules) for (const p of rule.paths) paths.push(make(rule.host ?? '_', p.path, p.match, p.backend));
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

function ruleOrder(a: RouteRule, b: RouteRule): number {
  const rank = (l: RouteRule) => (l.match === 'exact' ? 0 : l.match === 'prefix' ? 1 : 2);
  return rank(a) - rank(b) || (a.match === 'exact' ? 0 : b.path.length - a.path.length) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}

export function translate(snap: ModelSnapshot, o: TranslateOptions, memo?: TranslateMemo): TranslateResult {
  const events: TranslateEvent[] = [];
  const status = new Map<string, IngressStatus>();
  const warn = (key: string, reason: string, message: string) => {
    events.push({ ref: ingressRef(key), type: 'Warning', reason, message });
    status.get(key)?.problems.push(message);
  };

  for (const [key, r] of snap.rejected) {
    status.set(key, { served: false, programmed: false, problems: [r.reason] });
  }
  const served: NormalizedIngress[] = [];
  // Classes are few; resolve "is it served" against them once instead of per Ingress.
  const mine = [...snap.classes.values()].filter((c) => c.controller === o.controllerClass);
  const classes = new Map(mine.map((c) => [c.name, c]));
  for (const ing of snap.ingresses.values()) {
    const s = isIngressServed(ing, classes, o);
    status.set(ing.key, { served: s, programmed: false, problems: [] });
    if (s) served.push(ing);
  }
  served.sort(byAge);
  const own = new Set(o.ownAddresses ?? []);
  const ownKey = [...own].sort().join(',');
  // Access control Portico cannot apply: the Ingress fails closed (its locations get no backend → 503).
  const closedReason = new Map<string, string>();
  for (const ing of served) {
    if (!ing.accessControl.length) continue;
    const what = ing.accessControl.map((a) => `${a.annotation} (${a.kind})`).join(', ');
    closedReason.set(ing.key, `access control requested by ${what} cannot be applied by Portico`);
  }
  for (const [key, r] of snap.rejected) {
    events.push({ ref: ingressRef(key), type: 'Warning', reason: 'Rejected', message: r.reason });
  }

  // ---- paths: host → (match|path) → claim ---------------------------------------------------------------------
  interface Claim {
    pc: PathClaim;
    ing: NormalizedIngress;
    /** Backend id, or null when the Ingress fails closed. */
    backendId: string | null;
    closed: string | undefined;
  }
  const hosts = new Map<string, Map<string, Claim>>();
  const claim = (pc: PathClaim, ing: NormalizedIngress, isDefault: boolean) => {
    let locs = hosts.get(pc.host);
    if (!locs) hosts.set(pc.host, (locs = new Map()));
    const prev = locs.get(pc.id);
    if (prev) {
      if (prev.ing.key !== ing.key && !isDefault) {
        warn(
          ing.key,
          'Conflict',
          `host ${pc.host === '_' ? '(any)' : pc.host} path ${pc.path} (${MATCH_LABEL[pc.match]}) is already served by Ingress ${prev.ing.key}, which is older; this path of ${ing.key} is ignored`,
        );
      }
      return;
    }
    const closed = closedReason.get(ing.key);
    locs.set(pc.id, { pc, ing, backendId: closed ? null : pc.backendId, closed });
  };

  const isCanary = (i: NormalizedIngress) => i.annotations.canary === true;
  for (const ing of served) {
    if (isCanary(ing)) continue;
    for (const pc of claimsOfIngress(ing).paths) claim(pc, ing, false);
  }
  // Default backends fill "/" where no rule claimed it (oldest Ingress first).
  for (const ing of served) {
    if (!ing.defaultBackend || isCanary(ing)) continue;
    for (const pc of claimsOfIngress(ing).defaults) claim(pc, ing, true);
  }

  const hostList = [...hosts.keys()].sort(hostOrder);

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
        const mainId = main.backendId;
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
        events.push({ ref: ingressRef(t.ing.key), type: 'Warning', reason: 'TLSHostMismatch', message: `certificate in ${t.secretKey} does not cover host ${h} (SANs: ${m.hosts.slice(0, 5).join(', ')})` });
      }
      let c = memo?.certificates.get(m);
      if (!c) {
        c = { cert: m.cert, key: m.privateKey, source: m.key, notAfter: m.notAfter };
        memo?.certificates.set(m, c);
      }
      certificates[h] = c;
    }
  }

  // ---- backends -------------------------------------------------------------------------------------------------
  const backends: Record<string, Backend> = {};
  let observeLatency = false;
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
  const resolve = (ing: NormalizedIngress, ref: ServiceBackendRef, id: string, svcKey = `${ing.namespace}/${ref.service}`): void => {
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
    const svcRecord = snap.services.get(svcKey);
    const inputs: unknown[] = [svcRecord, snap.slices.get(svcKey), ing.annotations, snap.global.loadBalance, ownKey];
    const cached = memo?.backends.get(id);
    if (cached && !cached.result.externalName && sameInputs(cached.inputs, inputs)) {
      backends[id] = cached.result;
      if (cached.result.balance === 'ewma') observeLatency = true;
      if (cached.forbidden) forbiddenNote.set(id, cached.forbidden);
      noteForbidden(ing, id);
      if (cached.result.unavailableReason && !reported.has(`${ing.key} ${id}`)) {
        reported.add(`${ing.key} ${id}`);
        warn(ing.key, cached.kind, `${cached.result.unavailableReason}; paths using it answer 503`);
      }
      return;
    }
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
    if (b.balance === 'ewma') observeLatency = true;
    memo?.backends.set(id, { inputs, result: b, forbidden: forbiddenNote.get(id), kind: unavailableKind });
    noteForbidden(ing, id);
    if (b.unavailableReason && !reported.has(`${ing.key} ${id}`)) {
      reported.add(`${ing.key} ${id}`);
      warn(ing.key, unavailableKind, `${b.unavailableReason}; paths using it answer 503`);
    }
  };
  // Oldest Ingress first: a backend's balancing settings are those of the oldest Ingress whose path to it is served.
  for (const ing of served) {
    if (isCanary(ing)) continue;
    const c = claimsOfIngress(ing);
    for (const list of [c.paths, c.defaults]) {
      for (const pc of list) {
        const won = hosts.get(pc.host)?.get(pc.id);
        if (won && won.ing === ing && won.pc === pc && won.backendId) resolve(ing, pc.ref, won.backendId, pc.serviceKey);
      }
    }
  }
  if (memo) for (const [id, ing] of backendOwner) memo.owners.set(id, ing.key);
  for (const [mainId, c] of [...canaryOf].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const cid = backendIdOf(c.ing.namespace, c.ref);
    resolve(c.ing, c.ref, cid);
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

  // ---- routes ---------------------------------------------------------------------------------------------------
  const g = snap.global;
  const routes: Record<string, HostRoutes> = {};
  const profiles = new Map<string, Profile>();
  for (const host of hostList) {
    const locs = hosts.get(host) as Map<string, Claim>;
    const tls = tlsHosts.has(host);
    const inputs: unknown[] = [tls, g, o.testHooks];
    for (const c of locs.values()) inputs.push(c.ing, c.pc, c.backendId, c.closed);
    const cached = memo?.hosts.get(host);
    if (cached && sameInputs(cached.inputs, inputs)) {
      routes[host] = cached.result;
      for (const k of cached.programmed) status.get(k)!.programmed = true;
      for (const p of cached.profiles) profiles.set(p.name, p);
      continue;
    }
    const rules: RouteRule[] = [];
    const programmed: string[] = [];
    const used: Profile[] = [];
    for (const c of locs.values()) {
      const a = c.ing.annotations;
      const route: Route = { source: c.pc.source, backendId: c.backendId, sslRedirect: a['force-ssl-redirect'] === true || (tls && (a['ssl-redirect'] ?? g.sslRedirect)) };
      if (c.closed) {
        route.action = 'unavailable';
        route.closedReason = c.closed;
      }
      const bodySize = a['proxy-body-size'] !== undefined && a['proxy-body-size'] !== g.proxyBodySize ? a['proxy-body-size'] : undefined;
      const profile = profileOf({ proxyBodySize: bodySize, testInvalidDirective: o.testHooks && c.ing.testInvalidDirective ? true : undefined });
      if (profile) {
        profiles.set(profile.name, profile);
        used.push(profile);
        route.profile = profile.name;
        route.maxBodyBytes = sizeBytes(profile.proxyBodySize ?? g.proxyBodySize);
      }
      const t = { connect: a['proxy-connect-timeout'], send: a['proxy-send-timeout'], read: a['proxy-read-timeout'] };
      if (t.connect !== undefined || t.send !== undefined || t.read !== undefined) {
        route.timeouts = { connect: t.connect ?? g.proxyConnectTimeoutSeconds, send: t.send ?? g.proxySendTimeoutSeconds, read: t.read ?? g.proxyReadTimeoutSeconds };
      }
      if (!route.closedReason) {
        status.get(c.ing.key)!.programmed = true;
        programmed.push(c.ing.key);
      }
      rules.push({ path: c.pc.path, match: c.pc.match, route });
    }
    rules.sort(ruleOrder);
    routes[host] = { tls, rules };
    memo?.hosts.set(host, { inputs, result: routes[host], programmed, profiles: used });
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
      structure: {
        global,
        profiles: [...profiles.values()].sort((a, b) => (a.name < b.name ? -1 : 1)),
        observeLatency,
      },
      data: {
        routes,
        // In a deterministic order already (hosts sorted, claims by age, canaries sorted); not re-sorted, which
        // would cost more than everything else at 10k backends.
        backends,
        certificates,
        defaultCertificate: def && def.ok ? (memo?.certificates.get(def) ?? { cert: def.cert, key: def.privateKey, source: def.key, notAfter: def.notAfter }) : null,
      },
    },
    status: new Map([...status].map(([k, st]) => [ingressRef(k), st])),
    events,
  };
}
