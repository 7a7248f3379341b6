// How a backend's endpoints are chosen: the algorithm (load-balance), consistent hashing (upstream-hash-by and its
// subsets), cookie session affinity (affinity, session-cookie-*) and service-upstream (the cluster IP instead of the
// endpoints). The translation reads these values into the backend (translate/backend.ts).
import { z } from 'zod';
import { emptyApplied, NGINX_PREFIX, refused, row, type Applied, type Values } from '../group.ts';
import { isKnownVariable } from '../../values/nginx-variables.ts';
import { affinityModeSchema, affinitySchema, boolSchema, cookieNameSchema, intSchema, loadBalanceSchema, nginxVariableSchema } from '../../values/safe.ts';

/** session-cookie-path: an absolute path, printable ASCII without ";", "," or quotes, at most 256 characters. */
const cookiePathSchema = z.string().trim().regex(/^\/[!#-&(-+\--:<-[\]-~]{0,255}$/, 'expected an absolute path such as /app (printable characters, no ";", ",", quotes or spaces)');
/** session-cookie-domain: a DNS name, optionally with a leading ".". */
const cookieDomainSchema = z.string().trim().toLowerCase().regex(/^\.?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/, 'expected a DNS name such as example.com').max(254, 'longer than 254 characters');

/**
 * upstream-hash-by: one nginx variable, or several with literal text between them ("$host$request_uri",
 * "$arg_user-$cookie_sid"), starting with a variable; every variable one nginx defines. The balancer builds the key
 * per request (balancer.lua).
 */
const hashKeySchema = z
  .string()
  .trim()
  .max(256, 'at most 256 characters')
  .superRefine((v, ctx) => {
    if (!/^\$[A-Za-z_]/.test(v) || !/^(\$[A-Za-z_][A-Za-z0-9_]*|[A-Za-z0-9._:/-]+)+$/.test(v)) {
      ctx.addIssue({ code: 'custom', message: 'expected nginx variables and literal text (letters, digits . _ : / -) starting with a variable, e.g. $request_uri or $host$request_uri' });
      return;
    }
    for (const m of v.matchAll(/\$([A-Za-z_][A-Za-z0-9_]*)/g)) {
      if (!isKnownVariable(m[1] as string)) ctx.addIssue({ code: 'custom', message: `$${m[1]} is not a variable nginx defines (e.g. $request_uri, $remote_addr, $http_x_user, $cookie_session)` });
    }
  });

export const rows = {
  'load-balance': row(loadBalanceSchema, 'backend', 'low', 'Balancing algorithm for this Ingress\'s backends: round_robin or ewma'),
  'upstream-hash-by': row(hashKeySchema, 'backend', 'high', 'Consistent hashing on a key made of nginx variables and literal text, e.g. $request_uri, $remote_addr or "$host$request_uri" (adding an endpoint moves about 1/N of the keys)', { difference: 'variables and the literal characters letters, digits . _ : / - only, starting with a variable (ingress-nginx takes any text)' }),
  'upstream-hash-by-subset': row(boolSchema, 'backend', 'low', 'With upstream-hash-by: "true" hashes each key onto a subset of the endpoints (sorted, cut in groups of upstream-hash-by-subset-size) and sends each request to a random endpoint of it, as ingress-nginx; without upstream-hash-by it has no effect'),
  'upstream-hash-by-subset-size': row(intSchema(1, 1000), 'backend', 'low', 'Endpoints per subset for upstream-hash-by-subset (default 3)'),
  affinity: row(affinitySchema, 'backend', 'low', 'Session affinity: "cookie" (takes precedence over upstream-hash-by)'),
  'affinity-mode': row(affinityModeSchema, 'backend', 'medium', 'balanced (default: the cookie holds a key hashed onto the endpoints, so scaling moves about 1/N of sessions) or persistent (the cookie names the endpoint; it moves only when that endpoint goes away)'),
  'affinity-canary-behavior': refused('ingress', 'low', 'not supported: the sticky/legacy choice for canaries with affinity cannot be made'),
  'session-cookie-name': row(cookieNameSchema, 'backend', 'medium', 'Affinity cookie name (default INGRESSCOOKIE)'),
  'session-cookie-max-age': row(intSchema(0, 315360000), 'backend', 'medium', 'Affinity cookie Max-Age in seconds (default: a session cookie)'),
  'session-cookie-path': row(cookiePathSchema, 'backend', 'medium', 'Path attribute of the affinity cookie (default "/"): an absolute path of printable characters, no ";"', { difference: 'the default is "/" (ingress-nginx defaults to the matched location path)' }),
  'session-cookie-domain': row(cookieDomainSchema, 'backend', 'medium', 'Domain attribute of the affinity cookie (a DNS name, an optional leading "."); default: none (the host only)'),
  'session-cookie-samesite': row(z.enum(['Strict', 'Lax', 'None'], { error: () => 'session-cookie-samesite must be Strict, Lax or None' }), 'backend', 'low', 'SameSite attribute of the affinity cookie: Strict, Lax or None (default: none sent)'),
  'session-cookie-conditional-samesite-none': row(boolSchema, 'backend', 'low', 'With session-cookie-samesite None: "true" leaves SameSite=None out for browsers known to reject it (old Chrome, Safari on iOS 12 / macOS 10.14, UC Browser)'),
  'session-cookie-secure': row(boolSchema, 'backend', 'low', '"true": the affinity cookie is marked Secure on every request (by default only on HTTPS requests)'),
  'session-cookie-expires': row(intSchema(0, 315360000), 'backend', 'medium', 'Expires attribute of the affinity cookie, this many seconds from when it is set (default: none)'),
  'session-cookie-change-on-failure': row(boolSchema, 'backend', 'low', '"true": when the request is retried on another endpoint, the affinity cookie is reissued for it (balanced mode: a new key; persistent: the new endpoint); default false keeps the cookie'),
  'session-cookie-partitioned': row(boolSchema, 'backend', 'low', '"true": the affinity cookie is marked Partitioned (CHIPS); browsers accept that only with Secure, so the cookie is then marked Secure too (proposed to ingress-nginx, in none of its releases)', { origin: 'portico' }),
  'service-upstream': row(boolSchema, 'backend', 'low', '"true": the backend is the Service\'s cluster IP and port (one endpoint, kube-proxy balances) instead of its endpoints; ignored with a Warning for ExternalName and headless Services, and when an Upstream object sets the Service port\'s balancing'),
};

/** Refused together (translate/risk.ts): affinity without its cookie's name or lifetime would be another affinity. */
export const refusedTogether = [['affinity', 'affinity-mode', 'session-cookie-name', 'session-cookie-max-age']] as const;

/** upstream-hash-by-subset(-size) shape upstream-hash-by's hashing: alone they ask for nothing (said, not silent). */
export function loadBalancingProblems(v: Values<typeof rows>): Applied<never> {
  const out = emptyApplied<never>();
  const subsetStray = (['upstream-hash-by-subset', 'upstream-hash-by-subset-size'] as const).filter((n) => v[n] !== undefined);
  if (subsetStray.length && v['upstream-hash-by'] === undefined) out.problems.push(`annotation ignored: ${subsetStray.map((n) => `${NGINX_PREFIX}${n}`).join(', ')}: has no effect without ${NGINX_PREFIX}upstream-hash-by`);
  else if (v['upstream-hash-by-subset-size'] !== undefined && v['upstream-hash-by-subset'] !== true) out.problems.push(`annotation ignored: ${NGINX_PREFIX}upstream-hash-by-subset-size: has no effect without ${NGINX_PREFIX}upstream-hash-by-subset: "true"`);
  return out;
}
