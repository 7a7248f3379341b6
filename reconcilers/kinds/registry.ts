// The kind registry: every kind Portico reconciles, once. app/setup.ts wires them in this order (a kind may use
// the informer of one listed before it: Ingress and Route watch IngressClasses, Ingress status reads Services);
// the start-up stage is each kind's own (IngressClass 0; Ingress and the CRDs 1; Service, Secret, ConfigMap 2).
// Everything that lists kinds is derived from it: the admission webhook reviews the kinds that declare a review
// (kustomize/webhook.yaml's configuration is generated from the webhooks they name: webhook.ts, `make webhook`),
// kustomize/rbac.yaml's ClusterRole from their rules (rbac.ts, `make rbac`), crds/*.yaml from the CRD kinds'
// definitions (CRDS; crds/generate.ts, `make crds`), the translation's claim processors from the kinds that declare
// one (processors.ts; processors-gen.ts, `make processors`), and the tables of docs/reference/kinds.md
// (reference.ts; `node tools/readme-reference.ts`). Unit tests fail when any of these drift.
//
// Adding a kind: its folder (reconcilers/kinds/<kind in lower case>/, exporting a KindDescriptor from index.ts; a
// CRD's record type joins the model's CrdRecords from its normalize.ts; a processor.ts when its objects claim
// paths), one line here, and — for one of Portico's CRDs — its schema module crds/schema/<kind>.ts (its spec schema
// and CrdDefinition, which the kind's crdKind() names). Then `make kinds` and `node tools/readme-reference.ts`.
import type { CrdDefinition } from '../../crds/schema/definition.ts';
import { configMap } from './configmap/index.ts';
import { consumer } from './consumer/index.ts';
import { ingress } from './ingress/index.ts';
import { ingressClass } from './ingressclass/index.ts';
import type { KindDescriptor } from './kind.ts';
import { plugin } from './plugin/index.ts';
import { route } from './route/index.ts';
import { secret } from './secret/index.ts';
import { service } from './service/index.ts';
import { upstream } from './upstream/index.ts';
import { gatewayClass } from './gatewayclass/index.ts';
import { namespaceKind } from './namespace/index.ts';
import { gateway } from './gateway/index.ts';
import { listenerSet } from './listenerset/index.ts';
import { httpRoute } from './httproute/index.ts';
import { referenceGrant } from './referencegrant/index.ts';
import { tcpRoute } from './tcproute/index.ts';
import { grpcRoute } from './grpcroute/index.ts';
import { udpRoute } from './udproute/index.ts';
import { tlsRoute } from './tlsroute/index.ts';
import { backendTlsPolicy } from './backendtlspolicy/index.ts';
import { clusterTrustBundle } from './clustertrustbundle/index.ts';

export const KINDS: readonly KindDescriptor[] = [
  ingressClass,
  ingress,
  service,
  secret,
  route,
  upstream,
  plugin,
  consumer,
  configMap,
  // Gateway API (wired only with --enable-gateway-api: their `feature`). ClusterTrustBundles (certificates.k8s.io),
  // which Gateways and BackendTLSPolicies may name, only when the API server also serves them (app/setup.ts).
  clusterTrustBundle,
  gatewayClass,
  namespaceKind,
  gateway,
  listenerSet,
  httpRoute,
  grpcRoute,
  tcpRoute,
  udpRoute,
  tlsRoute,
  referenceGrant,
  backendTlsPolicy,
];

/** Portico's CRDs, in registry order: crds/generate.ts writes crds/<plural>.yaml (and crds/kustomization.yaml) from them. */
export const CRDS: readonly CrdDefinition[] = KINDS.flatMap((k) => (k.crd ? [k.crd] : []));

/** The kinds the admission webhook reviews. */
export const ADMITTED: readonly KindDescriptor[] = KINDS.filter((k) => k.admission);

export function kindOf(kind: string): KindDescriptor | undefined {
  return KINDS.find((k) => k.kind === kind);
}
