// The draft: what the phases of one translation (phases/*.ts) read and fill in, in the order translate() runs them.
// Each phase owns the fields it fills (named next to each group below); later phases only read them. Nothing here
// does I/O or reads a clock: a draft is a pure function of the snapshot, the options and the memo.
import type { Backend, Certificate, ClientAuth, ConsumerSet, HostRoutes, PassthroughHost, PluginInstance, Profile, Route, RouteConditions, RouteMirror, RouteRule } from '../config/types.ts';
import type { ModelSnapshot } from '../model/model.ts';
import type { IngressClassInfo, NormalizedIngress, NormalizedUpstream, ServiceBackendRef } from '../model/types.ts';
import type { ParsedAnnotations } from '../annotations/table.ts';
import type { ClientCertSpec } from '../annotations/auth-tls.ts';
import { globalAuthSpec } from '../annotations/plugins.ts';
import type { NginxTuning } from '../config/nginx-tuning.ts';
import type { IngressStatus, PathClaim, TranslateEvent, TranslateOptions } from './types.ts';
import type { TranslateMemo } from './memo.ts';
import { externalAuthInstance, type AuthTimeouts } from './plugin-instances.ts';
import { rateLimitStoreOf, type RateLimitStore } from '../model/global-rate-limit-config.ts';

// ---- what a kind plugs into the translation: its claim processor (kinds/<kind>/processor.ts) ----------------------

/** A contributor of paths (a served object of a kind with a claim processor), ordered by age across kinds. */
export interface Owner {
  /** Kind-qualified reference ("Ingress/ns/name"). */
  ref: string;
  created: string;
  ns: string;
  /** The object's model record: only its own processor reads it. */
  record: object;
  proc: ClaimProcessor;
}

/** One path an object asks for, as its processor hands it to the claims phase (derived once per record). */
export interface KindClaim {
  pc: PathClaim;
  /** Request conditions (methods, headers, query) it is matched with: part of what claims conflict on. */
  conditions?: RouteConditions;
  /** Orders the rules of the same path, match and conditions: higher first (default 0). */
  priority?: number;
  /** The path is claimed without a backend: its plugins answer, else 503. */
  noBackend?: boolean;
  /** The backends its requests are split over (default: the claim's own, pc.ref). */
  backends?: readonly ServiceBackendRef[];
  /** The Plugin objects (names in its namespace) it runs. */
  plugins: readonly string[];
}

/** What an object asks for TLS passthrough: the hosts it serves, and how each is passed through if it asks. */
export type PassthroughAsk =
  | 'ignored' // left out of passthrough altogether (its processor said why)
  | {
      hosts: readonly string[];
      /** Present when it asks for passthrough: the Service port a host's TLS connections go to (null: none). */
      target?: (host: string) => { ref: ServiceBackendRef; via: string; paths: string[] } | null;
      /** Called once a host of it is passed through. */
      passed?: () => void;
    };

/** The plugins an object's own redirects are (app-root, from-to-www-redirect): their id prefix and display name. */
export interface PluginNaming {
  base: string;
  name: string;
}

/** What the rules of one host are built with besides its claims (phases/routes.ts). */
export interface HostContext {
  tls: boolean;
  /** Namespaces whose Ingresses' paths on the host are all regexes (use-regex, rewrite-target). */
  regexNamespaces: ReadonlySet<string>;
  tuning: NginxTuning;
  /** Profiles and objects the host's rules use and program (what the memo replays). */
  used: Profile[];
  programmed: string[];
}

/** A claim's route and the directive-profile settings of its own (phases/routes.ts makes the rule and profile). */
export interface RouteDraft {
  route: Route;
  bodySize?: string | undefined;
  retries: { attempts: number; on: string[] } | undefined;
  fromAnnotations: Partial<Omit<Profile, 'name'>>;
  /** The backend protocol it asks for when no Upstream sets one. */
  protocol?: 'HTTPS' | 'GRPC' | 'GRPCS' | 'FCGI' | undefined;
  /** TLS-to-backend settings of its own (they replace the defaults of an Upstream without tls settings). */
  proxySsl?: Partial<Omit<Profile, 'name'>> | undefined;
  testInvalidDirective?: boolean;
}

