// ingress-nginx's directive-profile annotations inside a real nginx: the configuration is the pure translation of
// Ingresses carrying them, rendered, checked by nginx -t and loaded; the backend ("rewrite" kind of testnet-backend.test-helpers.ts,
// in this file's own network namespace, testnet.test-helpers.ts subnet 246) answers a redirect with a cookie and echoes what it
// received. What is observed: proxy-redirect-* rewriting Location, proxy-cookie-* rewriting Set-Cookie,
// proxy-http-version 1.0 and connection-proxy-header as the backend sees them, enable-access-log "false" keeping
// requests out of the access log, limit-rate slowing an answer down — each next to a host without the annotation,
// which is left as it was.
// Ports 32000-32019 belong to this file: nginx 32000-32002, the backend 32003.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import winston from 'winston';
import { translate } from '../../translate/translate.ts';
import { diffConfig, structureChecksum } from '../../translate/diff.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { DynamicClient } from './dynamic.ts';
import { NginxProcess } from './process.ts';
import { renderNginxConf, runtimePaths } from './render.ts';
import { TestNet } from './testnet.test-helpers.ts';
import { startLive, stopLive } from './live.test-helpers.ts';

const LISTEN = { httpPort: 32000, httpsPort: 32001, statusPort: 32002, address: '127.0.0.1' };
const BACKEND_PORT = 32003;
const net = new TestNet(246);
const dir = mkdtempSync(path.join(tmpdir(), 'portico-profann-'));
const dynamic = new DynamicClient();
const logger = winston.createLogger({ level: 'error', transports: [new winston.transports.Console({ silent: true })] });
const nginx = new NginxProcess({ binary: '/usr/sbin/nginx', runtime: runtimePaths(path.join(dir, 'rt')), shutdownTimeoutMs: 2_000 }, dynamic, logger);

const A = 'nginx.ingress.kubernetes.io/';
const HOSTS: Record<string, Record<string, string>> = {
  'plain.example.com': {},
  'rw.example.com': { [`${A}proxy-redirect-from`]: 'http://internal.local/', [`${A}proxy-redirect-to`]: 'https://rw.example.com/app/', [`${A}proxy-cookie-domain`]: 'internal.local rw.example.com', [`${A}proxy-cookie-path`]: '/ /app' },
  'v10.example.com': { [`${A}proxy-http-version`]: '1.0', [`${A}connection-proxy-header`]: 'keep-alive' },
  'quiet.example.com': { [`${A}enable-access-log`]: 'false' },
  'slow.example.com': { [`${A}limit-rate`]: '1', [`${A}limit-rate-after`]: '1' },
};

async function load(): Promise<void> {
  const m = modelOf({
    services: [svc('app', [{ name: 'http', port: 80, targetPort: BACKEND_PORT }])],
    slices: [slice('app-1', 'app', [{ name: 'http', port: BACKEND_PORT }], [{ ip: net.ip }])],
    ingresses: Object.entries(HOSTS).map(([h, annotations], i) => ing(`i${i}`, { rules: [rule(h, [{ path: '/', backend: svcRef('app', 80) }])] }, { annotations })),
  });
  const cfg = translate(m.snapshot(), { ...OPTS, listen: LISTEN }).config;
  assert.equal(cfg.structure.profiles.length, 4, 'one profile per distinct combination; the plain host needs none');
  const checksum = structureChecksum(cfg.structure);
  const v = await nginx.writeValidated(renderNginxConf(cfg.structure, nginx.runtime, checksum));
  assert.ok(v.ok, v.output);
  nginx.start();
  assert.ok(await nginx.waitLive(checksum));
  await dynamic.push(diffConfig(null, cfg).delta);
}

function get(host: string, p: string, extra: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: LISTEN.httpPort, path: p, headers: { host, ...extra }, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

before(async () => {
  net.up();
  await net.start('app', BACKEND_PORT, 'rewrite');
  nginx.prepare();
  await load();
});
after(() => stopLive(nginx, dynamic, net));

test('proxy-redirect-from/-to rewrite Location; proxy-cookie-domain/-path rewrite Set-Cookie; other hosts untouched', async () => {
  const rw = await get('rw.example.com', '/r');
  assert.equal(rw.status, 302, rw.body);
  assert.equal(rw.headers.location, 'https://rw.example.com/app/next');
  assert.deepEqual(rw.headers['set-cookie'], ['sid=1; Domain=rw.example.com; Path=/app']);
  const plain = await get('plain.example.com', '/r');
  assert.equal(plain.status, 302);
  assert.equal(plain.headers.location, 'http://internal.local/next');
  assert.deepEqual(plain.headers['set-cookie'], ['sid=1; Domain=internal.local; Path=/']);
});

test('proxy-http-version 1.0 and connection-proxy-header are what the backend receives', async () => {
  const v10 = JSON.parse((await get('v10.example.com', '/v')).body) as { httpVersion: string; headers: Record<string, string> };
  assert.equal(v10.httpVersion, '1.0');
  assert.equal(v10.headers.connection, 'keep-alive');
  const plain = JSON.parse((await get('plain.example.com', '/v')).body) as { httpVersion: string; headers: Record<string, string> };
  assert.equal(plain.httpVersion, '1.1');
  assert.equal(plain.headers.connection, undefined, 'the default sends no Connection header (upstream keep-alive)');
});

test('enable-access-log "false": that Ingress\'s requests are not logged, the others are', async () => {
  assert.equal((await get('quiet.example.com', '/quiet-marker-7f3a')).status, 302);
  assert.equal((await get('plain.example.com', '/logged-marker-7f3a')).status, 302);
  let log = '';
  for (let i = 0; i < 40 && !log.includes('/logged-marker-7f3a'); i++) {
    await sleep(250); // the file log is buffered and flushed every second
    try {
      log = readFileSync(nginx.runtime.accessLog, 'utf8');
    } catch {
      log = '';
    }
  }
  assert.ok(log.includes('/logged-marker-7f3a'), 'the plain host is logged');
  assert.ok(!log.includes('/quiet-marker-7f3a'), 'the quiet host is not');
});

test('limit-rate + limit-rate-after: after the first KB the answer trickles at 1 KB/s (proxy buffering turned on for it: nginx does not limit unbuffered answers)', async () => {
  const pad = { 'x-pad': 'p'.repeat(5000) };
  let t = Date.now();
  const fast = await get('plain.example.com', '/v', pad);
  const fastMs = Date.now() - t;
  t = Date.now();
  const slow = await get('slow.example.com', '/v', pad);
  const slowMs = Date.now() - t;
  assert.ok(slow.body.length > 5000 && fast.body.length > 5000);
  assert.ok(slowMs >= 2_000 && fastMs < 1_000, `limited ${slowMs} ms, unlimited ${fastMs} ms`);
});
