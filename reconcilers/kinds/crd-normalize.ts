// What the normalizers of Portico's CRDs share (each kind's own is kinds/<kind>/normalize.ts). Pure: the object
// (and, for Plugins, Consumers and Upstreams, the Secrets they read) in, a record or a reason out. Every spec is
// parsed with exactly the zod schema its CRD was generated from (crds/schema), so what the apiserver admitted and
// what Portico accepts cannot drift; what the CRD cannot say (PCRE regexes, config of a plugin type) is checked
// with a message naming the field.
import { durationMs } from '../../crds/schema/index.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import type { CrdMeta, RouteRuleN } from '../model/types.ts';
import type { z } from 'zod';

export type CrdResult<T> = { ok: true; record: T } | { ok: false; reason: string };

export type SecretData = { type?: string; data?: Record<string, string> };
/** Reads a Secret ("namespace/name") from the cache; undefined when it does not exist. */
export type SecretLookup = (key: string) => SecretData | undefined;

export function metaOf(obj: KubeObject): CrdMeta {
  const m = obj.metadata;
  return {
    key: `${m.namespace}/${m.name}`,
    namespace: m.namespace ?? '',
    name: m.name,
    uid: m.uid ?? '',
    generation: m.generation ?? 0,
    creationTimestamp: m.creationTimestamp ?? '',
  };
}

/** One line naming each failing field, e.g. "spec.rules.0.matches.0.path.value: must start with /". */
export function issuesText(error: z.ZodError, prefix = 'spec'): string {
  return error.issues
    .map((i) => {
      const at = [prefix, ...i.path.map(String)].join('.');
      return i.code === 'unrecognized_keys' ? i.keys.map((k) => `${at}.${k}: unknown field`).join('; ') : `${at}: ${i.message}`;
    })
    .join('; ');
}

const seconds = (d: string | undefined): number | undefined => (d === undefined ? undefined : durationMs(d) / 1000);
export function timeoutsOf(t: { connect?: string; read?: string; send?: string } | undefined): RouteRuleN['timeouts'] | undefined {
  if (!t) return undefined;
  const out = { connect: seconds(t.connect), read: seconds(t.read), send: seconds(t.send) };
  for (const k of ['connect', 'read', 'send'] as const) {
    if (out[k] === undefined) delete out[k];
    else if (out[k] === 0) return undefined;
  }
  return Object.keys(out).length ? out : undefined;
}

export function decode(b64: string | undefined): string | undefined {
  return b64 === undefined ? undefined : Buffer.from(b64, 'base64').toString('utf8');
}
