// Gateway API semantics, pure: which GatewayClasses and Gateways are Portico's, what each listener is (valid,
// conflicted, its certificates, the pod port nginx serves it on), which routes attach to which listeners with which
// hostnames, and every status condition that follows (GatewayClass, Gateway, listener, route parent). The HTTPRoute
// claim processor (kinds/httproute/processor.ts) turns the attachments into claims; the status writer
// (kinds/gateway/status.ts) writes the conditions. One function of the model snapshot, so both always agree.
//
// Listener isolation: each Gateway port is a pod port of its own (allocated below), and the router keys a Gateway
// port's hosts by that port (listenerHost), so two Gateways, or a Gateway and the Ingresses, never see each other's
// routes. Within a port, a host goes to the listener whose hostname matches it most specifically; a route attached
// to a less specific listener does not serve it (GatewayHTTPListenerIsolation).
import { GATEWAY_GROUP, isTrustBundleRef, type BackendRefN, type FrontendValidationN, type GatewayRecord, type HttpRouteRecord, type LabelSelectorN, type ListenerN, type ListenerSetRecord, type ParentRefN, type StreamRouteKind } from '../../model/gateway-api.ts';
import { recordsOf, type ModelSnapshot } from '../../model/model.ts';
import type { TlsMaterial } from '../../model/types.ts';

export interface Cond {
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}
const ok = (reason: string, message = ''): Cond => ({ status: 'True', reason, message });
const no = (reason: string, message: string): Cond => ({ status: 'False', reason, message });

export interface GatewayApiOptions {
  /** The controllerName of the GatewayClasses Portico serves (--gateway-controller-name). */
  controllerName: string;
  /** Pod ports Portico already uses (its HTTP/HTTPS/status ports, TCP/UDP services): never given to a listener. */
  reservedPorts: readonly number[];
}

export interface RouteKind {
  group: string;
  kind: string;
}

export interface ListenerState {
  name: string;
  port: number;
  protocol: string;
  hostname?: string;
  /** The pod port nginx serves it on (shared by the Gateway's listeners of the same port); absent when not served. */
  podPort?: number;
  supportedKinds: RouteKind[];
  accepted: Cond;
  resolvedRefs: Cond;
  programmed: Cond;
  conflicted: Cond;
  attachedRoutes: number;
  /** Routes may attach (accepted, not conflicted). */
  usable: boolean;
  /** TLS certificate Secrets ("namespace/name") of an HTTPS or TLS Terminate listener, resolved and permitted. */
  certificates: string[];
  /**
   * Client certificates an HTTPS listener asks for (spec.tls.frontend, the per-port validation or the default): the
   * mode and the CA certificates of its usable caCertificateRefs (PEM, one after the other), and where they come from
   * ("namespace/name" of the ConfigMaps). Absent: no validation applies to its port.
   */
  clientValidation?: { mode: FrontendValidationN['mode']; ca: string; sources: string[] };
  spec: ListenerN;
  /** The ListenerSet ("namespace/name") it comes from; absent for the Gateway's own listeners. */
  set?: string;
  /**
   * Its filters (GatewayListenerFilters), judged: what the translation makes of them, in the order written. Absent
   * when it has none. `closed`: why they cannot be applied — every request on the listener is then refused (503).
   */
  filterPlan?: ListenerFilterPlan;
}

/** One listener filter the translation applies: a Plugin object, or an external-auth instance of its own. */
export type ListenerFilterStep =
  | { plugin: { namespace: string; name: string } }
  | {
      auth: {
        namespace: string;
        service: string;
        port: number;
        /** The prefix put before the client's path ("" none). */
        path: string;
        /** Client headers sent (lower-case): authorization and http.allowedHeaders (Host, method and path always). */
        forwardHeaders: string[];
        /** Auth response headers copied onto the request; null = every one but Host/Authority (the API's default). */
        upstreamHeaders: string[] | null;
      };
    };

export interface ListenerFilterPlan {
  steps: ListenerFilterStep[];
  closed?: string;
}

/** What listener filters read besides the Gateway: Plugin objects and Services (inputs of the state). */
interface FilterReader {
  plugin(key: string): { instance?: unknown; error?: string } | undefined;
  service(key: string): { ports: readonly { port: number }[] } | undefined;
}

/**
 * A ListenerSet whose parentRef names a Gateway of Portico's. Accepted: its Gateway is accepted, admits its namespace
 * (allowedListeners) and at least one of its listeners is valid; only then are its listeners part of the Gateway
 * (GatewayState.listeners, after the Gateway's own and those of older ListenerSets).
 */
export interface ListenerSetState {
  key: string;
  generation: number;
  /** The parent Gateway ("namespace/name"). */
  gateway: string;
  accepted: Cond;
  /** Its listeners, in the order written (each with its own conditions and attachedRoutes). */
  listeners: ListenerState[];
}

export interface GatewayState {
  key: string;
  generation: number;
  accepted: Cond;
  /**
   * InsecureFrontendValidationMode: True (ConfigurationChanged) when spec.tls.frontend lets a port accept clients
   * without a valid certificate (AllowInsecureFallback); absent otherwise (the condition is removed, not set False).
   */
  insecureFrontend?: Cond;
  /** The Gateway's ResolvedRefs: its spec.tls.backend client certificate (True when it names none). */
  resolvedRefs: Cond;
  /** That certificate's Secret ("namespace/name"), when it may be used: presented to the backends Portico speaks TLS to. */
  backendClientCertificate?: string;
  /**
   * Its own listeners first (spec order), then those of its accepted ListenerSets (oldest set first, then by
   * "namespace/name"; each set's in its order): what shares its ports. Its own are those without `set`.
   */
  listeners: ListenerState[];
  /** How many ListenerSets are accepted as its (status.attachedListenerSets). */
  attachedListenerSets: number;
}

export interface Attachment {
  gateway: string;
  listener: ListenerState;
  /** The hosts the route serves on that listener ("_" = any host). */
  hosts: string[];
}

export interface ParentState {
  ref: ParentRefN;
  accepted: Cond;
  resolvedRefs: Cond;
  attached: Attachment[];
}

export interface GatewayApiState {
  /** GatewayClasses whose controllerName is Portico's, by name. */
  classes: Map<string, { generation: number; accepted: Cond }>;
  gateways: Map<string, GatewayState>;
  /** ListenerSets whose parentRef names one of those Gateways, by "namespace/name". */
  listenerSets: Map<string, ListenerSetState>;
  /**
   * Per HTTPRoute ("namespace/name") and GRPCRoute ("GRPCRoute/namespace/name"): its parents that are Portico's
   * Gateways (others' parents are not Portico's to report).
   */
  routes: Map<string, ParentState[]>;
  /**
   * Every pod port nginx listens on for Gateways, with whether it terminates TLS, and the hostnames of its listeners
   * ("" for one without): the router looks for a request's routes within the listener its name belongs to, and on
   * TLS ports answers 421 when the TLS server name and the Host header pick different listeners
   * (GatewayHTTPSListenerDetectMisdirectedRequests).
   */
  ports: { port: number; ssl: boolean; hostnames?: string[] }[];
  /** Per TCPRoute, UDPRoute and TLSRoute ("Kind/namespace/name"): its parents that are Portico's Gateways. */
  streamRoutes: Map<string, ParentState[]>;
  /** The pod ports of TCP, UDP and TLS listeners, with the routes attached to them, oldest first. */
  streams: StreamPortState[];
}

/** A backendRef of a Layer-4 route, and whether traffic may go to it (its share of connections fails otherwise). */
export interface StreamBackendState {
  ref: BackendRefN;
  ok: boolean;
}

/** One pod port of a Gateway's TCP, UDP or TLS listeners (nginx's stream section serves it). */
export interface StreamPortState {
  port: number;
  protocol: 'TCP' | 'UDP' | 'TLS';
  gateway: string;
  /**
   * Attached routes, oldest first: TCP/UDP serve the oldest alone; TLS gives each server name to its oldest route.
   * `listener`: the one it is attached to there (a TLS port may have Passthrough and Terminate listeners: Mixed).
   */
  routes: { route: string; hosts: string[]; hostnames: readonly string[]; backends: StreamBackendState[]; listener: ListenerState }[];
}

/** Whether a TLS listener ends TLS itself (tls.mode Terminate, the API's default) rather than passing it through. */
export function terminatesTls(l: Pick<ListenerState, 'protocol' | 'spec'>): boolean {
  return l.protocol === 'TLS' && l.spec.tls?.mode !== 'Passthrough';
}

