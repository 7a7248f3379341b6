// Reconcilers for Portico's CRDs: one small level-based reconciler per kind that reads the informer cache,
// normalizes the object with the schema its CRD was generated from (normalize.ts) and writes the model — the
// normalized record, or the rejection with the schema's message (reported as Accepted=False by status.ts). Routes
// of another class are dropped before anything else happens, as Ingresses are. They never touch nginx.
import type { Reconciler, ReconcileContext } from '../../operator/controller.ts';
import type { Informer } from '../../operator/informer.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import type { CrdKind, Model } from '../model/model.ts';
import { isIngressServed } from '../translate/translate.ts';
import type { ClassOptions } from './ingress/reconciler.ts';
import type { CrdResult, SecretLookup } from './crd-normalize.ts';
import { normalizeRoute } from './route/normalize.ts';
import { normalizeUpstream } from './upstream/normalize.ts';
import { normalizePlugin } from './plugin/normalize.ts';
import { normalizeConsumer } from './consumer/normalize.ts';
import type { CrdMeta, NormalizedConsumer, NormalizedPlugin, NormalizedUpstream } from '../model/types.ts';
import type { EventRecorder } from '../../operator/events.ts';

type Normalizer = (obj: KubeObject, secrets: SecretLookup) => CrdResult<CrdMeta>;

export const NORMALIZERS: Record<CrdKind, Normalizer> = {
  Route: (o) => normalizeRoute(o),
  Upstream: (o, s) => normalizeUpstream(o, s),
  Plugin: (o, s) => normalizePlugin(o, s),
  Consumer: (o, s) => normalizeConsumer(o, s),
};

/** The class a Route asks for (spec.ingressClassName), read before any validation. */
export function routeClass(obj: KubeObject): string | null {
  const c = (obj as { spec?: { ingressClassName?: unknown } }).spec?.ingressClassName;
  return typeof c === 'string' && c ? c : null;
}

export class CrdReconciler implements Reconciler {
  private readonly kind: CrdKind;
  private readonly informer: Informer<KubeObject>;
  private readonly model: Model;
  private readonly secrets: SecretLookup;
  private readonly classes: ClassOptions;
  private readonly events: EventRecorder | undefined;
  /** Per object: the problem last reported (generation + message), so each is posted once per generation. */
  private readonly reported = new Map<string, string>();
  constructor(kind: CrdKind, informer: Informer<KubeObject>, model: Model, secrets: SecretLookup, classes: ClassOptions, events?: EventRecorder) {
    this.kind = kind;
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
    if (this.kind === 'Route' && !isIngressServed({ className: routeClass(obj), classFromAnnotation: false }, this.model.classList(), this.classes)) {
      this.model.deleteCrd(this.kind, key);
      return;
    }
    const r = NORMALIZERS[this.kind](obj, this.secrets);
    if (r.ok) this.model.setCrd(this.kind, r.record as never);
    else this.model.rejectCrd(this.kind, { key, generation: obj.metadata.generation ?? 0, reason: r.reason });
    // `kubectl get events` explains why an object is not (fully) used, once per generation and problem.
    let problem: { reason: string; message: string } | null = null;
    if (!r.ok) problem = { reason: 'Invalid', message: `${r.reason}; not used (Accepted=False)` };
    else if (this.kind === 'Plugin' && (r.record as NormalizedPlugin).error) {
      const p = r.record as NormalizedPlugin;
      problem = { reason: p.unresolved ? 'RefNotFound' : 'InvalidConfig', message: `${p.error}; routes using this plugin answer 503 (fail closed)` };
    } else if (this.kind === 'Upstream' && (r.record as NormalizedUpstream).tls?.caError) {
      problem = { reason: 'RefNotFound', message: `${(r.record as NormalizedUpstream).tls?.caError}; requests to this Service answer 503 until the CA can be read (never unverified)` };
    } else if (this.kind === 'Consumer' && (r.record as NormalizedConsumer).problems.length) {
      problem = { reason: 'InvalidCredentials', message: `${(r.record as NormalizedConsumer).problems.join('; ')}; the other credentials work` };
    }
    const stamp = problem ? `${obj.metadata.generation ?? 0}\u0000${problem.message}` : '';
    if (problem && this.reported.get(key) !== stamp) this.events?.event(obj, 'Warning', problem.reason, 'Validating', problem.message);
    if (problem) this.reported.set(key, stamp);
    else this.reported.delete(key);
  }
}
