// Escaping helpers for nginx.conf. Values were already validated by the zod schemas in values/safe.ts; these
// helpers are the second line: they refuse anything that could break out of its token, and quote the rest.

import { isIP } from 'node:net';

export class UnsafeValueError extends Error {}

const CONTROL = /[\u0000-\u001f\u007f]/;

/** A double-quoted nginx string with no variables: rejects `$`, control characters; escapes `"` and `\`. */
export function quote(v: unknown): string {
  if (typeof v !== 'string') throw new UnsafeValueError(`expected a string, got ${typeof v}`);
  if (CONTROL.test(v)) throw new UnsafeValueError(`control character in ${JSON.stringify(v)}`);
  if (v.includes('$')) throw new UnsafeValueError(`"$" is not allowed in ${JSON.stringify(v)}`);
  return `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** A quoted regex for `location ~*`: `$` is allowed only as the final anchor. */
export function quoteRegex(v: unknown): string {
  if (typeof v !== 'string') throw new UnsafeValueError(`expected a string, got ${typeof v}`);
  if (CONTROL.test(v)) throw new UnsafeValueError(`control character in regex ${JSON.stringify(v)}`);
  const body = v.endsWith('$') ? v.slice(0, -1) : v;
  if (body.includes('$')) throw new UnsafeValueError(`"$" may only end a regex path: ${JSON.stringify(v)}`);
  if (v.includes('"')) throw new UnsafeValueError(`quote in regex ${JSON.stringify(v)}`);
  return `"${v}"`;
}

/**
 * A single-quoted log format: `$variables`, double quotes and braces (JSON formats) allowed; single quotes,
 * backslashes (nginx's escape character inside quotes), ";", "${" and control or non-ASCII characters rejected.
 */
export function quoteFormat(v: unknown): string {
  if (typeof v !== 'string') throw new UnsafeValueError(`expected a string, got ${typeof v}`);
  if (!/^[\x20-\x7e]*$/.test(v) || /['\\;]/.test(v) || v.includes('${')) throw new UnsafeValueError(`unsafe character in log format ${JSON.stringify(v)}`);
  return `'${v}'`;
}

const ERROR_LOG_LEVELS = new Set(['debug', 'info', 'notice', 'warn', 'error', 'crit', 'alert', 'emerg']);
/** An error_log severity. */
export function errorLogLevel(v: unknown): string {
  if (typeof v !== 'string' || !ERROR_LOG_LEVELS.has(v)) throw new UnsafeValueError(`invalid error_log level ${JSON.stringify(v)}`);
  return v;
}

/** access_log parameters (access-log-params): buffer=<size>, flush=<time>, gzip[=<level>], space-separated. */
export function accessLogParams(v: unknown): string {
  if (typeof v !== 'string' || !v.split(' ').every((t) => /^(buffer=\d{1,9}[kKmM]?|flush=\d{1,6}(ms|s|m|h)?|gzip(=[1-9])?)$/.test(t))) throw new UnsafeValueError(`invalid access_log parameters ${JSON.stringify(v)}`);
  return v;
}

/** A Lua string literal (for init_by_lua): only [A-Za-z0-9_-] accepted. */
export function luaString(v: unknown): string {
  if (typeof v !== 'string' || !/^[A-Za-z0-9_.-]*$/.test(v)) throw new UnsafeValueError(`unsafe Lua string ${JSON.stringify(v)}`);
  return `"${v}"`;
}

/**
 * Text as a Lua string literal (the collector address, a span name template): letters, digits, space and
 * _ . : / - $ only, so no quote, backslash, brace or line break can reach Lua or nginx's block parser.
 */
export function luaText(v: unknown): string {
  if (typeof v !== 'string' || v.length > 256 || !/^[A-Za-z0-9_.:/ $-]*$/.test(v)) throw new UnsafeValueError(`unsafe Lua text ${JSON.stringify(v)}`);
  return `"${v}"`;
}

/** A finite number as a Lua literal (histogram bounds): digits, one dot, an exponent; nothing else. */
export function luaNumber(v: unknown): string {
  const s = typeof v === 'number' && Number.isFinite(v) ? String(v) : '';
  if (!/^-?\d+(\.\d+)?(e[+-]?\d+)?$/.test(s)) throw new UnsafeValueError(`invalid number ${JSON.stringify(v)}`);
  return s;
}

/** A directive profile's name, used in a named location (`@portico_<name>`). */
export function profileName(v: unknown): string {
  if (typeof v !== 'string' || !/^p_[a-z0-9]{1,40}$/.test(v)) throw new UnsafeValueError(`invalid profile name ${JSON.stringify(v)}`);
  return v;
}

/** The installation's loop-detection id: exactly 16 lower-case hex digits (self.ts loopIdOf). */
export function loopId(v: unknown): string {
  if (typeof v !== 'string' || !/^[0-9a-f]{16}$/.test(v)) throw new UnsafeValueError(`invalid loop id ${JSON.stringify(v)}: expected 16 hex digits`);
  return v;
}

/** An upstream block's name: portico_ and lower-case letters, digits and "_" (made by render.ts, never by a user). */
export function upstreamName(v: unknown): string {
  if (typeof v !== 'string' || !/^portico_[a-z0-9_]{1,60}$/.test(v)) throw new UnsafeValueError(`invalid upstream name ${JSON.stringify(v)}`);
  return v;
}

const NEXT_UPSTREAM = new Set(['error', 'timeout', 'invalid_header', 'http_500', 'http_502', 'http_503', 'http_504', 'http_403', 'http_404', 'http_429', 'non_idempotent', 'off']);
/** proxy_next_upstream conditions: space-separated tokens from nginx's list, nothing else. */
export function nextUpstream(v: unknown): string {
  if (typeof v !== 'string' || !v.split(' ').every((t) => NEXT_UPSTREAM.has(t))) throw new UnsafeValueError(`invalid proxy_next_upstream ${JSON.stringify(v)}`);
  return v;
}

export function integer(v: unknown): string {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new UnsafeValueError(`expected a non-negative integer, got ${JSON.stringify(v)}`);
  return String(v);
}

export function size(v: unknown): string {
  if (typeof v !== 'string' || !/^\d{1,9}[kKmMgG]?$/.test(v)) throw new UnsafeValueError(`invalid size ${JSON.stringify(v)}`);
  return v;
}

const LABEL = '[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?';
const HOST = new RegExp(`^(\\*\\.)?${LABEL}(\\.${LABEL})*$`);
export function host(v: unknown): string {
  if (typeof v !== 'string' || v.length > 253 || !HOST.test(v)) throw new UnsafeValueError(`invalid host ${JSON.stringify(v)}`);
  return v;
}

/**
 * A name for portico_upstream_ssl_verify_names, quoted: "DNS:" and a lower-case DNS name (a leading "*." allowed),
 * or "URI:" and an absolute URI (<scheme>://...) of printable ASCII without spaces, quotes, backslashes or "$".
 */
export function sslVerifyName(v: unknown): string {
  if (typeof v !== 'string') throw new UnsafeValueError(`expected a subject alternative name, got ${typeof v}`);
  const dns = /^DNS:((?:\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$/.exec(v);
  const uri = /^URI:([A-Za-z][A-Za-z0-9+.-]*:\/\/[\x21-\x7e]*)$/.exec(v);
  if (dns && dns[1]!.length <= 253) return quote(v);
  if (uri && uri[1]!.length <= 2048 && !/["'\\$]/.test(uri[1]!)) return quote(v);
  throw new UnsafeValueError(`invalid subject alternative name ${JSON.stringify(v)}: expected DNS:<name> or URI:<absolute URI>`);
}

export function listenAddress(address: unknown, port: unknown): string {
  if (typeof address !== 'string' || !/^([0-9.]+|[0-9a-fA-F:]+)$/.test(address)) throw new UnsafeValueError(`invalid listen address ${JSON.stringify(address)}`);
  const p = integer(port);
  if (Number(p) < 1 || Number(p) > 65535) throw new UnsafeValueError(`invalid port ${p}`);
  return address.includes(':') ? `[${address}]:${p}` : `${address}:${p}`;
}

export function workers(v: unknown): string {
  if (v === 'auto') return 'auto';
  return integer(v);
}

/**
 * server_name for a host. A wildcard "*.example.com" must match exactly one label (Ingress semantics), while
 * nginx's own "*.example.com" matches any depth, so wildcards become an anchored regex.
 */
export function serverName(v: unknown): string {
  const h = host(v);
  if (!h.startsWith('*.')) return h;
  return `"~^[^.]+${h.slice(1).replace(/\./g, '\\.')}$"`;
}

/** A trusted-proxy CIDR (or single address) for set_real_ip_from / geo: IPv4 or IPv6, with an optional prefix. */
export function cidr(v: unknown): string {
  if (typeof v !== 'string') throw new UnsafeValueError(`expected a CIDR, got ${typeof v}`);
  const m = /^([0-9.]+|[0-9a-fA-F:.]+)(?:\/(\d{1,3}))?$/.exec(v);
  const family = m ? isIP(m[1] as string) : 0;
  const bits = m?.[2] === undefined ? undefined : Number(m[2]);
  if (!family || (bits !== undefined && bits > (family === 4 ? 32 : 128))) throw new UnsafeValueError(`invalid CIDR ${JSON.stringify(v)}`);
  return v;
}

/** A unix-socket listen address: an absolute path of safe characters short enough for sun_path (108 bytes). */
export function unixListen(v: unknown): string {
  return `unix:${socketPath(v)}`;
}

/** A Lua string literal holding a socket peer for the balancer ("unix:/path"). */
export function luaPeer(v: unknown): string {
  if (typeof v !== 'string' || !v.startsWith('unix:')) throw new UnsafeValueError(`unsafe Lua peer ${JSON.stringify(v)}`);
  return `"unix:${socketPath(v.slice(5))}"`;
}

function socketPath(v: unknown): string {
  if (typeof v !== 'string' || !/^\/[A-Za-z0-9._/-]+$/.test(v)) throw new UnsafeValueError(`unsafe socket path ${JSON.stringify(v)}`);
  if (Buffer.byteLength(v) > 107) throw new UnsafeValueError(`socket path longer than 107 bytes (use a shorter --runtime-dir): ${v}`);
  return v;
}

/** "on" or "off" for a boolean (nothing else is accepted). */
export function onOff(v: unknown): string {
  if (typeof v !== 'boolean') throw new UnsafeValueError(`expected a boolean, got ${JSON.stringify(v)}`);
  return v ? 'on' : 'off';
}

/** A header name (real_ip_header, proxy_set_header) or the keyword proxy_protocol: [A-Za-z0-9-], at most 64. */
export function headerToken(v: unknown): string {
  if (v === 'proxy_protocol') return v;
  if (typeof v !== 'string' || !/^[A-Za-z][A-Za-z0-9-]{0,63}$/.test(v)) throw new UnsafeValueError(`invalid header name ${JSON.stringify(v)}`);
  return v;
}

/** The nginx variable of a request header: "X-Forwarded-For" → $http_x_forwarded_for. */
export function headerVariable(v: unknown): string {
  const h = headerToken(v);
  if (h === 'proxy_protocol') throw new UnsafeValueError('proxy_protocol is not a header');
  return `$http_${h.toLowerCase().replace(/-/g, '_')}`;
}

/**
 * A header value with variables (add-headers, proxy-set-headers), double-quoted: printable ASCII without backslashes,
 * every "$" starting a braced ${name} (so no text after it can extend the name); '"' escaped.
 */
export function headerValueQuoted(v: unknown): string {
  if (typeof v !== 'string' || v.length > 4096 || !/^[\x20-\x7e]*$/.test(v) || v.includes('\\')) throw new UnsafeValueError(`unsafe header value ${JSON.stringify(typeof v === 'string' ? v.slice(0, 100) : v)}`);
  if (/\$(?!\{[a-z0-9_]{1,64}\})/.test(v)) throw new UnsafeValueError(`"$" must start a braced variable in ${JSON.stringify(v.slice(0, 100))}`);
  return `"${v.replace(/"/g, '\\"')}"`;
}

