// The desired data-plane configuration: what the pure translation (reconcilers/translate) produces from the
// model, and what the gateway reconciler (reconcilers/nginx-driver) applies to nginx. Both import it from here; neither
// imports the other's types. It has two halves:
//   - `structure`: what needs nginx.conf re-rendered and nginx reloaded — global settings and directive profiles,
//     nothing that grows with the number of Ingresses;
//   - `data`: what the Lua side applies at runtime, sent over the configuration API's unix socket (no reload):
//     routes per host, backends, certificates.
// Every string here has already passed a zod schema restricting its alphabet (see reconcilers/values/safe.ts);
// the renderer still emits each one through an escaping helper.

import type { NginxTuning } from './nginx-tuning.ts';
import { PLUGINS, type PluginShape } from './plugins/index.ts';

export type { AuthTemplatePart, IngressNginxAuth } from './plugins/external-auth.ts';
export type { SnippetCondition, SnippetStatement, SnippetValue } from './plugins/snippet.ts';

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
  /** TCP/UDP services (nginx's stream section); absent when there are none. Endpoint changes here reload nginx. */
  stream?: StreamSection;
  /**
   * --enable-ssl-passthrough (absent when the flag is off): the hosts whose TLS connections go, undecrypted, to a
   * Service (chosen by the SNI of the ClientHello), as the translation decided them. The gateway resolves their
   * endpoints into the stream section (nginx-driver/stream.ts); present with no host at all, it still makes every HTTPS
   * connection pass through the SNI check first.
   */
  passthrough?: PassthroughHosts;
  /** Gateway API TCP, UDP and TLS listeners (absent when there are none): rendered into the stream section. */
  gatewayStreams?: GatewayStream[];
}

import type { GatewayStream, PassthroughHosts, StreamSection } from './stream-types.ts';
export type { GatewayStream, GatewayStreamCertificate, GatewayStreamSection, GatewayStreamTarget, PassthroughHosts, PassthroughHost, StreamSection, StreamPassthrough, StreamServer } from './stream-types.ts';

/**
 * nginx directives Lua cannot set per request, as one named location (`@portico_<name>`) the router sends a
 * request to. The name is derived from the content, so equal settings always share one location.
 */
