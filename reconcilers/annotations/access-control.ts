// Annotations that restrict who may reach an Ingress's paths. While Portico cannot apply one of them (not supported
// yet, or — for those supported as plugins: the IP allow/denylists, basic auth, auth-url and its companions — a
// value it cannot read), the Ingress fails closed: its paths stay claimed (so requests do not fall through to another Ingress's broader rule) and
// answer 503, instead of serving to the world what was protected under ingress-nginx.
//
// The list (the table's `access` column) follows the groups of ingress-nginx's annotation reference (annotations-risk.md):
//   Allowlist (allowlist-source-range, and its older name whitelist-source-range), Denylist
//   (denylist-source-range), BasicDigestAuth (auth-type, auth-secret, auth-secret-type, auth-realm), ExternalAuth
//   (auth-url, auth-signin, auth-method, auth-response-headers, auth-snippet, auth-cache-*, ...), CertificateAuth
//   (auth-tls-*) — and, so that a newer ingress-nginx option is not missed, every other `auth-*` name.
// Snippets (configuration-snippet, server-snippet) are compiled from an allowlist when the ConfigMap allows them
// (snippets.ts, translate/risk.ts); one that is refused — by the ConfigMap's switches or for a directive off the allowlist —
// and holds an access directive (allow, deny, auth_basic, auth_request, satisfy, ssl_verify_client, access_by_lua,
// return 401/403) counts as access control, so the Ingress fails closed instead of serving what it protected.
// Not on the list, with why:
//   - satisfy: only chooses how auth and the allowlist combine; alone it restricts nothing, and with either of
//     them present the Ingress already fails closed;
//   - enable-global-auth: it only switches the ConfigMap's global-auth-url off for the Ingress (an invalid value is
//     reported and global auth stays on: the safe side);
//   - limit-* (rate limits), enable-modsecurity / enable-owasp-core-rules / modsecurity-snippet (a WAF, detection
//     only unless configured): they throttle or filter abuse but do not decide who is allowed in. (ModSecurity that
//     is on but cannot be applied as asked fails the paths closed by itself: translate.ts modsecurityClosedReason.)
import { CATALOGUE } from './table.ts';

// The groups are the table's `access` column (table.ts): one place says which annotation is access control.
const GROUPS = new Map(Object.entries(CATALOGUE).flatMap(([n, r]) => (r.access ? [[n, r.access] as const] : [])));
const groupOf = (name: string): string | undefined => GROUPS.get(name);

const SNIPPETS = new Set(['configuration-snippet', 'server-snippet']);

/** A directive that restricts access, at the start of a statement (after ";", "{", "}" or the beginning). */
const ACCESS_DIRECTIVE =
  /(?:^|[;{}])\s*(allow|deny|auth_basic|auth_basic_user_file|auth_request|auth_jwt|satisfy|ssl_verify_client|access_by_lua(?:_block|_file)?|return\s+40[13])(?=[\s;{]|$)/;

/**
 * What kind of access control an annotation (name without its prefix) asks for, or null when it is not access
 * control. `value` matters only for snippets.
 */
export function accessControlKind(name: string, value: string): string | null {
  const g = groupOf(name);
  if (g) return g;
  if (name.startsWith('auth-tls-')) return 'client-certificate authentication';
  if (name.startsWith('auth-')) return 'authentication';
  if (SNIPPETS.has(name)) {
    const m = ACCESS_DIRECTIVE.exec(value);
    if (m) return `access rules in a snippet ("${(m[1] as string).replace(/\s+/g, ' ')}")`;
  }
  return null;
}
