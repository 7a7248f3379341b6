// Endpoints no tenant may reach are dropped, in the full translation and in the endpoint fast path alike (one
// implementation), with a Warning on every Ingress that uses the Service.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../operator/kube/object.ts';
import { normalizeEndpointSlice } from '../model/normalize.ts';
import type { NormalizedSlice } from '../model/types.ts';
import { endpointsFor, endpointsOf, translate } from './translate.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from './fixtures.test-helpers.ts';

const OWN = '198.18.0.7';
const web = svc('web', [{ name: 'http', port: 80 }]);
const v4 = slice('web-v4', 'web', [{ name: 'http', port: 8080 }], ['10.0.0.1', '127.0.0.1', '169.254.169.254', '0.0.0.0', '224.0.0.5', OWN, '198.18.0.8'].map((ip) => ({ ip })));
const v6: KubeObject = {
  metadata: { name: 'web-v6', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
  addressType: 'IPv6',
  ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  endpoints: ['::1', 'fe80::1', '::ffff:127.0.0.1', '::', 'ff02::1', '2001:db8::5'].map((a) => ({ addresses: [a], conditions: { ready: true } })),
} as KubeObject;

const opts = { ...OPTS, ownAddresses: [OWN] };

test('forbidden endpoint addresses are dropped and reported on every Ingress using the Service', () => {
  const r = translate(
    modelOf({
      services: [web],
      slices: [v4, v6],
      ingresses: [
        ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }),
        ing('b', { rules: [rule('b.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { created: '2026-02-01T00:00:00Z' }),
      ],
    }).snapshot(),
    opts,
  );
  assert.deepEqual(r.config.data.backends.default_web_80?.endpoints.map((e) => e.address), ['10.0.0.1', '198.18.0.8', '2001:db8::5']);
  for (const key of ['Ingress/default/a', 'Ingress/default/b']) {
    const ev = r.events.filter((e) => e.ref === key && e.reason === 'ForbiddenEndpoint');
    assert.equal(ev.length, 1, key);
    assert.equal(ev[0]?.type, 'Warning');
    const msg = ev[0]?.message ?? '';
    assert.match(msg, /^service default\/web: endpoint addresses no tenant may reach were dropped: /);
    assert.match(msg, /0\.0\.0\.0 \(an unspecified/);
    assert.match(msg, /127\.0\.0\.1 \(a loopback address/);
    assert.match(msg, / and 5 more$/, 'the list is bounded (10 refused, 5 named)');
  }
  assert.equal(r.status.get('Ingress/default/a')?.programmed, true, 'the rest is served');
});

test('endpointsOf lists every refused address with its reason; endpointsFor (the fast path) gives the same endpoints', () => {
  const slices = [v4, v6].map((s) => normalizeEndpointSlice(s)).filter((s): s is NormalizedSlice => s !== null);
  const own = new Set([OWN]);
  const full = endpointsOf(slices, 'http', own);
  assert.deepEqual(full.forbidden.map((f) => f.address), ['0.0.0.0', '127.0.0.1', '169.254.169.254', '198.18.0.7', '224.0.0.5', '::', '::1', '::ffff:127.0.0.1', 'fe80::1', 'ff02::1']);
  assert.equal(full.forbidden.find((f) => f.address === OWN)?.reason, "one of Portico's own listener addresses");
  assert.deepEqual(endpointsFor(slices, 'http', own), full.endpoints);
  // Without the own set, the static classes are still refused.
  assert.deepEqual(endpointsFor(slices, 'http').map((e) => e.address), ['10.0.0.1', '198.18.0.7', '198.18.0.8', '2001:db8::5']);
});

test('no Warning when every endpoint is fine', () => {
  const r = translate(
    modelOf({
      services: [web],
      slices: [slice('ok', 'web', [{ name: 'http', port: 8080 }], [{ ip: '10.0.0.1' }])],
      ingresses: [ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] })],
    }).snapshot(),
    opts,
  );
  assert.equal(r.events.filter((e) => e.reason === 'ForbiddenEndpoint').length, 0);
});

test('an ExternalName that is a forbidden IP literal is refused at translation (503 + Warning)', () => {
  const ext = (name: string, externalName: string) => svc(name, [{ name: 'http', port: 10246 }], 'default', { type: 'ExternalName', externalName });
  const r = translate(
    modelOf({
      services: [ext('loop', '127.0.0.1'), ext('meta', '169.254.169.254'), ext('fine', 'api.example.com')],
      ingresses: [
        ing('a', {
          rules: [rule('a.example.com', [{ path: '/l', backend: svcRef('loop', 10246) }, { path: '/m', backend: svcRef('meta', 10246) }, { path: '/f', backend: svcRef('fine', 10246) }])],
        }),
      ],
    }).snapshot(),
    opts,
  );
  const b = r.config.data.backends;
  assert.equal(b['default_loop_10246']?.externalName, undefined);
  assert.match(b['default_loop_10246']?.unavailableReason ?? '', /points at 127\.0\.0\.1, a loopback address .* never proxies to/);
  assert.match(b['default_meta_10246']?.unavailableReason ?? '', /link-local/);
  assert.equal(b['default_fine_10246']?.externalName, 'api.example.com');
  assert.equal(r.events.filter((e) => e.reason === 'ForbiddenEndpoint').length, 2);
  assert.equal(r.events.filter((e) => e.reason === 'BackendNotFound').length, 0);
});