export interface Profile {
  /** "p_" + hex digest of the settings: [a-z0-9_] only. */
  name: string;
  /** client_max_body_size (nginx size syntax; "0" = unlimited). */
  proxyBodySize?: string;
  /** proxy_next_upstream conditions (Route/Upstream retries.on), e.g. "error timeout http_502". */
  nextUpstream?: string;
  /** proxy_next_upstream_tries (attempts + 1). */
  nextUpstreamTries?: number;
  /** Upstream protocol other than plain HTTP: proxy_pass https://, grpc_pass grpc(s):// or fastcgi_pass (FCGI). */
  backendProtocol?: 'HTTPS' | 'GRPC' | 'GRPCS' | 'FCGI';
  /**
   * backend-protocol FCGI (ingress-nginx's fastcgi-index and fastcgi-params-configmap): fastcgi_index, and the params
   * sent after (and in place of) the standard ones the renderer adds. Each value has its variables braced (`${name}`),
   * validated by reconcilers/annotations/groups/fastcgi.ts; the renderer's escaping helper checks both again.
   */
  fastcgi?: { index?: string; params: { name: string; value: string }[] };
  /** SNI / name checked for TLS to the backend (proxy_ssl_name). */
  sslServerName?: string;
  /**
   * Verify the backend's certificate against this PEM bundle of CA certificates (Upstream tls.verify): written to a
   * file named by its digest in the runtime directory (proxy_ssl_trusted_certificate) before nginx -t.
   */
  trustedCa?: string;
  /**
   * With trustedCa: the backend's certificate must carry one of these subject alternative names ("DNS:<name>", a
   * leading "*." for a wildcard, or "URI:<absolute URI>"; BackendTLSPolicy subjectAltNames), and sslServerName is
   * then only the SNI, never checked. Served by Portico's nginx module portico_upstream_ssl
   * (portico_upstream_ssl_verify_names) in place of proxy_ssl_verify / grpc_ssl_verify; without the module the
   * profile's requests are answered 502, never proxied unverified.
   */
  sslVerifyNames?: string[];
  /** proxy_ssl_verify_depth with trustedCa (ingress-nginx's proxy-ssl-verify-depth); absent = 4. */
  sslVerifyDepth?: number;
  /** false: sslServerName is only the name verified, not sent as SNI (proxy_ssl_server_name off). */
  sslSni?: false;
  /** proxy_ssl_protocols: TLSv1 / TLSv1.1 / TLSv1.2 / TLSv1.3, space-separated (proxy-ssl-protocols). */
  sslProtocols?: string;
  /** proxy_ssl_ciphers: an OpenSSL cipher list (proxy-ssl-ciphers). */
  sslCiphers?: string;
  /**
   * Client certificate presented to the backend (proxy-ssl-secret's tls.crt and tls.key, PEM): written to files
   * named by their digest, mode 0600, in the runtime directory before nginx -t (proxy_ssl_certificate/_key). The
   * key is never put in nginx.conf nor logged.
   */
  sslCertificate?: { cert: string; key: string };
  /** proxy_next_upstream_timeout in seconds (0 = none); set with nextUpstream when an annotation asks for it. */
  nextUpstreamTimeoutSeconds?: number;
  // Ingress annotations (ingress-nginx's); each is absent when it equals the ConfigMap's value.
  /** proxy_buffering. */
  proxyBuffering?: boolean;
  /** proxy_buffer_size and the size of each proxy_buffers buffer (nginx size); set together with proxyBuffersNumber. */
  proxyBufferSize?: string;
  /** proxy_buffers count. */
  proxyBuffersNumber?: number;
  /** proxy_request_buffering. */
  proxyRequestBuffering?: boolean;
  /** proxy_max_temp_file_size (nginx size; "0" = no temporary files). */
  proxyMaxTempFileSize?: string;
  /** client_body_buffer_size (nginx size). */
  clientBodyBufferSize?: string;
  /** proxy_http_version. */
  proxyHttpVersion?: '1.0' | '1.1';
  /** proxy_cookie_domain: "off" or "<from> <to>" (literal words). */
  proxyCookieDomain?: string;
  /** proxy_cookie_path: "off" or "<from> <to>" (literal words). */
  proxyCookiePath?: string;
  /** proxy_redirect: the text to replace in Location/Refresh and its replacement (literal words). */
  proxyRedirect?: { from: string; to: string };
  /** The Connection header sent to the backend, replacing the default (upgrade or empty). */
  connectionHeader?: string;
  /** false: access_log off for these requests. */
  accessLog?: false;
  /** limit_rate in kilobytes per second (0 = unlimited). */
  limitRateKb?: number;
  /** limit_rate_after in kilobytes. */
  limitRateAfterKb?: number;
  /** Test hook only (--enable-test-hooks): render a directive nginx rejects, to exercise fault isolation. */
  testInvalidDirective?: boolean;
  /**
   * custom-http-errors: status codes (400-599, sorted, no duplicates) sent to the route's error page
   * (`error_page <code> = @portico_err_<code>`: the route's Route.errorPage, its default backend). Set alone, only
   * errors nginx makes itself (502, 504) are caught; with `interceptErrors` the backend's answers too.
   */
  errorCodes?: number[];
  /** proxy_intercept_errors on: the backend's answers with one of `errorCodes` go to the error page. */
  interceptErrors?: true;
  /**
   * Request mirroring: copies of requests (nginx's mirror) to the route's Route.mirrors; `body` = mirror_request_body.
   * Without `slots`: one copy of every request (mirror-target, a Gateway API rule with one whole mirror). With
   * `slots` (1-16, one per Route.mirrors entry): a copy per slot, each decided per request on its own (its share).
   */
  mirror?: { body: boolean; slots?: number };
  /**
   * ModSecurity (ingress-nginx's enable-modsecurity and companions): `modsecurity on` with a rules file Portico writes
   * into its runtime directory, named by the digest of its text (nginx-driver/nginx/modsecurity.ts), before nginx -t.
   */
  modsecurity?: ModsecuritySettings;
}

