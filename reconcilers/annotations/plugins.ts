// ingress-nginx annotations that are plugins in disguise, turned into the plugin configurations Portico's own
// Plugin objects use — validated by the very same zod schemas (crds/schema/plugin-config.ts) and run by the same
// Lua plugins, so an allowlist from an annotation and one from a Plugin object behave identically.
//   allowlist-source-range / whitelist-source-range / denylist-source-range → ip-restriction (403);
//   enable-cors + cors-*                                                     → cors (ingress-nginx's defaults);
//   limit-rps / limit-rpm (+ limit-burst-multiplier, limit-allowlist)        → rate-limit per client IP, 503.
//   limit-connections (+ limit-allowlist)                                   → conn-limit per client IP, 503.
//   configuration-snippet / server-snippet                                  → snippet (compiled, see snippets.ts)
//   auth-url + auth-*                                                        → external-auth in its ingress-nginx
//                                                                              mode (auth_request semantics, auth-url.ts)
// An allow- or denylist that cannot be applied (an invalid CIDR) makes the Ingress fail closed; an invalid CORS or
// rate-limit setting is reported and that plugin is left out (as ingress-nginx ignores an invalid annotation).
// Snippets are compiled here (once per Ingress record) but applied only when the ConfigMap allows them, which the
// translation decides (translate/risk.ts): so their refusals are carried in the plugin, not reported yet.
import type { z } from 'zod';
import { parsePluginConfig, type PluginConfig } from '../../crds/schema/index.ts';
import type { SnippetStatement } from '../config/types.ts';
import { compileSnippet } from './snippets.ts';
import { NGINX_PREFIX, type ParsedAnnotations } from './table.ts';
import { authHeaderValue, authHeaderListSchema, authMethodSchema, authUrlSchema, cacheDurationSchema, cacheKeySchema, DEFAULT_CACHE_TTL, redirectParamSchema, requestRedirectSchema, signinLocation, signinSchema, type AuthUrl, type Signin, type TemplatePart } from './auth-url.ts';
import { boolSchema, zodMessage } from '../values/safe.ts';
import type { ClientCertSpec } from './auth-tls.ts';
import { ownNamespaceRef } from './own-namespace.ts';
import { checkPasswordHash } from '../config/password-hash.ts';

/** The snippet annotations, what each compiles to (auth-snippet is always refused: see externalAuthPlugin). */
export const SNIPPET_ANNOTATIONS = ['server-snippet', 'configuration-snippet', 'auth-snippet'] as const;
export type SnippetAnnotation = (typeof SNIPPET_ANNOTATIONS)[number];

/** The compiled snippets of an Ingress, and the ones refused (annotation name without prefix, why). */
export interface CompiledSnippets {
  server?: SnippetStatement[];
  location?: SnippetStatement[];
  refused: { annotation: SnippetAnnotation; message: string }[];
}

/**
 * Suffix of the data-plane plugin id ("ip", "cors", "rps", "rpm", "auth") and either a plugin configuration (the
 * Plugin schemas validated it) or, for basic auth from an auth-secret, the instance itself (its users come from a
 * Secret, which a Plugin object cannot name inline).
 */
