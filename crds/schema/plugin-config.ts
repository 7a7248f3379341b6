// Per-type settings of a Plugin (spec.config, or the Secret named by spec.configFrom). The CRD stores config
// as an opaque object; the controller validates it here and reports the message of `parsePluginConfig` in the
// Plugin's status. Objects are strict (an unknown field is refused, so a typo is reported, not ignored) and
// defaults are applied. Each type's schema is in its plugin's TypeScript module (reconcilers/config/plugins/<type>.ts,
// `crd`); this file puts them together.
import { z } from 'zod';
import { PLUGINS, type PluginShape } from '../../reconcilers/config/plugins/index.ts';
import type { InstanceContext } from '../../reconcilers/config/plugins/plugin.ts';

export { isCidr } from '../../reconcilers/config/plugins/plugin.ts';

// ---- the list: every plugin whose module (reconcilers/config/plugins/<type>.ts) declares `crd` ----
// In the order of their `crd.rank`: the CRD's spec.type enum (PLUGIN_TYPES). Each module also says how its
// validated settings become what Lua runs (pluginInstanceOf, reconcilers/kinds/plugin/normalize.ts).

type CrdSchemaOf<P> = P extends { crd?: { schema: infer S } } ? ([S] extends [z.ZodNever] ? never : S) : never;
type ConfigSchema = CrdSchemaOf<(typeof PLUGINS)[number]>;
/** The plugin types a Plugin object may have (spec.type). */
export type PluginType = z.output<ConfigSchema>['type'];

/** A configurable plugin's `crd` (reconcilers/config/plugins/plugin.ts PluginCrd), for any of the types. */
export interface AnyPluginCrd {
  rank: number;
  schema: z.ZodType;
  /** Takes the settings of the plugin's own type (a PluginConfig narrowed to it). */
  toInstance(c: never, ctx: InstanceContext): PluginShape;
  authService?(c: never): { service: string; port: number };
  problem?(c: never): string | undefined;
}

const CONFIGURABLE = PLUGINS.flatMap((p): { name: PluginType; crd: AnyPluginCrd }[] => (p.crd ? [{ name: p.name as PluginType, crd: p.crd }] : [])).sort((a, b) => a.crd.rank - b.crd.rank);

/** Each configurable type's `crd`: its settings schema, and how the settings become an instance. */
export const PLUGIN_CRDS: ReadonlyMap<string, AnyPluginCrd> = new Map(CONFIGURABLE.map((p) => [p.name, p.crd]));

export const PLUGIN_CONFIG_SCHEMAS = CONFIGURABLE.map((p) => p.crd.schema) as unknown as readonly [ConfigSchema, ...ConfigSchema[]];

export const PLUGIN_TYPES = CONFIGURABLE.map((p) => p.name) as unknown as readonly [PluginType, ...PluginType[]];

export const pluginConfigSchema = z.discriminatedUnion('type', PLUGIN_CONFIG_SCHEMAS);

export type PluginConfig = z.output<typeof pluginConfigSchema>;
/** The settings of one type. */
export type PluginConfigOf<T extends PluginType> = Extract<PluginConfig, { type: T }>;

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
