// The controller ConfigMap (--configmap): one row per key with schema, default and meaning. A bad value keeps the
// previous value of that key and is reported; docs/reference/configmap.md is generated from this table.
import { isIP } from 'node:net';
import { createSecureContext } from 'node:tls';
import { z } from 'zod';
import type { GlobalSettings, ModsecDirective } from '../config/types.ts';
import { DEFAULT_NGINX_TUNING as T, type NginxTuning } from '../config/nginx-tuning.ts';
import { boolSchema, headerTokenSchema, intSchema, loadBalanceSchema, logFormatSchema, secondsSchema, sizeSchema, streamLogFormatSchema, zodMessage } from '../values/safe.ts';
import { RISKS, type Risk } from '../annotations/table.ts';
import { httpErrorCodesSchema } from '../annotations/errors-mirror.ts';
import { modsecuritySnippetConfigSchema } from '../annotations/modsecurity.ts';
import { isCidr } from '../../crds/schema/plugin-config.ts';
import { regexProblem } from '../values/regex-path.ts';
import { TRACING_KEYS, type OtelConfigValues } from './tracing-config.ts';
import { GLOBAL_RATE_LIMIT_KEYS, MEMCACHED_KEYS_WHY, type GlobalRateLimitValues } from './global-rate-limit-config.ts';
import { DIRECTIVE_KEYS, NO_EFFECT_KEYS, mimeTypesSchema } from './directive-keys.ts';
import { GLOBAL_HEADER_KEYS, type GlobalHeaderValues } from './global-headers.ts';

export { headerTokenSchema, mimeTypesSchema };

export type GlobalConfigValues = Omit<GlobalSettings, 'listen' | 'loopId' | 'workerShutdownTimeoutSeconds' | keyof NginxTuning> & NginxTuning & {
  loadBalance: 'round_robin' | 'ewma';
  workerShutdownTimeoutSeconds: number;
  /** ingress-nginx's force-ssl-redirect: the default of the annotation — redirect to HTTPS even without TLS. */
  forceSslRedirect: boolean;
  /** Status of requests refused by the limit-rps / limit-rpm annotations (ingress-nginx's limit-req-status-code). */
  limitReqStatusCode: number;
  /** Status of requests refused by the limit-connections annotation (ingress-nginx's limit-conn-status-code). */
  limitConnStatusCode: number;
  /** ingress-nginx's allow-snippet-annotations: the snippet annotations are refused unless true. */
  allowSnippetAnnotations: boolean;
  /** ingress-nginx's annotations-risk-level: annotations of a higher risk are refused (reconcilers/translate/risk.ts). */
  annotationsRiskLevel: Risk;
  /** ingress-nginx's annotation-value-word-blocklist: an Ingress with one of these in an annotation value is not served. */
  annotationValueWordBlocklist: string[];
  /**
   * Portico's own switch: auth-url and mirror-target may reach Services (by DNS name or cluster IP) of other
   * namespaces than the Ingress's. Off: only the Ingress's own namespace, like every other reference.
   */
  allowCrossNamespaceAuth: boolean;
  /**
   * ingress-nginx's global external authentication (global-auth-*), kept as written: the translation validates
   * them together (reconcilers/annotations/plugins.ts globalAuthSpec), so an invalid one fails the Ingresses it
   * applies to closed instead of keeping an older value or none.
   */
  globalAuthUrl: string;
  globalAuthMethod: string;
  globalAuthSignin: string;
  globalAuthSigninRedirectParam: string;
  globalAuthResponseHeaders: string;
  globalAuthRequestRedirect: string;
  globalAuthCacheKey: string;
  globalAuthCacheDuration: string;
  globalAuthAlwaysSetCookie: string;
  globalAuthSnippet: string;
  /** global-allowed-response-headers: header names (lower-case) the custom-headers annotation may set. */
  globalAllowedResponseHeaders: string[];
  /**
   * namespace-exclusive-hosts: each host belongs to the namespace of the oldest Ingress or Route naming it; paths of
   * other namespaces on it are refused (Warning naming the owner). Off: namespaces share hosts, as in ingress-nginx.
   */
  namespaceExclusiveHosts: boolean;
  /** no-auth-locations: Ingress paths starting with one of these get no authentication. */
  noAuthLocations: string[];
  /** no-tls-redirect-locations: path beginnings never redirected to HTTPS. */
  noTlsRedirectLocations: string[];

  /** custom-http-errors: error codes of every Ingress path without its own custom-http-errors annotation. */
  customHttpErrors: number[];
  /** enable-modsecurity: ModSecurity on every Ingress path (an Ingress's enable-modsecurity "false" opts out). */
  enableModsecurity: boolean;
  /** enable-owasp-modsecurity-crs: the OWASP Core Rule Set wherever ModSecurity is on. */
  enableOwaspModsecurityCrs: boolean;
  /** modsecurity-snippet: directives (the allowlist of reconcilers/annotations/modsecurity.ts) wherever ModSecurity is on. */
  modsecuritySnippet: ModsecDirective[];
  /** whitelist-source-range: clients allowed on every path whose Ingress sets no allowlist of its own (and every Route). */
  whitelistSourceRange: AccessList<string>;
  /** denylist-source-range: clients refused on every path whose Ingress sets no denylist of its own (and every Route). */
  denylistSourceRange: AccessList<string>;
  /** block-cidrs: clients refused everywhere (403). */
  blockCidrs: AccessList<string>;
  /** block-user-agents: User-Agent values refused everywhere (403). */
  blockUserAgents: AccessList<MapPattern>;
  /** block-referers: Referer values refused everywhere (403). */
  blockReferers: AccessList<MapPattern>;
} & OtelConfigValues & GlobalHeaderValues & GlobalRateLimitValues;

/**
 * A ConfigMap list that controls access: its items, or why the value cannot be applied — then what it governs fails
 * closed (503) instead of keeping an older value or none, which for an allowlist would let everyone in.
 */
export type AccessList<T> = { items: T[]; error?: undefined } | { items?: undefined; error: string };

/** An nginx `map` source: an exact string, or a PCRE (`~`, or `~*` ignoring case), as ingress-nginx writes them. */
export interface MapPattern {
  match: 'exact' | 'regex' | 'iregex';
  value: string;
}

/** At most this many entries per list, and this many characters per entry. */
export const MAX_ACCESS_ITEMS = 1024;
const MAX_PATTERN = 512;