/**
 * One directive of a modsecurity-snippet (the ConfigMap's or an Ingress's), parsed from an allowlist
 * (reconcilers/annotations/modsecurity.ts): data, re-emitted by the renderer, never the text the user wrote.
 */
export type ModsecDirective =
  | { directive: 'SecRuleEngine'; value: 'On' | 'Off' | 'DetectionOnly' }
  | { directive: 'SecRequestBodyAccess' | 'SecResponseBodyAccess'; value: 'On' | 'Off' }
  | { directive: 'SecRequestBodyLimit'; value: number }
  | { directive: 'SecAuditEngine'; value: 'On' | 'Off' | 'RelevantOnly' }
  /** Rule ids ("942100") and ranges ("941000-942999"). */
  | { directive: 'SecRuleRemoveById'; value: string[] }
  | { directive: 'SecRuleRemoveByTag'; value: string };

/** What a route's ModSecurity loads, in this order: Debian's recommended configuration, the CRS, `rules`. */
export interface ModsecuritySettings {
  /** The OWASP Core Rule Set (Debian's modsecurity-crs). */
  crs: boolean;
  /** The ConfigMap's modsecurity-snippet, then the Ingress's: they override what comes before. */
  rules: ModsecDirective[];
  /** modsecurity_transaction_id: nginx variables ($request_id...) and literal [A-Za-z0-9_-] text. */
  transactionId?: string;
}

/** What the controller's machine has of ModSecurity (nginx-driver/nginx/modsecurity.ts detectModsecurity). */
export interface ModsecurityInstall {
  /** The OWASP Core Rule Set is installed too. */
  crs: boolean;
}

/** The ConfigMap's nginx tuning keys (reconcilers/config/nginx-tuning.ts): absent = ingress-nginx's default. */
/** How nginx aggregates per-request metrics (ingress-nginx's --metrics-per-undefined-host and bucket flags). */
export interface RequestMetricsSettings {
  /** Count requests for hosts no rule names (all under the host "_"). */
  undefinedHosts: boolean;
  /** Histogram bounds: durations (s), request/response sizes, bytes_sent. */
  buckets: { time: number[]; length: number[]; size: number[] };
}

/**
 * OpenTelemetry (ingress-nginx's ConfigMap keys; reconcilers/model/tracing-config.ts): spans exported by Lua over
 * OTLP/HTTP (JSON) to host:port. Routes trace when `enabled`, unless their Route.tracing says otherwise.
 */
export interface TracingSettings {
  enabled: boolean;
  /** An IP address (checked: not loopback, link-local, unspecified nor Portico's own). */
  host: string;
  port: number;
  serviceName: string;
  sampler: 'AlwaysOn' | 'AlwaysOff' | 'TraceIdRatioBased';
  ratio: number;
  parentBased: boolean;
  trustIncomingSpan: boolean;
  /** Span name template ("" = the route's path): text and $variables of OPERATION_NAME_VARIABLES. */
  operationName: string;
  maxQueueSize: number;
  scheduleDelayMillis: number;
  maxExportBatchSize: number;
}

/** A header of add-headers / proxy-set-headers: a name ([A-Za-z][A-Za-z0-9-]*) and a value of printable text and ${variable}s. */
export interface GlobalHeader {
  name: string;
  value: string;
}
export interface GlobalHeaders {
  /** add-headers: on every response (replacing a backend's header of the same name). */
  add: GlobalHeader[];
  /** proxy-set-headers: on every request proxied to a backend. */
  proxy: GlobalHeader[];
}

