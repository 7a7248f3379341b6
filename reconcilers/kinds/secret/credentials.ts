// Credential Secret reconciler: Secrets that Consumers (credentials), Plugins (configFrom), Upstreams (CA bundles)
// and Ingresses (auth-secret, proxy-ssl-secret) read. Their data is kept only while something references them (the informers strip
// the data of every other Secret); a Secret cached without its data is fetched once when a reference appears.
// After each change the objects reading it are reconciled again, so they see the new content.
import type { Reconciler, ReconcileContext } from '../../../operator/controller.ts';
import type { Informer } from '../../../operator/informer.ts';
import { isNotFound, type KubeClient } from '../../../operator/kube/client.ts';
import { resourcePath } from '../../../operator/kube/resources.ts';
import { Resources } from '../../resources.ts';
import type { Model } from '../../model/model.ts';
import type { SecretObject } from './reconciler.ts';
import type { SecretData } from '../crd-normalize.ts';

export class CredentialSecretReconciler implements Reconciler {
  /** Secrets read so far, with their data: what `lookup` answers first. */
  private readonly loaded = new Map<string, SecretData>();
  private readonly d: {
    model: Model;
    /** Opaque (and other non-TLS) Secrets, then TLS Secrets (a CA bundle may sit in a kubernetes.io/tls Secret). */
    informers: Informer<SecretObject>[];
    client: KubeClient;
    /** Reconcile the object behind a kind-qualified reference ("Consumer/ns/name", "Ingress/ns/name"...). */
    enqueue: (ref: string) => void;
  };
  constructor(d: CredentialSecretReconciler['d']) {
    this.d = d;
  }

  /** A Secret's data as the readers see it ("namespace/name"), or undefined when it is unknown or not loaded. */
  readonly lookup = (key: string): SecretData | undefined => {
    const l = this.loaded.get(key);
    if (l) return l;
    const o = this.cached(key);
    return o?.data ? o : undefined;
  };

  private cached(key: string): SecretObject | undefined {
    for (const inf of this.d.informers) {
      const o = inf.store.get(key);
      if (o) return o;
    }
    return undefined;
  }

  async reconcile(_ctx: ReconcileContext, key: string): Promise<void> {
    const users = this.d.model.crdsUsingSecret(key);
    if (!users.length) {
      this.loaded.delete(key);
      return;
    }
    const obj = this.cached(key);
    if (!obj) this.loaded.delete(key);
    else if (obj.data) this.loaded.set(key, { type: obj.type, data: obj.data });
    else {
      const [ns, name] = key.split('/') as [string, string];
      try {
        const full = await this.d.client.request<SecretObject>('GET', resourcePath(Resources.Secret, ns, name));
        this.loaded.set(key, { type: full.type, data: full.data ?? {} });
      } catch (e) {
        if (!isNotFound(e)) throw e;
        this.loaded.delete(key);
      }
    }
    for (const ref of users) this.d.enqueue(ref);
  }
}
