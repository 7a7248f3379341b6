// ingress-nginx's path and rewrite semantics through the real data plane: Ingresses translated, pushed to a real
// nginx (Debian's, as in production) over the configuration socket, and requests answered by two echo backends
// (each answers with the request it received as JSON, so the path the backend saw is checked). Each test names the
// ingress-nginx behaviour it pins. Nothing here reloads nginx: every behaviour is route and plugin data.
// The echo backends run in this file's own network namespace (testnet.test-helpers.ts, subnet 250: 198.19.250.0/30).
// Ports 31600-31604 belong to this file: nginx 31600-31602, the "web" echo backend 31603, the "api" one 31604.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { nullLogger } from '../../../operator/log.ts';
import { translate } from '../../translate/translate.ts';
import { diffConfig } from '../../translate/diff.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { DynamicClient } from './dynamic.ts';
import { NginxProcess } from './process.ts';
import { runtimePaths } from './render.ts';
import { TestNet, type Seen } from './testnet.test-helpers.ts';
import { startLive, stopLive } from './live.test-helpers.ts';

const LISTEN = { httpPort: 31600, httpsPort: 31601, statusPort: 31602, address: '127.0.0.1' };
const WEB_PORT = 31603;
const API_PORT = 31604;
const net = new TestNet(250);
const A = 'nginx.ingress.kubernetes.io/';

const dir = mkdtempSync(path.join(tmpdir(), 'portico-paths-'));
const dynamic = new DynamicClient();
const nginx = new NginxProcess({ binary: '/usr/sbin/nginx', runtime: runtimePaths(dir), shutdownTimeoutMs: 2_000 }, dynamic, nullLogger());

const objects = () => ({
  services: [svc('web', [{ port: 80, targetPort: WEB_PORT }]), svc('api', [{ port: 80, targetPort: API_PORT }])],
  slices: [slice('web-1', 'web', [{ port: WEB_PORT }], [{ ip: net.ip }]), slice('api-1', 'api', [{ port: API_PORT }], [{ ip: net.ip }])],
  ingresses: [
    // examples/rewrite: path "/something(/|$)(.*)", rewrite-target "/$2"
    ing('rewrite', { rules: [rule('rewrite.test', [{ path: '/something(/|$)(.*)', pathType: 'ImplementationSpecific', backend: svcRef('web', 80) }])] }, { annotations: { [`${A}rewrite-target`]: '/$2' } }),
    // ingress-path-matching.md: use-regex on one Ingress of the host turns every path of the host into a regex
    ing('plain', { rules: [rule('regex.test', [{ path: '/foo', pathType: 'Exact', backend: svcRef('api', 80) }, { path: '/', pathType: 'Prefix', backend: svcRef('web', 80) }])] }, { created: '2026-01-01T00:00:00Z' }),
    ing('regex', { rules: [rule('regex.test', [{ path: '/v[0-9]+/items', pathType: 'ImplementationSpecific', backend: svcRef('api', 80) }])] }, { created: '2026-01-02T00:00:00Z', annotations: { [`${A}use-regex`]: 'true' } }),
    // app-root
    ing('approot', { rules: [rule('approot.test', [{ path: '/', pathType: 'Prefix', backend: svcRef('web', 80) }])] }, { annotations: { [`${A}app-root`]: '/app1' } }),
    // from-to-www-redirect
    ing('www', { rules: [rule('foo.test', [{ path: '/', pathType: 'Prefix', backend: svcRef('web', 80) }])] }, { annotations: { [`${A}from-to-www-redirect`]: 'true' } }),
    // trailing slash: an ImplementationSpecific "/docs/" is nginx's `location /docs/`; "/api" written without one is
    // not; a Prefix "/guide/" is the element-wise prefix "/guide" (Ingress spec)
    ing('slash', { rules: [rule('slash.test', [{ path: '/docs/', pathType: 'ImplementationSpecific', backend: svcRef('api', 80) }, { path: '/guide/', pathType: 'Prefix', backend: svcRef('api', 80) }, { path: '/api', pathType: 'Prefix', backend: svcRef('api', 80) }, { path: '/', pathType: 'Prefix', backend: svcRef('web', 80) }])] }),
    ing('slashport', { rules: [rule('slashport.test', [{ path: '/docs/', pathType: 'ImplementationSpecific', backend: svcRef('api', 80) }])] }, { annotations: { 'nginx.ingress.kubernetes.io/use-port-in-redirects': 'true' } }),
    // redirect to HTTPS: the final "/" dropped, unless preserve-trailing-slash
    ing('ssl', { rules: [rule('ssl.test', [{ path: '/', pathType: 'Prefix', backend: svcRef('web', 80) }])] }, { annotations: { [`${A}force-ssl-redirect`]: 'true' } }),
    ing('keep', { rules: [rule('keep.test', [{ path: '/', pathType: 'Prefix', backend: svcRef('web', 80) }])] }, { annotations: { [`${A}force-ssl-redirect`]: 'true', [`${A}preserve-trailing-slash`]: 'true' } }),
    // URL normalization: matched on nginx's $uri
    ing('norm', { rules: [rule('norm.test', [{ path: '/admin', pathType: 'Prefix', backend: svcRef('api', 80) }, { path: '/', pathType: 'Prefix', backend: svcRef('web', 80) }])] }),
  ],
});

