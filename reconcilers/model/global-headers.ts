// ingress-nginx's add-headers and proxy-set-headers: each names a ConfigMap ("namespace/name") whose keys and values
// are headers — set on every response (add-headers), or on every request proxied to a backend (proxy-set-headers).
// ingress-nginx pastes them into nginx.conf as they are (more_set_headers / proxy_set_header); Portico checks each
// one: the name a letter, then letters, digits and "-" (at most 64: RFC 7230 token characters that need no quoting in
// nginx.conf), not a header that frames the message or that Portico sets itself; the value printable ASCII without
// backslashes (at most 1024 characters) whose "$" each starts a variable of the allowlist below. A header that fails is
// left out with a Warning naming it; the others apply. A ConfigMap that does not exist gives a Warning and no headers.
// The ConfigMap reconciler resolves them (reconcilers/kinds/configmap/) and the templates render them through the
// hdr / hval helpers. Changes to a named ConfigMap reload nginx.
import { z } from 'zod';
import type { GlobalHeader, GlobalHeaders } from '../config/types.ts';
import { isKnownVariable } from '../values/nginx-variables.ts';

export type { GlobalHeader, GlobalHeaders } from '../config/types.ts';

/** The ConfigMap fields: the two references as written, and what the reconciler resolved them to. */
export interface GlobalHeaderValues {
  addHeaders: string;
  proxySetHeaders: string;
  /** Resolved by the ConfigMap reconciler (globalHeadersOf); absent: none. */
  globalHeaders?: GlobalHeaders;
}

