import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diffConfig } from '../translate/diff.ts';
import { translate } from '../translate/translate.ts';
import { normalizeEndpointSlice, normalizeService } from '../model/normalize.ts';
import { ing, modelOf, rule, slice, svc, svcRef } from '../translate/fixtures.test-helpers.ts';
import { endpointUpdates, serviceOfBackend } from './endpoint-updates.ts';

const OPTS = { controllerClass: 'portico.dev/ingress-controller', ingressClassName: 'portico', watchWithoutClass: false, listen: { httpPort: 8080, httpsPort: 8443, statusPort: 10246, address: '127.0.0.1' } };
const web = svc('web', [{ port: 80, name: 'http', targetPort: 8080 }]);
const webSlice = slice('web-abc', 'web', [{ name: 'http', port: 8080 }], [{ ip: '198.51.100.1' }]);
const NONE = new Set<string>();

test('backend ids map back to their Service', () => {
  assert.deepEqual(serviceOfBackend('default_web_http'), { serviceKey: 'default/web', port: 'http' });
  assert.deepEqual(serviceOfBackend('ns-1_my-svc_8080'), { serviceKey: 'ns-1/my-svc', port: '8080' });
  assert.equal(serviceOfBackend('weird'), null);
});

test('the data lane computes exactly what a full translation gives, only for the changed Services', () => {
  const m = modelOf({
    services: [web, svc('other', [{ port: 80 }])],
    slices: [webSlice],
    ingresses: [ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 'http') }, { path: '/o', backend: svcRef('other', 80) }])] })],
  });
  const running = translate(m.snapshot(), OPTS).config;
  const moved = normalizeEndpointSlice(slice('web-abc', 'web', [{ name: 'http', port: 8080 }], [{ ip: '198.51.100.1' }, { ip: '198.51.100.9' }]));
  m.setEndpointSlices('default/web', moved ? [moved] : []);
  const fast = endpointUpdates(m, running.data.backends, new Set(['default/web']), NONE);
  const full = diffConfig(running, translate(m.snapshot(), OPTS).config).delta.backends.upsert;
  assert.deepEqual(fast.upsert, full);
  assert.deepEqual(Object.keys(fast.upsert), ['default_web_http']);
  assert.equal(fast.needsStructure, false);
  assert.deepEqual(endpointUpdates(m, running.data.backends, new Set(['default/other']), NONE).upsert, {}, 'other Services are not touched');
});

test('a vanished Service or port, or an ExternalName switch, needs the structural lane', () => {
  const m = modelOf({ services: [web], slices: [webSlice], ingresses: [ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 'http') }])] })] });
  const running = translate(m.snapshot(), OPTS).config;
  m.setService(normalizeService(svc('web', [{ port: 80, name: 'grpc', targetPort: 8080 }])));
  // (A Service change always runs the structural lane itself; the scan over every backend notices it too.)
  assert.equal(endpointUpdates(m, running.data.backends, null, NONE).needsStructure, true);
  m.deleteService('default/web');
  assert.equal(endpointUpdates(m, running.data.backends, null, NONE).needsStructure, true);
  assert.equal(endpointUpdates(m, running.data.backends, new Set(['default/web']), NONE).needsStructure, true, 'slices of a Service that is gone');
});

test('a refused endpoint address is never pushed, and sends the change through the structural lane (which reports it)', () => {
  const m = modelOf({ services: [web], slices: [webSlice], ingresses: [ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 'http') }])] })] });
  const running = translate(m.snapshot(), OPTS).config;
  const evil = normalizeEndpointSlice(slice('web-abc', 'web', [{ name: 'http', port: 8080 }], [{ ip: '198.51.100.1' }, { ip: '127.0.0.1' }]));
  m.setEndpointSlices('default/web', evil ? [evil] : []);
  const u = endpointUpdates(m, running.data.backends, new Set(['default/web']), NONE);
  assert.equal(u.needsStructure, true);
  assert.deepEqual(u.upsert, {}, 'the allowed endpoint did not change, the refused one is not added');
  const own = endpointUpdates(m, running.data.backends, new Set(['default/web']), new Set(['198.51.100.1']));
  assert.deepEqual(own.upsert.default_web_http?.endpoints, [], "Portico's own address is refused too");
});