/**
 * How one kind's objects become paths of the kind-agnostic translation. The phases call these hooks and never look
 * at which kind an owner is; a kind implements the ones its objects need (kinds/<kind>/processor.ts), and
 * kinds/processors.ts lists the processors in the order their objects are admitted.
 */
export interface ClaimProcessor {
  /** The kind (the prefix of its objects' kind-qualified refs). */
  readonly kind: string;
  /** Every object of the kind in the snapshot: its status (served or not), an owner (d.owners) for each served one. */
  admit(d: Draft, classes: ReadonlyMap<string, IngressClassInfo>): void;
  /** Its records in a snapshot, and the hosts and backends one reaches in it (what the incremental translation follows). */
  records(snap: ModelSnapshot): Iterable<object>;
  reach(record: object, snap: ModelSnapshot, o: TranslateOptions): { hosts: readonly string[]; backends: readonly string[] };
  /** The paths an owner claims (the oldest claim on host + path wins). */
  claims(ow: Owner): readonly KindClaim[];
  /** Paths it claims only where no object's claims took them (default backends), oldest owner first. */
  fallbacks?(ow: Owner): readonly KindClaim[];
  /** Its ingress-nginx annotations: balancing settings of its backends, the ConfigMap IP lists it replaces. */
  annotations?(ow: Owner): ParsedAnnotations | undefined;
  /** Why every path of the object fails closed, from the object itself (its own Warnings say it, once). */
  closedReasons?(d: Draft, ow: Owner): string[];
  /** Plugin ids of its own for a winning claim (registered in d.plugins); what cannot apply is added to `reasons`. */
  ownPlugins?(d: Draft, ow: Owner, pc: PathClaim, reasons: string[]): string[];
  /** The client-certificate CA it asks for on its hosts (auth-tls-*). */
  clientCert?(ow: Owner): ClientCertSpec | undefined;
  /** Its TLS sections. */
  tls(ow: Owner): readonly { hosts: readonly string[]; secretName: string | null }[];
  /**
   * TLS passthrough (default: the hosts of its claims, never passed through). Asked of every owner; without
   * --enable-ssl-passthrough the answer is not used (the processor warns about what it asked for in vain).
   */
  passthrough?(d: Draft, ow: Owner): PassthroughAsk;
  /** The route of a winning claim, with the profile settings of its own. */
  route(d: Draft, c: Claim, cx: HostContext, up: NormalizedUpstream | undefined): RouteDraft;
  /** Its route depends on more than the claim, backend and Upstream (never reused from the memo). */
  volatile?(d: Draft, c: Claim): boolean;
  /** The claim makes every path of its namespace on the host a regex (ingress-nginx: use-regex, rewrite-target). */
  regexHost?(c: Claim): boolean;
  /** The app-root redirect it asks for on the host, if any. */
  appRoot?(c: Claim): { path: string; naming: PluginNaming } | undefined;
  /** Its last say on a rule (the router's path and match, redirects of a trailing slash). */
  finishRule?(c: Claim, cx: HostContext, rule: RouteRule): void;
  /** from-to-www-redirect: the naming of its redirect plugin when it asks for one. */
  wwwRedirect?(ow: Owner): PluginNaming | undefined;
}

/** The path that won host + (match, path[, conditions]): who serves it, with what backend and plugins. */
export interface Claim {
  pc: PathClaim;
  owner: Owner;
  /** Backend id, or null when the path fails closed or has no backend. */
  backendId: string | null;
  closed: string | undefined;
  /** The claim as its processor made it. */
  kc: KindClaim;
  pluginIds: string[];
  /** Why it is closed was reported already (a Warning of its own). */
  reported?: true;
}

/** What an Ingress's routes name besides their own backend (default-backend, mirror-target, --default-backend-service). */
export interface SideBackends {
  defaultBackendId?: string;
  /** --default-backend-service's backend: where the route's custom-http-errors go (it has no default-backend). */
  errorBackendId?: string;
  mirror?: RouteMirror;
}

/** The global external authentication of the ConfigMap (global-auth-url): the instance, or why it cannot apply. */
export type GlobalAuth = ReturnType<typeof externalAuthInstance> | { error: string } | null;

