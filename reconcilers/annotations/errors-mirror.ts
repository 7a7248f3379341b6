// ingress-nginx's custom error pages (custom-http-errors, default-backend, disable-proxy-intercept-errors, and the
// ConfigMap's custom-http-errors) and request mirroring (mirror-target, mirror-host, mirror-request-body), parsed
// into plain data. Nothing here is pasted into nginx.conf as text: error codes are numbers (rendered through the
// integer helper), the mirror's target travels as route data over the configuration socket, and each value passes a
// closed alphabet first, so ";", "}", newlines, "#", quotes, "$" (but the one $request_uri allowed), NUL and unicode
// separators are refused.
import { z } from 'zod';
import { parseAuthUrl, type AuthTarget } from './auth-url.ts';

function fail(ctx: z.RefinementCtx, message: string): never {
  ctx.addIssue({ code: 'custom', message });
  return z.NEVER as never;
}

/**
 * custom-http-errors (annotation and ConfigMap key): comma-separated HTTP status codes 400-599, as ingress-nginx
 * documents them. Returned sorted and without duplicates, so equal sets give equal directive profiles.
 */
export const httpErrorCodesSchema = z.string().transform((raw, ctx) => {
  const v = raw.trim();
  if (v === '') return [] as number[];
  if (!/^\d{3}(\s*,\s*\d{3})*\s*,?$/.test(v)) return fail(ctx, 'expected comma-separated HTTP status codes such as "404,503"');
  const codes = [...new Set(v.split(',').map((c) => c.trim()).filter(Boolean).map(Number))].sort((a, b) => a - b);
  const bad = codes.find((c) => c < 400 || c > 599);
  if (bad !== undefined) return fail(ctx, `${bad} is not an error status: each code must be between 400 and 599`);
  return codes;
});

/** A DNS name (mirror-host): lower-case labels, at most 253 characters; no port, no wildcard, nothing else. */
const LABEL = '[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?';
const DNS_NAME = new RegExp(`^${LABEL}(\\.${LABEL})*$`);
export const dnsNameSchema = z
  .string()
  .trim()
  .toLowerCase()
  .transform((v) => v.replace(/\.$/, ''))
  .refine((v) => v.length <= 253 && DNS_NAME.test(v), { message: 'expected a DNS name such as shadow.example.com (letters, digits, "-" and ".")' });

/** Where mirrored requests go: mirror-target parsed. */
export interface MirrorTarget {
  /** As given (for messages). */
  url: string;
  scheme: 'http' | 'https';
  /** The URL's host (lower-case; an IPv6 literal without brackets): the default Host header and the TLS server name. */
  host: string;
  port: number;
  /** The request URI of the mirrored request: the client's own ($request_uri), or this literal path (query appended). */
  uri: { requestUri: true } | { path: string };
  target: AuthTarget;
}

const REQUEST_URI = /\$(\{request_uri\}|request_uri)$/;

/**
 * mirror-target: an absolute http(s) URL — a host (a Service's cluster DNS name goes to its endpoints; another name
 * or an IP literal is checked as auth-url's are), an optional port, and either a literal path (no query) or
 * `$request_uri` as the whole path ("https://shadow.example.com$request_uri", as ingress-nginx documents it).
 * Any other variable, user info, a query, a fragment or a character outside a URL path is refused.
 */
export const mirrorTargetSchema = z.string().transform((raw, ctx): MirrorTarget => {
  const v = raw.trim();
  const m = REQUEST_URI.exec(v);
  const base = m ? v.slice(0, m.index) : v;
  if (m && !/^https?:\/\/[^/?#]*$/i.test(base)) return fail(ctx, '$request_uri must be the whole path, right after the host and port (e.g. https://shadow.example.com$request_uri)');
  if (base.includes('$')) return fail(ctx, 'the only nginx variable allowed in mirror-target is $request_uri, as the whole path');
  const p = parseAuthUrl(base);
  if (!p.ok) return fail(ctx, p.error.replace(/auth URL|the auth URL/g, 'mirror-target'));
  const u = p.url;
  if (u.uri.includes('?')) return fail(ctx, 'mirror-target may not carry a query: the mirrored request keeps the client\'s query');
  return { url: v, scheme: u.scheme, host: u.host, port: u.port, uri: m ? { requestUri: true } : { path: u.uri }, target: u.target };
});

/** default-backend: the name of a Service of the Ingress's own namespace (ingress-nginx uses its first port). */
export const defaultBackendSchema = z
  .string()
  .trim()
  .regex(/^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/, 'expected the name of a Service in the Ingress\'s namespace (a DNS-1035 label: lower-case letters, digits and "-")');
