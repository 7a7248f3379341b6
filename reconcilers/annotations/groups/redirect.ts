// Redirects: to HTTPS (ssl-redirect, force-ssl-redirect, preserve-trailing-slash; the translation's route flags),
// between www.<host> and <host>, the port of nginx's own redirects, and permanent-redirect / temporal-redirect
// (the redirect plugin).
import { z } from 'zod';
import { addConfigPlugin, emptyApplied, NGINX_PREFIX, refused, row, type Applied, type ConfigPlugin, type Values } from '../group.ts';
import { boolSchema, intSchema } from '../../values/safe.ts';

export const rows = {
  'ssl-redirect': row(boolSchema, 'location', 'low', 'Redirect HTTP to HTTPS when the host has TLS (default: ConfigMap ssl-redirect, true)'),
  'force-ssl-redirect': row(boolSchema, 'location', 'medium', 'Redirect HTTP to HTTPS even when the host has no TLS section (default: ConfigMap force-ssl-redirect, false; "false" opts out of it). HTTP is the scheme the client used (a trusted load balancer\'s X-Forwarded-Proto with use-forwarded-headers)'),
  'preserve-trailing-slash': row(boolSchema, 'location', 'medium', 'Keep a trailing slash in the redirect to HTTPS: by default (as ingress-nginx) "http://h/docs/" is redirected to "https://h/docs" — the last "/" of the request URI is dropped — and "true" keeps it'),
  'from-to-www-redirect': row(boolSchema, 'location', 'low', 'www.<host> is answered 308 to <host> (or <host> to www.<host> when the rule\'s host starts with "www."), same scheme, with the request URI and query (its last "/" dropped, as ingress-nginx) — only when the other name has no rule of its own. HTTPS to the other name uses this host\'s certificate when it covers that name, else the default certificate (a Warning says so), as ingress-nginx', { difference: 'no port is added to the Location (ingress-nginx always writes one: the port the request came in on, or X-Forwarded-Port with use-forwarded-headers, e.g. "http://example.com:80/foo")' }),
  'use-port-in-redirects': row(boolSchema, 'location', 'low', '"true": the 301 nginx answers for a path written with a trailing slash ("/docs" → "/docs/") names the port clients connect to (--published-http-port / --published-https-port, left out when it is the scheme\'s default); by default, as in ingress-nginx, no port', { difference: 'the published port, not the port nginx listens on (Portico listens on 8080/8443 behind a Service)' }),
  'permanent-redirect': row(z.string().max(2048, 'URL is longer than 2048 characters'), 'ingress', 'medium', 'Answer every request with a redirect to this URL (http/https, a DNS host name, a query of its own allowed): 301, or permanent-redirect-code (redirect plugin)', { difference: 'a literal http(s) URL (nginx variables such as $request_uri are not expanded): one with user info or a fragment is ignored with a Warning' }),
  'permanent-redirect-code': row(intSchema(300, 308), 'ingress', 'low', 'Status of permanent-redirect (default 301; 301, 302, 303, 307 or 308)'),
  'relative-redirects': refused('location', 'low', 'not applied per Ingress: set the ConfigMap\'s relative-redirects (absolute_redirect off for every path)'),
  'temporal-redirect': row(z.string().max(2048, 'URL is longer than 2048 characters'), 'ingress', 'medium', 'Answer every request with a redirect to this URL: 302, or temporal-redirect-code; permanent-redirect wins when both are set', { difference: 'a literal http(s) URL, as permanent-redirect; when both are set, permanent-redirect wins (ingress-nginx applies temporal-redirect)' }),
  'temporal-redirect-code': row(intSchema(300, 308), 'ingress', 'low', 'Status of temporal-redirect (default 302; 301, 302, 303, 307 or 308)'),
};

/** Refused together (translate/risk.ts): a redirect is not applied without the code it was given, nor the reverse. */
export const refusedTogether = [
  ['permanent-redirect', 'permanent-redirect-code'],
  ['temporal-redirect', 'temporal-redirect-code'],
] as const;

/**
 * permanent-redirect / temporal-redirect: every request answered with a redirect to the URL (as ingress-nginx's
 * `return <code> <url>`: the request's path and query are not appended).
 */
export function redirectPlugins(v: Values<typeof rows>): Applied<ConfigPlugin> {
  const out = emptyApplied<ConfigPlugin>();
  const problems = out.problems;
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
    } else {
      const port = url.port ? Number(url.port) : undefined;
      const codeName = `${name}-code` as 'permanent-redirect-code' | 'temporal-redirect-code';
      // The URL's own query (as the URL parser serializes it: percent-encoded) is kept, as ingress-nginx's return.
      const query = url.search.length > 1 ? url.search.slice(1) : undefined;
      addConfigPlugin(out, 'redirect', 'redirect', { statusCode: code, scheme: url.protocol.slice(0, -1), hostname: url.hostname, ...(port ? { port } : {}), path: url.pathname || '/', keepQuery: false, ...(query ? { query } : {}) }, [name, ...(v[codeName] !== undefined ? [codeName] : [])], null);
    }
  }
  return out;
}
