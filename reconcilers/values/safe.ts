// The alphabet of everything that can reach nginx.conf. Each schema rejects rather than repairs, with a message
// that tells the user exactly what is wrong. The renderer additionally escapes every value it emits.
import { createSecureContext } from 'node:tls';
import { z } from 'zod';
import { logFormatProblem } from './nginx-variables.ts';
import { regexPathProblem } from './regex-path.ts';

// The API server checks Ingress hosts as DNS-1123 subdomains (or "*." and one): at most 253 characters in all, with
// no length limit of its own on each label, so neither has Portico.
const LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const HOST_RE = new RegExp(`^(\\*\\.)?${LABEL}(\\.${LABEL})*$`);

export const hostSchema = z
  .string()
  .max(253, 'host is longer than 253 characters')
  .refine((h) => HOST_RE.test(h), {
    message: 'host must be a lower-case DNS name (RFC 1123), optionally starting with a single "*." wildcard label',
  });

/** Characters allowed in a literal (Exact/Prefix) path: RFC 3986 path characters minus what nginx treats specially. */
const PATH_RE = /^\/[A-Za-z0-9._~!&()*+,=:@%/-]*$/;
export const pathSchema = z
  .string()
  .max(2048, 'path is longer than 2048 characters')
  .refine((p) => p.startsWith('/'), { message: 'path must start with "/"' })
  .refine((p) => PATH_RE.test(p), {
    message: 'path may only contain letters, digits and - . _ ~ ! & ( ) * + , = : @ % / (no spaces, quotes, ;, {, }, $, #, \\)',
  });

/**
 * Regex paths (use-regex, rewrite-target): evaluated by the Lua router with nginx's PCRE2 as ingress-nginx's
 * `location ~* "^<path>"`. Validated by a parser for what PCRE2 compiles and reads one way (see regex-path.ts);
 * the message names the position and the problem.
 */
export const regexPathSchema = z.string().superRefine((p, ctx) => {
  const problem = regexPathProblem(p);
  if (problem) ctx.addIssue({ code: 'custom', message: `regex path ${problem}` });
});

/** nginx size: "0", "512", "8k", "1m", "2g". */
export const sizeSchema = z
  .string()
  .trim()
  .regex(/^\d{1,9}[kKmMgG]?$/, 'size must be a number with an optional k, m or g suffix, e.g. 1m');

/** Timeouts in whole seconds; ingress-nginx also accepts a trailing "s". */
export const secondsSchema = z
  .string()
  .trim()
  .regex(/^\d{1,6}s?$/, 'expected whole seconds, e.g. 60 or 60s')
  .transform((v) => Number.parseInt(v, 10));

export const boolSchema = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => v === 'true' || v === 'false', { message: 'expected "true" or "false"' })
  .transform((v) => v === 'true');

export const intSchema = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, 'expected a whole number')
    .transform((v) => Number.parseInt(v, 10))
    .refine((n) => n >= min && n <= max, { message: `expected a number between ${min} and ${max}` });

/** An nginx variable such as $request_uri (for hashing). */
export const nginxVariableSchema = z
  .string()
  .trim()
  .regex(/^\$[a-z_][a-z0-9_]{0,63}$/, 'expected one nginx variable such as $request_uri or $remote_addr');

/**
 * Log format (log-format-upstream, log-format-stream): literal text and $variables, including what JSON formats
 * need (double quotes, braces, ":" and ","). nginx.conf holds it in single quotes, so "'" is refused, and so are
 * ";", backslashes, newlines and other control characters (a YAML value spanning lines is folded into one by YAML
 * itself). Every variable must be one nginx (or Portico's configuration) defines: an unknown one fails `nginx -t`
 * and would block every reload.
 */
