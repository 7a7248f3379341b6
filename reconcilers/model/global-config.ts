// The controller ConfigMap (--configmap): one row per key with schema, default and meaning. A bad value keeps the
// previous value of that key and is reported; the README reference is generated from this table.
import { isIP } from 'node:net';
import { z } from 'zod';
import type { GlobalSettings } from '../config/types.ts';
import { boolSchema, intSchema, loadBalanceSchema, logFormatSchema, secondsSchema, sizeSchema, zodMessage } from '../translate/safe.ts';
import { RISKS, type Risk } from '../annotations/table.ts';

export type GlobalConfigValues = Omit<GlobalSettings, 'listen' | 'workerShutdownTimeoutSeconds'> & {
  loadBalance: 'round_robin' | 'ewma';
  workerShutdownTimeoutSeconds: number;
  /** Status of requests refused by the limit-rps / limit-rpm annotations (ingress-nginx's limit-req-status-code). */
  limitReqStatusCode: number;
  /** ingress-nginx's allow-snippet-annotations: the snippet annotations are refused unless true. */
  allowSnippetAnnotations: boolean;
  /** ingress-nginx's annotations-risk-level: annotations of a higher risk are refused (reconcilers/annotations/risk.ts). */
  annotationsRiskLevel: Risk;
  /**
   * ingress-nginx's global external authentication (global-auth-*), kept as written: the translation validates
   * them together (reconcilers/annotations/plugins.ts globalAuthSpec), so an invalid one fails the Ingresses it
   * applies to closed instead of keeping an older value or none.
   */
  globalAuthUrl: string;
  globalAuthMethod: string;
  globalAuthSignin: string;
  globalAuthSigninRedirectParam: string;
  globalAuthResponseHeaders: string;
  globalAuthRequestRedirect: string;
  globalAuthCacheKey: string;
  globalAuthCacheDuration: string;
  globalAuthAlwaysSetCookie: string;
  globalAuthSnippet: string;
  /** no-auth-locations: Ingress paths starting with one of these get no authentication. */
  noAuthLocations: string[];
};

/** A global-auth-* key: any text is accepted here (checked by the translation, which fails closed). */
const rawText = z.string().transform((v) => v.trim());
const locationList = z.string().transform((v) => v.split(',').map((x) => x.trim()).filter(Boolean));

/** Low, Medium, High or Critical, as ingress-nginx spells them (any case). */
const riskLevelSchema = z
  .string()
  .trim()
  .transform((v) => v.toLowerCase())
  .refine((v): v is Risk => (RISKS as readonly string[]).includes(v), { message: 'expected Low, Medium, High or Critical' })
  .transform((v) => v as Risk);

interface Key<F extends keyof GlobalConfigValues> {
  field: F;
  schema: z.ZodType<GlobalConfigValues[F], string>;
  default: GlobalConfigValues[F];
  description: string;
}
const key = <F extends keyof GlobalConfigValues>(
  field: F,
  schema: z.ZodType<GlobalConfigValues[F], string>,
  dflt: GlobalConfigValues[F],
  description: string,
): Key<F> => ({ field, schema, default: dflt, description });

const workerProcesses = z
  .string()
  .trim()
  .refine((v) => v === 'auto' || /^\d{1,3}$/.test(v), { message: 'expected "auto" or a number of processes' })
  .transform((v) => (v === 'auto' ? ('auto' as const) : Math.max(1, Number.parseInt(v, 10))));

/**
 * lua-shared-dicts (ingress-nginx's format): "name: size, name: size", the size in MB, or with a k or m suffix.
 * Portico's zones answer to ingress-nginx's names (configuration_data, certificate_data) and to their own
 * (portico_data, portico_certs); each from 1 MB to 1 GB. A zone that is not named keeps its default.
 */
const SHARED_DICT_FIELDS: Record<string, 'dataKb' | 'certsKb'> = {
  configuration_data: 'dataKb',
  portico_data: 'dataKb',
  certificate_data: 'certsKb',
  portico_certs: 'certsKb',
};
export const DEFAULT_LUA_SHARED_DICTS = { dataKb: 128 * 1024, certsKb: 32 * 1024 };
export const luaSharedDictsSchema = z.string().transform((v, ctx) => {
  const out = { ...DEFAULT_LUA_SHARED_DICTS };
  for (const part of v.split(',')) {
    const item = part.trim();
    if (!item) continue;
    const m = /^([a-z_]{1,64})\s*:\s*(\d{1,7})\s*([kKmM]?)$/.exec(item);
    const field = m ? SHARED_DICT_FIELDS[m[1] as string] : undefined;
    if (!m || !field) {
      ctx.addIssue({
        code: 'custom',
        message: m
          ? `unknown shared dict "${m[1]}": Portico has configuration_data and certificate_data (also accepted as portico_data and portico_certs)`
          : `"${item.slice(0, 60)}": expected "name: size" with the size in MB, or with a k or m suffix`,
      });
      return z.NEVER;
    }
    const n = Number(m[2]);
    const kb = m[3] === 'k' || m[3] === 'K' ? n : n * 1024;
    if (kb < 1024 || kb > 1024 * 1024) {
      ctx.addIssue({ code: 'custom', message: `${m[1]}: the size must be between 1 MB and 1 GB` });
      return z.NEVER;
    }
    out[field] = kb;
  }
  return out;
});

