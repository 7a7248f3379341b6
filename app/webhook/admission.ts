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
import { normalizeIngress } from '../../reconcilers/model/normalize.ts';
import type { NormalizedIngress, NormalizedRoute } from '../../reconcilers/model/types.ts';
import { requestedClass } from '../../reconcilers/kinds/ingress/reconciler.ts';
import { NORMALIZERS, routeClass } from '../../reconcilers/kinds/crd-reconciler.ts';
import type { NormalizedPlugin } from '../../reconcilers/model/types.ts';
import { claimsOfIngress, claimsOfRoute, ingressRef, isIngressServed, routeRef, translate, type TranslateOptions } from '../../reconcilers/translate/translate.ts';
import type { CrdKind } from '../../reconcilers/model/model.ts';

export interface Verdict {
  allowed: boolean;
  /** Why it is denied: every problem, naming the field. */
  message?: string;
  warnings: string[];
}

export type ClassOptions = Pick<TranslateOptions, 'controllerClass' | 'ingressClassName' | 'watchWithoutClass'>;

const MAX_MESSAGE = 3000;
const clip = (s: string) => (s.length > MAX_MESSAGE ? `${s.slice(0, MAX_MESSAGE - 1)}…` : s);

/** The normalizers' Secret reader at admission: nothing is ever read (see the top of this file). */
const NOTHING_READ = (): undefined => undefined;

/** Translation findings that depend on what a Secret holds (or whether it exists): the controller reports them. */
const SECRET_REASONS = new Set(['TLSSecretNotFound', 'TLSSecretInvalid', 'TLSHostMismatch', 'BackendTLSUnavailable']);

/** Whether a finding speaks of one of these Secrets ("namespace/name"): then it is the controller's to report. */
const aboutSecrets = (message: string, keys: ReadonlySet<string>): boolean => [...keys].some((k) => message.includes(k));

/** A snapshot reduced to what can conflict with `hosts` (the translation then costs what those hosts cost). */
function around(snap: ModelSnapshot, hosts: Set<string>, replace: { ingress?: NormalizedIngress; route?: NormalizedRoute; dropKey: string }): ModelSnapshot {
  const ingresses = new Map<string, NormalizedIngress>();
  for (const [k, ing] of snap.ingresses) {
    if (k === replace.dropKey && replace.ingress) continue;
    const c = claimsOfIngress(ing);
    if ([...c.paths, ...c.defaults].some((p) => hosts.has(p.host)) || ing.tls.some((t) => t.hosts.some((h) => hosts.has(h)))) ingresses.set(k, ing);
  }
  const routes = new Map<string, NormalizedRoute>();
  for (const [k, rt] of snap.routes) {
    if (k === replace.dropKey && replace.route) continue;
    if (claimsOfRoute(rt).some((c) => hosts.has(c.pc.host))) routes.set(k, rt);
  }
  if (replace.ingress) ingresses.set(replace.ingress.key, replace.ingress);
  if (replace.route) routes.set(replace.route.key, replace.route);
  // No TLS material: the translation must not tell the caller anything about a Secret.
  return { ...snap, ingresses, routes, rejected: new Map(), rejectedCrds: new Map(), secrets: new Map(), defaultCertificate: null };
}

/** Conflicts and reference problems the translation reports about `ref`, as admission warnings (none about Secrets). */
function translationWarnings(snap: ModelSnapshot, o: TranslateOptions, ref: string, secretKeys: ReadonlySet<string>): string[] {
  const r = translate(snap, o);
  const out = new Set<string>();
  for (const e of r.events) {
    if (e.ref !== ref || e.type !== 'Warning' || SECRET_REASONS.has(e.reason) || aboutSecrets(e.message, secretKeys)) continue;
    out.add(`${e.reason}: ${e.message}`);
  }
  return [...out];
}

/** The Secrets ("namespace/name") an Ingress refers to. */
function secretsOf(ing: NormalizedIngress): Set<string> {
  const keys = new Set<string>();
  for (const k of [ing.authSecret, ing.authTlsSecret, ing.proxySsl?.secretKey]) if (k) keys.add(k);
  for (const t of ing.tls) if (t.secretName) keys.add(`${ing.namespace}/${t.secretName}`);
  return keys;
}

const stamp = (obj: KubeObject, now: Date): KubeObject =>
  // A new object is the youngest: it loses every conflict (creationTimestamp is set by the API server after admission).
  obj.metadata.creationTimestamp ? obj : { ...obj, metadata: { ...obj.metadata, creationTimestamp: now.toISOString().replace(/\.\d+Z$/, 'Z') } };