const EMPTY: GatewayApiState = { classes: new Map(), gateways: new Map(), listenerSets: new Map(), routes: new Map(), ports: [], streamRoutes: new Map(), streams: [] };

/** The router's key of a Gateway port's host: the pod port, "/", the host ("_" for any). */
export function listenerHost(podPort: number, host: string): string {
  return `${podPort}/${host}`;
}

/**
 * The router's key of a route's rules on a Gateway port's host: the host's key, and how the route's own hostnames
 * match it (Gateway API's precedence across routes: the router tries the routes naming the host first, then those
 * whose wildcard covers it, most specific first, then those without hostnames — router.lua match_listener):
 * nothing when a hostname of the route is the host itself (or the host is "_"), "#<wildcard>" for the most specific
 * wildcard hostname of the route covering it, "#" for a route without hostnames on a listener with one.
 */
export function routeHostKey(podPort: number, host: string, routeHostnames: readonly string[]): string {
  const key = listenerHost(podPort, host);
  if (host === '_' || routeHostnames.includes(host)) return key;
  if (!routeHostnames.length) return `${key}#`;
  let best = '';
  for (const w of routeHostnames) if (w.startsWith('*.') && covers(w, host) && w.length > best.length) best = w;
  return best ? `${key}#${best}` : key;
}

export const HTTP_KINDS: readonly RouteKind[] = [
  { group: GATEWAY_GROUP, kind: 'HTTPRoute' },
  { group: GATEWAY_GROUP, kind: 'GRPCRoute' },
];
const PROTOCOL_KINDS: Record<string, readonly RouteKind[]> = {
  HTTP: HTTP_KINDS,
  HTTPS: HTTP_KINDS,
  TCP: [{ group: GATEWAY_GROUP, kind: 'TCPRoute' }],
  UDP: [{ group: GATEWAY_GROUP, kind: 'UDPRoute' }],
  TLS: [{ group: GATEWAY_GROUP, kind: 'TLSRoute' }],
};
/** The listener protocols nginx's stream section serves, and the Layer-4 route kinds that attach to them. */
const STREAM_PROTOCOLS = new Set(['TCP', 'UDP', 'TLS']);
export const STREAM_KINDS: readonly StreamRouteKind[] = [...STREAM_PROTOCOLS].map((p) => PROTOCOL_KINDS[p]![0]!.kind as StreamRouteKind);
/** Every route kind a listener may take (HTTPRoute, GRPCRoute, TCPRoute, UDPRoute, TLSRoute). */
export const ROUTE_KINDS: ReadonlySet<string> = new Set(Object.values(PROTOCOL_KINDS).flatMap((ks) => ks.map((k) => k.kind)));
/** The route kinds of HTTP and HTTPS listeners (HTTPRoute, GRPCRoute): served by the router. */
const HTTP_ROUTE_KINDS = HTTP_KINDS.map((k) => k.kind as 'HTTPRoute' | 'GRPCRoute');

/**
 * Gateway ports (pod ports) one namespace's objects may open together: its Gateways' ports, and the ports its
 * ListenerSets add to a Gateway (a port a ListenerSet opens counts for the ListenerSet's namespace).
 */
export const MAX_PORTS_PER_NAMESPACE = 32;

/**
 * Listeners a Gateway takes from ListenerSets, all together (those after are not accepted, TooManyListeners): each
 * is a host of a port that every route attaching there is compared with, so their number is bounded as routes are.
 */
export const MAX_SET_LISTENERS_PER_GATEWAY = 1024;

/** First pod port given to Gateway listeners, and how many there are. */
export const GATEWAY_PORT_BASE = 20000;
export const GATEWAY_PORT_COUNT = 10000;

/**
 * What the last state was made from, so that the next snapshot's state can be had by updating it when only
 * HTTPRoutes changed. Records are compared by identity: the model replaces a record when it changes and keeps the
 * same object otherwise (the translation's memo relies on this too).
 */
interface Basis {
  o: GatewayApiOptions;
  /** The snapshot it is the state of (its revision, its CR views): asked again, the state is returned as it is. */
  revision: number;
  crds: object;
  routesView: ReadonlyMap<string, HttpRouteRecord>;
  /** The records the Gateway-level part was made from (copies of the model's maps). */
  classes: Map<string, object>;
  gateways: Map<string, object>;
  listenerSets: Map<string, object>;
  grants: Map<string, object>;
  namespaces: Map<string, object>;
  /** The Secrets the listeners read (certificateRefs), as read. */
  secrets: Map<string, unknown>;
  /** The Plugin records ("Plugin/ns/name") and Services ("Service/ns/name") listener filters read, as read. */
  filterReads: Map<string, unknown>;
  granted: Granted;
  /** Per HTTPRoute: its record, the listeners that count it (attachedRoutes), the Services its backendRefs were checked against. */
  routes: Map<string, HttpRouteRecord>;
  counted: Map<string, ListenerState[]>;
  checked: Map<string, string[]>;
  /** Service key → whether it existed when checked, and how many routes checked it. */
  services: Map<string, { present: boolean; users: number }>;
  /**
   * GRPCRoutes, TCPRoutes, UDPRoutes and TLSRoutes as the state was made from them (copies of the model's maps): a
   * change of any of them computes the state anew (only HTTPRoutes are updated in place).
   */
  others: Map<string, Map<string, object>>;
  state: GatewayApiState;
}

let basis: Basis | undefined;
/** States handed to translations of part of the routes (see shareGatewayApiState), by the part's route map. */
const parts = new WeakMap<object, GatewayApiState>();

type StateSnapshot = Pick<ModelSnapshot, 'crds' | 'secrets' | 'services' | 'revision'>;

/**
 * What a caller knows changed: since the snapshot of `revision`, no input of the state but the HTTPRoutes named
 * (the incremental translation is told exactly what changed). Then only those are compared, instead of every
 * record the state was made from (a few milliseconds at 10,000 routes).
 */
export interface StateChanges {
  revision: number;
  httpRoutes: ReadonlySet<string>;
}

/**
 * The Gateway API state of a snapshot: computed once per snapshot, and from the previous one when only HTTPRoutes
 * changed since (a route's attachment depends on its Gateways, never on other routes; only the listeners'
 * attachedRoutes counts add the routes up), so an HTTPRoute change at 10,000 routes costs the routes that changed.
 * The state is updated in place: a state handed out earlier shows the newer counts and routes, as a snapshot (a
 * live view of the model) shows the newer model. Whatever else changed (Gateways, classes, ReferenceGrants,
 * Namespaces, a Secret a listener reads, a Service a backendRef names appearing or going) computes it anew.
 */
export function gatewayApiState(snap: StateSnapshot, o: GatewayApiOptions | undefined, since?: StateChanges): GatewayApiState {
  if (!o) return EMPTY;
  const routes = recordsOf(snap, 'HTTPRoute');
  const shared = parts.get(routes);
  if (shared) return shared;
  const b = basis;
  // Another model's snapshot (tests have several) is not compared with this one's: computed anew.
  // Options compared by value: the translation and the status writer hold equal options in different objects.
  const same = b && sameOptions(b.o, o) && b.crds === snap.crds;
  if (same && b.revision === snap.revision && b.routesView === routes) return b.state;
  if (same && since && b.revision >= since.revision) updateNamed(b, snap, routes, since.httpRoutes);
  else if (same && sameGatewayInputs(b, snap)) updateRoutes(b, snap, routes);
  else basis = build(snap, o);
  const now = basis as Basis;
  now.revision = snap.revision;
  now.crds = snap.crds;
  now.routesView = routes;
  return now.state;
}

function sameOptions(a: GatewayApiOptions, b: GatewayApiOptions): boolean {
  return a === b || (a.controllerName === b.controllerName && a.reservedPorts.length === b.reservedPorts.length && a.reservedPorts.every((p, i) => p === b.reservedPorts[i]));
}

/** The state computed from nothing kept (what gatewayApiState must always equal; tests compare the two). */
export function gatewayApiStateAnew(snap: StateSnapshot, o: GatewayApiOptions | undefined): GatewayApiState {
  return o ? build(snap, o).state : EMPTY;
}

/**
 * A translation of part of the routes (the incremental translation, translate/incremental.ts) reads the state of
 * the whole snapshot: each of its routes attaches exactly as it does there, and the Gateways (ports, certificates)
 * are the same. `part` is the route map of that translation's snapshot.
 */
