// Per-Ingress annotations: one row for every annotation ingress-nginx documents (and Portico's own), with its scope,
// risk, status (supported / difference / refused, with the difference or why in one line) and, for those Portico
// parses, its schema and meaning. docs/reference/annotations.md and `portico migrate` are generated from this table.
// `nginx.ingress.kubernetes.io/<name>` and `portico.dev/<name>` are equivalent; the portico.dev form wins when both
// are set.
import { createSecureContext } from 'node:tls';
import { z } from 'zod';
import { isKnownVariable } from '../values/nginx-variables.ts';
import { MAX_SNIPPET } from './snippets.ts';
import { modsecuritySnippetSchema, transactionIdSchema } from './modsecurity.ts';
import { errorPageSchema, matchCnSchema, verifyClientSchema, verifyDepthSchema } from './auth-tls.ts';
import { authHeaderListSchema, authMethodSchema, authUrlSchema, cacheDurationSchema, cacheKeySchema, redirectParamSchema, requestRedirectSchema, signinSchema } from './auth-url.ts';
import { appRootSchema, hostSchema, rewriteTargetSchema } from '../values/safe.ts';
import { defaultBackendSchema, dnsNameSchema, httpErrorCodesSchema, mirrorTargetSchema } from './errors-mirror.ts';
import { authSecretSchema, commaListSchema, pluginListSchema, realmSchema, affinityModeSchema, affinitySchema, boolSchema, cookieNameSchema, headerNameSchema, headerPatternSchema, headerValueSchema, intSchema, loadBalanceSchema, nginxVariableSchema, secondsSchema, sizeSchema } from '../values/safe.ts';

export type Scope = 'location' | 'server' | 'backend' | 'ingress';
/**
 * ingress-nginx's risk levels (annotations-risk.md); the ConfigMap's annotations-risk-level refuses every
 * annotation above it (translate/risk.ts). Portico's rows carry ingress-nginx's level for the same annotation.
 */
export type Risk = 'low' | 'medium' | 'high' | 'critical';
export const RISKS: readonly Risk[] = ['low', 'medium', 'high', 'critical'];
export const riskRank = (r: Risk): number => RISKS.indexOf(r);
/** "Critical", as ingress-nginx spells the level in its ConfigMap and documentation. */
export const riskLabel = (r: Risk): string => r[0]!.toUpperCase() + r.slice(1);

/**
 * What Portico does with an annotation: `supported` (as ingress-nginx does), `difference` (supported, with the
 * difference in one line) or `refused` (never applied: an UnsupportedAnnotation Warning, or — access control —
 * the Ingress fails closed; why in one line).
 */
export type Status = 'supported' | 'difference' | 'refused';
export const STATUSES: readonly Status[] = ['supported', 'difference', 'refused'];

interface Common {
  scope: Scope;
  /** ingress-nginx's level (annotations-risk.md); Portico's own annotations carry Portico's choice. */
  risk: Risk;
  status: Status;
  /** status difference: the difference with ingress-nginx, one line. */
  difference?: string;
  /** status refused: why, one line. */
  refusedWhy?: string;
  /** The access control it asks for (access-control.ts): when Portico cannot apply it, the Ingress fails closed. */
  access?: string;
  /** ingress-nginx's annotation (both prefixes accepted) or Portico's own (portico.dev/ only makes sense). */
  origin: 'ingress-nginx' | 'portico';
  /** Documented by ingress-nginx once, since removed from it (no risk level there: Low assumed). */
  removed?: true;
}
/** A row Portico parses: its schema validates the value (`ANNOTATIONS` holds exactly these rows). */
interface Row<T> extends Common {
  schema: z.ZodType<T, string>;
  description: string;
}
/** An annotation Portico does not parse: reported as unsupported, never applied. */
export interface RefusedRow extends Common {
  status: 'refused';
  refusedWhy: string;
  schema?: undefined;
}
export type CatalogueRow = Row<unknown> | RefusedRow;

interface RowOptions {
  difference?: string;
  refusedWhy?: string;
  access?: string;
  origin?: 'portico';
}
const row = <T>(schema: z.ZodType<T, string>, scope: Scope, risk: Risk, description: string, o: RowOptions = {}): Row<T> => ({
  schema,
  scope,
  risk,
  description,
  status: o.refusedWhy ? 'refused' : o.difference ? 'difference' : 'supported',
  ...(o.difference ? { difference: o.difference } : {}),
  ...(o.refusedWhy ? { refusedWhy: o.refusedWhy } : {}),
  ...(o.access ? { access: o.access } : {}),
  origin: o.origin ?? 'ingress-nginx',
});
const refused = (scope: Scope, risk: Risk, why: string, o: { access?: string; removed?: true } = {}): RefusedRow => ({
  scope,
  risk,
  status: 'refused',
  refusedWhy: why,
  ...(o.access ? { access: o.access } : {}),
  origin: 'ingress-nginx',
  ...(o.removed ? { removed: true as const } : {}),
});

/** session-cookie-path: an absolute path, printable ASCII without ";", "," or quotes, at most 256 characters. */
const cookiePathSchema = z.string().trim().regex(/^\/[!#-&(-+\--:<-[\]-~]{0,255}$/, 'expected an absolute path such as /app (printable characters, no ";", ",", quotes or spaces)');
/** session-cookie-domain: a DNS name, optionally with a leading ".". */
const cookieDomainSchema = z.string().trim().toLowerCase().regex(/^\.?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/, 'expected a DNS name such as example.com').max(254, 'longer than 254 characters');
/** custom-headers: a ConfigMap name, optionally "namespace/" first (DNS-1123 names). */
const configMapRefSchema = z
  .string()
  .trim()
  .regex(/^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\/)?[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, 'expected a ConfigMap name or namespace/name');
/** server-alias: comma-separated host names (lower-cased, de-duplicated), at most 32. */
const serverAliasSchema = z
  .string()
  .transform((v) => [...new Set(v.split(',').map((h) => h.trim().toLowerCase()).filter(Boolean))])
  .pipe(z.array(hostSchema).min(1, 'expected one or more host names').max(32, 'at most 32 names'));
// Snippets are compiled by plugins.ts (snippets.ts), once the ConfigMap allows them; here only their size.
const snippetSchema = z.string().max(MAX_SNIPPET * 4, `longer than ${MAX_SNIPPET * 4} characters`);

// ---- directive-profile settings (translate.ts profileOf → a named location in nginx.conf) ---------------------------
// Each value has a closed alphabet: nothing that ends a directive or a block, starts a comment, a variable or a
// string, or breaks a line can pass; the renderer checks the alphabet again (escape.ts).
const SIZE_UNIT: Record<string, number> = { '': 1, k: 1024, m: 1024 * 1024 };
/** An nginx size ("512", "4k", "1m") between `min` and `max` bytes; normalised to lower case. */
export const boundedSizeSchema = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d{1,8}[kKmM]?$/, 'expected a size such as 512, 4k or 1m')
    .transform((v) => v.toLowerCase())
    .refine((v) => {
      const n = Number.parseInt(v, 10) * (SIZE_UNIT[/[km]$/.test(v) ? v.slice(-1) : ''] ?? 1);
      return n >= min && n <= max;
    }, { message: `expected a size between ${min} bytes and ${max / 1024 / 1024}m` });
/** "on"/"off" (also "true"/"false") → boolean. */
export const onOffAnnotationSchema = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => ['on', 'off', 'true', 'false'].includes(v), { message: 'expected "on" or "off"' })
  .transform((v) => v === 'on' || v === 'true');
