// ingress-nginx's --default-backend-service with custom-http-errors: the errors every Ingress path catches (its own
// custom-http-errors, else the ConfigMap's) go to that Service's first port unless the Ingress has its own
// default-backend; what no path matches goes there too (ingress-nginx's catch-all). What the translation makes of
// it (route data, the backend, warnings), and that the incremental
// translation gives the full one's answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ing, modelOf, OPTS, rule, slice, svc, svcRef } from './fixtures.test-helpers.ts';
import { translate } from './translate.ts';
import { IncrementalTranslator } from './incremental.ts';
import { NGINX_PREFIX } from '../annotations/table.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../model/global-config.ts';
import { normalizeIngress } from '../model/normalize.ts';

const DBS = 'ingress-nginx/default-http-backend';
const DB_ID = 'ingress-nginx_default-http-backend_80';
const services = [
  svc('web', [{ name: 'http', port: 80, targetPort: 8080 }], 'shop'),
  svc('error-pages', [{ name: 'http', port: 8080 }], 'shop'),
  svc('default-http-backend', [{ name: 'http', port: 80, targetPort: 8080 }, { name: 'metrics', port: 9090 }], 'ingress-nginx'),
];
const slices = [
  slice('web-1', 'web', [{ name: 'http', port: 8080 }], [{ ip: '10.0.0.1' }], 'shop'),
  slice('error-pages-1', 'error-pages', [{ name: 'http', port: 8080 }], [{ ip: '10.0.0.2' }], 'shop'),
  slice('dhb-1', 'default-http-backend', [{ name: 'http', port: 8080 }], [{ ip: '10.0.0.9' }], 'ingress-nginx'),
];
const app = (name: string, host: string, annotations: Record<string, string> = {}) =>
  ing(name, { rules: [rule(host, [{ path: '/', backend: svcRef('web', 80) }])] }, { ns: 'shop', annotations: Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${NGINX_PREFIX}${k}`, v])) });

function model(ingresses: ReturnType<typeof ing>[], config: Record<string, string>, withService = true) {
  const m = modelOf({ services: withService ? services : services.filter((s) => s.metadata.name !== 'default-http-backend'), slices, ingresses });
  m.setGlobalConfig(parseGlobalConfig(config, defaultGlobalConfig()).values);
  return m;
}

test('the ConfigMap\'s custom-http-errors go to --default-backend-service for every Ingress without its own default-backend', () => {
  const m = model([app('a', 'a.example'), app('b', 'b.example', { 'custom-http-errors': '500' }), app('c', 'c.example', { 'default-backend': 'error-pages' })], { 'custom-http-errors': '404,503' });
  const r = translate(m.snapshot(), { ...OPTS, defaultBackendService: DBS });
  const route = (h: string) => r.config.data.routes[h]?.rules[0]?.route;
  assert.deepEqual(route('a.example')?.errorPage, { namespace: 'shop', ingress: 'a', service: 'web', port: '80', backendId: DB_ID });
  assert.equal(route('a.example')?.defaultBackendId, undefined, 'only the errors: no fallback while the Service has no endpoint (ingress-nginx answers 503)');
  assert.equal(route('b.example')?.errorPage?.backendId, DB_ID, 'its own codes, the controller-wide default backend');
  assert.equal(route('c.example')?.errorPage?.backendId, undefined, 'its own default-backend takes its errors');
  assert.equal(route('c.example')?.defaultBackendId, 'shop_error-pages_8080');
  assert.deepEqual(r.config.data.backends[DB_ID]?.endpoints, [{ address: '10.0.0.9', port: 8080, weight: 1 }], 'the first port of the Service');
  assert.deepEqual(r.events.filter((e) => e.type === 'Warning'), []);
  // Without the flag: nginx's own page, as before.
  const plain = translate(m.snapshot(), OPTS);
  assert.equal(plain.config.data.routes['a.example']?.rules[0]?.route.errorPage?.backendId, undefined);
  assert.equal(plain.config.data.backends[DB_ID], undefined);
});

test('what no path matches goes to --default-backend-service: every host says so, and the catch-all host "_" exists for unknown hosts', () => {
  const r = translate(model([app('a', 'a.example')], {}).snapshot(), { ...OPTS, defaultBackendService: DBS });
  assert.equal(r.config.data.routes['a.example']?.rules[0]?.route.errorPage, undefined, 'no custom-http-errors: no error page');
  assert.equal(r.config.data.routes['a.example']?.unmatchedBackendId, DB_ID);
  assert.deepEqual(r.config.data.routes._, { tls: false, rules: [], unmatchedBackendId: DB_ID });
  assert.deepEqual(r.config.data.backends[DB_ID]?.endpoints, [{ address: '10.0.0.9', port: 8080, weight: 1 }]);
  // A catch-all Ingress keeps its own rules; what they do not match goes to the default backend too.
  const all = ing('all', { rules: [rule('', [{ path: '/api', backend: svcRef('web', 80) }])] }, { ns: 'shop' });
  const c = translate(model([all], {}).snapshot(), { ...OPTS, defaultBackendService: DBS });
  assert.deepEqual(c.config.data.routes._?.rules.map((x) => x.path), ['/api']);
  assert.equal(c.config.data.routes._?.unmatchedBackendId, DB_ID);
  // Without the flag: Portico's own 404, no catch-all host.
  const plain = translate(model([app('a', 'a.example')], {}).snapshot(), OPTS);
  assert.equal(plain.config.data.routes['a.example']?.unmatchedBackendId, undefined);
  assert.equal(plain.config.data.routes._, undefined);
  // A Service that does not exist: nothing to send to (404 as without the flag), and no Event about a non-object.
  const gone = translate(model([app('a', 'a.example')], {}, false).snapshot(), { ...OPTS, defaultBackendService: DBS });
  assert.equal(gone.config.data.routes['a.example']?.unmatchedBackendId, undefined);
  assert.equal(gone.config.data.routes._, undefined);
  assert.deepEqual(gone.events.filter((e) => !e.ref.startsWith('Ingress/')), []);
});

test('--default-backend-service naming a Service that does not exist: a Warning on the Ingresses using it, nginx\'s own page', () => {
  const r = translate(model([app('a', 'a.example')], { 'custom-http-errors': '503' }, false).snapshot(), { ...OPTS, defaultBackendService: DBS });
  const route = r.config.data.routes['a.example']?.rules[0]?.route;
  assert.deepEqual(route?.errorPage, { namespace: 'shop', ingress: 'a', service: 'web', port: '80' });
  assert.equal(route?.backendId, 'shop_web_80', 'the Ingress is served as before');
  assert.ok(r.events.some((e) => e.ref === 'Ingress/shop/a' && e.reason === 'DefaultBackendNotFound' && /--default-backend-service: Service ingress-nginx\/default-http-backend does not exist/.test(e.message)));
});

test('incremental: Ingresses that start or stop sending errors to --default-backend-service give the full translation\'s answer', () => {
  const o = { ...OPTS, defaultBackendService: DBS };
  const t = new IncrementalTranslator({ maxClosureShare: 1 });
  const m = model([app('a', 'a.example'), app('b', 'b.example')], {});
  t.translate(m.snapshot(), o, null);
  const step = (i: ReturnType<typeof ing>, key: string) => {
    const n = normalizeIngress(i);
    assert.ok(n.ok);
    m.setIngress(n.ingress);
    const inc = t.translate(m.snapshot(), o, new Set([key]));
    const full = translate(m.snapshot(), o);
    assert.deepEqual(inc.config.data.routes, full.config.data.routes);
    assert.deepEqual(Object.keys(inc.config.data.backends).sort(), Object.keys(full.config.data.backends).sort());
    return inc;
  };
  const on = step(app('a', 'a.example', { 'custom-http-errors': '404' }), 'shop/a');
  assert.equal(on.config.data.routes['a.example']?.rules[0]?.route.errorPage?.backendId, DB_ID);
  assert.ok(on.config.data.backends[DB_ID]);
  const off = step(app('a', 'a.example'), 'shop/a');
  assert.equal(off.config.data.routes['a.example']?.rules[0]?.route.errorPage, undefined);
  assert.ok(off.config.data.backends[DB_ID], 'still the catch-all\'s');
  // A new host: its unmatched paths go to the default backend too, translated alone.
  const scoped0 = t.stats.scoped;
  const added = step(app('n', 'n.example'), 'shop/n');
  assert.equal(added.config.data.routes['n.example']?.unmatchedBackendId, DB_ID);
  assert.equal(t.stats.scoped, scoped0 + 1);
  // An Ingress that never uses it is still translated alone.
  const scoped = t.stats.scoped;
  step(app('b', 'b.example', { 'proxy-read-timeout': '30' }), 'shop/b');
  assert.equal(t.stats.scoped, scoped + 1);
});
