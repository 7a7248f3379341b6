// The FastCGI params of a backend-protocol FCGI profile: the standard ones, then the Ingress's (fastcgi-params-
// configmap), which replace a standard one of the same name — nginx would send both, and which one the application
// sees would be up to it. Rendered with the `fcgiparam` escaping helper (escape.ts).
import type { Profile } from '../../config/types.ts';

export interface RenderedFastcgiParam {
  name: string;
  /** Letters, digits, "_", ".", "/", "-" and braced variables only (escape.ts fastcgiParam checks it again). */
  value: string;
  ifNotEmpty?: true;
}

/**
 * What Debian's /etc/nginx/fastcgi_params sends (ingress-nginx includes nginx's fastcgi_params in its FastCGI
 * locations), with Portico's differences: SERVER_NAME is the request's host (Portico has one server, named "_", for
 * every host), HTTP_HOST the Host sent upstream (the request's host, or upstream-vhost's; Debian's $host), and, as for
 * proxied requests, the client's Proxy header is never passed (httpoxy: HTTP_PROXY is empty) and X-Real-IP,
 * X-Forwarded-*, X-Request-ID and X-Portico-Hop are Portico's, never the client's own. SCRIPT_FILENAME is not among
 * them (as in ingress-nginx): it comes from the ConfigMap.
 */
export const STANDARD_FASTCGI_PARAMS: readonly RenderedFastcgiParam[] = [
  { name: 'QUERY_STRING', value: '${query_string}' },
  { name: 'REQUEST_METHOD', value: '${request_method}' },
  { name: 'CONTENT_TYPE', value: '${content_type}' },
  { name: 'CONTENT_LENGTH', value: '${content_length}' },
  { name: 'SCRIPT_NAME', value: '${fastcgi_script_name}' },
  { name: 'REQUEST_URI', value: '${request_uri}' },
  { name: 'DOCUMENT_URI', value: '${document_uri}' },
  { name: 'DOCUMENT_ROOT', value: '${document_root}' },
  { name: 'SERVER_PROTOCOL', value: '${server_protocol}' },
  { name: 'REQUEST_SCHEME', value: '${scheme}' },
  { name: 'HTTPS', value: '${https}', ifNotEmpty: true },
  { name: 'GATEWAY_INTERFACE', value: 'CGI/1.1' },
  { name: 'SERVER_SOFTWARE', value: 'nginx/${nginx_version}' },
  { name: 'REMOTE_ADDR', value: '${remote_addr}' },
  { name: 'REMOTE_PORT', value: '${remote_port}' },
  { name: 'REMOTE_USER', value: '${remote_user}' },
  { name: 'SERVER_ADDR', value: '${server_addr}' },
  { name: 'SERVER_PORT', value: '${server_port}' },
  { name: 'SERVER_NAME', value: '${host}' },
  { name: 'REDIRECT_STATUS', value: '200' },
  { name: 'HTTP_HOST', value: '${portico_proxy_host}' },
  { name: 'HTTP_PROXY', value: '' },
  { name: 'HTTP_X_REAL_IP', value: '${remote_addr}' },
  { name: 'HTTP_X_FORWARDED_FOR', value: '${portico_forwarded_for}' },
  { name: 'HTTP_X_FORWARDED_PROTO', value: '${portico_forwarded_proto}' },
  { name: 'HTTP_X_FORWARDED_HOST', value: '${portico_forwarded_host}' },
  { name: 'HTTP_X_FORWARDED_PORT', value: '${portico_forwarded_port}' },
  { name: 'HTTP_X_REQUEST_ID', value: '${portico_request_id}' },
  { name: 'HTTP_X_PORTICO_HOP', value: '${portico_hop}' },
  { name: 'HTTP_TRACEPARENT', value: '${portico_traceparent_out}', ifNotEmpty: true },
];

/** The params of a FastCGI profile, in the order sent: the standard ones the Ingress does not set, then its own. */
export function fastcgiParamsOf(p: Profile): RenderedFastcgiParam[] {
  const own = p.fastcgi?.params ?? [];
  const names = new Set(own.map((x) => x.name));
  return [...STANDARD_FASTCGI_PARAMS.filter((x) => !names.has(x.name)), ...own.map((x) => ({ name: x.name, value: x.value }))];
}

/** proxy_next_upstream conditions fastcgi_next_upstream knows (it has no http_502 / http_504); "off" when none is left. */
export function fastcgiNextUpstream(v: string | undefined): string | null {
  if (v === undefined) return null;
  const kept = v.split(' ').filter((t) => t !== 'http_502' && t !== 'http_504');
  return kept.length ? kept.join(' ') : 'off';
}