/** Comma-separated CIDRs or addresses (whitelist-source-range, denylist-source-range, block-cidrs), as ingress-nginx. */
export const cidrListSchema = z.string().transform((v, ctx): string[] => {
  const out: string[] = [];
  for (const part of v.split(',')) {
    const item = part.trim();
    if (!item) continue;
    if (!isCidr(item)) {
      ctx.addIssue({ code: 'custom', message: `"${item.slice(0, 60)}" is not an IP address or CIDR (e.g. 10.0.0.0/8, 2001:db8::/32)` });
      return z.NEVER;
    }
    out.push(item);
  }
  if (out.length > MAX_ACCESS_ITEMS) {
    ctx.addIssue({ code: 'custom', message: `at most ${MAX_ACCESS_ITEMS} addresses or CIDRs` });
    return z.NEVER;
  }
  return [...new Set(out)];
});

/**
 * Comma-separated nginx map sources (block-user-agents, block-referers), as ingress-nginx: an exact string, or "~"
 * (case-sensitive) / "~*" (case-insensitive) and a PCRE, checked with PCRE's rules (regex-path.ts: no backtracking
 * verbs, callouts, recursion, lookbehind, "$name"; bounded in length and compiled size). Exact strings are
 * printable ASCII without quotes, backslashes or nginx's syntax characters (; { } # $). A regex cannot hold a comma (the separator, as in ingress-nginx).
 */
export const mapPatternListSchema = z.string().transform((v, ctx): MapPattern[] => {
  const out: MapPattern[] = [];
  for (const part of v.split(',')) {
    const item = part.trim();
    if (!item) continue;
    const fail = (why: string) => {
      ctx.addIssue({ code: 'custom', message: `"${item.slice(0, 60)}": ${why}` });
      return z.NEVER;
    };
    if (item.length > MAX_PATTERN) return fail(`longer than ${MAX_PATTERN} characters`);
    if (item.startsWith('~')) {
      const match = item.startsWith('~*') ? 'iregex' : 'regex';
      const re = item.slice(match === 'iregex' ? 2 : 1);
      if (!re) return fail('an empty regex');
      if (/["\u0000-\u001f\u007f]/.test(re)) return fail('a regex may not hold quotes or control characters');
      const problem = regexProblem(re);
      if (problem) return fail(`regular expression ${problem}`);
      out.push({ match, value: re });
    } else {
      if (!/^[\x20-\x7e]+$/.test(item) || /["'\\;{}#$]/.test(item)) return fail('an exact value must be printable ASCII without quotes, backslashes, ";", "{", "}", "#" or "$" (start it with "~" or "~*" for a regex)');
      out.push({ match: 'exact', value: item });
    }
  }
  if (out.length > MAX_ACCESS_ITEMS) {
    ctx.addIssue({ code: 'custom', message: `at most ${MAX_ACCESS_ITEMS} values` });
    return z.NEVER;
  }
  return out;
});

/** The ConfigMap keys whose invalid value fails closed (AccessList) instead of keeping the previous value. */
export const ACCESS_KEYS = ['whitelist-source-range', 'denylist-source-range', 'block-cidrs', 'block-user-agents', 'block-referers'] as const;

/** A global-auth-* key: any text is accepted here (checked by the translation, which fails closed). */
const rawText = z.string().transform((v) => v.trim());
/** Comma-separated path beginnings ("/.well-known/acme-challenge"): path characters only. */
const locationList = z
  .string()
  .transform((v) => v.split(',').map((x) => x.trim()).filter(Boolean))
  .pipe(z.array(z.string().regex(/^\/[A-Za-z0-9._~!&()*+=:@%/-]{0,255}$/, 'expected paths such as /.well-known/acme-challenge, separated by commas')).max(256));
/** Comma-separated HTTP header names, lower-cased. */
const headerNameList = z
  .string()
  .transform((v) => [...new Set(v.split(',').map((x) => x.trim().toLowerCase()).filter(Boolean))])
  .pipe(z.array(z.string().regex(/^[a-z0-9_-]{1,64}$/, 'expected header names (letters, digits, "-", "_") separated by commas')).max(256));

/** Low, Medium, High or Critical, as ingress-nginx spells them (any case). */
const riskLevelSchema = z
  .string()
  .trim()
  .transform((v) => v.toLowerCase())
  .refine((v): v is Risk => (RISKS as readonly string[]).includes(v), { message: 'expected Low, Medium, High or Critical' })
  .transform((v) => v as Risk);

interface Key<F extends keyof GlobalConfigValues> {
  field: F;
  schema: z.ZodType<GlobalConfigValues[F], string>;
  default: GlobalConfigValues[F];
  description: string;
}
const key = <F extends keyof GlobalConfigValues>(
  field: F,
  schema: z.ZodType<GlobalConfigValues[F], string>,
  dflt: GlobalConfigValues[F],
  description: string,
): Key<F> => ({ field, schema, default: dflt, description });

/**
 * An access-control list key: the schema's items, or — when the value is invalid — the error itself, so the value
 * fails closed (parseGlobalConfig still reports it as an InvalidConfiguration Warning).
 */
function accessList<T>(schema: z.ZodType<T[], string>): z.ZodType<AccessList<T>, string> {
  return z.string().transform((v): AccessList<T> => {
    const r = schema.safeParse(v);
    return r.success ? { items: r.data } : { error: zodMessage(r.error) };
  });
}

const workerProcesses = z
  .string()
  .trim()
  .refine((v) => v === 'auto' || /^\d{1,3}$/.test(v), { message: 'expected "auto" or a number of processes' })
  .transform((v) => (v === 'auto' ? ('auto' as const) : Math.max(1, Number.parseInt(v, 10))));

/**
 * lua-shared-dicts (ingress-nginx's format): "name: size, name: size", the size in MB, or with a k or m suffix.
 * Portico's zones answer to ingress-nginx's names (configuration_data, certificate_data) and to their own
 * (portico_data, portico_certs); each from 1 MB to 1 GB. A zone that is not named keeps its default.
 */
const SHARED_DICT_FIELDS: Record<string, 'dataKb' | 'certsKb' | 'metricsKb'> = {
  configuration_data: 'dataKb',
  portico_data: 'dataKb',
  certificate_data: 'certsKb',
  portico_certs: 'certsKb',
  portico_metrics: 'metricsKb',
};
export const DEFAULT_LUA_SHARED_DICTS: { dataKb: number; certsKb: number; metricsKb?: number } = { dataKb: 128 * 1024, certsKb: 32 * 1024 };
export const luaSharedDictsSchema = z.string().transform((v, ctx) => {
  const out = { ...DEFAULT_LUA_SHARED_DICTS };
  for (const part of v.split(',')) {
    const item = part.trim();
    if (!item) continue;
    const m = /^([a-z_]{1,64})\s*:\s*(\d{1,7})\s*([kKmM]?)$/.exec(item);
    const field = m ? SHARED_DICT_FIELDS[m[1] as string] : undefined;
    if (!m || !field) {
      ctx.addIssue({
        code: 'custom',
        message: m
          ? `unknown shared dict "${m[1]}": Portico has configuration_data and certificate_data (also accepted as portico_data and portico_certs) and portico_metrics (per-request metrics)`
          : `"${item.slice(0, 60)}": expected "name: size" with the size in MB, or with a k or m suffix`,
      });
      return z.NEVER;
    }
    const n = Number(m[2]);
    const kb = m[3] === 'k' || m[3] === 'K' ? n : n * 1024;
    if (kb < 1024 || kb > 1024 * 1024) {
      ctx.addIssue({ code: 'custom', message: `${m[1]}: the size must be between 1 MB and 1 GB` });
      return z.NEVER;
    }
    out[field] = kb;
  }
  return out;
});

/** proxy-real-ip-cidr: comma-separated IPv4/IPv6 addresses or CIDRs of trusted proxies (at most 64). */
export const realIpCidrSchema = z.string().transform((v, ctx) => {
  const out: string[] = [];
  for (const part of v.split(',')) {
    const item = part.trim();
    if (!item) continue;
    const m = /^([0-9a-fA-F.:]{2,45})(?:\/(\d{1,3}))?$/.exec(item);
    const family = m ? isIP(m[1] as string) : 0;
    if (!m || !family || (m[2] !== undefined && Number(m[2]) > (family === 4 ? 32 : 128))) {
      ctx.addIssue({ code: 'custom', message: `"${item.slice(0, 60)}" is not an IP address or CIDR` });
      return z.NEVER;
    }
    out.push(item);
  }
  if (out.length > 64) {
    ctx.addIssue({ code: 'custom', message: 'at most 64 trusted proxy CIDRs' });
    return z.NEVER;
  }
  return out;
});

// ---- the nginx tuning keys (reconcilers/config/nginx-tuning.ts) -------------------------------------------------
// Each schema has an explicit alphabet: nothing that could end a directive or a block (";", "{", "}"), start a
// comment ("#"), a variable ("$"), a string (quotes), a new line (newlines, NUL, U+2028) or a second token reaches
// the value; the renderer checks the alphabet again when it emits it.

/** "on"/"off" (ingress-nginx's proxy-buffering, proxy-request-buffering) or "true"/"false". */
export const onOffSchema = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => v === 'on' || v === 'off' || v === 'true' || v === 'false', { message: 'expected "on" or "off"' })
  .transform((v) => v === 'on' || v === 'true');


const UNIT: Record<string, number> = { '': 1, k: 1024, m: 1024 * 1024 };
/** A buffer size in nginx syntax ("4k", "1m", "8192"), between `min` and `max` bytes. */
export const bufferSizeSchema = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d{1,8}[kKmM]?$/, 'expected a size such as 512, 4k or 1m')
    .refine((v) => {
      const n = Number.parseInt(v, 10) * (UNIT[v.slice(-1).toLowerCase()] ?? 1);
      return n >= min && n <= max;
    }, { message: `the size must be between ${min} bytes and ${max / 1024 / 1024}m` });

/** An nginx time in whole units (ssl-session-timeout): "600", "10m", "1h", "1d". */
export const nginxTimeSchema = z
  .string()
  .trim()
  .regex(/^\d{1,7}[smhd]?$/, 'expected a time such as 600, 10m, 1h or 1d');

const TLS_PROTOCOLS = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'];
/** ssl-protocols: TLSv1, TLSv1.1, TLSv1.2, TLSv1.3, space-separated (SSLv2/SSLv3 are refused). */
export const sslProtocolsSchema = z.string().transform((v, ctx) => {
  const items = v.trim().split(/[ \t]+/).filter(Boolean);
  const bad = items.find((p) => !TLS_PROTOCOLS.includes(p));
  if (bad !== undefined || !items.length) {
    ctx.addIssue({ code: 'custom', message: `${bad === undefined ? 'no protocol' : JSON.stringify(bad.slice(0, 40))}: expected TLSv1, TLSv1.1, TLSv1.2 or TLSv1.3, space-separated` });
    return z.NEVER;
  }
  return TLS_PROTOCOLS.filter((p) => items.includes(p)).join(' ');
});

/** ssl-ciphers: an OpenSSL cipher list (names, ":", "!", "+", "-", "@STRENGTH"), which OpenSSL must accept. */
export const sslCiphersSchema = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9!+@=:._-]{1,2048}$/, 'expected an OpenSSL cipher list: cipher names joined with ":" (letters, digits and ! + @ = . _ -)')
  .refine((v) => {
    try {
      createSecureContext({ ciphers: v });
      return true;
    } catch {
      return false;
    }
  }, { message: 'OpenSSL matches no cipher in this list' });

