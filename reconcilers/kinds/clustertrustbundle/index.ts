// The ClusterTrustBundle kind (certificates.k8s.io, cluster-scoped): public CA certificates a cluster publishes once
// for every namespace, which caCertificateRefs of BackendTLSPolicies and of Gateways' frontend validation may name
// (Gateway API's ClusterTrustBundle feature). Wired with Gateway API only, and only when the API server serves
// ClusterTrustBundles (app/setup.ts asks for certificates.k8s.io v1, else v1beta1, whose version it picks):
// otherwise no reader is handed to the normalizers and such a reference is of a kind Portico cannot read. Listed in
// stage 0, before the Gateway API kinds that read the bundles (reconciler.ts re-normalizes them on a change).
import type { ResourceType } from '../../../operator/kube/resources.ts';
import { TRUST_BUNDLE_GROUP, TRUST_BUNDLE_KIND } from '../../model/gateway-api.ts';
import type { KindDescriptor } from '../kind.ts';
import { ClusterTrustBundleReconciler, trustBundleReader, trustBundleTransform, type ClusterTrustBundleObject } from './reconciler.ts';

const STAGE = 0;

/** The versions that serve ClusterTrustBundles, newest first (v1: Kubernetes 1.37; v1beta1: 1.33, off by default). */
export const TRUST_BUNDLE_VERSIONS = ['v1', 'v1beta1'] as const;

/** The API resource (the version app/setup.ts found served replaces this one's: KindOptions.clusterTrustBundleVersion). */
export const ClusterTrustBundleResource: ResourceType = { group: TRUST_BUNDLE_GROUP, version: 'v1beta1', plural: 'clustertrustbundles', kind: TRUST_BUNDLE_KIND, namespaced: false };

export const clusterTrustBundle: KindDescriptor = {
  kind: TRUST_BUNDLE_KIND,
  resource: ClusterTrustBundleResource,
  feature: 'gateway-api',
  stage: STAGE,
  writes: [],
  rbac: [
    {
      resource: ClusterTrustBundleResource,
      verbs: ['list', 'watch'],
      why:
        'Gateway API: the ClusterTrustBundles that caCertificateRefs of BackendTLSPolicies and Gateways name (public CA\n' +
        "certificates; Kubernetes' own system:cluster-trust-bundle-discovery binding grants the same to every ServiceAccount).",
    },
  ],
  wire(ctx) {
    const { m, model } = ctx;
    const resource = { ...ClusterTrustBundleResource, version: ctx.o.clusterTrustBundleVersion ?? ClusterTrustBundleResource.version };
    const informer = m.informer<ClusterTrustBundleObject>(resource, { stage: STAGE, transform: trustBundleTransform });
    const read = trustBundleReader(informer);
    const reconciler = new ClusterTrustBundleReconciler({
      model,
      read,
      enqueueCrd: (ref) => {
        const slash = ref.indexOf('/');
        ctx.enqueue(ref.slice(0, slash), ref.slice(slash + 1));
      },
    });
    const controller = m.controller({ name: 'clustertrustbundle', reconciler, stage: STAGE });
    controller.watch(informer);
    return { informer, controller, provides: { clusterTrustBundles: read } };
  },
};
