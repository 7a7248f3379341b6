// External authentication (auth-url and its companions, and the ConfigMap's global-auth-*): validated (auth-url.ts)
// into an ExternalAuthSpec, which the translation makes an external-auth instance in its ingress-nginx mode
// (auth_request semantics) once it knows where the subrequest goes (translate/plugin-instances.ts) and the
// ConfigMap's proxy timeouts. Every one of these is access control, so a value Portico cannot apply fails the
// Ingress closed.
import type { z } from 'zod';
import type { PluginInstance, SnippetStatement } from '../../config/types.ts';
import { NGINX_PREFIX, row, type Closed, type ConfigMapReader, type Values } from '../group.ts';
import { authHeaderValue, authHeaderListSchema, authMethodSchema, authUrlSchema, cacheDurationSchema, cacheKeySchema, DEFAULT_CACHE_TTL, redirectParamSchema, requestRedirectSchema, signinLocation, signinSchema, type AuthTarget, type AuthUrl, type Signin, type TemplatePart } from '../auth-url.ts';
import { configMapRefSchema, ownNamespaceRef } from '../own-namespace.ts';
import { boolSchema, intSchema, zodMessage } from '../../values/safe.ts';

export const rows = {
  'auth-url': row(authUrlSchema, 'location', 'high', 'External authentication as nginx\'s auth_request: a subrequest (the client\'s headers, no body, plus X-Original-URL, X-Original-Method, X-Auth-Request-Redirect, X-Sent-From, X-Real-IP, X-Forwarded-For) to this http(s) URL; 2xx lets the request through, 401/403 go back to the client (401 with the auth service\'s WWW-Authenticate), anything else or no answer is 500. A Service DNS name (<svc>.<ns>.svc[.cluster.local]) of the Ingress\'s own namespace goes through Portico\'s balancer to its endpoints (another namespace only with the ConfigMap\'s allow-cross-namespace-auth); another host is resolved by Portico and its loopback, link-local, metadata, Portico-own and (without that switch) Service cluster IP addresses are refused. The request\'s own host ($host, $http_host, $best_http_host: ingress-nginx\'s oauth2-proxy example "https://$host/oauth2/auth") is never resolved: the subrequest goes, over plain HTTP with X-Forwarded-Proto set to the URL\'s scheme, to the backend of the route that host serves the auth path with (an Ingress for /oauth2 without auth annotations, as in that example); no such route (the host\'s catch-all "/" does not count), one that requires authentication itself, or (without allow-cross-namespace-auth) another namespace\'s answers 500 with the reason in the error log. The path and query may hold $scheme, $host, $http_host, $request_uri, $escaped_request_uri, $uri, $args, $is_args, $request_method, $remote_addr, $arg_*, $http_*, $cookie_* (percent-encoded per request; with $host only in the query). An invalid URL, a Service or port that does not exist, or one of another namespace, fails the Ingress closed (503)', { access: 'external authentication', difference: 'variables from an allowlist; $host is the host\'s own route for the auth path, never a DNS lookup; Services of the own namespace only, unless the ConfigMap allows others' }),
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
};

/** auth-url (ingress-nginx's external authentication): the translation makes it an external-auth instance. */
export interface ExternalAuthPlugin {
  suffix: 'extauth';
  externalAuth: ExternalAuthSpec;
}

/**
 * ingress-nginx's external authentication, validated: an Ingress's auth-url and companions, or the ConfigMap's
 * global-auth-*. The translation turns it into an external-auth instance in its ingress-nginx mode and resolves
 * the target (a Service's endpoints, or a host Portico resolves).
 */
