// Per-type settings of a Plugin (spec.config, or the Secret named by spec.configFrom). The CRD stores config
// as an opaque object; the controller validates it here and reports the message of `parsePluginConfig` in the
// Plugin's status. Objects are strict (an unknown field is refused, so a typo is reported, not ignored) and
// defaults are applied.
import { isIP } from 'node:net';
import { z } from 'zod';
import {
  duration,
  dnsName,
  headerName,
  headerValue,
  HTTP_METHODS,
  httpMethod,
  port,
  PRINTABLE,
  queryParamName,
  serviceName,
  urlPath,
} from './common.ts';

/** Adds a refinement whose issue is reported on `path` (relative to the object). */
function rule<S extends z.ZodType>(schema: S, check: (v: z.output<S>) => boolean, message: string, path: string[] = []): S {
  return schema.superRefine((v, ctx) => {
    if (!check(v as z.output<S>)) ctx.addIssue({ code: 'custom', message, path });
  }) as unknown as S;
}

const headerList = (max: number) => z.array(headerName()).max(max);

/** An IPv4 or IPv6 address with an optional prefix length (/0-32, /0-128), as nginx allow/deny take it. */
export function isCidr(s: string): boolean {
  const slash = s.indexOf('/');
  const addr = slash < 0 ? s : s.slice(0, slash);
  if (addr.includes('%')) return false; // zone ids mean nothing to allow/deny
  const family = isIP(addr);
  if (family === 0) return false;
  if (slash < 0) return true;
  const len = s.slice(slash + 1);
  if (!/^(0|[1-9][0-9]{0,2})$/.test(len)) return false;
  return Number(len) <= (family === 4 ? 32 : 128);
}
const cidr = () => z.string().max(64).refine(isCidr, 'must be an IPv4 or IPv6 address with an optional prefix length (e.g. 10.0.0.0/8, 2001:db8::/32)');

// ---- rate-limit ----

export const rateLimitConfigSchema = rule(
  rule(
    z.strictObject({
      type: z.literal('rate-limit'),
      requestsPerSecond: z.int().min(1).max(1_000_000).optional(),
      requestsPerMinute: z.int().min(1).max(100_000_000).optional(),
      burst: z.int().min(0).max(1_000_000).default(0),
      by: z.enum(['ip', 'consumer', 'header']).default('ip'),
      header: headerName().optional(),
      status: z.int().min(400).max(599).default(429),
      exempt: z.array(cidr()).max(1024).optional(),
    }),
    (c) => (c.requestsPerSecond === undefined) !== (c.requestsPerMinute === undefined),
    'set exactly one of requestsPerSecond and requestsPerMinute',
    ['requestsPerSecond'],
  ),
  (c) => (c.by === 'header') === (c.header !== undefined),
  'header is required with by: header and only allowed with it',
  ['header'],
);

// ---- key-auth / basic-auth ----

export const keyAuthConfigSchema = z.strictObject({
  type: z.literal('key-auth'),
  header: headerName().default('apikey'),
  query: queryParamName().optional(),
  hideCredentials: z.boolean().default(true),
});

