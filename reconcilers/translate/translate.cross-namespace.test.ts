// auth-url and mirror-target stay in the Ingress's namespace (issue 19): a Service of another namespace, by its DNS
// name or its cluster IP, is refused unless the ConfigMap's allow-cross-namespace-auth says otherwise; a host name
// is flagged so the gateway refuses cluster IPs it resolves to (externalnames.test.ts); external URLs stay allowed;
// the ConfigMap's global-auth-url (the administrator's) may name any namespace. Table tests, no cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ing, modelOf, OPTS, rule, slice, svc, svcRef } from './fixtures.test-helpers.ts';
import { translate } from './translate.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../model/global-config.ts';

const N = 'nginx.ingress.kubernetes.io/';
const services = [
  svc('web', [{ name: 'http', port: 80 }], 'team'),
  svc('auth', [{ name: 'http', port: 80 }], 'team', { clusterIP: '198.19.1.1' }),
  svc('web', [{ name: 'http', port: 8080 }], 'victim', { clusterIP: '198.19.2.2' }),
];
const slices = [
  slice('web-1', 'web', [{ name: 'http', port: 8080 }], [{ ip: '10.0.0.1' }], 'team'),
  slice('auth-1', 'auth', [{ name: 'http', port: 8080 }], [{ ip: '10.0.0.2' }], 'team'),
  slice('web-1', 'web', [{ name: 'http', port: 8080 }], [{ ip: '10.0.9.9' }], 'victim'),
];
const app = (name: string, annotations: Record<string, string>) =>
  ing(name, { rules: [rule(`${name}.example`, [{ path: '/', backend: svcRef('web', 80) }])] }, { ns: 'team', annotations: Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${N}${k}`, v])) });

function run(ingresses: ReturnType<typeof ing>[], config: Record<string, string> = {}) {
  const m = modelOf({ services, slices, ingresses });
  m.setGlobalConfig(parseGlobalConfig(config, defaultGlobalConfig()).values);
  const r = translate(m.snapshot(), OPTS);
  const route = (name: string) => r.config.data.routes[`${name}.example`]?.rules[0]?.route;
  const warnings = (name: string, reason: string) => r.events.filter((e) => e.ref === `Ingress/team/${name}` && e.type === 'Warning' && e.reason === reason);
  return { r, route, warnings };
}

test('allow-cross-namespace-auth: a ConfigMap key, off by default', () => {
  assert.equal(defaultGlobalConfig().allowCrossNamespaceAuth, false);
  assert.equal(parseGlobalConfig({ 'allow-cross-namespace-auth': 'true' }, defaultGlobalConfig()).values.allowCrossNamespaceAuth, true);
  assert.equal(parseGlobalConfig({ 'allow-cross-namespace-auth': 'maybe' }, defaultGlobalConfig()).errors[0]?.key, 'allow-cross-namespace-auth');
});

test("auth-url naming another namespace's Service (DNS name, either spelling, or its cluster IP) fails the Ingress closed, saying why", () => {
  const cases: [string, RegExp][] = [
    ['http://web.victim.svc:8080/', /auth-url http:\/\/web\.victim\.svc:8080\/ names Service victim\/web of another namespace: only Services of the Ingress's own namespace may be named \(the ConfigMap's allow-cross-namespace-auth: "true" allows others\)/],
    ['http://web.victim.svc.cluster.local:8080/verify', /names Service victim\/web of another namespace/],
    ['http://198.19.2.2:8080/verify', /points at 198\.19\.2\.2, the cluster IP of Service victim\/web of another namespace/],
  ];
  for (const [url, why] of cases) {
    const { route } = run([app('a', { 'auth-url': url })]);
    assert.equal(route('a')?.backendId, null, url);
    assert.equal(route('a')?.action, 'unavailable', `${url}: fails closed (503)`);
    assert.match(route('a')?.closedReason ?? '', why, url);
  }
});

test("auth-url to the Ingress's own namespace (name or cluster IP) and to an external URL is applied", () => {
  const { r, route } = run([
    app('own', { 'auth-url': 'http://auth.team.svc.cluster.local/verify' }),
    app('ownip', { 'auth-url': 'http://198.19.1.1/verify' }),
    app('ext', { 'auth-url': 'https://login.example.net/oauth2/auth' }),
  ]);
  for (const n of ['own', 'ownip', 'ext']) assert.notEqual(route(n)?.backendId, null, n);
  assert.deepEqual(r.config.data.backends['team_auth_80']?.endpoints.map((e) => e.address), ['10.0.0.2']);
  // The external host is resolved by the gateway, which then also refuses Service cluster IPs for it.
  assert.equal(r.config.data.backends['extauth.login.example.net.443']?.noClusterIPs, true);
});

test("mirror-target naming another namespace's Service, or its cluster IP: nothing mirrored, a MirrorUnavailable Warning", () => {
  const { route, warnings } = run([
    app('m1', { 'mirror-target': 'http://web.victim.svc.cluster.local:8080$request_uri' }),
    app('m2', { 'mirror-target': 'http://198.19.2.2:8080/copy' }),
    app('m3', { 'mirror-target': 'http://auth.team.svc$request_uri' }),
  ]);
  for (const n of ['m1', 'm2']) {
    assert.equal(route(n)?.mirrors, undefined, n);
    assert.match(warnings(n, 'MirrorUnavailable')[0]?.message ?? '', /of another namespace: only Services of the Ingress's own namespace may be named/, n);
    assert.notEqual(route(n)?.backendId, null, `${n}: the Ingress itself is served`);
  }
  assert.equal(route('m3')?.mirrors?.[0]?.backendId, 'team_auth_80', 'its own namespace is mirrored to');
});

test('with allow-cross-namespace-auth: "true" the other namespace is reachable (and host names may resolve to cluster IPs)', () => {
  const { r, route } = run([
    app('a', { 'auth-url': 'http://web.victim.svc:8080/' }),
    app('b', { 'auth-url': 'http://198.19.2.2:8080/' }),
    app('m', { 'mirror-target': 'http://web.victim.svc.cluster.local:8080$request_uri' }),
    app('h', { 'auth-url': 'https://login.example.net/' }),
  ], { 'allow-cross-namespace-auth': 'true' });
  for (const n of ['a', 'b']) assert.notEqual(route(n)?.backendId, null, n);
  assert.equal(route('m')?.mirrors?.[0]?.backendId, 'victim_web_8080');
  assert.deepEqual(r.config.data.backends['victim_web_8080']?.endpoints.map((e) => e.address), ['10.0.9.9']);
  assert.equal(r.config.data.backends['extauth.login.example.net.443']?.noClusterIPs, undefined);
});

test("the ConfigMap's global-auth-url (the administrator's) may name another namespace", () => {
  const { route } = run([app('g', {})], { 'global-auth-url': 'http://web.victim.svc:8080/verify' });
  assert.notEqual(route('g')?.backendId, null);
  assert.ok((route('g')?.plugins ?? []).length > 0, 'the global auth plugin runs');
});