/**
 * A FastCGI param (fastcgi_param's arguments): `NAME "value"`, then `if_not_empty` when asked. The name: letters,
 * digits, "_", "." and "-" (at most 64); the value, double-quoted: letters, digits, "_", ".", "/" and "-", and braced
 * variables `${name}` (lower-case letters, digits, "_"), at most 1,024 characters — no quote, backslash, space, ";",
 * brace or "$" outside a braced variable can pass (groups/fastcgi.ts validated the user's params already).
 */
export function fastcgiParam(v: unknown): string {
  const p = v as { name?: unknown; value?: unknown; ifNotEmpty?: unknown } | null;
  if (!p || typeof p.name !== 'string' || !/^[A-Za-z0-9._-]{1,64}$/.test(p.name)) throw new UnsafeValueError(`invalid FastCGI param name ${JSON.stringify(p?.name)}`);
  if (typeof p.value !== 'string' || p.value.length > 1024 || !/^([A-Za-z0-9._/-]|\$\{[a-z0-9_]{1,64}\})*$/.test(p.value)) throw new UnsafeValueError(`unsafe FastCGI param value ${JSON.stringify(typeof p.value === 'string' ? p.value.slice(0, 100) : p.value)}`);
  return `${p.name} "${p.value}"${p.ifNotEmpty === true ? ' if_not_empty' : ''}`;
}

