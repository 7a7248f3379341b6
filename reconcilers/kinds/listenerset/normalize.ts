// ListenerSet → its model record: the parent Gateway it names (defaults applied) and its listeners, parsed as a
// Gateway's are (the same schema and the same refusals by name). Whether the Gateway takes them (allowedListeners),
// how they merge with its own, and what each one's status is, is the attachment's (translate/gateway-api/attach.ts).
import { z } from 'zod';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { GATEWAY_GROUP, type ListenerSetRecord } from '../../model/gateway-api.ts';
import type { RecordReads } from '../../model/model.ts';
import { issuesText, metaOf, type CrdResult } from '../crd-normalize.ts';
import { listenerOf, listenerSchema, unservedListener } from '../gateway/normalize.ts';
import { groupSchema, kindSchema, namespaceSchema, objectNameSchema } from '../gateway/schema.ts';

/** The API's cap on a ListenerSet's listeners. */
export const MAX_LISTENERS_PER_SET = 64;

const specSchema = z.looseObject({
  parentRef: z.looseObject({ group: groupSchema.default(GATEWAY_GROUP), kind: kindSchema.default('Gateway'), name: objectNameSchema, namespace: namespaceSchema.optional() }),
  listeners: z
    .array(listenerSchema)
    .min(1)
    .max(MAX_LISTENERS_PER_SET)
    .refine((ls) => new Set(ls.map((l) => l.name)).size === ls.length, { message: 'Listener name must be unique within the ListenerSet' }),
});

export function normalizeListenerSet(obj: KubeObject): CrdResult<ListenerSetRecord> {
  const r = specSchema.safeParse((obj as { spec?: unknown }).spec ?? {});
  if (!r.success) return { ok: false, reason: issuesText(r.error) };
  const spec = r.data;
  const refused = spec.listeners.flatMap((l, i) => unservedListener(l, `spec.listeners.${i}`));
  if (refused.length) return { ok: false, reason: refused.join('; ') };
  const meta = metaOf(obj);
  const p = spec.parentRef;
  return {
    ok: true,
    record: {
      ...meta,
      parent: { group: p.group, kind: p.kind, namespace: p.namespace ?? meta.namespace, name: p.name },
      listeners: spec.listeners.map((l) => listenerOf(l, meta.namespace)),
    },
  };
}

/** What a ListenerSet's record reads: the Secrets of its HTTPS listeners' certificateRefs. */
export function listenerSetReads(ls: ListenerSetRecord): RecordReads {
  const out = new Set<string>();
  for (const l of ls.listeners) for (const c of l.tls?.certificateRefs ?? []) if (c.group === '' && c.kind === 'Secret') out.add(`${c.namespace}/${c.name}`);
  return { secrets: [...out].sort() };
}