export function reviewIngress(obj: KubeObject, snap: ModelSnapshot, o: TranslateOptions, now = new Date()): Verdict {
  // Not Portico's class: not Portico's business (ingress-nginx or another controller may serve it).
  if (!isIngressServed(requestedClass(obj), snap.classes, o)) return { allowed: true, warnings: [] };
  const r = normalizeIngress(stamp(obj, now), NOTHING_READ);
  if (!r.ok) return { allowed: false, message: clip(r.reason), warnings: [] };
  const ing = r.ingress;
  const secretKeys = secretsOf(ing);
  // The reconciler words problems as what it leaves out ("annotation ignored: …"); here they are why it is denied.
  const deny: string[] = ing.problems.map((m) => m.replace(/^annotation ignored: /, ''));
  const warnings: string[] = [];
  // Access control that cannot be applied is denied — unless all that is wrong is the Secret, which was not read
  // (it reads "Secret <ns>/<name> not found"): the controller judges it and fails the paths closed if need be.
  for (const a of ing.accessControl) if (!aboutSecrets(a.kind, secretKeys)) deny.push(`${a.annotation}: ${a.kind}`);
  // proxy-ssl-secret: the same (a value, another namespace are this object's fault; the Secret is not looked at).
  if (ing.proxySsl?.error && !ing.proxySsl.missing) deny.push(ing.proxySsl.error);
  for (const u of ing.unsupportedAnnotations) warnings.push(`${u}: not supported by Portico, not applied`);
  if (deny.length) return { allowed: false, message: clip(deny.join('; ')), warnings };
  const hosts = new Set<string>();
  const c = claimsOfIngress(ing);
  for (const p of [...c.paths, ...c.defaults]) hosts.add(p.host);
  for (const t of ing.tls) for (const h of t.hosts) hosts.add(h);
  warnings.push(...translationWarnings(around(snap, hosts, { ingress: ing, dropKey: ing.key }), o, ingressRef(ing.key), secretKeys));
  return { allowed: true, warnings };
}

export function reviewCrd(kind: CrdKind, obj: KubeObject, snap: ModelSnapshot, o: TranslateOptions, now = new Date()): Verdict {
  if (kind === 'Route' && !isIngressServed({ className: routeClass(obj), classFromAnnotation: false }, snap.classes, o)) return { allowed: true, warnings: [] };
  const r = NORMALIZERS[kind](stamp(obj, now), NOTHING_READ);
  if (!r.ok) return { allowed: false, message: clip(r.reason), warnings: [] };
  const warnings: string[] = [];
  if (kind === 'Plugin') {
    const p = r.record as NormalizedPlugin;
    // A configuration error is this object's fault; a configFrom Secret (not read: `unresolved`) is the controller's.
    if (p.error && !p.unresolved) return { allowed: false, message: clip(p.error), warnings: [] };
  } else if (kind === 'Route') {
    // Consumers' credentials and an Upstream's CA come from Secrets only: nothing to say about them here.
    const rt = r.record as NormalizedRoute;
    const hosts = new Set(claimsOfRoute(rt).map((c) => c.pc.host));
    const secretKeys = new Set<string>();
    for (const t of rt.tls) {
      for (const h of t.hosts) hosts.add(h);
      if (t.secretName) secretKeys.add(`${rt.namespace}/${t.secretName}`);
    }
    warnings.push(...translationWarnings(around(snap, hosts, { route: rt, dropKey: rt.key }), o, routeRef(rt.key), secretKeys));
  }
  return { allowed: true, warnings };
}

// ---- AdmissionReview (admission.k8s.io/v1) ----------------------------------------------------------------------

export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  operation: string;
  namespace?: string;
  object?: KubeObject;
}

export const CRD_KINDS = new Set<CrdKind>(['Route', 'Upstream', 'Plugin', 'Consumer']);

/** The object under review and its kind, or null when the request is not for something Portico validates. */
export function subjectOf(req: AdmissionRequest): { kind: 'Ingress' | CrdKind; obj: KubeObject } | null {
  if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') return null;
  const obj = req.object;
  if (!obj || typeof obj !== 'object' || !obj.metadata) return null;
  // The API server fills in the namespace of namespaced objects in the request, not always in the object (CREATE).
  const withNs = obj.metadata.namespace || !req.namespace ? obj : { ...obj, metadata: { ...obj.metadata, namespace: req.namespace } };
  if (req.kind.group === 'networking.k8s.io' && req.kind.kind === 'Ingress') return { kind: 'Ingress', obj: withNs };
  if (req.kind.group === 'portico.dev' && CRD_KINDS.has(req.kind.kind as CrdKind)) return { kind: req.kind.kind as CrdKind, obj: withNs };
  return null;
}

/** Admission warnings are shown one per line by kubectl; the API server limits their size (keep each short). */
export function responseOf(uid: string, v: Verdict): Record<string, unknown> {
  const response: Record<string, unknown> = { uid, allowed: v.allowed };
  if (!v.allowed) response.status = { code: 400, reason: 'Invalid', message: `Portico: ${v.message ?? 'denied'}` };
  if (v.warnings.length) response.warnings = v.warnings.slice(0, 20).map((w) => (w.length > 500 ? `${w.slice(0, 499)}…` : w));
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}