before(async () => {
  net.up(); // throws (the tests fail) when the namespace cannot be made
  await net.start('web', WEB_PORT, 'echo');
  await net.start('api', API_PORT, 'echo');
  const config = translate(modelOf(objects()).snapshot(), { ...OPTS, listen: LISTEN }).config;
  await startLive(nginx, dynamic, config);
});
after(() => stopLive(nginx, dynamic, net));

interface Answer {
  status: number;
  location: string | undefined;
  body: string;
}
function send(host: string, p: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: LISTEN.httpPort, path: p, method: 'GET', headers: { host }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}
/** The backend that answered ("web" or "api") and the URL it received. */
async function reached(host: string, p: string): Promise<{ backend: string; url: string }> {
  const before = { web: await net.count('web'), api: await net.count('api') };
  const a = await send(host, p);
  assert.equal(a.status, 200, `${host}${p}: proxied (${a.status} ${a.body.slice(0, 200)})`);
  const backend = (await net.count('web')) > before.web ? 'web' : (await net.count('api')) > before.api ? 'api' : '?';
  return { backend, url: (JSON.parse(a.body) as Seen).url };
}

test('rewrite-target "/$2" with path "/something(/|$)(.*)": /something → /, /something/ → /, /something/new → /new, case-insensitive, query kept (ingress-nginx examples/rewrite)', async () => {
  const pid = nginx.pid;
  assert.equal((await reached('rewrite.test', '/something')).url, '/');
  assert.equal((await reached('rewrite.test', '/something/')).url, '/');
  assert.equal((await reached('rewrite.test', '/something/new')).url, '/new');
  assert.equal((await reached('rewrite.test', '/SomeThing/a/b?x=1&y=2')).url, '/a/b?x=1&y=2');
  assert.equal((await reached('rewrite.test', '/something/a%20b')).url, '/a%20b', 'the capture is re-encoded as nginx does');
  assert.equal((await send('rewrite.test', '/x/something/new')).status, 404, 'anchored at the start (`~* "^<path>"`)');
  assert.equal((await send('rewrite.test', '/somethingelse/z')).status, 404, '"(/|$)" needs a "/" or the end after "/something"');
  assert.equal(nginx.pid, pid, 'no reload');
});

