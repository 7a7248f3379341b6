// Reconcilers for Portico's CRDs: one small level-based reconciler per kind that reads the informer cache,
// normalizes the object with the schema its CRD was generated from (normalize.ts) and writes the model — the
// normalized record, or the rejection with the schema's message (reported as Accepted=False by status.ts). Routes
// of another class are dropped before anything else happens, as Ingresses are. They never touch nginx.
import type { Reconciler, ReconcileContext } from '../../operator/controller.ts';
import type { Informer } from '../../operator/informer.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import type { CrdKind, Model, RecordReads } from '../model/model.ts';
import { isIngressServed } from '../translate/translate.ts';
import type { ClassOptions } from './kind.ts';
import type { CrdResult, SecretLookup } from './crd-normalize.ts';
import type { CrdMeta } from '../model/types.ts';
import type { EventRecorder } from '../../operator/events.ts';
import type { ConfigMapReader } from '../annotations/plugins.ts';
import type { ClusterTrustBundleReader } from '../model/gateway-api.ts';

/**
 * configMaps: referenced ConfigMaps' data (a Gateway's client-certificate CA bundles; see RecordReads.configMaps);
 * trustBundles: ClusterTrustBundles by name (RecordReads.clusterTrustBundles), undefined when the API server does not
 * serve them.
 */
export type Normalizer = (obj: KubeObject, secrets: SecretLookup, configMaps: ConfigMapReader, trustBundles: ClusterTrustBundleReader | undefined) => CrdResult<CrdMeta>;

/** What differs between the CRD kinds (each kind's folder declares it; crd.ts makes the descriptor from it). */
export interface CrdSpec {
  kind: CrdKind;
  normalize: Normalizer;
  /** The class an object asks for, for kinds that have one (Routes): objects of another class are dropped first. */
  classOf?: (obj: KubeObject) => string | null;
  /**
   * What a record reads (its Secrets), stored with it in the model: a change of such a Secret reaches the record
   * (kind.ts secretsRead), and the Secret's data is kept while something reads it.
   */
  reads?: (record: CrdMeta) => RecordReads;
  /** A problem of an accepted record worth a Warning Event (once per generation). */
  problem?: (record: CrdMeta) => { reason: string; message: string } | null;
}

export class CrdReconciler implements Reconciler {
  private readonly kind: CrdKind;
  private readonly spec: CrdSpec;
  private readonly informer: Informer<KubeObject>;
  private readonly model: Model;
  private readonly secrets: SecretLookup;
  private readonly classes: ClassOptions;
  private readonly events: EventRecorder | undefined;
  private readonly configMaps: ConfigMapReader;
  private readonly trustBundles: ClusterTrustBundleReader | undefined;
  /** Per object: the problem last reported (generation + message), so each is posted once per generation. */
  private readonly reported = new Map<string, string>();
  constructor(spec: CrdSpec, informer: Informer<KubeObject>, model: Model, secrets: SecretLookup, classes: ClassOptions, events?: EventRecorder, configMaps: ConfigMapReader = () => undefined, trustBundles?: ClusterTrustBundleReader) {
    this.spec = spec;
    this.configMaps = configMaps;
    this.trustBundles = trustBundles;
    this.kind = spec.kind;
    this.events = events;
    this.informer = informer;
    this.model = model;
    this.secrets = secrets;
    this.classes = classes;
  }
  async reconcile(_ctx: ReconcileContext, key: string): Promise<void> {
    const obj = this.informer.store.get(key);
    if (!obj) {
      this.model.deleteCrd(this.kind, key);
      this.reported.delete(key);
      return;
    }
    if (this.spec.classOf && !isIngressServed({ className: this.spec.classOf(obj), classFromAnnotation: false }, this.model.classList(), this.classes)) {
      this.model.deleteCrd(this.kind, key);
      return;
    }
    const r = this.spec.normalize(obj, this.secrets, this.configMaps, this.trustBundles);
    if (r.ok) this.model.setCrd(this.kind, r.record as never, this.spec.reads?.(r.record));
    else this.model.rejectCrd(this.kind, { key, generation: obj.metadata.generation ?? 0, reason: r.reason });
    // `kubectl get events` explains why an object is not (fully) used, once per generation and problem.
    let problem: { reason: string; message: string } | null = null;
    if (!r.ok) problem = { reason: 'Invalid', message: `${r.reason}; not used (Accepted=False)` };
    else problem = this.spec.problem?.(r.record) ?? null;
    const stamp = problem ? `${obj.metadata.generation ?? 0}\u0000${problem.message}` : '';
    if (problem && this.reported.get(key) !== stamp) this.events?.event(obj, 'Warning', problem.reason, 'Validating', problem.message);
    if (problem) this.reported.set(key, stamp);
    else this.reported.delete(key);
  }
}
