// FastCGI backends (backend-protocol "FCGI", ingress-nginx's fastcgi-index and fastcgi-params-configmap): the route's
// directive profile passes the request with fastcgi_pass to the balanced upstream, with the standard FastCGI params
// (the renderer's, after Debian's /etc/nginx/fastcgi_params) and those of a ConfigMap of the Ingress's own namespace.
//
// The params are structure, not data: nginx takes a param's name and the variables of its value when it loads the
// configuration, so each distinct set is part of a directive profile (a new one reloads nginx once). What a tenant
// controls is therefore bounded: at most FASTCGI_MAX_PARAMS params per ConfigMap, names of ingress-nginx's alphabet
// (letters, digits, "_", ".", "-"; at most 64 characters), values of its alphabet (letters, digits, "_", ".", "/",
// "-") with nginx variables from FASTCGI_VARIABLES only (at most 1,024 characters), and at most
// FASTCGI_MAX_SETTINGS distinct FastCGI settings (index + params) per namespace (translate/phases/objects.ts).
import { z } from 'zod';
import { row, type ConfigMapReader, type Values } from '../group.ts';
import { configMapRefSchema, ownNamespaceRef } from '../own-namespace.ts';

/** Params one ConfigMap may hold. */
export const FASTCGI_MAX_PARAMS = 64;
/** Distinct FastCGI settings (fastcgi-index + params) the Ingresses of one namespace may use: each is a profile. */
export const FASTCGI_MAX_SETTINGS = 16;
const MAX_NAME = 64;
const MAX_VALUE = 1024;

/**
 * The nginx variables a param's value may name: what a FastCGI application is usually given (paths, the request,
 * the connection), and the families $http_<header>, $arg_<name> and $cookie_<name>. Each exists in every request of
 * Portico's nginx (an unknown one would fail nginx -t for everyone).
 */
export const FASTCGI_VARIABLES: ReadonlySet<string> = new Set([
  'document_root', 'realpath_root', 'fastcgi_script_name', 'fastcgi_path_info', 'request_filename', 'uri', 'document_uri',
  'request_uri', 'query_string', 'args', 'is_args', 'request_method', 'content_type', 'content_length', 'scheme', 'https',
  'host', 'hostname', 'server_name', 'server_port', 'server_addr', 'server_protocol', 'remote_addr', 'remote_port',
  'remote_user', 'nginx_version', 'ssl_protocol', 'ssl_cipher', 'ssl_server_name',
]);
const VARIABLE_FAMILY = /^(http|arg|cookie)_[a-z0-9_]{1,60}$/;

/** fastcgi-index: a file name (ingress-nginx's alphabet: letters, digits, ".", "_", "-"). */
export const fastcgiIndexSchema = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9._-]{1,255}$/, 'expected a file name such as index.php (letters, digits, ".", "_" and "-")');

export const rows = {
  'fastcgi-index': row(fastcgiIndexSchema, 'location', 'medium', 'With backend-protocol FCGI: the file name appended to a URI ending in "/" in $fastcgi_script_name (nginx\'s fastcgi_index), e.g. index.php; a param such as SCRIPT_FILENAME "/var/www/html$fastcgi_script_name" (fastcgi-params-configmap) uses it. Without backend-protocol FCGI it has no effect (a Warning)', { difference: 'a Warning when set without backend-protocol FCGI (ingress-nginx renders it without effect)' }),
  'fastcgi-params-configmap': row(configMapRefSchema, 'location', 'medium', `With backend-protocol FCGI: a ConfigMap ("name" or "namespace/name", the Ingress's own namespace) whose keys and values are sent as FastCGI params (nginx's fastcgi_param), after and in place of the standard ones (Debian's fastcgi_params: QUERY_STRING, REQUEST_METHOD, CONTENT_TYPE, CONTENT_LENGTH, SCRIPT_NAME, REQUEST_URI, DOCUMENT_URI, DOCUMENT_ROOT, SERVER_PROTOCOL, REQUEST_SCHEME, HTTPS, GATEWAY_INTERFACE, SERVER_SOFTWARE, REMOTE_ADDR, REMOTE_PORT, REMOTE_USER, SERVER_ADDR, SERVER_PORT, SERVER_NAME, REDIRECT_STATUS, HTTP_HOST; Portico's HTTP_X_FORWARDED_*, HTTP_X_REAL_IP, HTTP_X_REQUEST_ID, and an empty HTTP_PROXY so a client's Proxy header never passes). SCRIPT_FILENAME comes only from the ConfigMap, as in ingress-nginx (e.g. "/var/www/html$fastcgi_script_name"). Names: letters, digits, "_", ".", "-" (at most ${MAX_NAME}); values: letters, digits, "_", ".", "/", "-" and nginx variables ($name or \${name}) of a fixed list (paths, request, connection, $http_*, $arg_*, $cookie_*), at most ${MAX_VALUE} characters; at most ${FASTCGI_MAX_PARAMS} params. A ConfigMap that is missing, in another namespace or holds an invalid param makes the paths fail closed (503), as ingress-nginx denies the location; so does a namespace's ${FASTCGI_MAX_SETTINGS + 1}th distinct FastCGI setting (each is a directive profile). Changes to the ConfigMap apply without a restart`, {
    difference: `own namespace only; variables from a fixed list; at most ${FASTCGI_MAX_PARAMS} params and ${FASTCGI_MAX_SETTINGS} distinct settings per namespace; no client Proxy / X-Forwarded-*; changes apply at once`,
  }),
};