export interface GlobalSettings extends Partial<NginxTuning> {
  /** Per-request metrics in nginx (--enable-metrics); absent = off. */
  metrics?: RequestMetricsSettings;
  /** OpenTelemetry tracing (ConfigMap otel-* / otlp-* keys, tracing.lua); absent = no tracing anywhere. */
  tracing?: TracingSettings;
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
  luaSharedDicts?: { dataKb: number; certsKb: number; metricsKb?: number };
  /**
   * ConfigMap proxy-real-ip-cidr: proxies trusted to set X-Forwarded-For/-Proto/-Host/-Port when
   * useForwardedHeaders is on (set_real_ip_from). The ConfigMap's default is ingress-nginx's 0.0.0.0/0; absent here
   * (a structure built without the ConfigMap) or empty = nobody is trusted (with use-proxy-protocol: everybody).
   */
  proxyRealIpCidr?: string[];
  /**
   * This installation's loop-detection id (16 hex digits): appended to the X-Portico-Hop header of every request
   * Portico proxies; a request arriving with it already there answers 508 (it came back to Portico).
   */
  loopId?: string;
  /**
   * ConfigMap block-cidrs, block-user-agents, block-referers (ingress-nginx's global filters): requests that match
   * are answered 403 before routing. `invalid`: one of them cannot be applied — every request answers 503 (fail
   * closed). Absent when none is set.
   */
  blocks?: {
    cidrs: string[];
    userAgents: { match: 'exact' | 'regex' | 'iregex'; value: string }[];
    referers: { match: 'exact' | 'regex' | 'iregex'; value: string }[];
    invalid?: true;
  };
  /**
   * ConfigMap add-headers / proxy-set-headers: the headers of the ConfigMaps they name, validated
   * (reconcilers/model/global-headers.ts) — set on every response, and on every request proxied to a backend.
   * Absent when there are none.
   */
  headers?: GlobalHeaders;
  /**
   * Gateway API: the pod ports nginx serves Gateway listeners on (translate/gateway-api/attach.ts allocates them;
   * each Gateway's Service targets its own), with whether they terminate TLS. Absent without Gateways.
   */
  /**
   * filters: Gateway API listener filters, per listener hostname ("" none): the plugin ids the router runs, in this
   * order, on every request the listener accepts, before route matching (absent: no listener of the port has any).
   */
  gatewayPorts?: { port: number; ssl: boolean; hostnames?: string[]; filters?: Record<string, string[]> }[];
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
  /**
   * TLS for this host is passed through (ssl-passthrough): its routes serve plain HTTP only, and an HTTPS request
   * that reaches Portico's own TLS termination for it (another server name in the handshake, a reused connection)
   * is answered 421 Misdirected Request.
   */
  passthrough?: true;
  /** Sorted: exact first, then prefix by descending length, then regex in the order ingress-nginx uses. */
  rules: RouteRule[];
  /**
   * Metric labels of requests for this host that match no rule (404), as ingress-nginx counts them: the host's
   * oldest object, Service "", path "/" (with --enable-metrics).
   */
  metrics?: string;
  /**
   * --default-backend-service (ingress-nginx's catch-all): requests for this host that no rule matches are proxied,
   * as sent, to this backend instead of answered 404. The catch-all host "_" carries it too, for unknown hosts.
   */
  unmatchedBackendId?: string;
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
  /**
   * Extra conditions (Route CRD `matches[]` methods/headers/queryParams). Several rules may share one path and
   * match type: the router tries them in array order (the translation sorts by priority, then more conditions
   * first, then age) and a rule without conditions is the path's fallback. When no rule of a path matches, the
   * router goes on with the next candidate path (next regex, shorter prefix), as Gateway API's matching does.
   */
  conditions?: RouteConditions;
  /**
   * Prefix rules only: the Ingress wrote the path with a trailing slash ("/foo/"). As nginx does for ingress-nginx's
   * `location /foo/` (proxy_pass), a request for exactly the path without it ("/foo") is answered 301 to "/foo/"
   * (query kept) — before regexes, after exact paths.
   */
  slashRedirect?: true;
  /** ingress-nginx's use-port-in-redirects "true": that 301's Location names the port clients connect to. */
  portInRedirect?: true;
}

export interface RouteConditions {
  /** Upper-case HTTP methods; any of them. */
  methods?: string[];
  /** Header names lower-case; all must match. Regex values are PCRE (ngx.re, anchored by the user if wanted). */
  headers?: { name: string; type: 'exact' | 'regex'; value: string }[];
  /** Query parameter names as sent; all must match. */
  query?: { name: string; type: 'exact' | 'regex'; value: string }[];
}

