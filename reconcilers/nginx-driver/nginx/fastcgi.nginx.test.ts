// backend-protocol FCGI against a real FastCGI server: Debian's php8.2-fpm, started here with its own configuration
// in a temporary directory, listening on TCP inside this file's own network namespace (testnet.test-helpers.ts,
// subnet 198.19.227.0/30), behind a real nginx (Debian's, as in production) whose configuration is the pure
// translation of Ingresses with ingress-nginx's FastCGI annotations (fastcgi-index, fastcgi-params-configmap with a
// ConfigMap's params), rendered, checked by nginx -t and loaded. The PHP script answers with what it was given
// ($_SERVER, the query, the body) as JSON, and sets the status and a header it is asked for.
// Ports 31920-31939 belong to this file: nginx 31920-31922, php-fpm 31923.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { until } from '../../../e2e/harness/http.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { normalizeIngress } from '../../model/normalize.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { translate } from '../../translate/translate.ts';
import { capturingLogger, liveNginx, sendTo, startLive, stopLive, type Answer } from './live.test-helpers.ts';
import { TestNet } from './testnet.test-helpers.ts';

const LISTEN = { httpPort: 31920, httpsPort: 31921, statusPort: 31922, address: '127.0.0.1' };
const FPM_PORT = 31923;
const PHP_FPM = '/usr/sbin/php-fpm8.2';

const testNet = new TestNet(227);
const { logger, lines: nginxLines } = capturingLogger();
const { dir, dynamic, nginx } = liveNginx('portico-fastcgi-', logger);
const www = path.join(dir, 'www');

const A = 'nginx.ingress.kubernetes.io/';
/** The Ingresses' ConfigMaps ("namespace/name" → data), as the controller would read them. */
const CONFIG_MAPS: Record<string, Record<string, string>> = {
  'shop/php-params': { SCRIPT_FILENAME: `${www}$fastcgi_script_name`, APP_ENV: 'production', APP_TENANT: 'shop-$http_x_tenant' },
  'shop/no-index': { SCRIPT_FILENAME: `${www}$fastcgi_script_name` },
};

/** Echoes what PHP was given; ?status=N answers N, and X-App is always set. */
const SCRIPT = `<?php
$keys = ['SCRIPT_FILENAME', 'SCRIPT_NAME', 'REQUEST_URI', 'DOCUMENT_URI', 'QUERY_STRING', 'REQUEST_METHOD', 'CONTENT_TYPE', 'CONTENT_LENGTH',
  'SERVER_PROTOCOL', 'REQUEST_SCHEME', 'GATEWAY_INTERFACE', 'SERVER_NAME', 'HTTP_HOST', 'REMOTE_ADDR', 'APP_ENV', 'APP_TENANT',
  'HTTP_PROXY', 'HTTP_X_FORWARDED_FOR', 'HTTP_X_REQUEST_ID', 'HTTP_X_CUSTOM', 'REDIRECT_STATUS'];
$out = [];
foreach ($keys as $k) { $out[$k] = $_SERVER[$k] ?? null; }
if (isset($_GET['status'])) { http_response_code((int) $_GET['status']); }
header('X-App: php-fpm');
header('Content-Type: application/json');
echo json_encode(['server' => $out, 'get' => $_GET, 'body' => file_get_contents('php://input')]);
`;

