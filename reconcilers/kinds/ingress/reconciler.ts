// Ingress reconciler: decides first whether Portico owns the Ingress (its class), then validates and normalizes
// it into the model or records why it is rejected. An Ingress of another class is dropped from the model before
// anything else happens: no validation, no Warning, no Secret read — so Portico can run side by side with
// ingress-nginx during a migration without commenting on (or loading the keys of) its Ingresses.
import type { Reconciler, ReconcileContext } from '../../../operator/controller.ts';
import type { Informer } from '../../../operator/informer.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { Model } from '../../model/model.ts';
import { normalizeIngress } from '../../model/normalize.ts';
import type { ConfigMapReader, SecretReader } from '../../annotations/plugins.ts';
import { isIngressServed } from '../../translate/translate.ts';
import type { ClassOptions } from '../kind.ts';

export type { ClassOptions } from '../kind.ts';

/** The class an Ingress asks for, read straight from the object (before any validation). */
export function requestedClass(obj: KubeObject): { className: string | null; classFromAnnotation: boolean } {
  const spec = (obj as { spec?: { ingressClassName?: unknown } }).spec;
  if (typeof spec?.ingressClassName === 'string' && spec.ingressClassName) return { className: spec.ingressClassName, classFromAnnotation: false };
  const legacy = obj.metadata.annotations?.['kubernetes.io/ingress.class'];
  if (typeof legacy === 'string' && legacy) return { className: legacy, classFromAnnotation: true };
  return { className: null, classFromAnnotation: false };
}

export function ownsIngress(obj: KubeObject, model: Model, o: ClassOptions): boolean {
  return isIngressServed(requestedClass(obj), model.classList(), o);
}

export class IngressReconciler implements Reconciler {
  private readonly informer: Informer<KubeObject>;
  private readonly model: Model;
  private readonly o: ClassOptions;
  private readonly secrets: SecretReader;
  /** secrets: reads the auth-secret of basic auth and the proxy-ssl-secret (loaded once the model says they are referenced). */
  private readonly configMaps: ConfigMapReader;
  /** configMaps: reads the ConfigMap of ingress-nginx's custom-headers (loaded once an Ingress names it). */
  constructor(informer: Informer<KubeObject>, model: Model, o: ClassOptions, secrets: SecretReader = () => undefined, configMaps: ConfigMapReader = () => undefined) {
    this.informer = informer;
    this.model = model;
    this.o = o;
    this.secrets = secrets;
    this.configMaps = configMaps;
  }
  async reconcile(_ctx: ReconcileContext, key: string): Promise<void> {
    const obj = this.informer.store.get(key);
    if (!obj || !ownsIngress(obj, this.model, this.o)) {
      this.model.deleteIngress(key);
      return;
    }
    const r = normalizeIngress(obj, this.secrets, this.configMaps);
    if (r.ok) this.model.setIngress(r.ingress);
    else this.model.rejectIngress({ key, reason: r.reason });
    // Warnings about the content (conflicts, missing backends, bad annotations) and rejections are reported by
    // the gateway reconciler, which sees all Ingresses together.
  }
}
