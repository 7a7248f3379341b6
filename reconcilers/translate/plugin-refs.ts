// Plugin objects named by paths and Consumers, as data-plane ids in execution order (fail closed when missing).
import type { PluginInstance } from '../config/types.ts';
import { recordsOf } from '../model/model.ts';
import { backendIdOf } from './claims.ts';
import { pluginId, PLUGIN_RANK, withRateLimitStore } from './plugin-instances.ts';
import type { Draft } from './draft.ts';

/** A Plugin object a path names, as a data-plane id (registered once), or why it cannot be used. */
export function usePlugin(d: Draft, ns: string, name: string): { id: string } | { missing: string } {
  const { snap, plugins, authBackends } = d;
  const p = recordsOf(snap, 'Plugin').get(`${ns}/${name}`);
  if (!p) {
    const rej = snap.rejectedCrds.get(`Plugin/${ns}/${name}`);
    return { missing: rej ? `Plugin ${ns}/${name} is invalid: ${rej.reason}` : `Plugin ${ns}/${name} not found` };
  }
  if (!p.instance) return { missing: `Plugin ${ns}/${name} cannot be used: ${p.error ?? 'invalid'}` };
  const id = pluginId(ns, name);
  if (!plugins[id]) {
    const inst = { name: `${ns}/${name}`, ...p.instance } as PluginInstance;
    if (inst.type === 'external-auth' && p.authService) {
      const bid = backendIdOf(ns, { service: p.authService.service, port: { number: p.authService.port } });
      inst.backendId = bid;
      if (!authBackends.has(bid)) authBackends.set(bid, { ref: `Plugin/${ns}/${name}`, ns, service: p.authService.service, port: p.authService.port });
    }
    // A rate limit with policy redis: the ConfigMap's Redis and fail-open setting (said when there is none).
    plugins[id] = withRateLimitStore(inst, d.rateLimitStore);
    if (inst.type === 'rate-limit' && inst.policy === 'redis' && !d.rateLimitStore.redis) {
      d.events.push({ ref: `Plugin/${ns}/${name}`, type: 'Warning', reason: 'GlobalRateLimitWithoutRedis', message: `policy redis needs a Redis to count in, and the ConfigMap sets no global-rate-limit-redis-host: requests are ${d.rateLimitStore.failOpen ? 'let through unlimited' : 'answered 503'} (global-rate-limit-redis-fail-open)` });
    }
  }
  return { id };
}

/** Plugin ids for a path, in execution order, or why the path must fail closed. */
export function pluginsFor(d: Draft, ns: string, names: readonly string[]): { ids: string[]; closed?: string } {
  const { plugins, pluginMemo } = d;
  if (!names.length) return { ids: [] };
  const k = `${ns} ${names.join(',')}`;
  const hit = pluginMemo.get(k);
  if (hit) return hit;
  const ids: string[] = [];
  const missing: string[] = [];
  for (const n of names) {
    const r = usePlugin(d, ns, n);
    if ('id' in r) {
      if (!ids.includes(r.id)) ids.push(r.id);
    } else missing.push(r.missing);
  }
  ids.sort((a, b) => (PLUGIN_RANK.get(plugins[a]!.type) ?? 99) - (PLUGIN_RANK.get(plugins[b]!.type) ?? 99) || (a < b ? -1 : 1));
  const out = missing.length ? { ids, closed: missing.join('; ') } : { ids };
  pluginMemo.set(k, out);
  return out;
}
