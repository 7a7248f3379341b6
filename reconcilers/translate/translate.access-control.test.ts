// No annotation is ignored silently, and access control Portico cannot apply fails closed: the Ingress's paths
// stay claimed (nothing falls through to a broader rule of another Ingress) and answer 503.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diffConfig } from './diff.ts';
import { translate } from './translate.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from './fixtures.test-helpers.ts';

const web = svc('web', [{ name: 'http', port: 80 }]);
const admin = svc('admin', [{ name: 'http', port: 80 }]);
const slices = [
  slice('web-1', 'web', [{ name: 'http', port: 8080 }], [{ ip: '10.0.0.1' }]),
  slice('admin-1', 'admin', [{ name: 'http', port: 8080 }], [{ ip: '10.0.0.2' }]),
];

/** A broad public Ingress (older) and a protected one on the same host, carrying `annotations`. */
function scenario(annotations: Record<string, string>) {
  return translate(
    modelOf({
      services: [web, admin],
      slices,
      ingresses: [
        ing('public', { rules: [rule('app.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { created: '2026-01-01T00:00:00Z' }),
        ing('protected', { rules: [rule('app.example.com', [{ path: '/admin', backend: svcRef('admin', 80) }, { path: '/admin/x', pathType: 'Exact', backend: svcRef('admin', 80) }])] }, { created: '2026-02-01T00:00:00Z', annotations }),
      ],
    }).snapshot(),
    OPTS,
  );
}

const ACCESS_CONTROL: [string, string][] = [
  // auth-url is supported (the external-auth plugin, see translate.auth-url.test.ts): a value Portico cannot use fails
  // closed (auth-proxy-set-headers that cannot be applied too: translate.auth-proxy-headers.test.ts).
  ['nginx.ingress.kubernetes.io/auth-url', 'http://auth.example.com/verify;\nproxy_pass http://evil'],
  // Basic and digest auth are supported (an auth-secret's users, see translate.annotation-plugins.test.ts); without a
  // usable Secret (here: no auth-secret) they fail closed. (auth-secret/-realm alone ask for nothing, as in ingress-nginx.)
  ['nginx.ingress.kubernetes.io/auth-type', 'basic'],
  ['nginx.ingress.kubernetes.io/auth-type', 'digest'],
  ['nginx.ingress.kubernetes.io/auth-tls-secret', 'default/ca'],
  ['nginx.ingress.kubernetes.io/auth-tls-verify-client', 'on'],
  ['nginx.ingress.kubernetes.io/auth-tls-match-cn', 'CN=client'],
  ['nginx.ingress.kubernetes.io/auth-method', 'get; rewrite'],
  // An IP list that cannot be applied (the lists themselves are supported: see translate.annotation-plugins.test.ts).
  ['nginx.ingress.kubernetes.io/whitelist-source-range', '10.0.0.0/33'],
  ['nginx.ingress.kubernetes.io/denylist-source-range', 'not-an-ip'],
  ['portico.dev/auth-url', 'ftp://auth.example.com/verify'],
  ['nginx.ingress.kubernetes.io/configuration-snippet', 'allow 10.0.0.0/8;\ndeny all;'],
];

test('an Ingress with unsupported access control fails closed: paths claimed, no backend (503), Warning + status', () => {
  for (const [annotation, value] of ACCESS_CONTROL) {
    const r = scenario({ [annotation]: value });
    const locs = r.config.data.routes['app.example.com']?.rules ?? [];
    const adminLocs = locs.filter((l) => l.route.source === 'Ingress/default/protected');
    assert.deepEqual(adminLocs.map((l) => `${l.match} ${l.path}`).sort(), ['exact /admin/x', 'prefix /admin'], annotation);
    for (const l of adminLocs) {
      assert.equal(l.route.backendId, null, `${annotation}: ${l.path} must not proxy`);
      assert.equal(l.route.action, 'unavailable', `${annotation}: ${l.path} answers 503`);
      assert.match(l.route.closedReason ?? '', new RegExp(`access control requested by ${annotation.replace(/[./]/g, '\\$&')} \\(`), annotation);
    }
    // The broader public rule is untouched and the protected backend is not even resolved.
    assert.equal(locs.find((l) => l.path === '/')?.route.backendId, 'default_web_80', annotation);
    assert.equal(r.config.data.backends.default_admin_80, undefined, annotation);
    const ev = r.events.filter((e) => e.ref === 'Ingress/default/protected' && e.reason === 'UnsupportedAccessControl');
    assert.equal(ev.length, 1, annotation);
    assert.equal(ev[0]?.type, 'Warning');
    assert.match(ev[0]?.message ?? '', new RegExp(`${annotation.replace(/[./]/g, '\\$&')}.*cannot be applied by Portico; failing closed: every path of this Ingress answers 503`), annotation);
    assert.equal(r.events.filter((e) => e.reason === 'UnsupportedAnnotation' && e.ref === 'Ingress/default/protected').length, 0, `${annotation}: reported once, as access control`);
    const st = r.status.get('Ingress/default/protected');
    assert.equal(st?.served, true);
    assert.equal(st?.programmed, false, `${annotation}: not reported as programmed`);
    assert.match(st?.problems.join('\n') ?? '', /failing closed/);
    assert.equal(r.status.get('Ingress/default/public')?.programmed, true);
  }
});

test('without the annotation the same Ingress is served (the table test above is not vacuous)', () => {
  const r = scenario({});
  const adminLocs = r.config.data.routes['app.example.com']?.rules.filter((l) => l.route.source === 'Ingress/default/protected') ?? [];
  assert.deepEqual(adminLocs.map((l) => l.route.backendId), ['default_admin_80', 'default_admin_80']);
  assert.ok(adminLocs.every((l) => l.route.action === undefined));
  assert.equal(r.events.filter((e) => e.reason === 'UnsupportedAccessControl').length, 0);
});

test('fail closed needs nothing in nginx.conf: the same structure with and without the annotation (the router answers 503)', () => {
  const closed = scenario({ 'nginx.ingress.kubernetes.io/auth-tls-verify-client': 'on' });
  const open = scenario({});
  assert.deepEqual(closed.config.structure, open.config.structure);
  assert.equal(diffConfig(open.config, closed.config).reload, false);
  assert.deepEqual(Object.keys(diffConfig(open.config, closed.config).delta.routes.upsert), ['app.example.com']);
});

test('defaultBackend of a closed Ingress is closed too; canaries never route around access control', () => {
  const v2 = svc('web-v2', [{ port: 80 }]);
  const r = translate(
    modelOf({
      services: [web, admin, v2],
      ingresses: [
        ing('closed', { defaultBackend: svcRef('admin', 80), rules: [rule('c.example.com', [{ path: '/p', backend: svcRef('admin', 80) }])] }, { annotations: { 'nginx.ingress.kubernetes.io/auth-type': 'basic' } }),
        ing('closed-canary', { rules: [rule('c.example.com', [{ path: '/p', backend: svcRef('web-v2', 80) }])] }, { created: '2026-03-01T00:00:00Z', annotations: { 'nginx.ingress.kubernetes.io/canary': 'true', 'nginx.ingress.kubernetes.io/canary-weight': '50' } }),
        ing('main', { rules: [rule('m.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }),
        ing('protected-canary', { rules: [rule('m.example.com', [{ path: '/', backend: svcRef('web-v2', 80) }])] }, {
          created: '2026-03-01T00:00:00Z',
          annotations: { 'nginx.ingress.kubernetes.io/canary': 'true', 'nginx.ingress.kubernetes.io/canary-weight': '50', 'nginx.ingress.kubernetes.io/auth-type': 'basic' },
        }),
      ],
    }).snapshot(),
    OPTS,
  );
  const c = r.config.data.routes['c.example.com']?.rules ?? [];
  assert.deepEqual(c.map((l) => `${l.match} ${l.path} ${l.route.backendId}`), ['prefix /p null', 'prefix / null']);
  assert.equal(r.config.data.routes._?.rules[0]?.route.backendId, null);
  assert.match(r.events.find((e) => e.ref === 'Ingress/default/closed-canary' && e.reason === 'CanaryWithoutMain')?.message ?? '', /main Ingress default\/closed fails closed/);
  assert.equal(r.config.data.backends.default_web_80?.canary, undefined, 'a canary with its own access control gets no traffic');
  assert.equal(r.events.filter((e) => e.ref === 'Ingress/default/protected-canary' && e.reason === 'UnsupportedAccessControl').length, 1);
});

test('every other unsupported annotation, under either prefix, raises its own Warning; the Ingress is served (a snippet is refused by the ConfigMap\'s defaults instead)', () => {
  const r = translate(
    modelOf({
      services: [web],
      ingresses: [
        ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, {
          annotations: {
            'nginx.ingress.kubernetes.io/http2-push-preload': 'true',
            'nginx.ingress.kubernetes.io/enable-global-auth': 'false',
            'nginx.ingress.kubernetes.io/enable-rewrite-log': 'true',
            'portico.dev/frobnicate': 'yes',
            'nginx.ingress.kubernetes.io/configuration-snippet': 'more_set_headers "X-A: b";',
            'nginx.ingress.kubernetes.io/proxy-read-timeout': '30',
            'kubernetes.io/ingress.class': 'portico',
          },
        }),
      ],
    }).snapshot(),
    OPTS,
  );
  const unsupported = r.events.filter((e) => e.reason === 'UnsupportedAnnotation');
  assert.deepEqual(
    unsupported.map((e) => e.message),
    [
      'nginx.ingress.kubernetes.io/enable-rewrite-log',
      'nginx.ingress.kubernetes.io/http2-push-preload',
      'portico.dev/frobnicate',
    ].map((a) => `annotation ${a} is not supported by Portico and is ignored`),
  );
  assert.ok(unsupported.every((e) => e.type === 'Warning' && e.ref === 'Ingress/default/a'));
  // Snippets are supported behind ingress-nginx's switches, which are off by default (risk.ts).
  assert.deepEqual(r.events.filter((e) => e.reason === 'RiskyAnnotation').map((e) => e.message), [
    'annotation nginx.ingress.kubernetes.io/configuration-snippet (risk Critical) is refused and not applied: the ConfigMap does not set allow-snippet-annotations: "true" (and its annotations-risk-level is High); snippets also need annotations-risk-level: Critical',
  ]);
  assert.equal(r.config.data.routes['a.example.com']?.rules[0]?.route.backendId, 'default_web_80');
  assert.equal(r.config.data.routes['a.example.com']?.rules[0]?.route.timeouts?.read, 30);
});
