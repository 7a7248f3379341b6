// The variables a ConfigMap `log-format-upstream` may use. nginx resolves log_format variables when it loads the
// configuration, so an unknown one fails `nginx -t` — and since the format is global, it would block every
// reload. Only variables that exist in the nginx Portico ships (Debian's nginx 1.22 with the modules it loads)
// and the ones Portico's own templates define are accepted; the unit tests render every one of them through the
// real templates and `nginx -t`.

/** Core, upstream, proxy, SSL, HTTP/2, realip and other variables of the modules Portico's nginx has. */
const NGINX = [
  // ngx_http_core_module
  'args', 'binary_remote_addr', 'body_bytes_sent', 'bytes_sent', 'connection', 'connection_requests', 'connection_time',
  'content_length', 'content_type', 'document_root', 'document_uri', 'host', 'hostname', 'https', 'is_args', 'limit_rate',
  'msec', 'nginx_version', 'pid', 'pipe', 'proxy_protocol_addr', 'proxy_protocol_port', 'proxy_protocol_server_addr',
  'proxy_protocol_server_port', 'query_string', 'realpath_root', 'remote_addr', 'remote_port', 'remote_user', 'request',
  'request_body', 'request_body_file', 'request_completion', 'request_filename', 'request_id', 'request_length',
  'request_method', 'request_time', 'request_uri', 'scheme', 'server_addr', 'server_name', 'server_port', 'server_protocol',
  'status', 'tcpinfo_rtt', 'tcpinfo_rttvar', 'tcpinfo_snd_cwnd', 'tcpinfo_rcv_space', 'time_iso8601', 'time_local', 'uri',
  // ngx_http_upstream_module / ngx_http_proxy_module
  'upstream_addr', 'upstream_bytes_received', 'upstream_bytes_sent', 'upstream_cache_status', 'upstream_connect_time',
  'upstream_header_time', 'upstream_response_length', 'upstream_response_time', 'upstream_status',
  'proxy_host', 'proxy_port', 'proxy_add_x_forwarded_for',
  // ngx_http_ssl_module (the raw certificate variables are left out: they span several lines)
  'ssl_alpn_protocol', 'ssl_cipher', 'ssl_ciphers', 'ssl_client_fingerprint', 'ssl_client_i_dn', 'ssl_client_s_dn',
  'ssl_client_serial', 'ssl_client_v_end', 'ssl_client_v_remain', 'ssl_client_v_start', 'ssl_client_verify', 'ssl_curve',
  'ssl_curves', 'ssl_early_data', 'ssl_protocol', 'ssl_server_name', 'ssl_session_id', 'ssl_session_reused',
  // http_v2, realip, gzip, limit_conn, limit_req, stub_status
  'http2', 'realip_remote_addr', 'realip_remote_port', 'gzip_ratio', 'limit_conn_status', 'limit_req_status',
  'connections_active', 'connections_reading', 'connections_writing', 'connections_waiting',
] as const;

/**
 * Variables Portico's templates (nginx-assets/templates/*.hbs) define for every request, whatever the settings.
 * (Left out: $portico_trusted_peer, which exists only with use-forwarded-headers or use-proxy-protocol, $portico_pp_port,
 * only with use-proxy-protocol, and $portico_peer_addr, only with --enable-ssl-passthrough.)
 */
export const PORTICO_VARIABLES = [
  'portico_backend', 'portico_set_cookie', 'portico_client_ip', 'portico_forwarded_for', 'portico_forwarded_proto',
  'portico_forwarded_host', 'portico_forwarded_port', 'portico_forwarded_port_published', 'portico_redirect_host', 'portico_connection_upgrade',
  'portico_hsts', 'portico_hsts_https', 'portico_request_id', 'portico_timeouts', 'portico_tls_host', 'portico_plugins', 'portico_filters', 'portico_lfilters', 'portico_deny', 'portico_upstream_host',
  'portico_proxy_host', 'portico_client_host', 'portico_auth_backend', 'portico_auth_timeouts', 'portico_auth_uri', 'portico_auth_method',
  'portico_auth_scheme', 'portico_auth_host', 'portico_auth_host_header', 'portico_conn_release',
  // loop detection: the X-Portico-Hop value sent on, and "1" when the request came back to this installation.
  'portico_hop', 'portico_loop',
  // default-backend, custom-http-errors and mirror-target (empty for routes without them).
  'portico_fallback', 'portico_error_route', 'portico_error_code', 'portico_error_namespace', 'portico_error_ingress', 'portico_error_service',
  'portico_error_port', 'portico_mirror_backend', 'portico_mirror_scheme', 'portico_mirror_host', 'portico_mirror_sni', 'portico_mirror_uri', 'portico_mk', 'portico_rid',
  // The log variables of ingress-nginx (below) are derived from these (http.hbs): the route's backend when a canary
  // served (else empty), the backend that decides $proxy_upstream_name, $service_name and $service_port, and the
  // backends written as ingress-nginx names its upstreams.
  'portico_route_backend', 'portico_main_backend', 'portico_main_upstream', 'portico_served_upstream', 'portico_upstream_name',
  'portico_derived_upstream',
  // "1" when the request was routed by the router's native path (ngx_http_portico_vars_route.c), without Lua.
  'portico_routed_natively',
  // OpenTelemetry (tracing.lua): the traceparent sent upstream, the sampled span and what its log phase reads.
  'portico_traceparent', 'portico_traceparent_out', 'portico_span', 'portico_span_line',
] as const;

/**
 * ingress-nginx's $geoip2_* variables (use-geoip2): from the MaxMind databases present, else empty — the renderer
 * defines every one of them either way (nginx-driver/nginx/optional-modules.ts, whose editions define exactly these).
 */
