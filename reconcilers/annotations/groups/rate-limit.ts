// Rate limits per client IP: limit-rps / limit-rpm (+ limit-burst-multiplier, limit-allowlist) → the rate-limit
// plugin; limit-connections → conn-limit; both answer with the ConfigMap's status code, which the translation passes
// to the instance builders. limit-rate / limit-rate-after (bandwidth) are directive-profile settings.
import type { PluginConfig } from '../../../crds/schema/index.ts';
import type { PluginInstance } from '../../config/types.ts';
import { addConfigPlugin, emptyApplied, NGINX_PREFIX, refused, row, type Applied, type ConfigPlugin, type Values } from '../group.ts';
import { commaListSchema, intSchema } from '../../values/safe.ts';

export const rows = {
  'limit-rps': row(intSchema(1, 1_000_000), 'ingress', 'low', 'Requests per second per client IP, burst limit-rps × limit-burst-multiplier; over it: 503 (rate-limit plugin, counters per node)'),
  'limit-rpm': row(intSchema(1, 100_000_000), 'ingress', 'low', 'Requests per minute per client IP, burst limit-rpm × limit-burst-multiplier; over it: 503'),
  'limit-burst-multiplier': row(intSchema(1, 1000), 'ingress', 'low', 'Burst of limit-rps / limit-rpm as a multiple of the rate (default 5)'),
  'limit-whitelist': row(commaListSchema, 'ingress', 'low', 'Client CIDRs never rate limited (comma-separated; older name of limit-allowlist)'),
  'limit-allowlist': row(commaListSchema, 'ingress', 'low', 'Client CIDRs never rate limited (comma-separated); wins over limit-whitelist'),
  'limit-connections': row(intSchema(1, 1_000_000), 'location', 'low', 'Requests of one client IP in progress at once on this Ingress; over it: the ConfigMap\'s limit-conn-status-code (503). limit-allowlist exempts clients. Counted per node in shared memory, per request (nginx counts connections with a request in progress: the same for HTTP/1)', { difference: 'counts requests in progress, not connections: an HTTP/2 client with many streams is limited per stream' }),
  'limit-rate': row(intSchema(0, 10_000_000), 'location', 'low', 'Kilobytes per second sent to one client connection (limit_rate); 0 = unlimited (default). nginx rate-limits only buffered responses: the paths get proxy buffering on, unless the Ingress sets proxy-buffering "off" (then a Warning says the limit has no effect)', { difference: 'turns proxy buffering on for its paths (with ingress-nginx\'s default proxy-buffering "off" nginx would not limit at all)' }),
  'limit-rate-after': row(intSchema(0, 100_000_000), 'location', 'low', 'Kilobytes of a response sent at full speed before limit-rate applies (limit_rate_after); default 0'),
  'global-rate-limit': refused('location', 'low', 'removed from ingress-nginx (it needed memcached) and not supported: use limit-rps / limit-rpm', { removed: true }),
  'global-rate-limit-window': refused('location', 'low', 'removed from ingress-nginx (it needed memcached) and not supported: use limit-rps / limit-rpm', { removed: true }),
  'global-rate-limit-key': refused('location', 'low', 'removed from ingress-nginx (it needed memcached) and not supported: use limit-rps / limit-rpm', { removed: true }),
  'global-rate-limit-ignored-cidrs': refused('location', 'low', 'removed from ingress-nginx (it needed memcached) and not supported: use limit-rps / limit-rpm', { removed: true }),
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

/** The rate-limit configuration as applied: the ConfigMap's limit-req-status-code as its status. */
export function rateLimitConfig(config: PluginConfig, limitStatus: number): PluginConfig {
  return config.type === 'rate-limit' ? { ...config, status: limitStatus } : config;
}

/** limit-connections as a conn-limit instance: the ConfigMap's limit-conn-status-code; `id` is its counters' key. */
export function connLimitInstance(c: ConnLimitPlugin['connLimit'], name: string, id: string, connStatus: number): PluginInstance {
  return { name, type: 'conn-limit', limit: c.limit, status: connStatus, key: id, ...(c.exempt ? { exempt: c.exempt } : {}) };
}
