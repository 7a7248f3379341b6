// auth-url on the request's own host ("https://$host/oauth2/auth", ingress-nginx's oauth2-proxy example) through the
// translation: an external-auth instance marked ownHost, with no backend of its own (the data plane takes the
// backend of the host's route for the auth path per request), scoped to the Ingress's namespace unless the ConfigMap
// allows others; the /oauth2 Ingress beside it is served without authentication. Table tests, no cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ing, modelOf, OPTS, rule, svc, svcRef } from './fixtures.test-helpers.ts';
import { GLOBAL_AUTH_ID, translate } from './translate.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../model/global-config.ts';
import type { PluginInstance } from '../config/types.ts';

const N = 'nginx.ingress.kubernetes.io/';
const web = svc('web', [{ port: 80 }]);
const proxy = svc('oauth2-proxy', [{ name: 'http', port: 4180 }]);
const EXAMPLE = { 'auth-url': 'https://$host/oauth2/auth', 'auth-signin': 'https://$host/oauth2/start?rd=$escaped_request_uri', 'auth-response-headers': 'X-Auth-Request-User' };

function run(annotations: Record<string, string>, config: Record<string, string> = {}) {
  const ingresses = [
    ing('app', { rules: [rule('app.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${N}${k}`, v])) }),
    ing('oauth2-proxy', { rules: [rule('app.example.com', [{ path: '/oauth2', backend: svcRef('oauth2-proxy', 4180) }])] }),
  ];
  const m = modelOf({ services: [web, proxy], ingresses });
  m.setGlobalConfig(parseGlobalConfig(config, defaultGlobalConfig()).values);
  const r = translate(m.snapshot(), OPTS);
  const routeOf = (path: string) => r.config.data.routes['app.example.com']?.rules.find((x) => x.path === path)?.route;
  const pluginsOf = (path: string) => (routeOf(path)?.plugins ?? []).map((id) => ({ id, ...r.config.data.plugins[id] }) as PluginInstance & { id: string });
  return { r, routeOf, pluginsOf };
}

test('ingress-nginx\'s oauth2-proxy example: $host auth-url → an ownHost instance of the Ingress\'s namespace, no backend of its own; /oauth2 served without auth', () => {
  const { r, routeOf, pluginsOf } = run(EXAMPLE);
  assert.equal(routeOf('/')?.backendId, 'default_web_80', 'served (not failing closed)');
  assert.deepEqual(pluginsOf('/'), [
    {
      id: 'ing.default.app.extauth',
      name: 'default/app (annotations)',
      type: 'external-auth',
      backendId: 'extauth.own-host',
      path: '/oauth2/auth',
      method: 'GET',
      forwardHeaders: [],
      upstreamHeaders: ['x-auth-request-user'],
      clientHeaders: [],
      timeoutMs: 60000,
      ingressNginx: {
        scheme: 'https',
        host: '',
        ownHost: true,
        namespace: 'default',
        signin: ['https://', { v: 'host' }, '/oauth2/start?rd=', { v: 'escaped_request_uri' }],
        alwaysSetCookie: false,
        timeouts: { connect: 5, send: 60, read: 60 },
      },
    },
  ]);
  assert.equal(r.config.data.backends['extauth.own-host'], undefined, 'never a backend: nothing is resolved by name');
  assert.equal(routeOf('/oauth2')?.backendId, 'default_oauth2-proxy_4180');
  assert.deepEqual(routeOf('/oauth2')?.plugins ?? [], [], 'the auth service\'s own path needs no authentication');
  assert.deepEqual(r.events.filter((e) => e.type === 'Warning'), []);
});

test('$host auth-url: variables in the query travel as a template; allow-cross-namespace-auth drops the namespace; global-auth-url is never scoped', () => {
  const q = run({ ...EXAMPLE, 'auth-url': 'https://$host/oauth2/auth?rd=$escaped_request_uri' }).pluginsOf('/')[0];
  assert.ok(q?.type === 'external-auth');
  assert.deepEqual(q.ingressNginx?.uri, ['/oauth2/auth?rd=', { v: 'escaped_request_uri' }]);
  assert.equal(q.path, '/oauth2/auth?rd=$escaped_request_uri');
  const cross = run(EXAMPLE, { 'allow-cross-namespace-auth': 'true' }).pluginsOf('/')[0];
  assert.ok(cross?.type === 'external-auth' && cross.ingressNginx?.ownHost === true && cross.ingressNginx.namespace === undefined);
  const g = run({}, { 'global-auth-url': 'http://$http_host/oauth2/auth' });
  const gi = g.r.config.data.plugins[GLOBAL_AUTH_ID];
  assert.ok(gi?.type === 'external-auth' && gi.ingressNginx?.ownHost === true && gi.ingressNginx.namespace === undefined && gi.ingressNginx.scheme === 'http');
  assert.equal(g.routeOf('/')?.backendId, 'default_web_80');
});

test('$host auth-url without a usable route for the auth path: a Warning on the Ingress (its catch-all "/" does not count; a route that requires auth itself would loop)', () => {
  const alone = run(EXAMPLE);
  assert.deepEqual(alone.r.events.filter((e) => e.reason === 'AuthRouteMissing'), []);
  const m = modelOf({
    services: [web, proxy],
    ingresses: [
      ing('lonely', { rules: [rule('lonely.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { [`${N}auth-url`]: 'https://$host/oauth2/auth?rd=$escaped_request_uri' } }),
      ing('loop', { rules: [rule('loop.example.com', [{ path: '/', backend: svcRef('web', 80) }, { path: '/oauth2', backend: svcRef('oauth2-proxy', 4180) }])] }, { annotations: { [`${N}auth-url`]: 'https://$host/oauth2/auth' } }),
    ],
  });
  const r = translate(m.snapshot(), OPTS);
  const warnings = r.events.filter((e) => e.reason === 'AuthRouteMissing').map((e) => [e.ref, e.message]);
  assert.equal(warnings.length, 2, JSON.stringify(warnings));
  assert.equal(warnings[0]?.[0], 'Ingress/default/lonely');
  assert.match(warnings[0]?.[1] ?? '', /host lonely\.example\.com has no route for \/oauth2\/auth but its catch-all "\/".*answer 500/);
  assert.equal(warnings[1]?.[0], 'Ingress/default/loop');
  assert.match(warnings[1]?.[1] ?? '', /the route of host loop\.example\.com for \/oauth2\/auth requires authentication itself/);
  assert.equal(r.config.data.routes['lonely.example.com']?.rules[0]?.route.backendId, 'default_web_80', 'still served: the data plane fails each request closed');
  // The auth subrequest is plain HTTP: an auth service the host reaches over HTTPS (backend-protocol) is named too.
  const tls = modelOf({
    services: [web, proxy],
    ingresses: [
      ing('app', { rules: [rule('tls.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { [`${N}auth-url`]: 'https://$host/oauth2/auth' } }),
      ing('oauth2-proxy', { rules: [rule('tls.example.com', [{ path: '/oauth2', backend: svcRef('oauth2-proxy', 4180) }])] }, { annotations: { [`${N}backend-protocol`]: 'HTTPS' } }),
    ],
  });
  const t = translate(tls.snapshot(), OPTS).events.filter((e) => e.reason === 'AuthRouteMissing');
  assert.match(t[0]?.message ?? '', /the route of host tls\.example\.com for \/oauth2\/auth speaks HTTPS to its backend, and the auth subrequest is plain HTTP/);
});