const NEXT_UPSTREAM_CONDITIONS = ['error', 'timeout', 'invalid_header', 'http_500', 'http_502', 'http_503', 'http_504', 'http_403', 'http_404', 'http_429', 'non_idempotent', 'off'];
/** proxy-next-upstream: nginx's conditions, space-separated, or "off" alone. */
export const nextUpstreamAnnotationSchema = z.string().transform((v, ctx) => {
  const items = [...new Set(v.trim().split(/[ \t]+/).filter(Boolean))];
  const bad = items.find((t) => !NEXT_UPSTREAM_CONDITIONS.includes(t));
  if (bad !== undefined || !items.length || (items.includes('off') && items.length > 1)) {
    ctx.addIssue({ code: 'custom', message: bad !== undefined ? `${JSON.stringify(bad.slice(0, 40))} is not one of ${NEXT_UPSTREAM_CONDITIONS.join(', ')}` : '"off" alone, or conditions such as "error timeout http_502"' });
    return z.NEVER;
  }
  return items.join(' ');
});
/** One literal token of a URL, path or domain: no spaces, variables, quotes, regex markers or directive syntax. */
const LITERAL = '[A-Za-z0-9._/:@!+=-]{1,512}';
/** Text that names an nginx Lua directive (content_by_lua, access_by_lua_block...): refused wherever it appears. */
const NGINX_LUA = /_by_lua/i;
/** proxy-cookie-domain / proxy-cookie-path: "off", or "<text to replace> <replacement>" (literal text). */
export const cookieRewriteSchema = (what: string) =>
  z
    .string()
    .trim()
    .transform((v) => v.replace(/[ \t]+/g, ' '))
    .refine((v) => v === 'off' || new RegExp(`^${LITERAL} ${LITERAL}$`).test(v), { message: `expected "off" or "<${what}> <replacement>": two literal words (letters, digits and . _ / : @ ! + = -; no regex, no variables)` })
    .refine((v) => !NGINX_LUA.test(v), { message: 'nginx Lua directive names (*_by_lua) are not allowed' });
/** proxy-redirect-from / proxy-redirect-to: one literal word (no spaces, no variables). */
export const redirectTextSchema = z
  .string()
  .trim()
  .refine((v) => new RegExp(`^${LITERAL}$`).test(v), { message: 'expected one literal word: letters, digits and . _ / : @ ! + = - (no spaces, no variables)' })
  .refine((v) => !NGINX_LUA.test(v), { message: 'nginx Lua directive names (*_by_lua) are not allowed' });
/** connection-proxy-header: one header token such as keep-alive, close or upgrade. */
export const connectionHeaderSchema = z
  .string()
  .trim()
  .regex(/^[A-Za-z][A-Za-z0-9-]{0,63}$/, 'expected one token such as keep-alive, close or upgrade (letters, digits and "-")');

// ---- proxy-ssl-* (TLS to an HTTPS/GRPCS backend from an Ingress; normalize.ts reads the Secret) ----------------------
// Only blanks (space, tab) around a value are dropped: any other character outside a value's alphabet — unicode
// separators, NUL, quotes, ";", "$", braces, "#" — is refused, never trimmed away.
const blankTrim = (v: string) => v.replace(/^[ \t]+|[ \t]+$/g, '');
/** A refused value as printable ASCII (control and non-ASCII characters escaped), at most 40 characters of it. */
const shown = (v: string) => JSON.stringify(v.slice(0, 40)).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
/** proxy-ssl-secret: "namespace/name" or a name (the Ingress's namespace); another namespace fails closed (normalize.ts). */
export const proxySslSecretSchema = z
  .string()
  .transform(blankTrim)
  .pipe(z.string().regex(/^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\/)?[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, 'must be a Secret name or "namespace/name" (lower-case letters, digits, "-" and ".")'));
/** proxy-ssl-verify / proxy-ssl-server-name: "on" or "off" (also "true"/"false", any case) → boolean. */
export const proxySslOnOffSchema = z
  .string()
  .transform(blankTrim)
  .pipe(z.string().regex(/^(on|off|true|false)$/i, 'expected "on" or "off"'))
  .transform((v) => /^(on|true)$/i.test(v));
/** proxy-ssl-verify-depth: 0 to 100 (0 = the default, 1). */
export const proxySslVerifyDepthSchema = z
  .string()
  .transform(blankTrim)
  .pipe(z.string().regex(/^\d{1,3}$/, 'expected a whole number between 0 and 100'))
  .transform((v) => Number.parseInt(v, 10))
  .refine((n) => n <= 100, { message: 'expected a whole number between 0 and 100' });
/** proxy-ssl-name: a DNS name (no nginx variables), lower-cased: the name verified and, with proxy-ssl-server-name, sent as SNI. */
export const proxySslNameSchema = z
  .string()
  .transform(blankTrim)
  .pipe(
    z
      .string()
      .max(253, 'longer than 253 characters')
      .regex(/^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/, 'expected a DNS name such as api.example.com (letters, digits, "-" and "."; no nginx variables)'),
  )
  .transform((v) => v.toLowerCase());
export const PROXY_SSL_PROTOCOLS = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const;
/** proxy-ssl-protocols: TLSv1, TLSv1.1, TLSv1.2, TLSv1.3, space-separated; normalised to that order. */
export const proxySslProtocolsSchema = z.string().transform((v, ctx) => {
  const items = blankTrim(v).split(/[ \t]+/).filter(Boolean);
  const bad = items.find((p) => !(PROXY_SSL_PROTOCOLS as readonly string[]).includes(p));
  if (bad !== undefined || !items.length) {
    ctx.addIssue({ code: 'custom', message: `${bad === undefined ? 'no protocol' : `${shown(bad)} is not a TLS version`}: expected TLSv1, TLSv1.1, TLSv1.2 or TLSv1.3, space-separated (SSLv2 and SSLv3 are refused)` });
    return z.NEVER;
  }
  return PROXY_SSL_PROTOCOLS.filter((p) => items.includes(p)).join(' ');
});
/** proxy-ssl-ciphers: an OpenSSL cipher list (TLS 1.2 and lower) that OpenSSL accepts; its alphabet only. */
export const proxySslCiphersSchema = z
  .string()
  .transform(blankTrim)
  .pipe(
    z
      .string()
      .regex(/^[A-Za-z0-9:+!@=_-]{1,1024}$/, 'expected an OpenSSL cipher list such as "HIGH:!aNULL:!MD5": letters, digits and : + ! @ = _ - only (no spaces, quotes, ";", "$" or braces)')
      .refine(
        (v) => {
          try {
            createSecureContext({ ciphers: v });
            return true;
          } catch {
            return false;
          }
        },
        { message: 'OpenSSL matches no cipher in this list' },
      ),
  );
/** The proxy-ssl-* annotations: with proxy-ssl-secret, an invalid or refused one fails the Ingress's paths closed (normalize.ts, translate.ts). */
export const PROXY_SSL_ANNOTATIONS = ['proxy-ssl-secret', 'proxy-ssl-verify', 'proxy-ssl-verify-depth', 'proxy-ssl-name', 'proxy-ssl-server-name', 'proxy-ssl-ciphers', 'proxy-ssl-protocols'] as const;

/**
 * THE annotation table: every annotation ingress-nginx documents (its annotations.md and annotations-risk.md) and
 * Portico's own, with what Portico does with it. Rows with a schema are parsed (`ANNOTATIONS`); the others are
 * reported as unsupported by parseAnnotations (parse.ts).
 */