export type AnnotationPlugin =
  | { suffix: string; config: PluginConfig }
  | { suffix: string; basicAuth: { realm: string; users: { username: string; hash: string }[] } }
  /** `allowed`: set only by the translation's gate (translate/risk.ts) once the ConfigMap allows snippets; only then run. */
  | { suffix: 'snippet'; snippets: CompiledSnippets; allowed?: true }
  /** limit-connections: requests in progress per client address; the translation adds the ConfigMap's status. */
  | { suffix: 'conn'; connLimit: { limit: number; exempt?: string[] } }
  /**
   * custom-headers: the response headers of a ConfigMap, validated as a response-headers plugin configuration, or
   * why they cannot be applied (the paths fail closed). The translation checks global-allowed-response-headers.
   */
  | { suffix: 'hdrs'; customHeaders: { configMap: string; config?: PluginConfig; error?: string } }
  /** auth-url (ingress-nginx's external authentication): the translation makes it an external-auth instance. */
  | { suffix: 'extauth'; externalAuth: ExternalAuthSpec }
  /** auth-tls-* (client certificates, auth-tls.ts): a client-cert instance, and the CA for the host's handshake. */
  | { suffix: 'mtls'; clientCert: ClientCertSpec };

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
export function externalAuthPlugin(v: ParsedAnnotations): { plugin?: AnnotationPlugin; problems: string[]; closed: { annotation: string; kind: string }[] } {
  const url = v['auth-url'];
  if (url === undefined) {
    const stray = AUTH_COMPANIONS.filter((n) => v[n] !== undefined);
    return { problems: stray.length ? [`annotation ignored: ${stray.map((n) => `${NGINX_PREFIX}${n}`).join(', ')}: has no effect without ${NGINX_PREFIX}auth-url`] : [], closed: [] };
  }
  if (v['auth-snippet'] !== undefined) {
    // Its directives would shape the auth subrequest (headers the auth service decides on): leaving them out
    // could let through what ingress-nginx refused.
    return { problems: [], closed: [{ annotation: `${NGINX_PREFIX}auth-snippet`, kind: 'external authentication with an auth-snippet, which Portico does not compile into the auth subrequest' }] };
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

/**
 * Compiles the snippet annotations present (undefined when there is none). auth-snippet is refused: in
 * ingress-nginx it runs inside the auth subrequest of auth-url, which Portico builds from data.
 */
export function snippetPlugin(v: ParsedAnnotations): AnnotationPlugin | undefined {
  if (SNIPPET_ANNOTATIONS.every((n) => v[n] === undefined)) return undefined;
  const out: CompiledSnippets = { refused: [] };
  // The server snippet first: the variables it sets are known to the configuration snippet (it runs first).
  let vars: ReadonlySet<string> = new Set();
  for (const [name, kind] of [['server-snippet', 'server'], ['configuration-snippet', 'location']] as const) {
    const src = v[name];
    if (src === undefined) continue;
    const r = compileSnippet(src, kind, vars);
    if (r.ok) {
      vars = r.vars;
      if (r.statements.length) out[kind] = r.statements;
    } else out.refused.push({ annotation: name, message: `${r.error}; nothing of this snippet is applied` });
  }
  if (v['auth-snippet'] !== undefined) {
    const also = v['auth-url'] !== undefined ? `; with ${NGINX_PREFIX}auth-url the Ingress fails closed` : `, and without ${NGINX_PREFIX}auth-url it has no effect`;
    out.refused.push({ annotation: 'auth-snippet', message: `its directives would run in the auth subrequest, which Portico does not compile snippets into${also}` });
  }
  return { suffix: 'snippet', snippets: out };
}

/** Headers auth-proxy-set-headers may not set: they frame the subrequest or are the ones Portico sets for it. */
const AUTH_HEADER_REFUSED = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'proxy-connection', 'expect']);

/**
 * auth-proxy-set-headers (ingress-nginx): the ConfigMap of headers for the auth subrequest of auth-url. Applied to the
 * Ingress's external-auth plugin in place; what cannot be applied fails the Ingress closed (the auth service would
 * decide without headers it relies on). Without a reader (the admission webhook) only the reference is returned.
 */
