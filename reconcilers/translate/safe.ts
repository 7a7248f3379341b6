// The alphabet of everything that can reach nginx.conf. Each schema rejects rather than repairs, with a message
// that tells the user exactly what is wrong. The renderer additionally escapes every value it emits.
import { z } from 'zod';

const LABEL = '[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?';
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
 * Regex paths (use-regex): PCRE for nginx `location ~*`. Allowed: path characters plus regex operators. Braces are
 * allowed only as counted repetition `{n}` / `{n,m}` (the renderer quotes the whole regex, so nginx never sees a
 * block brace). No quotes, backslash escapes other than \. \d \w \s \/ \-, no whitespace, no `$` except as the
 * final anchor.
 */
export const regexPathSchema = z
  .string()
  .max(1024, 'regex path is longer than 1024 characters')
  .refine((p) => p.startsWith('/') || p.startsWith('^/'), { message: 'regex path must start with "/" or "^/"' })
  .refine((p) => /^[\^]?\/[A-Za-z0-9._~!&()*+,=:@%/\-[\]|?^{}\\]*\$?$/.test(p), {
    message: 'regex path contains a character Portico does not allow (quotes, spaces, ;, #, or $ before the end)',
  })
  .refine((p) => !/\\[^.dwsDWS/\-()[\]]/.test(p), { message: 'only \\. \\d \\w \\s \\/ \\- \\( \\) \\[ \\] escapes are allowed in regex paths' })
  .refine((p) => !/\{(?!\d+(,\d*)?\})/.test(p) && !/(^|[^\d,])\}/.test(p), {
    message: 'braces in regex paths are only allowed as counted repetition like {2} or {2,5}',
  })
  .refine(
    (p) => {
      try {
        new RegExp(p);
        return true;
      } catch {
        return false;
      }
    },
    { message: 'regex path does not compile' },
  );

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

/** Log format: literal text and $variables; no quotes, braces, semicolons, backslashes or control characters. */
export const logFormatSchema = z
  .string()
  .max(2048, 'log format is longer than 2048 characters')
  .regex(/^[A-Za-z0-9 $_.,:;/\-[\]()|=@+*#<>!?%&^~]*$/, 'log format may contain text and $variables only (no quotes, braces, backslashes or newlines)')
  .refine((v) => !v.includes(';'), { message: 'log format may not contain ";"' });

/** load-balance values (consistent hashing and affinity have their own annotations, as in ingress-nginx). */
export const loadBalanceSchema = z.enum(['round_robin', 'ewma'], {
  error: () => 'load-balance must be round_robin or ewma',
});

/** Backend ids are built by Portico from validated names; this re-checks them at the boundary to nginx. */
export const backendIdSchema = z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,300}$/, 'invalid backend id');

/** Converts a zod error into one readable line. */
export function zodMessage(e: z.ZodError): string {
  return e.issues.map((i) => i.message).join('; ');
}

export const cookieNameSchema = z.string().trim().regex(/^[A-Za-z0-9_-]{1,64}$/, 'cookie name may contain letters, digits, "_" and "-" (at most 64)');
export const affinitySchema = z.enum(['cookie'], { error: () => 'affinity supports "cookie"' });
export const affinityModeSchema = z.enum(['balanced', 'persistent'], { error: () => 'affinity-mode must be balanced or persistent' });

export const headerNameSchema = z.string().trim().regex(/^[A-Za-z0-9-]{1,64}$/, 'header name may contain letters, digits and "-" (at most 64)');
export const headerValueSchema = z.string().max(256, 'header value is longer than 256 characters').regex(/^[\x20-\x7e]*$/, 'header value must be printable ASCII');
/** A regex matched in Lua (PCRE, compiled once): a conservative alphabet and length keep it cheap. */
export const headerPatternSchema = z
  .string()
  .max(128, 'header pattern is longer than 128 characters')
  .regex(/^[A-Za-z0-9 .*+?^$|()[\]_,:;=\/-]*$/, 'header pattern may only use letters, digits and . * + ? ^ $ | ( ) [ ] _ , : ; = / -')
  .refine((v) => { try { new RegExp(v); return true; } catch { return false; } }, { message: 'header pattern does not compile' });