export const ANNOTATION_TABLE = {
  'use-regex': row(boolSchema, 'ingress', 'low', 'ImplementationSpecific paths of this Ingress are PCRE regexes, matched case-insensitively and anchored at the start only (ingress-nginx\'s `~* "^<path>"`: prefix-like, "/blog(/|$)(.*)" matches "/blog/2024"). Quirk kept from ingress-nginx, without a Warning: on ONE Ingress it makes every path of that host, of every Ingress (rewrite-target does the same), a case-insensitive start-anchored regex — Exact and Prefix paths included, so an Exact "/foo" then also answers "/FOO/bar" and a Prefix "/foo" answers "/foobar" — tried longest path first (ties: reverse alphabetical), the first match wins'),
  'ssl-redirect': row(boolSchema, 'location', 'low', 'Redirect HTTP to HTTPS when the host has TLS (default: ConfigMap ssl-redirect, true)'),
  'force-ssl-redirect': row(boolSchema, 'location', 'medium', 'Redirect HTTP to HTTPS even when the host has no TLS section'),
  'proxy-body-size': row(sizeSchema, 'location', 'medium', 'Maximum request body size (client_max_body_size), e.g. 8m; 0 = unlimited'),
  'proxy-connect-timeout': row(secondsSchema, 'location', 'low', 'Upstream connect timeout in seconds'),
  'proxy-read-timeout': row(secondsSchema, 'location', 'low', 'Upstream read timeout in seconds'),
  'proxy-send-timeout': row(secondsSchema, 'location', 'low', 'Upstream send timeout in seconds'),
  'load-balance': row(loadBalanceSchema, 'backend', 'low', 'Balancing algorithm for this Ingress\'s backends: round_robin or ewma'),
  'upstream-hash-by': row(nginxVariableSchema.refine((v) => isKnownVariable(v.slice(1)), { message: 'not a variable nginx defines (e.g. $request_uri, $remote_addr, $http_x_user, $cookie_session)' }), 'backend', 'high', 'Consistent hashing on an nginx variable, e.g. $request_uri or $remote_addr (adding an endpoint moves about 1/N of the keys)', { difference: 'one nginx variable only; ingress-nginx also hashes on text combining several, e.g. "$host$request_uri"' }),
  affinity: row(affinitySchema, 'backend', 'low', 'Session affinity: "cookie" (takes precedence over upstream-hash-by)'),
  'affinity-mode': row(affinityModeSchema, 'backend', 'medium', 'balanced (default: the cookie holds a key hashed onto the endpoints, so scaling moves about 1/N of sessions) or persistent (the cookie names the endpoint; it moves only when that endpoint goes away)'),
  'session-cookie-name': row(cookieNameSchema, 'backend', 'medium', 'Affinity cookie name (default INGRESSCOOKIE)'),
  'session-cookie-max-age': row(intSchema(0, 315360000), 'backend', 'medium', 'Affinity cookie Max-Age in seconds (default: a session cookie)'),
  canary: row(boolSchema, 'ingress', 'low', 'This Ingress is a canary for the Ingress serving the same host and path'),
  'canary-weight': row(intSchema(0, 1_000_000), 'backend', 'low', 'Share of requests sent to the canary, out of canary-weight-total (changed without reload)'),
  'canary-weight-total': row(intSchema(1, 1_000_000), 'backend', 'low', 'Total for canary-weight (default 100)'),
  'canary-by-header': row(headerNameSchema, 'backend', 'medium', 'Header routing: "always" → canary, "never" → main, else weight (highest precedence)'),
  'canary-by-header-value': row(headerValueSchema, 'backend', 'medium', 'With canary-by-header: this exact value routes to the canary'),
  'canary-by-header-pattern': row(headerPatternSchema, 'backend', 'medium', 'With canary-by-header: values matching this regex route to the canary'),
  'whitelist-source-range': row(commaListSchema, 'ingress', 'medium', 'Client IP allowlist (CIDRs, comma-separated; older name of allowlist-source-range): others get 403. Runs as an ip-restriction plugin; an invalid list makes the Ingress fail closed (503)', { access: 'a client IP allowlist' }),
  'allowlist-source-range': row(commaListSchema, 'ingress', 'medium', 'Client IP allowlist (CIDRs, comma-separated): others get 403; wins over whitelist-source-range. An invalid list makes the Ingress fail closed (503)', { access: 'a client IP allowlist' }),
  'denylist-source-range': row(commaListSchema, 'ingress', 'medium', 'Client IP denylist (CIDRs, comma-separated): those get 403 (deny wins over allow). An invalid list makes the Ingress fail closed (503)', { access: 'a client IP denylist' }),
  'enable-cors': row(boolSchema, 'ingress', 'low', 'CORS with the cors-* settings: preflights answered with 204 by Portico, CORS headers on responses (cors plugin)'),
  'cors-allow-origin': row(commaListSchema, 'ingress', 'medium', 'Allowed origins, comma-separated: "*" (default), "https://a.example" or "https://*.example.com"; with "*", credentials are not allowed (browsers refuse that pair anyway)'),
  'cors-allow-methods': row(commaListSchema, 'ingress', 'medium', 'Allowed methods (default GET, PUT, POST, DELETE, PATCH, OPTIONS)'),
  'cors-allow-headers': row(commaListSchema, 'ingress', 'medium', 'Allowed request headers (default DNT, Keep-Alive, User-Agent, X-Requested-With, If-Modified-Since, Cache-Control, Content-Type, Range, Authorization)'),
  'cors-expose-headers': row(commaListSchema, 'ingress', 'medium', 'Response headers exposed to the page (default none)'),
  'cors-allow-credentials': row(boolSchema, 'ingress', 'low', 'Access-Control-Allow-Credentials (default true, except with origin "*")', { difference: 'never sent with cors-allow-origin "*" (ingress-nginx sends it, and browsers then reject the response)' }),
  'cors-max-age': row(intSchema(0, 2_592_000), 'ingress', 'low', 'Access-Control-Max-Age in seconds (default 1728000)'),
  'limit-rps': row(intSchema(1, 1_000_000), 'ingress', 'low', 'Requests per second per client IP, burst limit-rps × limit-burst-multiplier; over it: 503 (rate-limit plugin, counters per node)'),
  'limit-rpm': row(intSchema(1, 100_000_000), 'ingress', 'low', 'Requests per minute per client IP, burst limit-rpm × limit-burst-multiplier; over it: 503'),
  'limit-burst-multiplier': row(intSchema(1, 1000), 'ingress', 'low', 'Burst of limit-rps / limit-rpm as a multiple of the rate (default 5)'),
  'limit-whitelist': row(commaListSchema, 'ingress', 'low', 'Client CIDRs never rate limited (comma-separated; older name of limit-allowlist)'),
  'limit-allowlist': row(commaListSchema, 'ingress', 'low', 'Client CIDRs never rate limited (comma-separated); wins over limit-whitelist'),
  'auth-type': row(z.enum(['basic'], { error: () => 'Portico supports auth-type "basic" (digest is not supported: the Ingress fails closed)' }), 'ingress', 'low', 'HTTP basic authentication against the users of auth-secret (basic-auth plugin); "digest" is refused and fails closed', { access: 'basic/digest authentication', difference: 'basic only: "digest" is refused and the Ingress fails closed' }),
  'auth-secret': row(authSecretSchema, 'ingress', 'medium', 'Secret with the users: its name, or "namespace/name" of the Ingress\'s own namespace (another namespace is refused and fails closed)', { access: 'basic/digest authentication', difference: 'only a Secret of the Ingress\'s own namespace; one in another namespace makes the Ingress fail closed' }),
  'auth-secret-type': row(z.enum(['auth-file', 'auth-map'], { error: () => 'auth-secret-type must be auth-file or auth-map' }), 'ingress', 'low', 'auth-file (default: an htpasswd file under the key "auth") or auth-map (a key per user, the value its password hash)', { access: 'basic/digest authentication' }),
  'auth-realm': row(realmSchema, 'ingress', 'medium', 'Realm of the Basic challenge (default "Authentication Required")', { access: 'basic/digest authentication' }),
  'permanent-redirect': row(z.string().max(2048, 'URL is longer than 2048 characters'), 'ingress', 'medium', 'Answer every request with a redirect to this URL (http/https, a DNS host name, no query): 301, or permanent-redirect-code (redirect plugin)', { difference: 'a literal http(s) URL: one with a query string, user info or a fragment is ignored with a Warning' }),
  'permanent-redirect-code': row(intSchema(300, 308), 'ingress', 'low', 'Status of permanent-redirect (default 301; 301, 302, 303, 307 or 308)'),
  'temporal-redirect': row(z.string().max(2048, 'URL is longer than 2048 characters'), 'ingress', 'medium', 'Answer every request with a redirect to this URL: 302, or temporal-redirect-code; permanent-redirect wins when both are set', { difference: 'a literal http(s) URL, as permanent-redirect; when both are set, permanent-redirect wins (ingress-nginx applies temporal-redirect)' }),
  'temporal-redirect-code': row(intSchema(300, 308), 'ingress', 'low', 'Status of temporal-redirect (default 302; 301, 302, 303, 307 or 308)'),
  'x-forwarded-prefix': row(z.string().max(1024, 'longer than 1024 characters'), 'ingress', 'medium', 'Send X-Forwarded-Prefix with this value to the backend (request-headers plugin; printable ASCII, sent literally)'),
  'upstream-vhost': row(z.string().max(253, 'longer than 253 characters'), 'ingress', 'low', 'Host header sent to the backend instead of the client\'s (a DNS name; rewrite plugin)', { difference: 'a DNS name only; ingress-nginx also accepts nginx variables such as $host' }),
  'backend-protocol': row(z.enum(['HTTP', 'HTTPS', 'GRPC', 'GRPCS', 'AUTO_HTTP'], { error: () => 'backend-protocol must be HTTP, HTTPS, GRPC, GRPCS or AUTO_HTTP (FCGI is not supported)' }), 'location', 'low', 'Protocol to the backend: HTTP (default; AUTO_HTTP is the same), HTTPS, GRPC or GRPCS (a directive profile: the first route with a new combination reloads once); an Upstream object for the Service wins', { difference: 'FCGI is not supported (the value is ignored with a Warning); AUTO_HTTP is plain HTTP' }),
  plugins: row(pluginListSchema, 'location', 'medium', 'Portico Plugin objects (portico.dev/v1alpha1, same namespace) run for every path of this Ingress, e.g. "auth,limit"; a missing or invalid one makes the paths answer 503 (fail closed)', { origin: 'portico' }),
  'canary-by-cookie': row(cookieNameSchema, 'backend', 'medium', 'Cookie routing: "always" → canary, "never" → main (after header, before weight)'),
  'configuration-snippet': row(snippetSchema, 'location', 'critical', 'Only with the ConfigMap\'s allow-snippet-annotations: "true" and annotations-risk-level: Critical (else refused with a Warning). Parsed with nginx\'s lexical rules and compiled to data for the snippet plugin (it runs after every other plugin) for every path of this Ingress; allowed: more_set_headers (-s, -t), more_clear_headers, more_set_input_headers (-r, -t), more_clear_input_headers, add_header [always], proxy_set_header, set, return, rewrite (last = break: the route is not chosen again), break, if (($v), =, !=, ~, ~*, !~, !~*); values may read $host, $uri, $request_uri, $args, $scheme, $remote_addr, $request_method, $server_name (= $host), $http_*, $arg_*, $cookie_*, $1-$9 and variables set before. Anything else (Lua, include, file paths, proxy_pass, access directives, other variables) refuses the whole snippet with the line; one refused for access rules makes the Ingress fail closed. Differences: rewrite-module directives run after auth and rate limits (nginx runs them before), and headers of an if block add to the others (nginx replaces them)', { difference: 'compiled from an allowlist of directives, never pasted into nginx.conf: anything else refuses the whole snippet' }),
  'server-snippet': row(snippetSchema, 'ingress', 'critical', 'As configuration-snippet, but runs first; difference: in ingress-nginx it is the host\'s server block (every Ingress on the host, 404s included) — in Portico it applies to every path of that host served by this Ingress. location blocks are refused', { difference: 'applies to the paths of this Ingress on the host, not to the whole server block; location blocks are refused' }),
  'auth-snippet': row(snippetSchema, 'location', 'critical', 'Refused: its nginx directives would run in the auth subrequest, which Portico builds from data and does not compile snippets into; with auth-url the Ingress fails closed (alone it has no effect, as in ingress-nginx)', { access: 'external authentication', refusedWhy: 'its directives are not compiled into the auth subrequest (only configuration-snippet and server-snippet are compiled); with auth-url the Ingress fails closed, alone it has no effect' }),
  // ---- ingress-nginx annotations Portico refuses: each raises an UnsupportedAnnotation Warning and is not applied;
  // the access-control ones make the Ingress fail closed (503) instead.
  'rewrite-target': row(rewriteTargetSchema, 'ingress', 'medium', 'Path sent to the backend instead of the client\'s, e.g. "/$2" with path "/something(/|$)(.*)": as ingress-nginx\'s `rewrite "(?i)<path>" <target> break`, the path regex (case-insensitive, first match anywhere) is applied to the normalized URI and the whole URI becomes the target with $1..$9 replaced by its captures; a "?query" in the target comes before the client\'s query. Implies use-regex for the Ingress\'s ImplementationSpecific paths and, as in ingress-nginx, makes every path of the host a regex (see use-regex); runs after the access plugins, before configuration-snippet', { difference: 'captures $1..$9 only: a target with nginx variables ($host...) or an absolute URL (nginx would redirect) is ignored with a Warning' }),
  'app-root': row(appRootSchema, 'location', 'medium', 'Requests for "/" on the Ingress\'s hosts (any query) are answered 302 with Location <scheme>://<Host header><app-root>, before HTTPS redirects and access control (ingress-nginx\'s server-level `if ($uri = /)`); with several Ingresses setting it on one host, that of the path first in ingress-nginx\'s order (longest first) applies', { difference: 'a path only: a value with a query string is ignored with a Warning' }),
  'preserve-trailing-slash': row(boolSchema, 'location', 'medium', 'Keep a trailing slash in the redirect to HTTPS: by default (as ingress-nginx) "http://h/docs/" is redirected to "https://h/docs" — the last "/" of the request URI is dropped — and "true" keeps it'),
  'from-to-www-redirect': row(boolSchema, 'location', 'low', 'www.<host> is answered 308 to <host> (or <host> to www.<host> when the rule\'s host starts with "www."), same scheme, with the request URI and query (its last "/" dropped, as ingress-nginx) — only when the other name has no rule of its own. HTTPS to the other name uses this host\'s certificate when it covers that name, else the default certificate (a Warning says so), as ingress-nginx', { difference: 'no port is added to the Location (ingress-nginx adds its HTTPS port, for both schemes, when that is not 443)' }),
  'use-port-in-redirects': row(boolSchema, 'location', 'low', '"true": the 301 nginx answers for a path written with a trailing slash ("/docs" → "/docs/") names the port clients connect to (--published-http-port / --published-https-port, left out when it is the scheme\'s default); by default, as in ingress-nginx, no port', { difference: 'the published port, not the port nginx listens on (Portico listens on 8080/8443 behind a Service)' }),
  'server-alias': row(serverAliasSchema, 'ingress', 'high', 'More names for the hosts of this Ingress\'s rules (comma-separated DNS names, "*." wildcards allowed): each serves exactly what the host serves (every path of every Ingress on it, as ingress-nginx\'s server_name), with the host\'s certificate when it covers the name. A name that is a host of its own or another host\'s alias is skipped with an AliasSkipped Event'),
  'default-backend': row(defaultBackendSchema, 'location', 'low', 'A Service of the Ingress\'s namespace (its first port, as ingress-nginx) that serves the Ingress\'s requests while their own Service has no ready endpoint (or does not exist), and the errors listed in custom-http-errors; switching to it and back is data, never a reload. A Service that does not exist is reported (DefaultBackendNotFound) and not used'),
  'custom-http-errors': row(httpErrorCodesSchema, 'location', 'low', 'Comma-separated status codes (400-599): when the backend answers one of them (or nginx does, e.g. 502/504), the request goes to the default-backend Service instead (same method, path "/", query kept, no body) with X-Code, X-Format, X-Original-URI, X-Namespace, X-Ingress-Name, X-Service-Name, X-Service-Port and X-Request-ID, and its answer is the client\'s. Wins over the ConfigMap\'s custom-http-errors. A directive profile: a new set of codes reloads nginx once', { difference: 'without default-backend, nginx\'s own page for the status (ingress-nginx\'s built-in backend answers 404); Portico\'s own answers (unmatched paths, router plugins) are not redirected' }),
  'disable-proxy-intercept-errors': row(boolSchema, 'location', 'low', '"true": errors the backend answers reach the client unchanged (no proxy_intercept_errors); errors nginx makes itself (502, 504: no answer from the backend) still go to the default-backend Service when custom-http-errors lists them, as in ingress-nginx'),
  'custom-headers': row(configMapRefSchema, 'location', 'medium', 'A ConfigMap ("name" or "namespace/name", the Ingress\'s own namespace) whose keys and values are set as response headers on every path of the Ingress (the response-headers plugin, replacing a header of the same name); each name must be listed in the controller ConfigMap\'s global-allowed-response-headers, and a missing ConfigMap, a header not allowed or an invalid name or value makes the paths fail closed (503), as ingress-nginx denies the location. Changes to the ConfigMap apply without a restart', { difference: 'only a ConfigMap of the Ingress\'s own namespace (another one fails closed); its changes apply at once' }),
  'client-body-buffer-size': row(boundedSizeSchema(512, 64 * 1024 * 1024), 'location', 'low', 'Buffer for reading the request body (client_body_buffer_size, 512 bytes to 64m); a larger body goes to a temporary file. Default: ConfigMap client-body-buffer-size (8k)'),
  'connection-proxy-header': row(connectionHeaderSchema, 'location', 'low', 'Connection header sent to the backend instead of the default ("upgrade" for WebSocket requests, else empty), e.g. keep-alive'),
  'proxy-buffering': row(onOffAnnotationSchema, 'location', 'low', '"on": buffer the backend\'s response (proxy_buffering); "off" passes it on as it arrives. Default: ConfigMap proxy-buffering (off)'),
  'proxy-buffer-size': row(boundedSizeSchema(1024, 16 * 1024 * 1024), 'location', 'low', 'Buffer for the first part of the response (its headers), and the size of each of proxy-buffers-number buffers (1k to 16m). Default: ConfigMap proxy-buffer-size (4k)'),
  'proxy-buffers-number': row(intSchema(4, 1024), 'location', 'low', 'Number of response buffers (proxy_buffers, 4 to 1024). Default: ConfigMap proxy-buffers-number (4)', { difference: 'at least 4: fewer make nginx refuse the configuration with the default busy-buffers size' }),
  'proxy-max-temp-file-size': row(boundedSizeSchema(0, 64 * 1024 * 1024 * 1024), 'location', 'low', 'Largest temporary file a buffered response may spill to (proxy_max_temp_file_size, default 1024m); 0 = none. A value below proxy-buffer-size is raised to it (nginx refuses a smaller one)'),
  'proxy-request-buffering': row(onOffAnnotationSchema, 'location', 'low', '"on": read the whole request body before proxying (proxy_request_buffering); "off": stream it. Default: ConfigMap proxy-request-buffering (on)'),
  'proxy-http-version': row(z.string().trim().refine((v) => v === '1.0' || v === '1.1', { message: 'expected "1.0" or "1.1"' }), 'location', 'low', 'HTTP version spoken to the backend (proxy_http_version): 1.1 (default) or 1.0'),
  'proxy-cookie-domain': row(cookieRewriteSchema('domain'), 'location', 'medium', 'Rewrite the domain attribute of the backend\'s Set-Cookie headers (proxy_cookie_domain "<from> <to>"); default off', { difference: 'literal text only: no regex (~) and no nginx variables in either part' }),
  'proxy-cookie-path': row(cookieRewriteSchema('path'), 'location', 'medium', 'Rewrite the path attribute of the backend\'s Set-Cookie headers (proxy_cookie_path "<from> <to>"); default off', { difference: 'literal text only: no regex (~) and no nginx variables in either part' }),
  'proxy-redirect-from': row(redirectTextSchema, 'location', 'medium', 'Text to replace in the backend\'s Location and Refresh headers (proxy_redirect\'s first parameter); "off" (default) or "default" ignore proxy-redirect-to', { difference: 'literal text only: no regex (~) and no nginx variables' }),
  'proxy-redirect-to': row(redirectTextSchema, 'location', 'medium', 'Replacement for proxy-redirect-from (proxy_redirect\'s second parameter); both must be set', { difference: 'literal text only: no nginx variables' }),
  'proxy-next-upstream': row(nextUpstreamAnnotationSchema, 'location', 'medium', 'When a request is passed to the next endpoint: nginx conditions (error timeout invalid_header http_5xx http_403 http_404 http_429 non_idempotent) or off. Default: ConfigMap proxy-next-upstream (error timeout); an Upstream\'s retries win'),
  'proxy-next-upstream-timeout': row(secondsSchema, 'location', 'low', 'Time limit in seconds for passing a request to the next endpoint (0 = none). Default: ConfigMap proxy-next-upstream-timeout (0)'),
  'proxy-next-upstream-tries': row(intSchema(0, 100), 'location', 'low', 'Attempts at most, counting the first (0 = no limit). Default: ConfigMap proxy-next-upstream-tries (3)'),
  'proxy-ssl-secret': row(proxySslSecretSchema, 'ingress', 'medium', 'Secret ("namespace/name" of the Ingress\'s own namespace, or a name) for TLS to an HTTPS or GRPCS backend: tls.crt and tls.key are the client certificate presented to it (proxy_ssl_certificate), ca.crt (optional) the CAs its certificate is verified against with proxy-ssl-verify. A Secret that is missing, in another namespace or unusable (bad PEM, a key that does not match, proxy-ssl-verify without ca.crt), or an invalid value of any proxy-ssl-* annotation (or one the ConfigMap\'s annotations-risk-level refuses), makes the paths of this Ingress answer 503 (fail closed, never proxied without what was asked; also where an Upstream object wins). Applies to HTTPS and GRPCS backends (backend-protocol, or an Upstream object\'s protocol); an Upstream object with tls settings for the Service wins over all proxy-ssl-* annotations (a Normal UpstreamOverrides event)', { difference: 'an invalid proxy-ssl-* value fails closed (ingress-nginx falls back to its default); a bare name is read in the Ingress\'s namespace; GRPCS backends get the same (grpc_ssl_*)' }),
  'proxy-ssl-verify': row(proxySslOnOffSchema, 'ingress', 'low', '"on": verify the backend\'s certificate against ca.crt of proxy-ssl-secret and the name (proxy-ssl-name); default off. With proxy-ssl-secret only', { difference: 'also "true"/"false" in any case (ingress-nginx takes anything but "on"/"off" as off); "on" without ca.crt fails closed (in ingress-nginx nginx -t fails)' }),
  'proxy-ssl-verify-depth': row(proxySslVerifyDepthSchema, 'ingress', 'low', 'How many intermediate CAs may stand between the backend\'s certificate and a CA of ca.crt when proxy-ssl-verify checks it (proxy_ssl_verify_depth, as OpenSSL counts), 0 to 100; default 1 (0 = 1). With proxy-ssl-secret only'),
  'proxy-ssl-name': row(proxySslNameSchema, 'ingress', 'high', 'Name the backend\'s certificate is verified against and, with proxy-ssl-server-name on, sent as SNI (proxy_ssl_name): a DNS name. Default: <service>.<namespace>.svc. With proxy-ssl-secret only', { difference: 'a DNS name only (no nginx variables); the default is <service>.<namespace>.svc, where ingress-nginx uses its internal upstream name ("upstream_balancer"), which no certificate names' }),
  'proxy-ssl-server-name': row(proxySslOnOffSchema, 'ingress', 'low', '"on": send proxy-ssl-name (default <service>.<namespace>.svc) as SNI to the backend (proxy_ssl_server_name); default off. With proxy-ssl-secret only', { difference: 'also "true"/"false" in any case; the name sent by default is <service>.<namespace>.svc (ingress-nginx sends "upstream_balancer")' }),
  'proxy-ssl-ciphers': row(proxySslCiphersSchema, 'ingress', 'medium', 'OpenSSL cipher list for TLS 1.2 and lower to the backend (proxy_ssl_ciphers); default DEFAULT. A list OpenSSL matches nothing in is invalid. With proxy-ssl-secret only'),
  'proxy-ssl-protocols': row(proxySslProtocolsSchema, 'ingress', 'low', 'TLS versions offered to the backend (proxy_ssl_protocols): TLSv1, TLSv1.1, TLSv1.2, TLSv1.3, space-separated. With proxy-ssl-secret only', { difference: 'the default is "TLSv1.2 TLSv1.3" (ingress-nginx: "TLSv1 TLSv1.1 TLSv1.2"); SSLv2 and SSLv3 are refused' }),
  'ssl-ciphers': refused('ingress', 'low', 'not supported: TLS ciphers are set for the whole controller, not per Ingress'),
  'ssl-prefer-server-ciphers': refused('ingress', 'low', 'not supported: TLS ciphers are set for the whole controller, not per Ingress'),
  'ssl-passthrough': row(boolSchema, 'ingress', 'low', 'Only with the controller flag --enable-ssl-passthrough (off by default, as ingress-nginx; without it the annotation is ignored with a Warning). "true": TLS connections whose server name (SNI) is one of the Ingress\'s hosts go undecrypted to the Service of that host\'s "/" path (else the Ingress\'s defaultBackend, else its first path), to its ready endpoints (filtered like HTTP ones); nothing else of the Ingress applies to them (certificate, paths, other annotations, access control included: a PassthroughAccessControl Warning says so). Plain HTTP to the host is routed as usual (e.g. force-ssl-redirect), and an HTTPS request for it that reaches Portico\'s own TLS (another server name) gets 421. A host an older Ingress already serves, or passes through, stays as it is (PassthroughConflict Warning); a younger Ingress on a passthrough host is served over plain HTTP only. A "*." host matches one label, and never an exact host with rules of its own. Every other HTTPS connection goes on to Portico\'s TLS termination through a local hop that keeps the client address (PROXY protocol). Endpoint changes reload nginx', { difference: 'to the endpoints, not the cluster IP (an endpoint change reloads nginx); no "/" path nor defaultBackend: the first path; "*." matches one label only; terminated HTTPS keeps the client address' }),
  'service-upstream': row(boolSchema, 'backend', 'low', '"true": the backend is the Service\'s cluster IP and port (one endpoint, kube-proxy balances) instead of its endpoints; ignored with a Warning for ExternalName and headless Services, and when an Upstream object sets the Service port\'s balancing'),
  'affinity-canary-behavior': refused('ingress', 'low', 'not supported: the sticky/legacy choice for canaries with affinity cannot be made'),
  'session-cookie-path': row(cookiePathSchema, 'backend', 'medium', 'Path attribute of the affinity cookie (default "/"): an absolute path of printable characters, no ";"', { difference: 'the default is "/" (ingress-nginx defaults to the matched location path)' }),
  'session-cookie-domain': row(cookieDomainSchema, 'backend', 'medium', 'Domain attribute of the affinity cookie (a DNS name, an optional leading "."); default: none (the host only)'),
  'session-cookie-samesite': row(z.enum(['Strict', 'Lax', 'None'], { error: () => 'session-cookie-samesite must be Strict, Lax or None' }), 'backend', 'low', 'SameSite attribute of the affinity cookie: Strict, Lax or None (default: none sent)'),
  'session-cookie-conditional-samesite-none': row(boolSchema, 'backend', 'low', 'With session-cookie-samesite None: "true" leaves SameSite=None out for browsers known to reject it (old Chrome, Safari on iOS 12 / macOS 10.14, UC Browser)'),
  'session-cookie-secure': row(boolSchema, 'backend', 'low', '"true": the affinity cookie is marked Secure on every request (by default only on HTTPS requests)'),
  'session-cookie-expires': row(intSchema(0, 315360000), 'backend', 'medium', 'Expires attribute of the affinity cookie, this many seconds from when it is set (default: none)'),
  'session-cookie-change-on-failure': row(boolSchema, 'backend', 'low', '"true": when the request is retried on another endpoint, the affinity cookie is reissued for it (balanced mode: a new key; persistent: the new endpoint); default false keeps the cookie'),
  'session-cookie-partitioned': row(boolSchema, 'backend', 'low', '"true": the affinity cookie is marked Partitioned (CHIPS); browsers accept that only with Secure, so the cookie is then marked Secure too'),
  'upstream-hash-by-subset': row(boolSchema, 'backend', 'low', 'With upstream-hash-by: "true" hashes each key onto a subset of the endpoints (sorted, cut in groups of upstream-hash-by-subset-size) and sends each request to a random endpoint of it, as ingress-nginx; without upstream-hash-by it has no effect'),
  'upstream-hash-by-subset-size': row(intSchema(1, 1000), 'backend', 'low', 'Endpoints per subset for upstream-hash-by-subset (default 3)'),
  'limit-connections': row(intSchema(1, 1_000_000), 'location', 'low', 'Requests of one client IP in progress at once on this Ingress; over it: the ConfigMap\'s limit-conn-status-code (503). limit-allowlist exempts clients. Counted per node in shared memory, per request (nginx counts connections with a request in progress: the same for HTTP/1)', { difference: 'counts requests in progress, not connections: an HTTP/2 client with many streams is limited per stream' }),
  'limit-rate': row(intSchema(0, 10_000_000), 'location', 'low', 'Kilobytes per second sent to one client connection (limit_rate); 0 = unlimited (default). nginx rate-limits only buffered responses: the paths get proxy buffering on, unless the Ingress sets proxy-buffering "off" (then a Warning says the limit has no effect)', { difference: 'turns proxy buffering on for its paths (with ingress-nginx\'s default proxy-buffering "off" nginx would not limit at all)' }),
  'limit-rate-after': row(intSchema(0, 100_000_000), 'location', 'low', 'Kilobytes of a response sent at full speed before limit-rate applies (limit_rate_after); default 0'),
  'mirror-target': row(mirrorTargetSchema, 'ingress', 'high', 'Copy every request of the Ingress to this http(s) URL (nginx\'s mirror): with "$request_uri" as the path ("https://shadow.example.com$request_uri") the copy has the client\'s URI, with a literal path that path and the client\'s query. The mirror\'s answer is ignored and its failure never changes the client\'s. A Service DNS name (<svc>.<ns>.svc[.cluster.local]) of the Ingress\'s own namespace goes through Portico\'s balancer to its endpoints (another namespace only with the ConfigMap\'s allow-cross-namespace-auth); another host is resolved by Portico and its loopback, link-local, metadata, Portico-own and (without that switch) Service cluster IP addresses are refused; a target that cannot be used is reported (MirrorUnavailable) and nothing is mirrored. A directive profile (first use reloads nginx once)', { difference: 'only $request_uri, as the whole path; no path means "/" (not ingress-nginx\'s location name); a Service name goes to its endpoints, own namespace only unless the ConfigMap allows others' }),
  'mirror-host': row(dnsNameSchema, 'ingress', 'high', 'Host header of the mirrored requests (default: the host of mirror-target)', { difference: 'a DNS name only' }),
  'mirror-request-body': row(onOffAnnotationSchema, 'ingress', 'low', '"off": the copies carry no body; "on" (default): the body is read before the request is proxied and sent to the mirror too'),
  'enable-access-log': row(boolSchema, 'location', 'low', '"false": requests of this Ingress are not written to the access log (access_log off); default true'),
  'enable-rewrite-log': refused('location', 'low', 'not supported: there is no rewrite log to enable'),
  'enable-opentelemetry': refused('location', 'low', 'OpenTelemetry tracing is not supported yet'),
  'opentelemetry-operation-name': refused('location', 'medium', 'OpenTelemetry tracing is not supported yet'),
  'opentelemetry-trust-incoming-span': refused('location', 'low', 'OpenTelemetry tracing is not supported yet'),
  // ---- ModSecurity (modsecurity.ts; a directive profile whose rules file gateway/nginx/modsecurity.ts writes): a
  // security control, so where it is on but cannot be applied as asked the Ingress's paths fail closed (503).
  'enable-modsecurity': row(boolSchema, 'ingress', 'low', 'ModSecurity (Debian\'s libmodsecurity3) on this Ingress\'s paths: Debian\'s recommended configuration (SecRuleEngine DetectionOnly: matches are logged, nothing is blocked), then the CRS if asked for, then the ConfigMap\'s and this Ingress\'s modsecurity-snippet (SecRuleEngine On blocks with 403). "false" turns the ConfigMap\'s enable-modsecurity off for this Ingress. Each rule match (also in DetectionOnly mode) and each block is a warning in the controller\'s log; there is no audit log unless a snippet sets SecAuditEngine (then in the runtime directory). A directive profile: a new combination reloads nginx once. Where the module (Debian package libnginx-mod-http-modsecurity) or the CRS asked for is not installed, or the modsecurity-snippet is refused, the paths answer 503 (fail closed)', { difference: 'fails closed (503) when ModSecurity cannot be applied as asked; matches go to the controller\'s log, no audit log by default (ingress-nginx: /var/log/modsec_audit.log)' }),
  'enable-owasp-core-rules': row(boolSchema, 'ingress', 'low', 'With ModSecurity on (enable-modsecurity, or the ConfigMap\'s): the OWASP Core Rule Set too (Debian\'s modsecurity-crs, CRS 3.3, anomaly scoring); it blocks only with SecRuleEngine On (modsecurity-snippet). Without ModSecurity it has no effect, as in ingress-nginx'),
  'modsecurity-transaction-id': row(transactionIdSchema, 'ingress', 'high', 'ModSecurity\'s transaction id (modsecurity_transaction_id: the unique_id of its log lines and audit records), e.g. "$request_id" or "web-$request_id": nginx variables and literal letters, digits, "_" and "-"', { difference: 'at least one variable, each one nginx defines; no other characters (quotes, spaces, braces)' }),
  'modsecurity-snippet': row(modsecuritySnippetSchema, 'ingress', 'critical', 'Only with the ConfigMap\'s allow-snippet-annotations: "true" and annotations-risk-level: Critical (else refused with a Warning). ModSecurity directives applied after the recommended configuration, the CRS and the ConfigMap\'s modsecurity-snippet, read line by line from an allowlist and re-emitted from their parsed values: SecRuleEngine On|Off|DetectionOnly, SecRequestBodyAccess On|Off, SecResponseBodyAccess On|Off, SecRequestBodyLimit <bytes>, SecAuditEngine On|Off|RelevantOnly, SecRuleRemoveById <ids or ranges>, SecRuleRemoveByTag <tag>. Anything else (SecRule, SecAction, Include, SecAuditLog, SecDebugLog...) refuses the whole snippet with the line; a refused snippet makes the paths answer 503 where ModSecurity is on', { difference: 'an allowlist of directives, never pasted; the recommended configuration is always loaded first (ingress-nginx leaves it out when an Ingress has a snippet)' }),
  'stream-snippet': refused('ingress', 'critical', 'not supported: the stream section serving TCP/UDP services (--tcp/udp-services-configmap) takes no snippets; snippets are compiled from an allowlist of HTTP directives'),
  'http2-push-preload': refused('location', 'low', 'not supported: HTTP/2 server push is obsolete (browsers and nginx dropped it)'),
  'fastcgi-index': refused('location', 'medium', 'FastCGI backends are not supported'),
  'fastcgi-params-configmap': refused('location', 'medium', 'FastCGI backends are not supported'),
  satisfy: row(z.enum(['all', 'any'], { error: () => 'satisfy must be "all" or "any"' }), 'location', 'low', '"any": the request passes when one of the Ingress\'s access checks lets it through — the allow/deny lists, basic auth (auth-type), external auth (auth-url, or the ConfigMap\'s global-auth-url) — and when all refuse it gets their 401 (or auth-signin redirect), else 403; "all" (default): each must pass. Plugin objects attached with portico.dev/plugins are not part of it'),
  // ---- external authentication (auth-url.ts → the external-auth plugin in its ingress-nginx mode, plugins.ts): every
  // one of these is access control, so a value Portico cannot apply fails the Ingress closed.
  'auth-url': row(authUrlSchema, 'location', 'high', 'External authentication as nginx\'s auth_request: a subrequest (the client\'s headers, no body, plus X-Original-URL, X-Original-Method, X-Auth-Request-Redirect, X-Sent-From, X-Real-IP, X-Forwarded-For) to this http(s) URL; 2xx lets the request through, 401/403 go back to the client (401 with the auth service\'s WWW-Authenticate), anything else or no answer is 500. A Service DNS name (<svc>.<ns>.svc[.cluster.local]) of the Ingress\'s own namespace goes through Portico\'s balancer to its endpoints (another namespace only with the ConfigMap\'s allow-cross-namespace-auth); another host is resolved by Portico and its loopback, link-local, metadata, Portico-own and (without that switch) Service cluster IP addresses are refused. An invalid URL, a Service or port that does not exist, or one of another namespace, fails the Ingress closed (503)', { access: 'external authentication', difference: 'no nginx variables in the URL; a Service name goes to its endpoints, own namespace only unless the ConfigMap allows others; an unusable URL or Service fails the Ingress closed (503)' }),
  'auth-method': row(authMethodSchema, 'location', 'low', 'Method of the auth subrequest (default GET); with it X-Original-URI and X-Scheme are sent too, as ingress-nginx does', { access: 'external authentication' }),
  'auth-signin': row(signinSchema, 'location', 'high', 'On 401, redirect the client (302) here instead, with rd=<the request\'s own URL> added unless the query sets it (and the auth response\'s Set-Cookie). An absolute http(s) URL with a literal host, or $host / $http_host (the request\'s own), or a path on the request\'s host; $scheme, $host, $http_host, $request_uri, $escaped_request_uri, $uri after the host. Anything else (another variable, user info, a fragment, a non-URL character) fails the Ingress closed', { access: 'external authentication', difference: 'variables only from an allowlist and never in the host part (except $host / $http_host), so the sign-in redirect is never an open redirect' }),
  'auth-signin-redirect-param': row(redirectParamSchema, 'location', 'medium', 'Name of the query parameter of auth-signin that carries the original URL (default rd)', { access: 'external authentication' }),
  'auth-response-headers': row(authHeaderListSchema, 'location', 'medium', 'Comma-separated headers copied from the auth response onto the request sent to the backend on success; one the auth service did not send is removed (a client cannot forge it)', { access: 'external authentication' }),
  'auth-proxy-set-headers': row(configMapRefSchema, 'location', 'medium', 'With auth-url: a ConfigMap ("name" or "namespace/name", the Ingress\'s own namespace) whose keys and values are headers set on the auth subrequest; values are text and nginx variables ($remote_addr, $http_x_team, $request_id…), read at request time. A missing ConfigMap, another namespace, a header name that frames the request (Host, Content-Length, Connection…) or a value with control characters fails the Ingress closed. Changes to the ConfigMap apply without a restart', { access: 'external authentication', difference: 'only a ConfigMap of the Ingress\'s own namespace; its changes apply at once' }),
  'auth-request-redirect': row(requestRedirectSchema, 'location', 'medium', 'Value of X-Auth-Request-Redirect sent to the auth service (default: the request URI); $scheme, $host, $http_host, $request_uri, $escaped_request_uri and $uri may be used', { access: 'external authentication', difference: 'variables only from an allowlist' }),
  'auth-cache-key': row(cacheKeySchema, 'location', 'medium', 'Cache auth answers (per Ingress, host and key) in Portico\'s shared memory, e.g. "$http_authorization" or "$remote_user$cookie_session"; variables: $http_*, $cookie_*, $arg_*, $remote_user, $remote_addr, $request_uri (at least one of these) and $host, $uri, $scheme, $request_method. As proxy_cache, answers with Set-Cookie, no-store/no-cache/private or Vary: * are not kept', { access: 'external authentication', difference: 'variables from an allowlist, one of them from the client\'s request (else every client would share one answer); the cache is per node' }),
  'auth-cache-duration': row(cacheDurationSchema, 'location', 'medium', 'How long cached auth answers are kept, per status: proxy_cache_valid\'s syntax, comma-separated, e.g. "200 202 10m, 401 1m" (default "200 202 401 5m")', { access: 'external authentication' }),
  'auth-always-set-cookie': row(boolSchema, 'location', 'low', 'Send the auth response\'s Set-Cookie with every answer, not only with 200, 201, 204, 206, 301, 302, 303, 304, 307 and 308', { access: 'external authentication' }),
  'auth-keepalive': row(intSchema(0, 1_000_000), 'location', 'low', 'Validated; the auth subrequest always reuses connections from Portico\'s keep-alive pool', { access: 'external authentication', difference: 'connections to auth services are always kept alive, in Portico\'s pool for auth subrequests (sized by the ConfigMap\'s upstream-keepalive-*); not tunable per Ingress' }),
  'auth-keepalive-requests': row(intSchema(0, 1_000_000_000), 'location', 'low', 'Validated; see auth-keepalive', { access: 'external authentication', difference: 'the keep-alive pool is Portico\'s own; not tunable per Ingress' }),
  'auth-keepalive-share-vars': row(boolSchema, 'location', 'low', 'Validated; the auth subrequest never shares variables with the request', { access: 'external authentication', difference: 'variables are never shared with the subrequest (as with the default "false")' }),
  'enable-global-auth': row(boolSchema, 'location', 'low', '"false" exempts this Ingress from the ConfigMap\'s global-auth-url (default true)'),
  'auth-keepalive-timeout': row(intSchema(0, 1_000_000), 'location', 'low', 'Validated; see auth-keepalive', { access: 'external authentication', difference: 'the keep-alive pool is Portico\'s own; not tunable per Ingress' }),
  // ---- client-certificate authentication (auth-tls.ts → the TLS handshake of the host and the client-cert plugin):
  // access control, so a value or Secret Portico cannot use fails the Ingress closed.
  'auth-tls-secret': row(authSecretSchema, 'location', 'medium', 'mTLS: a Secret of the Ingress\'s namespace ("namespace/name" or its name) whose ca.crt holds the CA certificates client certificates are verified against. The TLS handshake of the Ingress\'s hosts asks for a certificate (changed without reload); each of its paths then needs one (see auth-tls-verify-client): 400 without a valid one. The backend gets ssl-client-verify, ssl-client-subject-dn and ssl-client-issuer-dn (a client cannot send its own). Over HTTPS the server name (SNI) must be the Host, else 421. A missing Secret, no or a bad ca.crt fails the Ingress closed (503)', { access: 'client-certificate authentication', difference: 'applies to this Ingress\'s paths only, also over plain HTTP (no certificate: 400); a Secret of its own namespace; a ca.crl fails closed (CRLs are not applied)' }),
  'auth-tls-verify-client': row(verifyClientSchema, 'location', 'medium', 'on (default): a certificate verified against the CA is required; optional: also without one; optional_no_ca: also one whose issuer is unknown or self-signed (the backend decides); off: none asked for (ssl-client-verify: NONE)', { access: 'client-certificate authentication', difference: 'on a host whose other Ingress asks with another CA, the paths of the younger one fail closed (one CA per host)' }),
  'auth-tls-verify-depth': row(verifyDepthSchema, 'location', 'low', 'How many intermediate CAs may stand between the client\'s certificate and a CA of ca.crt (ssl_verify_depth, as OpenSSL counts; default 1; 0 means 1; at most 10)', { access: 'client-certificate authentication' }),
  'auth-tls-error-page': row(errorPageSchema, 'location', 'high', 'Instead of the 400, redirect (302) a request without a valid client certificate to this absolute http(s) URL (a literal host; no variables)', { access: 'client-certificate authentication' }),
  'auth-tls-match-cn': row(matchCnSchema, 'location', 'high', 'A regex (PCRE, unanchored, case-sensitive) the certificate\'s subject DN ("CN=client1,O=Acme") must match, e.g. "CN=client1", else 403; at most 256 characters, no braces or nested quantifiers', { access: 'client-certificate authentication', difference: 'the regex alphabet is restricted (no braces, quotes, ";", "#", nested quantifiers)' }),
  'auth-tls-pass-certificate-to-upstream': row(boolSchema, 'location', 'low', '"true": the client certificate (PEM, URL-encoded) goes to the backend in ssl-client-cert', { access: 'client-certificate authentication' }),
  // Documented by ingress-nginx but since removed from it (so absent from its risk table: Low is assumed).
  'global-rate-limit': refused('location', 'low', 'removed from ingress-nginx (it needed memcached) and not supported: use limit-rps / limit-rpm', { removed: true }),
  'global-rate-limit-window': refused('location', 'low', 'removed from ingress-nginx (it needed memcached) and not supported: use limit-rps / limit-rpm', { removed: true }),
  'global-rate-limit-key': refused('location', 'low', 'removed from ingress-nginx (it needed memcached) and not supported: use limit-rps / limit-rpm', { removed: true }),
  'global-rate-limit-ignored-cidrs': refused('location', 'low', 'removed from ingress-nginx (it needed memcached) and not supported: use limit-rps / limit-rpm', { removed: true }),
  'enable-opentracing': refused('location', 'low', 'removed from ingress-nginx (replaced by OpenTelemetry) and not supported', { removed: true }),
  'opentracing-trust-incoming-span': refused('location', 'low', 'removed from ingress-nginx (replaced by OpenTelemetry) and not supported', { removed: true }),
  'enable-influxdb': refused('location', 'low', 'removed from ingress-nginx and not supported', { removed: true }),
  'influxdb-measurement': refused('location', 'low', 'removed from ingress-nginx and not supported', { removed: true }),
  'influxdb-port': refused('location', 'low', 'removed from ingress-nginx and not supported', { removed: true }),
  'influxdb-host': refused('location', 'low', 'removed from ingress-nginx and not supported', { removed: true }),
  'influxdb-server-name': refused('location', 'low', 'removed from ingress-nginx and not supported', { removed: true }),
};

