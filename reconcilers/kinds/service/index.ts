// The Service kind: a Service and its EndpointSlices, reconciled together (keyed by Service). Listed with what
// Ingresses refer to (stage 2); both cached lean (cache-transforms.ts): only the fields Portico reads.
import type { KubeObject } from '../../../operator/kube/object.ts';
import { serviceKeyOfSlice } from '../../model/normalize.ts';
import { Resources } from '../../resources.ts';
import type { KindDescriptor } from '../kind.ts';
import { serviceCacheTransform, sliceCacheTransform } from './cache-transforms.ts';
import { ServiceReconciler, SLICES_BY_SERVICE } from './reconciler.ts';

const STAGE = 2;

export const service: KindDescriptor = {
  kind: 'Service',
  resource: Resources.Service,
  stage: STAGE,
  writes: ['Service', 'EndpointSlice'],
  rbac: [
    { resource: Resources.Service, verbs: ['list', 'watch'] },
    { resource: Resources.EndpointSlice, verbs: ['list', 'watch'] },
  ],
  wire(ctx) {
    const { m } = ctx;
    const services = m.informer<KubeObject>(Resources.Service, { stage: STAGE, transform: serviceCacheTransform });
    const slices = m.informer<KubeObject>(Resources.EndpointSlice, {
      stage: STAGE,
      transform: sliceCacheTransform,
      indexers: { [SLICES_BY_SERVICE]: (s) => { const k = serviceKeyOfSlice(s); return k ? [k] : []; } },
    });
    const controller = m.controller({ name: 'service', reconciler: new ServiceReconciler(services, slices, ctx.model, m.events), workers: 2, stage: STAGE });
    controller.watch(services);
    controller.watch(slices, (s) => { const k = serviceKeyOfSlice(s); return k ? [k] : []; });
    return { informer: services, controller };
  },
};
