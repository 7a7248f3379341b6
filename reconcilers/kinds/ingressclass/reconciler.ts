// IngressClass reconciler: records which classes exist, which belong to Portico and which is the default.
import type { Reconciler, ReconcileContext } from '../../../operator/controller.ts';
import type { Informer } from '../../../operator/informer.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { Model } from '../../model/model.ts';
import { normalizeIngressClass } from '../../model/normalize.ts';

export class IngressClassReconciler implements Reconciler {
  private readonly informer: Informer<KubeObject>;
  private readonly model: Model;
  constructor(informer: Informer<KubeObject>, model: Model) {
    this.informer = informer;
    this.model = model;
  }
  async reconcile(_ctx: ReconcileContext, key: string): Promise<void> {
    const obj = this.informer.store.get(key);
    if (!obj) this.model.deleteIngressClass(key);
    else this.model.setIngressClass(normalizeIngressClass(obj));
  }
}
