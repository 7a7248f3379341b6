// ingress-nginx's custom error pages and request mirroring through the whole data plane: Ingresses with
// custom-http-errors, default-backend, disable-proxy-intercept-errors and mirror-target / mirror-host /
// mirror-request-body are translated, rendered, checked by nginx -t and loaded into a real nginx (Debian's, as in
// production), the routes pushed as data. The backends run in this file's own network namespace (testnet.test-helpers.ts,
// subnet 198.19.243.0/30) — the Lua side never proxies to loopback. What is observed: an intercepted 503/404 is
// answered by the default-backend Service, which sees X-Code and the other X-* headers; a code not listed passes
// unchanged; a Service without endpoints is served by the default backend; the mirror receives a copy (method,
// URI, Host, body or none) while the client gets the primary's answer, also when the mirror is down; a mirror
// target on loopback is refused by the translation.
// Ports 32300-32309 belong to this file: nginx 32300-32302, the default backend (echo) 32303, a backend answering
// 503 32304, one answering 404 32305, the mirror (echo) 32306, the primary (echo) 32307, 32308 where nothing listens.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { translate, type TranslateResult } from '../../translate/translate.ts';
import { ing, modelOf, OPTS, rule, slice, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { until } from '../../../e2e/harness/http.ts';
import { TestNet, type Seen } from './testnet.test-helpers.ts';
import { capturingLogger, liveNginx, sendTo, startLive, stopLive, type Answer } from './live.test-helpers.ts';

const LISTEN = { httpPort: 32300, httpsPort: 32301, statusPort: 32302, address: '127.0.0.1' };
const ERRORS_PORT = 32303;
const FLAKY_PORT = 32304; // answers 503
const GONE_PORT = 32305; // answers 404
const SHADOW_PORT = 32306;
const PRIMARY_PORT = 32307;
const DOWN_PORT = 32308; // nothing listens

const net = new TestNet(243);
const IP = net.ip;

const { logger } = capturingLogger();
const { dynamic, nginx } = liveNginx('portico-errors-mirror-', logger);

const N = 'nginx.ingress.kubernetes.io/';
const app = (name: string, host: string, service: string, annotations: Record<string, string>, paths: { path: string; service: string }[] = []) =>
  ing(name, { rules: [rule(host, [...paths.map((p) => ({ path: p.path, backend: svcRef(p.service, 80) })), { path: '/', backend: svcRef(service, 80) }])] }, {
    ns: 'team',
    annotations: Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${N}${k}`, v])),
  });
const service = (name: string, port: number) => svc(name, [{ name: 'http', port: 80, targetPort: port }], 'team');
const endpoints = (name: string, port: number) => slice(`${name}-x`, name, [{ name: 'http', port }], [{ ip: IP }], 'team');

let result: TranslateResult;

function desired(): TranslateResult {
  const m = modelOf({
    services: [service('error-pages', ERRORS_PORT), service('flaky', FLAKY_PORT), service('gone', GONE_PORT), service('empty', 9), service('shadow', SHADOW_PORT), service('app', PRIMARY_PORT), service('shadow-down', DOWN_PORT)],
    slices: [endpoints('error-pages', ERRORS_PORT), endpoints('flaky', FLAKY_PORT), endpoints('gone', GONE_PORT), endpoints('shadow', SHADOW_PORT), endpoints('app', PRIMARY_PORT), endpoints('shadow-down', DOWN_PORT)],
    ingresses: [
      app('errs', 'errs.test', 'flaky', { 'custom-http-errors': '404, 503', 'default-backend': 'error-pages' }, [{ path: '/missing', service: 'gone' }]),
      app('unlisted', 'unlisted.test', 'gone', { 'custom-http-errors': '503', 'default-backend': 'error-pages' }),
      app('noeps', 'noeps.test', 'empty', { 'default-backend': 'error-pages' }),
      app('nodefault', 'nodefault.test', 'flaky', { 'custom-http-errors': '503' }),
      app('nointercept', 'nointercept.test', 'flaky', { 'custom-http-errors': '503', 'default-backend': 'error-pages', 'disable-proxy-intercept-errors': 'true' }),
      app('mirror', 'mirror.test', 'app', { 'mirror-target': 'http://shadow.team.svc.cluster.local$request_uri', 'mirror-host': 'copy.example', 'enable-cors': 'true' }),
      app('nobody', 'nobody.test', 'app', { 'mirror-target': 'http://shadow.team.svc/copied', 'mirror-request-body': 'off' }),
      app('mirrordown', 'mirrordown.test', 'app', { 'mirror-target': 'http://shadow-down.team.svc$request_uri' }),
      app('loop', 'loop.test', 'app', { 'mirror-target': `http://127.0.0.1:${SHADOW_PORT}$request_uri` }),
    ],
  });
  return translate(m.snapshot(), { ...OPTS, listen: LISTEN });
}