type Table = typeof ANNOTATION_TABLE;
/** Annotations Portico parses (a schema): the supported and difference rows, and auth-snippet (refused by plugins.ts). */
export type AnnotationName = { [K in keyof Table]: Table[K] extends { schema: z.ZodType } ? K : never }[keyof Table];
export const ANNOTATIONS = Object.fromEntries(Object.entries(ANNOTATION_TABLE).filter(([, r]) => r.schema !== undefined)) as {
  [K in AnnotationName]: Table[K];
};
/** Every row, as the common shape (for the reference, `portico migrate` and the tests). */
export const CATALOGUE: Readonly<Record<string, CatalogueRow>> = ANNOTATION_TABLE;

export type ParsedAnnotations = { [K in AnnotationName]?: z.output<(typeof ANNOTATIONS)[K]['schema']> };

export const NGINX_PREFIX = 'nginx.ingress.kubernetes.io/';
export const PORTICO_PREFIX = 'portico.dev/';

/** Rows per status. */
export function statusCounts(origin: CatalogueRow['origin'] = 'ingress-nginx'): Record<Status, number> {
  const out: Record<Status, number> = { supported: 0, difference: 0, refused: 0 };
  for (const r of Object.values(CATALOGUE)) if (r.origin === origin) out[r.status]++;
  return out;
}

