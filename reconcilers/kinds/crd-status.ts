// Status conditions of Portico's CRDs, like Gateway API's: `Accepted` (the spec is valid and Portico serves it),
// `ResolvedRefs` (every Service, Secret and Plugin it names exists and is usable) and, for Routes, `Programmed`
// (live in nginx). Each condition carries the object's generation (observedGeneration), a reason and a message a
// user can act on. Written by the leader only, with a merge patch of the status subresource, and only when a
// condition changed (lastTransitionTime moves only when the condition's status does).
import type { Reconciler, ReconcileContext } from '../../operator/controller.ts';
import type { Informer } from '../../operator/informer.ts';
import { isNotFound, type KubeClient } from '../../operator/kube/client.ts';
import { keyOf, type KubeObject } from '../../operator/kube/object.ts';
import { resourcePath } from '../../operator/kube/resources.ts';
import type { Model } from '../model/model.ts';
import type { ConditionsOf, DesiredCondition, GatewayView, KindContext, Wired } from './kind.ts';
import type { IngressStatus } from '../translate/translate.ts';

export interface Condition {
  type: 'Accepted' | 'ResolvedRefs' | 'Programmed';
  status: 'True' | 'False' | 'Unknown';
  observedGeneration: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}
type Desired = DesiredCondition;
type CrdObject = KubeObject & { status?: { observedGeneration?: number; conditions?: Condition[] } };

export const clip = (s: string) => (s.length > 1000 ? `${s.slice(0, 997)}...` : s);

/** What the status controller needs of each CRD kind (the registry's descriptors). */
export interface CrdStatusKind {
  informer: Informer<KubeObject>;
  conditions: ConditionsOf;
  /** Whether the kind has a Programmed condition (then a rejected spec is also not programmed). */
  programmed: boolean;
}

/**
 * Pure: the conditions of one CR from what the model and the gateway know. null = not Portico's to write (a Route
 * of another class).
 */
export function desiredConditions(kind: string, k: Pick<CrdStatusKind, 'conditions' | 'programmed'>, key: string, model: Model, route: { status: IngressStatus | undefined; programmed: boolean; synced: boolean }): Desired[] | null {
  const ref = `${kind}/${key}`;
  const rejected = model.snapshot().rejectedCrds.get(ref);
  if (rejected) {
    const out: Desired[] = [{ type: 'Accepted', status: 'False', reason: 'Invalid', message: clip(rejected.reason) }];
    if (k.programmed) out.push({ type: 'Programmed', status: 'False', reason: 'Invalid', message: 'not programmed: the spec is invalid (see Accepted)' });
    return out;
  }
  return k.conditions(key, model, route);
}

/** Merges desired conditions with the current ones: lastTransitionTime kept unless the status flipped. */
export function mergeConditions(current: readonly Condition[] | undefined, desired: readonly Desired[], generation: number, now: string): { conditions: Condition[]; changed: boolean } {
  let changed = (current?.length ?? 0) !== desired.length;
  const conditions = desired.map((d) => {
    const c = current?.find((x) => x.type === d.type);
    const same = c && c.status === d.status;
    const next: Condition = { ...d, observedGeneration: generation, lastTransitionTime: same ? c.lastTransitionTime : now };
    if (!c || c.status !== d.status || c.reason !== d.reason || c.message !== d.message || c.observedGeneration !== generation) changed = true;
    return next;
  });
  return { conditions, changed };
}

/** Keys are kind-qualified references ("Route/ns/name"). */
export class CrdStatusReconciler implements Reconciler {
  private readonly d: {
    kinds: ReadonlyMap<string, CrdStatusKind>;
    model: Model;
    client: KubeClient;
    isLeader: () => boolean;
    routeStatus: (ref: string) => IngressStatus | undefined;
    programmed: (ref: string) => boolean;
    synced: () => boolean;
  };
  constructor(d: CrdStatusReconciler['d']) {
    this.d = d;
  }
  async reconcile(_ctx: ReconcileContext, ref: string): Promise<void> {
    if (!this.d.isLeader()) return;
    const slash = ref.indexOf('/');
    const kind = ref.slice(0, slash);
    const key = ref.slice(slash + 1);
    const k = this.d.kinds.get(kind);
    if (!k) return;
    const obj = k.informer.store.get(key) as CrdObject | undefined;
    if (!obj) return;
    const desired = desiredConditions(kind, k, key, this.d.model, { status: this.d.routeStatus(ref), programmed: this.d.programmed(ref), synced: this.d.synced() });
    if (!desired) return;
    const gen = obj.metadata.generation ?? 0;
    const { conditions, changed } = mergeConditions(obj.status?.conditions, desired, gen, new Date().toISOString().replace(/\.\d+Z$/, 'Z'));
    if (!changed && obj.status?.observedGeneration === gen) return;
    const [ns, name] = key.split('/') as [string, string];
    try {
      await this.d.client.request('PATCH', resourcePath(k.informer.resource, ns, name, 'status'), {
        body: { status: { observedGeneration: gen, conditions } },
        contentType: 'application/merge-patch+json',
      });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}

/**
 * The one status controller of the kinds with conditions (the CRDs), keyed by kind-qualified ref: wired once the
 * gateway exists (a Route's Programmed is what the gateway says). Leader only, and only once the first complete
 * configuration is live.
 */
export function wireCrdStatus(ctx: KindContext, wired: ReadonlyMap<string, Wired>, gateway: GatewayView): void {
  const { m, model } = ctx;
  const withConditions = ctx.kinds.filter((k) => k.conditions);
  const kinds = new Map<string, CrdStatusKind>(
    withConditions.map((k) => [k.kind, { informer: (wired.get(k.kind) as Wired).informer, conditions: k.conditions as ConditionsOf, programmed: !!k.reportsProgrammed }]),
  );
  const crdStatus = new CrdStatusReconciler({
    kinds,
    model,
    client: m.client,
    isLeader: () => (m.leader ? m.isLeader() : true) && gateway.isReady(),
    routeStatus: (ref) => gateway.statusOf(ref),
    programmed: (ref) => gateway.programmed.has(ref),
    synced: () => gateway.isReady(),
  });
  const crdStatusCtrl = m.controller({ name: 'crd-status', reconciler: crdStatus, workers: 2 });
  for (const [kind, k] of kinds) crdStatusCtrl.watch(k.informer, (o) => [`${kind}/${keyOf(o)}`]);
  const follows = withConditions.filter((k) => k.statusFollows);
  model.onChange((changes) => {
    for (const c of changes) if (kinds.has(c.kind)) crdStatusCtrl.enqueue(`${c.kind}/${c.key}`);
    for (const c of changes) for (const k of follows) for (const ref of k.statusFollows!(c, model)) crdStatusCtrl.enqueue(ref);
  });
  gateway.onReported((refs) => refs.forEach((r) => crdStatusCtrl.enqueue(r)));
  const all = () => {
    for (const [kind, k] of kinds) for (const key of k.informer.store.keys()) crdStatusCtrl.enqueue(`${kind}/${key}`);
  };
  m.leader?.onStartedLeading(all);
  gateway.onReady(all);
}