export function authProxyHeaders(v: ParsedAnnotations, namespace: string, plugins: AnnotationPlugin[], configMaps?: ConfigMapReader): { configMapKey?: string; problems: string[]; closed: { annotation: string; kind: string }[] } {
  const ref = v['auth-proxy-set-headers'];
  if (ref === undefined) return { problems: [], closed: [] };
  const ea = plugins.find((p): p is Extract<AnnotationPlugin, { externalAuth: ExternalAuthSpec }> => 'externalAuth' in p);
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

/** Reads a ConfigMap ("namespace/name") from the cache; undefined when it does not exist. */
export type ConfigMapReader = (key: string) => { data?: Record<string, string> } | undefined;

/**
 * custom-headers (ingress-nginx): the ConfigMap it names, and what it gives — response headers validated by the
 * response-headers plugin schema, or why they cannot be applied. Without a reader (the admission webhook) only the
 * reference is returned: its content is judged by the controller.
 */
export function customHeadersPlugin(v: ParsedAnnotations, namespace: string, configMaps?: ConfigMapReader): { configMapKey?: string; plugin?: AnnotationPlugin } {
  const ref = v['custom-headers'];
  if (ref === undefined) return {};
  const { key: configMap, elsewhere, found: cm } = ownNamespaceRef(ref, namespace, configMaps);
  const fail = (error: string) => ({ configMapKey: configMap, plugin: { suffix: 'hdrs', customHeaders: { configMap, error: `custom-headers: ${error}` } } as AnnotationPlugin });
  if (elsewhere) return { plugin: fail(`ConfigMap ${configMap} is in another namespace; only the Ingress's own namespace is read`).plugin };
  if (!configMaps) return { configMapKey: configMap };
  if (!cm) return fail(`ConfigMap ${configMap} not found`);
  const entries = Object.entries(cm.data ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  if (!entries.length) return fail(`ConfigMap ${configMap} holds no header`);
  const r = parsePluginConfig('response-headers', { set: entries.map(([n, value]) => ({ name: n, value })) });
  if (!r.ok) return fail(`ConfigMap ${configMap}: ${r.error}`);
  return { configMapKey: configMap, plugin: { suffix: 'hdrs', customHeaders: { configMap, config: r.config } } };
}

/** Reads a Secret ("namespace/name") from the cache; undefined when it does not exist or was not loaded. */
export type SecretReader = (key: string) => { data?: Record<string, string> } | undefined;

const USER = /^[\x21-\x39\x3b-\x7e]{1,128}$/;

/**
 * auth-type: basic with auth-secret (ingress-nginx): the users of an htpasswd file ("auth" key) or of an auth-map
 * (a key per user). Any problem that leaves no usable user fails the Ingress closed; a line Portico cannot use is
 * reported and skipped. Only a Secret of the Ingress's own namespace is read.
 */
export function basicAuthPlugin(
  v: ParsedAnnotations,
  namespace: string,
  secrets: SecretReader,
): { plugin?: AnnotationPlugin; secretKey?: string; problems: string[]; closed: { annotation: string; kind: string }[] } {
  const problems: string[] = [];
  const closed: { annotation: string; kind: string }[] = [];
  const secretName = v['auth-secret'];
  if (v['auth-type'] !== 'basic') {
    if (secretName !== undefined || v['auth-secret-type'] !== undefined || v['auth-realm'] !== undefined) {
      problems.push(`annotation ignored: ${NGINX_PREFIX}auth-secret/-secret-type/-realm have no effect without ${NGINX_PREFIX}auth-type: basic`);
    }
    return { problems, closed };
  }
  const fail = (why: string) => {
    closed.push({ annotation: `${NGINX_PREFIX}auth-type`, kind: `basic authentication that cannot be applied (${why})` });
    return { problems, closed };
  };
  if (!secretName) return fail(`${NGINX_PREFIX}auth-secret is missing`);
  const { key: secretKey, elsewhere, found: sec } = ownNamespaceRef(secretName, namespace, secrets);
  if (elsewhere) return fail(`auth-secret ${secretName} is in another namespace; only the Ingress's own namespace is read`);
  if (!sec?.data) return { ...fail(`Secret ${secretKey} not found`), secretKey };
  const decode = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');
  // Where an entry is, for messages: a line number of the htpasswd file, or a position among the auth-map's keys.
  // Never its user name or any other part of it: problems become Events, which the namespace's users read without
  // being allowed to read the Secret (a line without ":" may well be a password).
  const entries: { user: string; hash: string; where: string }[] = [];
  if ((v['auth-secret-type'] ?? 'auth-file') === 'auth-file') {
    const file = sec.data.auth;
    if (file === undefined) return { ...fail(`Secret ${secretKey} has no "auth" key (an htpasswd file)`), secretKey };
    decode(file)
      .split(/\r?\n/)
      .forEach((raw, n) => {
        const line = raw.trim();
        if (!line || line.startsWith('#')) return;
        const i = line.indexOf(':');
        entries.push({ user: i < 0 ? line : line.slice(0, i), hash: i < 0 ? '' : line.slice(i + 1), where: `line ${n + 1} of "auth"` });
      });
  } else {
    Object.entries(sec.data)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .forEach(([user, b64], n) => entries.push({ user, hash: decode(b64).trim(), where: `key ${n + 1} (in sorted order)` }));
  }
  const users: { username: string; hash: string }[] = [];
  const seen = new Set<string>();
  for (const { user, hash, where } of entries) {
    if (!USER.test(user)) problems.push(`auth-secret ${secretKey}: ${where}: the user name is not printable ASCII without ":"; skipped`);
    else {
      // The cost bound (password-hash.ts): a hash over it would block an nginx worker; the reason names the scheme
      // and cost only, never the hash.
      const checked = checkPasswordHash(hash);
      const unverifiable = 'not "user:hash" with a password hash Portico can verify (apr1, bcrypt, {SHA}, crypt md5/sha256/sha512/DES)';
      if (!checked.ok) problems.push(`auth-secret ${secretKey}: ${where}: ${hash && !checked.reason.startsWith('a password hash') ? checked.reason : unverifiable}; skipped`);
      else if (!seen.has(user)) {
        seen.add(user);
        users.push({ username: user, hash });
      }
    }
  }
  if (!users.length) return { ...fail(`Secret ${secretKey} holds no usable user`), secretKey };
  return { plugin: { suffix: 'auth', basicAuth: { realm: v['auth-realm'] ?? 'Authentication Required', users } }, secretKey, problems, closed };
}

const CORS_METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS'];
const CORS_HEADERS = ['DNT', 'Keep-Alive', 'User-Agent', 'X-Requested-With', 'If-Modified-Since', 'Cache-Control', 'Content-Type', 'Range', 'Authorization'];
/** ingress-nginx's limit-req-status-code default; the translation applies the ConfigMap's value. */
const LIMIT_STATUS = 503;

export function annotationPlugins(v: ParsedAnnotations): { plugins: AnnotationPlugin[]; problems: string[]; closed: { annotation: string; kind: string }[] } {
  const plugins: AnnotationPlugin[] = [];
  const problems: string[] = [];
  const closed: { annotation: string; kind: string }[] = [];
  const add = (suffix: string, type: string, config: Record<string, unknown>, names: string[], failClosed: string | null) => {
    const r = parsePluginConfig(type, config);
    if (r.ok) {
      plugins.push({ suffix, config: r.config });
      return;
    }
    const which = names.map((n) => `${NGINX_PREFIX}${n}`).join(', ');
    if (failClosed) closed.push({ annotation: which, kind: `${failClosed} that cannot be applied (${r.error.replace(/^config\./, '')})` });
    else problems.push(`annotation ignored: ${which}: ${r.error.replace(/^config\./, '')}`);
  };

  const allow = v['allowlist-source-range'] ?? v['whitelist-source-range'];
  const deny = v['denylist-source-range'];
  if (allow || deny) {
    const names = [...(allow ? [v['allowlist-source-range'] ? 'allowlist-source-range' : 'whitelist-source-range'] : []), ...(deny ? ['denylist-source-range'] : [])];
    add('ip', 'ip-restriction', { ...(allow ? { allow } : {}), ...(deny ? { deny } : {}) }, names, 'a client IP list');
  }

  if (v['enable-cors'] === true) {
    const origins = v['cors-allow-origin'] ?? ['*'];
    add(
      'cors',
      'cors',
      {
        allowOrigins: origins,
        allowMethods: (v['cors-allow-methods'] ?? CORS_METHODS).map((m) => m.toUpperCase()),
        allowHeaders: v['cors-allow-headers'] ?? CORS_HEADERS,
        ...(v['cors-expose-headers'] ? { exposeHeaders: v['cors-expose-headers'] } : {}),
        // ingress-nginx sends credentials "true" with "*" too, which browsers refuse: never allow that pair.
        allowCredentials: origins.includes('*') ? false : (v['cors-allow-credentials'] ?? true),
        maxAge: v['cors-max-age'] ?? 1728000,
      },
      ['enable-cors', 'cors-allow-origin', 'cors-allow-methods', 'cors-allow-headers', 'cors-expose-headers'].filter((n) => (v as Record<string, unknown>)[n] !== undefined),
      null,
    );
  } else {
    const stray = ['cors-allow-origin', 'cors-allow-methods', 'cors-allow-headers', 'cors-expose-headers', 'cors-allow-credentials', 'cors-max-age'].filter((n) => (v as Record<string, unknown>)[n] !== undefined);
    if (stray.length) problems.push(`annotation ignored: ${stray.map((n) => `${NGINX_PREFIX}${n}`).join(', ')}: has no effect without ${NGINX_PREFIX}enable-cors: "true"`);
  }

  const mult = v['limit-burst-multiplier'] ?? 5;
  const exemptName = v['limit-allowlist'] !== undefined ? 'limit-allowlist' : 'limit-whitelist';
  const exempt = v[exemptName];
  for (const [suffix, name, key] of [['rps', 'limit-rps', 'requestsPerSecond'], ['rpm', 'limit-rpm', 'requestsPerMinute']] as const) {
    const rate = v[name];
    if (rate === undefined) continue;
    add(suffix, 'rate-limit', { [key]: rate, burst: Math.min(rate * mult, 1_000_000), by: 'ip', status: LIMIT_STATUS, ...(exempt ? { exempt } : {}) }, [name, ...(exempt ? [exemptName] : [])], null);
  }
  // limit-connections: ingress-nginx's limit_conn per client address; limit-allowlist exempts clients from it too
  // (its allowlist empties the key of every limit zone).
  const conns = v['limit-connections'];
  if (conns !== undefined) {
    plugins.push({ suffix: 'conn', connLimit: { limit: conns, ...(exempt ? { exempt } : {}) } });
  }
  if (v['limit-rps'] === undefined && v['limit-rpm'] === undefined && conns === undefined) {
    const stray = ['limit-burst-multiplier', 'limit-whitelist', 'limit-allowlist'].filter((n) => (v as Record<string, unknown>)[n] !== undefined);
    if (stray.length) problems.push(`annotation ignored: ${stray.map((n) => `${NGINX_PREFIX}${n}`).join(', ')}: has no effect without ${NGINX_PREFIX}limit-rps, limit-rpm or limit-connections`);
  }
  // nginx does not rate-limit unbuffered responses: limit-rate with proxy-buffering "off" cannot be applied.
  if (v['limit-rate'] !== undefined && v['proxy-buffering'] === false) {
    const which = (['limit-rate', 'limit-rate-after'] as const).filter((n) => v[n] !== undefined).map((n) => `${NGINX_PREFIX}${n}`).join(', ');
    problems.push(`annotation ignored: ${which}: nginx does not rate-limit responses it does not buffer, and this Ingress sets proxy-buffering: "off"`);
  }
  // upstream-hash-by-subset(-size) shape upstream-hash-by's hashing: alone they ask for nothing (said, not silent).
  const subsetStray = (['upstream-hash-by-subset', 'upstream-hash-by-subset-size'] as const).filter((n) => v[n] !== undefined);
  if (subsetStray.length && v['upstream-hash-by'] === undefined) problems.push(`annotation ignored: ${subsetStray.map((n) => `${NGINX_PREFIX}${n}`).join(', ')}: has no effect without ${NGINX_PREFIX}upstream-hash-by`);
  else if (v['upstream-hash-by-subset-size'] !== undefined && v['upstream-hash-by-subset'] !== true) problems.push(`annotation ignored: ${NGINX_PREFIX}upstream-hash-by-subset-size: has no effect without ${NGINX_PREFIX}upstream-hash-by-subset: "true"`);
  // x-forwarded-prefix → X-Forwarded-Prefix on the proxied request; upstream-vhost → the Host sent upstream.
  const prefix = v['x-forwarded-prefix'];
  if (prefix !== undefined) add('fwdprefix', 'request-headers', { set: [{ name: 'X-Forwarded-Prefix', value: prefix }] }, ['x-forwarded-prefix'], null);
  const vhost = v['upstream-vhost'];
  if (vhost !== undefined) add('vhost', 'rewrite', { host: vhost }, ['upstream-vhost'], null);

  // permanent-redirect / temporal-redirect: every request answered with a redirect to the URL (as ingress-nginx's
  // `return <code> <url>`: the request's path and query are not appended).
  const perm = v['permanent-redirect'];
  const temp = v['temporal-redirect'];
  const target = perm ?? temp;
  if (target !== undefined) {
    const name = perm !== undefined ? 'permanent-redirect' : 'temporal-redirect';
    if (perm !== undefined && temp !== undefined) problems.push(`annotation ignored: ${NGINX_PREFIX}temporal-redirect: ${NGINX_PREFIX}permanent-redirect wins`);
    const code = perm !== undefined ? (v['permanent-redirect-code'] ?? 301) : (v['temporal-redirect-code'] ?? 302);
    let url: URL | null = null;
    try {
      url = new URL(target);
    } catch {
      url = null;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.hash) {
      problems.push(`annotation ignored: ${NGINX_PREFIX}${name}: must be an absolute http(s) URL without user info or fragment`);
    } else if (url.search) {
      problems.push(`annotation ignored: ${NGINX_PREFIX}${name}: a query string in the redirect URL is not supported`);
    } else {
      const port = url.port ? Number(url.port) : undefined;
      const codeName = `${name}-code` as 'permanent-redirect-code' | 'temporal-redirect-code';
      add('redirect', 'redirect', { statusCode: code, scheme: url.protocol.slice(0, -1), hostname: url.hostname, ...(port ? { port } : {}), path: url.pathname || '/', keepQuery: false }, [name, ...(v[codeName] !== undefined ? [codeName] : [])], null);
    }
  }
  const ea = externalAuthPlugin(v);
  if (ea.plugin) plugins.push(ea.plugin);
  problems.push(...ea.problems);
  closed.push(...ea.closed);
  const snippet = snippetPlugin(v);
  if (snippet) plugins.push(snippet);
  return { plugins, problems, closed };
}
