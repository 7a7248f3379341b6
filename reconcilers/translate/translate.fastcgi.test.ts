// FastCGI backends (backend-protocol FCGI, fastcgi-index, fastcgi-params-configmap): the params of the ConfigMap as
// validated (names, values, variables, bounds), the ConfigMap read only in the Ingress's own namespace, the route's
// directive profile, the paths failing closed (503) with a Warning when the params cannot be applied or a namespace
// has used up its distinct FastCGI settings, Warnings for what has no effect, and the rendered location (nginx -t).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Profile } from '../config/types.ts';
import type { Model } from '../model/model.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../model/global-config.ts';
import { configMapsOf } from '../model/model.ts';
import { normalizeIngress } from '../model/normalize.ts';
import { FASTCGI_MAX_PARAMS, FASTCGI_MAX_SETTINGS, FASTCGI_VARIABLES, fastcgiParamValue } from '../annotations/groups/fastcgi.ts';
import { fastcgiParam, UnsafeValueError } from '../nginx-driver/nginx/escape.ts';
import { renderNginxConf } from '../nginx-driver/nginx/render.ts';
import { nginxTest, runtimeDir } from '../nginx-driver/nginx/nginx-t.test-helpers.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from './fixtures.test-helpers.ts';
import { translate, type TranslateResult } from './translate.ts';
import { IncrementalTranslator } from './incremental.ts';
import { ReferencedConfigMapReconciler, configMapTransform, type ConfigMapObject } from '../kinds/configmap/references.ts';
import type { Informer } from '../../operator/informer.ts';
import type { KubeClient } from '../../operator/kube/client.ts';

const A = 'nginx.ingress.kubernetes.io/';
const FCGI = { [`${A}backend-protocol`]: 'FCGI', [`${A}fastcgi-index`]: 'index.php', [`${A}fastcgi-params-configmap`]: 'php-params' };
const PARAMS = { SCRIPT_FILENAME: '/var/www/html$fastcgi_script_name', APP_ENV: 'production', HTTP_PROXY: '' };

type ConfigMaps = Record<string, Record<string, string>>;
function model(namespaces = ['default']): Model {
  return modelOf({
    services: namespaces.map((ns) => svc('php', [{ name: 'fcgi', port: 9000 }], ns)),
    slices: namespaces.map((ns) => slice('php-1', 'php', [{ name: 'fcgi', port: 9000 }], [{ ip: '10.0.0.5' }], ns)),
  });
}
/** Normalizes (with these ConfigMaps readable; every read is recorded) and adds an Ingress to the model. */
function addIngress(m: Model, annotations: Record<string, string>, o: { name?: string; ns?: string; host?: string; created?: string; configMaps?: ConfigMaps; reads?: string[] } = {}): void {
  const cms: ConfigMaps = o.configMaps ?? { 'default/php-params': PARAMS };
  const reader = (k: string) => {
    o.reads?.push(k);
    return cms[k] ? { data: cms[k] } : undefined;
  };
  const obj = ing(o.name ?? 'app', { rules: [rule(o.host ?? 'a.example.com', [{ path: '/', backend: svcRef('php', 9000) }])] }, { annotations, ns: o.ns ?? 'default', ...(o.created ? { created: o.created } : {}) });
  const r = normalizeIngress(obj, () => undefined, reader);
  assert.ok(r.ok);
  m.setIngress(r.ingress);
}
const routeOf = (r: TranslateResult, host = 'a.example.com') => r.config.data.routes[host]?.rules[0]?.route;
const profileOf = (r: TranslateResult, host = 'a.example.com'): Profile | undefined => r.config.structure.profiles.find((p) => p.name === routeOf(r, host)?.profile);
const warnings = (r: TranslateResult, reason?: string) => r.events.filter((e) => e.type === 'Warning' && (reason === undefined || e.reason === reason));

