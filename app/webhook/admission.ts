// Admission decisions for Ingresses and Portico's CRDs, made with exactly the code the reconcilers run: the same
// zod schemas and normalizers (reconcilers/model/normalize.ts, reconcilers/crds/normalize.ts) and the same pure
// translation (reconcilers/translate/translate.ts) over the replica's model. Nothing here executes anything: no
// nginx, no openssl, no child process — ingress-nginx's CVE-2025-1974 came from running `nginx -t` on admission
// input, and Portico never renders user input into a configuration file in the first place.
//
// What is denied: what the reconciler would refuse or drop (a malformed object, an invalid path for its type, an
// annotation value its schema refuses — injection payloads included —, an IP list or auth that cannot be applied).
// What is admitted with a warning: what depends on other objects and may resolve later (a missing Plugin) and
// conflicts with older objects, naming the one that wins — exactly the Warning Events the controller would record
// after the fact.
//
// Secrets are never read here, and nothing derived from one is ever said. Anyone who can reach the webhook's port
// can send an AdmissionReview (the API server is not the only possible caller), and even the API server relays the
// answer to whoever wrote the object — who may be allowed to write Ingresses but not to read the Secrets of their
// namespace. So the webhook judges the object alone: what a referenced Secret holds (auth-secret, auth-tls-secret,
// proxy-ssl-secret, TLS secrets, a Plugin's configFrom, a Consumer's or Upstream's Secrets) is judged by the
// controller, which fails closed and reports it with Events on the object in its own namespace. The translation
// runs over the model without its TLS material, and its findings about the object's Secrets are left out.
import type { KubeObject } from '../../operator/kube/object.ts';
import type { ModelSnapshot } from '../../reconcilers/model/model.ts';
import type { CrdKind } from '../../reconcilers/model/model.ts';
import type { TranslateOptions } from '../../reconcilers/translate/translate.ts';
import type { Verdict } from '../../reconcilers/kinds/admission.ts';
import { ADMITTED } from '../../reconcilers/kinds/registry.ts';

export type { Verdict } from '../../reconcilers/kinds/admission.ts';
export { reviewIngress } from '../../reconcilers/kinds/ingress/admission.ts';

export type ClassOptions = Pick<TranslateOptions, 'controllerClass' | 'ingressClassName' | 'watchWithoutClass'>;

/** The review of an object of `kind` (the kind's own, from the registry); a kind without one is admitted. */
export function reviewObject(kind: string, obj: KubeObject, snap: ModelSnapshot, o: TranslateOptions, now = new Date()): Verdict {
  const r = ADMITTED.find((k) => k.kind === kind)?.admission;
  return r ? r(obj, snap, o, now) : { allowed: true, warnings: [] };
}

/** The review of one of Portico's CRDs. */
export function reviewCrd(kind: CrdKind, obj: KubeObject, snap: ModelSnapshot, o: TranslateOptions, now = new Date()): Verdict {
  return reviewObject(kind, obj, snap, o, now);
}

// ---- AdmissionReview (admission.k8s.io/v1) ----------------------------------------------------------------------

export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  operation: string;
  namespace?: string;
  object?: KubeObject;
}

/** The object under review and its kind, or null when the request is not for something Portico validates. */
export function subjectOf(req: AdmissionRequest): { kind: string; obj: KubeObject } | null {
  if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') return null;
  const obj = req.object;
  if (!obj || typeof obj !== 'object' || !obj.metadata) return null;
  // The API server fills in the namespace of namespaced objects in the request, not always in the object (CREATE).
  const withNs = obj.metadata.namespace || !req.namespace ? obj : { ...obj, metadata: { ...obj.metadata, namespace: req.namespace } };
  // The kinds with an admission review (reconcilers/kinds/registry.ts).
  const d = ADMITTED.find((k) => k.resource.group === req.kind.group && k.resource.kind === req.kind.kind);
  return d ? { kind: d.kind, obj: withNs } : null;
}

/** Admission warnings are shown one per line by kubectl; the API server limits their size (keep each short). */
export function responseOf(uid: string, v: Verdict): Record<string, unknown> {
  const response: Record<string, unknown> = { uid, allowed: v.allowed };
  if (!v.allowed) response.status = { code: 400, reason: 'Invalid', message: `Portico: ${v.message ?? 'denied'}` };
  if (v.warnings.length) response.warnings = v.warnings.slice(0, 20).map((w) => (w.length > 500 ? `${w.slice(0, 499)}…` : w));
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}
