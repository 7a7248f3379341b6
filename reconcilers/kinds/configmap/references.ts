// ConfigMaps that Ingresses read (ingress-nginx's custom-headers, auth-proxy-set-headers, fastcgi-params-configmap),
// those whose data a CR's record was made from (a Gateway's client-certificate CA bundles, RecordReads.configMaps),
// and those the controller ConfigMap's add-headers / proxy-set-headers name. Every ConfigMap of the watched namespaces is cached without its data unless one of them
// names it (configMapTransform); a ConfigMap cached without its data is fetched once when a reference appears. After
// each change the Ingresses reading it are reconciled again, and the controller ConfigMap when it names it, so they
// see the new content — header and FastCGI param changes apply without a restart (ingress-nginx needs one).
import type { Reconciler, ReconcileContext } from '../../../operator/controller.ts';
import type { Informer } from '../../../operator/informer.ts';
import { isNotFound, type KubeClient } from '../../../operator/kube/client.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { resourcePath } from '../../../operator/kube/resources.ts';
import { Resources } from '../../resources.ts';
import type { Model } from '../../model/model.ts';
import { globalHeaderRefs, type ConfigMapState } from '../../model/global-headers.ts';

export type ConfigMapObject = KubeObject & { data?: Record<string, string> };

/** Whether the controller ConfigMap's add-headers or proxy-set-headers names this ConfigMap ("namespace/name"). */
function namedGlobally(model: Model, key: string): boolean {
  return globalHeaderRefs(model.globalConfig()).includes(key);
}

/** Keeps the data only of the ConfigMaps an Ingress reads (the model's index) or the controller ConfigMap names. */
export function configMapTransform(model: Model): (c: ConfigMapObject) => ConfigMapObject {
  return (c) => {
    const key = `${c.metadata.namespace}/${c.metadata.name}`;
    if (model.ingressesUsingConfigMap(key).length || model.crdsUsingConfigMap(key).length || namedGlobally(model, key)) return c;
    const { data: _dropped, ...rest } = c;
    return { ...rest, metadata: { ...c.metadata, annotations: {} } };
  };
}

export class ReferencedConfigMapReconciler implements Reconciler {
  /** ConfigMaps read so far, with their data: what `lookup` answers. */
  private readonly loaded = new Map<string, Record<string, string>>();
  private readonly d: {
    model: Model;
    informer: Informer<ConfigMapObject>;
    client: KubeClient;
    enqueueIngress: (key: string) => void;
    enqueueGlobal?: () => void;
    /** Normalizes a CR again ("Kind/namespace/name"). */
    enqueueCrd?: (ref: string) => void;
  };
  constructor(d: ReferencedConfigMapReconciler['d']) {
    this.d = d;
  }

  /** A ConfigMap's data ("namespace/name"), or undefined when it does not exist (or is not loaded yet). */
  readonly lookup = (key: string): { data: Record<string, string> } | undefined => {
    const l = this.loaded.get(key);
    if (l) return { data: l };
    const o = this.d.informer.store.get(key);
    return o?.data ? { data: o.data } : undefined;
  };

  /** What the controller ConfigMap's add-headers / proxy-set-headers read: the data, 'pending' while it is fetched, or undefined (no such ConfigMap). */
  readonly state = (key: string): ConfigMapState => {
    const found = this.lookup(key);
    if (found) return found;
    return this.d.informer.store.get(key) ? 'pending' : undefined;
  };

  async reconcile(_ctx: ReconcileContext, key: string): Promise<void> {
    const users = this.d.model.ingressesUsingConfigMap(key);
    const crds = this.d.model.crdsUsingConfigMap(key);
    const global = namedGlobally(this.d.model, key);
    if (!users.length && !crds.length && !global) {
      this.loaded.delete(key);
      return;
    }
    const before = JSON.stringify(this.loaded.get(key) ?? null);
    const obj = this.d.informer.store.get(key);
    if (!obj) this.loaded.delete(key);
    else if (obj.data) this.loaded.set(key, obj.data);
    else {
      const [ns, name] = key.split('/') as [string, string];
      try {
        const full = await this.d.client.request<ConfigMapObject>('GET', resourcePath(Resources.ConfigMap, ns, name));
        this.loaded.set(key, full.data ?? {});
      } catch (e) {
        if (!isNotFound(e)) throw e;
        this.loaded.delete(key);
      }
    }
    // The Ingresses read it when they are normalized: reconcile them when what they would read changed.
    if (JSON.stringify(this.loaded.get(key) ?? null) !== before) {
      for (const ing of users) this.d.enqueueIngress(ing);
      for (const ref of crds) this.d.enqueueCrd?.(ref);
      if (global) this.d.enqueueGlobal?.();
    }
  }
}
