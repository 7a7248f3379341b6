// The draft: what the phases of one translation (phases/*.ts) read and fill in, in the order translate() runs them.
// Each phase owns the fields it fills (named next to each group below); later phases only read them. Nothing here
// does I/O or reads a clock: a draft is a pure function of the snapshot, the options and the memo.
import type { Backend, Certificate, ClientAuth, ConsumerSet, HostRoutes, PassthroughHost, PluginInstance, Profile, Route } from '../config/types.ts';
import type { ModelSnapshot } from '../model/model.ts';
import type { NormalizedIngress, NormalizedRoute, NormalizedUpstream, ServiceBackendRef } from '../model/types.ts';
import type { ParsedAnnotations } from '../annotations/table.ts';
import type { ClientCertSpec } from '../annotations/auth-tls.ts';
import { globalAuthSpec } from '../annotations/plugins.ts';
import type { IngressStatus, TranslateEvent, TranslateOptions } from './types.ts';
import type { TranslateMemo } from './memo.ts';
import type { Owner } from './objects.ts';
import type { PathClaim, RouteClaim } from './claims.ts';
import { externalAuthInstance, type AuthTimeouts } from './plugin-instances.ts';

/** The path that won host + (match, path[, conditions]): who serves it, with what backend and plugins. */
export interface Claim {
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

/** What an Ingress's routes name besides their own backend (default-backend, mirror-target). */
export interface SideBackends {
  defaultBackendId?: string;
  mirror?: NonNullable<Route['mirror']>;
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

  // ---- objects (phases/objects.ts): the served ones, oldest first, and why some fail closed ----------------------
  readonly served: NormalizedIngress[] = [];
  readonly routesServed: NormalizedRoute[] = [];
  readonly owners: Owner[] = [];
  /** Ingress key → its owner entry. */
  readonly ownerOf = new Map<string, Owner>();
  /** Ingress key → why all its paths fail closed: access control, proxy-ssl-*, ModSecurity. */
  readonly closedReason = new Map<string, string>();
  readonly sslClosed = new Map<string, string>();
  readonly wafClosed = new Map<string, string>();

  // ---- plugins (plugin-refs.ts, auth-targets.ts, phases/claims.ts) -----------------------------------------------
  readonly plugins: Record<string, PluginInstance> = {};
  /** Auth Services of external-auth plugins and auth-url: backend id → (referring object, service). */
  readonly authBackends = new Map<string, { ref: string; ns: string; service: string; port: number }>();
  /** Auth backends that are not a Service: a host Portico resolves (externalName), or an allowed IP literal. */
  readonly extAuthBackends = new Map<string, { host?: string; address?: string; port: number; noClusterIPs?: true }>();
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

  // ---- routes (phases/routes.ts, phases/www-redirect.ts, phases/server-alias.ts), handshakes (phases/client-auth.ts)
  readonly routes: Record<string, HostRoutes> = {};
  readonly profiles = new Map<string, Profile>();
  readonly clientAuth: Record<string, ClientAuth> = {};

  readonly snap: ModelSnapshot;
  readonly o: TranslateOptions;
  readonly memo: TranslateMemo | undefined;

  constructor(snap: ModelSnapshot, o: TranslateOptions, memo?: TranslateMemo) {
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
