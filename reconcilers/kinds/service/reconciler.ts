// Service/EndpointSlice reconciler, keyed by Service: writes the Service and the full set of its slices.
import type { Reconciler, ReconcileContext } from '../../../operator/controller.ts';
import type { EventRecorder } from '../../../operator/events.ts';
import type { Informer } from '../../../operator/informer.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { Model } from '../../model/model.ts';
import { normalizeEndpointSlice, normalizeService } from '../../model/normalize.ts';
import type { NormalizedSlice } from '../../model/types.ts';

export const SLICES_BY_SERVICE = 'service';

export class ServiceReconciler implements Reconciler {
  private readonly services: Informer<KubeObject>;
  private readonly slices: Informer<KubeObject>;
  private readonly model: Model;
  private readonly events: EventRecorder | undefined;
  /** Problems already reported, per Service and generation ("once per generation"). */
  private readonly reported = new Map<string, string>();
  constructor(services: Informer<KubeObject>, slices: Informer<KubeObject>, model: Model, events?: EventRecorder) {
    this.services = services;
    this.slices = slices;
    this.model = model;
    this.events = events;
  }
  async reconcile(_ctx: ReconcileContext, key: string): Promise<void> {
    const svc = this.services.store.get(key);
    if (svc) {
      const n = normalizeService(svc);
      this.model.setService(n);
      // Only Services an Ingress uses are worth a Warning (Portico has no opinion on the others).
      const stamp = `${svc.metadata.generation ?? svc.metadata.resourceVersion ?? ''}\u0000${n.problems.join('\u0000')}`;
      if (n.problems.length && this.model.ingressesUsingService(key).length && this.reported.get(key) !== stamp) {
        this.reported.set(key, stamp);
        this.events?.event({ ...svc, apiVersion: 'v1', kind: 'Service' }, 'Warning', 'InvalidService', 'Validating', `${n.problems.join('; ')}; those ports are not used`);
      } else if (!n.problems.length) this.reported.delete(key);
    } else {
      this.model.deleteService(key);
      this.reported.delete(key);
    }
    const slices: NormalizedSlice[] = [];
    for (const s of this.slices.store.byIndex(SLICES_BY_SERVICE, key)) {
      const n = normalizeEndpointSlice(s);
      if (n) slices.push(n);
    }
    this.model.setEndpointSlices(key, svc ? slices : []);
  }
}