export const GEOIP2_VARIABLES = [
  'geoip2_country_code', 'geoip2_country_name', 'geoip2_country_geoname_id', 'geoip2_continent_code', 'geoip2_continent_name',
  'geoip2_continent_geoname_id', 'geoip2_city_country_code', 'geoip2_city_country_name', 'geoip2_city_country_geoname_id',
  'geoip2_city', 'geoip2_city_geoname_id', 'geoip2_postal_code', 'geoip2_dma_code', 'geoip2_latitude', 'geoip2_longitude',
  'geoip2_time_zone', 'geoip2_region_code', 'geoip2_region_name', 'geoip2_region_geoname_id', 'geoip2_subregion_code',
  'geoip2_subregion_name', 'geoip2_subregion_geoname_id', 'geoip2_city_continent_code', 'geoip2_city_continent_name',
  'geoip2_isp', 'geoip2_isp_org', 'geoip2_asn', 'geoip2_org', 'geoip2_connection_type', 'geoip2_is_anon', 'geoip2_is_anonymous',
  'geoip2_is_anonymous_vpn', 'geoip2_is_hosting_provider', 'geoip2_is_public_proxy', 'geoip2_is_tor_exit_node',
] as const;

/**
 * ingress-nginx's own log variables, with its meanings and values (http.hbs derives them with `map`, so they cost
 * nothing unless a log format reads them). $namespace, $ingress_name and $location_path need the route's labels: the
 * controller sends them when the format uses one of these (ROUTE_LABEL_VARIABLES) or per-request metrics are on.
 */
export const INGRESS_NGINX_VARIABLES = [
  'proxy_upstream_name', 'proxy_alternative_upstream_name', 'req_id', 'namespace', 'ingress_name', 'service_name', 'service_port', 'location_path',
] as const;
export const ROUTE_LABEL_VARIABLES: readonly string[] = ['namespace', 'ingress_name', 'location_path'];

/** Whether a log format reads a variable that needs the route's labels in $portico_mk. */
export function formatNeedsRouteLabels(format: string): boolean {
  for (const m of format.matchAll(/\$([a-z0-9_]+)/g)) if (ROUTE_LABEL_VARIABLES.includes(m[1] as string)) return true;
  return false;
}

/**
 * The stream section's variables (log-format-stream): ngx_stream_core, upstream, realip, ssl_preread and
 * ngx_stream_log of the nginx Portico ships. No prefixed families exist there.
 */
export const STREAM_VARIABLES: ReadonlySet<string> = new Set<string>([
  'binary_remote_addr', 'bytes_received', 'bytes_sent', 'connection', 'hostname', 'msec', 'nginx_version', 'pid', 'protocol',
  'proxy_protocol_addr', 'proxy_protocol_port', 'proxy_protocol_server_addr', 'proxy_protocol_server_port', 'remote_addr',
  'remote_port', 'server_addr', 'server_port', 'session_time', 'status', 'time_iso8601', 'time_local',
  'upstream_addr', 'upstream_bytes_received', 'upstream_bytes_sent', 'upstream_connect_time', 'upstream_first_byte_time',
  'upstream_session_time', 'realip_remote_addr', 'realip_remote_port', 'ssl_preread_protocol', 'ssl_preread_server_name',
  'ssl_preread_alpn_protocols',
]);

/** Families: any name after the prefix is valid ($http_user_agent, $cookie_session, $arg_page...). */
export const VARIABLE_PREFIXES = ['http_', 'sent_http_', 'sent_trailer_', 'cookie_', 'arg_', 'upstream_http_', 'upstream_trailer_', 'upstream_cookie_'] as const;

export const KNOWN_VARIABLES: ReadonlySet<string> = new Set<string>([...NGINX, ...PORTICO_VARIABLES, ...INGRESS_NGINX_VARIABLES, ...GEOIP2_VARIABLES]);

/** ingress-nginx variables Portico does not define, with what to write instead. */
const INGRESS_NGINX_HINTS: Record<string, string> = {
  the_real_ip: 'use $portico_client_ip or $remote_addr',
};

export function isKnownVariable(name: string): boolean {
  if (KNOWN_VARIABLES.has(name)) return true;
  return VARIABLE_PREFIXES.some((p) => name.length > p.length && name.startsWith(p));
}

/**
 * Null when every `$variable` in a log format is known; else what is wrong, with the position (1-based). `stream`:
 * the stream section's format (log-format-stream), whose variables are the stream modules'.
 */
export function logFormatProblem(format: string, section: 'http' | 'stream' = 'http'): string | null {
  for (let i = format.indexOf('$'); i !== -1; i = format.indexOf('$', i + 1)) {
    const at = i + 1;
    const next = format[i + 1];
    if (next === '{') return `at character ${at}: "\${...}" is not supported in log formats; write $name`;
    const m = /^[A-Za-z0-9_]+/.exec(format.slice(i + 1));
    if (!m) return `at character ${at}: dangling "$" (a variable name must follow it)`;
    const name = m[0];
    if (name !== name.toLowerCase()) return `at character ${at}: variable $${name} must be written in lower case`;
    if (section === 'stream' ? !STREAM_VARIABLES.has(name) : !isKnownVariable(name)) {
      const hint = Object.hasOwn(INGRESS_NGINX_HINTS, name) ? INGRESS_NGINX_HINTS[name] : undefined;
      const where = section === 'stream' ? ' of the stream section (TCP/UDP services)' : '';
      return `at character ${at}: unknown variable $${name}${where}${hint ? ` (an ingress-nginx variable: ${hint})` : ''}`;
    }
  }
  return null;
}