/** proxy-real-ip-cidr: comma-separated IPv4/IPv6 addresses or CIDRs of trusted proxies (at most 64). */
export const realIpCidrSchema = z.string().transform((v, ctx) => {
  const out: string[] = [];
  for (const part of v.split(',')) {
    const item = part.trim();
    if (!item) continue;
    const m = /^([0-9a-fA-F.:]{2,45})(?:\/(\d{1,3}))?$/.exec(item);
    const family = m ? isIP(m[1] as string) : 0;
    if (!m || !family || (m[2] !== undefined && Number(m[2]) > (family === 4 ? 32 : 128))) {
      ctx.addIssue({ code: 'custom', message: `"${item.slice(0, 60)}" is not an IP address or CIDR` });
      return z.NEVER;
    }
    out.push(item);
  }
  if (out.length > 64) {
    ctx.addIssue({ code: 'custom', message: 'at most 64 trusted proxy CIDRs' });
    return z.NEVER;
  }
  return out;
});

export const CONFIG_KEYS = {
  'proxy-body-size': key('proxyBodySize', sizeSchema, '1m', 'Maximum request body size (client_max_body_size)'),
  'proxy-connect-timeout': key('proxyConnectTimeoutSeconds', secondsSchema, 5, 'Upstream connect timeout (s)'),
  'proxy-read-timeout': key('proxyReadTimeoutSeconds', secondsSchema, 60, 'Upstream read timeout (s)'),
  'proxy-send-timeout': key('proxySendTimeoutSeconds', secondsSchema, 60, 'Upstream send timeout (s)'),
  'keep-alive': key('keepAliveSeconds', secondsSchema, 75, 'Client keep-alive timeout (s)'),
  'keep-alive-requests': key('keepAliveRequests', intSchema(1, 10_000_000), 1000, 'Requests per client keep-alive connection'),
  'worker-processes': key('workerProcesses', workerProcesses, 'auto', 'nginx worker processes ("auto" = one per core)'),
  'worker-shutdown-timeout': key('workerShutdownTimeoutSeconds', secondsSchema, 240, 'How long old workers may finish requests after a reload (s)'),
  'use-forwarded-headers': key('useForwardedHeaders', boolSchema, false, 'Trust incoming X-Forwarded-* headers (set when behind another L7 proxy)'),
  'log-format-upstream': key('logFormatUpstream', logFormatSchema, '', 'Access log format (text and $variables); empty = Portico default'),
  'load-balance': key('loadBalance', loadBalanceSchema, 'round_robin', 'Default balancing algorithm: round_robin or ewma (latency-aware)'),
  'limit-req-status-code': key('limitReqStatusCode', intSchema(400, 599), 503, 'Status for requests over the limit-rps / limit-rpm annotations (Plugin objects set their own, default 429)'),
  'ssl-redirect': key('sslRedirect', boolSchema, true, 'Redirect HTTP to HTTPS for hosts with TLS'),
  hsts: key('hsts', boolSchema, true, 'Send Strict-Transport-Security on HTTPS responses'),
  'hsts-max-age': key('hstsMaxAgeSeconds', intSchema(0, 1_000_000_000), 31536000, 'HSTS max-age (s)'),
  'hsts-include-subdomains': key('hstsIncludeSubdomains', boolSchema, true, 'HSTS includeSubDomains'),
  'hsts-preload': key('hstsPreload', boolSchema, false, 'HSTS preload'),
  'lua-shared-dicts': key('luaSharedDicts', luaSharedDictsSchema, DEFAULT_LUA_SHARED_DICTS, 'Shared memory for backends and certificates, e.g. "configuration_data: 256, certificate_data: 64" (MB, or k/m suffix; 1 MB–1 GB). A full zone refuses writes (logged, counted), never evicts'),
  'allow-snippet-annotations': key('allowSnippetAnnotations', boolSchema, false, 'Allow the configuration-snippet / server-snippet annotations (as ingress-nginx ≥ 1.9, off by default); they also need annotations-risk-level: Critical. Snippets are parsed and compiled from an allowlist, never pasted into nginx.conf'),
  'annotations-risk-level': key('annotationsRiskLevel', riskLevelSchema, 'high', 'Low, Medium, High or Critical (ingress-nginx ≥ 1.12; default High): annotations of a higher risk (see the annotation table) are refused with a RiskyAnnotation Warning and not applied; refused access control fails the Ingress closed'),
  'global-auth-url': key('globalAuthUrl', rawText, '', 'External authentication for every Ingress (as the auth-url annotation: an http(s) URL, a Service DNS name goes to its endpoints) unless it sets enable-global-auth: "false" or its own auth-url. An invalid value in any global-auth-* key makes every Ingress it applies to fail closed (503)'),
  'global-auth-method': key('globalAuthMethod', rawText, '', 'Method of the global auth subrequest (as auth-method)'),
  'global-auth-signin': key('globalAuthSignin', rawText, '', 'Sign-in URL the client is redirected to on 401 (as auth-signin)'),
  'global-auth-signin-redirect-param': key('globalAuthSigninRedirectParam', rawText, '', 'Query parameter of global-auth-signin carrying the original URL (default rd)'),
  'global-auth-response-headers': key('globalAuthResponseHeaders', rawText, '', 'Headers copied from the auth response onto the proxied request (as auth-response-headers)'),
  'global-auth-request-redirect': key('globalAuthRequestRedirect', rawText, '', 'X-Auth-Request-Redirect value (as auth-request-redirect)'),
  'global-auth-cache-key': key('globalAuthCacheKey', rawText, '', 'Cache key of global auth answers (as auth-cache-key); cached per host'),
  'global-auth-cache-duration': key('globalAuthCacheDuration', rawText, '', 'Cache durations per status (as auth-cache-duration; default "200 202 401 5m")'),
  'global-auth-always-set-cookie': key('globalAuthAlwaysSetCookie', rawText, '', '"true": send the auth response\'s Set-Cookie with every answer (as auth-always-set-cookie)'),
  'global-auth-snippet': key('globalAuthSnippet', rawText, '', 'Not supported: set, it makes every Ingress under global auth fail closed (its directives are not compiled into the auth subrequest)'),
  'no-auth-locations': key('noAuthLocations', locationList, ['/.well-known/acme-challenge'], 'Comma-separated path beginnings: Ingress paths that start with one get no external or basic authentication (compared with the path as written in the Ingress, as ingress-nginx does)'),
  'proxy-real-ip-cidr': key('proxyRealIpCidr', realIpCidrSchema, [], 'With use-forwarded-headers: comma-separated CIDRs of the proxies trusted to set X-Forwarded-*; empty = none (ingress-nginx trusts 0.0.0.0/0)'),
} as const;