before(async () => {
  net.up();
  await net.start('errors', ERRORS_PORT, 'echo');
  await net.start('flaky', FLAKY_PORT, 'status', { status: 503 });
  await net.start('gone', GONE_PORT, 'status', { status: 404 });
  await net.start('shadow', SHADOW_PORT, 'echo');
  await net.start('primary', PRIMARY_PORT, 'echo');
  result = desired();
  await startLive(nginx, dynamic, result.config);
});
after(() => stopLive(nginx, dynamic, net));

const send = (host: string, p: string, o: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> => sendTo(LISTEN.httpPort, host, p, o);
const echoed = (a: Answer): Seen => {
  assert.equal(a.status, 200, `an echo answered: ${a.status} ${a.body}`);
  return JSON.parse(a.body) as Seen;
};
/** The next request `name` receives after `count` requests (waits with a deadline: mirror copies are asynchronous). */
async function nextSeen(name: string, count: number): Promise<Seen> {
  return until(`request ${count + 1} at ${name}`, async () => (await net.requests(name))[count], 5_000);
}

test('custom-http-errors: a listed 503 from the backend is answered by the default-backend Service, which sees X-Code and the X-* headers', async () => {
  const before = await net.count('errors');
  const a = await send('errs.test', '/shop/cart?y=1', { method: 'POST', headers: { 'x-request-id': 'rid-503', accept: 'application/json' }, body: 'order=1' });
  const got = echoed(a);
  assert.equal(got.method, 'POST', 'the method is kept');
  assert.equal(got.url, '/?y=1', 'path "/" with the query, as ingress-nginx\'s custom error location');
  assert.equal(got.headers['x-code'], '503');
  assert.equal(got.headers['x-format'], 'application/json');
  assert.equal(got.headers['x-original-uri'], '/shop/cart?y=1');
  assert.equal(got.headers['x-namespace'], 'team');
  assert.equal(got.headers['x-ingress-name'], 'errs');
  assert.equal(got.headers['x-service-name'], 'flaky');
  assert.equal(got.headers['x-service-port'], '80');
  assert.equal(got.headers['x-request-id'], 'rid-503');
  assert.equal(got.headers.host, 'errs.test');
  assert.equal(got.headers['content-length'], undefined, 'no body to the error backend');
  assert.equal(await net.count('errors'), before + 1);
});

test('custom-http-errors: a listed 404 of another path of the Ingress too, with its own Service in X-Service-Name', async () => {
  const got = echoed(await send('errs.test', '/missing/page'));
  assert.equal(got.headers['x-code'], '404');
  assert.equal(got.headers['x-service-name'], 'gone');
  assert.equal(got.headers['x-original-uri'], '/missing/page');
  assert.match(String(got.headers['x-request-id'] ?? ''), /\S/, 'a request id is made when the client sent none');
});

test('a code not listed passes unchanged; disable-proxy-intercept-errors lets a listed one through too', async () => {
  const before = await net.count('errors');
  const a = await send('unlisted.test', '/x');
  assert.equal(a.status, 404);
  assert.equal(a.body, 'gone\n', "the backend's own answer");
  const b = await send('nointercept.test', '/x');
  assert.equal(b.status, 503);
  assert.equal(b.body, 'flaky\n', "the backend's own answer");
  assert.equal(await net.count('errors'), before, 'the default backend was not asked');
});

test('custom-http-errors without default-backend: nginx\'s own page for the status', async () => {
  const a = await send('nodefault.test', '/x');
  assert.equal(a.status, 503);
  assert.notEqual(a.body, 'flaky\n');
  assert.match(a.body, /503 Service Temporarily Unavailable/);
});

test('default-backend: a Service without endpoints is served by the default backend (the request as sent)', async () => {
  const got = echoed(await send('noeps.test', '/some/path?q=2', { headers: { 'x-request-id': 'rid-noeps' } }));
  assert.equal(got.url, '/some/path?q=2');
  assert.equal(got.headers['x-request-id'], 'rid-noeps');
  assert.equal(got.headers['x-code'], undefined, 'proxied as the route, not as an error page');
});

test('mirror-target with $request_uri and mirror-host: the copy has the method, URI, Host and body; the client gets the primary\'s answer', async () => {
  const before = await net.count('shadow');
  const a = await send('mirror.test', '/api/orders?id=7', { method: 'POST', headers: { 'content-type': 'text/plain', 'x-request-id': 'rid-m', origin: 'https://app.example' }, body: 'hello-mirror' });
  const primary = echoed(a);
  assert.equal(primary.url, '/api/orders?id=7');
  assert.equal(primary.headers.host, 'mirror.test', 'the primary sees the client\'s Host');
  // The copy shares the request's variables: it must not clear what the request's own header filter reads.
  assert.equal(a.headers['access-control-allow-origin'], '*', 'enable-cors still applies to the mirrored request');
  const copy = await nextSeen('shadow', before);
  assert.equal(copy.method, 'POST');
  assert.equal(copy.url, '/api/orders?id=7');
  assert.equal(copy.headers.host, 'copy.example');
  assert.equal(copy.headers['x-request-id'], 'rid-m');
  assert.equal(copy.headers['x-forwarded-for'], '127.0.0.1');
  await until('the copy\'s body', async () => (await net.requests('shadow'))[before]?.body === 'hello-mirror', 5_000);
});

test('mirror-request-body off and a literal path: the copy has no body, the path with the client\'s query, the target\'s host', async () => {
  const before = await net.count('shadow');
  echoed(await send('nobody.test', '/form?x=1', { method: 'PUT', body: 'not-for-the-mirror' }));
  const copy = await nextSeen('shadow', before);
  assert.equal(copy.method, 'PUT');
  assert.equal(copy.url, '/copied?x=1');
  assert.equal(copy.headers.host, 'shadow.team.svc');
  assert.equal(copy.headers['content-length'], undefined);
  assert.equal(copy.body, undefined);
  const primary = (await net.requests('primary')).at(-1);
  assert.equal(primary?.body, 'not-for-the-mirror', 'the primary got the body');
});

test('a mirror that is down changes nothing for the client; a mirror target on loopback is refused by the translation', async () => {
  for (let i = 0; i < 3; i++) {
    const got = echoed(await send('mirrordown.test', `/ok/${i}`, { method: 'POST', body: 'x' }));
    assert.equal(got.url, `/ok/${i}`);
  }
  const problems = result.status.get('Ingress/team/loop')?.problems ?? [];
  assert.ok(problems.some((p) => /mirror-target http:\/\/127\.0\.0\.1:32306\$request_uri points at 127\.0\.0\.1, .*loopback.*not mirrored/.test(p)), problems.join('\n'));
  assert.equal(result.config.data.routes['loop.test']?.rules[0]?.route.mirrors, undefined);
  const before = await net.count('shadow');
  echoed(await send('loop.test', '/x'));
  assert.equal(await net.count('shadow'), before, 'nothing was mirrored');
});