export interface Route {
  /** Kind-qualified reference of the object the route came from: "Ingress/namespace/name". */
  source: string;
  /**
   * The route's per-request metric labels (with --enable-metrics), joined by U+001F: namespace, Ingress (or Route)
   * name, Service, path as written, host as written ("_" for rules without a host). Values the controller chose,
   * never the request's, so a client cannot mint label values.
   */
  metrics?: string;
  /** Backend id (into data.backends); null = answer without proxying (see `action`). */
  backendId: string | null;
  /** Without a backend: 404 (nothing to serve) or 503 (fails closed, or the backend cannot be used). */
  action?: 'not_found' | 'unavailable' | 'error';
  /** Plain-HTTP requests get a redirect to HTTPS (308) instead of being proxied. */
  sslRedirect: boolean;
  /**
   * ingress-nginx's preserve-trailing-slash: the redirect to HTTPS keeps a final "/" of the request URI (by default
   * it is dropped, as ingress-nginx does).
   */
  preserveTrailingSlash?: true;
  /**
   * OpenTelemetry annotations of the route's Ingress (enable-opentelemetry, opentelemetry-trust-incoming-span,
   * opentelemetry-operation-name): each absent = the ConfigMap's. Data, so changing them never reloads nginx.
   */
  tracing?: { enabled?: boolean; trust?: boolean; operationName?: string };
  /** Directive profile (Structure.profiles) the request is proxied with; absent = the default location. */
  profile?: string;
  /** With a profile: the body-size limit in bytes the router checks against Content-Length (0 = unlimited). */
  maxBodyBytes?: number;
  /** proxy timeouts in seconds, set per request by the balancer (absent = the global ones). */
  timeouts?: { connect: number; send: number; read: number };
  /**
   * A Gateway API rule's retry attempts (1–10): the balancer arranges that many more attempts, to the same endpoint
   * when the backend has one (Portico's other retries go to other endpoints only). Its profile's
   * proxy_next_upstream says on what.
   */
  retryAttempts?: number;
  /**
   * Weighted split across backends (Route CRD `backends[]` with more than one entry): the router picks one per
   * request in proportion to `weight` and sets it as $portico_backend; `backendId` is then the first of them.
   * A weight of 0 gets no traffic. `plugins` (Gateway API backendRef filters): when present on the entries, the
   * plugins run for the requests of that share instead of the route's `plugins` (the route's and the share's own,
   * in execution order).
   */
  split?: { backendId: string; weight: number; plugins?: string[] }[];
  /**
   * Plugin instances (keys of DataPlane.plugins) run for this route in the access/header-filter phases, already in
   * execution order (see PLUGIN_ORDER). Present = the router jumps to a location with the plugin handlers.
   */
  plugins?: string[];
  /**
   * Some backend of the route has passive health checking or balances with ewma: the router sends the request
   * through the location whose log phase reports each attempt's outcome (the plugin location), even without
   * plugins. (The router also decides this per request from the backend data, so this flag is a hint.)
   */
  observe?: true;
  /** false: requests asking for a protocol upgrade (WebSocket) are refused with 400 (Route CRD `websocket: false`). */
  websocket?: false;
  /**
   * ingress-nginx's default-backend: the backend (a Service's first port) that serves the route while its own
   * backend (or the one chosen by a split or canary) has no usable endpoint, instead of the 503 — decided per
   * request by the balancer, so no reload and no translation is needed when endpoints come and go. Also where
   * `errorPage` sends the route's errors.
   */
  defaultBackendId?: string;
  /**
   * custom-http-errors (with a profile whose errorCodes are set): what the error page's request tells the default
   * backend about the route — X-Namespace, X-Ingress-Name, X-Service-Name, X-Service-Port (the port as the Ingress
   * wrote it, number or name). Without defaultBackendId the error page is nginx's own for the status.
   */
  errorPage?: {
    namespace: string;
    ingress: string;
    service: string;
    port: string;
    /** Where the errors go when the route has no defaultBackendId: --default-backend-service's backend. */
    backendId?: string;
  };
  /**
   * mirror-target, Gateway API's RequestMirror (with a profile whose `mirror` is set): where the copies go, one
   * entry per copy (1-16; the profile's `slots` when more than one or any has a share). `backendId` is balanced like
   * any backend (a Service's endpoints, or a host the gateway resolves); `host` is the Host header (mirror-host, else
   * the target's host; "" = the request's own, as Gateway API's RequestMirror), `serverName` the TLS server name for
   * https (the target's host); the URI is the client's own (`requestUri`) or `path` followed by the client's query.
   * `share`: the copy is made for that share of the requests (numerator/denominator, 0 < numerator < denominator),
   * drawn per request and copy; absent = every request. Entries after the first differ from it only in `backendId`,
   * `serverName` and `share`, and more than one entry are plain HTTP (the copies share the request's variables).
   */
  mirrors?: RouteMirror[];
  /**
   * Set when the Ingress asks for access control Portico cannot apply (e.g. auth-url): the route fails closed
   * (action "unavailable"). Why, for events and logs — never sent to clients.
   */
  closedReason?: string;
}