export type ConfigKey = keyof typeof CONFIG_KEYS;

export function defaultGlobalConfig(): GlobalConfigValues {
  const out: Record<string, unknown> = {};
  for (const k of Object.values(CONFIG_KEYS)) out[k.field] = k.default;
  return out as GlobalConfigValues;
}

export interface GlobalConfigResult {
  values: GlobalConfigValues;
  errors: { key: string; message: string }[];
  unknown: string[];
}

/**
 * Parses ConfigMap data over `previous`: a key that is absent takes its default; a key with a bad value keeps its
 * previous value and is reported.
 */
export function parseGlobalConfig(data: Record<string, string> | undefined, previous: GlobalConfigValues): GlobalConfigResult {
  const values = defaultGlobalConfig() as Record<string, unknown>;
  const errors: GlobalConfigResult['errors'] = [];
  const d = data ?? {};
  for (const [name, k] of Object.entries(CONFIG_KEYS)) {
    const raw = d[name];
    if (raw === undefined) continue;
    const r = (k.schema as z.ZodType).safeParse(raw);
    if (r.success) values[k.field] = r.data;
    else {
      values[k.field] = previous[k.field];
      errors.push({ key: name, message: `${name}=${JSON.stringify(raw.slice(0, 100))}: ${zodMessage(r.error)}; keeping ${JSON.stringify(previous[k.field])}` });
    }
  }
  const unknown = Object.keys(d).filter((n) => !(n in CONFIG_KEYS)).sort();
  return { values: values as GlobalConfigValues, errors, unknown };
}

export function configReferenceMarkdown(): string {
  const rows = Object.entries(CONFIG_KEYS).map(
    ([n, k]) => `| \`${n}\` | \`${JSON.stringify(k.default)}\` | ${k.description} |`,
  );
  return ['| key | default | meaning |', '|---|---|---|', ...rows].join('\n');
}