export function shareGatewayApiState(part: ReadonlyMap<string, HttpRouteRecord>, state: GatewayApiState): void {
  parts.set(part, state);
}

function sameRecords(kept: Map<string, object>, now: ReadonlyMap<string, object>): boolean {
  if (kept.size !== now.size) return false;
  for (const [k, r] of now) if (kept.get(k) !== r) return false;
  return true;
}

/** Whether everything but the HTTPRoutes is what the basis was made from. */
function sameGatewayInputs(b: Basis, snap: StateSnapshot): boolean {
  if (!sameRecords(b.classes, recordsOf(snap, 'GatewayClass')) || !sameRecords(b.gateways, recordsOf(snap, 'Gateway'))) return false;
  if (!sameRecords(b.listenerSets, recordsOf(snap, 'ListenerSet'))) return false;
  if (!sameRecords(b.grants, recordsOf(snap, 'ReferenceGrant')) || !sameRecords(b.namespaces, recordsOf(snap, 'Namespace'))) return false;
  for (const [k, s] of b.secrets) if (snap.secrets.get(k) !== s) return false;
  for (const [k, r] of b.filterReads) {
    const now = k.startsWith('Plugin/') ? recordsOf(snap, 'Plugin').get(k.slice(7)) : snap.services.get(k.slice(8));
    if (now !== r) return false;
  }
  for (const [k, s] of b.services) if (snap.services.has(k) !== s.present) return false;
  for (const [kind, kept] of b.others) if (!sameRecords(kept, recordsOf(snap, kind as (typeof OTHER_KINDS)[number]))) return false;
  return true;
}

/** The routes whose record is not the one the basis holds (new, changed, deleted), taken out and put in again. */
function updateRoutes(b: Basis, snap: StateSnapshot, routes: ReadonlyMap<string, HttpRouteRecord>): void {
  const changed: HttpRouteRecord[] = [];
  let kept = 0;
  for (const [k, rt] of routes) {
    const was = b.routes.get(k);
    if (was) kept++;
    if (was !== rt) changed.push(rt);
  }
  const gone: string[] = [];
  if (kept !== b.routes.size) for (const k of b.routes.keys()) if (!routes.has(k)) gone.push(k);
  for (const k of gone) removeRoute(b, k);
  for (const rt of changed) {
    removeRoute(b, rt.key);
    addRoute(b, snap, rt);
  }
}

/** The named routes whose record is not the one the basis holds, taken out and put in again. */
function updateNamed(b: Basis, snap: StateSnapshot, routes: ReadonlyMap<string, HttpRouteRecord>, names: ReadonlySet<string>): void {
  for (const k of names) {
    const rt = routes.get(k);
    if (rt === b.routes.get(k)) continue;
    removeRoute(b, k);
    if (rt) addRoute(b, snap, rt);
  }
}

function build(snap: StateSnapshot, o: GatewayApiOptions): Basis {
  const secrets = new Map<string, unknown>();
  const secretOf = (key: string) => {
    const s = snap.secrets.get(key);
    secrets.set(key, s);
    return s;
  };
  // Plugin objects and Services listener filters name: remembered as inputs (a change computes the state anew).
  const filterReads = new Map<string, unknown>();
  filterReader = {
    plugin: (key) => {
      const p = recordsOf(snap, 'Plugin').get(key);
      filterReads.set(`Plugin/${key}`, p);
      return p as { instance?: unknown; error?: string } | undefined;
    },
    service: (key) => {
      const svc = snap.services.get(key);
      filterReads.set(`Service/${key}`, svc);
      return svc;
    },
  };
  let part: ReturnType<typeof gatewayPart>;
  try {
    part = gatewayPart(snap, o, secretOf);
  } finally {
    filterReader = { plugin: () => undefined, service: () => undefined };
  }
  const { granted, streams, state } = part;
  const b: Basis = {
    filterReads,
    o,
    revision: snap.revision,
    crds: snap.crds,
    routesView: recordsOf(snap, 'HTTPRoute'),
    classes: new Map(recordsOf(snap, 'GatewayClass')),
    gateways: new Map(recordsOf(snap, 'Gateway')),
    listenerSets: new Map(recordsOf(snap, 'ListenerSet')),
    grants: new Map(recordsOf(snap, 'ReferenceGrant')),
    namespaces: new Map(recordsOf(snap, 'Namespace')),
    secrets,
    granted,
    routes: new Map(),
    counted: new Map(),
    checked: new Map(),
    services: new Map(),
    others: new Map(OTHER_KINDS.map((k) => [k, new Map(recordsOf(snap, k))])),
    state,
  };
  for (const rt of [...recordsOf(snap, 'HTTPRoute').values()].sort(byAge)) addRoute(b, snap, rt);
  for (const rt of [...recordsOf(snap, 'GRPCRoute').values()].sort(byAge)) addOther(b, snap, 'GRPCRoute', rt, rt.rules.flatMap((r) => r.backends), (p) => b.state.routes.set(`GRPCRoute/${rt.key}`, p));
  // TCPRoutes, UDPRoutes and TLSRoutes: the same attachment; their listeners' pod ports collect them, oldest first.
  for (const kind of STREAM_KINDS) {
    for (const rt of [...recordsOf(snap, kind).values()].sort(byAge)) {
      const backends = rt.backends.map((x) => ({ ref: x, ok: backendProblem(kind, rt.namespace, x, (k) => serviceSeen(b, snap, k), granted) === undefined }));
      const parents = addOther(b, snap, kind, rt, rt.backends, (p) => b.state.streamRoutes.set(`${kind}/${rt.key}`, p));
      for (const p of parents) for (const a of p.attached) streams.get(a.listener.podPort!)?.routes.push({ route: `${kind}/${rt.key}`, hosts: a.hosts, hostnames: rt.hostnames, backends, listener: a.listener });
    }
  }
  return b;
}

/** The route kinds other than HTTPRoute: attached like it, but a change of one computes the state anew. */
const OTHER_KINDS = ['GRPCRoute' as const, ...STREAM_KINDS];

/** Whether a Service exists, remembered as an input of the state (its appearing or going computes the state anew). */
function serviceSeen(b: Basis, snap: StateSnapshot, key: string): boolean {
  const present = snap.services.has(key);
  const s = b.services.get(key);
  if (s) s.users++;
  else b.services.set(key, { present, users: 1 });
  return present;
}

/** A GRPCRoute's, TCPRoute's, UDPRoute's or TLSRoute's parents, counted on their listeners (never taken out again). */
function addOther(b: Basis, snap: StateSnapshot, kind: string, rt: { key: string; namespace: string; hostnames: readonly string[]; parents: readonly ParentRefN[] }, backends: readonly BackendRefN[], set: (p: ParentState[]) => void): ParentState[] {
  const refs = refsState(kind, rt.namespace, backends, (k) => serviceSeen(b, snap, k), b.granted);
  const namespaces = recordsOf(snap, 'Namespace');
  const parents: ParentState[] = [];
  for (const ref of rt.parents) {
    const p = parentOf(b.state, ref);
    if (!p) continue;
    parents.push(attach(kind, rt, ref, p.gw, namespaces, refs, [], p.set));
  }
  if (parents.length) set(parents);
  return parents;
}

/** One route's parents (those that are Portico's Gateways), counted on the listeners it attaches to. */
function addRoute(b: Basis, snap: StateSnapshot, rt: HttpRouteRecord): void {
  const checked: string[] = [];
  const refs = backendRefsState('HTTPRoute', rt, (k) => (checked.push(k), snap.services.has(k)), b.granted);
  const namespaces = recordsOf(snap, 'Namespace');
  const counted: ListenerState[] = [];
  const parents: ParentState[] = [];
  for (const ref of rt.parents) {
    const p = parentOf(b.state, ref);
    if (!p) continue; // not a Gateway (or ListenerSet of a Gateway) of Portico's, or not there: not Portico's to report
    parents.push(attach('HTTPRoute', rt, ref, p.gw, namespaces, refs, counted, p.set));
  }
  b.routes.set(rt.key, rt);
  if (parents.length) b.state.routes.set(rt.key, parents);
  if (counted.length) b.counted.set(rt.key, counted);
  if (checked.length) {
    b.checked.set(rt.key, checked);
    for (const k of checked) {
      const s = b.services.get(k);
      if (s) s.users++;
      else b.services.set(k, { present: snap.services.has(k), users: 1 });
    }
  }
}