/**
 * Space-separated unquoted tokens (ssl_protocols, ssl_ciphers, gzip_types, large_client_header_buffers, times):
 * letters, digits and . + * / : ! @ = _ - only, single spaces between them, at most 4096 characters. Nothing that
 * ends a directive, opens a block, a comment, a string or a variable can pass, nor the name of a Lua directive.
 */
export function words(v: unknown): string {
  if (typeof v !== 'string' || v.length > 4096 || !/^[A-Za-z0-9.+*/:!@=_-]+( [A-Za-z0-9.+*/:!@=_-]+)*$/.test(v) || /_by_lua/i.test(v)) {
    throw new UnsafeValueError(`unsafe words ${JSON.stringify(typeof v === 'string' ? v.slice(0, 100) : v)}`);
  }
  return v;
}

const MAP_KEYWORDS = new Set(['default', 'hostnames', 'include', 'volatile']);
/**
 * An nginx `map` source (block-user-agents, block-referers), quoted: an exact string (printable ASCII without quotes
 * or backslashes; map's own keywords — default, hostnames, include, volatile — escaped with "\\" so they match as
 * text), or "~" / "~*" and a regex (no quotes or control characters; each backslash doubled, since nginx's parser
 * halves them inside quotes and PCRE must see the regex as written).
 */
export function mapSource(v: unknown): string {
  const p = v as { match?: unknown; value?: unknown } | null;
  if (!p || typeof p.value !== 'string' || !p.value) throw new UnsafeValueError(`expected a map pattern, got ${JSON.stringify(v)}`);
  if (CONTROL.test(p.value) || p.value.includes('"')) throw new UnsafeValueError(`unsafe map source ${JSON.stringify(p.value)}`);
  if (p.match === 'exact') {
    if (!/^[\x20-\x7e]+$/.test(p.value) || /["'\\;{}#$]/.test(p.value) || p.value.startsWith('~')) throw new UnsafeValueError(`unsafe exact map source ${JSON.stringify(p.value)}`);
    return MAP_KEYWORDS.has(p.value.toLowerCase()) ? `"\\\\${p.value}"` : `"${p.value}"`;
  }
  if (p.match !== 'regex' && p.match !== 'iregex') throw new UnsafeValueError(`unknown map match ${JSON.stringify(p.match)}`);
  return `"${p.match === 'iregex' ? '~*' : '~'}${p.value.replace(/\\/g, '\\\\')}"`;
}

