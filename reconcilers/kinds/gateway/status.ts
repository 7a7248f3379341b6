// Gateway API status, and the Service of each Gateway. One leader-only controller keyed by kind-qualified refs
// ("GatewayClass/name", "Gateway/ns/name", "HTTPRoute/ns/name"); what each status says is the attachment's
// (translate/gateway-api/attach.ts), so status and traffic always agree.
//   - GatewayClass: Accepted, and the features Portico supports (status.supportedFeatures);
//   - Gateway: Accepted, Programmed, ResolvedRefs (spec.tls.backend's client certificate),
//     InsecureFrontendValidationMode (while spec.tls.frontend asks for AllowInsecureFallback), status.addresses (its Service's cluster IP), and per listener Accepted,
//     ResolvedRefs, Programmed, Conflicted, supportedKinds and attachedRoutes;
//   - HTTPRoute: one entry per parentRef that is a Gateway of Portico's (Accepted, ResolvedRefs), other
//     controllers' entries left as they are.
// Conditions of other writers are kept; lastTransitionTime moves only when a condition's status does; a status is
// patched (merge patch of the status subresource, with the resourceVersion read: a conflict is retried) only when
// it changed. Each Gateway gets a Service in Portico's namespace (selecting Portico's pods, as --publish-service
// does) whose ports are the listener ports, targeting the pod ports nginx serves them on.
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import type { Reconciler, ReconcileContext } from '../../../operator/controller.ts';
import type { EventRecorder } from '../../../operator/events.ts';
import type { Informer } from '../../../operator/informer.ts';
import { ApiError, isNotFound, type KubeClient } from '../../../operator/kube/client.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { resourcePath } from '../../../operator/kube/resources.ts';
import { GATEWAY_GROUP, TRUST_BUNDLE_KIND, type GatewayRecord, type StreamRouteKind } from '../../model/gateway-api.ts';
import type { Model } from '../../model/model.ts';
import { Resources } from '../../resources.ts';
import { gatewayApiState, type Cond, type GatewayApiOptions, type GatewayApiState, type ListenerState } from '../../translate/gateway-api/attach.ts';
import { backendTlsState, policyAncestors } from '../../translate/gateway-api/backend-tls.ts';
import { GatewayResources } from '../gateway-api.ts';

/** Gateway API features Portico serves (GatewayClass status.supportedFeatures; the conformance suite reads them). */
export const FEATURES: Record<string, 'core' | 'extended'> = {
  Gateway: 'core',
  HTTPRoute: 'core',
  ReferenceGrant: 'core',
  GRPCRoute: 'core',
  GRPCRouteNamedRouteRule: 'extended',
  GRPCRouteRequestHeaderModifier: 'extended',
  TCPRoute: 'core',
  UDPRoute: 'core',
  TLSRoute: 'core',
  TLSRouteModeTerminate: 'extended',
  TLSRouteModeMixed: 'extended',
  GatewayHTTPListenerIsolation: 'extended',
  GatewayInfrastructure: 'extended',
  GatewayPort8080: 'extended',
  HTTPRoute303RedirectStatusCode: 'extended',
  HTTPRoute307RedirectStatusCode: 'extended',
  HTTPRoute308RedirectStatusCode: 'extended',
  HTTPRouteBackendProtocolWebSocket: 'extended',
  HTTPRouteBackendTimeout: 'extended',
  HTTPRouteHostRewrite: 'extended',
  HTTPRouteMethodMatching: 'extended',
  HTTPRouteNamedRouteRule: 'extended',
  HTTPRouteParentRefPort: 'extended',
  HTTPRoutePathRedirect: 'extended',
  HTTPRoutePathRewrite: 'extended',
  HTTPRoutePortRedirect: 'extended',
  HTTPRouteQueryParamMatching: 'extended',
  HTTPRouteRequestTimeout: 'extended',
  HTTPRouteResponseHeaderModification: 'extended',
  HTTPRouteSchemeRedirect: 'extended',
  HTTPRouteCORS: 'extended',
  GatewayHTTPSListenerDetectMisdirectedRequests: 'extended',
  HTTPRouteRequestMirror: 'extended',
  HTTPRouteRequestMultipleMirrors: 'extended',
  HTTPRouteRequestPercentageMirror: 'extended',
  HTTPRouteDestinationPortMatching: 'extended',
  GatewayRouteHostnameIntersectionPrecedence: 'extended',
  HTTPRouteBackendRequestHeaderModification: 'extended',
  HTTPRouteBackendURLRewrite: 'extended',
  HTTPRouteBackendProtocolH2C: 'extended',
  BackendTLSPolicy: 'extended',
  BackendTLSPolicySANValidation: 'extended',
  GatewayBackendClientCertificate: 'extended',
  GatewayAddressRoutability: 'extended',
  GatewayAddressRoutabilityCluster: 'extended',
  GatewayFrontendClientCertificateValidation: 'extended',
  GatewayFrontendClientCertificateValidationInsecureFallback: 'extended',
  GatewayAddressEmpty: 'extended',
  GatewayStaticAddresses: 'extended',
  ListenerSet: 'extended',
  GatewayListenerFilters: 'extended',
  // ClusterTrustBundle references in caCertificateRefs (BackendTLSPolicy, Gateway frontend validation): claimed only
  // while the API server serves ClusterTrustBundles (supportedFeatures).
  ClusterTrustBundle: 'extended',
};
export const SUPPORTED_FEATURES = Object.keys(FEATURES).sort();