export class Draft {
  // ---- what every phase reports: Events, and the status of each object (kind-qualified ref) ----------------------
  readonly events: TranslateEvent[] = [];
  readonly status = new Map<string, IngressStatus>();

  // ---- settings derived once from the options and the ConfigMap ----------------------------------------------------
  /** Portico's own addresses, never endpoints; `ownKey` is their memo key. */
  readonly own: Set<string>;
  readonly ownKey: string;
  readonly exclusiveHosts: boolean;
  /** Proxy timeouts of auth subrequests (the ConfigMap's), no-auth-locations, global-auth-url. */
  readonly authTimeouts: AuthTimeouts;
  readonly noAuthList: readonly string[];
  readonly globalAuth: GlobalAuth;
  /** The ConfigMap's global rate limit settings (status, fail-open, Redis) every policy-redis rate limit gets. */
  readonly rateLimitStore: RateLimitStore;

  // ---- objects (phases/objects.ts): the served ones, oldest first, and why some fail closed ----------------------
  /** The claim processors, in the order their objects are admitted. */
  readonly processors: readonly ClaimProcessor[];
  /** Every served object with paths, oldest first. */
  readonly owners: Owner[] = [];
  /** The served Ingresses, oldest first (what the Ingress-only phases read: canaries, side backends, aliases). */
  readonly served: NormalizedIngress[] = [];
  /** Ingress key → why all its paths fail closed: access control, proxy-ssl-*, ModSecurity, FastCGI params. */
  readonly closedReason = new Map<string, string>();
  readonly sslClosed = new Map<string, string>();
  readonly wafClosed = new Map<string, string>();
  /** FastCGI params that cannot be applied (fastcgi-params-configmap) or a namespace's FastCGI settings over its bound. */
  readonly fcgiClosed = new Map<string, string>();

  // ---- plugins (plugin-refs.ts, auth-targets.ts, phases/claims.ts) -----------------------------------------------
  readonly plugins: Record<string, PluginInstance> = {};
  /** Auth Services of external-auth plugins and auth-url: backend id → (referring object, service). */
  readonly authBackends = new Map<string, { ref: string; ns: string; service: string; port: number }>();
  /** Auth backends that are not a Service: a host Portico resolves (externalName), or an allowed IP literal. */
  readonly extAuthBackends = new Map<string, { host?: string; address?: string; port: number; noClusterIPs?: true }>();
  /** Gateway API listener filters (phases/listener-filters.ts): per pod port, per listener hostname, the plugin ids in order. */
  readonly listenerChains = new Map<number, Record<string, string[]>>();
  /** Plugin ids per (namespace, names) list, in execution order, or why the path must fail closed. */
  readonly pluginMemo = new Map<string, { ids: string[]; closed?: string }>();
  /** Cluster IP → Service, built when first needed. */
  vips: Map<string, string> | undefined;

  // ---- paths (phases/claims.ts): host → (match|path[|conditions]) → claim -----------------------------------------
  readonly hosts = new Map<string, Map<string, Claim>>();
  /** namespace-exclusive-hosts: the first owner (oldest first) to claim a host gives it to its namespace. */
  readonly hostNamespace = new Map<string, Owner>();
  readonly refusedHost = new Set<string>();
  /** The hosts with paths, in router order (exact, wildcards, "_"). */
  hostList: string[] = [];

  // ---- client certificates (phases/client-certs.ts), canaries (phases/canaries.ts) ---------------------------------
  readonly hostCa = new Map<string, { owner: Owner; spec: ClientCertSpec }>();
  /** Main backend id → the canary Ingress attached to it and its backend. */
  readonly canaryOf = new Map<string, { ing: NormalizedIngress; ref: ServiceBackendRef }>();

  // ---- TLS (phases/tls.ts, phases/passthrough.ts) ------------------------------------------------------------------
  readonly tlsHosts = new Map<string, { ref: string; secretKey: string | null }>();
  readonly certificates: Record<string, Certificate> = {};
  readonly passthrough = new Map<string, PassthroughHost>();