export interface ExternalAuthSpec {
  url: AuthUrl;
  /** auth-method: the subrequest's method (absent: GET, as nginx's auth_request). */
  method?: string;
  /** auth-response-headers, lower-case. */
  responseHeaders: string[];
  /** auth-request-redirect (absent: the request URI). */
  requestRedirect?: TemplatePart[];
  /** auth-signin with its redirect parameter: the Location of the 302 sent instead of a 401. */
  signin?: TemplatePart[];
  /** auth-cache-key with auth-cache-duration: seconds per status ("any" for the others). */
  cache?: { key: TemplatePart[]; ttl: Record<string, number> };
  alwaysSetCookie: boolean;
  /** auth-proxy-set-headers: headers (lower-case names) set on the auth subrequest, from a ConfigMap. */
  proxySetHeaders?: { name: string; value: TemplatePart[] }[];
  /**
   * auth-snippet, compiled (annotations/snippets.ts, kind "auth") and allowed by the ConfigMap's switches: added by
   * the translation's gate (translate/risk.ts), run on the subrequest's headers after proxySetHeaders.
   */
  snippet?: SnippetStatement[];
}

/** The settings of one external authentication, as the annotations or the ConfigMap give them. */
interface AuthSettings {
  url: AuthUrl;
  method?: string;
  signin?: Signin;
  signinParam?: string;
  responseHeaders?: string[];
  requestRedirect?: TemplatePart[];
  cacheKey?: TemplatePart[];
  cacheDuration?: Record<string, number>;
  alwaysSetCookie?: boolean;
}

function authSpec(a: AuthSettings): ExternalAuthSpec {
  const spec: ExternalAuthSpec = { url: a.url, responseHeaders: a.responseHeaders ?? [], alwaysSetCookie: a.alwaysSetCookie === true };
  if (a.method !== undefined) spec.method = a.method;
  if (a.requestRedirect) spec.requestRedirect = a.requestRedirect;
  if (a.signin) spec.signin = signinLocation(a.signin, a.signinParam ?? 'rd');
  if (a.cacheKey) spec.cache = { key: a.cacheKey, ttl: a.cacheDuration ?? DEFAULT_CACHE_TTL };
  return spec;
}

/** Annotations that only mean something with auth-url. */
const AUTH_COMPANIONS = [
  'auth-method',
  'auth-signin',
  'auth-signin-redirect-param',
  'auth-response-headers',
  'auth-request-redirect',
  'auth-cache-key',
  'auth-cache-duration',
  'auth-always-set-cookie',
  'auth-keepalive',
  'auth-keepalive-requests',
  'auth-keepalive-share-vars',
  'auth-keepalive-timeout',
] as const;
// (auth-proxy-set-headers is read with its ConfigMap by authProxyHeaders, which reports it without auth-url.)

/**
 * auth-url and its companions → the external-auth plugin (ingress-nginx mode). Anything that keeps the
 * authentication from being applied as written fails the Ingress closed (`closed`); companions without auth-url
 * are reported and have no effect, as in ingress-nginx. (Invalid values never get here: parseAnnotations already
 * failed the Ingress closed for them, these being access control.)
 */
export function externalAuthPlugin(v: Values<typeof rows>): { plugin?: ExternalAuthPlugin; problems: string[]; closed: Closed[] } {
  const url = v['auth-url'];
  if (url === undefined) {
    const stray = AUTH_COMPANIONS.filter((n) => v[n] !== undefined);
    return { problems: stray.length ? [`annotation ignored: ${stray.map((n) => `${NGINX_PREFIX}${n}`).join(', ')}: has no effect without ${NGINX_PREFIX}auth-url`] : [], closed: [] };
  }
  const spec = authSpec({
    url,
    method: v['auth-method'],
    signin: v['auth-signin'],
    signinParam: v['auth-signin-redirect-param'],
    responseHeaders: v['auth-response-headers'],
    requestRedirect: v['auth-request-redirect'],
    cacheKey: v['auth-cache-key'],
    cacheDuration: v['auth-cache-duration'],
    alwaysSetCookie: v['auth-always-set-cookie'],
  });
  const problems: string[] = [];
  if (v['auth-cache-duration'] !== undefined && v['auth-cache-key'] === undefined) problems.push(`annotation ignored: ${NGINX_PREFIX}auth-cache-duration: has no effect without ${NGINX_PREFIX}auth-cache-key`);
  if (v['auth-signin-redirect-param'] !== undefined && v['auth-signin'] === undefined) problems.push(`annotation ignored: ${NGINX_PREFIX}auth-signin-redirect-param: has no effect without ${NGINX_PREFIX}auth-signin`);
  return { plugin: { suffix: 'extauth', externalAuth: spec }, problems, closed: [] };
}

