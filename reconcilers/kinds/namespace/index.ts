// Namespaces' labels, for Gateway listeners that select the namespaces routes may attach from
// (allowedRoutes.namespaces.from: Selector). Wired with Gateway API only.
import { clusterMeta, GatewayResources, gatewayApiKind } from '../gateway-api.ts';
import type { NamespaceRecord } from '../../model/gateway-api.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { CrdResult } from '../crd-normalize.ts';

export function normalizeNamespace(obj: KubeObject): CrdResult<NamespaceRecord> {
  const labels = (obj.metadata as { labels?: Record<string, string> }).labels ?? {};
  return { ok: true, record: { ...clusterMeta(obj), labels: { ...labels } } };
}

export const namespaceKind = gatewayApiKind({
  kind: 'Namespace',
  resource: GatewayResources.Namespace,
  normalize: (o) => normalizeNamespace(o),
  status: false,
  why: 'Gateway API: Namespace labels, for listeners that allow routes from the namespaces a selector picks.',
});
