// The desired data-plane configuration: what the pure translation (reconcilers/translate) produces from the
// model, and what the gateway reconciler (reconcilers/gateway) applies to nginx. Both import it from here; neither
// imports the other's types. It has two halves:
//   - `structure`: what needs nginx.conf re-rendered and nginx reloaded — global settings and directive profiles,
//     nothing that grows with the number of Ingresses;
//   - `data`: what the Lua side applies at runtime, sent over the configuration API's unix socket (no reload):
//     routes per host, backends, certificates.
// Every string here has already passed a zod schema restricting its alphabet (see reconcilers/translate/safe.ts);
// the renderer still emits each one through an escaping helper.

export interface GatewayConfig {
  structure: Structure;
  data: DataPlane;
}

/**
 * Settings that live in nginx.conf. Changing any of them means render + `nginx -t` + reload. Nothing here grows
 * with the number of Ingresses: hosts and paths are routes (data), and a route's nginx-only directives are a
 * *profile* that many routes share.
 */
export interface Structure {
  global: GlobalSettings;
  /** The directive profiles some route uses, sorted by name. Only a never-seen profile reloads nginx. */
  profiles: Profile[];
  /**
   * Some backend balances with ewma, so nginx runs a log-phase handler feeding response times to Lua. Kept off
   * otherwise (it costs every request), so switching the first backend to ewma is the one balancing change that
   * reloads.
   */
  observeLatency: boolean;
}

/**
 * nginx directives Lua cannot set per request, as one named location (`@portico_<name>`) the router sends a
 * request to. The name is derived from the content, so equal settings always share one location.
 */
export interface Profile {
  /** "p_" + hex digest of the settings: [a-z0-9_] only. */
  name: string;
  /** client_max_body_size (nginx size syntax; "0" = unlimited). */
  proxyBodySize?: string;
  /** Test hook only (--enable-test-hooks): render a directive nginx rejects, to exercise fault isolation. */
  testInvalidDirective?: boolean;
}

export interface GlobalSettings {
  workerProcesses: number | 'auto';
  workerShutdownTimeoutSeconds: number;
  keepAliveSeconds: number;
  keepAliveRequests: number;
  /** nginx size syntax, e.g. "1m", "512k", "0" (unlimited). */
  proxyBodySize: string;
  proxyConnectTimeoutSeconds: number;
  proxyReadTimeoutSeconds: number;
  proxySendTimeoutSeconds: number;
  useForwardedHeaders: boolean;
  /** Upstream access-log format: literal text and `$variables`, restricted alphabet. Empty = Portico's default. */
  logFormatUpstream: string;
  sslRedirect: boolean;
  hsts: boolean;
  hstsMaxAgeSeconds: number;
  hstsIncludeSubdomains: boolean;
  hstsPreload: boolean;
  /**
   * ConfigMap lua-shared-dicts: sizes in KiB of the shared-memory zones holding backends and certificates.
   * Absent = 131072 (128 MiB) and 32768 (32 MiB).
   */
  luaSharedDicts?: { dataKb: number; certsKb: number };
  /**
   * ConfigMap proxy-real-ip-cidr: proxies trusted to set X-Forwarded-For/-Proto/-Host/-Port when
   * useForwardedHeaders is on (set_real_ip_from). Absent or empty = nobody is trusted.
   */
  proxyRealIpCidr?: string[];
  listen: {
    httpPort: number;
    httpsPort: number;
    /** nginx health port (/healthz only), always bound to 127.0.0.1. The configuration API is a unix socket. */
    statusPort: number;
    /** Address the public listeners bind to (default 127.0.0.1 for local runs, 0.0.0.0 in a pod). */
    address: string;
    /** Ports clients use, sent as X-Forwarded-Port (--published-http-port / --published-https-port; absent = 80 / 443). */
    publishedHttpPort?: number;
    publishedHttpsPort?: number;
  };
}