/** The ConfigMap's global-auth-* keys (raw strings: validated here, so a bad one fails closed, never open). */
export interface GlobalAuthKeys {
  url: string;
  method: string;
  signin: string;
  signinRedirectParam: string;
  responseHeaders: string;
  requestRedirect: string;
  cacheKey: string;
  cacheDuration: string;
  alwaysSetCookie: string;
  snippet: string;
}

/**
 * The ConfigMap's global external authentication: null when global-auth-url is empty; `error` (every Ingress it
 * applies to fails closed) when any global-auth-* key is invalid or global-auth-snippet is set.
 */
export function globalAuthSpec(k: GlobalAuthKeys): null | { spec: ExternalAuthSpec } | { error: string } {
  if (!k.url.trim()) return null;
  const errors: string[] = [];
  const parse = <T>(key: string, schema: z.ZodType<T, string>, raw: string): T | undefined => {
    if (!raw.trim()) return undefined;
    const r = schema.safeParse(raw);
    if (r.success) return r.data;
    errors.push(`${key}: ${zodMessage(r.error)}`);
    return undefined;
  };
  const url = parse('global-auth-url', authUrlSchema, k.url);
  const settings = {
    method: parse('global-auth-method', authMethodSchema, k.method),
    signin: parse('global-auth-signin', signinSchema, k.signin),
    signinParam: parse('global-auth-signin-redirect-param', redirectParamSchema, k.signinRedirectParam),
    responseHeaders: parse('global-auth-response-headers', authHeaderListSchema, k.responseHeaders),
    requestRedirect: parse('global-auth-request-redirect', requestRedirectSchema, k.requestRedirect),
    cacheKey: parse('global-auth-cache-key', cacheKeySchema, k.cacheKey),
    cacheDuration: parse('global-auth-cache-duration', cacheDurationSchema, k.cacheDuration),
    alwaysSetCookie: parse('global-auth-always-set-cookie', boolSchema, k.alwaysSetCookie),
  };
  if (k.snippet.trim()) errors.push('global-auth-snippet: its directives are not compiled into the auth subrequest');
  if (errors.length || !url) return { error: errors.join('; ') };
  return { spec: authSpec({ url, ...settings }) };
}

/**
 * no-auth-locations: Ingress paths that get no authentication (ingress-nginx compares the start of the path as
 * written in the Ingress, not the request's path).
 */
export function noAuthLocation(path: string, list: readonly string[]): boolean {
  return list.some((p) => p !== '' && path.startsWith(p));
}

/** Headers auth-proxy-set-headers may not set: they frame the subrequest or are the ones Portico sets for it. */
const AUTH_HEADER_REFUSED = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'proxy-connection', 'expect']);

/**
 * auth-proxy-set-headers (ingress-nginx): the ConfigMap of headers for the auth subrequest of auth-url. Applied to the
 * Ingress's external-auth plugin in place; what cannot be applied fails the Ingress closed (the auth service would
 * decide without headers it relies on). Without a reader (the admission webhook) only the reference is returned.
 */
