// ingress-nginx's external authentication (auth-url and its companions, and the ConfigMap's global-auth-*), parsed
// into plain data for the external-auth plugin's ingress-nginx mode (plugins/external_auth.lua). Nothing here is
// ever pasted into nginx.conf: URLs, header names and templates travel as data over the configuration socket, and
// every value is checked against a strict alphabet first, so a value that would have been an injection in
// ingress-nginx's template (";", "}", newlines, "#", quotes, "*_by_lua", NUL, unicode separators) is refused.
//
// Templates (auth-signin, auth-request-redirect, auth-cache-key) are text with nginx variables; the variables are
// an allowlist read at request time by Lua, never a way into nginx's own variable machinery.
import { isIP } from 'node:net';
import { z } from 'zod';
import { isKnownVariable } from '../values/nginx-variables.ts';

const LABEL = '[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?';
const DNS_RE = new RegExp(`^${LABEL}(\\.${LABEL})*$`);
/** A Service by its cluster DNS name: <service>.<namespace>.svc[.cluster.local]. */
const SERVICE_RE = new RegExp(`^(${LABEL})\\.(${LABEL})\\.svc(\\.cluster\\.local)?$`);

/** Characters a URL path or query may hold here: RFC 3986 minus what nginx or a header would treat specially. */
const URI_CHARS = /^[A-Za-z0-9\-._~!&*+,=:@/%?]*$/;
const PCT_OK = (s: string) => !/%(?![0-9A-Fa-f]{2})/.test(s);

export const AUTH_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE'] as const;

/** Where the auth subrequest goes. */
export type AuthTarget =
  /** A Service of the cluster, through Portico's balancer to its endpoints. */
  | { kind: 'service'; namespace: string; service: string; port: number }
  /** Any other host: resolved by Portico's resolver, addresses no tenant may reach refused (as ExternalName). */
  | { kind: 'host'; host: string; port: number }
  /** An IP literal (checked against the same address filter by the translation). */
  | { kind: 'ip'; address: string; port: number }
  /**
   * The request's own host ($host, $http_host, $best_http_host): "this host, as Portico routes it". Never resolved:
   * the data plane sends the subrequest to the backend of the route the host serves the auth path with.
   */
  | { kind: 'own-host' };

export interface AuthUrl {
  /** As given (for messages). */
  url: string;
  scheme: 'http' | 'https';
  /**
   * The URL's host name (lower-case; an IPv6 literal without brackets): the Host header and TLS server name; ""
   * for the request's own host (the request's Host is sent).
   */
  host: string;
  port: number;
  /** Path and query sent to the auth service (as written, "${name}" as "$name", when it has variables). */
  uri: string;
  /** The path and query with variables (filled from the request by the data plane); absent when it has none. */
  uriParts?: TemplatePart[];
  target: AuthTarget;
}

/** Request-time text: literal strings and allowlisted variables ({ v: name }). */
export type TemplatePart = string | { v: string };

function fail(ctx: z.RefinementCtx, message: string): never {
  ctx.addIssue({ code: 'custom', message });
  return z.NEVER as never;
}

/** No control characters, no non-ASCII (unicode separators, NUL), nothing longer than 2048. */
function plainAscii(v: string): string | null {
  if (v.length > 2048) return 'longer than 2048 characters';
  // eslint-disable-next-line no-control-regex
  if (/[^\x21-\x7e]/.test(v)) return 'may only contain printable ASCII without spaces (no control characters, newlines or unicode)';
  return null;
}

