// ClusterTrustBundles (certificates.k8s.io) as the normalizers read them: every bundle is cached, reduced to its
// name and spec.trustBundle (its annotations dropped: kubectl's last-applied copy would hold the bundle twice), and
// after each change of a bundle the records made from it (RecordReads.clusterTrustBundles: Gateways' and
// BackendTLSPolicies' caCertificateRefs) are normalized again, so they see the new certificates — or that it is gone,
// then they fail closed (no certificate kept from before).
import type { Reconciler, ReconcileContext } from '../../../operator/controller.ts';
import type { Informer } from '../../../operator/informer.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { ClusterTrustBundleReader } from '../../model/gateway-api.ts';
import type { Model } from '../../model/model.ts';

export type ClusterTrustBundleObject = KubeObject & { spec?: { trustBundle?: unknown } };

/** What the cache keeps of a bundle: its identity and spec.trustBundle (nothing else is read). */
export function trustBundleTransform(o: ClusterTrustBundleObject): ClusterTrustBundleObject {
  const { annotations: _a, labels: _l, ...metadata } = o.metadata as KubeObject['metadata'] & { annotations?: unknown; labels?: unknown };
  const tb = o.spec?.trustBundle;
  return { apiVersion: o.apiVersion, kind: o.kind, metadata, spec: typeof tb === 'string' ? { trustBundle: tb } : {} } as ClusterTrustBundleObject;
}

/** The reader the normalizers get: a bundle's trust bundle ('' when it has none), or undefined when it does not exist. */
export function trustBundleReader(informer: Pick<Informer<ClusterTrustBundleObject>, 'store'>): ClusterTrustBundleReader {
  return (name) => {
    const o = informer.store.get(name);
    if (!o) return undefined;
    const tb = o.spec?.trustBundle;
    return { trustBundle: typeof tb === 'string' ? tb : '' };
  };
}

export class ClusterTrustBundleReconciler implements Reconciler {
  /** The trust bundle each record was last told about (null: none of that name). */
  private readonly seen = new Map<string, string | null>();
  private readonly d: {
    model: Model;
    read: ClusterTrustBundleReader;
    /** Normalizes a record again ("Kind/namespace/name"). */
    enqueueCrd: (ref: string) => void;
  };
  constructor(d: ClusterTrustBundleReconciler['d']) {
    this.d = d;
  }

  async reconcile(_ctx: ReconcileContext, name: string): Promise<void> {
    const now = this.d.read(name)?.trustBundle ?? null;
    const before = this.seen.get(name) ?? null;
    if (now === null) this.seen.delete(name);
    else this.seen.set(name, now);
    if (before === now) return;
    for (const ref of this.d.model.crdsUsingClusterTrustBundle(name)) this.d.enqueueCrd(ref);
  }
}