function removeRoute(b: Basis, key: string): void {
  for (const l of b.counted.get(key) ?? []) l.attachedRoutes--;
  for (const k of b.checked.get(key) ?? []) {
    const s = b.services.get(k);
    if (s && --s.users === 0) b.services.delete(k);
  }
  b.counted.delete(key);
  b.checked.delete(key);
  b.routes.delete(key);
  b.state.routes.delete(key);
}

/** Everything but the routes: classes, grants, Gateways and their listeners, the pod ports. */
function gatewayPart(snap: StateSnapshot, o: GatewayApiOptions, secretOf: (key: string) => TlsMaterial | undefined): { granted: Granted; streams: Map<number, StreamPortState>; state: GatewayApiState } {
  const classes = new Map<string, { generation: number; accepted: Cond }>();
  for (const c of recordsOf(snap, 'GatewayClass').values()) {
    if (c.controllerName !== o.controllerName) continue;
    classes.set(c.name, { generation: c.generation, accepted: ok('Accepted', 'Portico serves Gateways of this class') });
  }
  const grants = [...recordsOf(snap, 'ReferenceGrant').values()];
  /** Whether a ReferenceGrant in the target's namespace lets `from` refer to it. */
  const granted = (from: { group: string; kind: string; namespace: string }, to: { group: string; kind: string; namespace: string; name: string }): boolean =>
    from.namespace === to.namespace ||
    grants.some(
      (g) =>
        g.namespace === to.namespace &&
        g.from.some((f) => f.group === from.group && f.kind === from.kind && f.namespace === from.namespace) &&
        g.to.some((t) => t.group === to.group && t.kind === to.kind && (t.name === undefined || t.name === to.name)),
    );

  const gateways = new Map<string, GatewayState>();
  const ordered = [...recordsOf(snap, 'Gateway').values()].filter((g) => classes.has(g.className)).sort(byAge);
  const namespaces = recordsOf(snap, 'Namespace');
  // ListenerSets by the Gateway they name, in precedence order: oldest first, then by "namespace/name".
  const setsOf = new Map<string, ListenerSetRecord[]>();
  for (const ls of [...recordsOf(snap, 'ListenerSet').values()].sort(byAge)) {
    if (ls.parent.group !== GATEWAY_GROUP || ls.parent.kind !== 'Gateway') continue;
    const k = `${ls.parent.namespace}/${ls.parent.name}`;
    setsOf.set(k, [...(setsOf.get(k) ?? []), ls]);
  }
  const listenerSets = new Map<string, ListenerSetState>();
  const used = new Set<number>(o.reservedPorts);
  const perNamespace = new Map<string, number>();
  /** Per Gateway, per Gateway port: the pod port it was given, or why it has none. */
  const portsOf = new Map<string, Map<number, { podPort?: number; refusal?: Cond }>>();
  /** A pod port for port `port` of Gateway `gw`, counted for namespace `ns` (bounded per namespace). */
  const open = (gw: GatewayRecord, port: number, ns: string): { podPort?: number; refusal?: Cond } => {
    // Each port is a listening socket in every nginx worker and a reload when it appears: bounded per namespace
    // (oldest Gateways first), so one namespace cannot take the pod ports, or the reloads, of the others.
    const taken = perNamespace.get(ns) ?? 0;
    if (taken >= MAX_PORTS_PER_NAMESPACE) return { refusal: no('Invalid', `namespace ${ns} already has ${MAX_PORTS_PER_NAMESPACE} Gateway ports (the limit per namespace); this one is not served`) };
    const podPort = allocate(`${gw.key}:${port}`, used);
    if (podPort === undefined) return { refusal: no('Invalid', 'no free pod port is left for this listener') };
    perNamespace.set(ns, taken + 1);
    used.add(podPort);
    return { podPort };
  };
  const give = (l: ListenerState, r: { podPort?: number; refusal?: Cond }) => {
    if (r.podPort !== undefined) l.podPort = r.podPort;
    else if (r.refusal) l.programmed = r.refusal;
  };
  for (const gw of ordered) {
    const st = gatewayState(gw, secretOf, granted);
    gateways.set(gw.key, st);
    const index = portIndex(st.listeners);
    const budget = { left: MAX_SET_LISTENERS_PER_GATEWAY };
    for (const ls of setsOf.get(gw.key) ?? []) listenerSets.set(ls.key, mergeListenerSet(gw, st, ls, secretOf, granted, namespaces, index, budget));
    if (st.accepted.status !== 'True') {
      for (const l of st.listeners) {
        l.usable = false;
        if (l.programmed.status === 'True') l.programmed = no('Invalid', 'not served: the Gateway is not accepted');
      }
      continue;
    }
    // One pod port per Gateway port with a usable listener of its own, allocated oldest Gateway first.
    const byPort = new Map<number, ListenerState[]>();
    for (const l of st.listeners) if (l.usable && !l.set) byPort.set(l.port, [...(byPort.get(l.port) ?? []), l]);
    const given = new Map<number, { podPort?: number; refusal?: Cond }>();
    portsOf.set(gw.key, given);
    for (const [port, ls] of [...byPort].sort(([a], [b]) => a - b)) {
      const r = open(gw, port, gw.namespace);
      given.set(port, r);
      for (const l of ls) give(l, r);
    }
  }
  // Then the ports only ListenerSets' listeners have (every Gateway's own ports come first: a ListenerSet never
  // takes a port, or a namespace's share of them, from a Gateway's own listeners). A port a ListenerSet opens counts
  // for the ListenerSet's namespace.
  for (const gw of ordered) {
    const st = gateways.get(gw.key)!;
    const given = portsOf.get(gw.key);
    if (!given) continue;
    for (const l of st.listeners) {
      if (!l.set || !l.usable) continue;
      let r = given.get(l.port);
      if (!r) {
        r = open(gw, l.port, l.set.slice(0, l.set.indexOf('/')));
        given.set(l.port, r);
      }
      give(l, r);
    }
  }
  const ports: GatewayApiState['ports'] = [];
  const streams = new Map<number, StreamPortState>();
  for (const st of gateways.values()) {
    const byPod = new Map<number, ListenerState[]>();
    for (const l of st.listeners) if (l.usable && l.podPort !== undefined) byPod.set(l.podPort, [...(byPod.get(l.podPort) ?? []), l]);
    for (const [podPort, ls] of byPod) {
      const protocol = ls[0]!.protocol;
      if (STREAM_PROTOCOLS.has(protocol)) streams.set(podPort, { port: podPort, protocol: protocol as StreamPortState['protocol'], gateway: st.key, routes: [] });
      else ports.push({ port: podPort, ssl: protocol === 'HTTPS', hostnames: [...new Set(ls.map((l) => l.hostname ?? ''))].sort() });
    }
  }
  ports.sort((a, b) => a.port - b.port);
  return { granted, streams, state: { classes, gateways, listenerSets, routes: new Map(), ports, streamRoutes: new Map(), streams: [...streams.values()].sort((a, b) => a.port - b.port) } };
}

/** Per Gateway port: the protocols and hostnames ("" for none) of the accepted listeners merged so far. */
type PortIndex = Map<number, { protocols: Set<string>; hosts: Set<string> }>;

function portIndex(listeners: readonly ListenerState[]): PortIndex {
  const index: PortIndex = new Map();
  for (const l of listeners) if (l.accepted.status === 'True') addToIndex(index, l);
  return index;
}

function addToIndex(index: PortIndex, l: ListenerState): void {
  let at = index.get(l.port);
  if (!at) index.set(l.port, (at = { protocols: new Set(), hosts: new Set() }));
  at.protocols.add(l.protocol);
  at.hosts.add(l.hostname ?? '');
}

/** Whether a Gateway's spec.allowedListeners admits ListenerSets of namespace `ns`. */
export function admitsListenerSets(gw: Pick<GatewayRecord, 'namespace' | 'allowedListeners'>, ns: string, namespaces: ReadonlyMap<string, { labels: Record<string, string> }>): boolean {
  const a = gw.allowedListeners ?? { from: 'None' };
  if (a.from === 'All') return true;
  if (a.from === 'Same') return ns === gw.namespace;
  if (a.from === 'Selector') {
    const labels = namespaces.get(ns)?.labels;
    return !!labels && a.selector !== undefined && selects(a.selector, labels);
  }
  return false;
}