const NEXT_UPSTREAM = ['error', 'timeout', 'invalid_header', 'http_500', 'http_502', 'http_503', 'http_504', 'http_403', 'http_404', 'http_429', 'non_idempotent', 'off'];
/** proxy-next-upstream: nginx's conditions, space-separated; "off" alone. */
export const nextUpstreamSchema = z.string().transform((v, ctx) => {
  const items = [...new Set(v.trim().split(/[ \t]+/).filter(Boolean))];
  const bad = items.find((t) => !NEXT_UPSTREAM.includes(t));
  if (bad !== undefined || !items.length || (items.includes('off') && items.length > 1)) {
    ctx.addIssue({
      code: 'custom',
      message: bad !== undefined ? `${JSON.stringify(bad.slice(0, 40))} is not one of ${NEXT_UPSTREAM.join(', ')}` : '"off" alone, or space-separated conditions such as "error timeout http_502"',
    });
    return z.NEVER;
  }
  return items.join(' ');
});

/** large-client-header-buffers: "<number> <size>", e.g. "4 8k" (1-64 buffers of 1k to 1m). */
export const largeBuffersSchema = z.string().transform((v, ctx) => {
  const m = /^(\d{1,2})[ \t]+(\d{1,7}[kKmM]?)$/.exec(v.trim());
  const count = m ? Number(m[1]) : 0;
  const size = m ? bufferSizeSchema(1024, 1024 * 1024).safeParse(m[2]) : null;
  if (!m || count < 1 || count > 64 || !size?.success) {
    ctx.addIssue({ code: 'custom', message: 'expected "<number> <size>" such as "4 8k": 1 to 64 buffers of 1k to 1m' });
    return z.NEVER;
  }
  return `${count} ${m[2]}`;
});

