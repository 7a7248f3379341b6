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
  // Not directives: the ConfigMap's defaults of three annotations, for Ingresses without them (ingress-nginx's
  // parsers of these fall back to the ConfigMap; translate/annotation-defaults.ts applies them).
  preserveTrailingSlash: boolean;
  usePortInRedirects: boolean;
  serviceUpstream: boolean;
}

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
  proxyCookieDomain: 'off',
  proxyCookiePath: 'off',
  proxyRedirectFrom: 'off',
  proxyRedirectTo: 'off',
  proxyMaxTempFileSize: '',
  enableAccessLogForDefaultBackend: false,
  enableAuthAccessLog: false,
  sslRejectHandshake: false,
  enableOcsp: false,
  preserveTrailingSlash: false,
  usePortInRedirects: false,
  serviceUpstream: false,
});
