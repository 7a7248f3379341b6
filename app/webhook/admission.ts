// Admission decisions for Ingresses and Portico's CRDs, made with exactly the code the reconcilers run: the same
// zod schemas and normalizers (reconcilers/model/normalize.ts, reconcilers/crds/normalize.ts) and the same pure
// translation (reconcilers/translate/translate.ts) over the replica's model. Nothing here executes anything: no
// nginx, no openssl, no child process — ingress-nginx's CVE-2025-1974 came from running `nginx -t` on admission
// input, and Portico never renders user input into a configuration file in the first place.
//
// What is denied: what the reconciler would refuse or drop (a malformed object, an invalid path for its type, an
// annotation value its schema refuses — injection payloads included —, an IP list or auth that cannot be applied).
// What is admitted with a warning: what depends on other objects and may resolve later (a Secret that does not exist
// yet, a missing Plugin) and conflicts with older objects, naming the one that wins — exactly the Warning Events the
// controller would record after the fact.
import type { KubeObject } from '../../operator/kube/object.ts';
import type { ModelSnapshot } from '../../reconcilers/model/model.ts';
import { normalizeIngress } from '../../reconcilers/model/normalize.ts';
import type { NormalizedIngress, NormalizedRoute } from '../../reconcilers/model/types.ts';
import { requestedClass } from '../../reconcilers/ingress.ts';
import { NORMALIZERS, routeClass } from '../../reconcilers/crds/reconcilers.ts';
import type { SecretData } from '../../reconcilers/crds/normalize.ts';
import type { NormalizedConsumer, NormalizedPlugin, NormalizedUpstream } from '../../reconcilers/model/types.ts';
import { claimsOfIngress, claimsOfRoute, ingressRef, isIngressServed, routeRef, translate, type TranslateOptions } from '../../reconcilers/translate/translate.ts';
import type { CrdKind } from '../../reconcilers/model/model.ts';

export interface Verdict {
  allowed: boolean;
  /** Why it is denied: every problem, naming the field. */
  message?: string;
  warnings: string[];
}

/** Secrets the webhook read for this request (namespace/name → Secret; absent = does not exist). */
export type SecretSnapshot = ReadonlyMap<string, SecretData | undefined>;

export type ClassOptions = Pick<TranslateOptions, 'controllerClass' | 'ingressClassName' | 'watchWithoutClass'>;

const MAX_MESSAGE = 3000;
const clip = (s: string) => (s.length > MAX_MESSAGE ? `${s.slice(0, MAX_MESSAGE - 1)}…` : s);

/**
 * Runs `fn` with a Secret reader and returns the Secret keys it asked for, so the server can fetch exactly those and
 * run it again with their contents (the normalizers read Secrets synchronously).
 */
export function secretsWanted(fn: (read: (key: string) => SecretData | undefined) => unknown): string[] {
  const asked = new Set<string>();
  fn((k) => {
    asked.add(k);
    return undefined;
  });
  return [...asked];
}

const reader = (secrets: SecretSnapshot) => (k: string) => secrets.get(k);

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
  return { ...snap, ingresses, routes, rejected: new Map(), rejectedCrds: new Map() };
}

/** Conflicts and reference problems the translation reports about `ref`, as admission warnings. */
function translationWarnings(snap: ModelSnapshot, o: TranslateOptions, ref: string): string[] {
  const r = translate(snap, o);
  const out = new Set<string>();
  for (const e of r.events) if (e.ref === ref && e.type === 'Warning') out.add(`${e.reason}: ${e.message}`);
  return [...out];
}

const stamp = (obj: KubeObject, now: Date): KubeObject =>
  // A new object is the youngest: it loses every conflict (creationTimestamp is set by the API server after admission).
  obj.metadata.creationTimestamp ? obj : { ...obj, metadata: { ...obj.metadata, creationTimestamp: now.toISOString().replace(/\.\d+Z$/, 'Z') } };

