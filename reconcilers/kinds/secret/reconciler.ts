// Secret reconciler: keeps TLS material only for Secrets a served Ingress references (or the default
// certificate). The informer drops the data of every other Secret before caching it, so unreferenced keys never
// sit in Portico's memory; when a reference appears, the Secret is fetched once.
import type { Reconciler, ReconcileContext } from '../../../operator/controller.ts';
import type { EventRecorder } from '../../../operator/events.ts';
import type { Informer } from '../../../operator/informer.ts';
import { isNotFound, type KubeClient } from '../../../operator/kube/client.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { resourcePath } from '../../../operator/kube/resources.ts';
import { Resources } from '../../resources.ts';
import type { Model } from '../../model/model.ts';
import { parseTlsSecret } from '../../model/normalize.ts';

export type SecretObject = KubeObject & { type?: string; data?: Record<string, string> };

/** Informer transform: strip data unless the model says the Secret is referenced. */
export function secretTransform(model: Model): (s: SecretObject) => SecretObject {
  return (s) => {
    const key = `${s.metadata.namespace}/${s.metadata.name}`;
    if (model.isSecretReferenced(key)) return s;
    const { data: _dropped, ...rest } = s;
    return { ...rest, metadata: { ...s.metadata, annotations: {} } };
  };
}

export class SecretReconciler implements Reconciler {
  private readonly informer: Informer<SecretObject>;
  private readonly model: Model;
  private readonly client: KubeClient;
  private readonly events: EventRecorder;
  private readonly lastError = new Map<string, string>();
  constructor(informer: Informer<SecretObject>, model: Model, client: KubeClient, events: EventRecorder) {
    this.informer = informer;
    this.model = model;
    this.client = client;
    this.events = events;
  }
  async reconcile(_ctx: ReconcileContext, key: string): Promise<{ requeueAfterMs?: number } | void> {
    if (!this.model.isSecretReferenced(key)) {
      this.model.deleteSecret(key);
      this.lastError.delete(key);
      return;
    }
    let obj = this.informer.store.get(key);
    if (!obj) {
      this.model.deleteSecret(key);
      return;
    }
    if (obj.data === undefined && obj.type === 'kubernetes.io/tls') {
      // Cached without data (was unreferenced when it arrived): fetch it now.
      const [ns, name] = key.split('/') as [string, string];
      try {
        obj = await this.client.request<SecretObject>('GET', resourcePath(Resources.Secret, ns, name));
      } catch (e) {
        if (isNotFound(e)) {
          this.model.deleteSecret(key);
          return;
        }
        throw e;
      }
    }
    const m = parseTlsSecret(obj, new Date());
    if (!m.ok) {
      if (this.lastError.get(key) !== m.error) {
        this.events.event({ ...obj, apiVersion: 'v1', kind: 'Secret' }, 'Warning', 'InvalidTLSSecret', 'Validating', `${m.error}; the previous certificate (if any) stays in use`);
      }
      this.lastError.set(key, m.error);
      // Keep serving the previous good material if there was one.
      if (this.model.secret(key)?.ok) return;
      this.model.setSecret(m);
      return;
    }
    this.lastError.delete(key);
    this.model.setSecret(m);
    // Re-check when it expires.
    const ms = new Date(m.notAfter).getTime() - Date.now();
    return ms > 0 && ms < 2 ** 31 - 1 ? { requeueAfterMs: ms + 1000 } : undefined;
  }
}
