// Affinity cookie attributes (session-cookie-*) flowing from annotations into the backend data, and
// service-upstream: the Service's cluster IP as the one endpoint, ignored with a Warning where there is none.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { translate } from './translate.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from './fixtures.test-helpers.ts';

const P = 'nginx.ingress.kubernetes.io/';
const web = (extra: Record<string, unknown> = {}) => svc('web', [{ name: 'http', port: 80, targetPort: 8080 }], 'default', extra);
const eps = slice('web-1', 'web', [{ name: 'http', port: 8080 }], [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }]);
const one = (annotations: Record<string, string>, service = web({ clusterIP: '10.96.0.10' })) =>
  translate(
    modelOf({
      services: [service],
      slices: [eps],
      ingresses: [ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations })],
    }).snapshot(),
    OPTS,
  );

test('session-cookie-* attributes reach the backend data', () => {
  const r = one({
    [`${P}affinity`]: 'cookie',
    [`${P}session-cookie-name`]: 'route',
    [`${P}session-cookie-path`]: '/shop',
    [`${P}session-cookie-domain`]: '.Example.com',
    [`${P}session-cookie-samesite`]: 'None',
    [`${P}session-cookie-conditional-samesite-none`]: 'true',
    [`${P}session-cookie-secure`]: 'true',
    [`${P}session-cookie-expires`]: '3600',
    [`${P}session-cookie-change-on-failure`]: 'true',
    [`${P}session-cookie-partitioned`]: 'true',
  });
  assert.deepEqual(r.config.data.backends.default_web_80?.cookie, {
    name: 'route',
    mode: 'balanced',
    path: '/shop',
    domain: '.example.com',
    sameSite: 'None',
    conditionalSameSiteNone: true,
    secure: true,
    expiresSeconds: 3600,
    changeOnFailure: true,
    partitioned: true,
  });
  assert.equal(r.events.filter((e) => e.type === 'Warning').length, 0, JSON.stringify(r.events));
});

test('an invalid cookie attribute is refused with a Warning and not applied', () => {
  const r = one({ [`${P}affinity`]: 'cookie', [`${P}session-cookie-path`]: '/a;Domain=evil.example' });
  assert.equal(r.config.data.backends.default_web_80?.cookie?.path, undefined);
  assert.ok(r.events.some((e) => e.type === 'Warning' && /session-cookie-path/.test(e.message)), JSON.stringify(r.events));
});

test('service-upstream: the cluster IP and Service port are the one endpoint', () => {
  const r = one({ [`${P}service-upstream`]: 'true' });
  assert.deepEqual(r.config.data.backends.default_web_80?.endpoints, [{ address: '10.96.0.10', port: 80, weight: 1 }]);
  const off = one({ [`${P}service-upstream`]: 'false' });
  assert.deepEqual(off.config.data.backends.default_web_80?.endpoints.map((e) => `${e.address}:${e.port}`), ['10.0.0.1:8080', '10.0.0.2:8080']);
});

test('service-upstream: a forbidden cluster IP is never used', () => {
  const r = one({ [`${P}service-upstream`]: 'true' }, web({ clusterIP: '127.0.0.1' }));
  const b = r.config.data.backends.default_web_80;
  assert.deepEqual(b?.endpoints, []);
  assert.match(b?.unavailableReason ?? '', /cluster IP 127\.0\.0\.1/);
  assert.ok(r.events.some((e) => e.type === 'Warning' && e.reason === 'ForbiddenEndpoint'), JSON.stringify(r.events));
});

test('service-upstream on a headless or ExternalName Service: ignored with a Warning', () => {
  const headless = one({ [`${P}service-upstream`]: 'true' }, web({ clusterIP: 'None' }));
  assert.deepEqual(headless.config.data.backends.default_web_80?.endpoints.map((e) => e.address), ['10.0.0.1', '10.0.0.2']);
  assert.ok(headless.events.some((e) => e.type === 'Warning' && e.reason === 'UnsupportedAnnotation' && /service-upstream ignored.*headless/.test(e.message)), JSON.stringify(headless.events));
  const ext = one({ [`${P}service-upstream`]: 'true' }, web({ type: 'ExternalName', externalName: 'db.example.com' }));
  assert.equal(ext.config.data.backends.default_web_80?.externalName, 'db.example.com');
  assert.ok(ext.events.some((e) => e.type === 'Warning' && /service-upstream ignored.*ExternalName/.test(e.message)), JSON.stringify(ext.events));
});

test('upstream-hash-by-subset(-size): the chash backend carries the subset size (default 3); without upstream-hash-by it has no effect', () => {
  const b = (annotations: Record<string, string>) => one(annotations).config.data.backends.default_web_80;
  assert.deepEqual([b({ [`${P}upstream-hash-by`]: '$request_uri', [`${P}upstream-hash-by-subset`]: 'true' })?.balance, b({ [`${P}upstream-hash-by`]: '$request_uri', [`${P}upstream-hash-by-subset`]: 'true' })?.hashSubsetSize], ['chash', 3]);
  assert.equal(b({ [`${P}upstream-hash-by`]: '$remote_addr', [`${P}upstream-hash-by-subset`]: 'true', [`${P}upstream-hash-by-subset-size`]: '5' })?.hashSubsetSize, 5);
  assert.equal(b({ [`${P}upstream-hash-by`]: '$remote_addr', [`${P}upstream-hash-by-subset-size`]: '5' })?.hashSubsetSize, undefined, 'the size alone asks for nothing');
  assert.equal(b({ [`${P}upstream-hash-by-subset`]: 'true' })?.balance, 'round_robin');
  assert.ok(one({ [`${P}upstream-hash-by-subset`]: 'true' }).events.some((e) => e.type === 'Warning' && /upstream-hash-by-subset: has no effect without/.test(e.message)));
  assert.ok(one({ [`${P}upstream-hash-by`]: '$remote_addr', [`${P}upstream-hash-by-subset-size`]: '5' }).events.some((e) => e.type === 'Warning' && /subset-size: has no effect without/.test(e.message)));
});

test('upstream-hash-by with several variables and text ("$host$request_uri"): carried as written; unknown variables refused', () => {
  const b = (v: string) => one({ [`${P}upstream-hash-by`]: v });
  assert.deepEqual([b('$host$request_uri').config.data.backends.default_web_80?.balance, b('$host$request_uri').config.data.backends.default_web_80?.hashBy], ['chash', '$host$request_uri']);
  assert.equal(b('$arg_user-$cookie_sid').config.data.backends.default_web_80?.hashBy, '$arg_user-$cookie_sid');
  for (const bad of ['$host$nosuchvar', 'text$host', '$host request', '$host;$uri', '$']) {
    const r = b(bad);
    assert.notEqual(r.config.data.backends.default_web_80?.hashBy, bad, bad);
    assert.ok(r.events.some((e) => e.reason === 'InvalidConfiguration' && /upstream-hash-by/.test(e.message)), bad);
  }
});
