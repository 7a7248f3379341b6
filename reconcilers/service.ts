// Service/EndpointSlice reconciler, keyed by Service: writes the Service and the full set of its slices.
import type { Reconciler, ReconcileContext } from '../operator/controller.ts';
import type { Informer } from '../operator/informer.ts';
import type { KubeObject } from '../operator/kube/object.ts';
import type { Model } from './model/model.ts';
import { normalizeEndpointSlice, normalizeService } from './model/normalize.ts';
import type { NormalizedSlice } from './model/types.ts';

export const SLICES_BY_SERVICE = 'service';

export class ServiceReconciler implements Reconciler {
  private readonly services: Informer<KubeObject>;
  private readonly slices: Informer<KubeObject>;
  private readonly model: Model;
  constructor(services: Informer<KubeObject>, slices: Informer<KubeObject>, model: Model) {
    this.services = services;
    this.slices = slices;
    this.model = model;
  }
  async reconcile(_ctx: ReconcileContext, key: string): Promise<void> {
    const svc = this.services.store.get(key);
    if (svc) this.model.setService(normalizeService(svc));
    else this.model.deleteService(key);
    const slices: NormalizedSlice[] = [];
    for (const s of this.slices.store.byIndex(SLICES_BY_SERVICE, key)) {
      const n = normalizeEndpointSlice(s);
      if (n) slices.push(n);
    }
    this.model.setEndpointSlices(key, svc ? slices : []);
  }
}
