// ingress-nginx's external authentication through the translation: auth-url → an external-auth instance in its
// ingress-nginx mode, its backend (a Service's endpoints, or a host the gateway resolves), and every way it fails
// closed; the ConfigMap's global-auth-* with enable-global-auth and no-auth-locations. Table tests, no cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ing, modelOf, OPTS, rule, slice, svc, svcRef } from './fixtures.test-helpers.ts';
import { GLOBAL_AUTH_ID, translate } from './translate.ts';
import { IncrementalTranslator } from './incremental.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../model/global-config.ts';
import type { PluginInstance } from '../config/types.ts';

const N = 'nginx.ingress.kubernetes.io/';
const web = svc('web', [{ port: 80 }]);
const authSvc = svc('oauth2-proxy', [{ name: 'http', port: 4180, targetPort: 4180 }], 'auth');
const authSlice = slice('oauth2-proxy-x', 'oauth2-proxy', [{ name: 'http', port: 4180 }], [{ ip: '10.0.5.7' }], 'auth');

function run(ingresses: ReturnType<typeof ing>[], config: Record<string, string> = {}, extra: { services?: ReturnType<typeof svc>[] } = {}) {
  const m = modelOf({ services: [web, authSvc, ...(extra.services ?? [])], slices: [authSlice], ingresses });
  // These tables name Services of other namespaces (the default refusal has its own tests: translate.cross-namespace.test.ts).
  m.setGlobalConfig(parseGlobalConfig({ 'allow-cross-namespace-auth': 'true', ...config }, defaultGlobalConfig()).values);
  const r = translate(m.snapshot(), { ...OPTS, ownAddresses: ['192.0.2.254'] });
  const routeOf = (host: string, path = '/') => r.config.data.routes[host]?.rules.find((x) => x.path === path)?.route;
  const pluginsOf = (host: string, path = '/') => (routeOf(host, path)?.plugins ?? []).map((id) => ({ id, ...r.config.data.plugins[id] }) as PluginInstance & { id: string });
  return { r, routeOf, pluginsOf, m };
}
const app = (annotations: Record<string, string>, paths = ['/'], name = 'app', host = 'app.example.com') =>
  ing(name, { rules: [rule(host, paths.map((path) => ({ path, backend: svcRef('web', 80) })))] }, { annotations: Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${N}${k}`, v])) });

test('auth-url naming a Service: an external-auth instance in ingress-nginx mode, its subrequest through the balancer to the endpoints', () => {
  const { r, routeOf, pluginsOf } = run([
    app({
      'auth-url': 'http://oauth2-proxy.auth.svc.cluster.local:4180/oauth2/auth?x=1',
      'auth-signin': 'https://$host/oauth2/start?rd=$escaped_request_uri',
      'auth-response-headers': 'X-Auth-Request-User, X-Auth-Request-Email',
      'auth-cache-key': '$cookie__oauth2_proxy',
      'auth-cache-duration': '200 1m',
    }),
  ]);
  assert.equal(routeOf('app.example.com')?.backendId, 'default_web_80', 'served');
  assert.deepEqual(pluginsOf('app.example.com'), [
    {
      id: 'ing.default.app.extauth',
      name: 'default/app (annotations)',
      type: 'external-auth',
      backendId: 'auth_oauth2-proxy_4180',
      path: '/oauth2/auth?x=1',
      method: 'GET',
      forwardHeaders: [],
      upstreamHeaders: ['x-auth-request-user', 'x-auth-request-email'],
      clientHeaders: [],
      timeoutMs: 60000,
      ingressNginx: {
        scheme: 'http',
        host: 'oauth2-proxy.auth.svc.cluster.local',
        signin: ['https://', { v: 'host' }, '/oauth2/start?rd=', { v: 'escaped_request_uri' }],
        cache: { key: [{ v: 'cookie__oauth2_proxy' }], ttl: { '200': 60 } },
        alwaysSetCookie: false,
        timeouts: { connect: 5, send: 60, read: 60 },
      },
    },
  ]);
  assert.deepEqual(r.config.data.backends['auth_oauth2-proxy_4180']?.endpoints, [{ address: '10.0.5.7', port: 4180, weight: 1 }]);
  assert.deepEqual(r.events.filter((e) => e.type === 'Warning'), []);
});

test('auth-url: the ConfigMap\'s proxy timeouts are the subrequest\'s (as ingress-nginx\'s auth location inherits them)', () => {
  const { pluginsOf } = run([app({ 'auth-url': 'http://oauth2-proxy.auth.svc:4180/' })], { 'proxy-connect-timeout': '3', 'proxy-read-timeout': '20', 'proxy-send-timeout': '30' });
  const p = pluginsOf('app.example.com')[0];
  assert.deepEqual(p?.type === 'external-auth' ? p.ingressNginx?.timeouts : null, { connect: 3, send: 30, read: 20 });
});

test('auth-url naming another host: a backend of its own, resolved by the gateway as an ExternalName (its address filter)', () => {
  const { r, pluginsOf } = run([app({ 'auth-url': 'https://auth.example.net/verify', 'auth-method': 'POST' })]);
  const p = pluginsOf('app.example.com')[0];
  assert.equal(p?.type, 'external-auth');
  assert.equal(p?.type === 'external-auth' && p.backendId, 'extauth.auth.example.net.443');
  assert.equal(p?.type === 'external-auth' && p.ingressNginx?.scheme, 'https');
  assert.equal(p?.type === 'external-auth' && p.ingressNginx?.method, 'POST');
  assert.deepEqual(r.config.data.backends['extauth.auth.example.net.443'], { id: 'extauth.auth.example.net.443', endpoints: [], balance: 'round_robin', externalName: 'auth.example.net', externalPort: 443 });
});

test('auth-url that cannot be applied fails the Ingress closed (503) with a Warning — never served without auth', () => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ 'auth-url': 'http://missing.auth.svc.cluster.local/' }, /names Service auth\/missing, which does not exist/],
    [{ 'auth-url': 'http://oauth2-proxy.auth.svc.cluster.local:9999/' }, /names port 9999 of Service auth\/oauth2-proxy, which it does not have/],
    [{ 'auth-url': 'http://127.0.0.1:10246/healthz' }, /points at 127\.0\.0\.1, .*never proxies to/],
    [{ 'auth-url': 'http://[::1]/' }, /points at ::1/],
    [{ 'auth-url': 'http://169.254.169.254/latest/meta-data' }, /points at 169\.254\.169\.254/],
    [{ 'auth-url': 'http://192.0.2.254:8080/' }, /points at 192\.0\.2\.254/],
    [{ 'auth-url': 'http://auth.example.com/a;b' }, /auth-url \(external authentication with an invalid value/],
    [{ 'auth-url': 'http://auth.example.com/', 'auth-signin': 'https://$http_x_forwarded_host/' }, /auth-signin \(external authentication with an invalid value/],
    [{ 'auth-url': 'http://auth.example.com/', 'auth-snippet': 'proxy_set_header X-A b;' }, /auth-snippet/],
    [{ 'auth-url': 'http://auth.example.com/', 'auth-proxy-set-headers': 'auth/headers' }, /auth-proxy-set-headers/],
  ];
  for (const [a, why] of cases) {
    const { r, routeOf } = run([app(a)]);
    const route = routeOf('app.example.com');
    assert.equal(route?.backendId, null, JSON.stringify(a));
    assert.equal(route?.action, 'unavailable', JSON.stringify(a));
    assert.equal(route?.plugins, undefined);
    assert.match(route?.closedReason ?? '', why, JSON.stringify(a));
    assert.ok(r.events.some((e) => e.type === 'Warning' && e.ref === 'Ingress/default/app' && why.test(e.message) && /fail(ing)? closed/.test(e.message)), JSON.stringify(a));
    assert.equal(r.status.get('Ingress/default/app')?.programmed, false);
  }
});

test('auth-url refused by annotations-risk-level (High) fails closed; at the default level it applies', () => {
  const medium = run([app({ 'auth-url': 'http://oauth2-proxy.auth.svc:4180/' })], { 'annotations-risk-level': 'Medium' });
  assert.equal(medium.routeOf('app.example.com')?.action, 'unavailable');
  assert.ok(medium.r.events.some((e) => e.reason === 'RiskyAnnotation' && /auth-url/.test(e.message)));
  assert.equal(run([app({ 'auth-url': 'http://oauth2-proxy.auth.svc:4180/' })]).routeOf('app.example.com')?.backendId, 'default_web_80');
});

test('auth companions without auth-url: reported, no effect (as ingress-nginx)', () => {
  const { r, routeOf } = run([app({ 'auth-signin': 'https://login.example/', 'auth-response-headers': 'X-User' })]);
  assert.equal(routeOf('app.example.com')?.backendId, 'default_web_80');
  assert.equal(routeOf('app.example.com')?.plugins, undefined);
  assert.ok(r.events.some((e) => e.reason === 'InvalidConfiguration' && /has no effect without nginx\.ingress\.kubernetes\.io\/auth-url/.test(e.message)));
});

const GLOBAL = { 'global-auth-url': 'http://oauth2-proxy.auth.svc.cluster.local:4180/oauth2/auth', 'global-auth-signin': 'https://login.example/start', 'global-auth-response-headers': 'X-User' };

test('global-auth-url: every Ingress gets the global instance, unless enable-global-auth: "false" or its own auth-url', () => {
  const { r, pluginsOf } = run(
    [
      app({}, ['/'], 'plain', 'plain.example.com'),
      app({ 'enable-global-auth': 'false' }, ['/'], 'optout', 'optout.example.com'),
      app({ 'auth-url': 'https://auth.example.net/own' }, ['/'], 'own', 'own.example.com'),
    ],
    GLOBAL,
  );
  assert.deepEqual(pluginsOf('plain.example.com').map((p) => p.id), [GLOBAL_AUTH_ID]);
  const g = r.config.data.plugins[GLOBAL_AUTH_ID];
  assert.equal(g?.type === 'external-auth' && g.backendId, 'auth_oauth2-proxy_4180');
  assert.deepEqual(g?.type === 'external-auth' && g.ingressNginx?.signin, ['https://login.example', '/start', '?rd=', { v: 'rd' }]);
  assert.deepEqual(g?.type === 'external-auth' && g.upstreamHeaders, ['x-user']);
  assert.deepEqual(pluginsOf('optout.example.com'), []);
  assert.deepEqual(pluginsOf('own.example.com').map((p) => p.id), ['ing.default.own.extauth'], 'its own auth-url wins');
  assert.ok(r.config.data.backends['auth_oauth2-proxy_4180']);
});

test('global auth that cannot be applied fails every Ingress it applies to closed (never serves them without auth)', () => {
  for (const bad of [
    { 'global-auth-url': 'http://auth.example.com/;evil' },
    { 'global-auth-url': 'http://nothere.auth.svc.cluster.local/' },
    { 'global-auth-url': 'http://127.0.0.1:10254/metrics' },
    { ...GLOBAL, 'global-auth-response-headers': 'Content-Length' },
    { ...GLOBAL, 'global-auth-cache-key': 'constant' },
    { ...GLOBAL, 'global-auth-snippet': 'proxy_set_header X-A b;' },
  ]) {
    const { r, routeOf } = run([app({}, ['/'], 'plain', 'plain.example.com'), app({ 'enable-global-auth': 'false' }, ['/'], 'optout', 'optout.example.com')], bad);
    assert.equal(routeOf('plain.example.com')?.action, 'unavailable', JSON.stringify(bad));
    assert.equal(routeOf('plain.example.com')?.backendId, null);
    assert.ok(r.events.some((e) => e.type === 'Warning' && e.ref === 'Ingress/default/plain' && /global/.test(e.message)), JSON.stringify(bad));
    assert.equal(routeOf('optout.example.com')?.backendId, 'default_web_80', 'an Ingress that opted out is served');
  }
});

test('no-auth-locations: paths (as written) starting with one get no auth — the default keeps ACME challenges open', () => {
  const { pluginsOf } = run(
    [app({ 'auth-url': 'http://oauth2-proxy.auth.svc:4180/' }, ['/', '/.well-known/acme-challenge/tok', '/public/x']), app({}, ['/'], 'plain', 'plain.example.com')],
    { ...GLOBAL, 'no-auth-locations': '/.well-known/acme-challenge, /public' },
  );
  assert.deepEqual(pluginsOf('app.example.com', '/').map((p) => p.id), ['ing.default.app.extauth']);
  assert.deepEqual(pluginsOf('app.example.com', '/.well-known/acme-challenge/tok'), []);
  assert.deepEqual(pluginsOf('app.example.com', '/public/x'), []);
  assert.deepEqual(pluginsOf('plain.example.com').map((p) => p.id), [GLOBAL_AUTH_ID]);
  const dflt = run([app({ 'auth-url': 'http://oauth2-proxy.auth.svc:4180/' }, ['/.well-known/acme-challenge/x'])]);
  assert.deepEqual(dflt.pluginsOf('app.example.com', '/.well-known/acme-challenge/x'), [], 'default: /.well-known/acme-challenge');
});

test('with global auth, Ingress changes take the full translation (same answer as from scratch)', () => {
  const m = modelOf({ services: [web, authSvc], slices: [authSlice], ingresses: [app({}, ['/'], 'a', 'a.example.com')] });
  m.setGlobalConfig(parseGlobalConfig(GLOBAL, defaultGlobalConfig()).values);
  const t = new IncrementalTranslator({ maxClosureShare: 1 });
  t.translate(m.snapshot(), OPTS, null);
  const before = t.stats.full;
  const m2 = modelOf({ services: [web, authSvc], slices: [authSlice], ingresses: [app({}, ['/'], 'a', 'a.example.com'), app({}, ['/'], 'b', 'b.example.com')] });
  m2.setGlobalConfig(parseGlobalConfig(GLOBAL, defaultGlobalConfig()).values);
  const inc = t.translate(m2.snapshot(), OPTS, new Set(['default/b']));
  assert.equal(t.stats.full, before + 1);
  assert.deepEqual(inc.config.data.routes['b.example.com']?.rules[0]?.route.plugins, [GLOBAL_AUTH_ID]);
  assert.ok(inc.config.data.plugins[GLOBAL_AUTH_ID]);
});
