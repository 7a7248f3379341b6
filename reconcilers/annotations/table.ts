// Per-Ingress annotations Portico understands: one row each with its schema, scope, risk and meaning (the README
// reference is generated from this table). `nginx.ingress.kubernetes.io/<name>` and `portico.dev/<name>` are
// equivalent; the portico.dev form wins when both are set.
import { z } from 'zod';
import { accessControlKind } from './access-control.ts';
import { MAX_SNIPPET } from './snippets.ts';
import { authSecretSchema, commaListSchema, pluginListSchema, realmSchema, affinityModeSchema, affinitySchema, boolSchema, cookieNameSchema, headerNameSchema, headerPatternSchema, headerValueSchema, intSchema, loadBalanceSchema, nginxVariableSchema, secondsSchema, sizeSchema, zodMessage } from '../translate/safe.ts';

export type Scope = 'location' | 'server' | 'backend' | 'ingress';
/**
 * ingress-nginx's risk levels (annotations-risk.md); the ConfigMap's annotations-risk-level refuses every
 * annotation above it (risk.ts). Portico's rows carry ingress-nginx's level for the same annotation.
 */
export type Risk = 'low' | 'medium' | 'high' | 'critical';
export const RISKS: readonly Risk[] = ['low', 'medium', 'high', 'critical'];
export const riskRank = (r: Risk): number => RISKS.indexOf(r);
/** "Critical", as ingress-nginx spells the level in its ConfigMap and documentation. */
export const riskLabel = (r: Risk): string => r[0]!.toUpperCase() + r.slice(1);

interface Row<T> {
  schema: z.ZodType<T, string>;
  scope: Scope;
  risk: Risk;
  description: string;
}
const row = <T>(schema: z.ZodType<T, string>, scope: Scope, risk: Risk, description: string): Row<T> => ({
  schema,
  scope,
  risk,
  description,
});

// Snippets are compiled by plugins.ts (snippets.ts), once the ConfigMap allows them; here only their size.
const snippetSchema = z.string().max(MAX_SNIPPET * 4, `longer than ${MAX_SNIPPET * 4} characters`);