function desired(): GatewayConfig {
  const m = modelOf({
    services: [svc('php', [{ name: 'fcgi', port: 9000, targetPort: FPM_PORT }], 'shop')],
    slices: [slice('php-1', 'php', [{ name: 'fcgi', port: FPM_PORT }], [{ ip: testNet.ip }], 'shop')],
  });
  const add = (name: string, host: string, annotations: Record<string, string>) => {
    const r = normalizeIngress(ing(name, { rules: [rule(host, [{ path: '/', backend: svcRef('php', 9000) }])] }, { ns: 'shop', annotations }), () => undefined, (k) => (CONFIG_MAPS[k] ? { data: CONFIG_MAPS[k] } : undefined));
    assert.ok(r.ok);
    m.setIngress(r.ingress);
  };
  add('app', 'php.example.com', { [`${A}backend-protocol`]: 'FCGI', [`${A}fastcgi-index`]: 'index.php', [`${A}fastcgi-params-configmap`]: 'php-params' });
  add('no-index', 'noindex.example.com', { [`${A}backend-protocol`]: 'FCGI', [`${A}fastcgi-params-configmap`]: 'no-index' });
  // Another namespace's ConfigMap: never read, the paths fail closed.
  add('elsewhere', 'elsewhere.example.com', { [`${A}backend-protocol`]: 'FCGI', [`${A}fastcgi-index`]: 'index.php', [`${A}fastcgi-params-configmap`]: 'other/php-params' });
  const r = translate(m.snapshot(), { ...OPTS, listen: LISTEN });
  assert.deepEqual(r.events.filter((e) => e.type === 'Warning').map((e) => `${e.ref} ${e.reason}`), ['Ingress/shop/elsewhere FastCGIUnavailable']);
  return r.config;
}

let fpm: ChildProcess | undefined;
let fpmOut = '';
const fpmLog = path.join(dir, 'php-fpm.log');
/** php-fpm's own log and what it printed, for failure messages. */
const fpmLines = (): string => `${fpmOut}${existsSync(fpmLog) ? readFileSync(fpmLog, 'utf8') : ''}`.slice(-1_000);

/** Whether php-fpm accepts TCP connections on the namespace's address. */
function fpmListening(): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: testNet.ip, port: FPM_PORT });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

