// ingress-nginx's custom error pages (custom-http-errors, default-backend, disable-proxy-intercept-errors, the
// ConfigMap's custom-http-errors) and request mirroring (mirror-target, mirror-host, mirror-request-body): their
// schemas (good values, and injection payloads refused), what the translation makes of them (the directive
// profile, the route's error page, default backend and mirror data, the backends, what is refused and why), and
// the rendered nginx.conf (directives escaped; nginx -t accepts it). Table tests, no cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ing, modelOf, OPTS, rule, slice, svc, svcRef } from './fixtures.test-helpers.ts';
import { translate } from './translate.ts';
import { structureChecksum } from './diff.ts';
import { IncrementalTranslator } from './incremental.ts';
import { NGINX_PREFIX } from '../annotations/table.ts';
import { parseAnnotations } from '../annotations/parse.ts';
import { defaultGlobalConfig, parseGlobalConfig, refusedConfigWhy } from '../model/global-config.ts';
import { renderNginxConf, runtimePaths } from '../nginx-driver/nginx/render.ts';
import { nginxTest, runtimeDir } from '../nginx-driver/nginx/nginx-t.test-helpers.ts';
import { normalizeIngress } from '../model/normalize.ts';
import type { Profile } from '../config/types.ts';
import type { MirrorTarget } from '../annotations/errors-mirror.ts';

const N = NGINX_PREFIX;
const parse = (name: string, value: string) => parseAnnotations({ [`${N}${name}`]: value });
const valueOf = (name: string, value: string) => {
  const r = parse(name, value);
  assert.deepEqual(r.errors, [], `${name}=${JSON.stringify(value)}`);
  return (r.values as Record<string, unknown>)[name];
};
const refusal = (name: string, value: string): string => {
  const r = parse(name, value);
  assert.equal((r.values as Record<string, unknown>)[name], undefined, `${name}=${JSON.stringify(value)} must be refused`);
  assert.equal(r.errors.length, 1, `${name}=${JSON.stringify(value)}`);
  return r.errors[0]?.message ?? '';
};

/** What must never reach nginx.conf or a header through these values. */
const INJECTIONS = ['x;', 'x }', 'x {', 'x\ny', 'x\r\ny', 'x #', '"x"', "'x'", 'x\u0000', 'x\u2028y', 'x\u2029y', 'x\u0085y', '$host', 'access_by_lua_block'];

test('custom-http-errors: codes 400-599, sorted, without duplicates; anything else refused clearly', () => {
  assert.deepEqual(valueOf('custom-http-errors', '503,404'), [404, 503]);
  assert.deepEqual(valueOf('custom-http-errors', ' 404 , 503, 404 '), [404, 503]);
  assert.deepEqual(valueOf('custom-http-errors', '599,400'), [400, 599]);
  assert.match(refusal('custom-http-errors', '302'), /302 is not an error status: each code must be between 400 and 599/);
  assert.match(refusal('custom-http-errors', '600'), /between 400 and 599/);
  for (const bad of ['404;', '404 503', '404,,503', 'abc', '4040', '40', '404,503;return 200', '+404', '4e2', ...INJECTIONS.map((i) => `404,${i}`)]) {
    assert.match(refusal('custom-http-errors', bad), /expected comma-separated HTTP status codes such as "404,503"/, JSON.stringify(bad));
  }
});