const cell = (s: string) => s.replace(/\|/g, '\\|');

export function annotationsMarkdown(): string {
  const c = statusCounts();
  const total = c.supported + c.difference + c.refused;
  const order = (r: CatalogueRow) => STATUSES.indexOf(r.status);
  const rows = Object.entries(CATALOGUE)
    .map(([n, r], i) => ({ n, r, i }))
    .sort((a, b) => order(a.r) - order(b.r) || a.i - b.i)
    .map(({ n, r }) => {
      const name = r.origin === 'portico' ? `\`${PORTICO_PREFIX}${n}\` (Portico's own)` : `\`${NGINX_PREFIX}${n}\``;
      const text =
        r.status === 'refused'
          ? `${r.refusedWhy}${r.removed ? ' (risk: not in ingress-nginx\'s table, Low assumed)' : ''}`
          : r.status === 'difference'
            ? `${r.schema ? (r as Row<unknown>).description : ''} **Difference:** ${r.difference}`
            : (r as Row<unknown>).description;
      return `| ${name} | ${r.status} | ${r.scope} | ${r.risk} | ${cell(text)} |`;
    });
  const traefik = 86;
  const ours = c.supported + c.difference;
  return [
    `Of the ${total} \`${NGINX_PREFIX}*\` annotations ingress-nginx documents (including ${Object.values(CATALOGUE).filter((r) => r.removed).length} it has since removed), Portico applies ${ours}: **${c.supported} supported** as ingress-nginx does, **${c.difference} with a difference** (stated below), and **${c.refused} refused** (an \`UnsupportedAnnotation\` Warning, or for access control the Ingress fails closed). The \`${PORTICO_PREFIX}\` form of each supported name works too.`,
    '',
    `For comparison, Traefik's kubernetesIngressNGINX provider documents support for ${traefik} of the 131 ingress-nginx annotations its documentation lists; Portico applies ${ours} of ${total} (${ours - traefik >= 0 ? `${ours - traefik} more` : `${traefik - ours} fewer`} in absolute terms; the two lists differ slightly in which legacy names they include). Run \`portico migrate\` to see what this means for your Ingresses.`,
    '',
    '| annotation | status | scope | risk | meaning / difference / why refused |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