before(async () => {
  testNet.up();
  mkdirSync(www);
  writeFileSync(path.join(www, 'index.php'), SCRIPT);
  writeFileSync(path.join(www, 'other.php'), SCRIPT);
  const conf = path.join(dir, 'php-fpm.conf');
  writeFileSync(
    conf,
    [
      '[global]',
      `pid = ${path.join(dir, 'php-fpm.pid')}`,
      `error_log = ${fpmLog}`,
      'daemonize = no',
      '[app]',
      `listen = ${testNet.ip}:${FPM_PORT}`,
      `listen.allowed_clients = ${testNet.hostIp}`,
      'pm = static',
      'pm.max_children = 2',
      'catch_workers_output = yes',
      'clear_env = yes',
      'security.limit_extensions = .php',
      '',
    ].join('\n'),
  );
  // -R: run as root (the test's user); -n: no php.ini; -F: in the foreground, a child of this test.
  fpm = spawn('ip', ['netns', 'exec', testNet.netns, PHP_FPM, '-F', '-R', '-n', '-y', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
  for (const s of [fpm.stdout, fpm.stderr]) s?.on('data', (c: Buffer) => (fpmOut = (fpmOut + c.toString()).slice(-8_000)));
  const exited = new Promise<never>((_, reject) => fpm?.once('exit', (code, sig) => reject(new Error(`php-fpm exited (${sig ?? code}) before it listened: ${fpmLines()}`))));
  exited.catch(() => {});
  await Promise.race([exited, until(`php-fpm on ${testNet.ip}:${FPM_PORT}`, fpmListening, 10_000, 25)]);
  await startLive(nginx, dynamic, desired());
});

after(async () => {
  // SIGTERM: php-fpm's master stops and reaps its workers; SIGKILL if it has not after 5 s.
  if (fpm && fpm.exitCode === null && fpm.signalCode === null) {
    const gone = new Promise((r) => fpm?.once('exit', r));
    fpm.kill('SIGTERM');
    const force = setTimeout(() => fpm?.kill('SIGKILL'), 5_000);
    await gone;
    clearTimeout(force);
  }
  await stopLive(nginx, dynamic, testNet);
});

type Echo = { server: Record<string, string | null>; get: Record<string, string>; body: string };
const echo = (a: Answer): Echo => {
  assert.equal(a.headers['content-type'], 'application/json', `${a.status} ${a.body.slice(0, 300)} | php-fpm: ${fpmLines()} | nginx: ${nginxLines.slice(-5).join('')}`);
  return JSON.parse(a.body) as Echo;
};

test('GET /: fastcgi-index names the script ($fastcgi_script_name), SCRIPT_FILENAME and the other params come from the ConfigMap, the standard ones from nginx', async () => {
  const a = await sendTo(LISTEN.httpPort, 'php.example.com', '/?page=2&q=a%20b', { headers: { 'x-tenant': 'blue' } });
  assert.equal(a.status, 200);
  assert.equal(a.headers['x-app'], 'php-fpm');
  const e = echo(a);
  assert.equal(e.server.SCRIPT_FILENAME, path.join(www, 'index.php'));
  assert.equal(e.server.SCRIPT_NAME, '/index.php');
  assert.equal(e.server.REQUEST_URI, '/?page=2&q=a%20b');
  assert.equal(e.server.QUERY_STRING, 'page=2&q=a%20b');
  assert.deepEqual(e.get, { page: '2', q: 'a b' });
  assert.equal(e.server.REQUEST_METHOD, 'GET');
  assert.equal(e.server.APP_ENV, 'production', 'a param of the ConfigMap');
  assert.equal(e.server.APP_TENANT, 'shop-blue', 'a ConfigMap param with an allowed variable');
  assert.equal(e.server.GATEWAY_INTERFACE, 'CGI/1.1');
  assert.equal(e.server.SERVER_NAME, 'php.example.com');
  assert.equal(e.server.HTTP_HOST, 'php.example.com');
  assert.equal(e.server.REMOTE_ADDR, '127.0.0.1');
  assert.equal(e.server.REDIRECT_STATUS, '200');
  assert.match(e.server.HTTP_X_REQUEST_ID ?? '', /^[0-9a-f]{32}$/);
});

test('POST to a script with a query: the body, its type and length, and the query arrive; the script\'s status and headers come back', async () => {
  const body = JSON.stringify({ order: 42, items: ['a', 'b'] });
  const a = await sendTo(LISTEN.httpPort, 'php.example.com', '/other.php?status=201&x=1', { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-custom': 'kept' } });
  assert.equal(a.status, 201);
  assert.equal(a.headers['x-app'], 'php-fpm');
  const e = echo(a);
  assert.equal(e.server.SCRIPT_FILENAME, path.join(www, 'other.php'));
  assert.equal(e.server.REQUEST_METHOD, 'POST');
  assert.equal(e.body, body);
  assert.equal(e.server.CONTENT_TYPE, 'application/json');
  assert.equal(e.server.CONTENT_LENGTH, String(Buffer.byteLength(body)));
  assert.deepEqual(e.get, { status: '201', x: '1' });
  assert.equal(e.server.HTTP_X_CUSTOM, 'kept', 'the client\'s other headers pass as HTTP_*');
});

test('the client\'s Proxy header (httpoxy) and its own X-Forwarded-For never reach the application', async () => {
  const e = echo(await sendTo(LISTEN.httpPort, 'php.example.com', '/index.php', { headers: { proxy: 'http://evil.example:3128', 'x-forwarded-for': '203.0.113.9' } }));
  assert.ok(e.server.HTTP_PROXY === '' || e.server.HTTP_PROXY === null, `HTTP_PROXY ${e.server.HTTP_PROXY}`);
  assert.equal(e.server.HTTP_X_FORWARDED_FOR, '127.0.0.1');
});

test('without fastcgi-index a URI ending in "/" names no script (SCRIPT_FILENAME is the directory): php-fpm answers 404; a script by name is served', async () => {
  const dirUri = await sendTo(LISTEN.httpPort, 'noindex.example.com', '/');
  assert.equal(dirUri.status, 404, `${dirUri.body} | ${fpmLines()}`);
  assert.equal(dirUri.body.trim(), 'File not found.');
  const byName = echo(await sendTo(LISTEN.httpPort, 'noindex.example.com', '/index.php'));
  assert.equal(byName.server.SCRIPT_FILENAME, path.join(www, 'index.php'));
});

test('a ConfigMap of another namespace is never read: the paths answer 503 and nothing reaches php-fpm', async () => {
  const a = await sendTo(LISTEN.httpPort, 'elsewhere.example.com', '/');
  assert.equal(a.status, 503);
  assert.equal(a.headers['x-app'], undefined);
});