/**
 * A ListenerSet of Gateway `gw` (in precedence order: after the Gateway's own listeners and older ListenerSets'). Not
 * admitted by allowedListeners (NotAllowed), or of a Gateway that is not accepted (ParentNotAccepted): none of its
 * listeners is the Gateway's. Otherwise each listener is judged as a Gateway's (its certificateRefs granted to
 * ListenerSets of its namespace), then against the listeners before it on its port (`index`): another protocol there
 * (ProtocolConflict) or the same hostname (HostnameConflict) and it is not accepted — the earlier one keeps its port
 * and name, so a ListenerSet never takes a host or a port's protocol from the Gateway's own listeners. With no valid
 * listener the set is not accepted (ListenersNotValid); otherwise its listeners join the Gateway's (st.listeners).
 * Messages never name the other listeners' objects (they may be another tenant's).
 */
function mergeListenerSet(gw: GatewayRecord, st: GatewayState, ls: ListenerSetRecord, secretOf: (key: string) => TlsMaterial | undefined, granted: Granted, namespaces: ReadonlyMap<string, { labels: Record<string, string> }>, index: PortIndex, budget: { left: number }): ListenerSetState {
  const from = { kind: 'ListenerSet' as const, namespace: ls.namespace };
  const listeners = ls.listeners.map((l) => {
    const s = listenerState(gw, l, secretOf, granted, from);
    s.set = ls.key;
    return s;
  });
  const out: ListenerSetState = { key: ls.key, generation: ls.generation, gateway: gw.key, accepted: ok('Accepted'), listeners };
  const refuse = (reason: string, message: string): ListenerSetState => {
    out.accepted = no(reason, message);
    for (const l of listeners) {
      l.accepted = no(reason, message);
      l.programmed = no(reason, `not served: ${message}`);
      l.usable = false;
    }
    return out;
  };
  if (!admitsListenerSets(gw, ls.namespace, namespaces)) {
    return refuse('NotAllowed', `Gateway ${gw.key} does not admit ListenerSets of namespace ${ls.namespace} (its spec.allowedListeners.namespaces)`);
  }
  if (st.accepted.status !== 'True') return refuse('ParentNotAccepted', `Gateway ${gw.key} is not accepted`);
  const mine: PortIndex = new Map();
  for (const l of listeners) {
    if (l.accepted.status !== 'True') continue;
    if (budget.left <= 0) {
      l.accepted = no('TooManyListeners', `Gateway ${gw.key} already takes ${MAX_SET_LISTENERS_PER_GATEWAY} listeners from ListenerSets (Portico's limit); this one is not`);
      l.programmed = no('Invalid', 'not served: too many listeners');
      l.usable = false;
      continue;
    }
    budget.left--;
    const before = index.get(l.port);
    const here = mine.get(l.port);
    const protocols = [...(before?.protocols ?? []), ...(here?.protocols ?? [])];
    const host = l.hostname ?? '';
    let c: Cond | undefined;
    if (protocols.some((p) => p !== l.protocol)) c = ok('ProtocolConflict', `port ${l.port} already has a listener of another protocol that takes precedence (the Gateway's own, an older ListenerSet's, or an earlier one of this set)`);
    else if (before?.hosts.has(host) || here?.hosts.has(host)) c = ok('HostnameConflict', `port ${l.port} already has a listener ${host ? `for hostname ${host}` : 'without a hostname'} that takes precedence (the Gateway's own, an older ListenerSet's, or an earlier one of this set)`);
    if (c) {
      l.conflicted = c;
      l.accepted = no(c.reason, c.message);
      l.programmed = no(c.reason, `not served: ${c.message}`);
      l.usable = false;
      continue;
    }
    addToIndex(mine, l);
  }
  const valid = listeners.filter((l) => l.usable).length;
  if (!valid) {
    for (const l of listeners) if (l.programmed.status === 'True') l.programmed = no('Invalid', 'not served: the ListenerSet has no valid listener');
    out.accepted = no('ListenersNotValid', 'no listener of the ListenerSet is valid (see its listeners\' conditions)');
    return out;
  }
  out.accepted = valid === listeners.length ? ok('Accepted', `its listeners are part of Gateway ${gw.key}`) : ok('ListenersNotValid', 'some listeners are not valid (see their conditions); the others are part of the Gateway');
  for (const l of listeners) if (l.accepted.status === 'True') addToIndex(index, l);
  st.listeners.push(...listeners);
  st.attachedListenerSets++;
  return out;
}

