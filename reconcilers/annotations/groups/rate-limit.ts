// Rate limits per client IP: limit-rps / limit-rpm (+ limit-burst-multiplier, limit-allowlist) → the rate-limit
// plugin; limit-connections → conn-limit; both answer with the ConfigMap's status code, which the translation passes
// to the instance builders. limit-rate / limit-rate-after (bandwidth) are directive-profile settings.
// global-rate-limit + -window (+ -key, -ignored-cidrs) → the rate-limit plugin with policy redis: one counter per key
// per Ingress (all its paths together, as ingress-nginx), shared by every replica through the ConfigMap's Redis.
import { z } from 'zod';
import type { PluginConfig } from '../../../crds/schema/index.ts';
import type { PluginInstance } from '../../config/types.ts';
import { keyTemplateParts, windowSeconds } from '../../config/plugins/rate-limit.ts';
import { addConfigPlugin, emptyApplied, NGINX_PREFIX, row, type Applied, type ConfigPlugin, type Values } from '../group.ts';
import { commaListSchema, intSchema } from '../../values/safe.ts';

/** global-rate-limit-window: a Go duration ("1m", "30s", "1h"), whole seconds, 1s to 168h. */
const windowSchema = z
  .string()
  .trim()
  .transform((v, ctx) => {
    const r = windowSeconds(v);
    if ('error' in r) {
      ctx.addIssue({ code: 'custom', message: r.error });
      return z.NEVER;
    }
    return r.seconds;
  });

/** global-rate-limit-key: text and allowlisted nginx variables (the template as written; checked here). */
const keySchema = z
  .string()
  .trim()
  .superRefine((v, ctx) => {
    const r = keyTemplateParts(v);
    if ('error' in r) ctx.addIssue({ code: 'custom', message: r.error });
  });

export const rows = {
  'limit-rps': row(intSchema(1, 1_000_000), 'ingress', 'low', 'Requests per second per client IP, burst limit-rps × limit-burst-multiplier; over it: 503 (rate-limit plugin, counters per node)'),
  'limit-rpm': row(intSchema(1, 100_000_000), 'ingress', 'low', 'Requests per minute per client IP, burst limit-rpm × limit-burst-multiplier; over it: 503'),
  'limit-burst-multiplier': row(intSchema(1, 1000), 'ingress', 'low', 'Burst of limit-rps / limit-rpm as a multiple of the rate (default 5)'),
  'limit-whitelist': row(commaListSchema, 'ingress', 'low', 'Client CIDRs never rate limited (comma-separated; older name of limit-allowlist)'),
  'limit-allowlist': row(commaListSchema, 'ingress', 'low', 'Client CIDRs never rate limited (comma-separated); wins over limit-whitelist'),
  'limit-connections': row(intSchema(1, 1_000_000), 'location', 'low', 'Requests of one client IP in progress at once on this Ingress; over it: the ConfigMap\'s limit-conn-status-code (503). limit-allowlist exempts clients. Counted per node in shared memory, per request (nginx counts connections with a request in progress: the same for HTTP/1)', { difference: 'counts requests in progress, not connections: an HTTP/2 client with many streams is limited per stream' }),
  'limit-rate': row(intSchema(0, 10_000_000), 'location', 'low', 'Kilobytes per second sent to one client connection (limit_rate); 0 = unlimited (default). nginx rate-limits only buffered responses: the paths get proxy buffering on, unless the Ingress sets proxy-buffering "off" (then a Warning says the limit has no effect)', { difference: 'turns proxy buffering on for its paths (with ingress-nginx\'s default proxy-buffering "off" nginx would not limit at all)' }),
  'limit-rate-after': row(intSchema(0, 100_000_000), 'location', 'low', 'Kilobytes of a response sent at full speed before limit-rate applies (limit_rate_after); default 0'),
  'global-rate-limit': row(intSchema(1, 1_000_000_000), 'ingress', 'low', 'Requests per global-rate-limit-window per key, counted across every Portico replica in the ConfigMap\'s Redis (global-rate-limit-redis-host); one counter per key for all the Ingress\'s paths; over it: the ConfigMap\'s global-rate-limit-status-code (429) with Retry-After. Needs global-rate-limit-window. Redis unreachable: let through (global-rate-limit-redis-fail-open) and counted', {
    difference: 'counters in Redis (the ConfigMap\'s global-rate-limit-redis-*), not memcached; refusals carry Retry-After',
    removed: true,
  }),
  'global-rate-limit-window': row(windowSchema, 'ingress', 'low', 'The window of global-rate-limit: a duration such as "1m", "30s" or "1h" (whole seconds, 1s to 168h); ingress-nginx\'s sliding window (the previous window counts by the share of it still inside the last `window` seconds)', { removed: true }),
  'global-rate-limit-key': row(keySchema, 'ingress', 'high', 'What global-rate-limit counts per: text and nginx variables, e.g. "${remote_addr}-${http_x_api_client}" (default $remote_addr; a key that comes out empty counts by client address). Variables: $remote_addr, $binary_remote_addr, $realip_remote_addr, $remote_user, $host, $server_name, $server_port, $scheme, $request_method, $uri, $request_uri, $args, $ssl_client_s_dn, $ssl_client_fingerprint, $http_<header>, $cookie_<name>, $arg_<name>; a key longer than 64 bytes is hashed', {
    difference: 'only the listed variables (ingress-nginx took any nginx variable); text of letters, digits and . _ : / @ , ; = + -',
    removed: true,
  }),
  'global-rate-limit-ignored-cidrs': row(commaListSchema, 'ingress', 'medium', 'Client CIDRs global-rate-limit never counts nor limits (comma-separated)', { removed: true }),
};

