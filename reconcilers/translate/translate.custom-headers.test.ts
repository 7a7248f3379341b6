// ingress-nginx's custom-headers: a ConfigMap's keys and values as response headers of every path of the Ingress,
// each allowed by the controller ConfigMap's global-allowed-response-headers; anything that cannot be applied fails
// the paths closed (ingress-nginx denies the location). Pure normalization and translation, no cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ing, OPTS, portico, rule, svc, svcRef } from './fixtures.test-helpers.ts';
import { translate } from './translate.ts';
import { Model } from '../model/model.ts';
import { normalizeIngress, normalizeIngressClass, normalizeService } from '../model/normalize.ts';

const N = 'nginx.ingress.kubernetes.io/';
function run(ref: string, cms: Record<string, Record<string, string>>, allowed: string[] = ['x-frame-options', 'x-team'], ns = 'default') {
  const m = new Model();
  m.setIngressClass(normalizeIngressClass(portico()));
  m.setService(normalizeService(svc('web', [{ port: 80 }], ns)));
  const n = normalizeIngress(ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { ns, annotations: { [`${N}custom-headers`]: ref } }), undefined, (k) => (cms[k] ? { data: cms[k] } : undefined));
  assert.ok(n.ok);
  m.setIngress(n.ingress);
  m.setGlobalConfig({ ...m.globalConfig(), globalAllowedResponseHeaders: allowed });
  const r = translate(m.snapshot(), OPTS);
  const route = r.config.data.routes['a.example.com']?.rules[0]?.route;
  return { n: n.ingress, r, route, plugins: (route?.plugins ?? []).map((id) => r.config.data.plugins[id]) };
}

test('the ConfigMap\'s headers become a response-headers plugin (set: replaces the backend\'s)', () => {
  const { n, route, plugins, r } = run('hdrs', { 'default/hdrs': { 'X-Frame-Options': 'DENY', 'X-Team': 'blue' } });
  assert.equal(n.customHeadersConfigMap, 'default/hdrs', 'indexed so the ConfigMap is loaded and watched');
  assert.equal(route?.backendId, 'default_web_80');
  assert.deepEqual(plugins, [{ name: 'default/a (custom-headers default/hdrs)', type: 'response-headers', set: [{ name: 'x-frame-options', value: 'DENY' }, { name: 'x-team', value: 'blue' }], add: [], remove: [] }]);
  assert.equal(r.events.filter((e) => e.type === 'Warning').length, 0, JSON.stringify(r.events));
  assert.equal(run('default/hdrs', { 'default/hdrs': { 'X-Team': 'blue' } }).route?.backendId, 'default_web_80', '"namespace/name" of the own namespace');
});

test('what cannot be applied fails the paths closed with a Warning naming why', () => {
  const cases: [string, Record<string, Record<string, string>>, string[], RegExp][] = [
    ['hdrs', { 'default/hdrs': { 'X-Frame-Options': 'DENY', 'X-Evil': '1' } }, ['x-frame-options'], /X-Evil is not in the ConfigMap's global-allowed-response-headers/i],
    ['hdrs', { 'default/hdrs': { 'X-Team': 'blue' } }, [], /x-team is not in the ConfigMap's global-allowed-response-headers/i],
    ['gone', {}, ['x-team'], /ConfigMap default\/gone not found/],
    ['other/hdrs', { 'other/hdrs': { 'X-Team': 'blue' } }, ['x-team'], /in another namespace/],
    ['hdrs', { 'default/hdrs': { 'X-Team': 'a\r\nSet-Cookie: x=1' } }, ['x-team'], /custom-headers: ConfigMap default\/hdrs/],
    ['hdrs', { 'default/hdrs': { 'Content-Length': '0' } }, ['content-length'], /custom-headers: ConfigMap default\/hdrs/],
    ['hdrs', { 'default/hdrs': {} }, ['x-team'], /holds no header/],
  ];
  for (const [ref, cms, allowed, why] of cases) {
    const { route, r } = run(ref, cms, allowed);
    assert.equal(route?.backendId, null, `${ref} ${JSON.stringify(cms)}`);
    assert.equal(route?.action, 'unavailable');
    assert.match(route?.closedReason ?? '', why);
    assert.ok(r.events.some((e) => e.type === 'Warning' && e.reason === 'PluginUnavailable' && why.test(e.message)), JSON.stringify(r.events));
  }
});

test('an invalid reference is refused by the annotation schema (a Warning, nothing read)', () => {
  for (const bad of ['a;b', 'ns/name/extra', '../x', 'UPPER', '$host', 'a b']) {
    const { n, r } = run(bad, {});
    assert.equal(n.customHeadersConfigMap, undefined, bad);
    assert.ok(r.events.some((e) => e.type === 'Warning' && /custom-headers/.test(e.message)), bad);
  }
});

test('another annotation refused by the ConfigMap\'s annotations-risk-level leaves custom-headers (read with its ConfigMap) applied', () => {
  const m = new Model();
  m.setIngressClass(normalizeIngressClass(portico()));
  m.setService(normalizeService(svc('web', [{ port: 80 }])));
  const cms: Record<string, Record<string, string>> = { 'default/hdrs': { 'X-Team': 'blue' } };
  const n = normalizeIngress(
    ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { [`${N}custom-headers`]: 'hdrs', [`${N}upstream-hash-by`]: '$request_uri' } }),
    undefined,
    (k) => (cms[k] ? { data: cms[k] } : undefined),
  );
  assert.ok(n.ok);
  m.setIngress(n.ingress);
  // upstream-hash-by is High risk: refused at Medium; custom-headers (Medium) stays.
  m.setGlobalConfig({ ...m.globalConfig(), globalAllowedResponseHeaders: ['x-team'], annotationsRiskLevel: 'medium' });
  const r = translate(m.snapshot(), OPTS);
  const route = r.config.data.routes['a.example.com']?.rules[0]?.route;
  assert.equal(route?.backendId, 'default_web_80', `served, not failed closed: ${route?.closedReason ?? ''}`);
  assert.deepEqual((route?.plugins ?? []).map((id) => r.config.data.plugins[id]?.type), ['response-headers']);
  assert.ok(r.events.some((e) => e.type === 'Warning' && /upstream-hash-by/.test(e.message)), 'the refused annotation is reported');
});