const LOG_FORMAT_RE = /^[A-Za-z0-9 $_.,:/\-[\]()|=@+*#<>!?%&^~"{}`]*$/;
const LOG_FORMAT_MESSAGE = 'log format may contain text, $variables and JSON punctuation only (no single quotes, ";", backslashes, newlines or other control characters)';
function logFormatOf(section: 'http' | 'stream') {
  return z
    .string()
    .max(4096, 'log format is longer than 4096 characters')
    .regex(LOG_FORMAT_RE, LOG_FORMAT_MESSAGE)
    .superRefine((v, ctx) => {
      const problem = logFormatProblem(v, section);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });
}
export const logFormatSchema = logFormatOf('http');
export const streamLogFormatSchema = logFormatOf('stream');

/** load-balance values (consistent hashing and affinity have their own annotations, as in ingress-nginx). */
export const loadBalanceSchema = z.enum(['round_robin', 'ewma'], {
  error: () => 'load-balance must be round_robin or ewma',
});

/** Converts a zod error into one readable line. */
export function zodMessage(e: z.ZodError): string {
  return e.issues.map((i) => i.message).join('; ');
}

export const cookieNameSchema = z.string().trim().regex(/^[A-Za-z0-9_-]{1,64}$/, 'cookie name may contain letters, digits, "_" and "-" (at most 64)');
export const affinitySchema = z.enum(['cookie'], { error: () => 'affinity supports "cookie"' });
export const affinityModeSchema = z.enum(['balanced', 'persistent'], { error: () => 'affinity-mode must be balanced or persistent' });

/** A header name (forwarded-for-header, forwarded-host-header): a token for a ConfigMap key: letters, digits and "-", starting with a letter, at most 64. */
export const headerTokenSchema = z
  .string()
  .trim()
  .regex(/^[A-Za-z][A-Za-z0-9-]{0,63}$/, 'expected a header name: letters, digits and "-" (at most 64), e.g. X-Forwarded-For');

export const headerNameSchema = z.string().trim().regex(/^[A-Za-z0-9-]{1,64}$/, 'header name may contain letters, digits and "-" (at most 64)');
export const headerValueSchema = z.string().max(256, 'header value is longer than 256 characters').regex(/^[\x20-\x7e]*$/, 'header value must be printable ASCII');
/** A regex matched in Lua (PCRE, compiled once): a conservative alphabet and length keep it cheap. */
export const headerPatternSchema = z
  .string()
  .max(128, 'header pattern is longer than 128 characters')
  .regex(/^[A-Za-z0-9 .*+?^$|()[\]_,:;=\/-]*$/, 'header pattern may only use letters, digits and . * + ? ^ $ | ( ) [ ] _ , : ; = / -')
  .refine((v) => { try { new RegExp(v); return true; } catch { return false; } }, { message: 'header pattern does not compile' });

// ---- Kubernetes names --------------------------------------------------------------------------------------------
// The API server enforces these too, but Portico re-checks at its boundary: names end up in backend ids, events and
// nginx.conf comments, and the escaping helpers throw on anything outside these alphabets.

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Namespaces (and other DNS-1123 label names): at most 63 of [a-z0-9-], alphanumeric at both ends. */
export const dns1123LabelSchema = z
  .string()
  .max(63, 'must be at most 63 characters')
  .regex(DNS1123_LABEL, 'must be a DNS-1123 label: lower-case letters, digits and "-", starting and ending with a letter or digit');

/** Ingress, Secret and IngressClass names: DNS-1123 subdomain, at most 253 characters. */
export const dns1123SubdomainSchema = z
  .string()
  .max(253, 'must be at most 253 characters')
  .regex(DNS1123_SUBDOMAIN, 'must be a DNS-1123 subdomain: lower-case letters, digits, "-" and ".", each label starting and ending with a letter or digit');

/**
 * Service names (and an Ingress backend's service.name): DNS-1123 labels, at most 63 characters. Kubernetes 1.36
 * (RelaxedServiceNameValidation, beta and on by default) accepts a leading digit ("1web"); older API servers ask
 * for a DNS-1035 label, a subset of this.
 */
export const serviceNameSchema = z
  .string()
  .max(63, 'must be at most 63 characters')
  .regex(DNS1123_LABEL, 'must be a DNS-1123 label: lower-case letters, digits and "-", starting and ending with a letter or digit');

/**
 * A port name in an Ingress backend (`service.port.name`): the API server checks it as an IANA_SVC_NAME — 1-15 of
 * [a-z0-9-], at least one letter, no "-" at either end, no "--".
 */
export const portNameSchema = z
  .string()
  .max(15, 'must be at most 15 characters')
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be lower-case letters, digits and "-", not starting or ending with "-"')
  .refine((n) => /[a-z]/.test(n), { message: 'must contain at least one letter' })
  .refine((n) => !n.includes('--'), { message: 'must not contain "--"' });

/**
 * A port name in a Service or an EndpointSlice: the API server checks these as DNS-1123 labels (at most 63, digits
 * alone allowed), not as IANA_SVC_NAMEs — `kubectl create service clusterip web --tcp=8080:8080` names its port
 * "8080-8080".
 */
export const servicePortNameSchema = z
  .string()
  .max(63, 'must be at most 63 characters')
  .regex(DNS1123_LABEL, 'must be a DNS-1123 label: lower-case letters, digits and "-", starting and ending with a letter or digit');

export const portNumberSchema = z.number().int('must be a whole number').min(1, 'must be between 1 and 65535').max(65535, 'must be between 1 and 65535');

/** One-line check for a name: null when valid, else "<what> "<value>" <why>". */
export function nameProblem(schema: z.ZodType, value: unknown, what: string): string | null {
  const r = schema.safeParse(value);
  return r.success ? null : `${what} ${JSON.stringify(typeof value === 'string' ? value.slice(0, 100) : value)} ${zodMessage(r.error)}`;
}

/** portico.dev/plugins: comma-separated names of Plugin objects in the Ingress's namespace, at most 16. */
export const pluginListSchema = z
  .string()
  .transform((v) => v.split(',').map((x) => x.trim()).filter((x) => x.length > 0))
  .pipe(
    z
      .array(z.string().regex(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, 'each plugin must be the name of a Plugin object (DNS-1123 subdomain)'))
      .min(1, 'name at least one Plugin')
      .max(16, 'at most 16 plugins'),
  );

/** A PEM bundle of certificates only (what proxy_ssl_trusted_certificate reads), at most 256 KiB. */
export function caBundleProblem(pem: string): string | null {
  if (pem.length > 256 * 1024) return 'the CA bundle is larger than 256 KiB';
  const blocks = pem.trim().split(/(?<=-----END CERTIFICATE-----)\s*/).filter((b) => b.trim());
  if (!blocks.length) return 'no certificate in the CA bundle';
  for (const b of blocks) {
    if (!/^-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----$/.test(b.trim())) return 'the CA bundle must hold only PEM certificates';
  }
  return null;
}

/** One PEM private key block (what the Secret normalizer re-encodes tls.key to: PKCS#8). */
export const PRIVATE_KEY_PEM = /^-----BEGIN PRIVATE KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END PRIVATE KEY-----\r?\n?$/;

/**
 * A certificate (chain) and key nginx serves from files (the stream section's TLS termination): PEM certificates
 * only, one PEM private key, and a pair OpenSSL loads together (the key matches the certificate). Whatever fails
 * here is left out before rendering, so `nginx -t` never meets it.
 */
export const servingCertificateSchema = z
  .object({
    cert: z.string().superRefine((c, ctx) => {
      const problem = caBundleProblem(c);
      if (problem) ctx.addIssue({ code: 'custom', message: `the certificate chain: ${problem.replace('the CA bundle', 'it')}` });
    }),
    key: z.string().max(64 * 1024, 'the key is larger than 64 KiB').regex(PRIVATE_KEY_PEM, 'the key is not one PEM private key'),
  })
  .superRefine((v, ctx) => {
    try {
      createSecureContext({ cert: v.cert, key: v.key });
    } catch (e) {
      ctx.addIssue({ code: 'custom', message: `OpenSSL cannot serve this certificate with this key: ${(e as Error).message}` });
    }
  });

/** A DNS name (no wildcard) sent and verified as the server name of TLS to a backend. */
export const backendServerNameSchema = z
  .string()
  .max(253, 'the server name is longer than 253 characters')
  .regex(new RegExp(`^${LABEL}(\\.${LABEL})*$`), 'the server name must be a lower-case DNS name without a wildcard')
  .refine((h) => h.split('.').every((l) => l.length <= 63), 'a label of the server name is longer than 63 characters');

/** A comma-separated list (blanks around items dropped), at most 1024 items of 300 characters; items are checked where they are used. */
export const commaListSchema = z
  .string()
  .transform((v) => v.split(',').map((x) => x.trim()).filter((x) => x.length > 0))
  .pipe(z.array(z.string().max(300, 'an item is longer than 300 characters')).min(1, 'the list is empty').max(1024, 'at most 1024 items'));

/** auth-secret: a Secret name, or "namespace/name" (the namespace is checked against the Ingress's where it is used). */
export const authSecretSchema = z
  .string()
  .trim()
  .regex(/^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\/)?[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, 'must be a Secret name or "namespace/name"');

/** A Basic realm: printable ASCII without quotes or backslashes, at most 128 characters. */
export const realmSchema = z.string().max(128, 'realm is longer than 128 characters').regex(/^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/, 'realm must be printable ASCII without quotes or backslashes');

/**
 * rewrite-target (ingress-nginx): the path sent to the backend, as nginx's `rewrite "(?i)<path>" <target> break`
 * reads it: literal path characters and $1..$9 / ${1}..${9} (the path regex's captures), optionally followed by
 * "?" and a query (the client's query is then appended after it, as nginx does; a final "?" drops it). Anything
 * nginx would read as a variable ($host, $request_uri...) or an absolute URL (nginx would answer with a redirect)
 * is refused.
 */
const TARGET_RE = /^(?:[A-Za-z0-9._~!&()*+,=:@%/-]|\$[1-9]|\$\{[1-9]\})*(?:\?(?:[A-Za-z0-9._~!&()*+,=:@%/?-]|\$[1-9]|\$\{[1-9]\})*)?$/;
export const rewriteTargetSchema = z
  .string()
  .max(2048, 'longer than 2048 characters')
  .refine((t) => t.startsWith('/') || t.startsWith('$'), { message: 'must be a path starting with "/" (or a capture such as $1); absolute URLs are not supported' })
  .refine((t) => TARGET_RE.test(t), {
    message: 'may only contain path characters, $1..$9 or ${1}..${9} (the captures of the path regex) and one "?" before a query; nginx variables such as $host are not supported',
  });

/** app-root (ingress-nginx): a path on the same host ("/app"); absolute URLs are refused as ingress-nginx does. */
export const appRootSchema = z
  .string()
  .max(2048, 'longer than 2048 characters')
  .refine((p) => p.startsWith('/') && !p.startsWith('//'), { message: 'must be a path starting with "/" (ingress-nginx refuses absolute URLs)' })
  .refine((p) => PATH_RE.test(p), { message: 'may only contain letters, digits and - . _ ~ ! & ( ) * + , = : @ % / (a path; no query string)' });

/** One token of an OpenSSL cipher list: [!+-]name(+name)*, @STRENGTH or @SECLEVEL=0-5. */
const CIPHER_TOKEN = /^(?:[!+-]?[A-Za-z0-9][A-Za-z0-9._-]{0,63}(?:\+[A-Za-z0-9][A-Za-z0-9._-]{0,63}){0,7}|@STRENGTH|@SECLEVEL=[0-5])$/;
/** At most this many characters and ":"-separated tokens in a per-host cipher list (ssl-ciphers). */
export const MAX_CIPHER_LIST = 1024;
export const MAX_CIPHER_TOKENS = 64;

/**
 * ssl-ciphers (an Ingress's): an OpenSSL cipher list for TLS ≤ 1.2, ":"-separated tokens of OpenSSL's syntax only
 * (no spaces, commas, quotes or anything else), at most 1024 characters and 64 tokens, that OpenSSL matches at least
 * one cipher of once the TLS 1.3 names (which this list does not set) are left out — the same rule as the handshake's
 * SSL_set_cipher_list, which the data plane calls with it.
 */
export const cipherListSchema = z
  .string()
  .trim()
  .superRefine((v, ctx) => {
    if (v.length > MAX_CIPHER_LIST) return void ctx.addIssue({ code: 'custom', message: `longer than ${MAX_CIPHER_LIST} characters` });
    const tokens = v.split(':');
    if (tokens.length > MAX_CIPHER_TOKENS) return void ctx.addIssue({ code: 'custom', message: `more than ${MAX_CIPHER_TOKENS} ":"-separated entries` });
    const bad = tokens.find((t) => !CIPHER_TOKEN.test(t));
    if (bad !== undefined) return void ctx.addIssue({ code: 'custom', message: `${bad === '' ? 'an empty entry' : JSON.stringify(bad.slice(0, 40))} is not an OpenSSL cipher-list entry (names of letters, digits, ".", "_", "-" joined with "+", optionally after "!", "+" or "-"; @STRENGTH; @SECLEVEL=0-5), entries joined with ":"` });
    const legacy = tokens.filter((t) => !/^[!+-]?TLS_/.test(t));
    let matches = legacy.some((t) => !t.startsWith('@'));
    if (matches) {
      try {
        createSecureContext({ ciphers: legacy.join(':') });
      } catch {
        matches = false;
      }
    }
    if (!matches) ctx.addIssue({ code: 'custom', message: 'OpenSSL matches no TLS 1.2 cipher in this list (TLS 1.3 suites are not set by ssl-ciphers)' });
  });
