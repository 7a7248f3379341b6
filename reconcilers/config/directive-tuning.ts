// More of ingress-nginx's controller ConfigMap keys that are one nginx directive each (the original set is in
// nginx-tuning.ts): response and upstream headers, rate limits, buffers, keep-alive, worker settings, the TCP/UDP
// proxy's timeouts and retries. Each field is one key with ingress-nginx's default (reconcilers/model/directive-keys.ts
// validates them); the templates emit each through an escaping helper.

export interface DirectiveTuning {
  /** allow-backend-server-header: pass the backend's Server header (proxy_pass_header Server). */
  allowBackendServerHeader: boolean;
  /** hide-headers: upstream response headers not passed to clients (proxy_hide_header), lower case. */
  hideHeaders: string[];
  /** default-type: MIME type of responses nginx makes without one (default_type). */
  defaultType: string;
  /** gzip-disable: User-Agent regex (or "msie6") that gets no gzip (gzip_disable); empty = none. */
  gzipDisable: string;
  /** limit-rate / limit-rate-after: bytes per second to each client, and after how many bytes (0 = no limit). */
  limitRate: number;
  limitRateAfter: number;
  /** proxy-busy-buffers-size: nginx size; empty = nginx's default (two proxy buffers). */
  proxyBusyBuffersSize: string;
  proxyHeadersHashBucketSize: number;
  proxyHeadersHashMaxSize: number;
  /** retry-non-idempotent: POST, LOCK, PATCH are retried on another endpoint too (proxy_next_upstream non_idempotent). */
  retryNonIdempotent: boolean;
  /** upstream-keepalive-time: how long one backend connection may be reused (keepalive_time), nginx time. */
  upstreamKeepaliveTime: string;
  /** enable-multi-accept: a worker accepts every pending connection at once (multi_accept). */
  enableMultiAccept: boolean;
  /** worker-cpu-affinity: "" (none), "auto", or CPU bitmasks (worker_cpu_affinity). */
  workerCpuAffinity: string;
  /** max-worker-open-files: worker_rlimit_nofile; 0 = Portico's computation from the open-files limit. */
  maxWorkerOpenFiles: number;
  /** grpc-buffer-size-kb: grpc_buffer_size in KiB; 0 = nginx's default. */
  grpcBufferSizeKb: number;
  /** relative-redirects: Location headers nginx writes stay relative (absolute_redirect off). */
  relativeRedirects: boolean;
  /** proxy-http-version: HTTP version to backends ("1.1" keeps connections alive; "1.0" does not). */
  proxyHttpVersion: '1.0' | '1.1';
  /** debug-connections: clients (addresses or CIDRs) whose connections nginx logs at debug level. */
  debugConnections: string[];
  /** enable-aio-write: write temporary files with thread-pool I/O (aio_write; aio threads is always on). */
  enableAioWrite: boolean;
  /** disable-http-access-log / disable-stream-access-log: no access log for HTTP / for TCP and UDP services. */
  disableHttpAccessLog: boolean;
  disableStreamAccessLog: boolean;
  /** The TCP/UDP services' proxy (proxy-stream-*): idle timeout, retries on another endpoint, UDP answers expected. */
  proxyStreamTimeout: string;
  proxyStreamNextUpstream: boolean;
  proxyStreamNextUpstreamTimeout: string;
  proxyStreamNextUpstreamTries: number;
  proxyStreamResponses: number;
  /** proxy-protocol-header-timeout: how long a PROXY-protocol listener of the TCP/UDP and passthrough proxy waits for the header (nginx time). */
  proxyProtocolHeaderTimeout: string;
  /** proxy-cookie-domain / proxy-cookie-path: "off" or "<from> <to>" (literal), for every path without its annotation. */
  proxyCookieDomain: string;
  proxyCookiePath: string;
  /** proxy-redirect-from / proxy-redirect-to: "off", or a literal pair (proxy_redirect), for every path without its annotations. */
  proxyRedirectFrom: string;
  proxyRedirectTo: string;
  /** proxy-max-temp-file-size: nginx size; "" = nginx's (and ingress-nginx's) 1024m. */
  proxyMaxTempFileSize: string;
  /** enable-access-log-for-default-backend: log the requests no host or path matched (answered 404 by Portico). */
  enableAccessLogForDefaultBackend: boolean;
  /** enable-auth-access-log: log the auth-url subrequests too. */
  enableAuthAccessLog: boolean;
  /** ssl-reject-handshake: a TLS handshake naming no host Portico serves fails (certs.lua) instead of getting the default certificate. */
  sslRejectHandshake: boolean;
  /** enable-ocsp: staple OCSP responses of the certificates that name a responder (certs.lua, ocsp.lua). */
  enableOcsp: boolean;
  /** forwarded-host-header: the incoming header sent upstream as X-Original-Forwarded-Host. */
  forwardedHostHeader: string;
  /** http-redirect-code: the status of the redirect to HTTPS (ssl-redirect, force-ssl-redirect). */
  httpRedirectCode: 301 | 302 | 307 | 308;
  /** enable-syslog, syslog-host, syslog-port: the HTTP access log and a copy of the error log go to a syslog server. */
  enableSyslog: boolean;
  syslogHost: string;
  syslogPort: number;
  // Not directives: the ConfigMap's defaults of three annotations, for Ingresses without them (ingress-nginx's
  // parsers of these fall back to the ConfigMap; translate/annotation-defaults.ts applies them).
  preserveTrailingSlash: boolean;
  usePortInRedirects: boolean;
  serviceUpstream: boolean;
  disableProxyInterceptErrors: boolean;
  // Optional Debian modules, loaded only when these ask for them (nginx-driver/nginx/optional-modules.ts).
  /** enable-brotli: brotli compression (libnginx-mod-http-brotli-filter) with brotli-level, -min-length, -types. */
  enableBrotli: boolean;
  brotliLevel: number;
  brotliMinLength: number;
  /** brotli-types: space-separated MIME types ("*": all), as gzip-types. */
  brotliTypes: string;
  /** use-geoip2: the $geoip2_* variables from MaxMind databases (libnginx-mod-http-geoip2). */
  useGeoip2: boolean;
  /** geoip2-autoreload-in-minutes: nginx re-reads a changed database this often (auto_reload); 0 = never. */
  geoip2AutoreloadInMinutes: number;
  /** geoip2-database-directory (Portico's own): where the .mmdb files are (ingress-nginx's fixed path by default). */
  geoip2DatabaseDirectory: string;
}

