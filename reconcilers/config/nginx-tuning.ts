// nginx settings of the http block that ingress-nginx users set in its controller ConfigMap (TLS, buffers, client
// timeouts, compression, upstream keep-alive, real-IP handling...). Each field is one ConfigMap key with
// ingress-nginx's default (see reconcilers/model/global-config.ts, which validates them); the renderer emits each
// through an escaping helper. Optional in GlobalSettings: an absent field takes the default below.

import { DEFAULT_DIRECTIVE_TUNING, type DirectiveTuning } from './directive-tuning.ts';

export interface NginxTuning extends DirectiveTuning {
  /** forwarded-for-header: header the real client address is read from (real_ip_header). */
  forwardedForHeader: string;
  /**
   * compute-full-forwarded-for: with use-forwarded-headers, append the peer's address to the incoming X-Forwarded-For
   * instead of replacing it (ingress-nginx ignores it without use-forwarded-headers).
   */
  computeFullForwardedFor: boolean;
  /** enable-real-ip: the realip module (trusted proxies from proxy-real-ip-cidr) without use-forwarded-headers. */
  enableRealIp: boolean;
  /** use-proxy-protocol: the public listeners expect the PROXY protocol; its address is the client's. */
  useProxyProtocol: boolean;
  /** proxy-add-original-uri-header: send the request URI as the client sent it upstream as X-Original-URI. */
  proxyAddOriginalUriHeader: boolean;
  /** ssl-protocols: space-separated TLSv1 / TLSv1.1 / TLSv1.2 / TLSv1.3. */
  sslProtocols: string;
  /** ssl-ciphers: OpenSSL cipher list. */
  sslCiphers: string;
  sslPreferServerCiphers: boolean;
  sslSessionCache: boolean;
  /** nginx size. */
  sslSessionCacheSize: string;
  /** nginx time ("10m"). */
  sslSessionTimeout: string;
  sslSessionTickets: boolean;
  /** nginx size. */
  sslBufferSize: string;
  useHttp2: boolean;
  clientHeaderBufferSize: string;
  /** "<number> <size>", e.g. "4 8k". */
  largeClientHeaderBuffers: string;
  clientBodyBufferSize: string;
  clientHeaderTimeoutSeconds: number;
  clientBodyTimeoutSeconds: number;
  proxyBufferSize: string;
  proxyBuffersNumber: number;
  proxyBuffering: boolean;
  proxyRequestBuffering: boolean;
  /** proxy_next_upstream conditions, space-separated. */
  proxyNextUpstream: string;
  proxyNextUpstreamTries: number;
  proxyNextUpstreamTimeoutSeconds: number;
  serverTokens: boolean;
  logFormatEscapeJson: boolean;
  logFormatEscapeNone: boolean;
  disableAccessLog: boolean;
  /** log-format-stream: the TCP/UDP access-log format; empty = ingress-nginx's default (render.ts). */
  logFormatStream: string;
  /** skip-access-log-urls: requests whose $request_uri matches one are not access-logged (nginx map sources). */
  skipAccessLogUrls: { match: 'exact' | 'regex' | 'iregex'; value: string }[];
  /** access-log-params: "buffer=<size> flush=<time> gzip[=<level>]" (any of them); empty = Portico's choice. */
  accessLogParams: string;
  /** error-log-level: nginx's error_log severity. */
  errorLogLevel: 'debug' | 'info' | 'notice' | 'warn' | 'error' | 'crit' | 'alert' | 'emerg';
  /** generate-request-id: a random X-Request-ID for requests that bring none. */
  generateRequestId: boolean;
  upstreamKeepaliveConnections: number;
  upstreamKeepaliveTimeoutSeconds: number;
  upstreamKeepaliveRequests: number;
  /** worker_connections; 0 = as many as the open-files limit allows. */
  maxWorkerConnections: number;
  serverNameHashBucketSize: number;
  serverNameHashMaxSize: number;
  variablesHashBucketSize: number;
  variablesHashMaxSize: number;
  mapHashBucketSize: number;
  useGzip: boolean;
  gzipLevel: number;
  gzipMinLength: number;
  /** Space-separated MIME types (or "*"). */
  gzipTypes: string;
  enableUnderscoresInHeaders: boolean;
  ignoreInvalidHeaders: boolean;
}

const GZIP_TYPES =
  'application/atom+xml application/javascript application/x-javascript application/json application/rss+xml application/vnd.ms-fontobject application/x-font-ttf application/x-web-app-manifest+json application/xhtml+xml application/xml font/opentype image/svg+xml image/x-icon text/css text/javascript text/plain text/x-component';

/** ingress-nginx's defaults (docs/user-guide/nginx-configuration/configmap.md). */
export const DEFAULT_NGINX_TUNING: Readonly<NginxTuning> = Object.freeze({
  forwardedForHeader: 'X-Forwarded-For',
  computeFullForwardedFor: false,
  enableRealIp: false,
  useProxyProtocol: false,
  proxyAddOriginalUriHeader: false,
  sslProtocols: 'TLSv1.2 TLSv1.3',
  sslCiphers:
    'ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384',
  sslPreferServerCiphers: true,
  sslSessionCache: true,
  sslSessionCacheSize: '10m',
  sslSessionTimeout: '10m',
  sslSessionTickets: false,
  sslBufferSize: '4k',
  useHttp2: true,
  clientHeaderBufferSize: '1k',
  largeClientHeaderBuffers: '4 8k',
  clientBodyBufferSize: '8k',
  clientHeaderTimeoutSeconds: 60,
  clientBodyTimeoutSeconds: 60,
  proxyBufferSize: '4k',
  proxyBuffersNumber: 4,
  proxyBuffering: false,
  proxyRequestBuffering: true,
  proxyNextUpstream: 'error timeout',
  proxyNextUpstreamTries: 3,
  proxyNextUpstreamTimeoutSeconds: 0,
  serverTokens: false,
  logFormatEscapeJson: false,
  logFormatEscapeNone: false,
  disableAccessLog: false,
  logFormatStream: '',
  skipAccessLogUrls: [],
  accessLogParams: '',
  errorLogLevel: 'notice',
  generateRequestId: true,
  upstreamKeepaliveConnections: 320,
  upstreamKeepaliveTimeoutSeconds: 60,
  upstreamKeepaliveRequests: 10000,
  maxWorkerConnections: 16384,
  serverNameHashBucketSize: 64,
  serverNameHashMaxSize: 1024,
  variablesHashBucketSize: 128,
  variablesHashMaxSize: 2048,
  mapHashBucketSize: 64,
  useGzip: false,
  gzipLevel: 1,
  gzipMinLength: 256,
  gzipTypes: GZIP_TYPES,
  enableUnderscoresInHeaders: false,
  ignoreInvalidHeaders: true,
  ...DEFAULT_DIRECTIVE_TUNING,
});

export const NGINX_TUNING_FIELDS = Object.keys(DEFAULT_NGINX_TUNING) as (keyof NginxTuning)[];

/** The tuning fields of a larger object (the ConfigMap values), for GlobalSettings. */
export function nginxTuningOf(v: Partial<NginxTuning>): Partial<NginxTuning> {
  const out: Record<string, unknown> = {};
  for (const f of NGINX_TUNING_FIELDS) if (v[f] !== undefined) out[f] = v[f];
  return out as Partial<NginxTuning>;
}

/** Every field, absent ones taking their default (for the renderer). */
export function fullNginxTuning(v: Partial<NginxTuning>): NginxTuning {
  return { ...DEFAULT_NGINX_TUNING, ...nginxTuningOf(v) };
}