test('param values: ingress-nginx\'s alphabet with allowlisted variables, braced in canonical form; anything else refused', () => {
  const ok: [string, string][] = [
    ['', ''],
    ['/var/www/html/index.php', '/var/www/html/index.php'],
    ['/var/www$fastcgi_script_name', '/var/www${fastcgi_script_name}'],
    ['${document_root}${fastcgi_script_name}', '${document_root}${fastcgi_script_name}'],
    ['$http_x_tenant-$arg_page.$cookie_sid', '${http_x_tenant}-${arg_page}.${cookie_sid}'],
    ['CGI/1.1', 'CGI/1.1'],
  ];
  for (const [raw, want] of ok) assert.deepEqual(fastcgiParamValue(raw), { value: want }, raw);
  const bad: [string, RegExp][] = [
    ['a b', /character " "/],
    ['x;fastcgi_pass evil', /character ";"/],
    ['"quoted"', /character "\\""/],
    ['{x}', /character "\{"/],
    ['a\\b', /character "\\\\"/],
    ['x\ny', /character "\\n"/],
    ['$', /must start a variable/],
    ['${fastcgi_script_name', /must start a variable/],
    ['$request_body', /variable \$request_body is not allowed/],
    ['$portico_backend', /not allowed/],
    ['$Document_Root', /not allowed/],
    [`$${'a'.repeat(65)}`, /must start a variable/],
    ['x'.repeat(1025), /longer than 1024/],
  ];
  for (const [raw, want] of bad) {
    const r = fastcgiParamValue(raw);
    assert.ok('error' in r, raw);
    assert.match(r.error, want, raw);
  }
});

test('the ConfigMap\'s params go into the route\'s profile with fastcgi-index; a FastCGI profile is a profile of its own', () => {
  const m = model();
  addIngress(m, FCGI);
  addIngress(m, { [`${A}backend-protocol`]: 'GRPC' }, { name: 'grpc', host: 'g.example.com' });
  const r = translate(m.snapshot(), OPTS);
  const p = profileOf(r);
  assert.ok(p);
  assert.equal(p.backendProtocol, 'FCGI');
  assert.deepEqual(p.fastcgi, {
    index: 'index.php',
    params: [
      { name: 'APP_ENV', value: 'production' },
      { name: 'HTTP_PROXY', value: '' },
      { name: 'SCRIPT_FILENAME', value: '/var/www/html${fastcgi_script_name}' },
    ],
  });
  assert.notEqual(profileOf(r, 'g.example.com')?.name, p.name);
  assert.equal(routeOf(r)?.backendId, 'default_php_9000');
  assert.deepEqual(warnings(r), []);
  assert.equal(r.status.get('Ingress/default/app')?.programmed, true);
  // Equal settings share one profile; without the ConfigMap only the standard params (and the index) are sent.
  addIngress(m, FCGI, { name: 'same', host: 'b.example.com' });
  addIngress(m, { [`${A}backend-protocol`]: 'FCGI' }, { name: 'bare', host: 'c.example.com' });
  const r2 = translate(m.snapshot(), OPTS);
  assert.equal(profileOf(r2, 'b.example.com')?.name, p.name);
  assert.deepEqual(profileOf(r2, 'c.example.com')?.fastcgi, { params: [] });
});

test('the ConfigMap is read only in the Ingress\'s own namespace; another namespace, a missing or an invalid ConfigMap fails the paths closed', () => {
  const cases: { ref: string; configMaps?: ConfigMaps; why: RegExp; read: string[]; missing?: boolean }[] = [
    { ref: 'other/php-params', configMaps: { 'other/php-params': PARAMS }, why: /ConfigMap other\/php-params is in another namespace; only the Ingress's own namespace \(default\) is read/, read: [] },
    { ref: 'nope', why: /ConfigMap default\/nope not found/, read: ['default/nope'], missing: true },
    { ref: 'bad', configMaps: { 'default/bad': { SCRIPT_FILENAME: '/x; include /etc/passwd' } }, why: /param SCRIPT_FILENAME: character ";" is not allowed/, read: ['default/bad'] },
    { ref: 'bad', configMaps: { 'default/bad': { 'SCRIPT FILENAME': '/x' } }, why: /"SCRIPT FILENAME" is not a param name/, read: ['default/bad'] },
    { ref: 'bad', configMaps: { 'default/bad': { X: '$request_body' } }, why: /param X: variable \$request_body is not allowed/, read: ['default/bad'] },
    { ref: 'bad', configMaps: { 'default/bad': Object.fromEntries(Array.from({ length: FASTCGI_MAX_PARAMS + 1 }, (_, i) => [`P${i}`, 'x'])) }, why: new RegExp(`holds ${FASTCGI_MAX_PARAMS + 1} params, more than ${FASTCGI_MAX_PARAMS}`), read: ['default/bad'] },
  ];
  for (const c of cases) {
    const m = model(['default', 'other']);
    const reads: string[] = [];
    addIngress(m, { ...FCGI, [`${A}fastcgi-params-configmap`]: c.ref }, { reads, ...(c.configMaps ? { configMaps: c.configMaps } : {}) });
    assert.deepEqual(reads, c.read, `${c.ref}: what was read`);
    // Another namespace's ConfigMap is not watched either.
    assert.deepEqual(configMapsOf(m.ingress('default/app')!), c.read, c.ref);
    const r = translate(m.snapshot(), OPTS);
    const route = routeOf(r);
    assert.equal(route?.action, 'unavailable', c.ref);
    assert.match(route?.closedReason ?? '', c.why);
    const w = warnings(r, 'FastCGIUnavailable');
    assert.equal(w.length, 1, c.ref);
    assert.match(w[0]!.message, /failing closed: every path of this Ingress answers 503/);
    assert.equal(r.status.get('Ingress/default/app')?.programmed, false);
    assert.deepEqual(r.status.get('Ingress/default/app')?.unresolved ?? [], c.missing ? ['ConfigMap default/nope'] : [], c.ref);
  }
});

test('a namespace gets a bounded number of distinct FastCGI settings (oldest Ingresses first); shared settings and other namespaces are not counted against it', () => {
  const m = model(['default', 'other']);
  const cms: ConfigMaps = {};
  for (let i = 0; i <= FASTCGI_MAX_SETTINGS; i++) {
    cms[`default/p${i}`] = { SCRIPT_FILENAME: `/srv/app${i}$fastcgi_script_name` };
    addIngress(m, { ...FCGI, [`${A}fastcgi-params-configmap`]: `p${i}` }, { name: `app${i}`, host: `h${i}.example.com`, created: `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`, configMaps: cms });
  }
  // A newer Ingress sharing the first one's settings, and one in another namespace.
  addIngress(m, { ...FCGI, [`${A}fastcgi-params-configmap`]: 'p0' }, { name: 'shares', host: 'shares.example.com', created: '2026-01-02T00:00:00Z', configMaps: cms });
  cms['other/p'] = { SCRIPT_FILENAME: '/srv/other$fastcgi_script_name' };
  addIngress(m, { ...FCGI, [`${A}fastcgi-params-configmap`]: 'p' }, { name: 'theirs', ns: 'other', host: 'theirs.example.com', created: '2026-01-02T00:00:00Z', configMaps: cms });
  const r = translate(m.snapshot(), OPTS);
  for (let i = 0; i < FASTCGI_MAX_SETTINGS; i++) assert.equal(profileOf(r, `h${i}.example.com`)?.backendProtocol, 'FCGI', `h${i}`);
  const over = routeOf(r, `h${FASTCGI_MAX_SETTINGS}.example.com`);
  assert.equal(over?.action, 'unavailable');
  assert.match(over?.closedReason ?? '', new RegExp(`namespace default already uses ${FASTCGI_MAX_SETTINGS} distinct FastCGI settings`));
  assert.deepEqual(warnings(r, 'FastCGIUnavailable').map((e) => e.ref), [`Ingress/default/app${FASTCGI_MAX_SETTINGS}`]);
  assert.equal(profileOf(r, 'shares.example.com')?.name, profileOf(r, 'h0.example.com')?.name);
  assert.equal(profileOf(r, 'theirs.example.com')?.backendProtocol, 'FCGI');
  assert.equal(r.config.structure.profiles.length, FASTCGI_MAX_SETTINGS + 1);
});

test('fastcgi-* without backend-protocol FCGI, and proxy_* annotations with it, have no effect: a Warning each, never silence', () => {
  const m = model();
  const reads: string[] = [];
  addIngress(m, { [`${A}fastcgi-index`]: 'index.php', [`${A}fastcgi-params-configmap`]: 'php-params' }, { reads });
  assert.deepEqual(reads, [], 'the ConfigMap is not read without FCGI');
  let r = translate(m.snapshot(), OPTS);
  assert.equal(routeOf(r)?.profile, undefined);
  assert.deepEqual(warnings(r).map((e) => e.message), [`annotation ignored: ${A}fastcgi-index, ${A}fastcgi-params-configmap have no effect without ${A}backend-protocol "FCGI"`]);

  const m2 = model();
  addIngress(m2, { ...FCGI, [`${A}proxy-buffering`]: 'on', [`${A}proxy-http-version`]: '1.0', [`${A}proxy-body-size`]: '8m', [`${A}custom-http-errors`]: '404' });
  r = translate(m2.snapshot(), OPTS);
  const p = profileOf(r);
  assert.ok(p);
  assert.deepEqual([p.proxyBuffering, p.proxyHttpVersion, p.proxyBodySize, p.interceptErrors, p.errorCodes], [undefined, undefined, '8m', true, [404]]);
  assert.deepEqual(warnings(r).map((e) => e.message), [
    `annotation ignored: ${A}proxy-buffering, ${A}proxy-http-version have no effect with ${A}backend-protocol "FCGI" (nginx's proxy_* directives and headers sent by proxy_pass; a FastCGI server gets nginx's fastcgi_* defaults, as in ingress-nginx) unless an Upstream object sets another protocol for the Service`,
  ]);
});

test('the rendered location: fastcgi_index, the standard params without those the ConfigMap replaces, then its own, fastcgi_pass to a balanced upstream of its own; nginx -t passes', () => {
  const m = model();
  addIngress(m, { ...FCGI, [`${A}custom-http-errors`]: '404', [`${A}proxy-next-upstream`]: 'error http_502 http_503' }, { configMaps: { 'default/php-params': { ...PARAMS, HTTP_HOST: '$http_host' } } });
  const s = translate(m.snapshot(), OPTS).config.structure;
  const p = s.profiles[0]!;
  const rt = runtimeDir();
  const conf = renderNginxConf(s, rt, 'c');
  const loc = new RegExp(`location @portico_${p.name} \\{[\\s\\S]*?\\n    \\}`).exec(conf)?.[0] ?? '';
  const upstream = `portico_be_${p.name}`;
  assert.ok(loc.includes(`      fastcgi_pass ${upstream};\n`), loc);
  assert.ok(new RegExp(`upstream ${upstream} \\{\\n    server 0\\.0\\.0\\.1:1234;\\n    balancer_by_lua_block`).test(conf), 'its upstream block is balanced by Lua');
  assert.ok(!/proxy_pass|grpc_pass/.test(loc));
  assert.ok(loc.includes('      fastcgi_index "index.php";\n'));
  assert.ok(loc.includes('      fastcgi_intercept_errors on;\n'));
  assert.ok(loc.includes('      fastcgi_next_upstream error http_503;\n'), 'http_502 is not a fastcgi_next_upstream condition');
  const params = [...loc.matchAll(/^ {6}fastcgi_param (.*);$/gm)].map((x) => x[1]);
  assert.deepEqual(params.slice(0, 3), ['QUERY_STRING "${query_string}"', 'REQUEST_METHOD "${request_method}"', 'CONTENT_TYPE "${content_type}"']);
  assert.ok(params.includes('HTTPS "${https}" if_not_empty'));
  assert.ok(params.includes('HTTP_X_FORWARDED_FOR "${portico_forwarded_for}"'));
  assert.deepEqual(params.slice(-4), ['APP_ENV "production"', 'HTTP_HOST "${http_host}"', 'HTTP_PROXY ""', 'SCRIPT_FILENAME "/var/www/html${fastcgi_script_name}"']);
  assert.equal(params.filter((x) => x?.startsWith('HTTP_HOST ')).length, 1, 'the ConfigMap replaces a standard param');
  assert.equal(params.filter((x) => x?.startsWith('HTTP_PROXY ')).length, 1);
  nginxTest(rt, conf, { withOutput: true });
});

test('the escaping helper refuses what no schema should have let through', () => {
  assert.equal(fastcgiParam({ name: 'A.b-c_1', value: '/x${uri}' }), 'A.b-c_1 "/x${uri}"');
  for (const v of [
    { name: 'A B', value: 'x' },
    { name: 'A;', value: 'x' },
    { name: '', value: 'x' },
    { name: 'A', value: 'x"; include /etc/passwd; "' },
    { name: 'A', value: '$uri' },
    { name: 'A', value: '${uri' },
    { name: 'A', value: '${URI}' },
    { name: 'A', value: 'a\\"' },
    { name: 'A', value: 'x'.repeat(1025) },
    { name: 'A', value: 1 },
    null,
  ]) assert.throws(() => fastcgiParam(v), UnsafeValueError, JSON.stringify(v));
});

test('the params ConfigMap is watched: its data is kept in the cache, a change re-reconciles the Ingress, and the new params make a new profile', async () => {
  const m = model(['team']);
  const store = new Map<string, ConfigMapObject>();
  const cm = (name: string, data: Record<string, string>): ConfigMapObject => ({ metadata: { namespace: 'team', name }, data }) as ConfigMapObject;
  const enqueued: string[] = [];
  const refs = new ReferencedConfigMapReconciler({ model: m, informer: { store: { get: (k: string) => store.get(k) } } as unknown as Informer<ConfigMapObject>, client: {} as KubeClient, enqueueIngress: (k) => enqueued.push(k) });
  const reconcileIngress = () => {
    const r = normalizeIngress(ing('app', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('php', 9000) }])] }, { ns: 'team', annotations: FCGI }), () => undefined, refs.lookup);
    assert.ok(r.ok);
    m.setIngress(r.ingress);
  };
  reconcileIngress();
  assert.deepEqual(m.ingressesUsingConfigMap('team/php-params'), ['team/app']);
  assert.equal(routeOf(translate(m.snapshot(), OPTS))?.action, 'unavailable', 'not there yet: fails closed');
  const transform = configMapTransform(m);
  assert.ok(transform(cm('php-params', PARAMS)).data, 'the named ConfigMap is cached with its data');
  assert.equal(transform(cm('unrelated', PARAMS)).data, undefined, 'others without it');
  store.set('team/php-params', transform(cm('php-params', PARAMS)));
  await refs.reconcile({} as never, 'team/php-params');
  assert.deepEqual(enqueued.splice(0), ['team/app']);
  reconcileIngress();
  const before = profileOf(translate(m.snapshot(), OPTS));
  assert.equal(before?.fastcgi?.params.find((p) => p.name === 'APP_ENV')?.value, 'production');
  store.set('team/php-params', transform(cm('php-params', { ...PARAMS, APP_ENV: 'staging' })));
  await refs.reconcile({} as never, 'team/php-params');
  assert.deepEqual(enqueued.splice(0), ['team/app']);
  reconcileIngress();
  const after = profileOf(translate(m.snapshot(), OPTS));
  assert.equal(after?.fastcgi?.params.find((p) => p.name === 'APP_ENV')?.value, 'staging');
  assert.notEqual(after?.name, before?.name, 'a new profile: nginx reloads once');
  // An unchanged ConfigMap re-reconciles nobody.
  await refs.reconcile({} as never, 'team/php-params');
  assert.deepEqual(enqueued, []);
});