/** "namespace/name" of a ConfigMap (DNS-1123), or "" (none). */
const refSchema = z
  .string()
  .trim()
  .regex(/^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\/[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?$/, 'expected the namespace/name of a ConfigMap');

type Row<F extends 'addHeaders' | 'proxySetHeaders'> = { field: F; schema: z.ZodType<string, string>; default: string; description: string };
const row = <F extends 'addHeaders' | 'proxySetHeaders'>(field: F, description: string): Row<F> => ({ field, schema: refSchema, default: '', description });

const RULES =
  'each key a header name (a letter, then letters, digits and "-"; at most 64 headers), each value printable text without backslashes (at most 1024 characters) in which "$" starts an nginx variable (not Portico\'s own $portico_*, nor $request_body). A header that does not pass is left out with an InvalidConfiguration Warning naming it; a ConfigMap that does not exist gives a Warning and no headers. Only ConfigMaps of the namespaces Portico watches are read; changes to it apply with a reload';

export const GLOBAL_HEADER_KEYS = {
  'add-headers': row('addHeaders', `A ConfigMap ("namespace/name") whose keys and values are set as headers on every response, replacing a backend's header of the same name (add_header … always, proxy_hide_header): ${RULES}. Not allowed: the message's framing (Content-Length, Transfer-Encoding, Connection, Keep-Alive, Upgrade, TE, Trailer), Content-Type, Content-Encoding, Date, Server (server-tokens) and Strict-Transport-Security (the hsts keys)`),
  'proxy-set-headers': row('proxySetHeaders', `A ConfigMap ("namespace/name") whose keys and values are sent as headers on every request proxied to a backend (proxy_set_header, grpc_set_header), e.g. "X-Team: $http_x_team"; an empty value removes the client's header: ${RULES}. Not allowed: the message's framing, Host, Expect, and the headers Portico sets itself (X-Forwarded-*, X-Scheme, X-Original-Forwarded-For/-Host, X-Real-IP, X-Request-ID, X-Portico-Hop, traceparent, Proxy)`),
} as const;

const FRAMING = ['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'proxy-connection'];
const RESERVED: Record<'add' | 'proxy', ReadonlySet<string>> = {
  add: new Set([...FRAMING, 'content-type', 'content-encoding', 'date', 'server', 'strict-transport-security']),
  proxy: new Set([...FRAMING, 'host', 'expect', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'x-forwarded-port', 'x-forwarded-scheme', 'x-scheme', 'x-original-forwarded-for', 'x-original-forwarded-host', 'x-real-ip', 'x-request-id', 'x-portico-hop', 'traceparent', 'proxy']),
};
export const MAX_GLOBAL_HEADERS = 64;
const MAX_VALUE = 1024;
const NAME = /^[A-Za-z][A-Za-z0-9-]{0,63}$/;

/** Variables a header value may read: nginx's and ingress-nginx's (nginx-variables.ts), not Portico's internal ones nor the request body. */
export function headerVariableAllowed(name: string): boolean {
  return isKnownVariable(name) && !name.startsWith('portico_') && name !== 'request_body' && name !== 'request_body_file';
}

/**
 * A header value as nginx reads it: literal text (printable ASCII, no backslash) and variables ($name or ${name},
 * a name being every letter, digit and "_" that follows, as nginx reads it). Returned with every variable written
 * ${name}, so text after it can never extend its name; or why it is refused.
 */
export function headerValue(raw: string): { value: string } | { error: string } {
  if (raw.length > MAX_VALUE) return { error: `longer than ${MAX_VALUE} characters` };
  if (!/^[\x20-\x7e]*$/.test(raw)) return { error: 'only printable ASCII characters are allowed (no control characters, line breaks or non-ASCII)' };
  if (raw.includes('\\')) return { error: 'backslashes are not allowed' };
  let out = '';
  for (let i = 0; i < raw.length; ) {
    const c = raw[i] as string;
    if (c !== '$') {
      out += c;
      i++;
      continue;
    }
    const m = /^\$(?:\{([A-Za-z0-9_]+)\}|([A-Za-z0-9_]+))/.exec(raw.slice(i));
    if (!m) return { error: `at character ${i + 1}: "$" must start an nginx variable ($name or \${name})` };
    const name = (m[1] ?? m[2]) as string;
    if (!headerVariableAllowed(name)) return { error: `variable $${name} is not allowed` };
    out += `\${${name}}`;
    i += m[0].length;
  }
  return { value: out };
}

/** The headers of one ConfigMap's data for `kind`, in name order, and why each left-out one was refused. */
export function parseGlobalHeaders(kind: 'add' | 'proxy', data: Record<string, string>): { headers: GlobalHeader[]; errors: string[] } {
  const headers: GlobalHeader[] = [];
  const errors: string[] = [];
  const seen = new Set<string>();
  for (const [name, raw] of Object.entries(data).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const shown = JSON.stringify(name.slice(0, 64));
    if (!NAME.test(name)) errors.push(`${shown} is not a header name (a letter, then letters, digits and "-", at most 64 characters)`);
    else if (RESERVED[kind].has(name.toLowerCase())) errors.push(`${name} cannot be set here (${kind === 'add' ? 'it frames the response or is set by Portico or another key' : 'it frames the request or Portico sets it itself'})`);
    else if (seen.has(name.toLowerCase())) errors.push(`${name} is set twice (header names are case-insensitive)`);
    else if (headers.length >= MAX_GLOBAL_HEADERS) errors.push(`${name}: at most ${MAX_GLOBAL_HEADERS} headers`);
    else {
      const v = headerValue(raw);
      if ('error' in v) errors.push(`${name}: ${v.error}`);
      else {
        seen.add(name.toLowerCase());
        headers.push({ name, value: v.value });
      }
    }
  }
  return { headers, errors };
}

/** What the reconciler knows of a named ConfigMap: its data, 'pending' (being read), or undefined (it does not exist). */
export type ConfigMapState = { data: Record<string, string> } | 'pending' | undefined;

/** The ConfigMaps the two keys name ("namespace/name"), for watching. */
export function globalHeaderRefs(v: Pick<GlobalHeaderValues, 'addHeaders' | 'proxySetHeaders'>): string[] {
  return [...new Set([v.addHeaders, v.proxySetHeaders].filter(Boolean))];
}

/**
 * Resolves add-headers and proxy-set-headers: the headers to apply (undefined: none), and one message per problem
 * (a missing ConfigMap, each header left out), each starting with the key it concerns.
 */
export function globalHeadersOf(v: Pick<GlobalHeaderValues, 'addHeaders' | 'proxySetHeaders'>, read: (key: string) => ConfigMapState): { headers?: GlobalHeaders; warnings: string[] } {
  const warnings: string[] = [];
  const out: GlobalHeaders = { add: [], proxy: [] };
  for (const [kind, key, ref] of [['add', 'add-headers', v.addHeaders], ['proxy', 'proxy-set-headers', v.proxySetHeaders]] as const) {
    if (!ref) continue;
    const cm = read(ref);
    if (cm === 'pending') continue;
    if (!cm) {
      warnings.push(`${key}: ConfigMap ${ref} not found; no headers are ${kind === 'add' ? 'added to responses' : 'sent to backends'} from it`);
      continue;
    }
    const r = parseGlobalHeaders(kind, cm.data);
    out[kind] = r.headers;
    for (const e of r.errors) warnings.push(`${key}: ConfigMap ${ref}: ${e}; left out`);
  }
  return { ...(out.add.length || out.proxy.length ? { headers: out } : {}), warnings };
}
