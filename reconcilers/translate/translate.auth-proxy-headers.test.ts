// ingress-nginx's auth-proxy-set-headers: a ConfigMap of headers set on the auth-url subrequest, read from the
// Ingress's own namespace; values are text and nginx variables read at request time. Anything that cannot be applied
// fails the Ingress closed (the auth service would decide without headers it relies on). No cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ing, OPTS, portico, rule, slice, svc, svcRef } from './fixtures.test-helpers.ts';
import { translate } from './translate.ts';
import { Model } from '../model/model.ts';
import { normalizeEndpointSlice, normalizeIngress, normalizeIngressClass, normalizeService } from '../model/normalize.ts';
import type { PluginInstance } from '../config/types.ts';

const N = 'nginx.ingress.kubernetes.io/';
function run(annotations: Record<string, string>, cms: Record<string, Record<string, string>>) {
  const m = new Model();
  m.setIngressClass(normalizeIngressClass(portico()));
  m.setService(normalizeService(svc('web', [{ port: 80 }])));
  m.setService(normalizeService(svc('auth', [{ name: 'http', port: 80, targetPort: 8080 }])));
  const sl = normalizeEndpointSlice(slice('auth-x', 'auth', [{ name: 'http', port: 8080 }], [{ ip: '198.51.100.7' }]));
  if (sl) m.setEndpointSlices(sl.serviceKey, [sl]);
  const n = normalizeIngress(
    ing('app', { rules: [rule('app.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${N}${k}`, v])) }),
    undefined,
    (k) => (cms[k] ? { data: cms[k] } : undefined),
  );
  assert.ok(n.ok);
  m.setIngress(n.ingress);
  const r = translate(m.snapshot(), OPTS);
  const route = r.config.data.routes['app.example.com']?.rules[0]?.route;
  const auth = (route?.plugins ?? []).map((id) => r.config.data.plugins[id] as PluginInstance).find((p) => p.type === 'external-auth');
  return { n: n.ingress, r, route, auth };
}
const AUTH = { 'auth-url': 'http://auth.default.svc.cluster.local/verify', 'auth-proxy-set-headers': 'auth-headers' };

test('the ConfigMap\'s headers are set on the auth subrequest: literal text and nginx variables', () => {
  const { n, route, auth, r } = run(AUTH, { 'default/auth-headers': { 'X-Team': 'blue', 'X-Client': 'ip=$remote_addr id=${request_id}', 'X-Empty': '' } });
  assert.equal(n.authProxyHeadersConfigMap, 'default/auth-headers', 'indexed: loaded and watched');
  assert.equal(route?.backendId, 'default_web_80');
  assert.ok(auth?.type === 'external-auth');
  assert.deepEqual(auth.ingressNginx?.setHeaders, [
    { name: 'x-client', value: ['ip=', { v: 'remote_addr' }, ' id=', { v: 'request_id' }] },
    { name: 'x-empty', value: [''] },
    { name: 'x-team', value: ['blue'] },
  ]);
  assert.equal(r.events.filter((e) => e.type === 'Warning').length, 0, JSON.stringify(r.events));
});

test('what cannot be applied fails the Ingress closed with a Warning naming why', () => {
  const cases: [Record<string, string>, Record<string, Record<string, string>>, RegExp][] = [
    [AUTH, {}, /ConfigMap default\/auth-headers not found/],
    [{ ...AUTH, 'auth-proxy-set-headers': 'other/auth-headers' }, { 'other/auth-headers': { 'X-A': '1' } }, /in another namespace/],
    [AUTH, { 'default/auth-headers': { Host: 'evil.example.com' } }, /header Host cannot be set/],
    [AUTH, { 'default/auth-headers': { 'Content-Length': '0' } }, /cannot be set/],
    [AUTH, { 'default/auth-headers': { 'X-A': 'a\r\nX-Injected: 1' } }, /X-A/],
    [AUTH, { 'default/auth-headers': { 'X-A': '$pwn_unknown' } }, /variable \$pwn_unknown is not allowed/],
    [AUTH, { 'default/auth-headers': { 'X A': '1' } }, /not a header name/],
  ];
  for (const [annotations, cms, why] of cases) {
    const { route, r } = run(annotations, cms);
    assert.equal(route?.backendId, null, JSON.stringify(cms));
    assert.equal(route?.action, 'unavailable');
    const ev = r.events.find((e) => e.reason === 'UnsupportedAccessControl');
    assert.ok(ev && why.test(ev.message), `${JSON.stringify(cms)}: ${JSON.stringify(r.events)}`);
  }
});

test('without auth-url it has no effect and says so; the Ingress is served', () => {
  const { route, r } = run({ 'auth-proxy-set-headers': 'auth-headers' }, { 'default/auth-headers': { 'X-A': '1' } });
  assert.equal(route?.backendId, 'default_web_80');
  assert.ok(r.events.some((e) => e.type === 'Warning' && /auth-proxy-set-headers: has no effect without/.test(e.message)), JSON.stringify(r.events));
});
