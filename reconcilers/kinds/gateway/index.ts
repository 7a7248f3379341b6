// The Gateway kind (Gateway API): Gateways of Portico's GatewayClasses. Each listener port becomes a pod port nginx
// listens on (translate/gateway-api/attach.ts), and each Gateway a Service of its own in Portico's namespace
// (status.ts), whose cluster IP is the Gateway's address. This folder also wires the status controller of every
// Gateway API kind (status.ts).
import { keyOf, type KubeObject } from '../../../operator/kube/object.ts';
import type { GatewayRecord } from '../../model/gateway-api.ts';
import { Resources } from '../../resources.ts';
import { GatewayResources, gatewayApiKind } from '../gateway-api.ts';
import type { KindDescriptor } from '../kind.ts';
import { gatewayReads, normalizeGateway } from './normalize.ts';
import { GatewayStatusReconciler, supportedFeatures } from './status.ts';
import { clusterTrustBundle } from '../clustertrustbundle/index.ts';
import { backendTlsPolicy } from '../backendtlspolicy/index.ts';
import { listenerSet } from '../listenerset/index.ts';
import { ROUTE_KINDS, STREAM_KINDS, unsupportedAddresses } from '../../translate/gateway-api/attach.ts';

const base = gatewayApiKind({
  kind: 'Gateway',
  resource: GatewayResources.Gateway,
  normalize: (o, _secrets, configMaps, trustBundles) => normalizeGateway(o, configMaps, trustBundles),
  reads: (r) => gatewayReads(r as GatewayRecord),
  tlsSecrets: true,
  status: true,
  // Addresses Portico cannot serve (the attachment says it in Accepted False, UnsupportedAddress): a Warning Event.
  problem: (r) => {
    const bad = unsupportedAddresses(r as GatewayRecord);
    return bad ? { reason: 'UnsupportedAddress', message: `${bad}; not served (Accepted=False)` } : null;
  },
  why: 'Gateway API: the Gateways of Portico\'s GatewayClasses...',
  extraRbac: [
    { resource: Resources.Service, verbs: ['get', 'create', 'patch', 'delete'], why: 'Gateway API: a Service per Gateway (its address) in the Gateway\'s namespace...' },
    { resource: Resources.EndpointSlice, verbs: ['get', 'create', 'patch', 'delete'], why: '...and its EndpointSlice: Portico\'s pods on the ports that serve the Gateway.' },
  ],
});

export const gateway: KindDescriptor = {
  ...base,
  status(ctx, _wired, gw) {
    const g = ctx.o.gatewayApi;
    if (!g) return;
    const { m, model } = ctx;
    // GRPCRoute, TCPRoute, UDPRoute and TLSRoute when they are wired (the API server serves them).
    const wired = new Set(ctx.kinds.map((k) => k.kind));
    const informers = {
      GatewayClass: ctx.informerOf('GatewayClass'),
      Gateway: ctx.informerOf('Gateway'),
      HTTPRoute: ctx.informerOf('HTTPRoute'),
      ...Object.fromEntries(['GRPCRoute' as const, ...STREAM_KINDS].filter((k) => wired.has(k)).map((k) => [k, ctx.informerOf(k)])),
      // BackendTLSPolicy (its ancestors: the Gateways whose routes use the Services it targets).
      ...(wired.has(backendTlsPolicy.kind) ? { [backendTlsPolicy.kind]: ctx.informerOf(backendTlsPolicy.kind) } : {}),
      // ListenerSet (their status; a Gateway's counts them).
      ...(wired.has(listenerSet.kind) ? { [listenerSet.kind]: ctx.informerOf(listenerSet.kind) } : {}),
    };
    const r = new GatewayStatusReconciler({
      model,
      client: m.client,
      o: g,
      informers,
      isLeader: () => (m.leader ? m.isLeader() : true) && gw.isReady(),
      programmed: () => gw.isReady(),
      events: m.events,
      // ClusterTrustBundle is claimed only when the API server serves them (their kind is wired).
      features: supportedFeatures(wired.has(clusterTrustBundle.kind)),
    });
    const ctrl = m.controller({ name: 'gateway-api-status', reconciler: r, workers: 2 });
    // A ListenerSet's Programmed follows its Gateway's status: a Gateway's change reaches the ListenerSets naming it.
    const setsNaming = (gwKey: string): string[] => {
      const inf = (informers as { ListenerSet?: typeof informers.Gateway }).ListenerSet;
      if (!inf) return [];
      const out: string[] = [];
      for (const o of inf.store.list()) {
        const p = (o as { spec?: { parentRef?: { namespace?: string; name?: string } } }).spec?.parentRef;
        if (p?.name && `${p.namespace ?? o.metadata.namespace}/${p.name}` === gwKey) out.push(`ListenerSet/${keyOf(o)}`);
      }
      return out;
    };
    for (const [kind, inf] of Object.entries(informers)) ctrl.watch(inf as typeof informers.Gateway, (o: KubeObject) => (kind === 'Gateway' ? [`Gateway/${keyOf(o)}`, ...setsNaming(keyOf(o))] : [`${kind}/${keyOf(o)}`]));
    const all = () => {
      for (const [kind, inf] of Object.entries(informers)) for (const key of inf.store.keys()) ctrl.enqueue(`${kind}/${key}`);
    };
    // Model changes that can change a Gateway API status: its own kinds', Services (backendRefs), Secrets
    // (certificateRefs), and the EndpointSlices of Portico's own Service (its pods: the Gateways' EndpointSlices).
    const followed = new Set<string>(ctx.kinds.filter((k) => k.feature === 'gateway-api' || k.resource.kind === 'Secret').flatMap((k) => k.writes));
    followed.add(Resources.Service.kind);
    const enqueueKind = (kind: string) => {
      const inf = (informers as Record<string, typeof informers.Gateway | undefined>)[kind];
      if (inf) for (const key of inf.store.keys()) ctrl.enqueue(`${kind}/${key}`);
    };
    // A route's own status depends on itself and the Gateway-level objects only, and the Gateways count it: a change
    // of routes alone enqueues those routes and the Gateways, not every route (10,000 reconciles per route change).
    model.onChange((changes) => {
      const relevant = changes.filter((c) => followed.has(c.kind) || (c.kind === 'EndpointSlice' && c.key === g.publishService));
      if (!relevant.length) return;
      if (relevant.every((c) => ROUTE_KINDS.has(c.kind))) {
        for (const c of relevant) ctrl.enqueue(`${c.kind}/${c.key}`);
        enqueueKind('Gateway');
        enqueueKind('BackendTLSPolicy');
        enqueueKind('ListenerSet'); // their listeners' attachedRoutes
      } else all();
    });
    const start = () => {
      all();
      void r.removeOrphans().catch((e: unknown) => m.log.warn(`Gateway API: removing the Services of Gateways that are gone failed: ${String(e)}`));
    };
    m.leader?.onStartedLeading(start);
    gw.onReady(start);
    // A sync changes what nginx runs: the Gateways' Programmed conditions (routes have none).
    gw.onReported(() => {
      enqueueKind('Gateway');
      enqueueKind('ListenerSet');
    });
  },
};
