// Proxying to the backend: timeouts, body and buffer sizes, buffering, the HTTP version and Connection header,
// Set-Cookie and Location rewrites, retries (proxy-next-upstream*). Directive-profile settings: the translation
// (translate/profiles.ts profileOf) turns them into a named location in nginx.conf.
import { z } from 'zod';
import { refused, row } from '../group.ts';
import { intSchema, secondsSchema, sizeSchema } from '../../values/safe.ts';

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

export const rows = {
  'proxy-body-size': row(sizeSchema, 'location', 'medium', 'Maximum request body size (client_max_body_size), e.g. 8m; 0 = unlimited'),
  'proxy-connect-timeout': row(secondsSchema, 'location', 'low', 'Upstream connect timeout in seconds'),
  'proxy-read-timeout': row(secondsSchema, 'location', 'low', 'Upstream read timeout in seconds'),
  'proxy-send-timeout': row(secondsSchema, 'location', 'low', 'Upstream send timeout in seconds'),
  'client-body-buffer-size': row(boundedSizeSchema(512, 64 * 1024 * 1024), 'location', 'low', 'Buffer for reading the request body (client_body_buffer_size, 512 bytes to 64m); a larger body goes to a temporary file. Default: ConfigMap client-body-buffer-size (8k)'),
  'connection-proxy-header': row(connectionHeaderSchema, 'location', 'low', 'Connection header sent to the backend instead of the default ("upgrade" for WebSocket requests, else empty), e.g. keep-alive'),
  'proxy-buffering': row(onOffAnnotationSchema, 'location', 'low', '"on": buffer the backend\'s response (proxy_buffering); "off" passes it on as it arrives. Default: ConfigMap proxy-buffering (off)'),
  'proxy-buffer-size': row(boundedSizeSchema(1024, 16 * 1024 * 1024), 'location', 'low', 'Buffer for the first part of the response (its headers), and the size of each of proxy-buffers-number buffers (1k to 16m). Default: ConfigMap proxy-buffer-size (4k)'),
  'proxy-buffers-number': row(intSchema(4, 1024), 'location', 'low', 'Number of response buffers (proxy_buffers, 4 to 1024). Default: ConfigMap proxy-buffers-number (4)', { difference: 'at least 4: fewer make nginx refuse the configuration with the default busy-buffers size' }),
  'proxy-busy-buffers-size': refused('location', 'low', 'not applied per Ingress: set the ConfigMap\'s proxy-busy-buffers-size (nginx refuses a busy size that does not fit a path\'s buffers, so a per-Ingress value needs checking against them first)'),
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
};
