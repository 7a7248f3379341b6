// The tenant model of the translation: a namespace never changes how another namespace's requests are routed —
// canaries, use-regex / rewrite-target and app-root stay within their namespace — and with the ConfigMap's
// namespace-exclusive-hosts a host belongs to the namespace that named it first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../operator/kube/object.ts';
import { defaultGlobalConfig } from '../model/global-config.ts';
import { OPTS, ing, modelOf, rule, svc, svcRef } from './fixtures.test-helpers.ts';
import { translate } from './translate.ts';

const A = 'nginx.ingress.kubernetes.io/';
const services = ['victim', 'evil'].flatMap((ns) => [svc('web', [{ port: 80 }], ns), svc('api', [{ port: 80 }], ns)]);
const run = (ingresses: KubeObject[], exclusive = false) => {
  const m = modelOf({ services, ingresses });
  if (exclusive) m.setGlobalConfig({ ...defaultGlobalConfig(), namespaceExclusiveHosts: true });
  return translate(m.snapshot(), OPTS);
};
const OLD = '2026-01-01T00:00:00Z';
const NEW = '2026-01-02T00:00:00Z';
const warnings = (r: ReturnType<typeof run>, reason: string) => r.events.filter((e) => e.type === 'Warning' && e.reason === reason);

test('a canary Ingress of another namespace never attaches to a main Ingress: the victim keeps all its traffic, the canary gets a Warning', () => {
  const r = run([
    ing('shop', { rules: [rule('shop.victim', [{ path: '/', backend: svcRef('web', 80) }])] }, { ns: 'victim', created: OLD }),
    ing('steal', { rules: [rule('shop.victim', [{ path: '/', backend: svcRef('web', 80) }])] }, { ns: 'evil', created: NEW, annotations: { [`${A}canary`]: 'true', [`${A}canary-weight`]: '100' } }),
  ]);
  const b = r.config.data.backends['victim_web_80'];
  assert.ok(b, 'the victim backend exists');
  assert.equal(b.canary, undefined, 'no canary split on the victim backend');
  assert.equal(r.config.data.backends['evil_web_80'], undefined, 'the canary backend is not even built');
  const w = warnings(r, 'CanaryWithoutMain');
  assert.equal(w.length, 1);
  assert.match(w[0]!.ref, /evil\/steal/);
  assert.match(w[0]!.message, /namespace victim.*must be in its main Ingress's namespace/);
});

test('a canary in the main Ingress\'s own namespace still attaches (ingress-nginx semantics)', () => {
  const r = run([
    ing('shop', { rules: [rule('shop.victim', [{ path: '/', backend: svcRef('web', 80) }])] }, { ns: 'victim', created: OLD }),
    ing('next', { rules: [rule('shop.victim', [{ path: '/', backend: svcRef('api', 80) }])] }, { ns: 'victim', created: NEW, annotations: { [`${A}canary`]: 'true', [`${A}canary-weight`]: '30' } }),
  ]);
  assert.deepEqual(r.config.data.backends['victim_web_80']?.canary, { backendId: 'victim_api_80', weight: 30, weightTotal: 100 });
});

test('use-regex in one namespace turns only that namespace\'s paths on a shared host into regexes: another namespace\'s Exact path stays exact', () => {
  const r = run([
    ing('public', { rules: [rule('shop.victim', [{ path: '/api/public', pathType: 'Exact', backend: svcRef('web', 80) }, { path: '/docs', pathType: 'Prefix', backend: svcRef('web', 80) }])] }, { ns: 'victim', created: OLD }),
    ing('rx', { rules: [rule('shop.victim', [{ path: '/zzz', pathType: 'ImplementationSpecific', backend: svcRef('web', 80) }])] }, { ns: 'evil', created: NEW, annotations: { [`${A}use-regex`]: 'true' } }),
    ing('rw', { rules: [rule('shop.victim', [{ path: '/yyy', pathType: 'Prefix', backend: svcRef('api', 80) }])] }, { ns: 'evil', created: NEW, annotations: { [`${A}rewrite-target`]: '/' } }),
  ]);
  const rules = (r.config.data.routes['shop.victim']?.rules ?? []).map((x) => [x.path, x.match, x.route.backendId]);
  assert.deepEqual(
    rules.filter((x) => String(x[2]).startsWith('victim_')).sort(),
    [['/api/public', 'exact', 'victim_web_80'], ['/docs', 'prefix', 'victim_web_80']],
  );
  assert.deepEqual(rules.filter((x) => String(x[2]).startsWith('evil_')).map((x) => x[1]), ['regex', 'regex'], 'the evil namespace\'s own paths are regexes');
});

test('use-regex in the same namespace keeps ingress-nginx\'s host-wide behaviour for that namespace\'s Ingresses', () => {
  const r = run([
    ing('plain', { rules: [rule('one.ns', [{ path: '/exact', pathType: 'Exact', backend: svcRef('web', 80) }])] }, { ns: 'victim', created: OLD }),
    ing('rx', { rules: [rule('one.ns', [{ path: '/r.+', pathType: 'ImplementationSpecific', backend: svcRef('api', 80) }])] }, { ns: 'victim', created: NEW, annotations: { [`${A}use-regex`]: 'true' } }),
  ]);
  assert.deepEqual((r.config.data.routes['one.ns']?.rules ?? []).map((x) => [x.path, x.match]), [['^/exact', 'regex'], ['^/r.+', 'regex']]);
});

test('app-root of another namespace never redirects "/" that the victim serves', () => {
  const r = run([
    ing('root', { rules: [rule('shop.victim', [{ path: '/', backend: svcRef('web', 80) }])] }, { ns: 'victim', created: OLD }),
    ing('redir', { rules: [rule('shop.victim', [{ path: '/x', backend: svcRef('web', 80) }])] }, { ns: 'evil', created: NEW, annotations: { [`${A}app-root`]: '/phish' } }),
  ]);
  const redirects = (x: ReturnType<typeof run>) =>
    (x.config.data.routes['shop.victim']?.rules ?? []).filter((rr) => (rr.route.plugins ?? []).some((id) => x.config.data.plugins[id]?.type === 'redirect'));
  assert.deepEqual(redirects(r), [], 'no redirect of "/" on the victim\'s host');
  assert.equal(warnings(r, 'AppRootIgnored').length, 1);
  const own = run([ing('root', { rules: [rule('shop.victim', [{ path: '/', backend: svcRef('web', 80) }])] }, { ns: 'victim', created: OLD, annotations: { [`${A}app-root`]: '/app' } })]);
  assert.equal(redirects(own).length, 1, 'its own namespace\'s app-root applies');
});

test('shared hosts by default: paths of two namespaces on one host are both served, no Warning', () => {
  const r = run([
    ing('a', { rules: [rule('shared.example', [{ path: '/a', backend: svcRef('web', 80) }])] }, { ns: 'victim', created: OLD }),
    ing('b', { rules: [rule('shared.example', [{ path: '/b', backend: svcRef('web', 80) }])] }, { ns: 'evil', created: NEW }),
  ]);
  assert.deepEqual((r.config.data.routes['shared.example']?.rules ?? []).map((x) => x.route.backendId).sort(), ['evil_web_80', 'victim_web_80']);
  assert.deepEqual(r.events.filter((e) => e.type === 'Warning'), []);
});

test('namespace-exclusive-hosts: the host belongs to the namespace that named it first; another namespace\'s paths and TLS on it are refused with a Warning naming the owner', () => {
  const r = run(
    [
      ing('a', { rules: [rule('shared.example', [{ path: '/a', backend: svcRef('web', 80) }])] }, { ns: 'victim', created: OLD }),
      ing('b', { tls: [{ hosts: ['shared.example'], secretName: 'evil-cert' }], rules: [rule('shared.example', [{ path: '/b', backend: svcRef('web', 80) }]), rule('evil.example', [{ path: '/', backend: svcRef('web', 80) }])] }, { ns: 'evil', created: NEW }),
    ],
    true,
  );
  assert.deepEqual((r.config.data.routes['shared.example']?.rules ?? []).map((x) => x.route.backendId), ['victim_web_80']);
  assert.ok(r.config.data.routes['evil.example'], 'a host of its own is still served');
  const w = warnings(r, 'HostOwnedByNamespace');
  assert.equal(w.length, 2, 'one for the paths, one for the TLS section');
  for (const e of w) {
    assert.match(e.ref, /evil\/b/);
    assert.match(e.message, /namespace victim \((its oldest object, )?Ingress victim\/a,? named it first\)/);
  }
  assert.equal(r.config.data.routes['shared.example']?.tls, false, 'the victim\'s host gets no TLS from another namespace');
});
