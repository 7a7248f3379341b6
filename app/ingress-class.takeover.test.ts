// In-place takeover of ingress-nginx's class (--controller-class k8s.io/ingress-nginx --ingress-class nginx) and
// side by side on separate classes: classes are matched by their controller value.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../operator/kube/object.ts';
import { parseConfig } from './flags.ts';
import { normalizeIngressClass } from '../reconcilers/model/normalize.ts';
import { isIngressServed } from '../reconcilers/translate/translate.ts';

const cls = (name: string, controller: string, isDefault = false) =>
  normalizeIngressClass({ metadata: { name, ...(isDefault ? { annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } } : {}) }, spec: { controller } } as KubeObject);
const classes = (...c: ReturnType<typeof cls>[]) => new Map(c.map((x) => [x.name, x]));
const optsOf = (argv: string[]) => {
  const c = parseConfig(argv, {});
  return { controllerClass: c['controller-class'], ingressClassName: c['ingress-class'], watchWithoutClass: c['watch-ingress-without-class'], ingressClassByName: c['ingress-class-by-name'] };
};
const spec = (className: string | null) => ({ className, classFromAnnotation: false });
const annotated = (className: string) => ({ className, classFromAnnotation: true });

test('takeover: with ingress-nginx\'s controller value Portico serves the nginx class (spec and legacy annotation)', () => {
  const o = optsOf(['--controller-class', 'k8s.io/ingress-nginx', '--ingress-class', 'nginx']);
  const cs = classes(cls('nginx', 'k8s.io/ingress-nginx', true));
  assert.equal(isIngressServed(spec('nginx'), cs, o), true);
  assert.equal(isIngressServed(annotated('nginx'), cs, o), true);
  assert.equal(isIngressServed(spec(null), cs, o), true, 'the default class serves Ingresses without a class');
  assert.equal(isIngressServed(spec('traefik'), cs, o), false);
});

test('side by side: Portico\'s class and ingress-nginx\'s are told apart by controller, not by name', () => {
  const o = optsOf([]);
  const cs = classes(cls('nginx', 'k8s.io/ingress-nginx', true), cls('portico', 'portico.dev/ingress-controller'));
  assert.equal(isIngressServed(spec('portico'), cs, o), true);
  assert.equal(isIngressServed(spec('nginx'), cs, o), false);
  assert.equal(isIngressServed(annotated('nginx'), cs, o), false);
  assert.equal(isIngressServed(spec(null), cs, o), false, 'ingress-nginx is the default class, not Portico');
  // A class named like Portico's but of another controller is not Portico's.
  assert.equal(isIngressServed(spec('portico'), classes(cls('portico', 'example.com/other')), o), false);
});

test('--ingress-class-by-name serves spec.ingressClassName == --ingress-class whatever the class\'s controller', () => {
  const cs = classes(cls('nginx', 'k8s.io/ingress-nginx'));
  assert.equal(isIngressServed(spec('nginx'), cs, optsOf(['--ingress-class', 'nginx'])), false);
  assert.equal(isIngressServed(spec('nginx'), cs, optsOf(['--ingress-class', 'nginx', '--ingress-class-by-name'])), true);
  assert.equal(isIngressServed(spec('other'), cs, optsOf(['--ingress-class', 'nginx', '--ingress-class-by-name'])), false);
});
