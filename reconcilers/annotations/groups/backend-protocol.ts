// backend-protocol (HTTP, HTTPS, GRPC, GRPCS, FCGI — see fastcgi.ts; a directive profile) and TLS to an HTTPS/GRPCS backend (proxy-ssl-*;
// model/normalize.ts reads the Secret, the translation fails the paths closed where it cannot be applied).
import { createSecureContext } from 'node:tls';
import { z } from 'zod';
import { row } from '../group.ts';

// ---- proxy-ssl-* (TLS to an HTTPS/GRPCS backend from an Ingress; normalize.ts reads the Secret) ----------------------
// Only blanks (space, tab) around a value are dropped: any other character outside a value's alphabet — unicode
// separators, NUL, quotes, ";", "$", braces, "#" — is refused, never trimmed away.
const blankTrim = (v: string) => v.replace(/^[ \t]+|[ \t]+$/g, '');
/** A refused value as printable ASCII (control and non-ASCII characters escaped), at most 40 characters of it. */
const shown = (v: string) => JSON.stringify(v.slice(0, 40)).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
/** proxy-ssl-secret: "namespace/name" or a name (the Ingress's namespace); another namespace fails closed (normalize.ts). */
export const proxySslSecretSchema = z
  .string()
  .transform(blankTrim)
  .pipe(z.string().regex(/^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\/)?[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, 'must be a Secret name or "namespace/name" (lower-case letters, digits, "-" and ".")'));
/** proxy-ssl-verify / proxy-ssl-server-name: "on" or "off" (also "true"/"false", any case) → boolean. */
export const proxySslOnOffSchema = z
  .string()
  .transform(blankTrim)
  .pipe(z.string().regex(/^(on|off|true|false)$/i, 'expected "on" or "off"'))
  .transform((v) => /^(on|true)$/i.test(v));
/** proxy-ssl-verify-depth: 0 to 100 (0 = the default, 1). */
export const proxySslVerifyDepthSchema = z
  .string()
  .transform(blankTrim)
  .pipe(z.string().regex(/^\d{1,3}$/, 'expected a whole number between 0 and 100'))
  .transform((v) => Number.parseInt(v, 10))
  .refine((n) => n <= 100, { message: 'expected a whole number between 0 and 100' });
/** proxy-ssl-name: a DNS name (no nginx variables), lower-cased: the name verified and, with proxy-ssl-server-name, sent as SNI. */
export const proxySslNameSchema = z
  .string()
  .transform(blankTrim)
  .pipe(
    z
      .string()
      .max(253, 'longer than 253 characters')
      .regex(/^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/, 'expected a DNS name such as api.example.com (letters, digits, "-" and "."; no nginx variables)'),
  )
  .transform((v) => v.toLowerCase());
export const PROXY_SSL_PROTOCOLS = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const;
/** proxy-ssl-protocols: TLSv1, TLSv1.1, TLSv1.2, TLSv1.3, space-separated; normalised to that order. */
export const proxySslProtocolsSchema = z.string().transform((v, ctx) => {
  const items = blankTrim(v).split(/[ \t]+/).filter(Boolean);
  const bad = items.find((p) => !(PROXY_SSL_PROTOCOLS as readonly string[]).includes(p));
  if (bad !== undefined || !items.length) {
    ctx.addIssue({ code: 'custom', message: `${bad === undefined ? 'no protocol' : `${shown(bad)} is not a TLS version`}: expected TLSv1, TLSv1.1, TLSv1.2 or TLSv1.3, space-separated (SSLv2 and SSLv3 are refused)` });
    return z.NEVER;
  }
  return PROXY_SSL_PROTOCOLS.filter((p) => items.includes(p)).join(' ');
});
/** proxy-ssl-ciphers: an OpenSSL cipher list (TLS 1.2 and lower) that OpenSSL accepts; its alphabet only. */
export const proxySslCiphersSchema = z
  .string()
  .transform(blankTrim)
  .pipe(
    z
      .string()
      .regex(/^[A-Za-z0-9:+!@=_-]{1,1024}$/, 'expected an OpenSSL cipher list such as "HIGH:!aNULL:!MD5": letters, digits and : + ! @ = _ - only (no spaces, quotes, ";", "$" or braces)')
      .refine(
        (v) => {
          try {
            createSecureContext({ ciphers: v });
            return true;
          } catch {
            return false;
          }
        },
        { message: 'OpenSSL matches no cipher in this list' },
      ),
  );
/** The proxy-ssl-* annotations: with proxy-ssl-secret, an invalid or refused one fails the Ingress's paths closed (normalize.ts, translate.ts). */
export const PROXY_SSL_ANNOTATIONS = ['proxy-ssl-secret', 'proxy-ssl-verify', 'proxy-ssl-verify-depth', 'proxy-ssl-name', 'proxy-ssl-server-name', 'proxy-ssl-ciphers', 'proxy-ssl-protocols'] as const;

