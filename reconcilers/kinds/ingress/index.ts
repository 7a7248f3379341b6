// The Ingress kind: listed after the classes (stage 1) and before what Ingresses refer to, so each TLS Secret is
// kept or stripped of its key material right at list time. The leader publishes the load-balancer address in
// Ingress status once the first complete configuration is live.
import { keyOf, type KubeObject } from '../../../operator/kube/object.ts';
import { configMapsOf, ingressCredentialSecrets, secretsOf } from '../../model/model.ts';
import { Resources } from '../../resources.ts';
import { ingressKeyOf, ingressRef } from '../../translate/translate.ts';
import type { KindDescriptor } from '../kind.ts';
import { reviewIngress } from './admission.ts';
import { ingressProcessor } from './processor.ts';
import { IngressReconciler } from './reconciler.ts';
import { StatusReconciler } from './status.ts';

const STAGE = 1;

export const ingress: KindDescriptor = {
  kind: 'Ingress',
  resource: Resources.Ingress,
  stage: STAGE,
  writes: ['Ingress'],
  rbac: [
    { resource: Resources.Ingress, verbs: ['list', 'watch'], why: 'Ingress semantics: read the objects Portico serves.' },
    { resource: Resources.Ingress, subresource: 'status', verbs: ['patch'], why: 'The leader publishes the load-balancer address in Ingress status.' },
  ],
  reportedByGateway: true,
  rereadsCredentials: true,
  secretsRead(model, key) {
    const ing = model.ingress(key);
    return { tls: ing ? secretsOf(ing) : [], other: ing ? ingressCredentialSecrets(ing) : [] };
  },
  configMapsRead(model, key) {
    const ing = model.ingress(key);
    return ing ? configMapsOf(ing) : [];
  },
  processor: ingressProcessor,
  admission: (obj, snap, o, now) => reviewIngress(obj, snap, o, now),
  webhook: {
    name: 'ingresses.portico.dev',
    matchConditions: [
      {
        name: 'portico-class-or-none',
        expression: [
          "has(object.spec.ingressClassName) ? object.spec.ingressClassName == 'portico' :",
          "(!has(object.metadata.annotations) || !('kubernetes.io/ingress.class' in object.metadata.annotations) ||",
          "object.metadata.annotations['kubernetes.io/ingress.class'] == 'portico')",
        ],
      },
    ],
    why:
      "matchConditions: only Ingresses that can be Portico's reach the webhook — those of class \"portico\" or without a\n" +
      'class (Portico decides: it may be the default class). Ingresses of ingress-nginx or any other controller are never\n' +
      'sent to Portico, so running side by side costs them nothing. A renamed class needs a kustomize patch of this\n' +
      'expression (or of reconcilers/kinds/ingress/index.ts, then `make webhook`).',
  },
  wire(ctx) {
    const informer = ctx.m.informer<KubeObject>(Resources.Ingress, { stage: STAGE, ...ctx.o.watched });
    const reconciler = new IngressReconciler(informer, ctx.model, ctx.o.classes, ctx.secrets, ctx.configMaps);
    const controller = ctx.m.controller({ name: 'ingress', reconciler, workers: 2, stage: STAGE });
    controller.watch(informer);
    // Which Ingresses Portico owns depends on the classes: re-check every Ingress when a class changes.
    controller.watch(ctx.informerOf('IngressClass'), () => informer.store.keys());
    return { informer, controller };
  },
  // Status publishing (leader only).
  status(ctx, wired, gateway) {
    const s = ctx.o.status;
    if (!s.update || !(s.publishService || s.publishStatusAddress)) return;
    const { m } = ctx;
    const ingresses = wired.informer;
    const services = ctx.informerOf('Service');
    const statusRec = new StatusReconciler(
      {
        ingresses: ingresses as never,
        services: services as never,
        client: m.client,
        metrics: m.metrics,
        // Status is written only once the first complete configuration is live: before that, "not programmed"
        // means "not known yet", and clearing addresses then would make external-dns see every Ingress flap.
        isLeader: () => m.isLeader() && gateway.isReady(),
        programmed: (k) => gateway.programmed.has(ingressRef(k)),
      },
      { publishService: s.publishService, publishStatusAddress: s.publishStatusAddress },
    );
    const statusCtrl = m.controller({ name: 'status', reconciler: statusRec, workers: 2 });
    const ingressKeys = (refs: Iterable<string>) => [...refs].map(ingressKeyOf).filter((k): k is string => k !== null);
    gateway.onProgrammedChange((refs) => ingressKeys(refs).forEach((k) => statusCtrl.enqueue(k)));
    // Our own status writes come back as Ingress updates; re-checking them is a cheap no-op.
    statusCtrl.watch(ingresses);
    if (s.publishService) {
      const pub = s.publishService;
      statusCtrl.watch(services, (svc) => (keyOf(svc) === pub ? ingressKeys(gateway.programmed) : []));
    }
    const all = () => {
      for (const k of ingresses.store.keys()) statusCtrl.enqueue(k);
    };
    m.leader?.onStartedLeading(all);
    gateway.onReady(all);
    if (s.clearOnShutdown) {
      // When the manager stops, the leader (still holding the lease) removes the addresses it wrote.
      m.add('status-on-shutdown', async (signal) => {
        if (!signal.aborted) await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
        try {
          const n = await statusRec.clearAll(() => m.isLeader());
          if (n) m.log.info('cleared Ingress status on shutdown', { ingresses: n });
        } catch (e) {
          m.log.warn('could not clear Ingress status on shutdown', { error: String(e) });
        }
      });
    }
  },
};
