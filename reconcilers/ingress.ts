// Ingress reconciler: validates and normalizes one Ingress into the model (or records why it is rejected).
import type { Reconciler, ReconcileContext } from '../operator/controller.ts';
import type { EventRecorder } from '../operator/events.ts';
import type { Informer } from '../operator/informer.ts';
import type { KubeObject } from '../operator/kube/object.ts';
import type { Model } from './model/model.ts';
import { normalizeIngress } from './model/normalize.ts';

export class IngressReconciler implements Reconciler {
  private readonly informer: Informer<KubeObject>;
  private readonly model: Model;
  private readonly events: EventRecorder;
  constructor(informer: Informer<KubeObject>, model: Model, events: EventRecorder) {
    this.informer = informer;
    this.model = model;
    this.events = events;
  }
  async reconcile(_ctx: ReconcileContext, key: string): Promise<void> {
    const obj = this.informer.store.get(key);
    if (!obj) {
      this.model.deleteIngress(key);
      return;
    }
    const r = normalizeIngress(obj);
    if (r.ok) this.model.setIngress(r.ingress);
    else this.model.rejectIngress({ key, reason: r.reason });
    // Warnings about the content (conflicts, missing backends, bad annotations) are reported by the gateway
    // reconciler, which sees all Ingresses together; an outright rejection is also visible there.
    void this.events;
  }
}
