// custom-headers: the response headers of a ConfigMap of the Ingress's namespace, validated as a response-headers
// plugin configuration; the translation checks them against the ConfigMap's global-allowed-response-headers
// (customHeadersConfig) and fails the paths closed where they cannot be applied.
import { parsePluginConfig, type PluginConfig } from '../../../crds/schema/index.ts';
import { row, type ConfigMapReader, type Values } from '../group.ts';
import { configMapRefSchema, ownNamespaceRef } from '../own-namespace.ts';

export const rows = {
  'custom-headers': row(configMapRefSchema, 'location', 'medium', 'A ConfigMap ("name" or "namespace/name", the Ingress\'s own namespace) whose keys and values are set as response headers on every path of the Ingress (the response-headers plugin, replacing a header of the same name); each name must be listed in the controller ConfigMap\'s global-allowed-response-headers, and a missing ConfigMap, a header not allowed or an invalid name or value makes the paths fail closed (503), as ingress-nginx denies the location. Changes to the ConfigMap apply without a restart', { difference: 'only a ConfigMap of the Ingress\'s own namespace (another one fails closed); its changes apply at once' }),
};

/**
 * custom-headers: the response headers of a ConfigMap, validated as a response-headers plugin configuration, or why
 * they cannot be applied (the paths fail closed). The translation checks global-allowed-response-headers.
 */
export interface CustomHeadersPlugin {
  suffix: 'hdrs';
  customHeaders: { configMap: string; config?: PluginConfig; error?: string };
}

/**
 * custom-headers (ingress-nginx): the ConfigMap it names, and what it gives — response headers validated by the
 * response-headers plugin schema, or why they cannot be applied. Without a reader (the admission webhook) only the
 * reference is returned: its content is judged by the controller.
 */
export function customHeadersPlugin(v: Values<typeof rows>, namespace: string, configMaps?: ConfigMapReader): { configMapKey?: string; plugin?: CustomHeadersPlugin } {
  const ref = v['custom-headers'];
  if (ref === undefined) return {};
  const { key: configMap, elsewhere, found: cm } = ownNamespaceRef(ref, namespace, configMaps);
  const fail = (error: string) => ({ configMapKey: configMap, plugin: { suffix: 'hdrs', customHeaders: { configMap, error: `custom-headers: ${error}` } } as CustomHeadersPlugin });
  if (elsewhere) return { plugin: fail(`ConfigMap ${configMap} is in another namespace; only the Ingress's own namespace is read`).plugin };
  if (!configMaps) return { configMapKey: configMap };
  if (!cm) return fail(`ConfigMap ${configMap} not found`);
  const entries = Object.entries(cm.data ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  if (!entries.length) return fail(`ConfigMap ${configMap} holds no header`);
  const r = parsePluginConfig('response-headers', { set: entries.map(([n, value]) => ({ name: n, value })) });
  if (!r.ok) return fail(`ConfigMap ${configMap}: ${r.error}`);
  return { configMapKey: configMap, plugin: { suffix: 'hdrs', customHeaders: { configMap, config: r.config } } };
}

/**
 * The response-headers configuration to apply, or why the paths fail closed: the ConfigMap is missing or invalid,
 * or a header is not in the ConfigMap's global-allowed-response-headers (as ingress-nginx denies such a location).
 */
export function customHeadersConfig(ch: CustomHeadersPlugin['customHeaders'], allowed: readonly string[]): { config: PluginConfig } | { closed: string } {
  if (ch.error || !ch.config || ch.config.type !== 'response-headers') return { closed: ch.error ?? `custom-headers: ConfigMap ${ch.configMap} cannot be applied` };
  const set = ch.config.set ?? [];
  const refused = set.map((h) => h.name).filter((n) => !allowed.includes(n.toLowerCase()));
  if (refused.length) return { closed: `custom-headers: ${refused.join(', ')} ${refused.length > 1 ? 'are' : 'is'} not in the ConfigMap's global-allowed-response-headers` };
  return { config: ch.config };
}