test('use-regex on ONE Ingress makes every path of the host a case-insensitive start-anchored regex, Exact included (ingress-path-matching.md)', async () => {
  assert.equal((await reached('regex.test', '/V2/ITEMS/9')).backend, 'api', 'the regex path, case-insensitive and prefix-like');
  assert.equal((await reached('regex.test', '/foo')).backend, 'api');
  assert.equal((await reached('regex.test', '/FOO/bar')).backend, 'api', 'the Exact "/foo" of the other Ingress is "^/foo" now');
  assert.equal((await reached('regex.test', '/foobar')).backend, 'api');
  assert.equal((await reached('regex.test', '/other')).backend, 'web');
});

test('app-root: "/" answers 302 to <scheme>://<Host><app-root>, other paths are proxied (ingress-nginx `return 302 $scheme://$http_host<app-root>`)', async () => {
  const a = await send('approot.test', '/?q=1');
  assert.equal(a.status, 302);
  assert.equal(a.location, 'http://approot.test/app1');
  assert.equal((await reached('approot.test', '/app1')).url, '/app1');
});

test('from-to-www-redirect: www.<host> answers 308 to <host> with the request URI, its last "/" dropped (ingress-nginx redirect server)', async () => {
  const a = await send('www.foo.test', '/a/b?q=1');
  assert.equal(a.status, 308);
  assert.equal(a.location, 'http://foo.test/a/b?q=1');
  assert.equal((await send('www.foo.test', '/a/b/')).location, 'http://foo.test/a/b');
  assert.equal((await reached('foo.test', '/a')).url, '/a', 'the host itself is served');
});

test('trailing slash: an ImplementationSpecific "/docs/" answers "/docs" with nginx\'s 301 to "/docs/" (query kept); a Prefix "/api" answers "/api" itself (ingress-nginx adds `= /api`); a Prefix "/guide/" serves "/guide" (Ingress spec)', async () => {
  assert.equal((await reached('slash.test', '/guide')).backend, 'api');
  assert.equal((await reached('slash.test', '/guide/x')).backend, 'api');
  assert.equal((await reached('slash.test', '/guidex')).backend, 'web');
  const a = await send('slash.test', '/docs?x=1');
  assert.equal(a.status, 301);
  assert.equal(a.location, '/docs/?x=1', 'relative: the client resolves it against the URL it asked for, so no port can be wrong');
  assert.equal((await reached('slash.test', '/docs/')).backend, 'api');
  assert.equal((await reached('slash.test', '/docsx')).backend, 'web', '"/docs/" is no prefix of "/docsx"');
  assert.equal((await reached('slash.test', '/api')).backend, 'api');
  assert.equal((await reached('slash.test', '/api/x')).backend, 'api');
  // use-port-in-redirects: absolute, with the published port unless it is the scheme's default (80 here: none).
  assert.equal((await send('slashport.test', '/docs?x=1')).location, 'http://slashport.test/docs/?x=1');
});

test('redirect to HTTPS drops the final "/" of the request URI, unless preserve-trailing-slash (ingress-nginx lua_ingress.rewrite)', async () => {
  const a = await send('ssl.test', '/p/');
  assert.equal(a.status, 308);
  assert.equal(a.location, 'https://ssl.test/p');
  assert.equal((await send('ssl.test', '/p/?q=1')).location, 'https://ssl.test/p/?q=1', 'only the last character of the request URI');
  assert.equal((await send('keep.test', '/p/')).location, 'https://keep.test/p/');
});

test('paths are matched on nginx\'s normalized URI: "/a/../admin", "/%61dmin", "//admin" and "/./admin" all match the "/admin" rule; the backend gets the normalized path', async () => {
  for (const p of ['/admin', '/a/../admin', '/%61dmin', '//admin', '/./admin/x', '/x/./../admin']) {
    assert.equal((await reached('norm.test', p)).backend, 'api', p);
  }
  assert.equal((await reached('norm.test', '/ADMIN')).backend, 'web', 'a Prefix path is case-sensitive without use-regex');
  assert.equal((await reached('norm.test', '/adminx')).backend, 'web', 'Prefix is element-wise');
});