function byAge(a: { creationTimestamp: string; key: string }, b: { creationTimestamp: string; key: string }): number {
  return a.creationTimestamp < b.creationTimestamp ? -1 : a.creationTimestamp > b.creationTimestamp ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** FNV-1a of a string: where a listener's pod port search starts, so the port follows from the Gateway alone. */
function fnv(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

function allocate(id: string, used: ReadonlySet<number>): number | undefined {
  const start = fnv(id) % GATEWAY_PORT_COUNT;
  for (let i = 0; i < GATEWAY_PORT_COUNT; i++) {
    const p = GATEWAY_PORT_BASE + ((start + i) % GATEWAY_PORT_COUNT);
    if (!used.has(p)) return p;
  }
  return undefined;
}

type Granted = (from: { group: string; kind: string; namespace: string }, to: { group: string; kind: string; namespace: string; name: string }) => boolean;

function gatewayState(gw: GatewayRecord, secretOf: (key: string) => TlsMaterial | undefined, granted: Granted): GatewayState {
  const listeners = gw.listeners.map((l) => listenerState(gw, l, secretOf, granted));
  // Conflicts between listeners of one port: another protocol, or the same hostname twice.
  for (const l of listeners) {
    if (!l.accepted.status.startsWith('T')) continue;
    const same = listeners.filter((x) => x !== l && x.port === l.port && x.accepted.status === 'True');
    if (same.some((x) => x.protocol !== l.protocol)) l.conflicted = ok('ProtocolConflict', `another listener of port ${l.port} has another protocol`);
    else if (same.some((x) => (x.hostname ?? '') === (l.hostname ?? ''))) l.conflicted = ok('HostnameConflict', `another listener of port ${l.port} has the same hostname`);
    if (l.conflicted.status === 'True') {
      l.usable = false;
      l.programmed = no('Invalid', `not served: ${l.conflicted.message}`);
    }
  }
  const valid = listeners.filter((l) => l.accepted.status === 'True').length;
  const insecure = insecurePorts(gw);
  const insecureFrontend = insecure ? { insecureFrontend: ok('ConfigurationChanged', `spec.tls.frontend lets ${insecure} accept clients without a valid certificate (AllowInsecureFallback): client certificates are asked for but not required`) } : {};
  const client = backendClientCertificate(gw, secretOf, granted);
  const refs = { resolvedRefs: client.resolvedRefs, ...(client.key ? { backendClientCertificate: client.key } : {}) };
  const pr = gw.infrastructure?.parametersRef;
  if (pr) return { key: gw.key, generation: gw.generation, accepted: no('InvalidParameters', `spec.infrastructure.parametersRef ${pr}: Portico's Gateways take no parameters`), ...insecureFrontend, ...refs, listeners, attachedListenerSets: 0 };
  const badAddress = unsupportedAddresses(gw);
  if (badAddress) return { key: gw.key, generation: gw.generation, accepted: no('UnsupportedAddress', badAddress), ...insecureFrontend, ...refs, listeners, attachedListenerSets: 0 };
  const accepted =
    valid === listeners.length
      ? ok('Accepted', 'Portico serves this Gateway')
      : valid === 0
        ? no('ListenersNotValid', 'no listener is valid (see the listeners\' conditions)')
        : ok('ListenersNotValid', 'some listeners are not valid (see their conditions); the others are served');
  return { key: gw.key, generation: gw.generation, accepted, ...insecureFrontend, ...refs, listeners, attachedListenerSets: 0 };
}

/**
 * spec.tls.backend.clientCertificateRef: a TLS Secret (kubernetes.io/tls, a certificate and its key) of the Gateway's
 * namespace, or of another one that permits it with a ReferenceGrant. What cannot be used makes the Gateway's
 * ResolvedRefs False (the Gateway stays accepted, and its backends are reached without a client certificate: a
 * backend that requires one refuses the handshake, so nothing is let through that should not be).
 */
function backendClientCertificate(gw: GatewayRecord, secretOf: (key: string) => TlsMaterial | undefined, granted: Granted): { resolvedRefs: Cond; key?: string } {
  const ref = gw.backendClientCertificate;
  if (!ref) return { resolvedRefs: ok('ResolvedRefs', '') };
  const where = 'spec.tls.backend.clientCertificateRef';
  if (ref.group !== '' || ref.kind !== 'Secret') return { resolvedRefs: no('InvalidClientCertificateRef', `${where}: ${ref.group || 'core'}/${ref.kind} is not a kind Portico reads a certificate from (core Secret)`) };
  const key = `${ref.namespace}/${ref.name}`;
  if (ref.namespace !== gw.namespace && !granted({ group: GATEWAY_GROUP, kind: 'Gateway', namespace: gw.namespace }, { group: '', kind: 'Secret', namespace: ref.namespace, name: ref.name })) {
    return { resolvedRefs: no('RefNotPermitted', `${where}: no ReferenceGrant in ${ref.namespace} lets Gateways of ${gw.namespace} use Secret ${ref.name}`) };
  }
  const m = secretOf(key);
  if (!m) return { resolvedRefs: no('InvalidClientCertificateRef', `${where}: Secret ${key} not found`) };
  if (!m.ok) return { resolvedRefs: no('InvalidClientCertificateRef', `${where}: Secret ${key}: ${m.error}`) };
  return { resolvedRefs: ok('ResolvedRefs', ''), key };
}

/** The validation of client certificates that applies to HTTPS listeners of `port`: the port's own, else the default. */
export function frontendValidation(gw: GatewayRecord, port: number): FrontendValidationN | undefined {
  const ft = gw.frontendTls;
  if (!ft) return undefined;
  const own = ft.perPort.find((p) => p.port === port);
  return own ? own.validation : ft.default;
}

/** Which part of spec.tls.frontend asks for AllowInsecureFallback ("the default", "port 8443"...), or "" for none. */
function insecurePorts(gw: GatewayRecord): string {
  const ft = gw.frontendTls;
  if (!ft) return '';
  const out: string[] = [];
  if (ft.default?.mode === 'AllowInsecureFallback') out.push('the default');
  for (const p of ft.perPort) if (p.validation?.mode === 'AllowInsecureFallback') out.push(`port ${p.port}`);
  return out.join(' and ');
}

/**
 * The client-certificate validation of an HTTPS listener: each caCertificateRef must be a core ConfigMap, in the
 * Gateway's namespace or granted by a ReferenceGrant, with a usable ca.crt, or a ClusterTrustBundle
 * (certificates.k8s.io; cluster-scoped public CA certificates: no ReferenceGrant) with a usable spec.trustBundle — when
 * the API server serves them (else its kind is refused, as any other). A bad one makes ResolvedRefs False
 * (naming every bad one); the others are used. None usable: the listener is not accepted (NoValidCACertificate) and
 * not served — never served without the check it asks for.
 */
/** Returns whether it set ResolvedRefs (False: no problem of its own, or a certificateRef's problem came first). */
function checkClientValidation(gw: GatewayRecord, l: ListenerN, base: ListenerState, granted: Granted): boolean {
  const v = frontendValidation(gw, l.port);
  if (!v) return false;
  const problems: Cond[] = [];
  const cas: string[] = [];
  const sources: string[] = [];
  for (const ref of v.caCertificateRefs) {
    const bundle = isTrustBundleRef(ref);
    const source = bundle ? `ClusterTrustBundle ${ref.name}` : `${ref.namespace}/${ref.name}`;
    const where = `caCertificateRef ${ref.group || 'core'}/${ref.kind} ${bundle ? ref.name : `${ref.namespace}/${ref.name}`}`;
    if (!bundle && (ref.group !== '' || ref.kind !== 'ConfigMap')) {
      problems.push(no('InvalidCACertificateKind', `${where}: only core ConfigMaps (key ca.crt) and ClusterTrustBundles (certificates.k8s.io) hold CA certificates Portico reads`));
    } else if (ref.kindProblem) problems.push(no('InvalidCACertificateKind', `${where}: ${ref.kindProblem}`));
    else if (!bundle && !granted({ group: GATEWAY_GROUP, kind: 'Gateway', namespace: gw.namespace }, { group: '', kind: 'ConfigMap', namespace: ref.namespace, name: ref.name })) {
      problems.push(no('RefNotPermitted', `${where}: no ReferenceGrant in ${ref.namespace} lets Gateways of ${gw.namespace} use it`));
    } else if (ref.ca === undefined) problems.push(no('InvalidCACertificateRef', `${where}: ${ref.problem ?? 'not read yet'}`));
    else {
      cas.push(ref.ca);
      sources.push(source);
    }
  }
  const which = `the client certificate validation of port ${l.port}`;
  let told = false;
  if (problems.length && (base.resolvedRefs.status === 'True' || base.resolvedRefs.reason === 'InvalidRouteKinds')) {
    base.resolvedRefs = no(problems[0]!.reason, `${which}: ${problems.map((p) => p.message).join('; ')}${cas.length ? `; the other CA certificates (${sources.join(', ')}) are used` : ''}`);
    told = true;
  }
  if (!cas.length) {
    base.accepted = no('NoValidCACertificate', `${which} has no usable CA certificate (see ResolvedRefs): the listener is not served rather than served without checking client certificates`);
    base.programmed = no('Invalid', 'not served: no valid CA certificate for client certificates');
    base.usable = false;
    return told;
  }
  base.clientValidation = { mode: v.mode, ca: cas.join(''), sources };
  return told;
}

/**
 * Why a Gateway's spec.addresses cannot be served, naming each address that is not of type IPAddress (with routability
 * empty or Cluster): its address is the cluster IP of its Service (kinds/gateway/status.ts), so a hostname, a named
 * address or an implementation-specific type has nothing to become. Undefined when every address can be served.
 */
export function unsupportedAddresses(gw: Pick<GatewayRecord, 'addresses'>): string | undefined {
  const bad = gw.addresses
    .map((a, i) => ({ a, i }))
    .filter(({ a }) => a.type !== 'IPAddress' || (a.routability !== undefined && a.routability !== 'Cluster'))
    .map(({ a, i }) => `spec.addresses.${i} (type ${a.type}${a.value ? `, value ${JSON.stringify(a.value)}` : ''}${a.routability ? `, routability ${a.routability}` : ''})`);
  if (!bad.length) return undefined;
  return `${bad.join(', ')}: Portico serves addresses of type IPAddress only (routability Cluster): a Gateway's address is the cluster IP of its Service; remove ${bad.length > 1 ? 'these addresses' : 'this address'} or request an IPAddress`;
}

/**
 * One listener's state. `from`: the object it is written in, for ReferenceGrants of its certificateRefs (the Gateway,
 * or a ListenerSet: grants to Gateways are not grants to ListenerSets, nor the other way round). spec.tls.frontend is
 * the Gateway's, per port, for every HTTPS listener of that port (a ListenerSet's too: its owner decides).
 */
function listenerState(gw: GatewayRecord, l: ListenerN, secretOf: (key: string) => TlsMaterial | undefined, granted: Granted, from: { kind: 'Gateway' | 'ListenerSet'; namespace: string } = { kind: 'Gateway', namespace: gw.namespace }): ListenerState {
  const base: ListenerState = {
    name: l.name,
    port: l.port,
    protocol: l.protocol,
    ...(l.hostname ? { hostname: l.hostname } : {}),
    supportedKinds: [],
    accepted: ok('Accepted'),
    resolvedRefs: ok('ResolvedRefs'),
    programmed: ok('Programmed'),
    conflicted: no('NoConflicts', ''),
    attachedRoutes: 0,
    usable: true,
    certificates: [],
    spec: l,
  };
  const kinds = PROTOCOL_KINDS[l.protocol];
  if (!kinds) {
    base.accepted = no('UnsupportedProtocol', `Portico does not serve protocol ${l.protocol} on a Gateway (HTTP, HTTPS, TLS, TCP and UDP only)`);
    base.programmed = no('Invalid', 'not served: the protocol is not supported');
    base.usable = false;
    return base;
  }
  // allowedRoutes.kinds: those the protocol supports; any other makes ResolvedRefs False (the rest still attach).
  const asked = l.allowedRoutes.kinds;
  if (asked) {
    base.supportedKinds = asked.filter((k) => kinds.some((s) => s.group === k.group && s.kind === k.kind));
    if (base.supportedKinds.length < asked.length) {
      const bad = asked.filter((k) => !base.supportedKinds.includes(k)).map((k) => `${k.group || 'core'}/${k.kind}`);
      base.resolvedRefs = no('InvalidRouteKinds', `route kinds ${bad.join(', ')} cannot attach to a ${l.protocol} listener`);
    }
  } else base.supportedKinds = [...kinds];
  // TLS listeners: Passthrough hands the connection on undecrypted; Terminate (the API's default mode) ends TLS in
  // nginx's stream section with the listener's certificate, resolved exactly as an HTTPS listener's.
  const terminates = l.protocol === 'HTTPS' || (l.protocol === 'TLS' && l.tls?.mode !== 'Passthrough');
  let caProblem = false;
  if (terminates) {
    const tls = l.tls;
    if (!tls || tls.mode !== 'Terminate' || !tls.certificateRefs.length) {
      base.resolvedRefs = no('InvalidCertificateRef', tls?.mode === 'Passthrough' ? 'an HTTPS listener terminates TLS: mode Passthrough is for TLS listeners' : `a${l.protocol === 'TLS' ? ' TLS listener in mode Terminate' : 'n HTTPS listener'} needs tls.certificateRefs`);
    } else {
      for (const ref of tls.certificateRefs) {
        const key = `${ref.namespace}/${ref.name}`;
        if (ref.group !== '' || ref.kind !== 'Secret') {
          base.resolvedRefs = no('InvalidCertificateRef', `certificateRef ${ref.group || 'core'}/${ref.kind} ${key}: only core Secrets hold certificates`);
          break;
        }
        if (!granted({ group: GATEWAY_GROUP, kind: from.kind, namespace: from.namespace }, { group: '', kind: 'Secret', namespace: ref.namespace, name: ref.name })) {
          base.resolvedRefs = no('RefNotPermitted', `certificateRef Secret ${key}: no ReferenceGrant in ${ref.namespace} lets ${from.kind}s of ${from.namespace} use it`);
          break;
        }
        const s = secretOf(key);
        if (!s || !s.ok) {
          base.resolvedRefs = no('InvalidCertificateRef', `certificateRef Secret ${key}: ${!s ? 'not found' : s.ok ? '' : s.error}`);
          break;
        }
        base.certificates.push(key);
      }
    }
  }
  if (l.protocol === 'HTTPS') {
    caProblem = checkClientValidation(gw, l, base, granted);
  }
  if (l.filters?.length) {
    if (l.protocol !== 'HTTP' && l.protocol !== 'HTTPS') {
      base.accepted = no('UnsupportedValue', `filters apply to HTTP and HTTPS listeners only, not ${l.protocol}`);
      base.programmed = no('Invalid', 'not served: filters on a listener that is not HTTP or HTTPS');
      base.usable = false;
      return base;
    }
    base.filterPlan = listenerFilterPlan(l, from, granted);
    const closed = base.filterPlan.closed;
    if (closed && base.resolvedRefs.status === 'True') {
      base.resolvedRefs = no(closed.startsWith(REF_NOT_PERMITTED) ? 'RefNotPermitted' : 'InvalidListenerFilter', closed);
      base.programmed = no('Invalid', `its filters cannot be applied, so every request on it is refused (503): ${closed}`);
      return base;
    }
  }
  if (base.resolvedRefs.status === 'False' && base.accepted.status === 'True') {
    // Only some caCertificateRefs bad (the others usable): served, checking client certificates against those.
    if (!(caProblem && base.clientValidation)) {
      base.programmed = no('Invalid', `not served: ${base.resolvedRefs.message}`);
      // Invalid route kinds alone leave the listener serving the valid ones; a certificate problem does not.
      if (base.resolvedRefs.reason !== 'InvalidRouteKinds' || !base.supportedKinds.length) base.usable = false;
    }
  }
  return base;
}

const REF_NOT_PERMITTED = 'no ReferenceGrant';
/** Header names as the data plane takes them (an HTTP token). */
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/;
/** http.path as the API allows it (its pattern), starting with "/" (it prefixes the client's path). */
const AUTH_PATH = /^\/(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|%[0-9a-fA-F]{2})*$/;

/** The reader of Plugin objects and Services while a state is built (build() sets it; its reads are inputs). */
let filterReader: FilterReader = { plugin: () => undefined, service: () => undefined };

/**
 * A listener's filters (ListenerFilters.requests), in the order written — which Portico keeps: each one is a step
 * of one chain run before route matching. ExtensionRef: a Portico Plugin (portico.dev/Plugin) of the listener's
 * object's namespace. ExternalAuth: protocol HTTP to a Service of that namespace, or of another one whose
 * ReferenceGrant lets the object refer to it. Anything else (another extension, GRPC, forwardBody) cannot be
 * applied: the plan is closed, and so is the listener (never served without its filters).
 */
export function listenerFilterPlan(l: ListenerN, from: { kind: 'Gateway' | 'ListenerSet'; namespace: string }, granted: Granted): ListenerFilterPlan {
  const steps: ListenerFilterStep[] = [];
  const problems: string[] = [];
  (l.filters ?? []).forEach((f, i) => {
    const at = `filters.requests[${i}]`;
    if (f.type === 'ExtensionRef') {
      const e = f.extensionRef;
      if (!e) return problems.push(`${at}: type ExtensionRef without extensionRef`);
      if (e.group !== 'portico.dev' || e.kind !== 'Plugin') return problems.push(`${at}.extensionRef: ${e.group || 'core'}/${e.kind} is not an extension Portico knows (portico.dev/Plugin)`);
      const key = `${from.namespace}/${e.name}`;
      const p = filterReader.plugin(key);
      if (!p) return problems.push(`${at}.extensionRef: Plugin ${key} not found`);
      if (!p.instance) return problems.push(`${at}.extensionRef: Plugin ${key} cannot be used: ${p.error ?? 'invalid'}`);
      steps.push({ plugin: { namespace: from.namespace, name: e.name } });
      return;
    }
    if (f.type === 'ExternalAuth') {
      const a = f.externalAuth;
      if (!a) return problems.push(`${at}: type ExternalAuth without externalAuth`);
      if (a.protocol !== 'HTTP') return problems.push(`${at}.externalAuth.protocol: ${a.protocol || '(none)'} is not served by Portico (HTTP only: no ext_authz gRPC)`);
      if (a.forwardBodyMaxSize > 0) return problems.push(`${at}.externalAuth.forwardBody: sending the request body to the auth service is not served by Portico (yet)`);
      const b = a.backendRef;
      if (b.group !== '' || b.kind !== 'Service') return problems.push(`${at}.externalAuth.backendRef: ${b.group || 'core'}/${b.kind} is not a Service`);
      if (b.port === undefined) return problems.push(`${at}.externalAuth.backendRef: a Service needs a port`);
      const key = `${b.namespace}/${b.name}`;
      if (!granted({ group: GATEWAY_GROUP, kind: from.kind, namespace: from.namespace }, { group: '', kind: 'Service', namespace: b.namespace, name: b.name })) {
        return problems.push(`${REF_NOT_PERMITTED} in ${b.namespace} lets ${from.kind}s of ${from.namespace} use Service ${key} (${at}.externalAuth.backendRef)`);
      }
      const svc = filterReader.service(key);
      if (!svc) return problems.push(`${at}.externalAuth.backendRef: Service ${key} not found`);
      if (!svc.ports.some((p) => p.port === b.port)) return problems.push(`${at}.externalAuth.backendRef: Service ${key} has no port ${b.port}`);
      if (a.path !== '' && !AUTH_PATH.test(a.path)) return problems.push(`${at}.externalAuth.http.path: ${JSON.stringify(a.path)} must be a path starting with "/"`);
      const bad = [...a.allowedHeaders, ...a.allowedResponseHeaders].filter((h) => !HEADER_NAME.test(h));
      if (bad.length) return problems.push(`${at}.externalAuth.http: invalid header names ${bad.map((h) => JSON.stringify(h)).join(', ')}`);
      const lower = (hs: string[]) => [...new Set(hs.map((h) => h.toLowerCase()))];
      steps.push({
        auth: {
          namespace: b.namespace,
          service: b.name,
          port: b.port,
          path: a.path.replace(/\/+$/, ''),
          forwardHeaders: lower(['authorization', ...a.allowedHeaders]),
          upstreamHeaders: a.allowedResponseHeaders.length ? lower(a.allowedResponseHeaders).filter((h) => h !== 'host' && h !== ':authority') : null,
        },
      });
      return;
    }
    problems.push(`${at}: type ${f.type} is not a listener filter Portico serves (ExternalAuth, ExtensionRef)`);
  });
  // Problems before grants: a missing grant is named first (its own reason), else the first problem.
  problems.sort((a, b) => Number(b.startsWith(REF_NOT_PERMITTED)) - Number(a.startsWith(REF_NOT_PERMITTED)));
  return problems.length ? { steps, closed: problems.join('; ') } : { steps };
}

/** Whether a route of namespace `ns` may attach to a listener (allowedRoutes.namespaces). */
function namespaceAllowed(l: ListenerN, gwNs: string, ns: string, namespaces: ReadonlyMap<string, { labels: Record<string, string> }>): boolean {
  const from = l.allowedRoutes.namespaces.from;
  if (from === 'All') return true;
  if (from === 'Same') return ns === gwNs;
  if (from === 'Selector') {
    const labels = namespaces.get(ns)?.labels;
    return !!labels && l.allowedRoutes.namespaces.selector !== undefined && selects(l.allowedRoutes.namespaces.selector, labels);
  }
  return false;
}

export function selects(sel: LabelSelectorN, labels: Record<string, string>): boolean {
  for (const [k, v] of Object.entries(sel.matchLabels)) if (labels[k] !== v) return false;
  for (const e of sel.matchExpressions) {
    const has = Object.hasOwn(labels, e.key);
    const v = labels[e.key];
    if (e.operator === 'In' && !(has && e.values.includes(v!))) return false;
    if (e.operator === 'NotIn' && has && e.values.includes(v!)) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

/** The hosts a route with `hostnames` serves on a listener of `listener` hostname; null = they do not intersect. */
export function intersectHosts(listener: string | undefined, hostnames: readonly string[]): string[] | null {
  if (!hostnames.length) return [listener ?? '_'];
  if (!listener) return [...hostnames];
  const out: string[] = [];
  for (const h of hostnames) {
    if (h === listener) out.push(h);
    else if (listener.startsWith('*.') && covers(listener, h)) out.push(h);
    else if (h.startsWith('*.') && covers(h, listener)) out.push(listener);
  }
  return out.length ? [...new Set(out)] : null;
}

/** Gateway API wildcards: "*.example.com" matches any name with one or more labels before ".example.com". */
export function covers(wildcard: string, name: string): boolean {
  const suffix = wildcard.slice(1); // ".example.com"
  return name.length > suffix.length && name.endsWith(suffix) && (!name.startsWith('*.') || name.length > wildcard.length);
}

/** How specifically a listener hostname matches a host: higher wins; -1 = no match. */
function specificity(listener: string | undefined, host: string): number {
  if (!listener) return 0;
  if (listener === host) return 100000;
  if (listener.startsWith('*.') && (covers(listener, host) || (host.startsWith('*.') && host === listener))) return listener.length;
  return -1;
}

/** The ResolvedRefs of a route's backends (the same for every parent). */
function backendRefsState(kind: 'HTTPRoute' | 'GRPCRoute', rt: HttpRouteRecord, hasService: (key: string) => boolean, granted: Granted): Cond {
  const all = rt.rules.flatMap((rule) => [...rule.backends, ...rule.filters.flatMap((f) => (f.type === 'RequestMirror' ? [f.backend] : []))]);
  return refsState(kind, rt.namespace, all, hasService, granted);
}

/** ResolvedRefs of a list of backendRefs of a route of `kind` in `ns`: the first problem, or True. */
function refsState(kind: string, ns: string, backends: readonly BackendRefN[], hasService: (key: string) => boolean, granted: Granted): Cond {
  for (const b of backends) {
    const p = backendProblem(kind, ns, b, hasService, granted);
    if (p) return p;
  }
  return ok('ResolvedRefs');
}

/** Why traffic may not go to one backendRef (a ResolvedRefs False condition), or undefined when it may. */
function backendProblem(kind: string, ns: string, b: BackendRefN, hasService: (key: string) => boolean, granted: Granted): Cond | undefined {
  const where = `backendRef ${b.namespace}/${b.name}`;
  if (b.group !== '' || b.kind !== 'Service') return no('InvalidKind', `${where}: ${b.group || 'core'}/${b.kind} is not a kind Portico sends traffic to (core Service only)`);
  if (!granted({ group: GATEWAY_GROUP, kind, namespace: ns }, { group: '', kind: 'Service', namespace: b.namespace, name: b.name })) {
    return no('RefNotPermitted', `${where}: no ReferenceGrant in ${b.namespace} lets ${kind}s of ${ns} use it`);
  }
  if (!hasService(`${b.namespace}/${b.name}`)) return no('BackendNotFound', `${where}: Service not found`);
  if (b.port === undefined) return no('UnsupportedValue', `${where}: a Service backendRef needs a port`);
  return undefined;
}

/**
 * The Gateway a parentRef names (kind Gateway), or the ListenerSet it names and that set's Gateway (kind
 * ListenerSet), when Portico's; undefined otherwise (not Portico's to report).
 */
function parentOf(state: GatewayApiState, ref: ParentRefN): { gw: GatewayState; set?: ListenerSetState } | undefined {
  if (ref.group !== GATEWAY_GROUP) return undefined;
  const key = `${ref.namespace}/${ref.name}`;
  if (ref.kind === 'Gateway') {
    const gw = state.gateways.get(key);
    return gw ? { gw } : undefined;
  }
  if (ref.kind === 'ListenerSet') {
    const set = state.listenerSets.get(key);
    const gw = set ? state.gateways.get(set.gateway) : undefined;
    return gw && set ? { gw, set } : undefined;
  }
  return undefined;
}

/**
 * One parentRef's state; the listeners that count the route (attachedRoutes) are counted and added to `counted`.
 * `set`: the parentRef names that ListenerSet of the Gateway — its listeners are the candidates (sectionName is one
 * of its listener names); otherwise the Gateway's own listeners are, never those of its ListenerSets.
 */
function attach(kind: string, rt: { namespace: string; hostnames: readonly string[] }, ref: ParentRefN, gw: GatewayState, namespaces: ReadonlyMap<string, { labels: Record<string, string> }>, refs: Cond, counted: ListenerState[], set?: ListenerSetState): ParentState {
  const owner = set ? `ListenerSet ${set.key}` : `Gateway ${gw.key}`;
  // allowedRoutes.namespaces.from Same: the namespace of the object the listener is written in.
  const ownKey = set ? set.key : gw.key;
  const gwNs = ownKey.slice(0, ownKey.indexOf('/'));
  const state = (accepted: Cond, attached: Attachment[] = []): ParentState => ({ ref, accepted, resolvedRefs: refs, attached });
  if (set && set.accepted.status !== 'True') return state(no('NoMatchingParent', `ListenerSet ${set.key} is not accepted (${set.accepted.reason}): no route attaches to its listeners`));
  const candidates = gw.listeners.filter((l) => l.set === set?.key && (ref.sectionName === undefined || l.name === ref.sectionName) && (ref.port === undefined || l.port === ref.port));
  if (!candidates.length) return state(no('NoMatchingParent', `${owner} has no listener${ref.sectionName ? ` named ${ref.sectionName}` : ''}${ref.port ? ` on port ${ref.port}` : ''}`));
  // Listeners a route may attach to: accepted and not conflicted (one whose certificate is missing still counts
  // its routes; it serves none until the certificate is there).
  const allowed = candidates.filter(
    (l) => l.accepted.status === 'True' && l.conflicted.status !== 'True' && l.supportedKinds.some((k) => k.group === GATEWAY_GROUP && k.kind === kind) && namespaceAllowed(l.spec, gwNs, rt.namespace, namespaces),
  );
  if (!allowed.length) return state(no('NotAllowedByListeners', `no listener of ${owner} that this parentRef names allows ${kind}s of namespace ${rt.namespace}`));
  // A route attaches to a listener that allows it and whose hostname intersects its own (the listener counts it);
  // the hosts it then serves there are that intersection, minus those a more specific listener of the port serves.
  const attached: Attachment[] = [];
  let intersecting = 0;
  for (const l of allowed) {
    const hosts = intersectHosts(l.hostname, rt.hostnames);
    if (!hosts) continue;
    l.attachedRoutes++;
    counted.push(l);
    intersecting++;
    if (!l.usable || l.podPort === undefined) continue;
    const samePort = gw.listeners.filter((x) => x.usable && x.port === l.port);
    const mine = hosts.filter((h) => {
      const s = specificity(l.hostname, h);
      return !samePort.some((x) => x !== l && specificity(x.hostname, h) > s);
    });
    if (mine.length) attached.push({ gateway: gw.key, listener: l, hosts: mine });
  }
  if (!intersecting) return state(no('NoMatchingListenerHostname', `no hostname of the route matches a listener of ${owner} it may attach to`));
  return state(ok('Accepted', `attached to ${owner}${set ? ` (of Gateway ${gw.key})` : ''}`), attached);
}
