// What every kind's admission review shares (a kind's own review is kinds/<kind>/admission.ts; the webhook is
// app/webhook/). Admission decisions are made with exactly the code the reconcilers run: the same
// zod schemas and normalizers (reconcilers/model/normalize.ts, kinds/<kind>/normalize.ts) and the same pure
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
import { recordsOf, type ModelSnapshot } from '../model/model.ts';
import type { NormalizedIngress, NormalizedRoute } from '../model/types.ts';
import { translate, type TranslateOptions } from '../translate/translate.ts';
import { claimsOfIngress } from './ingress/processor.ts';
import { claimsOfRoute } from './route/processor.ts';

export interface Verdict {
  allowed: boolean;
  /** Why it is denied: every problem, naming the field. */
  message?: string;
  warnings: string[];
}

const MAX_MESSAGE = 3000;
export const clip = (s: string) => (s.length > MAX_MESSAGE ? `${s.slice(0, MAX_MESSAGE - 1)}…` : s);

/** The normalizers' Secret reader at admission: nothing is ever read (see the top of this file). */
export const NOTHING_READ = (): undefined => undefined;

/** Translation findings that depend on what a Secret holds (or whether it exists): the controller reports them. */
export const SECRET_REASONS = new Set(['TLSSecretNotFound', 'TLSSecretInvalid', 'TLSHostMismatch', 'BackendTLSUnavailable']);

/** Whether a finding speaks of one of these Secrets ("namespace/name"): then it is the controller's to report. */
export const aboutSecrets = (message: string, keys: ReadonlySet<string>): boolean => [...keys].some((k) => message.includes(k));

/** A snapshot reduced to what can conflict with `hosts` (the translation then costs what those hosts cost). */
export function around(snap: ModelSnapshot, hosts: Set<string>, replace: { ingress?: NormalizedIngress; route?: NormalizedRoute; dropKey: string }): ModelSnapshot {
  const ingresses = new Map<string, NormalizedIngress>();
  for (const [k, ing] of snap.ingresses) {
    if (k === replace.dropKey && replace.ingress) continue;
    const c = claimsOfIngress(ing);
    if ([...c.paths, ...c.defaults].some((p) => hosts.has(p.host)) || ing.tls.some((t) => t.hosts.some((h) => hosts.has(h)))) ingresses.set(k, ing);
  }
  const routes = new Map<string, NormalizedRoute>();
  for (const [k, rt] of recordsOf(snap, 'Route')) {
    if (k === replace.dropKey && replace.route) continue;
    if (claimsOfRoute(rt).some((c) => hosts.has(c.pc.host))) routes.set(k, rt);
  }
  if (replace.ingress) ingresses.set(replace.ingress.key, replace.ingress);
  if (replace.route) routes.set(replace.route.key, replace.route);
  // No TLS material: the translation must not tell the caller anything about a Secret.
  return { ...snap, ingresses, crds: { ...snap.crds, Route: routes }, rejected: new Map(), rejectedCrds: new Map(), secrets: new Map(), defaultCertificate: null };
}

/** Conflicts and reference problems the translation reports about `ref`, as admission warnings (none about Secrets). */
export function translationWarnings(snap: ModelSnapshot, o: TranslateOptions, ref: string, secretKeys: ReadonlySet<string>): string[] {
  const r = translate(snap, o);
  const out = new Set<string>();
  for (const e of r.events) {
    if (e.ref !== ref || e.type !== 'Warning' || SECRET_REASONS.has(e.reason) || aboutSecrets(e.message, secretKeys)) continue;
    out.add(`${e.reason}: ${e.message}`);
  }
  return [...out];
}

/** The Secrets ("namespace/name") an Ingress refers to. */
export function ingressSecretsOf(ing: NormalizedIngress): Set<string> {
  const keys = new Set<string>();
  for (const k of [ing.authSecret, ing.authTlsSecret, ing.proxySsl?.secretKey]) if (k) keys.add(k);
  for (const t of ing.tls) if (t.secretName) keys.add(`${ing.namespace}/${t.secretName}`);
  return keys;
}

export const stamp = (obj: KubeObject, now: Date): KubeObject =>
  // A new object is the youngest: it loses every conflict (creationTimestamp is set by the API server after admission).
  obj.metadata.creationTimestamp ? obj : { ...obj, metadata: { ...obj.metadata, creationTimestamp: now.toISOString().replace(/\.\d+Z$/, 'Z') } };