export const ANNOTATIONS = {
  'use-regex': row(boolSchema, 'ingress', 'low', 'Treat ImplementationSpecific paths of this Ingress as case-insensitive regular expressions'),
  'ssl-redirect': row(boolSchema, 'location', 'low', 'Redirect HTTP to HTTPS when the host has TLS (default: ConfigMap ssl-redirect, true)'),
  'force-ssl-redirect': row(boolSchema, 'location', 'medium', 'Redirect HTTP to HTTPS even when the host has no TLS section'),
  'proxy-body-size': row(sizeSchema, 'location', 'medium', 'Maximum request body size (client_max_body_size), e.g. 8m; 0 = unlimited'),
  'proxy-connect-timeout': row(secondsSchema, 'location', 'low', 'Upstream connect timeout in seconds'),
  'proxy-read-timeout': row(secondsSchema, 'location', 'low', 'Upstream read timeout in seconds'),
  'proxy-send-timeout': row(secondsSchema, 'location', 'low', 'Upstream send timeout in seconds'),
  'load-balance': row(loadBalanceSchema, 'backend', 'low', 'Balancing algorithm for this Ingress\'s backends: round_robin or ewma'),
  'upstream-hash-by': row(nginxVariableSchema, 'backend', 'high', 'Consistent hashing on an nginx variable, e.g. $request_uri or $remote_addr (adding an endpoint moves about 1/N of the keys)'),
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
  'whitelist-source-range': row(commaListSchema, 'ingress', 'medium', 'Client IP allowlist (CIDRs, comma-separated; older name of allowlist-source-range): others get 403. Runs as an ip-restriction plugin; an invalid list makes the Ingress fail closed (503)'),
  'allowlist-source-range': row(commaListSchema, 'ingress', 'medium', 'Client IP allowlist (CIDRs, comma-separated): others get 403; wins over whitelist-source-range. An invalid list makes the Ingress fail closed (503)'),
  'denylist-source-range': row(commaListSchema, 'ingress', 'medium', 'Client IP denylist (CIDRs, comma-separated): those get 403 (deny wins over allow). An invalid list makes the Ingress fail closed (503)'),
  'enable-cors': row(boolSchema, 'ingress', 'low', 'CORS with the cors-* settings: preflights answered with 204 by Portico, CORS headers on responses (cors plugin)'),
  'cors-allow-origin': row(commaListSchema, 'ingress', 'medium', 'Allowed origins, comma-separated: "*" (default), "https://a.example" or "https://*.example.com"; with "*", credentials are not allowed (browsers refuse that pair anyway)'),
  'cors-allow-methods': row(commaListSchema, 'ingress', 'medium', 'Allowed methods (default GET, PUT, POST, DELETE, PATCH, OPTIONS)'),
  'cors-allow-headers': row(commaListSchema, 'ingress', 'medium', 'Allowed request headers (default DNT, Keep-Alive, User-Agent, X-Requested-With, If-Modified-Since, Cache-Control, Content-Type, Range, Authorization)'),
  'cors-expose-headers': row(commaListSchema, 'ingress', 'medium', 'Response headers exposed to the page (default none)'),
  'cors-allow-credentials': row(boolSchema, 'ingress', 'low', 'Access-Control-Allow-Credentials (default true, except with origin "*")'),
  'cors-max-age': row(intSchema(0, 2_592_000), 'ingress', 'low', 'Access-Control-Max-Age in seconds (default 1728000)'),
  'limit-rps': row(intSchema(1, 1_000_000), 'ingress', 'low', 'Requests per second per client IP, burst limit-rps × limit-burst-multiplier; over it: 503 (rate-limit plugin, counters per node)'),
  'limit-rpm': row(intSchema(1, 100_000_000), 'ingress', 'low', 'Requests per minute per client IP, burst limit-rpm × limit-burst-multiplier; over it: 503'),
  'limit-burst-multiplier': row(intSchema(1, 1000), 'ingress', 'low', 'Burst of limit-rps / limit-rpm as a multiple of the rate (default 5)'),
  'limit-whitelist': row(commaListSchema, 'ingress', 'low', 'Client CIDRs never rate limited (comma-separated)'),
  'auth-type': row(z.enum(['basic'], { error: () => 'Portico supports auth-type "basic" (digest is not supported: the Ingress fails closed)' }), 'ingress', 'low', 'HTTP basic authentication against the users of auth-secret (basic-auth plugin); "digest" is refused and fails closed'),
  'auth-secret': row(authSecretSchema, 'ingress', 'medium', 'Secret with the users: its name, or "namespace/name" of the Ingress\'s own namespace (another namespace is refused and fails closed)'),
  'auth-secret-type': row(z.enum(['auth-file', 'auth-map'], { error: () => 'auth-secret-type must be auth-file or auth-map' }), 'ingress', 'low', 'auth-file (default: an htpasswd file under the key "auth") or auth-map (a key per user, the value its password hash)'),
  'auth-realm': row(realmSchema, 'ingress', 'medium', 'Realm of the Basic challenge (default "Authentication Required")'),
  'permanent-redirect': row(z.string().max(2048, 'URL is longer than 2048 characters'), 'ingress', 'medium', 'Answer every request with a redirect to this URL (http/https, a DNS host name, no query): 301, or permanent-redirect-code (redirect plugin)'),
  'permanent-redirect-code': row(intSchema(300, 308), 'ingress', 'low', 'Status of permanent-redirect (default 301; 301, 302, 303, 307 or 308)'),
  'temporal-redirect': row(z.string().max(2048, 'URL is longer than 2048 characters'), 'ingress', 'medium', 'Answer every request with a redirect to this URL: 302, or temporal-redirect-code; permanent-redirect wins when both are set'),
  'temporal-redirect-code': row(intSchema(300, 308), 'ingress', 'low', 'Status of temporal-redirect (default 302; 301, 302, 303, 307 or 308)'),
  'x-forwarded-prefix': row(z.string().max(1024, 'longer than 1024 characters'), 'ingress', 'medium', 'Send X-Forwarded-Prefix with this value to the backend (request-headers plugin; printable ASCII, sent literally)'),
  'upstream-vhost': row(z.string().max(253, 'longer than 253 characters'), 'ingress', 'low', 'Host header sent to the backend instead of the client\'s (a DNS name; rewrite plugin)'),
  'backend-protocol': row(z.enum(['HTTP', 'HTTPS', 'GRPC', 'GRPCS', 'AUTO_HTTP'], { error: () => 'backend-protocol must be HTTP, HTTPS, GRPC, GRPCS or AUTO_HTTP (FCGI is not supported)' }), 'location', 'low', 'Protocol to the backend: HTTP (default; AUTO_HTTP is the same), HTTPS, GRPC or GRPCS (a directive profile: the first route with a new combination reloads once); an Upstream object for the Service wins'),
  plugins: row(pluginListSchema, 'location', 'medium', 'Portico Plugin objects (portico.dev/v1alpha1, same namespace) run for every path of this Ingress, e.g. "auth,limit"; a missing or invalid one makes the paths answer 503 (fail closed)'),
  'canary-by-cookie': row(cookieNameSchema, 'backend', 'medium', 'Cookie routing: "always" → canary, "never" → main (after header, before weight)'),
  'configuration-snippet': row(snippetSchema, 'location', 'critical', 'Only with the ConfigMap\'s allow-snippet-annotations: "true" and annotations-risk-level: Critical (else refused with a Warning). Parsed with nginx\'s lexical rules and compiled to data for the snippet plugin (it runs after every other plugin) for every path of this Ingress; allowed: more_set_headers (-s, -t), more_clear_headers, more_set_input_headers (-r, -t), more_clear_input_headers, add_header [always], proxy_set_header, set, return, rewrite (last = break: the route is not chosen again), break, if (($v), =, !=, ~, ~*, !~, !~*); values may read $host, $uri, $request_uri, $args, $scheme, $remote_addr, $request_method, $server_name (= $host), $http_*, $arg_*, $cookie_*, $1-$9 and variables set before. Anything else (Lua, include, file paths, proxy_pass, access directives, other variables) refuses the whole snippet with the line; one refused for access rules makes the Ingress fail closed. Differences: rewrite-module directives run after auth and rate limits (nginx runs them before), and headers of an if block add to the others (nginx replaces them)'),
  'server-snippet': row(snippetSchema, 'ingress', 'critical', 'As configuration-snippet, but runs first; difference: in ingress-nginx it is the host\'s server block (every Ingress on the host, 404s included) — in Portico it applies to every path of that host served by this Ingress. location blocks are refused'),
  'auth-snippet': row(snippetSchema, 'location', 'critical', 'Refused with a Warning: it applies to the external-auth subrequest of auth-url, which Portico does not support yet (an Ingress with auth-url fails closed)'),
} as const;

