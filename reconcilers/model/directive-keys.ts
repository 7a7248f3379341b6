// ingress-nginx's controller ConfigMap keys that are one nginx directive each, beyond the original tuning set, as
// rows of the controller ConfigMap table (global-config.ts spreads them into CONFIG_KEYS): their schemas, defaults
// (reconcilers/config/directive-tuning.ts, ingress-nginx v1.15.1's) and meanings. Also the ingress-nginx keys that
// Portico accepts and validates but that change nothing in it, with why (NO_EFFECT_KEYS).
import { z } from 'zod';
import { DEFAULT_DIRECTIVE_TUNING as D, type DirectiveTuning } from '../config/directive-tuning.ts';
import { isCidr } from '../../crds/schema/plugin-config.ts';
import { boolSchema, headerTokenSchema, intSchema } from '../values/safe.ts';
import { parseIpv4 } from '../values/addresses.ts';
import { regexProblem } from '../values/regex-path.ts';
import { cookieRewriteSchema, redirectTextSchema } from '../annotations/groups/proxy.ts';

type Row<F extends keyof DirectiveTuning> = { field: F; schema: z.ZodType<DirectiveTuning[F], string>; default: DirectiveTuning[F]; description: string };
const row = <F extends keyof DirectiveTuning>(field: F, schema: z.ZodType<DirectiveTuning[F], string>, description: string): Row<F> => ({ field, schema, default: D[field], description });

/** Comma-separated header names (hide-headers), lower-cased, at most 64. */
const headerListSchema = z
  .string()
  .transform((v) => [...new Set(v.split(',').map((x) => x.trim().toLowerCase()).filter(Boolean))])
  .pipe(z.array(z.string().regex(/^[a-z][a-z0-9-]{0,63}$/, 'expected header names (a letter, then letters, digits, "-") separated by commas')).max(64, 'at most 64 headers'));

/** A MIME type without parameters ("text/html", "application/octet-stream"). */
const mimeTypeSchema = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9][A-Za-z0-9.+-]{0,63}\/[A-Za-z0-9][A-Za-z0-9.+-]{0,63}$/, 'expected a MIME type such as text/html');