/** One copy of a route's requests (Route.mirrors). */
export interface RouteMirror {
  backendId: string;
  scheme: 'http' | 'https';
  host: string;
  serverName: string;
  requestUri?: true;
  path?: string;
  share?: { numerator: number; denominator: number };
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
  /** Plugin instances by id ([a-z0-9_.-], e.g. "<namespace>_<plugin name>"). Shared by every route naming them. */
  plugins: Record<string, PluginInstance>;
  /** Consumers, grouped by namespace: auth plugins look up credentials among the consumers of their namespace. */
  consumers: Record<string, ConsumerSet>;
  /**
   * Client certificates (ingress-nginx's auth-tls-*), keyed by route host ("_", exact or "*." wildcard): the TLS
   * handshake for that server name asks for a certificate signed by this CA. The client-cert plugin of each path
   * then checks the outcome. Absent = no host asks (sent with the certificates).
   * Gateway API (spec.tls.frontend) adds one entry per HTTPS Gateway port, "<pod port>/_": every handshake on that
   * port asks with it, whatever the server name (a Gateway port asks with no other entry).
   */
  clientAuth?: Record<string, ClientAuth>;
}

/**
 * What the handshake asks of clients for one host: a certificate verified against `ca` (PEM bundle) up to `depth`,
 * or — `off` — nothing, for a host whose own routes shadow a wildcard or "_" entry that asks.
 */
export type ClientAuth =
  | {
      /** Digest of the CA bundle and depth (30 hex digits): also what the client-cert plugin expects, see there. */
      id: string;
      ca: string;
      depth: number;
      /** "namespace/name" of the Secret and the Ingress it came from, for logs. */
      source: string;
      /**
       * The handshake itself refuses a client without a certificate that verifies against `ca` (a Gateway port's
       * AllowValidOnly); no per-request check follows. Absent: the handshake asks and never refuses (auth-tls's
       * paths check the outcome; a Gateway port's AllowInsecureFallback lets every client in).
       */
      strict?: true;
    }
  | { off: true };

/**
 * Execution order of plugin types, fixed and documented: the client certificate of the TLS connection
 * (client-cert, checked first as nginx checks it before any phase), who may enter (ip-restriction), CORS preflight, who you
 * are (auth), how much (rate-limit), then what is changed on the way (headers, redirect/rewrite), then proxy.
 *
 * The TypeScript side's one table of plugin names, from the plugin modules (reconcilers/config/plugins/index.ts,
 * generated in the order of the Lua modules' `_M.order`, as is nginx-assets/lua/portico/plugins/registry.lua).
 */
export const PLUGIN_ORDER = PLUGINS.map((p) => p.name) as unknown as NamesOf<typeof PLUGINS>;
type NamesOf<L extends readonly unknown[]> = { readonly [K in keyof L]: L[K] extends { name: infer N } ? N : never };
export type PluginType = (typeof PLUGIN_ORDER)[number];