test('default-backend, disable-proxy-intercept-errors, mirror-host, mirror-request-body: closed alphabets', () => {
  assert.equal(valueOf('default-backend', ' error-pages '), 'error-pages');
  for (const bad of ['other/error-pages', 'Error-Pages', '1abc', 'a_b', 'a.b', ...INJECTIONS]) assert.match(refusal('default-backend', bad), /name of a Service in the Ingress's namespace/, JSON.stringify(bad));
  assert.equal(valueOf('disable-proxy-intercept-errors', 'true'), true);
  assert.match(refusal('disable-proxy-intercept-errors', 'on'), /"true" or "false"/);
  assert.equal(valueOf('mirror-host', 'Shadow.Example.com.'), 'shadow.example.com');
  for (const bad of ['shadow.example.com:8080', '*.example.com', 'a b', '-a.example', ...INJECTIONS]) assert.match(refusal('mirror-host', bad), /expected a DNS name/, JSON.stringify(bad));
  assert.equal(valueOf('mirror-request-body', 'off'), false);
  assert.equal(valueOf('mirror-request-body', 'ON'), true);
  assert.match(refusal('mirror-request-body', 'off;'), /"on" or "off"/);
});

test('mirror-target: http(s), a host, an optional port, a literal path or $request_uri as the whole path', () => {
  const target = (v: string) => valueOf('mirror-target', v) as MirrorTarget;
  assert.deepEqual(valueOf('mirror-target', 'https://shadow.example.com$request_uri'), {
    url: 'https://shadow.example.com$request_uri', scheme: 'https', host: 'shadow.example.com', port: 443, uri: { requestUri: true }, target: { kind: 'host', host: 'shadow.example.com', port: 443 },
  });
  assert.deepEqual(target('http://shadow.team.svc.cluster.local:8080${request_uri}').target, { kind: 'service', namespace: 'team', service: 'shadow', port: 8080 });
  assert.deepEqual(target('http://10.1.2.3:81/copy/a%20b').uri, { path: '/copy/a%20b' });
  assert.deepEqual(target('HTTP://Shadow.Example.com').uri, { path: '/' });
  assert.deepEqual(target('http://[2001:db8::7]:8080$request_uri').target, { kind: 'ip', address: '2001:db8::7', port: 8080 });
  const cases: [string, RegExp][] = [
    ['https://shadow.example.com/prefix$request_uri', /\$request_uri must be the whole path/],
    ['https://shadow.example.com$request_uri/x', /only nginx variable allowed in mirror-target is \$request_uri/],
    ['https://shadow.example.com$host', /only nginx variable allowed in mirror-target is \$request_uri/],
    ['https://$host$request_uri', /\$request_uri must be the whole path|only nginx variable/],
    ['https://shadow.example.com/a?b=1', /may not carry a query/],
    ['https://user:pw@shadow.example.com/', /user info/],
    ['https://shadow.example.com/#frag', /without a fragment/],
    ['ftp://shadow.example.com/', /absolute http:\/\/ or https:\/\/ URL/],
    ['/relative', /absolute http:\/\/ or https:\/\/ URL/],
    ['https://shadow.example.com:99999/', /port must be 1-65535/],
    ['https://shadow.example.com/a;b', /path and query may only contain/],
    ['https://shadow.example.com/a}', /path and query may only contain/],
    ['https://shadow.example.com/a"b', /path and query may only contain/],
    ['https://shadow.example.com/a\'b', /path and query may only contain/],
    ['https://shadow.example.com/a b', /printable ASCII without spaces/],
    ['https://shadow.example.com/a\nb', /printable ASCII without spaces/],
    ['https://shadow.example.com/a\u0000b', /printable ASCII without spaces/],
    ['https://shadow.example.com/a\u2028b', /printable ASCII without spaces/],
    ['https://shadow.example.com/a#b', /without a fragment/],
    ['https://shadow;example.com/', /host must be a DNS name or an IP address/],
  ];
  for (const [bad, why] of cases) assert.match(refusal('mirror-target', bad), why, JSON.stringify(bad));
});

// ---- translation -----------------------------------------------------------------------------------------------

const services = [
  svc('web', [{ name: 'http', port: 80, targetPort: 8080 }], 'shop'),
  svc('error-pages', [{ name: 'http', port: 8080 }, { name: 'admin', port: 9090 }], 'shop'),
  svc('shadow', [{ name: 'http', port: 80, targetPort: 8080 }], 'qa'),
  svc('solo', [{ name: 'http', port: 80 }], 'shop'),
];
const slices = [
  slice('web-1', 'web', [{ name: 'http', port: 8080 }], [{ ip: '10.0.0.1' }], 'shop'),
  slice('error-pages-1', 'error-pages', [{ name: 'http', port: 8080 }], [{ ip: '10.0.0.2' }], 'shop'),
  slice('shadow-1', 'shadow', [{ name: 'http', port: 8080 }], [{ ip: '10.0.0.3' }], 'qa'),
];
const app = (name: string, host: string, annotations: Record<string, string>, port: number | string = 80) =>
  ing(name, { rules: [rule(host, [{ path: '/', backend: svcRef('web', port) }])] }, { ns: 'shop', annotations: Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${N}${k}`, v])) });

function run(ingresses: ReturnType<typeof ing>[], config: Record<string, string> = {}) {
  const m = modelOf({ services, slices, ingresses });
  // These tables name Services of other namespaces (the default refusal has its own tests: translate.cross-namespace.test.ts).
  m.setGlobalConfig(parseGlobalConfig({ 'allow-cross-namespace-auth': 'true', ...config }, defaultGlobalConfig()).values);
  const r = translate(m.snapshot(), { ...OPTS, ownAddresses: ['192.0.2.254'] });
  const routeOf = (host: string) => r.config.data.routes[host]?.rules[0]?.route;
  const profileOf = (host: string) => r.config.structure.profiles.find((p) => p.name === routeOf(host)?.profile);
  const problems = (name: string) => r.status.get(`Ingress/shop/${name}`)?.problems ?? [];
  return { r, m, routeOf, profileOf, problems };
}

test('custom-http-errors + default-backend: the profile catches the codes, the route names its error page and default backend', () => {
  const { r, routeOf, profileOf } = run([
    app('a', 'a.example', { 'custom-http-errors': '503,404', 'default-backend': 'error-pages' }),
    app('b', 'b.example', { 'custom-http-errors': '404,503,404' }, 'http'),
    app('c', 'c.example', { 'custom-http-errors': '404,503', 'disable-proxy-intercept-errors': 'true' }),
    app('d', 'd.example', { 'default-backend': 'error-pages' }),
    app('e', 'e.example', {}),
  ]);
  const a = profileOf('a.example') as Profile;
  assert.deepEqual([a.errorCodes, a.interceptErrors], [[404, 503], true]);
  assert.equal(routeOf('b.example')?.profile, a.name, 'equal sets of codes share one profile');
  assert.deepEqual(routeOf('a.example')?.errorPage, { namespace: 'shop', ingress: 'a', service: 'web', port: '80' });
  assert.deepEqual(routeOf('b.example')?.errorPage, { namespace: 'shop', ingress: 'b', service: 'web', port: 'http' }, 'the port as the Ingress wrote it');
  assert.equal(routeOf('a.example')?.defaultBackendId, 'shop_error-pages_8080', "the default backend's first port");
  assert.equal(routeOf('b.example')?.defaultBackendId, undefined);
  assert.deepEqual(r.config.data.backends['shop_error-pages_8080']?.endpoints, [{ address: '10.0.0.2', port: 8080, weight: 1 }]);
  const c = profileOf('c.example') as Profile;
  assert.deepEqual([c.errorCodes, c.interceptErrors], [[404, 503], undefined], 'disable-proxy-intercept-errors: error_page without proxy_intercept_errors');
  assert.equal(routeOf('d.example')?.profile, undefined, 'default-backend alone needs no profile: the fallback is data');
  assert.equal(routeOf('d.example')?.defaultBackendId, 'shop_error-pages_8080');
  assert.equal(routeOf('d.example')?.errorPage, undefined);
  assert.equal(routeOf('e.example')?.profile, undefined);
  assert.deepEqual(Object.keys(routeOf('e.example') ?? {}).sort(), ['backendId', 'source', 'sslRedirect']);
});

test('the ConfigMap\'s custom-http-errors applies to Ingresses without the annotation; the annotation wins', () => {
  assert.equal(refusedConfigWhy('custom-http-errors'), null, 'no longer refused');
  const { profileOf, routeOf, r } = run([app('a', 'a.example', {}), app('b', 'b.example', { 'custom-http-errors': '500' }), app('c', 'c.example', { 'default-backend': 'error-pages' })], { 'custom-http-errors': '503, 502' });
  assert.deepEqual(profileOf('a.example')?.errorCodes, [502, 503]);
  assert.deepEqual(profileOf('b.example')?.errorCodes, [500]);
  assert.deepEqual(routeOf('c.example')?.errorPage, { namespace: 'shop', ingress: 'c', service: 'web', port: '80' });
  assert.equal(routeOf('c.example')?.defaultBackendId, 'shop_error-pages_8080');
  assert.ok(r.config.structure.profiles.every((p) => p.interceptErrors));
  const bad = parseGlobalConfig({ 'custom-http-errors': '404;return 200' }, defaultGlobalConfig());
  assert.match(bad.errors[0]?.message ?? '', /custom-http-errors=.*expected comma-separated HTTP status codes/);
});

test('default-backend naming a Service that does not exist: reported, not used; the route is served as before', () => {
  const { routeOf, problems, r } = run([app('a', 'a.example', { 'default-backend': 'nope', 'custom-http-errors': '503' })]);
  assert.equal(routeOf('a.example')?.backendId, 'shop_web_80');
  assert.equal(routeOf('a.example')?.defaultBackendId, undefined);
  assert.ok(routeOf('a.example')?.errorPage, 'the codes are still caught (nginx\'s own page)');
  assert.match(problems('a').join('\n'), /default-backend: Service shop\/nope does not exist; requests are not sent to it/);
  assert.ok(r.events.some((e) => e.reason === 'DefaultBackendNotFound' && e.ref === 'Ingress/shop/a'));
});

test('mirror-target: the route\'s mirror data, the profile\'s mirror, the target\'s backend (a Service, a host, an IP)', () => {
  const { r, routeOf, profileOf } = run([
    app('svc', 'svc.example', { 'mirror-target': 'http://shadow.qa.svc.cluster.local$request_uri', 'mirror-host': 'copy.example' }),
    app('host', 'host.example', { 'mirror-target': 'https://shadow.example.net:8443/copy', 'mirror-request-body': 'off' }),
    app('ip', 'ip.example', { 'mirror-target': 'http://[2001:db8::7]$request_uri' }),
  ]);
  assert.deepEqual(routeOf('svc.example')?.mirrors, [{ backendId: 'qa_shadow_80', scheme: 'http', host: 'copy.example', serverName: 'shadow.qa.svc.cluster.local', requestUri: true }]);
  assert.deepEqual(profileOf('svc.example')?.mirror, { body: true });
  assert.deepEqual(r.config.data.backends.qa_shadow_80?.endpoints, [{ address: '10.0.0.3', port: 8080, weight: 1 }]);
  assert.deepEqual(routeOf('host.example')?.mirrors, [{ backendId: 'extauth.shadow.example.net.8443', scheme: 'https', host: 'shadow.example.net', serverName: 'shadow.example.net', path: '/copy' }]);
  assert.deepEqual(profileOf('host.example')?.mirror, { body: false });
  assert.deepEqual(r.config.data.backends['extauth.shadow.example.net.8443'], { id: 'extauth.shadow.example.net.8443', endpoints: [], balance: 'round_robin', externalName: 'shadow.example.net', externalPort: 8443 }, 'resolved by the gateway (its address filter)');
  assert.equal(routeOf('ip.example')?.mirrors?.[0]?.host, '[2001:db8::7]', 'an IPv6 Host header in brackets');
});

test('mirror-target on loopback, link-local, Portico\'s own address or a missing Service: refused with why, nothing mirrored', () => {
  const cases: [string, RegExp][] = [
    ['http://127.0.0.1:8080$request_uri', /mirror-target http:\/\/127\.0\.0\.1:8080\$request_uri points at 127\.0\.0\.1, a loopback address.*never proxies to; requests are not mirrored/],
    ['http://[::1]/', /points at ::1, a loopback address/],
    ['http://169.254.169.254/latest', /points at 169\.254\.169\.254, a link-local address/],
    ['http://192.0.2.254/', /points at 192\.0\.2\.254, .*Portico's own/],
    ['http://ghost.qa.svc/', /names Service qa\/ghost, which does not exist; requests are not mirrored/],
    ['http://shadow.qa.svc:81/', /names port 81 of Service qa\/shadow, which it does not have/],
  ];
  for (const [target, why] of cases) {
    const { routeOf, profileOf, problems, r } = run([app('m', 'm.example', { 'mirror-target': target })]);
    assert.match(problems('m').join('\n'), why, target);
    assert.ok(r.events.some((e) => e.reason === 'MirrorUnavailable'), target);
    assert.equal(routeOf('m.example')?.mirrors, undefined, target);
    assert.equal(profileOf('m.example'), undefined, `${target}: no mirror directive`);
    assert.equal(routeOf('m.example')?.backendId, 'shop_web_80', `${target}: the route itself is served`);
  }
});

test('an Ingress that fails closed gets neither error page, default backend nor mirror', () => {
  const { routeOf, r } = run([app('a', 'a.example', { 'custom-http-errors': '503', 'default-backend': 'error-pages', 'mirror-target': 'http://shadow.qa.svc/', 'auth-tls-secret': 'shop/ca' })]);
  const route = routeOf('a.example');
  assert.equal(route?.action, 'unavailable');
  assert.deepEqual([route?.errorPage, route?.defaultBackendId, route?.mirrors, route?.profile], [undefined, undefined, undefined, undefined]);
  assert.equal(r.config.data.backends.qa_shadow_80, undefined);
});

test('incremental: Ingresses with default-backend or mirror-target, and those sharing their backends, run the full translation', () => {
  const t = new IncrementalTranslator({ maxClosureShare: 1 });
  const m = modelOf({ services, slices, ingresses: [app('a', 'a.example', { 'default-backend': 'error-pages' }), app('b', 'b.example', {})] });
  const o = { ...OPTS };
  t.translate(m.snapshot(), o, null);
  assert.equal(t.stats.full, 1);
  // Another Ingress starts using the default backend's Service as its own backend, then goes: the backend stays.
  const c = ing('c', { rules: [rule('c.example', [{ path: '/', backend: svcRef('error-pages', 8080) }])] }, { ns: 'shop' });
  const rc = normalizeIngress(c);
  assert.ok(rc.ok);
  m.setIngress(rc.ingress);
  t.translate(m.snapshot(), o, new Set(['shop/c']));
  m.deleteIngress('shop/c');
  const after = t.translate(m.snapshot(), o, new Set(['shop/c']));
  assert.ok(after.config.data.backends['shop_error-pages_8080'], 'the default backend is still in the data');
  assert.equal(after.config.data.routes['a.example']?.rules[0]?.route.defaultBackendId, 'shop_error-pages_8080');
  // An Ingress without them, on a backend of its own, is translated alone.
  const scopedBefore = t.stats.scoped;
  const d = normalizeIngress(ing('d', { rules: [rule('d.example', [{ path: '/', backend: svcRef('solo', 80) }])] }, { ns: 'shop' }));
  assert.ok(d.ok);
  m.setIngress(d.ingress);
  t.translate(m.snapshot(), o, new Set(['shop/d']));
  assert.equal(t.stats.scoped, scopedBefore + 1);
});

// ---- rendering -------------------------------------------------------------------------------------------------

test('render: error_page per code, proxy_intercept_errors, mirror directives in the profile; one error location per code in use; nginx -t accepts it', () => {
  const { r, routeOf } = run([
    app('a', 'a.example', { 'custom-http-errors': '503,404', 'default-backend': 'error-pages', 'mirror-target': 'http://shadow.qa.svc$request_uri' }),
    app('b', 'b.example', { 'custom-http-errors': '502', 'disable-proxy-intercept-errors': 'true', 'mirror-target': 'http://shadow.qa.svc/x', 'mirror-request-body': 'off' }),
  ]);
  const rt = runtimeDir();
  const conf = renderNginxConf(r.config.structure, rt, structureChecksum(r.config.structure));
  const loc = (host: string) => new RegExp(`location @portico_${routeOf(host)?.profile} \\{[\\s\\S]*?\\n    \\}`).exec(conf)?.[0] ?? '';
  const a = loc('a.example');
  for (const d of ['error_page 404 = @portico_err_404;', 'error_page 503 = @portico_err_503;', 'proxy_intercept_errors on;', 'mirror /_portico_internal/mirror;', 'mirror_request_body on;']) assert.ok(a.includes(`\n      ${d}\n`), `${d} in\n${a}`);
  const b = loc('b.example');
  for (const d of ['error_page 502 = @portico_err_502;', 'mirror /_portico_internal/mirror_nobody;', 'mirror_request_body off;']) assert.ok(b.includes(`\n      ${d}\n`), `${d} in\n${b}`);
  assert.ok(!b.includes('intercept_errors'), 'disable-proxy-intercept-errors');
  for (const code of [404, 502, 503]) assert.match(conf, new RegExp(`location @portico_err_${code} \\{\\n      set \\$portico_error_code ${code};`));
  assert.equal(conf.match(/location @portico_err_\d+ \{/g)?.length, 3, 'one location per code in use, not per profile');
  nginxTest(rt, conf);
});

test('render: an error code that slipped past the schemas is refused, not written', () => {
  const { r } = run([app('a', 'a.example', { 'custom-http-errors': '503', 'mirror-target': 'http://shadow.qa.svc/' })]);
  const p = r.config.structure.profiles[0] as Profile;
  const bad: Partial<Profile>[] = [
    { errorCodes: [302] }, { errorCodes: [600] }, { errorCodes: [503.5] }, { errorCodes: ['503; return 200' as unknown as number] }, { errorCodes: [-1] },
  ];
  for (const b of bad) assert.throws(() => renderNginxConf({ ...r.config.structure, profiles: [{ ...p, ...b }] }, runtimePaths('/run/p'), 'c'), /unsafe|invalid|expected/i, JSON.stringify(b));
});

test('the ConfigMap\'s disable-proxy-intercept-errors: the ConfigMap\'s custom-http-errors without interception, unless an Ingress says otherwise', () => {
  const { profileOf } = run([app('a', 'a.example', {}), app('b', 'b.example', { 'disable-proxy-intercept-errors': 'false' })], { 'custom-http-errors': '503', 'disable-proxy-intercept-errors': 'true' });
  assert.deepEqual([profileOf('a.example')?.errorCodes, profileOf('a.example')?.interceptErrors], [[503], undefined], 'error_page only: backend errors reach the client');
  assert.deepEqual([profileOf('b.example')?.errorCodes, profileOf('b.example')?.interceptErrors], [[503], true], 'the annotation wins');
});