/** The features a GatewayClass names: all of them, but ClusterTrustBundle only when the API server serves those. */
export function supportedFeatures(trustBundlesServed: boolean): readonly string[] {
  return trustBundlesServed ? SUPPORTED_FEATURES : SUPPORTED_FEATURES.filter((f) => f !== TRUST_BUNDLE_KIND);
}

/** Whether the address served was asked for with routability Cluster (by its value, or by an entry without one). */
function askedCluster(rec: GatewayRecord, address: string): boolean {
  return rec.addresses.some((a) => a.type === 'IPAddress' && a.routability === 'Cluster' && (a.value === undefined || a.value === address));
}

/** The Gateway condition saying spec.tls.frontend lets clients without a valid certificate in (AllowInsecureFallback). */
const INSECURE_FRONTEND = 'InsecureFrontendValidationMode';

export interface ApiCondition {
  type: string;
  status: string;
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
const clip = (s: string) => (s.length > 1000 ? `${s.slice(0, 997)}...` : s);

/** Our conditions merged into the current list: others' kept, lastTransitionTime kept unless the status flipped. */
export function mergeApiConditions(current: readonly ApiCondition[] | undefined, ours: readonly (Cond & { type: string })[], generation: number, at: string): ApiCondition[] {
  const mine = new Set(ours.map((c) => c.type));
  const kept = (current ?? []).filter((c) => !mine.has(c.type));
  return [
    ...kept,
    ...ours.map((d) => {
      const c = current?.find((x) => x.type === d.type);
      return { type: d.type, status: d.status, observedGeneration: generation, lastTransitionTime: c && c.status === d.status ? c.lastTransitionTime : at, reason: d.reason, message: clip(d.message || d.reason) };
    }),
  ];
}

/**
 * One listener's status entry (a Gateway's or a ListenerSet's). pending: why a listener that is otherwise programmed
 * is not yet (its Gateway has no address yet, nginx does not run the configuration yet).
 */
function listenerStatus(l: ListenerState, old: readonly ApiCondition[] | undefined, gen: number, at: string, pending: string | undefined) {
  const lp: Cond = l.programmed.status === 'True' && pending ? { status: 'False', reason: 'Pending', message: pending } : l.programmed;
  return {
    name: l.name,
    supportedKinds: l.supportedKinds.map((k) => ({ group: k.group, kind: k.kind })),
    attachedRoutes: l.attachedRoutes,
    conditions: mergeApiConditions(
      old,
      [
        { type: 'Accepted', ...l.accepted },
        { type: 'ResolvedRefs', ...l.resolvedRefs },
        { type: 'Programmed', ...lp },
        { type: 'Conflicted', ...l.conflicted, ...(l.conflicted.status === 'False' ? { reason: 'NoConflicts', message: 'no conflict' } : {}) },
      ],
      gen,
      at,
    ),
  };
}

/** Whether two statuses say the same (lastTransitionTime aside). */
function sameStatus(a: unknown, b: unknown): boolean {
  const strip = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(strip) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).filter(([k]) => k !== 'lastTransitionTime').map(([k, x]) => [k, strip(x)])) : v;
  return JSON.stringify(strip(a)) === JSON.stringify(strip(b));
}

/**
 * The name of a Gateway's Service (and EndpointSlice) in the Gateway's namespace: "<gateway>-portico", or — when that
 * is no DNS label (Gateway names may be 253 characters with dots) — a readable head and a hash of the name.
 */
export function gatewayServiceName(gwName: string): string {
  const plain = `${gwName}-portico`;
  if (plain.length <= 63 && /^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(plain)) return plain;
  const h = createHash('sha256').update(gwName).digest('hex').slice(0, 10);
  const head = gwName.replace(/[^a-z0-9-]/g, '-').replace(/^[^a-z]+/, '').slice(0, 63 - 1 - h.length - 8).replace(/-+$/, '');
  return `${head ? `${head}-` : 'gw-'}${h}-portico`;
}
/** Marks Portico's Services and EndpointSlices of Gateways (value: a hash of the Gateway's key; its key in the annotation). */
const GATEWAY_LABEL = 'portico.dev/gateway';
const gatewayLabel = (gwKey: string) => createHash('sha256').update(gwKey).digest('hex').slice(0, 32);
/**
 * The controllerName of the Portico that wrote a Gateway's Service and EndpointSlice: another Portico on the cluster
 * (another --gateway-controller-name) never takes them for orphans of its own. Absent on objects of older versions:
 * those count as any Portico's.
 */
const CONTROLLER_ANNOTATION = 'portico.dev/gateway-controller';
/** Gateway API's label naming the Gateway of generated resources (GatewayInfrastructure). */
const GATEWAY_NAME_LABEL = 'gateway.networking.k8s.io/gateway-name';

export interface GatewayStatusDeps {
  model: Model;
  client: KubeClient;
  o: GatewayApiOptions & { namespace: string; publishService?: string };
  informers: { GatewayClass: Informer<KubeObject>; Gateway: Informer<KubeObject>; HTTPRoute: Informer<KubeObject> } & Partial<Record<StreamRouteKind | 'GRPCRoute' | 'BackendTLSPolicy' | 'ListenerSet', Informer<KubeObject>>>;
  isLeader: () => boolean;
  /** nginx runs a configuration with every listener of the model (the gateway is in sync). */
  programmed: () => boolean;
  /** Warnings about requested addresses that are not usable (AddressNotUsable). */
  events?: Pick<EventRecorder, 'event'>;
  /** What GatewayClasses name in status.supportedFeatures (supportedFeatures(); default: every feature). */
  features?: readonly string[];
}