export function reviewIngress(obj: KubeObject, snap: ModelSnapshot, o: TranslateOptions, secrets: SecretSnapshot, now = new Date()): Verdict {
  // Not Portico's class: not Portico's business (ingress-nginx or another controller may serve it).
  if (!isIngressServed(requestedClass(obj), snap.classes, o)) return { allowed: true, warnings: [] };
  const r = normalizeIngress(stamp(obj, now), reader(secrets));
  if (!r.ok) return { allowed: false, message: clip(r.reason), warnings: [] };
  const ing = r.ingress;
  // The reconciler words problems as what it leaves out ("annotation ignored: …"); here they are why it is denied.
  const deny: string[] = ing.problems.map((m) => m.replace(/^annotation ignored: /, ''));
  const warnings: string[] = [];
  for (const a of ing.accessControl) {
    // A Secret that does not exist yet (applied after the Ingress, as kustomize may order it) is not a mistake in
    // this object: admitted, and the paths answer 503 until it exists.
    const missing = [ing.authSecret, ing.authTlsSecret].some((s) => s && !secrets.get(s) && a.kind.includes(`Secret ${s} not found`));
    if (missing) warnings.push(`${a.annotation}: ${a.kind}; the paths of this Ingress answer 503 until it exists`);
    else deny.push(`${a.annotation}: ${a.kind}`);
  }
  // proxy-ssl-secret: a Secret that does not exist yet is admitted as auth-secret's is (the translation's warning
  // says the paths answer 503 until it does); any other reason the proxy-ssl-* annotations cannot be applied (a
  // value, another namespace, an unusable Secret) is denied.
  if (ing.proxySsl?.error && !ing.proxySsl.missing) deny.push(ing.proxySsl.error);
  for (const u of ing.unsupportedAnnotations) warnings.push(`${u}: not supported by Portico, not applied`);
  if (deny.length) return { allowed: false, message: clip(deny.join('; ')), warnings };
  const hosts = new Set<string>();
  const c = claimsOfIngress(ing);
  for (const p of [...c.paths, ...c.defaults]) hosts.add(p.host);
  for (const t of ing.tls) for (const h of t.hosts) hosts.add(h);
  warnings.push(...translationWarnings(around(snap, hosts, { ingress: ing, dropKey: ing.key }), o, ingressRef(ing.key)));
  return { allowed: true, warnings };
}

export function reviewCrd(kind: CrdKind, obj: KubeObject, snap: ModelSnapshot, o: TranslateOptions, secrets: SecretSnapshot, now = new Date()): Verdict {
  if (kind === 'Route' && !isIngressServed({ className: routeClass(obj), classFromAnnotation: false }, snap.classes, o)) return { allowed: true, warnings: [] };
  const r = NORMALIZERS[kind](stamp(obj, now), reader(secrets));
  if (!r.ok) return { allowed: false, message: clip(r.reason), warnings: [] };
  const warnings: string[] = [];
  if (kind === 'Plugin') {
    const p = r.record as NormalizedPlugin;
    // A configuration error is this object's fault; a Secret that does not exist (yet) is not.
    if (p.error && !p.unresolved) return { allowed: false, message: clip(p.error), warnings: [] };
    if (p.error) warnings.push(`${p.error}; routes using this plugin answer 503 until it exists`);
  } else if (kind === 'Consumer') {
    const c = r.record as NormalizedConsumer;
    for (const p of c.problems) warnings.push(p);
  } else if (kind === 'Upstream') {
    const u = r.record as NormalizedUpstream;
    if (u.tls?.caError) warnings.push(`${u.tls.caError}; requests to this Service answer 503 until the CA can be read`);
  } else {
    const rt = r.record as NormalizedRoute;
    const hosts = new Set(claimsOfRoute(rt).map((c) => c.pc.host));
    for (const t of rt.tls) for (const h of t.hosts) hosts.add(h);
    warnings.push(...translationWarnings(around(snap, hosts, { route: rt, dropKey: rt.key }), o, routeRef(rt.key)));
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