export type AnnotationName = keyof typeof ANNOTATIONS;
export type ParsedAnnotations = { [K in AnnotationName]?: z.output<(typeof ANNOTATIONS)[K]['schema']> };

export const NGINX_PREFIX = 'nginx.ingress.kubernetes.io/';
export const PORTICO_PREFIX = 'portico.dev/';

/** Annotations under Portico's prefixes that are handled outside this table (test hooks). */
const HANDLED_ELSEWHERE = new Set(['portico.dev/test-invalid-directive']);

export interface AnnotationResult {
  values: ParsedAnnotations;
  /** Invalid values: the annotation is ignored (default applies) and the user gets a Warning event. */
  errors: { annotation: string; message: string }[];
  /**
   * nginx.ingress.kubernetes.io/* and portico.dev/* annotations Portico does not implement, sorted. Each raises an
   * UnsupportedAnnotation Warning; the access-control ones (also listed in `accessControl`) make the Ingress fail
   * closed.
   */
  unsupported: string[];
  /** Unsupported annotations that restrict access, with what they ask for; the Ingress must not be served. */
  accessControl: { annotation: string; kind: string }[];
}

export function parseAnnotations(annotations: Record<string, string> | undefined): AnnotationResult {
  const out: AnnotationResult = { values: {}, errors: [], unsupported: [], accessControl: [] };
  const a = annotations ?? {};
  for (const full of Object.keys(a).sort()) {
    const prefix = full.startsWith(NGINX_PREFIX) ? NGINX_PREFIX : full.startsWith(PORTICO_PREFIX) ? PORTICO_PREFIX : null;
    if (!prefix || HANDLED_ELSEWHERE.has(full)) continue;
    const name = full.slice(prefix.length);
    if (Object.hasOwn(ANNOTATIONS, name)) continue;
    out.unsupported.push(full);
    const kind = accessControlKind(name, a[full] ?? '');
    if (kind) out.accessControl.push({ annotation: full, kind });
  }
  for (const [name, r] of Object.entries(ANNOTATIONS)) {
    const full = a[`${PORTICO_PREFIX}${name}`] !== undefined ? `${PORTICO_PREFIX}${name}` : `${NGINX_PREFIX}${name}`;
    const raw = a[full];
    if (raw === undefined) continue;
    const parsed = (r.schema as z.ZodType).safeParse(raw);
    if (parsed.success) (out.values as Record<string, unknown>)[name] = parsed.data;
    else {
      // Access control with a value Portico cannot read is not ignored: the Ingress fails closed.
      const kind = accessControlKind(name, raw);
      if (kind) out.accessControl.push({ annotation: full, kind: `${kind} with an invalid value: ${zodMessage(parsed.error)}` });
      else out.errors.push({ annotation: full, message: `${full}=${JSON.stringify(raw.slice(0, 100))}: ${zodMessage(parsed.error)}` });
    }
  }
  return out;
}

export function annotationsMarkdown(): string {
  const rows = Object.entries(ANNOTATIONS).map(
    ([n, r]) => `| \`${NGINX_PREFIX}${n}\` / \`${PORTICO_PREFIX}${n}\` | ${r.scope} | ${r.risk} | ${r.description} |`,
  );
  return ['| annotation | scope | risk | meaning |', '|---|---|---|---|', ...rows].join('\n');
}
