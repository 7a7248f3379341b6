// ingress-nginx's client-certificate authentication (auth-tls-*), parsed into data: the CA bundle of the Secret
// (ca.crt) for the TLS handshake of the Ingress's hosts (DataPlane.clientAuth, certs.lua), and the per-path check
// the client-cert plugin runs (plugins/client_cert.lua). Nothing reaches nginx.conf: every value passes a strict
// schema here and is checked again by the Lua side (validate.lua).
//
// Semantics, as ingress-nginx documents them, with Portico's choices where it has to make one:
//   - auth-tls-secret: "namespace/name" (or a name) of a Secret of the Ingress's own namespace with ca.crt (PEM CA
//     certificates). Another namespace, a missing Secret, no or a bad ca.crt, or a ca.crl (revocation lists are not
//     applied) make the Ingress fail closed (503), never serve it unverified;
//   - auth-tls-verify-client: on (default) | off | optional | optional_no_ca; verify-depth (default 1, 0 = 1);
//   - auth-tls-error-page: where a request without a valid certificate is redirected (302) instead of the 400;
//   - auth-tls-pass-certificate-to-upstream: the PEM (URL-encoded) in ssl-client-cert;
//   - auth-tls-match-cn: a regex the subject DN must match ("CN=client1"), else 403.
// Any of the companions without auth-tls-secret fails closed too (ingress-nginx ignores them: Portico does not
// guess that access control was not wanted), except verify-client "off", which asks for nothing.
// An invalid value of any of them also fails closed (ingress-nginx falls back to the default): parseAnnotations.
// The annotations → plugin step, with the rows, is the auth-tls group (groups/auth-tls.ts).
import { X509Certificate, createHash } from 'node:crypto';
import { z } from 'zod';
import { caBundleProblem } from '../values/safe.ts';

export const VERIFY_CLIENT = ['on', 'off', 'optional', 'optional_no_ca'] as const;
export type VerifyClient = (typeof VERIFY_CLIENT)[number];

/** auth-tls-verify-client: on | off | optional | optional_no_ca (as nginx's ssl_verify_client). */
export const verifyClientSchema = z
  .string()
  .trim()
  .refine((v): v is VerifyClient => (VERIFY_CLIENT as readonly string[]).includes(v), { message: 'expected on, off, optional or optional_no_ca' })
  .transform((v) => v as VerifyClient);

/** auth-tls-verify-depth: how many CA certificates above the client's may be needed (0 means ingress-nginx's default, 1). */
export const verifyDepthSchema = z
  .string()
  .trim()
  .regex(/^\d{1,2}$/, 'expected a whole number between 0 and 10')
  .transform((v) => Number.parseInt(v, 10))
  .refine((n) => n <= 10, { message: 'expected a whole number between 0 and 10' });

const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
/**
 * An absolute http(s) URL: a literal DNS name (or IPv4 address), an optional port, a path and a query of RFC 3986
 * characters — no user info, fragment, variables ("$"), quotes, ";", spaces or control characters.
 */
const ERROR_PAGE_RE = new RegExp(`^https?://${LABEL}(?:\\.${LABEL})*(?::\\d{1,5})?(?:/[A-Za-z0-9._~!&*+,=:@%/-]*)?(?:\\?[A-Za-z0-9._~!&*+,=:@%/?-]*)?$`, 'i');

/** auth-tls-error-page: the page a request without a usable certificate is redirected to (302). */
export const errorPageSchema = z
  .string()
  .max(2048, 'longer than 2048 characters')
  .refine((v) => ERROR_PAGE_RE.test(v), {
    message: 'expected an absolute http(s) URL with a literal host, e.g. https://example.com/cert-error (letters, digits and - . _ ~ ! & * + , = : @ % / ? only; no variables, user info or fragment)',
  })
  .refine((v) => !/%(?![0-9A-Fa-f]{2})/.test(v), { message: '"%" must start a %XX escape' })
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.password && (u.port === '' || Number(u.port) <= 65535);
    } catch {
      return false;
    }
  }, { message: 'not a valid http(s) URL (port 1-65535)' });