/** ingress-nginx v1.15.1's brotli-types (brotliTypes of its config.go). */
export const BROTLI_TYPES =
  'application/xml+rss application/atom+xml application/javascript application/x-javascript application/json application/rss+xml application/vnd.ms-fontobject application/x-font-ttf application/x-web-app-manifest+json application/xhtml+xml application/xml font/opentype image/svg+xml image/x-icon text/css text/javascript text/plain text/x-component';

/** Where ingress-nginx reads (and its --maxmind-* flags download) the MaxMind databases. */
export const GEOIP2_DEFAULT_DIRECTORY = '/etc/ingress-controller/geoip';

/** ingress-nginx v1.15.1's defaults (internal/ingress/controller/config/config.go). */
export const DEFAULT_DIRECTIVE_TUNING: Readonly<DirectiveTuning> = Object.freeze({
  allowBackendServerHeader: false,
  hideHeaders: [],
  defaultType: 'text/html',
  gzipDisable: '',
  limitRate: 0,
  limitRateAfter: 0,
  proxyBusyBuffersSize: '',
  proxyHeadersHashBucketSize: 64,
  proxyHeadersHashMaxSize: 512,
  retryNonIdempotent: false,
  upstreamKeepaliveTime: '1h',
  enableMultiAccept: true,
  workerCpuAffinity: '',
  maxWorkerOpenFiles: 0,
  grpcBufferSizeKb: 0,
  relativeRedirects: false,
  proxyHttpVersion: '1.1',
  debugConnections: [],
  enableAioWrite: true,
  disableHttpAccessLog: false,
  disableStreamAccessLog: false,
  proxyStreamTimeout: '600s',
  proxyStreamNextUpstream: true,
  proxyStreamNextUpstreamTimeout: '600s',
  proxyStreamNextUpstreamTries: 3,
  proxyStreamResponses: 1,
  proxyProtocolHeaderTimeout: '5s',
  proxyCookieDomain: 'off',
  proxyCookiePath: 'off',
  proxyRedirectFrom: 'off',
  proxyRedirectTo: 'off',
  proxyMaxTempFileSize: '',
  enableAccessLogForDefaultBackend: false,
  enableAuthAccessLog: false,
  sslRejectHandshake: false,
  enableOcsp: false,
  forwardedHostHeader: 'X-Forwarded-Host',
  httpRedirectCode: 308,
  enableSyslog: false,
  syslogHost: '',
  syslogPort: 514,
  preserveTrailingSlash: false,
  usePortInRedirects: false,
  serviceUpstream: false,
  disableProxyInterceptErrors: false,
  enableBrotli: false,
  brotliLevel: 4,
  brotliMinLength: 20,
  brotliTypes: BROTLI_TYPES,
  useGeoip2: false,
  geoip2AutoreloadInMinutes: 0,
  geoip2DatabaseDirectory: GEOIP2_DEFAULT_DIRECTORY,
});