/**
 * A plugin as the Lua engine runs it: normalized and validated by the controller (zod), so Lua only re-checks
 * shapes. `name` is "<namespace>/<name>" of the Plugin object (or of the Ingress/annotation it came from), for logs.
 * Header names are lower-case tokens; header values are printable ASCII without CR/LF and are sent literally (no
 * nginx variables are ever interpreted). Each plugin's own fields are its module's `Instance`
 * (reconcilers/config/plugins/<type>.ts).
 */
export type PluginInstance = {
  name: string;
  /**
   * ingress-nginx's `satisfy: any` on the access plugins its annotations make (ip-restriction, basic-auth,
   * digest-auth, external-auth): the request passes when one of the flagged plugins of its chain lets it through.
   */
  satisfyAny?: true;
} & PluginShape;

/** The consumers of one namespace, as auth plugins see them. */
export interface ConsumerSet {
  consumers: ConsumerEntry[];
}

export interface ConsumerEntry {
  /** Consumer object name (identity for rate-limit by=consumer and X-Consumer-Username... see `username`). */
  name: string;
  /** spec.username: sent to the backend as X-Consumer-Username, and the rate-limit identity. */
  username: string;
  /** key-auth credentials: lower-case hex SHA-256 of each key (keys never reach nginx in clear). */
  keys: string[];
  /**
   * basic-auth credentials: the user name and a password hash — "sha256$<salt hex>$<hex of sha256(salt .. password)>",
   * "{SHA}<base64 sha1>" (htpasswd), or a bcrypt "$2a$/$2b$/$2y$" hash as given in the Secret.
   */
  basic: { username: string; hash: string }[];
  /** Plugin ids (DataPlane.plugins) that replace the route's plugin of the same type for this consumer. */
  plugins: string[];
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
  /**
   * enable-ocsp: the OCSP responder its leaf names (Authority Information Access), with the one address Lua may
   * connect to — vetted by the controller (nginx-driver/ocsp-responders.ts): never loopback, link-local, a pod, a
   * Service or Portico's own. Absent: no stapling for this certificate.
   */
  ocsp?: OcspResponder;
  /**
   * ssl-ciphers of the host's oldest Ingress that sets it: the OpenSSL cipher list (TLS ≤ 1.2) the handshake sets
   * on the connection when it serves this certificate for the host (certs.lua; cipherListSchema checked it). Part of
   * the certificate's identity in the data plane: the same certificate with another list is another entry.
   */
  ciphers?: string;
}

/** An OCSP responder reached over plain HTTP: Host header, address to connect to, port, request path. */
export interface OcspResponder {
  host: string;
  address: string;
  port: number;
  path: string;
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
  /**
   * For chash (ingress-nginx's upstream-hash-by-subset): the key picks a subset of this many endpoints (the
   * endpoints sorted and cut in groups), and each request goes to a random endpoint of that subset.
   */
  hashSubsetSize?: number;
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
  cookie?: { name: string; maxAgeSeconds?: number; mode: 'balanced' | 'persistent'; path?: string; domain?: string; sameSite?: 'Strict' | 'Lax' | 'None'; conditionalSameSiteNone?: boolean; secure?: boolean; expiresSeconds?: number; changeOnFailure?: boolean; partitioned?: boolean };
  /** ExternalName services: a DNS name the gateway resolves into endpoints, and the port to use. */
  externalName?: string;
  externalPort?: number;
  /**
   * An auth-url / mirror-target host of an Ingress (not a Service DNS name): addresses it resolves to that are a
   * Service's cluster IP are refused too (nginx-driver/externalnames.ts), so a name cannot reach another namespace's
   * Service where the Service's own name would be refused (ConfigMap allow-cross-namespace-auth off).
   */
  noClusterIPs?: true;
  /** Why the backend has no endpoints (for events / logs), e.g. "service default/foo not found". */
  unavailableReason?: string;
  /**
   * Passive health checking (Upstream CRD healthCheck.passive): an endpoint that fails `failures` times in a row
   * (connection errors/timeouts, or a response status in `statuses`) gets no new requests for `ejectSeconds`,
   * unless every endpoint is ejected (then all are used, as if none were). A success resets the count.
   */
  passiveHealth?: { failures: number; statuses: number[]; ejectSeconds: number };
}

export interface Endpoint {
  address: string;
  port: number;
  weight: number;
}