/** Parses an absolute http(s) URL strictly; `null` and a message when it is not one Portico accepts. */
export function parseAuthUrl(raw: string): { ok: true; url: AuthUrl } | { ok: false; error: string } {
  const v = raw.trim();
  const bad = plainAscii(v);
  if (bad) return { ok: false, error: `auth URL ${bad}` };
  const m = /^(https?):\/\/([^/?#]*)([^#]*)$/i.exec(v);
  if (!m) return { ok: false, error: 'must be an absolute http:// or https:// URL without a fragment' };
  const scheme = (m[1] as string).toLowerCase() as 'http' | 'https';
  const authority = m[2] as string;
  let rest = m[3] as string;
  if (authority.includes('@')) return { ok: false, error: 'user info (user:password@) is not allowed in the URL' };
  if (rest === '') rest = '/';
  if (rest.startsWith('?')) rest = `/${rest}`;
  if (!rest.startsWith('/')) return { ok: false, error: 'the path must start with "/"' };
  const parts = authUriParts(rest);
  if ('error' in parts) return { ok: false, error: parts.error };
  if (OWN_HOST.test(authority)) {
    // The path picks the route of the request's own host: literal, plain and normalized (what the router matches).
    const path = rest.split('?')[0] as string;
    if (!OWN_PATH.test(path)) return { ok: false, error: 'on the request\'s own host ($host) the auth URL\'s path must be literal (variables only in the query), without "%", "//", "." or ".." segments' };
    const uri = rest.replace(/\$\{([a-z_][a-z0-9_]*)\}/g, '$$$1');
    return { ok: true, url: { url: v, scheme, host: '', port: scheme === 'https' ? 443 : 80, uri, ...(parts.parts ? { uriParts: parts.parts } : {}), target: { kind: 'own-host' } } };
  }
  if (authority.includes('$')) return { ok: false, error: 'the only nginx variables the auth URL\'s host may be are $host, $http_host and $best_http_host (the request\'s own host, without a port)' };
  let host: string;
  let portText: string | undefined;
  const v6 = /^\[([0-9A-Fa-f:.]+)\](?::(\d{1,5}))?$/.exec(authority);
  if (v6) {
    host = (v6[1] as string).toLowerCase();
    portText = v6[2];
    if (isIP(host) !== 6) return { ok: false, error: `"[${host}]" is not an IPv6 address` };
  } else {
    const hp = /^([A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(authority);
    if (!hp) return { ok: false, error: 'the host must be a DNS name or an IP address, with an optional :port' };
    host = (hp[1] as string).toLowerCase().replace(/\.$/, '');
    portText = hp[2];
    if (isIP(host) !== 4 && (host.length > 253 || !DNS_RE.test(host))) return { ok: false, error: `"${host}" is not a valid DNS name` };
  }
  const port = portText !== undefined ? Number(portText) : scheme === 'https' ? 443 : 80;
  if (!Number.isInteger(port) || port < 1 || port > 65535) return { ok: false, error: 'the port must be 1-65535' };
  let target: AuthTarget;
  const svc = SERVICE_RE.exec(host);
  if (isIP(host)) target = { kind: 'ip', address: host, port };
  else if (svc) target = { kind: 'service', service: svc[1] as string, namespace: svc[3] as string, port };
  else target = { kind: 'host', host, port };
  const uri = rest.replace(/\$\{([a-z_][a-z0-9_]*)\}/g, '$$$1');
  return { ok: true, url: { url: v, scheme, host, port, uri, ...(parts.parts ? { uriParts: parts.parts } : {}), target } };
}

/** The request's own host as an auth URL's authority (ingress-nginx's documented oauth2-proxy example). */
const OWN_HOST = /^\$(\{host\}|host|\{http_host\}|http_host|\{best_http_host\}|best_http_host)$/;
/** A literal path: no "%", no "//", no "." or ".." segment (the router matches it as it is). */
const OWN_PATH = /^(?!.*\/\/)(?!.*\/\.\.?(\/|$))\/[A-Za-z0-9\-._~!&*+,=:@/]*$/;

/**
 * Variables the auth URL's path and query may hold (ingress-nginx allows any nginx variable there): the request's
 * URL, method, client address, query arguments, headers and cookies. Filled in by the data plane, percent-encoded.
 */
const URL_VARS = new Set(['scheme', 'pass_access_scheme', 'host', 'http_host', 'best_http_host', 'server_name', 'request_uri', 'escaped_request_uri', 'uri', 'args', 'query_string', 'is_args', 'request_method', 'remote_addr']);
const urlVar = (n: string) => URL_VARS.has(n) || (/^(arg|http|cookie)_[a-z0-9_]+$/.test(n) && n.length <= 70);

/** The path and query of an auth URL: literal URL characters and %XX escapes; `parts` only when it has variables. */
function authUriParts(rest: string): { parts?: TemplatePart[] } | { error: string } {
  const chars = 'the path and query may only contain letters, digits, - . _ ~ ! & * + , = : @ / ? and %XX escapes';
  if (!rest.includes('$')) return URI_CHARS.test(rest) && PCT_OK(rest) ? {} : { error: chars };
  const t = template(rest, urlVar, URL_TEXT, 'the auth URL');
  if ('error' in t) return t;
  if (!t.parts.every((p) => typeof p !== 'string' || PCT_OK(p))) return { error: chars };
  return { parts: t.parts };
}

export const authUrlSchema = z.string().transform((v, ctx) => {
  const r = parseAuthUrl(v);
  return r.ok ? r.url : fail(ctx, r.error);
});

export const authMethodSchema = z
  .string()
  .trim()
  .refine((m) => (AUTH_METHODS as readonly string[]).includes(m), { message: `expected one of ${AUTH_METHODS.join(', ')}` });

/** Header names as ingress-nginx accepts them ([A-Za-z0-9_-]), lower-cased; framing headers and Host refused. */
const FRAMING = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'proxy-connection', 'host', 'expect']);
export const authHeaderListSchema = z.string().transform((v, ctx) => {
  const out: string[] = [];
  for (const part of v.split(',')) {
    const h = part.trim();
    if (!h) continue;
    if (!/^[A-Za-z0-9_-]{1,128}$/.test(h)) return fail(ctx, `${JSON.stringify(h.slice(0, 40))} is not a header name (letters, digits, "-" and "_")`);
    const l = h.toLowerCase();
    if (FRAMING.has(l)) return fail(ctx, `${h} cannot be copied onto the request`);
    if (!out.includes(l)) out.push(l);
  }
  if (out.length > 64) return fail(ctx, 'at most 64 headers');
  return out;
});

/** Variables a template may read, by where it is used. */
const REDIRECT_VARS = new Set(['scheme', 'pass_access_scheme', 'host', 'http_host', 'best_http_host', 'server_name', 'request_uri', 'escaped_request_uri', 'uri']);
const KEY_VARS = new Set(['remote_user', 'remote_addr', 'host', 'http_host', 'server_name', 'request_uri', 'uri', 'scheme', 'request_method']);
const KEY_PREFIXES = ['http_', 'cookie_', 'arg_'];

/**
 * Text with $name / ${name} variables from an allowlist; literal text from `literal` only. Returns the parts (the
 * variable names normalized: server_name → host, best_http_host → http_host, pass_access_scheme → scheme).
 */
function template(v: string, allowed: (name: string) => boolean, literal: RegExp, what: string): { parts: TemplatePart[] } | { error: string } {
  const parts: TemplatePart[] = [];
  let text = '';
  let i = 0;
  while (i < v.length) {
    const c = v[i] as string;
    if (c !== '$') {
      text += c;
      i++;
      continue;
    }
    const m = /^\$(?:\{([a-z_][a-z0-9_]{0,63})\}|([a-z_][a-z0-9_]{0,63}))/.exec(v.slice(i));
    if (!m) return { error: `a "$" must start an nginx variable name in ${what}` };
    const name = (m[1] ?? m[2]) as string;
    if (!allowed(name)) return { error: `variable $${name} is not allowed in ${what}` };
    if (text) parts.push(text);
    text = '';
    const norm = name === 'server_name' ? 'host' : name === 'best_http_host' ? 'http_host' : name === 'pass_access_scheme' ? 'scheme' : name;
    parts.push({ v: norm });
    i += m[0].length;
  }
  if (text) parts.push(text);
  for (const p of parts) if (typeof p === 'string' && !literal.test(p)) return { error: `${what} may only contain ${literal === URL_TEXT ? 'URL characters (letters, digits, - . _ ~ ! & * + , = : @ / ? %)' : 'letters, digits and - . _ : / = @ ,'} besides variables` };
  return { parts };
}
const URL_TEXT = /^[A-Za-z0-9\-._~!&*+,=:@/%?]*$/;
/** Literal text of a header value: printable ASCII (no control characters: nothing can start another header). */
const HEADER_TEXT = /^[\x20-\x7e]*$/;

/**
 * A value of auth-proxy-set-headers (a header sent to the auth service): literal printable text and any variable
 * nginx defines (read by the plugin at request time, control characters percent-encoded), as ingress-nginx's
 * proxy_set_header allows.
 */
export function authHeaderValue(raw: string): { parts: TemplatePart[] } | { error: string } {
  if (raw.length > 1024) return { error: 'longer than 1024 characters' };
  if (raw === '') return { parts: [''] };
  return template(raw, (n) => isKnownVariable(n), HEADER_TEXT, 'an auth-proxy-set-headers value');
}
const KEY_TEXT = /^[A-Za-z0-9\-._:/=@,]*$/;

/** A parsed auth-signin: its parts, and its query as written (variables included), null without "?". */
export interface Signin {
  parts: TemplatePart[];
  query: string | null;
}

/**
 * The sign-in redirect's Location as ingress-nginx builds it: the URL, plus `<param>=<the request's own URL>`
 * unless the query already sets that parameter (then the URL is used as it is). `{ v: 'rd' }` is that URL
 * (scheme://host + the escaped request URI), filled in by Lua.
 */
export function signinLocation(s: Signin, param: string): TemplatePart[] {
  const params = (s.query ?? '').split('&').filter(Boolean);
  if (params.some((p) => p.startsWith(`${param}=`) && p.length > param.length + 1)) return s.parts;
  const sep = !params.length ? (s.query === null ? '?' : s.query === '' ? '' : '&') : '&';
  return [...s.parts, `${sep}${param}=`, { v: 'rd' }];
}

/**
 * auth-signin: an absolute http(s) URL whose host is literal or the request's own ($host, $http_host), or a path on
 * the request's own host ("/oauth2/start"). Variables from the allowlist only after the host; no user info, no
 * fragment. Never an open redirect: the host is fixed by the configuration or is the request's own.
 */
export const signinSchema = z.string().transform((raw, ctx) => {
  const v = raw.trim();
  const bad = plainAscii(v);
  if (bad) return fail(ctx, `sign-in URL ${bad}`);
  let prefix: TemplatePart[];
  let rest: string;
  const m = /^(https?):\/\/([^/?#]*)([^#]*)$/i.exec(v);
  if (m) {
    const authority = m[2] as string;
    rest = m[3] as string;
    if (authority.includes('@')) return fail(ctx, 'user info (user:password@) is not allowed in the sign-in URL');
    const scheme = `${(m[1] as string).toLowerCase()}://`;
    const own = /^\$(\{host\}|host|\{http_host\}|http_host|\{best_http_host\}|best_http_host)$/.exec(authority);
    if (own) prefix = [scheme, { v: own[1]!.replace(/[{}]/g, '') === 'host' ? 'host' : 'http_host' }];
    else {
      const hp = /^([a-z0-9.-]+|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/i.exec(authority);
      const h = hp?.[1]?.toLowerCase();
      const ok = !!hp && (isIP(h!) === 4 || (h!.startsWith('[') && isIP(h!.slice(1, -1)) === 6) || (h!.length <= 253 && DNS_RE.test(h!)));
      if (!ok) return fail(ctx, 'the sign-in URL\'s host must be a DNS name or IP address (or $host / $http_host: the request\'s own), with an optional :port');
      if (hp?.[2] !== undefined && (Number(hp[2]) < 1 || Number(hp[2]) > 65535)) return fail(ctx, 'the port must be 1-65535');
      prefix = [`${scheme}${authority.toLowerCase()}`];
    }
    if (rest === '') rest = '/';
    if (rest.startsWith('?')) rest = `/${rest}`;
    if (!rest.startsWith('/')) return fail(ctx, 'the path must start with "/"');
  } else if (v.startsWith('/') && !v.startsWith('//') && !v.includes('#')) {
    prefix = [];
    rest = v;
  } else return fail(ctx, 'must be an absolute http:// or https:// URL (or a path on the request\'s own host) without a fragment');
  const t = template(rest, (n) => REDIRECT_VARS.has(n), URL_TEXT, 'the sign-in URL');
  if ('error' in t) return fail(ctx, t.error);
  if (!PCT_OK(rest.replace(/\$\{?[a-z_]+\}?/g, ''))) return fail(ctx, 'a "%" must start a %XX escape');
  const q = rest.indexOf('?');
  return { parts: [...prefix, ...t.parts], query: q < 0 ? null : rest.slice(q + 1) };
});

export const redirectParamSchema = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9_.~-]{1,64}$/, 'expected a query parameter name (letters, digits, - . _ ~)');

/** auth-request-redirect: the X-Auth-Request-Redirect value, a URL or path, with the sign-in variables. */
export const requestRedirectSchema = z.string().transform((raw, ctx) => {
  const v = raw.trim();
  const bad = plainAscii(v);
  if (bad) return fail(ctx, bad);
  const t = template(v, (n) => REDIRECT_VARS.has(n), URL_TEXT, 'auth-request-redirect');
  return 'error' in t ? fail(ctx, t.error) : t.parts;
});

/** Variables that can tell one client's credentials from another's: a cache key needs one of them. */
const CREDENTIAL = (name: string) => ['remote_user', 'remote_addr', 'request_uri'].includes(name) || KEY_PREFIXES.some((p) => name.startsWith(p));

/**
 * auth-cache-key: text and variables (the request's credentials: $http_authorization, $cookie_<name>,
 * $remote_user...). At least one variable that differs between clients: a constant key (or one only of $host,
 * $scheme...) would hand the first caller's answer to everybody.
 */
export const cacheKeySchema = z.string().transform((raw, ctx) => {
  const v = raw.trim();
  const bad = plainAscii(v);
  if (bad) return fail(ctx, bad);
  const t = template(v, (n) => KEY_VARS.has(n) || KEY_PREFIXES.some((p) => n.startsWith(p) && n.length > p.length), KEY_TEXT, 'auth-cache-key');
  if ('error' in t) return fail(ctx, t.error);
  if (!t.parts.some((p) => typeof p !== 'string' && CREDENTIAL(p.v))) return fail(ctx, 'the cache key must contain at least one variable of the client\'s request ($http_*, $cookie_*, $arg_*, $remote_user, $remote_addr or $request_uri): otherwise one answer would be shared between every client');
  return t.parts;
});

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, M: 2_592_000_000, y: 31_536_000_000 };
/** nginx time ("5m", "1h30m", "500ms") in seconds, or null. */
export function nginxSeconds(t: string): number | null {
  if (!/^(\d{1,9}(ms|s|m|h|d|w|M|y))+$/.test(t)) return null;
  let ms = 0;
  for (const m of t.matchAll(/(\d+)(ms|s|m|h|d|w|M|y)/g)) ms += Number(m[1]) * (UNIT_MS[m[2] as string] as number);
  return ms / 1000;
}

/**
 * auth-cache-duration ("200 202 401 5m", several comma-separated; proxy_cache_valid's syntax: status codes or
 * "any", then one time; no code = 200 301 302) → seconds per status ("any" for the rest). Default 200 202 401 5m.
 */
export const cacheDurationSchema = z.string().transform((raw, ctx) => {
  const ttl: Record<string, number> = {};
  for (const item of raw.split(',')) {
    const words = item.trim().split(/\s+/).filter(Boolean);
    if (!words.length) continue;
    const time = words.pop() as string;
    const secs = nginxSeconds(time);
    if (secs === null || secs <= 0 || secs > 31_536_000) return fail(ctx, `${JSON.stringify(item.trim().slice(0, 40))}: expected status codes (or "any") then a time such as 5m or 1h (at most 1y)`);
    const codes = words.length ? words : ['200', '301', '302'];
    for (const c of codes) {
      if (c !== 'any' && !/^[1-5]\d\d$/.test(c)) return fail(ctx, `${JSON.stringify(c.slice(0, 20))} is not a status code or "any"`);
      if (ttl[c] === undefined) ttl[c] = secs;
    }
  }
  if (!Object.keys(ttl).length) return fail(ctx, 'no duration given');
  return ttl;
});
export const DEFAULT_CACHE_TTL: Record<string, number> = { '200': 300, '202': 300, '401': 300 };
