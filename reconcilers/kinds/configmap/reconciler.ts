// ConfigMap reconciler: the controller's global settings (--configmap). A bad value keeps the previous value of
// that key and produces a Warning event on the ConfigMap — except the access lists (ACCESS_KEYS: whitelist-/denylist-
// source-range, block-*), whose invalid value fails closed instead (global-config.ts), with the same Warning.
// add-headers / proxy-set-headers are resolved here from the ConfigMaps they name (model/global-headers.ts): a
// missing one or a header left out is a Warning too; references.ts reads those ConfigMaps and calls back on change.
import type { Reconciler, ReconcileContext } from '../../../operator/controller.ts';
import type { EventRecorder } from '../../../operator/events.ts';
import type { Informer } from '../../../operator/informer.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { Model } from '../../model/model.ts';
import { defaultGlobalConfig, parseGlobalConfig, refusedConfigWhy } from '../../model/global-config.ts';
import { globalHeaderRefs, globalHeadersOf, type ConfigMapState } from '../../model/global-headers.ts';

/** How the ConfigMaps that add-headers / proxy-set-headers name are read, and how they are asked to be (re)read. */
export interface GlobalHeaderSource {
  read: (key: string) => ConfigMapState;
  watch: (keys: string[]) => void;
}

export class ConfigMapReconciler implements Reconciler {
  private readonly informer: Informer<KubeObject & { data?: Record<string, string> }>;
  private readonly model: Model;
  private readonly events: EventRecorder;
  private readonly key: string;
  private readonly headers: GlobalHeaderSource | undefined;
  /** The ConfigMaps named last time (their reader drops them once nothing names them). */
  private named: string[] = [];
  constructor(informer: Informer<KubeObject & { data?: Record<string, string> }>, model: Model, events: EventRecorder, key: string, headers?: GlobalHeaderSource) {
    this.informer = informer;
    this.model = model;
    this.events = events;
    this.key = key;
    this.headers = headers;
  }
  async reconcile(_ctx: ReconcileContext, key: string): Promise<void> {
    if (key !== this.key) return;
    const obj = this.informer.store.get(key);
    if (!obj) {
      this.model.setGlobalConfig(defaultGlobalConfig());
      this.watchNamed([]);
      return;
    }
    const r = parseGlobalConfig(obj.data, this.model.globalConfig());
    const ref = { ...obj, apiVersion: 'v1', kind: 'ConfigMap' };
    for (const e of r.errors) this.events.event(ref, 'Warning', 'InvalidConfiguration', 'Validating', e.message);
    // ingress-nginx keys Portico refuses on purpose get their reason, one Warning each; the rest one Warning together.
    const ignored: string[] = [];
    for (const k of r.unknown) {
      const why = refusedConfigWhy(k);
      if (why) this.events.event(ref, 'Warning', 'UnsupportedKey', 'Validating', `${k} is ignored: ${why}`);
      else ignored.push(k);
    }
    if (ignored.length) this.events.event(ref, 'Warning', 'UnknownKeys', 'Validating', `keys Portico does not know are ignored: ${ignored.join(', ')}`);
    const values = r.values;
    delete values.globalHeaders;
    if (this.headers) {
      const h = globalHeadersOf(values, this.headers.read);
      if (h.headers) values.globalHeaders = h.headers;
      for (const w of h.warnings) this.events.event(ref, 'Warning', 'InvalidConfiguration', 'Validating', w);
    }
    this.model.setGlobalConfig(values);
    this.watchNamed(globalHeaderRefs(values));
  }

  /** Has the named ConfigMaps read (and those no longer named dropped), after the model names them. */
  private watchNamed(now: string[]): void {
    const all = [...new Set([...this.named, ...now])];
    this.named = now;
    if (all.length) this.headers?.watch(all);
  }
}
