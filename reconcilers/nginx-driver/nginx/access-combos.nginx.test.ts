// ingress-nginx's limit-connections, satisfy, session-cookie-partitioned and server-alias inside a real nginx: the
// configuration is the pure translation of Ingresses carrying them (basic-auth users from an auth-secret), rendered,
// checked by nginx -t and loaded; the backend ("auth" kind of testnet-backend.test-helpers.ts, in this file's own network
// namespace, testnet.test-helpers.ts subnet 242) holds requests under /slow for 3 s, which keeps them in progress.
// Ports 32400-32409 belong to this file: nginx 32400-32402, the backend 32403.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import winston from 'winston';
import { translate } from '../../translate/translate.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { normalizeIngress } from '../../model/normalize.ts';
import { DynamicClient } from './dynamic.ts';
import { NginxProcess } from './process.ts';
import { runtimePaths } from './render.ts';
import { TestNet } from './testnet.test-helpers.ts';
import { startLive, stopLive } from './live.test-helpers.ts';

const LISTEN = { httpPort: 32400, httpsPort: 32401, statusPort: 32402, address: '127.0.0.1' };
const BACKEND_PORT = 32403;
const net = new TestNet(242);
const dir = mkdtempSync(path.join(tmpdir(), 'portico-access-'));
const dynamic = new DynamicClient();
const logger = winston.createLogger({ level: 'error', transports: [new winston.transports.Console({ silent: true })] });
const nginx = new NginxProcess({ binary: '/usr/sbin/nginx', runtime: runtimePaths(path.join(dir, 'rt')), shutdownTimeoutMs: 2_000 }, dynamic, logger);

const A = 'nginx.ingress.kubernetes.io/';
const APR1 = '$apr1$Ab3dEf9h$uOfqhQrHMNaJeurM74PYM0'; // openssl passwd -apr1 -salt Ab3dEf9h pa55word
const basic = { [`${A}auth-type`]: 'basic', [`${A}auth-secret`]: 'users' };
const HOSTS: Record<string, Record<string, string>> = {
  'conn.example.com': { [`${A}limit-connections`]: '2' },
  // The test client connects from 127.0.0.1.
  'any-ip.example.com': { ...basic, [`${A}satisfy`]: 'any', [`${A}whitelist-source-range`]: '127.0.0.1/32' },
  'any-auth.example.com': { ...basic, [`${A}satisfy`]: 'any', [`${A}whitelist-source-range`]: '198.51.100.0/24' },
  'all.example.com': { ...basic, [`${A}whitelist-source-range`]: '198.51.100.0/24' },
  'sticky.example.com': { [`${A}affinity`]: 'cookie', [`${A}session-cookie-partitioned`]: 'true', [`${A}session-cookie-samesite`]: 'None' },
  'main.example.com': { [`${A}server-alias`]: 'alias.example.com' },
};

before(async () => {
  net.up();
  await net.start('app', BACKEND_PORT, 'auth');
  const m = modelOf({
    // Balancing is per Service port: the sticky host has a Service of its own (same backend).
    services: [svc('app', [{ name: 'http', port: 80, targetPort: BACKEND_PORT }]), svc('sticky', [{ name: 'http', port: 80, targetPort: BACKEND_PORT }])],
    slices: [slice('app-1', 'app', [{ name: 'http', port: BACKEND_PORT }], [{ ip: net.ip }]), slice('sticky-1', 'sticky', [{ name: 'http', port: BACKEND_PORT }], [{ ip: net.ip }])],
  });
  const users = { auth: Buffer.from(`ann:${APR1}\n`).toString('base64') };
  for (const [i, [h, annotations]] of Object.entries(HOSTS).entries()) {
    const n = normalizeIngress(ing(`i${i}`, { rules: [rule(h, [{ path: '/', backend: svcRef(h.startsWith('sticky') ? 'sticky' : 'app', 80) }])] }, { annotations }), (k) => (k === 'default/users' ? { data: users } : undefined));
    assert.ok(n.ok);
    m.setIngress(n.ingress);
  }
  const r = translate(m.snapshot(), { ...OPTS, listen: LISTEN });
  assert.deepEqual(r.events.filter((e) => e.type === 'Warning'), []);
  await startLive(nginx, dynamic, r.config);
});
after(() => stopLive(nginx, dynamic, net));

function get(host: string, p: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: LISTEN.httpPort, path: p, headers: { host, ...headers }, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
const ANN = { authorization: `Basic ${Buffer.from('ann:pa55word').toString('base64')}` };
const WRONG = { authorization: `Basic ${Buffer.from('ann:nope').toString('base64')}` };
// The auth backend answers 401 without a Bearer token: what reached it is told by its own challenge.
const proxied = (r: { status: number; headers: http.IncomingHttpHeaders }) => r.status === 401 && /Bearer/.test(String(r.headers['www-authenticate']));

test('limit-connections 2: a third request in progress from the same client gets 503; a finished one frees its slot', async () => {
  const held = [get('conn.example.com', '/slow/1'), get('conn.example.com', '/slow/2')];
  // Wait until both are in progress at the backend (its control path lists what it received).
  const deadline = Date.now() + 5_000;
  while ((await net.requests('app')).filter((q) => q.url.startsWith('/slow/')).length < 2) {
    assert.ok(Date.now() < deadline, 'both slow requests reach the backend');
    await new Promise((r) => setImmediate(r));
  }
  const third = await get('conn.example.com', '/fast');
  assert.equal(third.status, 503, 'over the limit while two are in progress');
  const other = await get('any-ip.example.com', '/');
  assert.ok(proxied(other), 'another Ingress is not limited by it');
  for (const r of await Promise.all(held)) assert.equal(r.status, 200, "the held requests are answered by the backend (200 after 3 s)");
  const after = await Promise.all([get('conn.example.com', '/a'), get('conn.example.com', '/b')]);
  assert.ok(after.every(proxied), 'the slots were given back once the requests ended');
});

test('satisfy any: the allowlisted client needs no password; elsewhere the password alone is enough; both failing → 401', async () => {
  assert.ok(proxied(await get('any-ip.example.com', '/')), 'allowlisted address, no credentials');
  assert.ok(proxied(await get('any-auth.example.com', '/', ANN)), 'not allowlisted, good password');
  const refused = await get('any-auth.example.com', '/', WRONG);
  assert.equal(refused.status, 401);
  assert.match(String(refused.headers['www-authenticate']), /^Basic realm=/);
  const all = await get('all.example.com', '/', ANN);
  assert.equal(all.status, 403, 'satisfy all (default): the password does not make up for the allowlist');
});

test('session-cookie-partitioned: the affinity cookie is Partitioned and Secure', async () => {
  const r = await get('sticky.example.com', '/');
  const cookie = String(r.headers['set-cookie']);
  assert.match(cookie, /^INGRESSCOOKIE=[0-9a-f]+; Path=\/; HttpOnly; Secure; SameSite=None; Partitioned$/);
});

test('server-alias: the alias is served like its host; an unknown host is not', async () => {
  assert.ok(proxied(await get('alias.example.com', '/x')));
  assert.equal((await get('nobody.example.com', '/x')).status, 404);
});
