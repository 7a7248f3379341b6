// ingress-nginx's --default-backend-service with the ConfigMap's custom-http-errors through the whole data plane:
// translated, rendered, loaded into a real nginx, the routes pushed as data. The errors an Ingress without its own
// default-backend catches are answered by the controller-wide default backend (a Service of another namespace,
// its first port), which sees X-Code and the other X-* headers; an Ingress with its own default-backend keeps it;
// a code not listed passes unchanged; a Service without endpoints answers 503, which the default backend takes
// when 503 is listed; what no path matches (a known host's other paths, an unknown host) is proxied there as sent.
// Backends run in this file's network namespace (TestNet 233).
// Ports 32920-32939 belong to this file: nginx 32920-32922, the default backend (echo) 32923, the Ingress's own
// default backend (echo) 32924, a backend answering 503 32925, one answering 404 32926.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { translate } from '../../translate/translate.ts';
import { ing, modelOf, OPTS, rule, slice, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../../model/global-config.ts';
import { TestNet, type Seen } from './testnet.test-helpers.ts';
import { capturingLogger, liveNginx, sendTo, startLive, stopLive, type Answer } from './live.test-helpers.ts';

const LISTEN = { httpPort: 32920, httpsPort: 32921, statusPort: 32922, address: '127.0.0.1' };
const DEFAULT_PORT = 32923;
const OWN_PORT = 32924;
const FLAKY_PORT = 32925; // answers 503
const GONE_PORT = 32926; // answers 404

const net = new TestNet(233);
const IP = net.ip;
const { logger } = capturingLogger();
const { dynamic, nginx } = liveNginx('portico-default-backend-service-', logger);

const N = 'nginx.ingress.kubernetes.io/';
const app = (name: string, host: string, service: string, annotations: Record<string, string> = {}) =>
  ing(name, { rules: [rule(host, [{ path: '/', backend: svcRef(service, 80) }])] }, { ns: 'team', annotations: Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${N}${k}`, v])) });
const service = (name: string, port: number, ns = 'team') => svc(name, [{ name: 'http', port: 80, targetPort: port }], ns);
const endpoints = (name: string, port: number, ns = 'team') => slice(`${name}-x`, name, [{ name: 'http', port }], [{ ip: IP }], ns);

before(async () => {
  net.up();
  await net.start('default', DEFAULT_PORT, 'echo');
  await net.start('own', OWN_PORT, 'echo');
  await net.start('flaky', FLAKY_PORT, 'status', { status: 503 });
  await net.start('gone', GONE_PORT, 'status', { status: 404 });
  const m = modelOf({
    services: [service('default-http-backend', DEFAULT_PORT, 'ingress-nginx'), service('own-errors', OWN_PORT), service('flaky', FLAKY_PORT), service('gone', GONE_PORT), service('empty', 9)],
    slices: [endpoints('default-http-backend', DEFAULT_PORT, 'ingress-nginx'), endpoints('own-errors', OWN_PORT), endpoints('flaky', FLAKY_PORT), endpoints('gone', GONE_PORT)],
    ingresses: [app('plain', 'plain.test', 'flaky'), app('own', 'own.test', 'flaky', { 'default-backend': 'own-errors' }), app('unlisted', 'unlisted.test', 'gone'), app('noeps', 'noeps.test', 'empty'), ing('paths', { rules: [rule('paths.test', [{ path: '/api', backend: svcRef('own-errors', 80) }])] }, { ns: 'team' })],
  });
  m.setGlobalConfig(parseGlobalConfig({ 'custom-http-errors': '503' }, defaultGlobalConfig()).values);
  const result = translate(m.snapshot(), { ...OPTS, listen: LISTEN, defaultBackendService: 'ingress-nginx/default-http-backend' });
  assert.deepEqual(result.events.filter((e) => e.type === 'Warning'), []);
  await startLive(nginx, dynamic, result.config);
});
after(() => stopLive(nginx, dynamic, net));

const send = (host: string, p: string, headers: Record<string, string> = {}): Promise<Answer> => sendTo(LISTEN.httpPort, host, p, { headers });
const echoed = (a: Answer): Seen => {
  assert.equal(a.status, 200, `an echo answered: ${a.status} ${a.body}`);
  return JSON.parse(a.body) as Seen;
};

test('a listed 503 of an Ingress without default-backend is answered by --default-backend-service, with X-Code and the X-* headers', async () => {
  const before = await net.count('default');
  const got = echoed(await send('plain.test', '/shop?y=1', { 'x-request-id': 'rid-dbs' }));
  assert.equal(got.headers['x-code'], '503');
  assert.equal(got.headers['x-namespace'], 'team');
  assert.equal(got.headers['x-ingress-name'], 'plain');
  assert.equal(got.headers['x-service-name'], 'flaky');
  assert.equal(got.headers['x-original-uri'], '/shop?y=1');
  assert.equal(got.headers['x-request-id'], 'rid-dbs');
  assert.equal(await net.count('default'), before + 1, 'the controller-wide default backend answered');
});

test('an Ingress with its own default-backend keeps it; a code not listed passes unchanged', async () => {
  const before = await net.count('default');
  const own = echoed(await send('own.test', '/x'));
  assert.equal(own.headers['x-code'], '503');
  assert.equal(await net.count('own'), 1);
  const a = await send('unlisted.test', '/x');
  assert.equal(a.status, 404);
  assert.equal(a.body, 'gone\n', "the backend's own answer");
  assert.equal(await net.count('default'), before, 'the controller-wide default backend was not asked');
});

test('a Service without endpoints: the 503 is listed, so --default-backend-service answers it (as ingress-nginx\'s)', async () => {
  const got = echoed(await send('noeps.test', '/x'));
  assert.equal(got.headers['x-code'], '503');
  assert.equal(got.headers['x-service-name'], 'empty');
});

test('what no path matches, on a known host or an unknown one, is proxied to --default-backend-service as sent', async () => {
  const before = await net.count('default');
  const unknown = echoed(await send('nowhere.test', '/a/b?c=1', { 'x-request-id': 'rid-catch-all' }));
  assert.equal(unknown.url, '/a/b?c=1');
  assert.equal(unknown.headers.host, 'nowhere.test');
  assert.equal(unknown.headers['x-code'], undefined, 'proxied as a request, not as an error page');
  assert.equal(unknown.headers['x-request-id'], 'rid-catch-all');
  const known = echoed(await send('paths.test', '/not-a-path'));
  assert.equal(known.url, '/not-a-path');
  assert.equal(await net.count('default'), before + 2);
  const matched = echoed(await send('paths.test', '/api/x'));
  assert.equal(matched.url, '/api/x');
  assert.equal(await net.count('default'), before + 2, 'a matching path goes to its own backend');
  assert.equal(await net.count('own'), 2);
});