  // ---- backends (phases/upstreams.ts, phases/backends.ts, backend.ts) ----------------------------------------------
  readonly upstreamsBySvc = new Map<string, NormalizedUpstream[]>();
  /** Backend id → the Upstream applied to it (for route timeouts, retries, protocol). */
  readonly upstreamOf = new Map<string, NormalizedUpstream>();
  readonly backends: Record<string, Backend> = {};
  /** Backend id → the object whose settings it has (the oldest whose path to it is served). */
  readonly backendOwner = new Map<string, { ref: string; ann: ParsedAnnotations | undefined }>();
  /** Warnings and notes given once per (object, backend). */
  readonly reported = new Set<string>();
  /** Backend id → the Warning about endpoint addresses refused for it (given to every Ingress using it). */
  readonly forbiddenNote = new Map<string, string>();
  readonly consumers: Record<string, ConsumerSet> = {};
  /** Ingress key → its default-backend and mirror-target backends. */
  readonly sideOf = new Map<string, SideBackends>();
  /** --default-backend-service's backend, where what no path matches goes (resolveSideBackends sets it). */
  unmatchedBackendId: string | undefined;

  // ---- routes (phases/routes.ts, phases/www-redirect.ts, phases/server-alias.ts), handshakes (phases/client-auth.ts)
  readonly routes: Record<string, HostRoutes> = {};
  readonly profiles = new Map<string, Profile>();
  readonly clientAuth: Record<string, ClientAuth> = {};

  readonly snap: ModelSnapshot;
  readonly o: TranslateOptions;
  readonly memo: TranslateMemo | undefined;

  constructor(snap: ModelSnapshot, o: TranslateOptions, processors: readonly ClaimProcessor[], memo?: TranslateMemo) {
    this.processors = processors;
    this.snap = snap;
    this.o = o;
    this.memo = memo;
    const g = snap.global;
    this.own = new Set(o.ownAddresses ?? []);
    this.ownKey = [...this.own].sort().join(',');
    this.exclusiveHosts = g.namespaceExclusiveHosts === true;
    this.authTimeouts = { connect: g.proxyConnectTimeoutSeconds, send: g.proxySendTimeoutSeconds, read: g.proxyReadTimeoutSeconds };
    this.noAuthList = g.noAuthLocations ?? [];
    const gSpec = globalAuthSpec({
      url: g.globalAuthUrl ?? '',
      method: g.globalAuthMethod ?? '',
      signin: g.globalAuthSignin ?? '',
      signinRedirectParam: g.globalAuthSigninRedirectParam ?? '',
      responseHeaders: g.globalAuthResponseHeaders ?? '',
      requestRedirect: g.globalAuthRequestRedirect ?? '',
      cacheKey: g.globalAuthCacheKey ?? '',
      cacheDuration: g.globalAuthCacheDuration ?? '',
      alwaysSetCookie: g.globalAuthAlwaysSetCookie ?? '',
      snippet: g.globalAuthSnippet ?? '',
    });
    this.rateLimitStore = rateLimitStoreOf(g);
    this.globalAuth = !gSpec ? null : 'error' in gSpec ? { error: gSpec.error } : externalAuthInstance(gSpec.spec, 'ConfigMap global-auth-url', this.authTimeouts);
  }

  /** A Warning Event about an object, also one of its status problems. */
  readonly warn = (ref: string, reason: string, message: string): void => {
    this.events.push({ ref, type: 'Warning', reason, message });
    this.status.get(ref)?.problems.push(message);
  };

  /** A reference of an object that could not be resolved (ResolvedRefs=False for CRDs). */
  readonly unresolved = (ref: string, what: string): void => {
    const st = this.status.get(ref);
    if (st && !(st.unresolved ??= []).includes(what)) st.unresolved.push(what);
  };
}

/** A phase of the translation: reads what earlier phases put in the draft and adds its own part. */
export type Phase = (d: Draft) => void;

/** "Ingress/ns/name" → "Ingress ns/name", as messages name an object. */
export const describe = (ref: string): string => ref.replace('/', ' ');

/** A canary Ingress: its paths attach to its main Ingress's locations instead of claiming their own. */
export const isCanary = (i: NormalizedIngress): boolean => i.annotations.canary === true;
