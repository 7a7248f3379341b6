// The GatewayClass kind (Gateway API): the classes whose controllerName is Portico's (--gateway-controller-name)
// are accepted; their Gateways are Portico's. Status: gateway/status.ts.
import { z } from 'zod';
import { GatewayResources, clusterMeta, gatewayApiKind } from '../gateway-api.ts';
import { issuesText } from '../crd-normalize.ts';
import type { GatewayClassRecord } from '../../model/gateway-api.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { CrdResult } from '../crd-normalize.ts';

const specSchema = z.looseObject({
  controllerName: z.string().min(1).max(253),
  parametersRef: z.looseObject({ group: z.string(), kind: z.string(), name: z.string() }).optional(),
});

export function normalizeGatewayClass(obj: KubeObject): CrdResult<GatewayClassRecord> {
  const r = specSchema.safeParse((obj as { spec?: unknown }).spec ?? {});
  if (!r.success) return { ok: false, reason: issuesText(r.error) };
  if (r.data.parametersRef) return { ok: false, reason: 'spec.parametersRef: Portico\'s GatewayClasses take no parameters (its settings are flags and the ConfigMap)' };
  return { ok: true, record: { ...clusterMeta(obj), controllerName: r.data.controllerName } };
}

export const gatewayClass = gatewayApiKind({
  kind: 'GatewayClass',
  resource: GatewayResources.GatewayClass,
  normalize: (o) => normalizeGatewayClass(o),
  status: true,
  why: 'Gateway API: the GatewayClasses Portico serves (controllerName)...',
});