/** Every route of one host (exact, "*.one-label" wildcard, or "_" for rules without host): one unit of update. */
export interface HostRoutes {
  /** True when a TLS section of a served Ingress covers this host (HSTS, ssl-redirect); the certificate is data. */
  tls: boolean;
  /** Sorted: exact first, then prefix by descending length, then regex in the order ingress-nginx uses. */
  rules: RouteRule[];
}

export type PathMatch = 'exact' | 'prefix' | 'regex';

/**
 * One path of a host, matched by the Lua router exactly as nginx matches locations: an exact path first, then the
 * longest prefix (element-wise: "/foo" matches "/foo" and "/foo/bar", not "/foobar"), unless a regex (tried in
 * order, case-insensitive as ingress-nginx's `~*`) matches.
 */
export interface RouteRule {
  /** Path as written by the user (already validated); for prefix it has no trailing slash unless it is "/". */
  path: string;
  match: PathMatch;
  route: Route;
}

export interface Route {
  /** Kind-qualified reference of the object the route came from: "Ingress/namespace/name". */
  source: string;
  /** Backend id (into data.backends); null = answer without proxying (see `action`). */
  backendId: string | null;
  /** Without a backend: 404 (nothing to serve) or 503 (fails closed, or the backend cannot be used). */
  action?: 'not_found' | 'unavailable';
  /** Plain-HTTP requests get a redirect to HTTPS (308) instead of being proxied. */
  sslRedirect: boolean;
  /** Directive profile (Structure.profiles) the request is proxied with; absent = the default location. */
  profile?: string;
  /** With a profile: the body-size limit in bytes the router checks against Content-Length (0 = unlimited). */
  maxBodyBytes?: number;
  /** proxy timeouts in seconds, set per request by the balancer (absent = the global ones). */
  timeouts?: { connect: number; send: number; read: number };
  /**
   * Set when the Ingress asks for access control Portico cannot apply (e.g. auth-url): the route fails closed
   * (action "unavailable"). Why, for events and logs — never sent to clients.
   */
  closedReason?: string;
}

/** Runtime data, pushed to Lua without reload. */
export interface DataPlane {
  /** Keyed by host ("_" = requests whose host no other entry serves). */
  routes: Record<string, HostRoutes>;
  /** Keyed by backend id. */
  backends: Record<string, Backend>;
  /** Keyed by server name (exact or wildcard host). PEM strings. */
  certificates: Record<string, Certificate>;
  /** Certificate served for unknown SNI / no SNI. */
  defaultCertificate: Certificate | null;
}

export interface Certificate {
  /** PEM chain. */
  cert: string;
  /** PEM private key. */
  key: string;
  /** "namespace/name" of the Secret, for events and metrics. */
  source: string;
  /** Not-after, ISO-8601. */
  notAfter: string;
}

export type BalanceAlgorithm = 'round_robin' | 'ewma' | 'chash' | 'cookie';

export interface Backend {
  /** "<namespace>_<service>_<port>" — [a-z0-9_.-] only. */
  id: string;
  /** Endpoints that may receive new requests (ready, or serving+terminating only when nothing else is). */
  endpoints: Endpoint[];
  balance: BalanceAlgorithm;
  /** For chash: the nginx variable to hash on, e.g. "$request_uri". */
  hashBy?: string;
  /** Canary split for the locations using this backend (ingress-nginx semantics: header > cookie > weight). */
  canary?: {
    backendId: string;
    weight: number;
    weightTotal: number;
    header?: string;
    headerValue?: string;
    headerPattern?: string;
    cookie?: string;
  };
  /** For cookie affinity. */
  cookie?: { name: string; maxAgeSeconds?: number; mode: 'balanced' | 'persistent' };
  /** ExternalName services: a DNS name the gateway resolves into endpoints, and the port to use. */
  externalName?: string;
  externalPort?: number;
  /** Why the backend has no endpoints (for events / logs), e.g. "service default/foo not found". */
  unavailableReason?: string;
}

export interface Endpoint {
  address: string;
  port: number;
  weight: number;
}