export const basicAuthConfigSchema = z.strictObject({
  type: z.literal('basic-auth'),
  realm: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[ !#-[\]-~]+$/, 'must be printable ASCII without quotes or backslashes')
    .default('portico'),
  hideCredentials: z.boolean().default(true),
});

// ---- ip-restriction ----


export const ipRestrictionConfigSchema = rule(
  z.strictObject({
    type: z.literal('ip-restriction'),
    allow: z.array(cidr()).max(1024).optional(),
    deny: z.array(cidr()).max(1024).optional(),
    status: z.int().min(400).max(599).default(403),
  }),
  (c) => (c.allow?.length ?? 0) + (c.deny?.length ?? 0) > 0,
  'set allow or deny (a non-empty list of addresses)',
  ['allow'],
);

// ---- cors ----

const ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/(\*\.)?[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*(:[0-9]{1,5})?$/;
function isOrigin(o: string): boolean {
  if (o === '*') return true;
  if (!ORIGIN.test(o)) return false;
  const port = /:([0-9]+)$/.exec(o)?.[1];
  return port === undefined || (Number(port) >= 1 && Number(port) <= 65535);
}
const origin = () => z.string().max(300).refine(isOrigin, 'must be "*", "scheme://host[:port]" or "scheme://*.domain" (lower-case)');

export const corsConfigSchema = rule(
  z.strictObject({
    type: z.literal('cors'),
    allowOrigins: z.array(origin()).min(1).max(256),
    allowMethods: z.array(httpMethod()).min(1).max(HTTP_METHODS.length).default(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']),
    allowHeaders: headerList(64).optional(),
    exposeHeaders: headerList(64).optional(),
    allowCredentials: z.boolean().default(false),
    maxAge: z.int().min(0).max(86400 * 30).default(86400),
  }),
  (c) => !(c.allowCredentials && c.allowOrigins.includes('*')),
  'allowCredentials cannot be used with the "*" origin (browsers refuse it); list the origins',
  ['allowCredentials'],
);

// ---- request-headers / response-headers ----

const headerSetting = () => z.strictObject({ name: headerName(), value: headerValue() });
/** Headers that frame the message or the connection: no plugin changes them (the data plane refuses them too). */
const FRAMING = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'proxy-connection']);
/** Request headers nginx owns for the proxied request. */
const REQUEST_ONLY = new Set(['host', 'expect']);
const headerChanges = <T extends string>(type: T) =>
  rule(
    rule(
      z.strictObject({
        type: z.literal(type),
        set: z.array(headerSetting()).max(64).optional(),
        add: z.array(headerSetting()).max(64).optional(),
        remove: headerList(64).optional(),
      }),
      (c) => (c.set?.length ?? 0) + (c.add?.length ?? 0) + (c.remove?.length ?? 0) > 0,
      'set at least one of set, add, remove (non-empty)',
      ['set'],
    ),
    (c) =>
      [...(c.set ?? []).map((h) => h.name), ...(c.add ?? []).map((h) => h.name), ...(c.remove ?? [])].every((n) => {
        const l = n.toLowerCase();
        return !FRAMING.has(l) && !(type === 'request-headers' && REQUEST_ONLY.has(l));
      }),
    type === 'request-headers' ? 'framing headers (Content-Length, Transfer-Encoding, Connection…) and Host or Expect cannot be changed' : 'framing headers (Content-Length, Transfer-Encoding, Connection…) cannot be changed',
    ['set'],
  );
export const requestHeadersConfigSchema = headerChanges('request-headers');
export const responseHeadersConfigSchema = headerChanges('response-headers');

// ---- external-auth ----

export const externalAuthConfigSchema = z.strictObject({
  type: z.literal('external-auth'),
  service: z.strictObject({ name: serviceName(), port: port() }),
  path: urlPath().default('/'),
  method: z.enum(['GET', 'POST', 'HEAD']).default('GET'),
  forwardHeaders: headerList(64).optional(),
  upstreamHeaders: headerList(64).optional(),
  clientHeaders: headerList(64).optional(),
  timeout: duration().default('5s'),
});

// ---- redirect / rewrite ----

const prefixChange = () => z.strictObject({ from: urlPath(), to: urlPath() });

export const redirectConfigSchema = rule(
  rule(
    z.strictObject({
      type: z.literal('redirect'),
      statusCode: z.union([z.literal(301), z.literal(302), z.literal(303), z.literal(307), z.literal(308)], { error: 'must be one of 301, 302, 303, 307, 308' }).default(302),
      scheme: z.enum(['http', 'https']).optional(),
      hostname: dnsName().optional(),
      port: port().optional(),
      path: urlPath().optional(),
      prefix: prefixChange().optional(),
      keepQuery: z.boolean().default(true),
    }),
    (c) => !(c.path !== undefined && c.prefix !== undefined),
    'set path or prefix, not both',
    ['prefix'],
  ),
  (c) => [c.scheme, c.hostname, c.port, c.path, c.prefix].some((v) => v !== undefined),
  'set at least one of scheme, hostname, port, path, prefix',
);

export const rewriteConfigSchema = rule(
  rule(
    z.strictObject({
      type: z.literal('rewrite'),
      path: urlPath().optional(),
      prefix: prefixChange().optional(),
      regex: z
        .strictObject({
          pattern: z.string().min(1).max(1024).regex(PRINTABLE, 'must be printable ASCII'),
          replacement: z.string().max(1024).regex(PRINTABLE, 'must be printable ASCII'),
        })
        .optional(),
      host: dnsName().optional(),
    }),
    (c) => [c.path, c.prefix, c.regex].filter((v) => v !== undefined).length <= 1,
    'set at most one of path, prefix, regex',
    ['path'],
  ),
  (c) => [c.path, c.prefix, c.regex, c.host].some((v) => v !== undefined),
  'set at least one of path, prefix, regex, host',
);

// ---- the list: one line per plugin a Plugin object may configure ----
// Its `type` literals are the CRD's spec.type enum (PLUGIN_TYPES), in this order. Each type is also a Lua plugin
// (PLUGIN_ORDER in reconcilers/config/types.ts, nginx-assets/lua/portico/plugins/registry.lua) and has a case in
// pluginInstanceOf (reconcilers/crds/normalize.ts), which turns the validated settings into what Lua runs.

export const PLUGIN_CONFIG_SCHEMAS = [
  rateLimitConfigSchema,
  keyAuthConfigSchema,
  basicAuthConfigSchema,
  ipRestrictionConfigSchema,
  corsConfigSchema,
  requestHeadersConfigSchema,
  responseHeadersConfigSchema,
  externalAuthConfigSchema,
  redirectConfigSchema,
  rewriteConfigSchema,
] as const;

type TypeOf<S> = S extends { shape: { type: z.ZodLiteral<infer T> } } ? T : never;
type TypesOf<L extends readonly unknown[]> = { readonly [K in keyof L]: TypeOf<L[K]> };
/** The plugin types a Plugin object may have (spec.type), from PLUGIN_CONFIG_SCHEMAS. */
export const PLUGIN_TYPES = PLUGIN_CONFIG_SCHEMAS.map((s) => s.shape.type.value) as unknown as TypesOf<typeof PLUGIN_CONFIG_SCHEMAS>;
export type PluginType = (typeof PLUGIN_TYPES)[number];

export const pluginConfigSchema = z.discriminatedUnion('type', PLUGIN_CONFIG_SCHEMAS);

export type RateLimitConfig = z.output<typeof rateLimitConfigSchema>;
export type KeyAuthConfig = z.output<typeof keyAuthConfigSchema>;
export type BasicAuthConfig = z.output<typeof basicAuthConfigSchema>;
export type IpRestrictionConfig = z.output<typeof ipRestrictionConfigSchema>;
export type CorsConfig = z.output<typeof corsConfigSchema>;
export type RequestHeadersConfig = z.output<typeof requestHeadersConfigSchema>;
export type ResponseHeadersConfig = z.output<typeof responseHeadersConfigSchema>;
export type ExternalAuthConfig = z.output<typeof externalAuthConfigSchema>;
export type RedirectConfig = z.output<typeof redirectConfigSchema>;
export type RewriteConfig = z.output<typeof rewriteConfigSchema>;
export type PluginConfig = z.output<typeof pluginConfigSchema>;

export type ParsedPluginConfig = { ok: true; config: PluginConfig } | { ok: false; error: string };

/** `config.a[0].b` for an issue path. */
function pathText(path: PropertyKey[]): string {
  return path.reduce<string>((s, p) => (typeof p === 'number' ? `${s}[${p}]` : `${s}.${String(p)}`), 'config');
}

/**
 * Validates a Plugin's config for its type and applies defaults. The error is one line naming the field:
 * `config.requestsPerSecond: set exactly one of requestsPerSecond and requestsPerMinute` (several problems are
 * joined with "; ").
 */
export function parsePluginConfig(type: string, config: unknown): ParsedPluginConfig {
  if (!(PLUGIN_TYPES as readonly string[]).includes(type)) return { ok: false, error: `type: unknown plugin type ${JSON.stringify(type)} (one of ${PLUGIN_TYPES.join(', ')})` };
  const input = config ?? {};
  if (typeof input !== 'object' || Array.isArray(input)) return { ok: false, error: 'config: must be an object' };
  if ('type' in input) return { ok: false, error: 'config.type: not a setting (the type is spec.type)' };
  const r = pluginConfigSchema.safeParse({ ...input, type: type as PluginType });
  if (r.success) return { ok: true, config: r.data };
  const messages = r.error.issues.flatMap((i) =>
    i.code === 'unrecognized_keys'
      ? i.keys.map((k) => `${pathText([...i.path, k])}: unknown field`)
      : [`${pathText(i.path)}: ${i.message}`],
  );
  return { ok: false, error: messages.join('; ') };
}
