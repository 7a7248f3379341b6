// The IngressClass kind: which classes exist, which are Portico's and which is the default. Listed first (stage 0):
// the Ingress and Route reconcilers filter by class.
import type { KubeObject } from '../../../operator/kube/object.ts';
import { Resources } from '../../resources.ts';
import type { KindDescriptor } from '../kind.ts';
import { IngressClassReconciler } from './reconciler.ts';

const STAGE = 0;

export const ingressClass: KindDescriptor = {
  kind: 'IngressClass',
  resource: Resources.IngressClass,
  stage: STAGE,
  writes: ['IngressClass'],
  rbac: [{ resource: Resources.IngressClass, verbs: ['list', 'watch'], why: 'Ingress semantics: read the objects Portico serves.' }],
  wire(ctx) {
    const informer = ctx.m.informer<KubeObject>(Resources.IngressClass, { stage: STAGE });
    const controller = ctx.m.controller({ name: 'ingressclass', reconciler: new IngressClassReconciler(informer, ctx.model), stage: STAGE });
    controller.watch(informer);
    return { informer, controller };
  },
};