/**
 * Annotations that mean nothing with backend-protocol FCGI: nginx's proxy_* directives and the headers proxy_pass sends
 * (a Warning says so; ingress-nginx renders them, without effect, in its FastCGI locations).
 */
export const FASTCGI_NO_EFFECT = [
  'proxy-buffering', 'proxy-request-buffering', 'proxy-buffer-size', 'proxy-buffers-number', 'proxy-max-temp-file-size', 'proxy-http-version',
  'proxy-cookie-domain', 'proxy-cookie-path', 'proxy-redirect-from', 'proxy-redirect-to', 'connection-proxy-header',
] as const;

/** One FastCGI param: its name and its value with every variable braced (`${name}`), as the renderer emits it. */
export interface FastcgiParam {
  name: string;
  value: string;
}

/** What an Ingress's fastcgi-params-configmap gives: the ConfigMap read, its params, or why they cannot be used. */
export interface FastcgiParams {
  /** "namespace/name" of the ConfigMap read (and watched); absent when none is (another namespace). */
  configMapKey?: string;
  /** The params, sorted by name. */
  params?: FastcgiParam[];
  /** Why the params cannot be applied: the Ingress's paths answer 503. */
  error?: string;
  /** The ConfigMap does not exist (yet). */
  missing?: true;
}

/** A param value in canonical form (every variable braced), or why it is refused. */
export function fastcgiParamValue(v: string): { value: string } | { error: string } {
  if (v.length > MAX_VALUE) return { error: `longer than ${MAX_VALUE} characters` };
  let out = '';
  let i = 0;
  while (i < v.length) {
    const lit = /^[A-Za-z0-9._/-]+/.exec(v.slice(i));
    if (lit) {
      out += lit[0];
      i += lit[0].length;
      continue;
    }
    if (v[i] !== '$') return { error: `character ${JSON.stringify(v[i])} is not allowed (letters, digits, "_", ".", "/", "-" and nginx variables only)` };
    const m = /^\$(?:\{([A-Za-z0-9_]{1,64})\}|([A-Za-z0-9_]{1,64}))/.exec(v.slice(i));
    const name = m ? (m[1] ?? m[2] ?? '') : '';
    if (!m || v.slice(i + m[0].length).match(/^[A-Za-z0-9_]/)) return { error: '"$" must start a variable name ($name or ${name}, at most 64 characters)' };
    if (!FASTCGI_VARIABLES.has(name) && !VARIABLE_FAMILY.test(name)) return { error: `variable $${name} is not allowed (allowed: ${[...FASTCGI_VARIABLES].map((n) => `$${n}`).join(', ')}, $http_*, $arg_*, $cookie_*; lower case)` };
    out += `\${${name}}`;
    i += m[0].length;
  }
  return { value: out };
}

/** A param name (ingress-nginx's alphabet). */
const PARAM_NAME = new RegExp(`^[A-Za-z0-9._-]{1,${MAX_NAME}}$`);

/**
 * fastcgi-params-configmap (ingress-nginx): the ConfigMap it names, and its params — or why they cannot be applied
 * (another namespace, missing, an invalid or too many params: the paths fail closed). Without a reader (the admission
 * webhook) only the reference is returned: its content is judged by the controller. Read only with backend-protocol
 * FCGI (otherwise the annotation has no effect, and a Warning says so).
 */
export function fastcgiParamsOf(v: Values<typeof rows> & { 'backend-protocol'?: string }, namespace: string, configMaps?: ConfigMapReader): FastcgiParams | undefined {
  const ref = v['fastcgi-params-configmap'];
  if (ref === undefined || v['backend-protocol'] !== 'FCGI') return undefined;
  const r = ownNamespaceRef(ref, namespace, configMaps);
  if (r.elsewhere) return { error: `fastcgi-params-configmap: ConfigMap ${r.key} is in another namespace; only the Ingress's own namespace (${namespace}) is read` };
  if (!configMaps) return { configMapKey: r.key };
  if (!r.found) return { configMapKey: r.key, error: `fastcgi-params-configmap: ConfigMap ${r.key} not found`, missing: true };
  const entries = Object.entries(r.found.data ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const fail = (why: string): FastcgiParams => ({ configMapKey: r.key, error: `fastcgi-params-configmap: ConfigMap ${r.key}: ${why}` });
  if (entries.length > FASTCGI_MAX_PARAMS) return fail(`holds ${entries.length} params, more than ${FASTCGI_MAX_PARAMS}`);
  const params: FastcgiParam[] = [];
  for (const [name, raw] of entries) {
    if (!PARAM_NAME.test(name)) return fail(`${JSON.stringify(name.slice(0, MAX_NAME))} is not a param name (letters, digits, "_", "." and "-", at most ${MAX_NAME})`);
    const val = fastcgiParamValue(raw);
    if ('error' in val) return fail(`param ${name}: ${val.error}`);
    params.push({ name, value: val.value });
  }
  return { configMapKey: r.key, params };
}
