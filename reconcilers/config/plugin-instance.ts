// A Plugin object's validated settings → the instance the Lua plugin runs (shared by the Plugin kind's normalizer
// and the translation, which builds instances from ingress-nginx annotations with the same conversions).
import { createHash } from 'node:crypto';
import type { PluginConfig } from '../../crds/schema/index.ts';
import { PLUGIN_CRDS, type AnyPluginCrd } from '../../crds/schema/plugin-config.ts';
import type { PluginInstance } from './types.ts';

/**
 * Rate-limit counters are keyed by the plugin and its limits: a changed limit starts from fresh counters (a bucket
 * filled under a lower limit would otherwise keep refusing for as long as that limit said).
 */
export function limitKey(base: string, c: PluginConfig): string {
  if (c.type !== 'rate-limit') return base;
  // (The local policy's text is as it always was, so its counters survive an upgrade.)
  const redis = c.policy === 'redis' ? `/redis/${c.limit}/${c.window}/${c.key}` : '';
  return `${base}_${createHash('sha256').update(`${c.requestsPerSecond}/${c.requestsPerMinute}/${c.burst}/${c.by}/${c.header}${redis}`).digest('hex').slice(0, 8)}`;
}

/**
 * PluginConfig (validated) → what the Lua plugin runs: its type's conversion (`crd.toInstance` of
 * reconcilers/config/plugins/<type>.ts). `key` namespaces rate-limit counters.
 */
export function pluginInstanceOf(c: PluginConfig, namespace: string, key: string): { instance: DistributiveOmitName; authService?: { service: string; port: number } } {
  const crd = crdOf(c);
  const instance: DistributiveOmitName = crd.toInstance(c as never, { namespace, key });
  const authService = crd.authService?.(c as never);
  return authService ? { instance, authService } : { instance };
}
/** The conversions and checks of a plugin type (its reconcilers/config/plugins/<type>.ts). */
export const crdOf = (c: PluginConfig) => PLUGIN_CRDS.get(c.type) as AnyPluginCrd;
type DistributiveOmitName = PluginInstance extends infer T ? (T extends unknown ? Omit<T, 'name'> : never) : never;