export const rows = {
  'backend-protocol': row(z.enum(['HTTP', 'HTTPS', 'GRPC', 'GRPCS', 'AUTO_HTTP', 'FCGI'], { error: () => 'backend-protocol must be HTTP, HTTPS, GRPC, GRPCS, FCGI or AUTO_HTTP' }), 'location', 'low', 'Protocol to the backend: HTTP (default; AUTO_HTTP is the same), HTTPS, GRPC, GRPCS or FCGI (FastCGI, e.g. php-fpm: see fastcgi-index and fastcgi-params-configmap) — a directive profile: the first route with a new combination reloads once; an Upstream object for the Service wins', { difference: 'AUTO_HTTP is plain HTTP; with FCGI, proxy_* annotations without a FastCGI meaning raise a Warning, and custom-http-errors also catches the FastCGI server\'s answers' }),
  'proxy-ssl-secret': row(proxySslSecretSchema, 'ingress', 'medium', 'Secret ("namespace/name" of the Ingress\'s own namespace, or a name) for TLS to an HTTPS or GRPCS backend: tls.crt and tls.key are the client certificate presented to it (proxy_ssl_certificate), ca.crt (optional) the CAs its certificate is verified against with proxy-ssl-verify. A Secret that is missing, in another namespace or unusable (bad PEM, a key that does not match, proxy-ssl-verify without ca.crt), or an invalid value of any proxy-ssl-* annotation (or one the ConfigMap\'s annotations-risk-level refuses), makes the paths of this Ingress answer 503 (fail closed, never proxied without what was asked; also where an Upstream object wins). Applies to HTTPS and GRPCS backends (backend-protocol, or an Upstream object\'s protocol); an Upstream object with tls settings for the Service wins over all proxy-ssl-* annotations (a Normal UpstreamOverrides event)', { difference: 'an invalid proxy-ssl-* value fails closed (ingress-nginx falls back to its default); a bare name is read in the Ingress\'s namespace; GRPCS backends get the same (grpc_ssl_*)' }),
  'proxy-ssl-verify': row(proxySslOnOffSchema, 'ingress', 'low', '"on": verify the backend\'s certificate against ca.crt of proxy-ssl-secret and the name (proxy-ssl-name); default off. With proxy-ssl-secret only', { difference: 'also "true"/"false" in any case (ingress-nginx takes anything but "on"/"off" as off); "on" without ca.crt fails closed (in ingress-nginx nginx -t fails)' }),
  'proxy-ssl-verify-depth': row(proxySslVerifyDepthSchema, 'ingress', 'low', 'How many intermediate CAs may stand between the backend\'s certificate and a CA of ca.crt when proxy-ssl-verify checks it (proxy_ssl_verify_depth, as OpenSSL counts), 0 to 100; default 1 (0 = 1). With proxy-ssl-secret only'),
  'proxy-ssl-name': row(proxySslNameSchema, 'ingress', 'high', 'Name the backend\'s certificate is verified against and, with proxy-ssl-server-name on, sent as SNI (proxy_ssl_name): a DNS name. Default: <service>.<namespace>.svc. With proxy-ssl-secret only', { difference: 'a DNS name only (no nginx variables); the default is <service>.<namespace>.svc, where ingress-nginx uses its internal upstream name ("upstream_balancer"), which no certificate names' }),
  'proxy-ssl-server-name': row(proxySslOnOffSchema, 'ingress', 'low', '"on": send proxy-ssl-name (default <service>.<namespace>.svc) as SNI to the backend (proxy_ssl_server_name); default off. With proxy-ssl-secret only', { difference: 'also "true"/"false" in any case; the name sent by default is <service>.<namespace>.svc (ingress-nginx sends "upstream_balancer")' }),
  'proxy-ssl-ciphers': row(proxySslCiphersSchema, 'ingress', 'medium', 'OpenSSL cipher list for TLS 1.2 and lower to the backend (proxy_ssl_ciphers); default DEFAULT. A list OpenSSL matches nothing in is invalid. With proxy-ssl-secret only'),
  'proxy-ssl-protocols': row(proxySslProtocolsSchema, 'ingress', 'low', 'TLS versions offered to the backend (proxy_ssl_protocols): TLSv1, TLSv1.1, TLSv1.2, TLSv1.3, space-separated. With proxy-ssl-secret only', { difference: 'the default is "TLSv1.2 TLSv1.3" (ingress-nginx: "TLSv1 TLSv1.1 TLSv1.2"); SSLv2 and SSLv3 are refused' }),
};