/** limit-connections: requests in progress per client address; the translation passes the ConfigMap's status. */
export interface ConnLimitPlugin {
  suffix: 'conn';
  connLimit: { limit: number; exempt?: string[] };
}

/** ingress-nginx's limit-req-status-code default; the instance builder applies the ConfigMap's value. */
const LIMIT_STATUS = 503;

/**
 * limit-rps / limit-rpm → rate-limit per client IP; limit-connections → conn-limit per client IP. limit-allowlist
 * (limit-whitelist, its older name) exempts clients from both. limit-rate with proxy-buffering "off" is reported.
 */
export function rateLimitPlugins(v: Values<typeof rows> & { 'proxy-buffering'?: boolean }): Applied<ConfigPlugin | ConnLimitPlugin> {
  const out = emptyApplied<ConfigPlugin | ConnLimitPlugin>();
  const problems = out.problems;
  const mult = v['limit-burst-multiplier'] ?? 5;
  const exemptName = v['limit-allowlist'] !== undefined ? 'limit-allowlist' : 'limit-whitelist';
  const exempt = v[exemptName];
  for (const [suffix, name, key] of [['rps', 'limit-rps', 'requestsPerSecond'], ['rpm', 'limit-rpm', 'requestsPerMinute']] as const) {
    const rate = v[name];
    if (rate === undefined) continue;
    addConfigPlugin(out as Applied<ConfigPlugin>, suffix, 'rate-limit', { [key]: rate, burst: Math.min(rate * mult, 1_000_000), by: 'ip', status: LIMIT_STATUS, ...(exempt ? { exempt } : {}) }, [name, ...(exempt ? [exemptName] : [])], null);
  }
  // limit-connections: ingress-nginx's limit_conn per client address; limit-allowlist exempts clients from it too
  // (its allowlist empties the key of every limit zone).
  globalRateLimit(v, out as Applied<ConfigPlugin>);
  const conns = v['limit-connections'];
  if (conns !== undefined) {
    out.plugins.push({ suffix: 'conn', connLimit: { limit: conns, ...(exempt ? { exempt } : {}) } });
  }
  if (v['limit-rps'] === undefined && v['limit-rpm'] === undefined && conns === undefined) {
    const stray = ['limit-burst-multiplier', 'limit-whitelist', 'limit-allowlist'].filter((n) => (v as Record<string, unknown>)[n] !== undefined);
    if (stray.length) problems.push(`annotation ignored: ${stray.map((n) => `${NGINX_PREFIX}${n}`).join(', ')}: has no effect without ${NGINX_PREFIX}limit-rps, limit-rpm or limit-connections`);
  }
  // nginx does not rate-limit unbuffered responses: limit-rate with proxy-buffering "off" cannot be applied.
  if (v['limit-rate'] !== undefined && v['proxy-buffering'] === false) {
    const which = (['limit-rate', 'limit-rate-after'] as const).filter((n) => v[n] !== undefined).map((n) => `${NGINX_PREFIX}${n}`).join(', ');
    problems.push(`annotation ignored: ${which}: nginx does not rate-limit responses it does not buffer, and this Ingress sets proxy-buffering: "off"`);
  }
  return out;
}

/**
 * global-rate-limit + global-rate-limit-window (both needed, as in ingress-nginx; one without the other is
 * reported, never silently dropped) → rate-limit with policy redis, suffix "grl".
 */
function globalRateLimit(v: Values<typeof rows>, out: Applied<ConfigPlugin>): void {
  const limit = v['global-rate-limit'];
  const win = v['global-rate-limit-window'];
  const key = v['global-rate-limit-key'];
  const cidrs = v['global-rate-limit-ignored-cidrs'];
  if (limit === undefined || win === undefined) {
    const set = (['global-rate-limit', 'global-rate-limit-window', 'global-rate-limit-key', 'global-rate-limit-ignored-cidrs'] as const).filter((n) => v[n] !== undefined);
    if (set.length) out.problems.push(`annotation ignored: ${set.map((n) => `${NGINX_PREFIX}${n}`).join(', ')}: a global rate limit needs both ${NGINX_PREFIX}global-rate-limit and ${NGINX_PREFIX}global-rate-limit-window`);
    return;
  }
  // The default key, $remote_addr, is by: ip.
  const byKey = key !== undefined && key !== '$remote_addr' && key !== '${remote_addr}';
  const names = ['global-rate-limit', 'global-rate-limit-window', ...(key !== undefined ? ['global-rate-limit-key'] : []), ...(cidrs ? ['global-rate-limit-ignored-cidrs'] : [])];
  addConfigPlugin(out, 'grl', 'rate-limit', { policy: 'redis', limit, window: `${win}s`, by: byKey ? 'key' : 'ip', ...(byKey ? { key } : {}), status: 429, ...(cidrs?.length ? { exempt: cidrs } : {}) }, names, null);
}

/**
 * The rate-limit configuration as applied: the ConfigMap's limit-req-status-code as its status, or for a global
 * rate limit (policy redis) its global-rate-limit-status-code.
 */
export function rateLimitConfig(config: PluginConfig, limitStatus: number, globalStatus = 429): PluginConfig {
  if (config.type !== 'rate-limit') return config;
  return { ...config, status: config.policy === 'redis' ? globalStatus : limitStatus };
}

/** limit-connections as a conn-limit instance: the ConfigMap's limit-conn-status-code; `id` is its counters' key. */
export function connLimitInstance(c: ConnLimitPlugin['connLimit'], name: string, id: string, connStatus: number): PluginInstance {
  return { name, type: 'conn-limit', limit: c.limit, status: connStatus, key: id, ...(c.exempt ? { exempt: c.exempt } : {}) };
}
