// The ConfigMap kind: the controller's global settings (--configmap, reconciler.ts), the TCP/UDP services
// (--tcp-services-configmap / --udp-services-configmap, tcpudp.ts) and the ConfigMaps an Ingress names
// (custom-headers, references.ts: data kept only for those). Listed with what Ingresses refer to (stage 2). It
// serves referenced ConfigMaps to the other kinds' normalizers (ctx.configMaps).
import type { KubeObject } from '../../../operator/kube/object.ts';
import { Resources } from '../../resources.ts';
import type { KindDescriptor } from '../kind.ts';
import { followReads } from '../reads.ts';
import { ConfigMapReconciler } from './reconciler.ts';
import { configMapTransform, ReferencedConfigMapReconciler, type ConfigMapObject } from './references.ts';
import { TcpUdpReconciler } from './tcpudp.ts';

const STAGE = 2;

export const configMap: KindDescriptor = {
  kind: 'ConfigMap',
  resource: Resources.ConfigMap,
  stage: STAGE,
  writes: ['Config', 'Stream'],
  rbac: [
    {
      resource: Resources.ConfigMap,
      verbs: ['get', 'list', 'watch'],
      why:
        "ConfigMaps: the controller's own (and the TCP/UDP services ones), those its add-headers / proxy-set-headers name,\n" +
        "those an Ingress's custom-headers names, and the CA bundles of Gateways and BackendTLSPolicies —\n" +
        'watched without their data unless one of those names them; a newly named one is fetched once (get).',
    },
  ],
  wire(ctx) {
    const { m, model, o } = ctx;
    // ConfigMaps an Ingress's custom-headers names (data kept only for those, see references.ts).
    const refConfigMaps = m.informer<ConfigMapObject>(Resources.ConfigMap, { stage: STAGE, ...o.watched, transform: configMapTransform(model) });
    let cmCtrl: { enqueue(key: string): void } | undefined;
    const configMapRefs = new ReferencedConfigMapReconciler({
      model,
      informer: refConfigMaps,
      client: m.client,
      enqueueIngress: (key) => ctx.enqueue('Ingress', key),
      enqueueCrd: (ref) => {
        const slash = ref.indexOf('/');
        ctx.enqueue(ref.slice(0, slash), ref.slice(slash + 1));
      },
      // add-headers / proxy-set-headers: the controller ConfigMap resolves them again when a ConfigMap they name changes.
      enqueueGlobal: () => (o.configmap ? cmCtrl?.enqueue(o.configmap) : undefined),
    });
    const configMapRefCtrl = m.controller({ name: 'ingress-configmap', reconciler: configMapRefs, stage: STAGE });
    configMapRefCtrl.watch(refConfigMaps);
    // An object that starts (or stops) naming a ConfigMap: load (or drop) it.
    followReads(model, ctx.kinds, {
      read: (k) => k.configMapsRead,
      none: [],
      isEmpty: (l) => !l.length,
      changed(before, now) {
        for (const k of new Set([...before, ...now])) configMapRefCtrl.enqueue(k);
      },
    });

    if (o.configmap) {
      const [ns, name] = o.configmap.split('/') as [string, string];
      const cms = m.informer<KubeObject & { data?: Record<string, string> }>(Resources.ConfigMap, { stage: STAGE, namespace: ns, fieldSelector: `metadata.name=${name}` });
      const headers = { read: configMapRefs.state, watch: (keys: string[]) => keys.forEach((k) => configMapRefCtrl.enqueue(k)) };
      const ctrl = m.controller({ name: 'configmap', reconciler: new ConfigMapReconciler(cms, model, m.events, o.configmap, headers), stage: STAGE });
      cmCtrl = ctrl;
      ctrl.watch(cms);
      ctrl.enqueue(o.configmap);
    }

    // TCP/UDP services (ingress-nginx's --tcp-services-configmap / --udp-services-configmap), see tcpudp.ts.
    for (const [protocol, key] of [['TCP', o.tcpServices], ['UDP', o.udpServices]] as const) {
      if (!key) continue;
      const [ns, name] = key.split('/') as [string, string];
      const inf = m.informer<KubeObject & { data?: Record<string, string> }>(Resources.ConfigMap, { stage: STAGE, namespace: ns, fieldSelector: `metadata.name=${name}` });
      const reconciler = new TcpUdpReconciler({ protocol, informer: inf, model, events: m.events, key, reservedPorts: o.reservedPorts });
      const ctrl = m.controller({ name: `${protocol.toLowerCase()}-services`, reconciler, stage: STAGE });
      ctrl.watch(inf);
      ctrl.enqueue(key);
    }
    return { informer: refConfigMaps, controller: configMapRefCtrl, provides: { configMaps: configMapRefs.lookup } };
  },
};
