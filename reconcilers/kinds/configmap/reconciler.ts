// ConfigMap reconciler: the controller's global settings (--configmap). A bad value keeps the previous value of
// that key and produces a Warning event on the ConfigMap — except the access lists (ACCESS_KEYS: whitelist-/denylist-
// source-range, block-*), whose invalid value fails closed instead (global-config.ts), with the same Warning.
import type { Reconciler, ReconcileContext } from '../../../operator/controller.ts';
import type { EventRecorder } from '../../../operator/events.ts';
import type { Informer } from '../../../operator/informer.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { Model } from '../../model/model.ts';
import { defaultGlobalConfig, parseGlobalConfig, refusedConfigWhy } from '../../model/global-config.ts';

export class ConfigMapReconciler implements Reconciler {
  private readonly informer: Informer<KubeObject & { data?: Record<string, string> }>;
  private readonly model: Model;
  private readonly events: EventRecorder;
  private readonly key: string;
  constructor(informer: Informer<KubeObject & { data?: Record<string, string> }>, model: Model, events: EventRecorder, key: string) {
    this.informer = informer;
    this.model = model;
    this.events = events;
    this.key = key;
  }
  async reconcile(_ctx: ReconcileContext, key: string): Promise<void> {
    if (key !== this.key) return;
    const obj = this.informer.store.get(key);
    if (!obj) {
      this.model.setGlobalConfig(defaultGlobalConfig());
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
    this.model.setGlobalConfig(r.values);
  }
}
