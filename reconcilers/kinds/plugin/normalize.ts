// Plugin → its normalized model record: the instance the Lua plugin runs, or why it cannot run (fail closed).
import { load as loadYaml } from 'js-yaml';
import { parsePluginConfig, pluginSpecSchema, type PluginConfig } from '../../../crds/schema/index.ts';
import { crdOf, limitKey, pluginInstanceOf } from '../../config/plugin-instance.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { CrdMeta, NormalizedPlugin } from '../../model/types.ts';
import { decode, issuesText, metaOf, type CrdResult, type SecretLookup } from '../crd-normalize.ts';


export { limitKey, pluginInstanceOf };

/** A Plugin: its instance, or the zod message (Accepted=False) / the missing Secret (ResolvedRefs=False). */
export function normalizePlugin(obj: KubeObject, secrets: SecretLookup): CrdResult<NormalizedPlugin> {
  const r = pluginSpecSchema.safeParse((obj as { spec?: unknown }).spec ?? {});
  if (!r.success) return { ok: false, reason: issuesText(r.error) };
  const spec = r.data;
  const meta = metaOf(obj);
  const base = { ...meta, type: spec.type };
  let config: unknown = spec.config;
  let secretKey: string | undefined;
  if (spec.configFrom) {
    const ref = spec.configFrom.secretKeyRef;
    secretKey = `${meta.namespace}/${ref.name}`;
    const s = secrets(secretKey);
    const raw = decode(s?.data?.[ref.key]);
    if (!s) return { ok: true, record: { ...base, instance: null, secretKey, unresolved: true, error: `spec.configFrom: Secret ${secretKey} not found` } };
    if (raw === undefined) return { ok: true, record: { ...base, instance: null, secretKey, unresolved: true, error: `spec.configFrom: Secret ${secretKey} has no key ${ref.key}` } };
    try {
      config = loadYaml(raw);
      if (!config) throw new Error('empty');
    } catch (e) {
      // The parser's message quotes the text around the error: nothing of a Secret may reach an Event or a log.
      void e;
      return { ok: true, record: { ...base, instance: null, secretKey, error: `spec.configFrom: key ${ref.key} of Secret ${secretKey} is not JSON or YAML` } };
    }
  }
  const pc = parsePluginConfig(spec.type, config);
  if (!pc.ok) {
    // A configuration from a Secret is judged without quoting it: schema messages name fields (which, for unknown
    // fields and maps, are the Secret's own text) and sometimes values. The fix is found by trying the same
    // configuration as spec.config of a Plugin, where the messages are complete.
    const problems = pc.error.split('; ').length;
    const error = spec.configFrom
      ? `spec.configFrom: key ${spec.configFrom.secretKeyRef.key} of Secret ${secretKey} is not a valid ${spec.type} configuration (${problems} problem${problems > 1 ? 's' : ''}; not quoted, as it comes from a Secret: try it as spec.config to see them)`
      : pc.error.replace(/^config\b/, 'spec.config').replace(/; config\b/g, '; spec.config');
    const rec: NormalizedPlugin = { ...base, instance: null, error };
    if (secretKey) rec.secretKey = secretKey;
    return { ok: true, record: rec };
  }
  const problem = crdOf(pc.config).problem?.(pc.config as never);
  if (problem) return { ok: true, record: { ...base, instance: null, error: `spec.config.${problem}` } };
  const rec: NormalizedPlugin = { ...base, ...pluginInstanceOf(pc.config, meta.namespace, limitKey(`${meta.namespace}_${meta.name}`, pc.config)) };
  if (secretKey) rec.secretKey = secretKey;
  return { ok: true, record: rec };
}

// The model stores Plugins with the other CRs, by kind (model.ts CrdRecords): this is their record type there.
declare module '../../model/model.ts' {
  interface CrdRecords {
    Plugin: NormalizedPlugin;
  }
}