test('every variable a param may name exists in Portico\'s nginx: all of them (and each family) pass nginx -t', () => {
  const data: Record<string, string> = { SCRIPT_FILENAME: '/srv/www$fastcgi_script_name', FAM: '$http_x_a-$arg_b-$cookie_c' };
  for (const v of FASTCGI_VARIABLES) data[`V_${v.toUpperCase()}`] = `x-\${${v}}`;
  const m = model();
  addIngress(m, FCGI, { configMaps: { 'default/php-params': data } });
  const r = translate(m.snapshot(), OPTS);
  assert.deepEqual(warnings(r), []);
  const s = r.config.structure;
  assert.equal(profileOf(r)?.fastcgi?.params.length, FASTCGI_VARIABLES.size + 2);
  const rt = runtimeDir();
  nginxTest(rt, renderNginxConf(s, rt, 'c'), { withOutput: true });
});

test('incremental translation: Ingresses with FCGI are translated in full, so the per-namespace bound sees every one of them', () => {
  const m = model();
  const cms: ConfigMaps = {};
  const t = new IncrementalTranslator({ maxClosureShare: 1 });
  t.translate(m.snapshot(), OPTS, null);
  const same = (where: string) => {
    const inc = t.translate(m.snapshot(), OPTS, new Set([where]));
    const full = translate(m.snapshot(), OPTS);
    assert.deepStrictEqual(inc.config.structure, full.config.structure, where);
    assert.deepStrictEqual(inc.config.data.routes, full.config.data.routes, where);
    assert.deepStrictEqual(new Map([...inc.status].sort()), new Map([...full.status].sort()), where);
    return inc;
  };
  for (let i = 0; i <= FASTCGI_MAX_SETTINGS; i++) {
    cms[`default/p${i}`] = { SCRIPT_FILENAME: `/srv/app${i}$fastcgi_script_name` };
    addIngress(m, { ...FCGI, [`${A}fastcgi-params-configmap`]: `p${i}` }, { name: `app${i}`, host: `h${i}.example.com`, created: `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`, configMaps: cms });
    same(`default/app${i}`);
  }
  assert.equal(routeOf(same(`default/app${FASTCGI_MAX_SETTINGS}`), `h${FASTCGI_MAX_SETTINGS}.example.com`)?.action, 'unavailable');
  // The oldest one goes: the newest gets its place.
  m.deleteIngress('default/app0');
  const r = same('default/app0');
  assert.equal(profileOf(r, `h${FASTCGI_MAX_SETTINGS}.example.com`)?.backendProtocol, 'FCGI');
});

test('annotations-risk-level Low refuses fastcgi-index and fastcgi-params-configmap (Medium): each a Warning; the ConfigMap is not applied, even a broken one', () => {
  const m = model(['default', 'other']);
  m.setGlobalConfig(parseGlobalConfig({ 'annotations-risk-level': 'Low' }, defaultGlobalConfig()).values);
  addIngress(m, { ...FCGI, [`${A}fastcgi-params-configmap`]: 'other/php-params' });
  const r = translate(m.snapshot(), OPTS);
  assert.equal(routeOf(r)?.action, undefined, 'served');
  assert.deepEqual(profileOf(r)?.fastcgi, { params: [] });
  const w = warnings(r);
  assert.deepEqual(w.map((e) => e.reason), ['RiskyAnnotation', 'RiskyAnnotation']);
  assert.match(w[0]!.message, /fastcgi-index \(risk Medium\)/);
  assert.match(w[1]!.message, /fastcgi-params-configmap \(risk Medium\)/);
});