/** gzip-disable: "" (none), nginx's "msie6", or a case-insensitive User-Agent regex (PCRE, checked like regex paths). */
const gzipDisableSchema = z
  .string()
  .trim()
  .superRefine((v, ctx) => {
    if (v === '' || v === 'msie6') return;
    if (v.length > 256 || /["\u0000-\u001f\u007f]/.test(v)) ctx.addIssue({ code: 'custom', message: 'expected "msie6" or a User-Agent regex of at most 256 characters without quotes or control characters' });
    else if (v.slice(0, -1).includes('$')) ctx.addIssue({ code: 'custom', message: '"$" may only end the regex' });
    else {
      const problem = regexProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }
  });

/** An nginx size in bytes, k or m, or "" (nginx's default). */
const optionalSizeSchema = z
  .string()
  .trim()
  .regex(/^(\d{1,8}[kKmM]?)?$/, 'expected a size such as 16k or 1m');

/** An nginx time ("600s", "10m", "1h"): whole units. */
const timeSchema = z
  .string()
  .trim()
  .regex(/^\d{1,7}(ms|s|m|h|d)?$/, 'expected a time such as 600s, 10m or 1h');

/** worker-cpu-affinity: "", "auto", "auto <mask>" or one bitmask per worker ("0001 0010"). */
const cpuAffinitySchema = z
  .string()
  .trim()
  .regex(/^(|auto( [01]{1,64})?|[01]{1,64}( [01]{1,64}){0,255})$/, 'expected "auto", "auto" and a CPU mask, or CPU bitmasks such as "0001 0010"');

/** debug-connections: comma-separated addresses or CIDRs. */
const cidrsSchema = z.string().transform((v, ctx): string[] => {
  const out = [...new Set(v.split(',').map((x) => x.trim()).filter(Boolean))];
  const bad = out.find((x) => !isCidr(x));
  if (bad !== undefined) {
    ctx.addIssue({ code: 'custom', message: `"${bad.slice(0, 60)}" is not an IP address or CIDR` });
    return z.NEVER;
  }
  if (out.length > 256) {
    ctx.addIssue({ code: 'custom', message: 'at most 256 addresses or CIDRs' });
    return z.NEVER;
  }
  return out;
});

/** syslog-host: "" or an IPv4 address or DNS name (lower case; nginx resolves it when it loads the configuration). */
const syslogHostSchema = z
  .string()
  .trim()
  .transform((v) => v.toLowerCase().replace(/\.$/, ''))
  .refine((v) => v === '' || parseIpv4(v) !== null || (v.length <= 253 && /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(v) && !/^[0-9.]+$/.test(v)), {
    message: 'expected an IPv4 address or a DNS name (IPv6 is not supported here)',
  });

/** Space-separated MIME types (gzip-types, brotli-types): exact types ("text/css") or "*" (all). */
export const mimeTypesSchema = z.string().transform((v, ctx) => {
  const items = [...new Set(v.trim().split(/[ \t]+/).filter(Boolean))];
  const bad = items.find((t) => t !== '*' && !/^[a-z0-9][a-z0-9.+-]{0,63}\/[a-z0-9][a-z0-9.+-]{0,127}$/i.test(t));
  if (bad !== undefined || !items.length || items.length > 128) {
    ctx.addIssue({ code: 'custom', message: bad !== undefined ? `${JSON.stringify(bad.slice(0, 60))} is not a MIME type such as text/css (or "*")` : 'expected 1 to 128 space-separated MIME types' });
    return z.NEVER;
  }
  return items.join(' ');
});

const httpVersionSchema = z
  .string()
  .trim()
  .refine((v): v is '1.0' | '1.1' => v === '1.0' || v === '1.1', { message: 'expected "1.0" or "1.1"' })
  .transform((v) => v as '1.0' | '1.1');

export const DIRECTIVE_KEYS = {
  'allow-backend-server-header': row('allowBackendServerHeader', boolSchema, 'Pass the backend\'s Server header to clients (proxy_pass_header Server); "false": nginx\'s own (see server-tokens)'),
  'hide-headers': row('hideHeaders', headerListSchema, 'Comma-separated response headers of the backends that clients never see (proxy_hide_header each), e.g. "X-Powered-By,Server"'),
  'default-type': row('defaultType', mimeTypeSchema, 'MIME type of the responses nginx makes that have none (default_type)'),
  'gzip-disable': row('gzipDisable', gzipDisableSchema, 'User agents that get no gzip: "msie6" or a case-insensitive regex (gzip_disable); empty: none'),
  'limit-rate': row('limitRate', intSchema(0, 1_073_741_824), 'Bytes per second sent to each client, per request (limit_rate); 0: no limit. An Ingress\'s limit-rate annotation overrides it'),
  'limit-rate-after': row('limitRateAfter', intSchema(0, 1_073_741_824), 'Bytes sent at full speed before limit-rate applies (limit_rate_after)'),
  'proxy-busy-buffers-size': row('proxyBusyBuffersSize', optionalSizeSchema, 'How much of a response may be busy being sent to the client while not fully read (proxy_busy_buffers_size); empty: nginx\'s default. nginx requires at least proxy-buffer-size and less than all proxy buffers but one: a value outside that fails nginx -t, which keeps the running configuration and reports it'),
  'proxy-headers-hash-bucket-size': row('proxyHeadersHashBucketSize', intSchema(32, 1024), 'proxy_headers_hash_bucket_size'),
  'proxy-headers-hash-max-size': row('proxyHeadersHashMaxSize', intSchema(64, 65536), 'proxy_headers_hash_max_size'),
  'retry-non-idempotent': row('retryNonIdempotent', boolSchema, 'Also retry POST, LOCK and PATCH requests on another endpoint when proxy-next-upstream says so (non_idempotent)'),
  'upstream-keepalive-time': row('upstreamKeepaliveTime', timeSchema, 'How long one backend connection may be reused in all (keepalive_time), e.g. 1h'),
  'enable-multi-accept': row('enableMultiAccept', boolSchema, 'A worker accepts all pending connections at once (multi_accept)'),
  'worker-cpu-affinity': row('workerCpuAffinity', cpuAffinitySchema, 'Bind nginx workers to CPUs: "auto", or one bitmask per worker (worker_cpu_affinity); empty: not bound'),
  'max-worker-open-files': row('maxWorkerOpenFiles', intSchema(0, 1_048_576).refine((n) => n === 0 || n >= 1024, { message: 'expected 0 or at least 1024' }), 'Open files per nginx worker (worker_rlimit_nofile); worker connections are at most half of it. 0: from the open-files limit Portico runs with'),
  'grpc-buffer-size-kb': row('grpcBufferSizeKb', intSchema(0, 65536), 'Buffer for gRPC responses in KiB (grpc_buffer_size); 0: nginx\'s default'),
  'relative-redirects': row('relativeRedirects', boolSchema, 'Redirects nginx makes itself (a directory without its trailing slash) keep a relative Location (absolute_redirect off)'),
  'proxy-http-version': row('proxyHttpVersion', httpVersionSchema, 'HTTP version of requests to backends: "1.1" (keep-alive connections) or "1.0". An Ingress\'s proxy-http-version annotation overrides it'),
  'debug-connections': row('debugConnections', cidrsSchema, 'Comma-separated client addresses or CIDRs whose connections nginx logs at debug level (debug_connection)'),
  'enable-aio-write': row('enableAioWrite', boolSchema, 'Write temporary files (buffered request and response bodies) in nginx\'s thread pool (aio_write; reading uses it always, as ingress-nginx)'),
  'disable-http-access-log': row('disableHttpAccessLog', boolSchema, 'No access log for HTTP requests (disable-access-log turns off both)'),
  'disable-stream-access-log': row('disableStreamAccessLog', boolSchema, 'No access log for TCP and UDP services'),
  'proxy-stream-timeout': row('proxyStreamTimeout', timeSchema, 'TCP/UDP services: idle time after which a connection is closed (proxy_timeout)'),
  'proxy-stream-next-upstream': row('proxyStreamNextUpstream', boolSchema, 'TCP/UDP services: try another endpoint when one cannot be connected to (proxy_next_upstream)'),
  'proxy-stream-next-upstream-timeout': row('proxyStreamNextUpstreamTimeout', timeSchema, 'TCP/UDP services: how long endpoints are tried in all (proxy_next_upstream_timeout; 0: no limit)'),
  'proxy-stream-next-upstream-tries': row('proxyStreamNextUpstreamTries', intSchema(0, 100), 'TCP/UDP services: how many endpoints are tried (proxy_next_upstream_tries; 0: no limit)'),
  'proxy-stream-responses': row('proxyStreamResponses', intSchema(0, 1_000_000), 'UDP services: datagrams expected back per request datagram before the session ends (proxy_responses; 0: until proxy-stream-timeout)'),
  'proxy-protocol-header-timeout': row('proxyProtocolHeaderTimeout', z.string().trim().regex(/^\d{1,6}(ms|s|m|h)$/, 'expected one Go duration unit such as 5s, 500ms or 1m'), 'How long the TCP/UDP services\' and TLS passthrough\'s PROXY-protocol listeners wait for the header (proxy_protocol_timeout); a connection without it in time is closed'),
  'proxy-cookie-domain': row('proxyCookieDomain', cookieRewriteSchema('domain'), 'Rewrite the domain attribute of backends\' Set-Cookie headers on every path whose Ingress sets no proxy-cookie-domain annotation: "off" or "<domain> <replacement>" (literal text)'),
  'proxy-cookie-path': row('proxyCookiePath', cookieRewriteSchema('path'), 'As proxy-cookie-domain, for the path attribute'),
  'proxy-redirect-from': row('proxyRedirectFrom', z.string().trim().pipe(z.union([z.literal('off'), z.literal('default'), redirectTextSchema])), 'Text to replace in backends\' Location and Refresh headers on every path whose Ingress sets no proxy-redirect annotations (proxy_redirect, with proxy-redirect-to); "off" or "default": unchanged'),
  'proxy-redirect-to': row('proxyRedirectTo', z.string().trim().pipe(z.union([z.literal('off'), redirectTextSchema])), 'Replacement for proxy-redirect-from (both must be set)'),
  'proxy-max-temp-file-size': row('proxyMaxTempFileSize', optionalSizeSchema, 'Largest temporary file a buffered response may spill to (proxy_max_temp_file_size; empty: 1024m; 0: none). An Ingress\'s proxy-max-temp-file-size annotation overrides it'),
  'enable-access-log-for-default-backend': row('enableAccessLogForDefaultBackend', boolSchema, 'Log the requests Portico answers 404 because no host or path matched (ingress-nginx\'s default backend); "false" (default): not logged'),
  'enable-auth-access-log': row('enableAuthAccessLog', boolSchema, 'Log the auth-url subrequests as lines of their own (log_subrequest)'),
  'ssl-reject-handshake': row('sslRejectHandshake', boolSchema, 'Fail the TLS handshake of a server name that is no host Portico serves (none with a certificate or routes of its own, exact or under a one-label wildcard; also no server name at all) instead of answering with the default certificate, so it cannot be fingerprinted (ingress-nginx\'s ssl_reject_handshake on its catch-all server). A host with routes but no certificate still gets the default certificate'),
  'enable-ocsp': row('enableOcsp', boolSchema, 'OCSP stapling: for a certificate whose leaf names an OCSP responder (http:// in Authority Information Access) and whose chain includes its issuer, nginx fetches the responder\'s answer in the background (never during a handshake: the first handshakes go without), keeps a good one in shared memory until its nextUpdate (at most 7 days; refreshed after half of that) and staples it. The controller resolves the responder\'s name and refuses loopback, link-local, pod, Service and Portico\'s own addresses (no stapling for that certificate, logged); fetches are bounded (one per certificate a minute, 30 a minute in all, 3 s timeouts, 64 KiB answers). Responders over https:// are not used (ingress-nginx: the same key, fetched from the handshake without these limits)'),
  'forwarded-host-header': row('forwardedHostHeader', headerTokenSchema, 'The incoming header sent upstream as X-Original-Forwarded-Host (as ingress-nginx; the forwarded host Portico trusts for redirects is X-Forwarded-Host from peers of proxy-real-ip-cidr)'),
  'http-redirect-code': row(
    'httpRedirectCode',
    z.string().trim().refine((v) => ['301', '302', '307', '308'].includes(v), { message: 'expected 301, 302, 307 or 308' }).transform((v) => Number(v) as 301 | 302 | 307 | 308),
    'Status of the redirect to HTTPS (ssl-redirect, force-ssl-redirect): 301, 302, 307 or 308',
  ),
  'enable-syslog': row('enableSyslog', boolSchema, 'Send the HTTP access log to syslog-host instead of Portico\'s stdout, and a copy of nginx\'s error log (the controller keeps reading it on stderr). Needs syslog-host'),
  'syslog-host': row('syslogHost', syslogHostSchema, 'The syslog server (UDP): an IPv4 address or a DNS name, which nginx resolves when it loads the configuration (a name that does not resolve fails the check of the new configuration, and the running one stays)'),
  'syslog-port': row('syslogPort', intSchema(1, 65535), 'The syslog server\'s UDP port'),
  'preserve-trailing-slash': row('preserveTrailingSlash', boolSchema, 'The preserve-trailing-slash annotation of every Ingress that does not set it'),
  'use-port-in-redirects': row('usePortInRedirects', boolSchema, 'The use-port-in-redirects annotation of every Ingress that does not set it'),
  'disable-proxy-intercept-errors': row('disableProxyInterceptErrors', boolSchema, 'With custom-http-errors: errors the backends answer reach clients unchanged (only those nginx makes itself go to the error backend), for every Ingress without its own disable-proxy-intercept-errors annotation'),
  'service-upstream': row('serviceUpstream', boolSchema, 'The service-upstream annotation of every Ingress that does not set it: its backends are the Services\' cluster IPs'),
  // Optional Debian modules, loaded (load_module) only when asked for (nginx-driver/nginx/optional-modules.ts).
  'enable-brotli': row('enableBrotli', boolSchema, 'Compress responses of the brotli-types (and text/html) with brotli for clients that accept it (Accept-Encoding: br; preferred over gzip when both are accepted) (nginx\'s brotli filter module, Debian\'s libnginx-mod-http-brotli-filter, loaded only then). Without the module nginx serves without brotli and Portico says so (a Warning event "OptionalModuleMissing" on the controller and an error log line)'),
  'brotli-level': row('brotliLevel', intSchema(0, 11), 'brotli compression level (0-11; brotli_comp_level)'),
  'brotli-min-length': row('brotliMinLength', intSchema(0, 1_000_000_000), 'Smallest response compressed with brotli (bytes, from Content-Length; brotli_min_length)'),
  'brotli-types': row('brotliTypes', mimeTypesSchema, 'MIME types compressed with brotli besides text/html, space-separated ("*" = all; brotli_types)'),
  'use-geoip2': row('useGeoip2', boolSchema, 'The $geoip2_* variables (as ingress-nginx names them: $geoip2_city_country_code, $geoip2_city, $geoip2_asn, $geoip2_org...) from the MaxMind databases in geoip2-database-directory, looked up by the client address ($remote_addr, after use-forwarded-headers / enable-real-ip), for log-format-upstream and every other place that takes nginx variables. Portico reads the files MaxMind names GeoLite2-City, GeoLite2-Country, GeoLite2-ASN, GeoIP2-City, GeoIP2-Country, GeoIP2-ASN, GeoIP2-ISP, GeoIP2-Connection-Type and GeoIP2-Anonymous-IP (".mmdb") that are there when nginx is reloaded, and downloads none (mount them, e.g. kept current by MaxMind\'s geoipupdate). A missing or unreadable database is left out with a Warning event "GeoIP2DatabaseMissing" (never a failing reload); the variables it would fill are empty, as all of them are when use-geoip2 is off, so a log format naming them always loads'),
  'geoip2-autoreload-in-minutes': row('geoip2AutoreloadInMinutes', intSchema(0, 10_080), 'How often nginx checks the GeoIP2 databases for a newer file and loads it without a reload (auto_reload, minutes); 0: only when nginx reloads'),
  'geoip2-database-directory': row('geoip2DatabaseDirectory', z.string().trim().regex(/^\/[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/, 'expected an absolute directory path of letters, digits, ".", "_", "-"').refine((v) => !v.split('/').includes('..'), { message: '".." is not allowed' }), 'Portico\'s own: the directory of the MaxMind databases (use-geoip2); ingress-nginx\'s fixed /etc/ingress-controller/geoip by default'),
} as const;

/**
 * ingress-nginx keys that Portico accepts (their values are still checked) but that change nothing in it, with why.
 * They are reported as a difference by `portico migrate` and listed in the ConfigMap reference.
 */
export const NO_EFFECT_KEYS: Readonly<Record<string, { schema: z.ZodType<unknown, string>; default: string; why: string }>> = {
  'upstream-hash-by': { schema: z.string(), default: '', why: 'ingress-nginx reads it only as an annotation (its ConfigMap value reaches no Ingress\'s backends): use the upstream-hash-by annotation' },
  'upstream-hash-by-subset': { schema: boolSchema, default: 'false', why: 'as upstream-hash-by: an annotation only' },
  'upstream-hash-by-subset-size': { schema: intSchema(1, 1000), default: '3', why: 'as upstream-hash-by: an annotation only' },
  'app-root': { schema: z.string(), default: '', why: 'ingress-nginx reads it only as an annotation (its ConfigMap value redirects nothing): use the app-root annotation' },
  'forwarded-for-proxy-protocol-header': {
    schema: headerTokenSchema,
    default: 'X-Forwarded-For-Proxy-Protocol',
    why: 'the name of an internal header of ingress-nginx\'s use-proxy-protocol + use-forwarded-headers mode; with both, Portico takes the client from the PROXY header (no internal header)',
  },
  'reuse-port': { schema: boolSchema, default: 'true', why: 'the listeners always use reuseport (each worker has its own accept queue), ingress-nginx\'s default' },
  'enable-serial-reloads': { schema: boolSchema, default: 'false', why: 'Portico already runs one nginx -t and reload at a time, and most changes need none' },
  'disable-ipv6': { schema: boolSchema, default: 'false', why: 'nginx listens only on --listen-address (one address family); there is no separate IPv6 listener to turn off' },
  'disable-ipv6-dns': { schema: boolSchema, default: 'false', why: 'Portico\'s nginx resolves no names: the controller resolves ExternalName Services and collectors itself' },
  'limit-conn-zone-variable': {
    schema: z.string().trim().refine((v) => v === '$binary_remote_addr' || v === '$remote_addr', { message: 'Portico counts connections per client address only: expected $binary_remote_addr or $remote_addr' }),
    default: '$binary_remote_addr',
    why: 'limit-connections always counts per client address (the values accepted mean exactly that)',
  },
  'proxy-ssl-location-only': { schema: boolSchema, default: 'false', why: 'the proxy-ssl-* annotations always apply to the paths of their Ingress only (Portico has no per-server proxy settings)' },
  'strict-validate-path-type': { schema: boolSchema, default: 'true', why: 'Portico always matches Exact and Prefix paths literally (never as regexes, whatever use-regex says) and checks the characters of every path; "false" does not make it accept more' },
};