type Obj = KubeObject & { status?: Record<string, unknown> };

export class GatewayStatusReconciler implements Reconciler {
  private readonly d: GatewayStatusDeps;
  /** Per Gateway: the AddressNotUsable Warning last posted (generation + message). */
  private readonly warned = new Map<string, string>();
  constructor(d: GatewayStatusDeps) {
    this.d = d;
  }
  private state(): GatewayApiState {
    return gatewayApiState(this.d.model.snapshot(), this.d.o);
  }
  async reconcile(_ctx: ReconcileContext, ref: string): Promise<void> {
    if (!this.d.isLeader()) return;
    const slash = ref.indexOf('/');
    const kind = ref.slice(0, slash);
    const key = ref.slice(slash + 1);
    if (kind === 'GatewayClass') return this.gatewayClass(key);
    if (kind === 'Gateway') return this.gateway(key);
    if (kind === 'HTTPRoute' || kind === 'GRPCRoute' || kind === 'TCPRoute' || kind === 'UDPRoute' || kind === 'TLSRoute') return this.route(kind, key);
    if (kind === 'BackendTLSPolicy') return this.policy(key);
    if (kind === 'ListenerSet') return this.listenerSet(key);
  }

  /**
   * A ListenerSet whose parentRef names a Gateway of Portico's: Accepted (Accepted; NotAllowed, ParentNotAccepted,
   * ListenersNotValid; Invalid when its spec is refused), Programmed (True once it is accepted and its Gateway is
   * programmed; the Accepted reason when it is not accepted; ParentNotProgrammed), and per listener its conditions,
   * supportedKinds and attachedRoutes. A ListenerSet of another controller's Gateway is not Portico's to report.
   */
  private async listenerSet(key: string): Promise<void> {
    const obj = this.d.informers.ListenerSet?.store.get(key) as Obj | undefined;
    if (!obj) return;
    const gen = obj.metadata.generation ?? 0;
    const st = this.state();
    const ls = st.listenerSets.get(key);
    const cur = obj.status as { conditions?: ApiCondition[]; listeners?: { name: string; conditions?: ApiCondition[] }[] } | undefined;
    const at = now();
    let status: { conditions: ApiCondition[]; listeners: unknown[] };
    if (!ls) {
      const rejected = this.d.model.snapshot().rejectedCrds.get(`ListenerSet/${key}`);
      const p = (obj as { spec?: { parentRef?: { group?: string; kind?: string; namespace?: string; name?: string } } }).spec?.parentRef;
      if (!rejected || !p?.name || (p.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP || (p.kind ?? 'Gateway') !== 'Gateway' || !st.gateways.has(`${p.namespace ?? obj.metadata.namespace}/${p.name}`)) return;
      status = {
        conditions: mergeApiConditions(
          cur?.conditions,
          [
            { type: 'Accepted', status: 'False', reason: 'Invalid', message: rejected.reason },
            { type: 'Programmed', status: 'False', reason: 'Invalid', message: 'not served: the ListenerSet is not accepted' },
          ],
          gen,
          at,
        ),
        listeners: [],
      };
    } else {
      // Programmed follows its Gateway's (its Service, nginx running the configuration).
      const gwObj = this.d.informers.Gateway.store.get(ls.gateway) as Obj | undefined;
      const gwProgrammed = ((gwObj?.status as { conditions?: ApiCondition[] } | undefined)?.conditions ?? []).find((c) => c.type === 'Programmed');
      const parentLive = gwProgrammed?.status === 'True' && gwProgrammed.observedGeneration === gwObj?.metadata.generation;
      const pending = parentLive ? undefined : `Gateway ${ls.gateway} is not programmed yet`;
      const programmed: Cond = ls.accepted.status !== 'True' ? { status: 'False', reason: ls.accepted.reason, message: ls.accepted.message } : pending ? { status: 'False', reason: 'ParentNotProgrammed', message: pending } : { status: 'True', reason: 'Programmed', message: `served with Gateway ${ls.gateway}` };
      status = {
        conditions: mergeApiConditions(cur?.conditions, [{ type: 'Accepted', ...ls.accepted }, { type: 'Programmed', ...programmed }], gen, at),
        listeners: ls.listeners.map((l) => listenerStatus(l, cur?.listeners?.find((x) => x.name === l.name)?.conditions, gen, at, pending)),
      };
    }
    if (sameStatus({ conditions: cur?.conditions, listeners: cur?.listeners ?? [] }, status)) return;
    await this.patchStatus(GatewayResources.ListenerSet, obj, status);
  }

  /**
   * A BackendTLSPolicy: one ancestor entry per Gateway of Portico's whose routes use a Service port it targets
   * (Accepted, ResolvedRefs), other controllers' entries left as they are (at most 16 in all, the API's limit).
   */
  private async policy(key: string): Promise<void> {
    const obj = this.d.informers.BackendTLSPolicy?.store.get(key) as Obj | undefined;
    if (!obj) return;
    const gen = obj.metadata.generation ?? 0;
    const snap = this.d.model.snapshot();
    const rejected = snap.rejectedCrds.get(`BackendTLSPolicy/${key}`);
    const state = backendTlsState(snap).policies.get(key);
    const ancestors = policyAncestors(snap, gatewayApiState(snap, this.d.o)).get(key) ?? [];
    type Ancestor = { ancestorRef: Record<string, unknown>; controllerName: string; conditions: ApiCondition[] };
    const cur = (obj.status as { ancestors?: Ancestor[] } | undefined)?.ancestors ?? [];
    const others = cur.filter((a) => a.controllerName !== this.d.o.controllerName);
    const mineBefore = cur.filter((a) => a.controllerName === this.d.o.controllerName);
    const conds: (Cond & { type: string })[] = rejected
      ? [{ type: 'Accepted', status: 'False', reason: 'Invalid', message: rejected.reason }]
      : state
        ? [{ type: 'Accepted', ...state.accepted }, { type: 'ResolvedRefs', ...state.resolvedRefs }]
        : [];
    const at = now();
    const refKey = (r: Record<string, unknown>) => JSON.stringify([r.group ?? GATEWAY_GROUP, r.kind ?? 'Gateway', r.namespace ?? obj.metadata.namespace, r.name]);
    const mine: Ancestor[] = [];
    if (conds.length) {
      for (const g of ancestors.slice(0, Math.max(0, 16 - others.length))) {
        const slash = g.indexOf('/');
        const ancestorRef = { group: GATEWAY_GROUP, kind: 'Gateway', namespace: g.slice(0, slash), name: g.slice(slash + 1) };
        const old = mineBefore.find((a) => refKey(a.ancestorRef) === refKey(ancestorRef))?.conditions;
        mine.push({ ancestorRef, controllerName: this.d.o.controllerName, conditions: mergeApiConditions(old, conds, gen, at) });
      }
    }
    if (!mine.length && !mineBefore.length) return;
    const next = [...others, ...mine];
    if (sameStatus(cur, next)) return;
    await this.patchStatus(GatewayResources.BackendTLSPolicy, obj, { ancestors: next });
  }

  private async patchStatus(resource: typeof GatewayResources.Gateway, obj: Obj, status: Record<string, unknown>): Promise<void> {
    const ns = obj.metadata.namespace;
    try {
      await this.d.client.request('PATCH', resourcePath(resource, ns, obj.metadata.name, 'status'), {
        body: { metadata: { resourceVersion: obj.metadata.resourceVersion }, status },
        contentType: 'application/merge-patch+json',
      });
    } catch (e) {
      if (!isNotFound(e)) throw e; // a conflict is retried by the controller, with the newer object
    }
  }

  private async gatewayClass(name: string): Promise<void> {
    const obj = this.d.informers.GatewayClass.store.get(name) as Obj | undefined;
    if (!obj) return;
    const spec = (obj as { spec?: { controllerName?: string } }).spec;
    if (spec?.controllerName !== this.d.o.controllerName) return;
    const rejected = this.d.model.snapshot().rejectedCrds.get(`GatewayClass/${name}`);
    const cls = this.state().classes.get(name);
    const accepted: Cond = rejected ? { status: 'False', reason: 'InvalidParameters', message: rejected.reason } : (cls?.accepted ?? { status: 'Unknown', reason: 'Pending', message: 'not reconciled yet' });
    const gen = obj.metadata.generation ?? 0;
    const cur = obj.status as { conditions?: ApiCondition[]; supportedFeatures?: unknown } | undefined;
    const status = {
      conditions: mergeApiConditions(cur?.conditions, [{ type: 'Accepted', ...accepted }], gen, now()),
      supportedFeatures: accepted.status === 'True' ? (this.d.features ?? SUPPORTED_FEATURES).map((f) => ({ name: f })) : [],
    };
    if (sameStatus({ conditions: cur?.conditions, supportedFeatures: cur?.supportedFeatures ?? [] }, status)) return;
    await this.patchStatus(GatewayResources.GatewayClass, obj, status);
  }

  private async apply<T>(path: string, body: unknown): Promise<T> {
    return this.d.client.request<T>('PATCH', path, { body, contentType: 'application/apply-patch+yaml', query: { fieldManager: 'portico-gateway', force: 'true' } });
  }

  private async getOrNull<T>(path: string): Promise<T | null> {
    try {
      return await this.d.client.request<T>('GET', path);
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
  }

  /** Whether a Gateway Service or EndpointSlice was written by this Portico (its controllerName), or by an older one. */
  private mine(o: KubeObject): boolean {
    const c = o.metadata.annotations?.[CONTROLLER_ANNOTATION];
    return c === undefined || c === this.d.o.controllerName;
  }

  /** Deletes a Gateway's Service and EndpointSlice, when they are Portico's for that Gateway. */
  private async removeOwn(ns: string, name: string, gwKey: string): Promise<void> {
    for (const r of [Resources.Service, Resources.EndpointSlice]) {
      const path = resourcePath(r, ns, name);
      const cur = await this.getOrNull<KubeObject>(path);
      if (!cur || cur.metadata.annotations?.[GATEWAY_LABEL] !== gwKey || !this.mine(cur)) continue;
      try {
        await this.d.client.request('DELETE', path);
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
  }

  private async gateway(key: string): Promise<void> {
    const [gwNs, gwName] = key.split('/') as [string, string];
    const svcName = gatewayServiceName(gwName);
    const svcPath = resourcePath(Resources.Service, gwNs, svcName);
    const obj = this.d.informers.Gateway.store.get(key) as Obj | undefined;
    const st = this.state().gateways.get(key);
    const rec = this.d.model.crd('Gateway', key) as GatewayRecord | undefined;
    if (!obj || !st || !rec) {
      // Not (or no longer) Portico's: its Service and EndpointSlice go (when they are Portico's).
      await this.removeOwn(gwNs, svcName, key);
      this.warned.delete(key);
      if (!obj) return;
      const rejected = this.d.model.snapshot().rejectedCrds.get(`Gateway/${key}`);
      const cls = (obj as { spec?: { gatewayClassName?: string } }).spec?.gatewayClassName;
      if (!rejected || !cls || !this.state().classes.has(cls)) return;
      const gen = obj.metadata.generation ?? 0;
      const cur = obj.status as { conditions?: ApiCondition[] } | undefined;
      const conditions = mergeApiConditions(
        cur?.conditions,
        [
          { type: 'Accepted', status: 'False', reason: 'Invalid', message: rejected.reason },
          { type: 'Programmed', status: 'False', reason: 'Invalid', message: 'not served: the Gateway is not accepted' },
        ],
        gen,
        now(),
      );
      if (!sameStatus(cur?.conditions, conditions)) await this.patchStatus(GatewayResources.Gateway, obj, { conditions });
      return;
    }
    // Its Service, in its own namespace: the listener ports, without a selector; its EndpointSlice lists Portico's
    // ready pods (those of Portico's own Service, --publish-service) on the pod ports nginx serves the listeners on.
    // UDP listeners get UDP Service ports; everything else (HTTP, HTTPS, TLS, TCP) is TCP.
    const ports = [...new Map(st.listeners.filter((l) => l.podPort !== undefined).map((l) => [l.port, [l.podPort!, l.protocol === 'UDP' ? 'UDP' : 'TCP'] as const])).entries()]
      .map(([port, [target, protocol]]) => [port, target, protocol] as [number, number, 'TCP' | 'UDP'])
      .sort(([a], [b]) => a - b);
    let address: string | undefined;
    let addressProblem: string | undefined;
    let notUsable: string | undefined;
    let failure: unknown;
    const ps = this.d.o.publishService;
    if (st.accepted.status !== 'True' || !ports.length) {
      // Nothing served: its Service and EndpointSlice go too. The pod ports they pointed at are free again and may be
      // given to another Gateway (of another namespace): an old Service must never lead there.
      addressProblem = st.accepted.status !== 'True' ? 'the Gateway is not accepted' : 'no listener is served, so the Gateway has no Service';
      await this.removeOwn(gwNs, svcName, key);
    } else if (!ps) addressProblem = 'Portico has no Service of its own (--publish-service) whose pods would serve the Gateway';
    else {
      try {
        ({ address, addressProblem, notUsable } = await this.ensureService(key, rec, svcName, svcPath, ports, ps));
      } catch (e) {
        // Said in the status (Programmed False), then retried.
        addressProblem = `writing its Service or EndpointSlice failed: ${e instanceof Error ? e.message : String(e)}`;
        failure = e;
      }
    }
    const live = this.d.programmed();
    const gen = obj.metadata.generation ?? 0;
    const cur = obj.status as { conditions?: ApiCondition[]; listeners?: { name: string; conditions?: ApiCondition[] }[]; addresses?: unknown } | undefined;
    const at = now();
    const programmed: Cond = addressProblem
      ? { status: 'False', reason: notUsable ? 'AddressNotUsable' : 'AddressNotAssigned', message: addressProblem }
      : notUsable
        ? { status: 'False', reason: 'AddressNotUsable', message: notUsable }
        : !live
          ? { status: 'False', reason: 'Pending', message: 'nginx does not run this configuration yet' }
          : st.accepted.status === 'True'
            ? { status: 'True', reason: 'Programmed', message: `served on ${address}` }
            : { status: 'False', reason: 'Invalid', message: 'no listener is valid' };
    // Its own listeners (those of its ListenerSets are reported on the ListenerSets).
    const pending = addressProblem ?? (live ? undefined : 'nginx does not run this configuration yet');
    const listeners = st.listeners.filter((l) => !l.set).map((l) => listenerStatus(l, cur?.listeners?.find((x) => x.name === l.name)?.conditions, gen, at, pending));
    // InsecureFrontendValidationMode is Portico's while spec.tls.frontend asks for AllowInsecureFallback, and removed
    // (not set False) once it no longer does.
    const insecure = st.insecureFrontend ? [{ type: INSECURE_FRONTEND, ...st.insecureFrontend }] : [];
    const kept = st.insecureFrontend ? cur?.conditions : cur?.conditions?.filter((c) => c.type !== INSECURE_FRONTEND);
    // attachedListenerSets only where the API server serves ListenerSets (the Gateway CRDs of that release have it).
    const sets = this.d.informers.ListenerSet ? { attachedListenerSets: st.attachedListenerSets } : {};
    const status = {
      // A cluster IP is reachable within the cluster: routability Cluster, said when the address was asked for with it
      // (GatewayAddressRoutabilityCluster); other routabilities are refused (UnsupportedAddress, attach.ts).
      addresses: address ? [{ type: 'IPAddress', value: address, ...(askedCluster(rec, address) ? { routability: 'Cluster' } : {}) }] : [],
      conditions: mergeApiConditions(kept, [{ type: 'Accepted', ...st.accepted }, { type: 'Programmed', ...programmed }, { type: 'ResolvedRefs', ...st.resolvedRefs }, ...insecure], gen, at),
      listeners,
      ...sets,
    };
    const was = { addresses: cur?.addresses ?? [], conditions: cur?.conditions, listeners: cur?.listeners ?? [], ...(this.d.informers.ListenerSet ? { attachedListenerSets: (cur as { attachedListenerSets?: number } | undefined)?.attachedListenerSets } : {}) };
    if (!sameStatus(was, status)) await this.patchStatus(GatewayResources.Gateway, obj, status);
    // A Warning Event (`kubectl get events`) once per generation and message.
    const stamp = notUsable ? `${gen}\u0000${notUsable}` : undefined;
    if (stamp && this.warned.get(key) !== stamp) this.d.events?.event(obj, 'Warning', 'AddressNotUsable', 'Programming', notUsable!);
    if (stamp) this.warned.set(key, stamp);
    else this.warned.delete(key);
    if (failure) throw failure;
  }

  /** An HTTPRoute's, TCPRoute's, UDPRoute's or TLSRoute's parent statuses. */
  private async route(kind: 'HTTPRoute' | 'GRPCRoute' | StreamRouteKind, key: string): Promise<void> {
    const obj = this.d.informers[kind]?.store.get(key) as Obj | undefined;
    if (!obj) return;
    const gen = obj.metadata.generation ?? 0;
    const st = this.state();
    const rejected = this.d.model.snapshot().rejectedCrds.get(`${kind}/${key}`);
    const ns = obj.metadata.namespace ?? '';
    type ParentStatus = { parentRef: Record<string, unknown>; controllerName: string; conditions: ApiCondition[] };
    const cur = (obj.status as { parents?: ParentStatus[] } | undefined)?.parents ?? [];
    const others = cur.filter((p) => p.controllerName !== this.d.o.controllerName);
    const mineBefore = cur.filter((p) => p.controllerName === this.d.o.controllerName);
    const at = now();
    const refKey = (r: Record<string, unknown>) => JSON.stringify([r.group ?? GATEWAY_GROUP, r.kind ?? 'Gateway', r.namespace ?? ns, r.name, r.sectionName ?? null, r.port ?? null]);
    const old = (r: Record<string, unknown>) => mineBefore.find((p) => refKey(p.parentRef) === refKey(r))?.conditions;
    const mine: ParentStatus[] = [];
    if (rejected) {
      // The spec is refused: every parentRef naming a Gateway of Portico's hears why.
      const refs = ((obj as { spec?: { parentRefs?: Record<string, unknown>[] } }).spec?.parentRefs ?? []) as Record<string, unknown>[];
      for (const r of refs) {
        const k = `${(r.namespace as string) ?? ns}/${r.name as string}`;
        const kindOf = r.kind ?? 'Gateway';
        if ((r.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP || !(kindOf === 'Gateway' ? st.gateways.has(k) : kindOf === 'ListenerSet' && st.listenerSets.has(k))) continue;
        mine.push({
          parentRef: r,
          controllerName: this.d.o.controllerName,
          conditions: mergeApiConditions(old(r), [{ type: 'Accepted', status: 'False', reason: 'UnsupportedValue', message: rejected.reason }], gen, at),
        });
      }
    } else {
      const parents = kind === 'HTTPRoute' ? st.routes.get(key) : kind === 'GRPCRoute' ? st.routes.get(`${kind}/${key}`) : st.streamRoutes.get(`${kind}/${key}`);
      for (const p of parents ?? []) {
        const parentRef: Record<string, unknown> = { group: p.ref.group, kind: p.ref.kind, namespace: p.ref.namespace, name: p.ref.name };
        if (p.ref.sectionName !== undefined) parentRef.sectionName = p.ref.sectionName;
        if (p.ref.port !== undefined) parentRef.port = p.ref.port;
        mine.push({
          parentRef,
          controllerName: this.d.o.controllerName,
          conditions: mergeApiConditions(old(parentRef), [{ type: 'Accepted', ...p.accepted }, { type: 'ResolvedRefs', ...p.resolvedRefs }], gen, at),
        });
      }
    }
    const parents = [...others, ...mine];
    if (!mine.length && !mineBefore.length) return;
    if (sameStatus(cur, parents)) return;
    await this.patchStatus(GatewayResources[kind], obj, { parents });
  }

  /**
   * The Gateway's Service and EndpointSlice (see the file comment); its address, or why it has none. notUsable: why
   * requested addresses (spec.addresses) are not served (Programmed False, AddressNotUsable).
   */
  private async ensureService(key: string, rec: GatewayRecord, svcName: string, svcPath: string, ports: [number, number, 'TCP' | 'UDP'][], ps: string): Promise<{ address?: string; addressProblem?: string; notUsable?: string }> {
    const [gwNs, gwName] = key.split('/') as [string, string];
    let address: string | undefined;
    let addressProblem: string | undefined;
    let notUsable: string | undefined;
    const slicePath = resourcePath(Resources.EndpointSlice, gwNs, svcName);
    const existing = await this.getOrNull<KubeObject>(svcPath);
    const existingSlice = await this.getOrNull<KubeObject>(slicePath);
    if (existing && existing.metadata.annotations?.[GATEWAY_LABEL] !== key) {
      addressProblem = `Service ${gwNs}/${svcName} exists and is not Portico's: it is left as it is (rename or remove it)`;
    } else if (existingSlice && existingSlice.metadata.annotations?.[GATEWAY_LABEL] !== key) {
      addressProblem = `EndpointSlice ${gwNs}/${svcName} exists and is not Portico's: it is left as it is (rename or remove it)`;
    } else {
      const pick = await this.pickAddress(rec, gwNs, svcName, existing, ports);
      notUsable = pick.notUsable;
      if (pick.requested && !pick.clusterIP && !existing) {
        // Letting the API server pick one instead would give the Gateway an address nobody asked for.
        return { addressProblem: `${notUsable}; the Gateway has no address until one of them is usable`, notUsable: notUsable! };
      }
      const previous = clusterIpOf(existing);
      let recreated = false;
      if (pick.clusterIP && existing && !(previous && sameIp(pick.clusterIP, previous))) {
        // A Service's clusterIP cannot change: this one (Portico's, for this Gateway, checked above) is recreated.
        await this.deleteOwnService(svcPath, existing);
        recreated = true;
      }
      const meta = (kind: string) => ({
        name: svcName,
        namespace: gwNs,
        labels: { ...(rec.infrastructure?.labels ?? {}), [GATEWAY_LABEL]: gatewayLabel(key), [GATEWAY_NAME_LABEL]: gatewayNameLabel(gwName), ...(kind === 'EndpointSlice' ? { 'kubernetes.io/service-name': svcName, 'endpointslice.kubernetes.io/managed-by': 'gateway.portico.dev' } : {}) },
        annotations: { ...(rec.infrastructure?.annotations ?? {}), [GATEWAY_LABEL]: key, [CONTROLLER_ANNOTATION]: this.d.o.controllerName },
        ownerReferences: [{ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', name: gwName, uid: rec.uid, controller: true }],
      });
      const applyService = (clusterIP: string | undefined) =>
        this.apply<{ spec?: { clusterIP?: string } }>(svcPath, {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: meta('Service'),
          // Without a requested address the API server picks one, and keeps the one the Service has.
          spec: { type: 'ClusterIP', ...(clusterIP ? { clusterIP } : {}), ports: ports.map(([port, target, protocol]) => ({ name: `port-${port}`, port, targetPort: target, protocol })) },
        });
      let applied: { spec?: { clusterIP?: string } };
      try {
        applied = await applyService(pick.clusterIP);
      } catch (e) {
        // Refused after all (held by a Service Portico does not watch, or taken since the check): said, and tried
        // again at the next reconcile; a Service recreated for it gets its previous address back meanwhile.
        const refused = pick.clusterIP ? addressRefusal(e) : undefined;
        if (!refused) throw e;
        const msg = `spec.addresses: not usable: ${pick.clusterIP}: ${refused}`;
        if (!recreated || !previous) return { addressProblem: msg, notUsable: msg };
        applied = await applyService(previous);
        notUsable = [pick.notUsable, msg].filter(Boolean).join('; ');
        pick.clusterIP = undefined;
      }
      const [pns, pname] = ps.split('/') as [string, string];
      const slices = this.d.model.snapshot().slices.get(`${pns}/${pname}`) ?? [];
      const seen = new Set<string>();
      const endpoints = slices
        .filter((sl) => sl.addressType === 'IPv4')
        .flatMap((sl) => sl.endpoints)
        .filter((e) => (seen.has(e.address) ? false : (seen.add(e.address), true)))
        .map((e) => ({ addresses: [e.address], conditions: { ready: e.ready, serving: e.serving, terminating: e.terminating } }));
      await this.apply(slicePath, {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: meta('EndpointSlice'),
        addressType: 'IPv4',
        endpoints,
        ports: ports.map(([port, target, protocol]) => ({ name: `port-${port}`, port: target, protocol })),
      });
      address = applied.spec?.clusterIP && applied.spec.clusterIP !== 'None' ? applied.spec.clusterIP : undefined;
      // Reported as requested (the same address, possibly spelled otherwise by the API server).
      if (address && pick.clusterIP && sameIp(address, pick.clusterIP)) address = pick.clusterIP;
      if (!address) addressProblem = `Service ${gwNs}/${svcName} has no cluster IP yet`;
      else if (notUsable && !pick.clusterIP) notUsable += `; the Gateway keeps its current address ${address}`;
    }
    return { ...(address ? { address } : {}), ...(addressProblem ? { addressProblem } : {}), ...(notUsable ? { notUsable } : {}) };
  }

  /**
   * The cluster IP the Gateway's Service should have. The requested addresses (spec.addresses of type IPAddress with
   * a value; the attachment refuses other types) are tried in the order written, and the first one the API server
   * lets a Service have is it: the one the Service already has, or one a dry-run create of a Service accepts (the API
   * server refuses addresses outside its Service range and addresses other Services hold, Portico's own and the
   * other Gateways' included). A ClusterIP Service has one address, so those after it are not served. clusterIP
   * undefined: none was requested (the API server picks one, or the Service keeps its own) or none is usable.
   */
  private async pickAddress(rec: GatewayRecord, ns: string, svcName: string, existing: KubeObject | null, ports: [number, number, 'TCP' | 'UDP'][]): Promise<{ requested: boolean; clusterIP?: string; notUsable?: string }> {
    const requested = requestedAddresses(rec);
    if (!requested.length) return { requested: false };
    const current = clusterIpOf(existing);
    // The API server's dry run checks the range (and the family), not whether another Service holds the address (its
    // IPAddress allocator, Kubernetes 1.33 on): the Services Portico watches answer that first, so a working Service
    // is not removed for an address it cannot get. Which Service holds it is not said (it may be another tenant's).
    const services = this.d.model.snapshot().services;
    const held = (ip: string) => [...services.values()].some((sv) => sv.key !== `${ns}/${svcName}` && ((!!sv.clusterIP && sameIp(sv.clusterIP, ip)) || (sv.otherIPs ?? []).some((a) => sameIp(a, ip))));
    const refusals: string[] = [];
    let clusterIP: string | undefined;
    for (const ip of requested) {
      if (current && sameIp(ip, current)) {
        clusterIP = ip;
        break;
      }
      if (isIP(ip) !== 4) {
        refusals.push(`${ip}: Portico's pods are reached over IPv4 (their EndpointSlice), so a Gateway's address is an IPv4 address`);
        continue;
      }
      if (held(ip)) {
        refusals.push(`${ip}: another Service holds this cluster IP`);
        continue;
      }
      try {
        await this.d.client.request('POST', resourcePath(Resources.Service, ns), {
          query: { dryRun: 'All', fieldManager: 'portico-gateway' },
          body: {
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { generateName: 'portico-address-check-', namespace: ns },
            spec: { type: 'ClusterIP', clusterIP: ip, ports: ports.map(([port, , protocol]) => ({ name: `port-${port}`, port, protocol })) },
          },
        });
        clusterIP = ip;
        break;
      } catch (e) {
        const refused = addressRefusal(e);
        if (!refused) throw e;
        refusals.push(`${ip}: ${refused}`);
      }
    }
    const unserved = clusterIP ? requested.slice(requested.indexOf(clusterIP) + 1) : [];
    const parts = [
      ...(refusals.length ? [`spec.addresses: not usable: ${refusals.join('; ')}`] : []),
      ...(unserved.length ? [`spec.addresses: ${unserved.join(', ')} not served: a Gateway has one address, the cluster IP of its Service (${clusterIP})`] : []),
    ];
    return { requested: true, ...(clusterIP ? { clusterIP } : {}), ...(parts.length ? { notUsable: parts.join('; ') } : {}) };
  }

  /** Deletes the Gateway's Service (to recreate it with another cluster IP): only that object, as read (uid and version). */
  private async deleteOwnService(path: string, existing: KubeObject): Promise<void> {
    if (!this.mine(existing)) throw new Error(`Service ${existing.metadata.namespace}/${existing.metadata.name} is another Portico's: its address is not changed`);
    try {
      await this.d.client.request('DELETE', path, {
        body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: existing.metadata.uid, resourceVersion: existing.metadata.resourceVersion } },
      });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  /** Services and EndpointSlices of Gateways that are gone or no longer Portico's (removed while it was not running). */
  async removeOrphans(): Promise<void> {
    for (const r of [Resources.Service, Resources.EndpointSlice]) {
      const list = await this.d.client.request<{ items: KubeObject[] }>('GET', resourcePath(r), { query: { labelSelector: GATEWAY_LABEL } });
      // The state is read after the list, never before: a Gateway created meanwhile has its Service in the list
      // and is in the model by then (Portico wrote that Service from the model), so it is not taken for an orphan.
      const st = this.state();
      for (const o of list.items) {
        const key = o.metadata.annotations?.[GATEWAY_LABEL];
        if (!key || st.gateways.has(key) || !this.mine(o)) continue;
        try {
          await this.d.client.request('DELETE', resourcePath(r, o.metadata.namespace, o.metadata.name));
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
      }
    }
  }
}

/** The IPAddress values of a Gateway's spec.addresses, in the order written, each once. */
function requestedAddresses(rec: GatewayRecord): string[] {
  const out: string[] = [];
  for (const a of rec.addresses) if (a.type === 'IPAddress' && a.value && !out.some((x) => sameIp(x, a.value!))) out.push(a.value);
  return out;
}

/** Whether two spellings name the same IP address ("2001:db8::1" and "2001:DB8:0::1"). */
function sameIp(a: string, b: string): boolean {
  const canon = (s: string) => {
    try {
      return new URL(`http://${s.includes(':') ? `[${s}]` : s}/`).hostname;
    } catch {
      return s;
    }
  };
  return canon(a) === canon(b);
}

function clusterIpOf(svc: KubeObject | null): string | undefined {
  const ip = (svc as { spec?: { clusterIP?: string } } | null)?.spec?.clusterIP;
  return ip && ip !== 'None' ? ip : undefined;
}

/**
 * The API server's reason for refusing a Service's cluster IP (422 naming spec.clusterIP(s) or spec.ipFamilies: out
 * of its range, held by another Service, a family the cluster does not serve), in its own words; undefined for any
 * other failure.
 */
function addressRefusal(e: unknown): string | undefined {
  if (!(e instanceof ApiError) || e.status !== 422) return undefined;
  const msg = e.message.slice(`${e.method} ${e.path}: ${e.status} ${e.reason}: `.length).replace(/^Service "[^"]*" is invalid: /, '');
  return /spec\.(clusterIPs?|ipFamilies)\b/.test(msg) ? msg : undefined;
}

/** A label value for a Gateway name (names may be longer than a label value, or end in a dot-free character class). */
function gatewayNameLabel(name: string): string {
  return name.length <= 63 ? name : `${name.slice(0, 52)}-${createHash('sha256').update(name).digest('hex').slice(0, 10)}`;
}