/** What a match-cn regex may hold: regex syntax without braces, quotes, ";", "#" or "$" before the end. */
const MATCH_CN_RE = /^[A-Za-z0-9 =,._*+?|()[\]^\\/:@!-]+\$?$/;
/**
 * Escapes both PCRE2 and JavaScript read the same way: an escaped punctuation character, a class escape or a word
 * boundary. Any other (\q, \1, \x41...) is refused, as is an empty class ("[]" and "[^]" are classes in
 * JavaScript, an unterminated one in PCRE2).
 */
const PORTABLE = (v: string) => !/\\[^dDwWsSbB.*+?|()[\]^\\/:=,!@ -]/.test(v) && !/\[\^?\]/.test(v);
/** A quantified group that holds a quantifier itself, e.g. "(a+)+": exponential backtracking. */
const NESTED_QUANTIFIER = /\((?:[^()\\]|\\.)*[*+?](?:[^()\\]|\\.)*\)[*+?]/;

/**
 * auth-tls-match-cn: a PCRE the client certificate's subject DN ($ssl_client_s_dn, e.g. "CN=client1,O=Acme") must
 * match, unanchored as ingress-nginx's `if ($ssl_client_s_dn !~ <regex>)`. It must name "CN=".
 */
export const matchCnSchema = z
  .string()
  .max(256, 'longer than 256 characters')
  .refine((v) => MATCH_CN_RE.test(v), { message: 'may hold letters, digits, spaces and the regex characters = , . _ * + ? | ( ) [ ] ^ \\ / : @ ! - (and "$" only at the end); no braces, quotes, ";", "#" or variables' })
  .refine((v) => v.includes('CN='), { message: 'must match on the common name ("CN=...")' })
  .refine((v) => !NESTED_QUANTIFIER.test(v), { message: 'nested quantifiers such as "(a+)+" are not allowed (catastrophic backtracking)' })
  .refine(PORTABLE, { message: 'escapes may only be \\d \\D \\w \\W \\s \\S \\b \\B or an escaped punctuation character; no empty class "[]"' })
  .refine(
    (v) => {
      try {
        new RegExp(v.replace(/^\(\?i\)/, ''));
        return true;
      } catch {
        return false;
      }
    },
    { message: 'is not a valid regular expression' },
  );

/** The validated settings of one Ingress's client-certificate authentication. */
export interface ClientCertSpec {
  /** "namespace/name" of the Secret with ca.crt. */
  secret: string;
  /** The CA certificates (PEM, re-encoded one after the other). */
  ca: string;
  depth: number;
  /** ClientAuth id: digest of ca and depth (see clientCaId). */
  caId: string;
  verify: VerifyClient;
  errorPage?: string;
  passCertificate: boolean;
  matchCn?: string;
}

/** The id under which the data plane keeps a CA bundle with a depth: 30 hex digits (the TLS session carries it). */
export function clientCaId(ca: string, depth: number): string {
  return createHash('sha256').update(`${depth}\n${ca}`).digest('hex').slice(0, 30);
}

/** Every auth-tls annotation but the Secret. */
export const COMPANIONS = ['auth-tls-verify-client', 'auth-tls-verify-depth', 'auth-tls-error-page', 'auth-tls-pass-certificate-to-upstream', 'auth-tls-match-cn'] as const;
/** The auth-tls annotations refused together by the ConfigMap's switches (risk.ts). */
export const AUTH_TLS_ANNOTATIONS = ['auth-tls-secret', ...COMPANIONS] as const;

/** The CA certificates of a ca.crt (PEM), re-encoded; or why they cannot be used. */
export function caCertificates(pem: string): { ca: string } | { error: string } {
  const problem = caBundleProblem(pem);
  if (problem) return { error: problem.replace('the CA bundle', 'ca.crt') };
  const out: string[] = [];
  for (const block of pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? []) {
    try {
      out.push(new X509Certificate(block).toString().trim());
    } catch (e) {
      return { error: `ca.crt holds a certificate that cannot be read (${(e as Error).message})` };
    }
  }
  if (!out.length) return { error: 'no certificate in ca.crt' };
  return { ca: `${out.join('\n')}\n` };
}
