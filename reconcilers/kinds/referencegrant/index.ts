// The ReferenceGrant kind (Gateway API): which objects of other namespaces may refer to objects of this one (an
// HTTPRoute's backendRef to a Service, a Gateway's certificateRef to a Secret). Read by the attachment
// (translate/gateway-api/attach.ts); without one, such a reference is refused (RefNotPermitted).
import { z } from 'zod';
import { GatewayResources, gatewayApiKind } from '../gateway-api.ts';
import { issuesText, metaOf, type CrdResult } from '../crd-normalize.ts';
import type { ReferenceGrantRecord } from '../../model/gateway-api.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { groupSchema, kindSchema, namespaceSchema, objectNameSchema } from '../gateway/schema.ts';

const specSchema = z.looseObject({
  from: z.array(z.looseObject({ group: groupSchema, kind: kindSchema, namespace: namespaceSchema })).min(1).max(16),
  to: z.array(z.looseObject({ group: groupSchema, kind: kindSchema, name: objectNameSchema.optional() })).min(1).max(16),
});

export function normalizeReferenceGrant(obj: KubeObject): CrdResult<ReferenceGrantRecord> {
  const r = specSchema.safeParse((obj as { spec?: unknown }).spec ?? {});
  if (!r.success) return { ok: false, reason: issuesText(r.error) };
  return {
    ok: true,
    record: {
      ...metaOf(obj),
      from: r.data.from.map((f) => ({ group: f.group, kind: f.kind, namespace: f.namespace })),
      to: r.data.to.map((t) => ({ group: t.group, kind: t.kind, ...(t.name ? { name: t.name } : {}) })),
    },
  };
}

export const referenceGrant = gatewayApiKind({
  kind: 'ReferenceGrant',
  resource: GatewayResources.ReferenceGrant,
  normalize: (o) => normalizeReferenceGrant(o),
  status: false,
  why: 'Gateway API: the references across namespaces that a namespace permits.',
});
