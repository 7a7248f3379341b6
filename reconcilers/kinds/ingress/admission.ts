// Admission of an Ingress (see ../admission.ts for what is denied, what is warned and why no Secret is read).
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { ModelSnapshot } from '../../model/model.ts';
import { normalizeIngress } from '../../model/normalize.ts';
import { ingressRef, isIngressServed, type TranslateOptions } from '../../translate/translate.ts';
import { claimsOfIngress } from './processor.ts';
import { aboutSecrets, around, clip, ingressSecretsOf, NOTHING_READ, stamp, translationWarnings, type Verdict } from '../admission.ts';
import { requestedClass } from './reconciler.ts';
import { blockedWord } from '../../translate/blocklist.ts';

export function reviewIngress(obj: KubeObject, snap: ModelSnapshot, o: TranslateOptions, now = new Date()): Verdict {
  // Not Portico's class: not Portico's business (ingress-nginx or another controller may serve it).
  if (!isIngressServed(requestedClass(obj), snap.classes, o)) return { allowed: true, warnings: [] };
  const r = normalizeIngress(stamp(obj, now), NOTHING_READ);
  if (!r.ok) return { allowed: false, message: clip(r.reason), warnings: [] };
  const ing = r.ingress;
  const secretKeys = ingressSecretsOf(ing);
  // The reconciler words problems as what it leaves out ("annotation ignored: …"); here they are why it is denied.
  const deny: string[] = ing.problems.map((m) => m.replace(/^annotation ignored: /, ''));
  const warnings: string[] = [];
  // Access control that cannot be applied is denied — unless all that is wrong is the Secret, which was not read
  // (it reads "Secret <ns>/<name> not found"): the controller judges it and fails the paths closed if need be.
  for (const a of ing.accessControl) if (!aboutSecrets(a.kind, secretKeys)) deny.push(`${a.annotation}: ${a.kind}`);
  // proxy-ssl-secret: the same (a value, another namespace are this object's fault; the Secret is not looked at).
  if (ing.proxySsl?.error && !ing.proxySsl.missing) deny.push(ing.proxySsl.error);
  // fastcgi-params-configmap of another namespace: the same (the ConfigMap itself is not read here).
  if (ing.fastcgi?.error && ing.annotations['fastcgi-params-configmap'] !== undefined) deny.push(ing.fastcgi.error);
  // annotation-value-word-blocklist: the controller would not serve it (as ingress-nginx's webhook, denied).
  const words = snap.global.annotationValueWordBlocklist ?? [];
  const blocked = words.length ? blockedWord(ing, words) : null;
  if (blocked) deny.push(`annotation ${blocked.annotation} contains the word ${JSON.stringify(blocked.word)} of the ConfigMap's annotation-value-word-blocklist`);
  for (const u of ing.unsupportedAnnotations) warnings.push(`${u}: not supported by Portico, not applied`);
  if (deny.length) return { allowed: false, message: clip(deny.join('; ')), warnings };
  const hosts = new Set<string>();
  const c = claimsOfIngress(ing);
  for (const p of [...c.paths, ...c.defaults]) hosts.add(p.host);
  for (const t of ing.tls) for (const h of t.hosts) hosts.add(h);
  warnings.push(...translationWarnings(around(snap, hosts, { ingress: ing, dropKey: ing.key }), o, ingressRef(ing.key), secretKeys));
  return { allowed: true, warnings };
}

