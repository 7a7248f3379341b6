// Status conditions of Portico's CRDs, like Gateway API's: `Accepted` (the spec is valid and Portico serves it),
// `ResolvedRefs` (every Service, Secret and Plugin it names exists and is usable) and, for Routes, `Programmed`
// (live in nginx). Each condition carries the object's generation (observedGeneration), a reason and a message a
// user can act on. Written by the leader only, with a merge patch of the status subresource, and only when a
// condition changed (lastTransitionTime moves only when the condition's status does).
import type { Reconciler, ReconcileContext } from '../../operator/controller.ts';
import type { Informer } from '../../operator/informer.ts';
import { isNotFound, type KubeClient } from '../../operator/kube/client.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import { resourcePath } from '../../operator/kube/resources.ts';
import { Resources } from '../resources.ts';
import type { CrdKind, Model } from '../model/model.ts';
import type { IngressStatus } from '../translate/translate.ts';

export interface Condition {
  type: 'Accepted' | 'ResolvedRefs' | 'Programmed';
  status: 'True' | 'False' | 'Unknown';
  observedGeneration: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}
type Desired = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;
type CrdObject = KubeObject & { status?: { observedGeneration?: number; conditions?: Condition[] } };

const clip = (s: string) => (s.length > 1000 ? `${s.slice(0, 997)}...` : s);

/**
 * Pure: the conditions of one CR from what the model and the gateway know. null = not Portico's to write (a Route
 * of another class).
 */
export function desiredConditions(kind: CrdKind, key: string, model: Model, route: { status: IngressStatus | undefined; programmed: boolean; synced: boolean }): Desired[] | null {
  const ref = `${kind}/${key}`;
  const rejected = model.snapshot().rejectedCrds.get(ref);
  if (rejected) {
    const out: Desired[] = [{ type: 'Accepted', status: 'False', reason: 'Invalid', message: clip(rejected.reason) }];
    if (kind === 'Route') out.push({ type: 'Programmed', status: 'False', reason: 'Invalid', message: 'not programmed: the spec is invalid (see Accepted)' });
    return out;
  }
  switch (kind) {
    case 'Route': {
      if (!model.crd('Route', key)) return null;
      const st = route.status;
      if (!st || !route.synced) return [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: 'accepted; waiting for the gateway to program it' }, { type: 'Programmed', status: 'Unknown', reason: 'Pending', message: 'not synced yet' }];
      const problems = st.problems.filter((p) => p);
      const out: Desired[] = [
        { type: 'Accepted', status: 'True', reason: 'Accepted', message: clip(problems.length ? `accepted with problems: ${problems.join('; ')}` : 'accepted') },
        st.unresolved?.length
          ? { type: 'ResolvedRefs', status: 'False', reason: 'RefNotFound', message: clip(`cannot resolve ${st.unresolved.join(', ')}; the rules using them answer 503 (fail closed)`) }
          : { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs', message: 'every Service, Secret and Plugin it names was found' },
        route.programmed
          ? { type: 'Programmed', status: 'True', reason: 'Programmed', message: 'served by nginx' }
          : { type: 'Programmed', status: 'False', reason: 'NotProgrammed', message: clip(problems.length ? `no rule is served: ${problems.join('; ')}` : 'no rule is served') },
      ];
      return out;
    }
    case 'Plugin': {
      const p = model.crd('Plugin', key);
      if (!p) return null;
      if (p.error && p.unresolved) return [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: `${p.type} plugin` }, { type: 'ResolvedRefs', status: 'False', reason: 'RefNotFound', message: clip(`${p.error}; routes using this plugin answer 503 (fail closed)`) }];
      if (p.error) return [{ type: 'Accepted', status: 'False', reason: 'InvalidConfig', message: clip(`${p.error}; routes using this plugin answer 503 (fail closed)`) }, { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs', message: 'references resolved' }];
      return [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: `${p.type} plugin, configuration valid` }, { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs', message: p.authService ? `calls service ${p.authService.service}:${p.authService.port}` : 'references resolved' }];
    }
    case 'Consumer': {
      const c = model.crd('Consumer', key);
      if (!c) return null;
      const creds = `${c.keys.length} key-auth and ${c.basic.length} basic-auth credential${c.keys.length + c.basic.length === 1 ? '' : 's'}`;
      return [
        { type: 'Accepted', status: 'True', reason: 'Accepted', message: `consumer ${c.username}: ${creds}` },
        c.problems.length
          ? { type: 'ResolvedRefs', status: 'False', reason: 'InvalidCredentials', message: clip(`${c.problems.join('; ')}; the other credentials work`) }
          : { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs', message: 'every credential Secret was read' },
      ];
    }
    case 'Upstream': {
      const u = model.crd('Upstream', key);
      if (!u) return null;
      const svc = model.service(u.serviceKey);
      if (u.tls?.caError) {
        return [
          { type: 'Accepted', status: 'True', reason: 'Accepted', message: `applies to service ${u.serviceKey}` },
          { type: 'ResolvedRefs', status: 'False', reason: 'RefNotFound', message: clip(`${u.tls.caError}; requests to this Service answer 503 until the CA can be read (never unverified)`) },
        ];
      }
      return [
        { type: 'Accepted', status: 'True', reason: 'Accepted', message: `applies to service ${u.serviceKey}${u.ports ? ` ports ${u.ports.join(', ')}` : ''}` },
        svc
          ? { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs', message: `service ${u.serviceKey} found` }
          : { type: 'ResolvedRefs', status: 'False', reason: 'ServiceNotFound', message: `service ${u.serviceKey} not found` },
      ];
    }
  }
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

const RESOURCES = { Route: Resources.Route, Upstream: Resources.Upstream, Plugin: Resources.Plugin, Consumer: Resources.Consumer } as const;

/** Keys are kind-qualified references ("Route/ns/name"). */
export class CrdStatusReconciler implements Reconciler {
  private readonly d: {
    informers: Record<CrdKind, Informer<KubeObject>>;
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
    const kind = ref.slice(0, slash) as CrdKind;
    const key = ref.slice(slash + 1);
    const inf = this.d.informers[kind];
    if (!inf) return;
    const obj = inf.store.get(key) as CrdObject | undefined;
    if (!obj) return;
    const desired = desiredConditions(kind, key, this.d.model, { status: this.d.routeStatus(ref), programmed: this.d.programmed(ref), synced: this.d.synced() });
    if (!desired) return;
    const gen = obj.metadata.generation ?? 0;
    const { conditions, changed } = mergeConditions(obj.status?.conditions, desired, gen, new Date().toISOString().replace(/\.\d+Z$/, 'Z'));
    if (!changed && obj.status?.observedGeneration === gen) return;
    const [ns, name] = key.split('/') as [string, string];
    try {
      await this.d.client.request('PATCH', resourcePath(RESOURCES[kind], ns, name, 'status'), {
        body: { status: { observedGeneration: gen, conditions } },
        contentType: 'application/merge-patch+json',
      });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}
