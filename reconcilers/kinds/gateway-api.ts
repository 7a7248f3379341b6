// What the Gateway API kinds (gateway.networking.k8s.io: GatewayClass, Gateway, HTTPRoute, ReferenceGrant, and the
// Namespaces their listeners select) share: their API resources, and a descriptor made from a normalizer the way
// crd.ts makes one for Portico's CRDs — one informer and one level-based reconciler writing the model (the record,
// or the rejection with the field that failed). Their CRDs are upstream's (not generated here), they have no
// webhook, and their statuses are Gateway API's own shape, written by one status controller (gateway/status.ts).
// They are wired only with Gateway API on (--enable-gateway-api; `auto` = when the API server serves it).
import type { KubeObject } from '../../operator/kube/object.ts';
import type { ResourceType } from '../../operator/kube/resources.ts';
import type { CrdKind } from '../model/model.ts';
import { GATEWAY_GROUP } from '../model/gateway-api.ts';
import { CrdReconciler, type CrdSpec } from './crd-reconciler.ts';
import type { KindDescriptor, RbacRule } from './kind.ts';

const gw = (plural: string, kind: string, version = 'v1'): ResourceType => ({ group: GATEWAY_GROUP, version, plural, kind, namespaced: kind !== 'GatewayClass' });
export const GatewayResources = {
  GatewayClass: gw('gatewayclasses', 'GatewayClass'),
  Gateway: gw('gateways', 'Gateway'),
  ListenerSet: gw('listenersets', 'ListenerSet'),
  HTTPRoute: gw('httproutes', 'HTTPRoute'),
  GRPCRoute: gw('grpcroutes', 'GRPCRoute'),
  TCPRoute: gw('tcproutes', 'TCPRoute'),
  UDPRoute: gw('udproutes', 'UDPRoute'),
  TLSRoute: gw('tlsroutes', 'TLSRoute'),
  ReferenceGrant: gw('referencegrants', 'ReferenceGrant', 'v1beta1'),
  BackendTLSPolicy: gw('backendtlspolicies', 'BackendTLSPolicy'),
  Namespace: { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false } as ResourceType,
} as const;

/** Gateway API kinds are listed with the Ingresses (stage 1): the Secrets they read are then known to be referenced. */
const STAGE = 1;

export interface GatewayApiKindSpec extends CrdSpec {
  kind: CrdKind;
  resource: ResourceType;
  /** The object's status is written by Portico (gateway/status.ts). */
  status: boolean;
  /** Whether what it reads (CrdSpec.reads) is TLS key material. */
  tlsSecrets?: boolean;
  why: string;
  processor?: KindDescriptor['processor'];
  extraRbac?: readonly RbacRule[];
}

export function gatewayApiKind(spec: GatewayApiKindSpec): KindDescriptor {
  const r = spec.resource;
  return {
    kind: spec.kind,
    resource: r,
    feature: 'gateway-api',
    stage: STAGE,
    writes: [spec.kind],
    rbac: [
      { resource: r, verbs: ['list', 'watch'], why: spec.why },
      ...(spec.status ? [{ resource: r, subresource: 'status', verbs: ['patch'] as const, why: "...and report on them (Gateway API's status: conditions, listeners, route parents)." }] : []),
      ...(spec.extraRbac ?? []),
    ],
    ...(spec.processor ? { processor: spec.processor } : {}),
    // The translation's Warnings about its objects become Events on them (`kubectl get events`).
    ...(spec.status ? { reportedByGateway: true } : {}),
    secretsRead(model, key) {
      const list = [...model.readsOf(`${spec.kind}/${key}`).secrets];
      return spec.tlsSecrets ? { tls: list, other: [] } : { tls: [], other: list };
    },
    // The ConfigMaps a record was made from (a Gateway's CA bundles): their data is kept while it reads them, and a
    // change of one normalizes the record again (kinds/configmap/references.ts).
    configMapsRead(model, key) {
      return [...(model.readsOf(`${spec.kind}/${key}`).configMaps ?? [])];
    },
    wire(ctx) {
      const informer = ctx.m.informer<KubeObject>(r, { stage: STAGE, ...(r.namespaced ? ctx.o.watched : {}) });
      const reconciler = new CrdReconciler(spec, informer, ctx.model, ctx.secrets, ctx.o.classes, ctx.m.events, ctx.configMaps, ctx.clusterTrustBundles);
      const controller = ctx.m.controller({ name: spec.kind.toLowerCase(), reconciler, stage: STAGE });
      controller.watch(informer);
      return { informer, controller };
    },
  };
}

/** Model key of a cluster-scoped object (its name; namespaced ones are "namespace/name"). */
export function clusterMeta(obj: KubeObject) {
  const m = obj.metadata;
  return { key: m.name, namespace: '', name: m.name, uid: m.uid ?? '', generation: m.generation ?? 0, creationTimestamp: m.creationTimestamp ?? '' };
}