export function authProxyHeaders(v: Values<typeof rows>, namespace: string, plugins: readonly { suffix: string }[], configMaps?: ConfigMapReader): { configMapKey?: string; problems: string[]; closed: Closed[] } {
  const ref = v['auth-proxy-set-headers'];
  if (ref === undefined) return { problems: [], closed: [] };
  const ea = plugins.find((p): p is ExternalAuthPlugin => 'externalAuth' in p);
  if (!ea) return { problems: v['auth-url'] === undefined ? [`annotation ignored: ${NGINX_PREFIX}auth-proxy-set-headers: has no effect without ${NGINX_PREFIX}auth-url`] : [], closed: [] };
  const r = ownNamespaceRef(ref, namespace, configMaps);
  const fail = (why: string) => ({ configMapKey: r.elsewhere ? undefined : r.key, problems: [], closed: [{ annotation: `${NGINX_PREFIX}auth-proxy-set-headers`, kind: `external authentication whose headers cannot be applied (${why})` }] });
  if (r.elsewhere) return fail(`ConfigMap ${r.key} is in another namespace; only the Ingress's own namespace is read`);
  if (!configMaps) return { configMapKey: r.key, problems: [], closed: [] };
  if (!r.found) return fail(`ConfigMap ${r.key} not found`);
  const entries = Object.entries(r.found.data ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  if (entries.length > 64) return fail(`ConfigMap ${r.key} holds more than 64 headers`);
  const headers: { name: string; value: TemplatePart[] }[] = [];
  for (const [name, value] of entries) {
    const n = name.toLowerCase();
    if (!/^[a-z0-9-]{1,64}$/.test(n)) return fail(`ConfigMap ${r.key}: ${JSON.stringify(name.slice(0, 64))} is not a header name (letters, digits, "-")`);
    if (AUTH_HEADER_REFUSED.has(n)) return fail(`ConfigMap ${r.key}: header ${name} cannot be set`);
    const t = authHeaderValue(value);
    if ('error' in t) return fail(`ConfigMap ${r.key}: header ${name}: ${t.error}`);
    headers.push({ name: n, value: t.parts });
  }
  ea.externalAuth = { ...ea.externalAuth, proxySetHeaders: headers };
  return { configMapKey: r.key, problems: [], closed: [] };
}


/** Proxy timeouts (seconds) of ingress-nginx's auth subrequests: the ConfigMap's, as its auth location inherits. */
export type AuthTimeouts = { connect: number; send: number; read: number };

/**
 * ingress-nginx's external authentication (auth-url or global-auth-url) as an external-auth instance, its subrequest
 * going to `backendId` (the translation's backend for the spec's target).
 */
export function externalAuthInstanceOf(spec: ExternalAuthSpec, name: string, t: AuthTimeouts, backendId: string): { inst: PluginInstance; auth: { target: AuthTarget; backendId: string; url: string } } {
  const inst: PluginInstance = {
    name,
    type: 'external-auth',
    backendId,
    path: spec.url.uri,
    method: 'GET',
    forwardHeaders: [],
    upstreamHeaders: spec.responseHeaders,
    clientHeaders: [],
    timeoutMs: Math.max(1, Math.round(t.read * 1000)),
    ingressNginx: {
      scheme: spec.url.scheme,
      host: spec.url.host,
      ...(spec.url.uriParts ? { uri: spec.url.uriParts } : {}),
      ...(spec.url.target.kind === 'own-host' ? { ownHost: true as const } : {}),
      ...(spec.method !== undefined ? { method: spec.method } : {}),
      ...(spec.requestRedirect ? { requestRedirect: spec.requestRedirect } : {}),
      ...(spec.signin ? { signin: spec.signin } : {}),
      ...(spec.cache ? { cache: spec.cache } : {}),
      alwaysSetCookie: spec.alwaysSetCookie,
      timeouts: { connect: t.connect, send: t.send, read: t.read },
      ...(spec.proxySetHeaders?.length ? { setHeaders: spec.proxySetHeaders } : {}),
      ...(spec.snippet?.length ? { snippet: spec.snippet } : {}),
    },
  };
  return { inst, auth: { target: spec.url.target, backendId, url: spec.url.url } };
}