/** error-log-level: nginx's severities, lowest first. */
export const errorLogLevelSchema = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.enum(['debug', 'info', 'notice', 'warn', 'error', 'crit', 'alert', 'emerg'], { error: () => 'expected one of debug, info, notice, warn, error, crit, alert, emerg' }));

/**
 * access-log-params: nginx's access_log buffering parameters, each at most once: buffer=<size> (1k to 1m),
 * flush=<time> (needs buffer or gzip, as nginx), gzip or gzip=<1-9>. Nothing else (no if=, no path).
 */
export const accessLogParamsSchema = z.string().transform((v, ctx) => {
  const seen = new Map<string, string>();
  for (const t of v.trim().split(/[ \t]+/).filter(Boolean)) {
    const m = /^(buffer|flush|gzip)(?:=(.*))?$/.exec(t);
    const name = m?.[1] ?? '';
    const arg = m?.[2];
    const ok =
      (name === 'buffer' && arg !== undefined && bufferSizeSchema(1024, 1024 * 1024).safeParse(arg).success) ||
      (name === 'flush' && arg !== undefined && /^\d{1,6}(ms|s|m|h)?$/.test(arg) && !/^0+(ms|s|m|h)?$/.test(arg)) ||
      (name === 'gzip' && (arg === undefined || /^[1-9]$/.test(arg)));
    if (!ok || seen.has(name)) {
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(t.slice(0, 60))}: expected buffer=<size> (1k to 1m), flush=<time> (e.g. 5s, 1m), gzip or gzip=<1-9>, each at most once` });
      return z.NEVER;
    }
    seen.set(name, t);
  }
  if (seen.has('flush') && !seen.has('buffer') && !seen.has('gzip')) {
    ctx.addIssue({ code: 'custom', message: 'flush= needs buffer= or gzip (nginx has nothing to flush otherwise)' });
    return z.NEVER;
  }
  return [...seen.values()].join(' ');
});

export const CONFIG_KEYS = {
  'proxy-body-size': key('proxyBodySize', sizeSchema, '1m', 'Maximum request body size (client_max_body_size)'),
  'proxy-connect-timeout': key('proxyConnectTimeoutSeconds', secondsSchema, 5, 'Upstream connect timeout (s)'),
  'proxy-read-timeout': key('proxyReadTimeoutSeconds', secondsSchema, 60, 'Upstream read timeout (s)'),
  'proxy-send-timeout': key('proxySendTimeoutSeconds', secondsSchema, 60, 'Upstream send timeout (s)'),
  'keep-alive': key('keepAliveSeconds', secondsSchema, 75, 'Client keep-alive timeout (s)'),
  'keep-alive-requests': key('keepAliveRequests', intSchema(1, 10_000_000), 1000, 'Requests per client keep-alive connection'),
  'worker-processes': key('workerProcesses', workerProcesses, 'auto', 'nginx worker processes ("auto" = one per core)'),
  'worker-shutdown-timeout': key('workerShutdownTimeoutSeconds', secondsSchema, 240, 'How long old workers may finish requests after a reload (s)'),
  'use-forwarded-headers': key('useForwardedHeaders', boolSchema, false, 'Behind an L7 load balancer: from peers in proxy-real-ip-cidr (default every IPv4 peer, as ingress-nginx), the client address is read from forwarded-for-header and the scheme, host and port from X-Forwarded-Proto/-Host/-Port — they decide the redirect to HTTPS and are sent upstream (X-Forwarded-Proto, X-Forwarded-Scheme, X-Scheme, X-Forwarded-Host, X-Forwarded-Port). Other peers\' headers are replaced by Portico\'s own view'),
  'log-format-upstream': key('logFormatUpstream', logFormatSchema, '', 'Access log format of HTTP requests: text, $variables and JSON punctuation (double quotes, braces; no single quotes, ";", backslashes or newlines). Empty = ingress-nginx\'s default, field for field. ingress-nginx\'s $proxy_upstream_name, $proxy_alternative_upstream_name, $req_id, $namespace, $ingress_name, $service_name, $service_port and $location_path are available with its values; an unknown variable is refused'),
  'log-format-stream': key('logFormatStream', streamLogFormatSchema, T.logFormatStream, 'Access log format of TCP/UDP services (the stream section\'s variables); empty = ingress-nginx\'s default "[$remote_addr] [$time_local] $protocol $status $bytes_sent $bytes_received $session_time"'),
  'skip-access-log-urls': key('skipAccessLogUrls', mapPatternListSchema, T.skipAccessLogUrls, 'Comma-separated request URIs not written to the access log, compared with $request_uri (path and query, as sent) as nginx\'s map does: exact strings, or "~" / "~*" and a PCRE (as block-user-agents)'),
  'access-log-params': key('accessLogParams', accessLogParamsSchema, T.accessLogParams, 'Parameters of the access_log directives (HTTP and stream): buffer=<size> (1k-1m), flush=<time>, gzip or gzip=<1-9>. Empty: a log file is written with buffer=64k flush=1s, stdout/stderr one write per line (lines of several workers never interleave; a buffer larger than 4k on a pipe may)'),
  'error-log-level': key('errorLogLevel', errorLogLevelSchema, T.errorLogLevel, 'nginx\'s error log level: debug, info, notice, warn, error, crit, alert or emerg (nginx\'s lines are forwarded into the controller\'s log)'),
  'generate-request-id': key('generateRequestId', boolSchema, T.generateRequestId, 'Send an X-Request-ID of 32 hex characters upstream when the client sent none (unique: 64 random bits per nginx worker and its request counter; nginx\'s $request_id would cost an OpenSSL draw per request); "false": only the client\'s own is sent (empty otherwise). $req_id logs the id sent'),
  'load-balance': key('loadBalance', loadBalanceSchema, 'round_robin', 'Default balancing algorithm: round_robin or ewma (latency-aware)'),
  'custom-http-errors': key('customHttpErrors', httpErrorCodesSchema, [], 'Comma-separated status codes (400-599) caught for every Ingress path without its own custom-http-errors annotation: the request goes to the Ingress\'s default-backend Service with X-Code and the other X-* headers (as the annotation), else to --default-backend-service\'s Service (as ingress-nginx), else gets nginx\'s own page for that status'),
  'limit-req-status-code': key('limitReqStatusCode', intSchema(400, 599), 503, 'Status for requests over the limit-rps / limit-rpm annotations (Plugin objects set their own, default 429)'),
  'limit-conn-status-code': key('limitConnStatusCode', intSchema(400, 599), 503, 'Status for requests over the limit-connections annotation'),
  'ssl-redirect': key('sslRedirect', boolSchema, true, 'Redirect HTTP to HTTPS for hosts with TLS'),
  'force-ssl-redirect': key('forceSslRedirect', boolSchema, false, 'Redirect HTTP to HTTPS (308) on every Ingress path, also of hosts without a TLS section (TLS terminated by a load balancer in front); an Ingress\'s force-ssl-redirect annotation overrides it. "HTTP" is the scheme the client used: with use-forwarded-headers, a trusted peer\'s X-Forwarded-Proto (so "https" there is never redirected, no loop behind a TLS-terminating load balancer)'),
  hsts: key('hsts', boolSchema, true, 'Send Strict-Transport-Security on HTTPS responses'),
  'hsts-max-age': key('hstsMaxAgeSeconds', intSchema(0, 1_000_000_000), 31536000, 'HSTS max-age (s)'),
  'hsts-include-subdomains': key('hstsIncludeSubdomains', boolSchema, true, 'HSTS includeSubDomains'),
  'hsts-preload': key('hstsPreload', boolSchema, false, 'HSTS preload'),
  'lua-shared-dicts': key('luaSharedDicts', luaSharedDictsSchema, DEFAULT_LUA_SHARED_DICTS, 'Shared memory for backends, certificates and per-request metrics, e.g. "configuration_data: 256, certificate_data: 64" (MB, or k/m suffix; 1 MB–1 GB). A full zone refuses writes (logged, counted), never evicts; portico_metrics (default 32 MB) holds the per-request metric totals: when it is full, requests of series it has not seen yet are not counted (logged, counted in portico_nginx_shared_dict_write_failures{dict="metrics"}) and every series it holds keeps counting'),
  'allow-snippet-annotations': key('allowSnippetAnnotations', boolSchema, false, 'Allow the configuration-snippet / server-snippet annotations (as ingress-nginx ≥ 1.9, off by default); they also need annotations-risk-level: Critical. Snippets are parsed and compiled from an allowlist, never pasted into nginx.conf'),
  'allow-cross-namespace-auth': key('allowCrossNamespaceAuth', boolSchema, false, 'Let the auth-url and mirror-target annotations reach Services of other namespaces (by <svc>.<ns>.svc name or cluster IP). Off (Portico\'s default; ingress-nginx has no such limit): an Ingress may name only Services of its own namespace, and a host name or IP literal that is a Service\'s cluster IP is refused, so an auth reply or a mirrored request body never crosses namespaces; a refused auth-url fails the Ingress closed, a refused mirror-target mirrors nothing. External URLs stay allowed (never to loopback, link-local, metadata or Portico\'s own addresses). The ConfigMap\'s global-auth-url is the administrator\'s and may name any namespace'),
  'annotation-value-word-blocklist': key(
    'annotationValueWordBlocklist',
    z.string().transform((v) => [...new Set(v.split(',').map((w) => w.trim()).filter(Boolean))]).pipe(z.array(z.string().max(256, 'a word of at most 256 characters')).max(256, 'at most 256 words')),
    [],
    'Comma-separated words (case-sensitive, as ingress-nginx) that no nginx.ingress.kubernetes.io/ or portico.dev/ annotation value may contain: an Ingress with one is not served (a BlockedAnnotationValue Warning names the annotation and the word) and the admission webhook denies it. Empty (default): none. Portico never pastes annotation text into nginx.conf, so this is a policy of the cluster\'s, not a guard Portico needs',
  ),
  'annotations-risk-level': key('annotationsRiskLevel', riskLevelSchema, 'high', 'Low, Medium, High or Critical (ingress-nginx ≥ 1.12; default High): annotations of a higher risk (see the annotation table) are refused with a RiskyAnnotation Warning and not applied; refused access control fails the Ingress closed'),
  'global-auth-url': key('globalAuthUrl', rawText, '', 'External authentication for every Ingress (as the auth-url annotation: an http(s) URL, a Service DNS name goes to its endpoints) unless it sets enable-global-auth: "false" or its own auth-url. An invalid value in any global-auth-* key makes every Ingress it applies to fail closed (503)'),
  'global-auth-method': key('globalAuthMethod', rawText, '', 'Method of the global auth subrequest (as auth-method)'),
  'global-auth-signin': key('globalAuthSignin', rawText, '', 'Sign-in URL the client is redirected to on 401 (as auth-signin)'),
  'global-auth-signin-redirect-param': key('globalAuthSigninRedirectParam', rawText, '', 'Query parameter of global-auth-signin carrying the original URL (default rd)'),
  'global-auth-response-headers': key('globalAuthResponseHeaders', rawText, '', 'Headers copied from the auth response onto the proxied request (as auth-response-headers)'),
  'global-auth-request-redirect': key('globalAuthRequestRedirect', rawText, '', 'X-Auth-Request-Redirect value (as auth-request-redirect)'),
  'global-auth-cache-key': key('globalAuthCacheKey', rawText, '', 'Cache key of global auth answers (as auth-cache-key); cached per host'),
  'global-auth-cache-duration': key('globalAuthCacheDuration', rawText, '', 'Cache durations per status (as auth-cache-duration; default "200 202 401 5m")'),
  'global-auth-always-set-cookie': key('globalAuthAlwaysSetCookie', rawText, '', '"true": send the auth response\'s Set-Cookie with every answer (as auth-always-set-cookie)'),
  'global-auth-snippet': key('globalAuthSnippet', rawText, '', 'Not supported: set, it makes every Ingress under global auth fail closed (its directives are not compiled into the auth subrequest)'),
  'global-allowed-response-headers': key('globalAllowedResponseHeaders', headerNameList, [], 'Comma-separated header names the custom-headers annotation may set (as ingress-nginx ≥ 1.12: empty = none, and an Ingress naming another header fails closed)'),
  'namespace-exclusive-hosts': key('namespaceExclusiveHosts', boolSchema, false, 'Portico\'s own: "true" gives each host (and the catch-all of rules without a host) to the namespace of the oldest Ingress or Route that names it; paths of other namespaces on it are refused with a HostOwnedByNamespace Warning naming the owner. Default "false": Ingresses and Routes of several namespaces may share a host, as in ingress-nginx (each path still stays its own namespace\'s: canaries, use-regex, rewrite-target and app-root never reach another namespace\'s paths). `portico migrate` lists the hosts shared across namespaces'),
  'no-tls-redirect-locations': key('noTlsRedirectLocations', locationList, ['/.well-known/acme-challenge'], 'Comma-separated path beginnings: Ingress paths that start with one are never redirected to HTTPS, whatever ssl-redirect or force-ssl-redirect say (compared with the path as written, as ingress-nginx does; the default keeps ACME HTTP-01 challenges on HTTP)'),
  'no-auth-locations': key('noAuthLocations', locationList, ['/.well-known/acme-challenge'], 'Comma-separated path beginnings: Ingress paths that start with one get no external or basic authentication (compared with the path as written in the Ingress, as ingress-nginx does)'),
  'proxy-real-ip-cidr': key('proxyRealIpCidr', realIpCidrSchema, ['0.0.0.0/0'], 'With use-forwarded-headers, enable-real-ip or use-proxy-protocol: comma-separated addresses or CIDRs of the proxies trusted to name the client (forwarded-for-header or the PROXY protocol header) and, with use-forwarded-headers, the scheme, host and port (X-Forwarded-Proto/-Host/-Port: the redirect to HTTPS, and what the backend is sent). Default "0.0.0.0/0", as ingress-nginx: every IPv4 peer is trusted, so switch use-forwarded-headers on only where every client connection comes through the load balancer (or list the load balancer\'s addresses here), since a client reaching Portico directly could otherwise pick its own address and scheme. IPv6 peers are trusted only when listed (e.g. "::/0"). An empty value trusts nobody, except with use-proxy-protocol (the listeners accept PROXY connections only), where every peer is'),
  // ModSecurity (reconcilers/annotations/modsecurity.ts, nginx-driver/nginx/modsecurity.ts).
  'enable-modsecurity': key('enableModsecurity', boolSchema, false, 'ModSecurity on every Ingress path (Portico\'s Route objects excepted): Debian\'s recommended configuration (SecRuleEngine DetectionOnly), then the CRS with enable-owasp-modsecurity-crs, then modsecurity-snippet; an Ingress\'s enable-modsecurity "false" opts out. Rule matches and blocks are warnings in the controller\'s log. Where nginx\'s ModSecurity module is not installed, the paths it applies to answer 503 (fail closed)'),
  'enable-owasp-modsecurity-crs': key('enableOwaspModsecurityCrs', boolSchema, false, 'The OWASP Core Rule Set (Debian\'s modsecurity-crs) wherever ModSecurity is on, also where an Ingress\'s enable-modsecurity turns it on (ingress-nginx loads it then only with the ConfigMap\'s enable-modsecurity)'),
  'modsecurity-snippet': key('modsecuritySnippet', modsecuritySnippetConfigSchema, [], 'ModSecurity directives wherever ModSecurity is on, after the recommended configuration and the CRS, before an Ingress\'s own modsecurity-snippet: the annotation\'s allowlist (SecRuleEngine, SecRequestBodyAccess, SecResponseBodyAccess, SecRequestBodyLimit, SecAuditEngine, SecRuleRemoveById, SecRuleRemoveByTag); anything else refuses the value (the previous one stays)'),
  // Real client address and forwarded headers.
  'enable-real-ip': key('enableRealIp', boolSchema, T.enableRealIp, 'Take the client address from forwarded-for-header when the peer is in proxy-real-ip-cidr (nginx realip module), without trusting the other X-Forwarded-* headers'),
  'forwarded-for-header': key('forwardedForHeader', headerTokenSchema, T.forwardedForHeader, 'Header the client address is read from (use-forwarded-headers, enable-real-ip; not with use-proxy-protocol) and appended to (compute-full-forwarded-for)'),
  'compute-full-forwarded-for': key('computeFullForwardedFor', boolSchema, T.computeFullForwardedFor, 'With use-forwarded-headers (ignored without it, as in ingress-nginx): append the peer\'s address to the incoming X-Forwarded-For instead of replacing it (the backend then picks the client address by its own trusted proxies)'),
  'proxy-add-original-uri-header': key('proxyAddOriginalUriHeader', boolSchema, T.proxyAddOriginalUriHeader, 'Send the request URI as the client sent it (path and query) upstream as X-Original-URI'),
  'use-proxy-protocol': key('useProxyProtocol', boolSchema, T.useProxyProtocol, 'The HTTP and HTTPS listeners expect the PROXY protocol (every connection must start with it); its source address is the client\'s'),
  // TLS.
  'ssl-protocols': key('sslProtocols', sslProtocolsSchema, T.sslProtocols, 'TLS versions offered: TLSv1, TLSv1.1, TLSv1.2, TLSv1.3 (space-separated)'),
  'ssl-ciphers': key('sslCiphers', sslCiphersSchema, T.sslCiphers, 'OpenSSL cipher list for TLS ≤ 1.2 (ssl_ciphers); a list OpenSSL matches nothing in is refused'),
  'ssl-prefer-server-ciphers': key('sslPreferServerCiphers', boolSchema, T.sslPreferServerCiphers, 'Prefer the server\'s cipher order (ssl_prefer_server_ciphers)'),
  'ssl-session-cache': key('sslSessionCache', boolSchema, T.sslSessionCache, 'Shared TLS session cache among workers'),
  'ssl-session-cache-size': key('sslSessionCacheSize', bufferSizeSchema(1024 * 1024, 1024 * 1024 * 1024), T.sslSessionCacheSize, 'Size of the shared TLS session cache (1m to 1024m)'),
  'ssl-session-timeout': key('sslSessionTimeout', nginxTimeSchema, T.sslSessionTimeout, 'How long a client may reuse TLS session parameters (nginx time: 600, 10m, 1h, 1d)'),
  'ssl-session-tickets': key('sslSessionTickets', boolSchema, T.sslSessionTickets, 'TLS session tickets (session resumption without the cache); keys are per nginx process, random'),
  'ssl-buffer-size': key('sslBufferSize', bufferSizeSchema(1024, 64 * 1024), T.sslBufferSize, 'Size of the buffer TLS data is sent in (1k to 64k)'),
  'use-http2': key('useHttp2', boolSchema, T.useHttp2, 'HTTP/2 on the HTTPS listener'),
  // Client side.
  'client-header-buffer-size': key('clientHeaderBufferSize', bufferSizeSchema(512, 1024 * 1024), T.clientHeaderBufferSize, 'Buffer for reading a request header (512 bytes to 1m)'),
  'large-client-header-buffers': key('largeClientHeaderBuffers', largeBuffersSchema, T.largeClientHeaderBuffers, 'Number and size of buffers for large request headers, "<number> <size>"'),
  'client-body-buffer-size': key('clientBodyBufferSize', bufferSizeSchema(1024, 64 * 1024 * 1024), T.clientBodyBufferSize, 'Buffer for reading a request body; larger bodies go to a temporary file (1k to 64m)'),
  'client-header-timeout': key('clientHeaderTimeoutSeconds', secondsSchema, T.clientHeaderTimeoutSeconds, 'Timeout for reading a request header (s)'),
  'client-body-timeout': key('clientBodyTimeoutSeconds', secondsSchema, T.clientBodyTimeoutSeconds, 'Timeout between two reads of a request body (s)'),
  'enable-underscores-in-headers': key('enableUnderscoresInHeaders', boolSchema, T.enableUnderscoresInHeaders, 'Accept request headers with "_" in their names'),
  'ignore-invalid-headers': key('ignoreInvalidHeaders', boolSchema, T.ignoreInvalidHeaders, 'Drop request headers with invalid names'),
  // Proxying.
  'proxy-buffer-size': key('proxyBufferSize', bufferSizeSchema(1024, 16 * 1024 * 1024), T.proxyBufferSize, 'Buffer for the first part of the upstream response (its headers), and the size of each proxy buffer (1k to 16m)'),
  'proxy-buffers-number': key('proxyBuffersNumber', intSchema(4, 1024), T.proxyBuffersNumber, 'Number of proxy buffers per connection (4 to 1024: fewer fail nginx\'s busy-buffers check)'),
  'proxy-buffering': key('proxyBuffering', onOffSchema, T.proxyBuffering, '"on": buffer upstream responses; "off" (ingress-nginx\'s default): pass them to the client as they arrive'),
  'proxy-request-buffering': key('proxyRequestBuffering', onOffSchema, T.proxyRequestBuffering, '"on": read the whole request body before proxying; "off": stream it'),
  'proxy-next-upstream': key('proxyNextUpstream', nextUpstreamSchema, T.proxyNextUpstream, 'When a request is passed to the next endpoint: nginx conditions (error timeout invalid_header http_5xx http_403 http_404 http_429 non_idempotent) or off. Routes with their own retry settings keep them'),
  'proxy-next-upstream-tries': key('proxyNextUpstreamTries', intSchema(0, 100), T.proxyNextUpstreamTries, 'Attempts at most, counting the first (0 = no limit)'),
  'proxy-next-upstream-timeout': key('proxyNextUpstreamTimeoutSeconds', secondsSchema, T.proxyNextUpstreamTimeoutSeconds, 'Time limit for passing a request to the next endpoint (s; 0 = none)'),
  'upstream-keepalive-connections': key('upstreamKeepaliveConnections', intSchema(0, 100_000), T.upstreamKeepaliveConnections, 'Idle keep-alive connections to backends kept per worker (0 = none)'),
  'upstream-keepalive-timeout': key('upstreamKeepaliveTimeoutSeconds', secondsSchema, T.upstreamKeepaliveTimeoutSeconds, 'How long an idle backend connection is kept (s)'),
  'upstream-keepalive-requests': key('upstreamKeepaliveRequests', intSchema(1, 10_000_000), T.upstreamKeepaliveRequests, 'Requests per backend keep-alive connection'),
  // Responses and logs.
  'server-tokens': key('serverTokens', boolSchema, T.serverTokens, 'Send the nginx version in the Server header and error pages; "false" leaves "Server: nginx" (ingress-nginx then removes the Server header)'),
  'use-gzip': key('useGzip', boolSchema, T.useGzip, 'Compress responses of the gzip-types (and text/html) with gzip'),
  'gzip-level': key('gzipLevel', intSchema(1, 9), T.gzipLevel, 'gzip compression level (1-9)'),
  'gzip-min-length': key('gzipMinLength', intSchema(0, 1_000_000_000), T.gzipMinLength, 'Smallest response compressed (bytes, from Content-Length)'),
  'gzip-types': key('gzipTypes', mimeTypesSchema, T.gzipTypes, 'MIME types compressed besides text/html, space-separated ("*" = all)'),
  'log-format-escape-json': key('logFormatEscapeJson', boolSchema, T.logFormatEscapeJson, 'Escape variables in the access log for JSON (log_format escape=json)'),
  'log-format-escape-none': key('logFormatEscapeNone', boolSchema, T.logFormatEscapeNone, 'Do not escape variables in the access log (escape=none; wins over log-format-escape-json)'),
  'disable-access-log': key('disableAccessLog', boolSchema, T.disableAccessLog, 'No access log at all'),
  // Workers and hash tables.
  'max-worker-connections': key('maxWorkerConnections', intSchema(0, 1_048_576).refine((n) => n === 0 || n >= 512, { message: 'expected 0 or at least 512' }), T.maxWorkerConnections, 'Connections per worker (0 = as many as the open-files limit allows); lowered to half the open-files limit when that is smaller'),
  'server-name-hash-bucket-size': key('serverNameHashBucketSize', intSchema(32, 4096), T.serverNameHashBucketSize, 'server_names_hash_bucket_size (ingress-nginx: the CPU cache line, 64 on x86-64)'),
  'server-name-hash-max-size': key('serverNameHashMaxSize', intSchema(512, 1_048_576), T.serverNameHashMaxSize, 'server_names_hash_max_size'),
  'variables-hash-bucket-size': key('variablesHashBucketSize', intSchema(64, 4096), T.variablesHashBucketSize, 'variables_hash_bucket_size'),
  'variables-hash-max-size': key('variablesHashMaxSize', intSchema(1024, 1_048_576), T.variablesHashMaxSize, 'variables_hash_max_size'),
  'map-hash-bucket-size': key('mapHashBucketSize', intSchema(32, 4096), T.mapHashBucketSize, 'map_hash_bucket_size'),
  // Access control for every request (ingress-nginx's global filters). An invalid value fails closed (ACCESS_KEYS).
  'whitelist-source-range': key('whitelistSourceRange', accessList(cidrListSchema), { items: [] }, 'Comma-separated CIDRs or addresses allowed on every Ingress path whose Ingress sets no whitelist-/allowlist-source-range of its own (as ingress-nginx), and on every Route; others get 403. An invalid value makes those paths answer 503 (fail closed)'),
  'denylist-source-range': key('denylistSourceRange', accessList(cidrListSchema), { items: [] }, 'Comma-separated CIDRs or addresses refused (403) on every Ingress path whose Ingress sets no denylist-source-range of its own (as ingress-nginx), and on every Route. An invalid value makes those paths answer 503 (fail closed)'),
  'block-cidrs': key('blockCidrs', accessList(cidrListSchema), { items: [] }, 'Comma-separated CIDRs or addresses refused (403) on every request, before routing (nginx geo, a reload). An invalid value makes every request answer 503 (fail closed)'),
  'block-user-agents': key('blockUserAgents', accessList(mapPatternListSchema), { items: [] }, 'Comma-separated User-Agent values refused (403) on every request: exact strings, or "~" / "~*" (case-insensitive) and a PCRE, as nginx\'s map (at most 1024, each ≤ 512 characters; regexes checked as regex paths are). An invalid value makes every request answer 503 (fail closed)'),
  'block-referers': key('blockReferers', accessList(mapPatternListSchema), { items: [] }, 'Comma-separated Referer values refused (403) on every request, as block-user-agents. An invalid value makes every request answer 503 (fail closed)'),
  // OpenTelemetry (tracing-config.ts).
  ...TRACING_KEYS,
  // Global rate limits: the status and the Redis (global-rate-limit-config.ts).
  ...GLOBAL_RATE_LIMIT_KEYS,
  // One nginx directive each (directive-keys.ts).
  ...DIRECTIVE_KEYS,
  // Headers from other ConfigMaps (global-headers.ts).
  ...GLOBAL_HEADER_KEYS,
} as const;

/**
 * ConfigMap keys of ingress-nginx that Portico refuses on purpose, with why (the UnknownKeys Warning and the
 * migration report say so). Other unknown keys are ignored with a generic note.
 */
export const REFUSED_CONFIG_KEYS: readonly [RegExp, string][] = [
  [/^(http|main|server|location|stream)-snippet$/, 'configuration snippets in the ConfigMap are not supported: nginx.conf is never pasted into (snippet annotations are compiled from an allowlist instead)'],
  [/^(enable-)?(opentracing|zipkin|jaeger|datadog)/, 'removed from ingress-nginx (replaced by OpenTelemetry: the otel-* and otlp-* keys) and not supported'],
  [/^(ssl-ecdh-curve|ssl-dh-param|ssl-session-ticket-key|ssl-early-data)$/, 'not configurable: Portico chooses the curves, has no DH parameters (ECDHE only), and keeps ticket keys per process'],
  [/^(http2-.*)$/, 'HTTP/2 limits are nginx\'s defaults (use large-client-header-buffers, keep-alive-requests)'],
  [/^default-backend-.*$/, 'not supported: unmatched requests get Portico\'s own 404, or go to --default-backend-service; per Ingress, use the default-backend annotation'],
  [/^(access-log-path|http-access-log-path|stream-access-log-path|error-log-path)$/, 'nginx\'s logs go to Portico\'s stdout and stderr (container logs; the root filesystem is read-only): use access-log-params for buffering and a log collector for files'],
  [/^use-geoip$/, 'the legacy GeoIP databases are discontinued by MaxMind: use use-geoip2'],
  [/^nginx-status-ipv[46]-whitelist$/, 'nginx\'s status page is served only on the controller\'s configuration socket, which nothing else can reach; its counters are on /metrics (nginx_ingress_controller_nginx_process_*)'],
  [/^bind-address(-ipv4|-ipv6)?$/, 'nginx listens on the address of the --listen-address flag (by default every IPv4 address)'],
  [/^global-rate-limit-memcached-(host|port|connect-timeout|max-idle-timeout|pool-size)$/, MEMCACHED_KEYS_WHY],
  [/^allow-cross-namespace-resources$/, 'an Ingress never reads another namespace\'s Secrets or ConfigMaps in Portico (auth-secret, auth-tls-secret, proxy-ssl-secret and the others name their own namespace\'s); allow-cross-namespace-auth covers auth and mirror Services'],
];

export function refusedConfigWhy(key: string): string | null {
  return REFUSED_CONFIG_KEYS.find(([re]) => re.test(key))?.[1] ?? null;
}

export function defaultGlobalConfig(): GlobalConfigValues {
  const out: Record<string, unknown> = {};
  for (const k of Object.values(CONFIG_KEYS)) out[k.field] = k.default;
  return out as unknown as GlobalConfigValues;
}

export interface GlobalConfigResult {
  values: GlobalConfigValues;
  errors: { key: string; message: string }[];
  unknown: string[];
}

/**
 * Parses ConfigMap data over `previous`: a key that is absent takes its default; a key with a bad value keeps its
 * previous value and is reported.
 */
export function parseGlobalConfig(data: Record<string, string> | undefined, previous: GlobalConfigValues): GlobalConfigResult {
  const values = defaultGlobalConfig() as unknown as Record<string, unknown>;
  const errors: GlobalConfigResult['errors'] = [];
  const d = data ?? {};
  for (const [name, k] of Object.entries(CONFIG_KEYS)) {
    const raw = d[name];
    if (raw === undefined) continue;
    const r = (k.schema as z.ZodType).safeParse(raw);
    const closed = r.success ? (r.data as { error?: string } | null)?.error : undefined;
    if (r.success && typeof closed === 'string' && (ACCESS_KEYS as readonly string[]).includes(name)) {
      values[k.field] = r.data;
      const what = name === 'whitelist-source-range' || name === 'denylist-source-range' ? 'the paths it applies to answer' : 'every request answers';
      errors.push({ key: name, message: `${name}=${JSON.stringify(raw.slice(0, 100))}: ${closed}; failing closed: ${what} 503 until it is fixed` });
    } else if (r.success) values[k.field] = r.data;
    else {
      values[k.field] = previous[k.field];
      errors.push({ key: name, message: `${name}=${JSON.stringify(raw.slice(0, 100))}: ${zodMessage(r.error)}; keeping ${JSON.stringify(previous[k.field])}` });
    }
  }
  if (values.enableSyslog === true && !values.syslogHost) errors.push({ key: 'enable-syslog', message: 'enable-syslog is "true" but syslog-host is empty: the logs stay local' });
  // Keys accepted without effect: their values are still checked.
  for (const [name, k] of Object.entries(NO_EFFECT_KEYS)) {
    const raw = d[name];
    if (raw === undefined) continue;
    const r = k.schema.safeParse(raw);
    if (!r.success) errors.push({ key: name, message: `${name}=${JSON.stringify(raw.slice(0, 100))}: ${zodMessage(r.error)}` });
  }
  const unknown = Object.keys(d).filter((n) => !(n in CONFIG_KEYS) && !(n in NO_EFFECT_KEYS)).sort();
  return { values: values as unknown as GlobalConfigValues, errors, unknown };
}

export function configReferenceMarkdown(): string {
  const rows = Object.entries(CONFIG_KEYS).map(
    // An access list's default is shown as the empty list it is written as.
    ([n, k]) => `| \`${n}\` | \`${JSON.stringify((ACCESS_KEYS as readonly string[]).includes(n) ? (k.default as AccessList<unknown>).items : k.default)}\` | ${k.description} |`,
  );
  const none = Object.entries(NO_EFFECT_KEYS).map(([n, k]) => `| \`${n}\` | \`${JSON.stringify(k.default)}\` | Accepted (the value is checked) with no effect: ${k.why} |`);
  return ['| key | default | meaning |', '|---|---|---|', ...rows, ...none].join('\n');
}
