// The Lua router inside a real nginx (Debian's, as in production): the rendered configuration, routes pushed over
// the configuration socket, and requests answered the way the routes say — without a reload when routes change.
// No backend here has endpoints (tests never send traffic beyond loopback), so a proxied route ends at the
// internal 503 socket; which route answered is read from the access log's [$portico_backend] (a format of this file's).
// Ports 31090-31092 (loopback) belong to this file.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { nullLogger } from '../../../operator/log.ts';
import { translate } from '../../translate/translate.ts';
import { diffConfig } from '../../translate/diff.ts';
import { OPTS, ing, modelOf, rule, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { DynamicClient } from './dynamic.ts';
import { NginxProcess } from './process.ts';
import { runtimePaths } from './render.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { until } from '../../../e2e/harness/http.ts';
import { startLive, stopLive } from './live.test-helpers.ts';
import { defaultGlobalConfig } from '../../model/global-config.ts';

const LISTEN = { httpPort: 31090, httpsPort: 31091, statusPort: 31092, address: '127.0.0.1' };
const dir = mkdtempSync(path.join(tmpdir(), 'portico-router-'));
const dynamic = new DynamicClient();
const nginx = new NginxProcess({ binary: '/usr/sbin/nginx', runtime: runtimePaths(dir), shutdownTimeoutMs: 2_000 }, dynamic, nullLogger());

const objects = {
  services: [svc('web', [{ port: 80 }]), svc('api', [{ port: 80 }]), svc('upload', [{ port: 80 }])],
  ingresses: [
    ing('main', {
      rules: [
        rule('a.example.com', [
          { path: '/', backend: svcRef('web', 80) },
          { path: '/api', backend: svcRef('api', 80) },
          { path: '/exact/', pathType: 'Exact', backend: svcRef('api', 80) },
        ]),
      ],
    }),
    ing('wild', { rules: [rule('*.w.example.com', [{ path: '/', backend: svcRef('api', 80) }])] }),
    ing('regex', { rules: [rule('r.example.com', [{ path: '/v[0-9]+/items', pathType: 'ImplementationSpecific', backend: svcRef('api', 80) }, { path: '/', backend: svcRef('web', 80) }])] }, { annotations: { 'nginx.ingress.kubernetes.io/use-regex': 'true' } }),
    ing('secure', { rules: [rule('s.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { 'nginx.ingress.kubernetes.io/force-ssl-redirect': 'true' } }),
    ing('closed', { rules: [rule('c.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { 'nginx.ingress.kubernetes.io/auth-tls-verify-client': 'on' } }),
    ing('small', { rules: [rule('u.example.com', [{ path: '/', backend: svcRef('upload', 80) }])] }, { annotations: { 'nginx.ingress.kubernetes.io/proxy-body-size': '1k' } }),
  ],
};

let running: GatewayConfig;

// The access log names the backend that answered in Portico's own id ($portico_backend): the tests read it back.
const LOG_FORMAT = { ...defaultGlobalConfig(), logFormatUpstream: '$request_uri [$portico_backend]' };
function snapshotOf(objs: Parameters<typeof modelOf>[0]) {
  const m = modelOf(objs);
  m.setGlobalConfig(LOG_FORMAT);
  return m.snapshot();
}

before(async () => {
  running = translate(snapshotOf(objects), { ...OPTS, listen: LISTEN }).config;
  await startLive(nginx, dynamic, running);
});
after(async () => {
  await nginx.stop();
  await dynamic.close();
});

function send(host: string, p: string, o: { method?: string; body?: string; chunked?: boolean } = {}): Promise<{ status: number; location?: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host };
    if (o.chunked) headers['transfer-encoding'] = 'chunked';
    const req = http.request({ host: '127.0.0.1', port: LISTEN.httpPort, path: p, method: o.method ?? 'GET', headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location }));
    });
    req.on('error', reject);
    if (o.body && o.chunked) {
      req.write(o.body.slice(0, 10));
      req.end(o.body.slice(10));
    } else req.end(o.body);
  });
}

/**
 * Sends each request tagged with a unique query string and returns, for each, the backend the access log names
 * (the log is flushed once a second, so requests are sent first and the log read once).
 */
let n = 0;
async function backendsOf(reqs: [host: string, path: string][]): Promise<string[]> {
  const tags: string[] = [];
  for (const [host, p] of reqs) {
    const tag = `t${++n}`;
    tags.push(tag);
    const res = await send(host, `${p}${p.includes('?') ? '&' : '?'}${tag}`);
    assert.equal(res.status, 503, `${host}${p}: a proxied route ends at the 503 socket (no endpoints)`);
  }
  const lines = await until('access log lines', () => {
    const log = readFileSync(nginx.runtime.accessLog, 'utf8').split('\n');
    const found = tags.map((t) => log.find((l) => l.includes(`?${t} `) || l.includes(`&${t} `)));
    return found.every((l) => l !== undefined) ? (found as string[]) : undefined;
  }, 5_000);
  return lines.map((l) => / \[([^\]]*)\]$/.exec(l)?.[1] ?? ''); // $request_uri [$portico_backend]
}

test('hosts and paths are matched as nginx locations would: exact, element-wise prefix, regex, one-label wildcard', async () => {
  const cases: [host: string, path: string, backend: string, why: string][] = [
    ['a.example.com', '/', 'default_web_80', 'root prefix'],
    ['a.example.com', '/api/x', 'default_api_80', 'longest prefix'],
    ['a.example.com', '/apix', 'default_web_80', 'prefix is element-wise'],
    ['a.example.com', '/exact/', 'default_api_80', 'exact'],
    ['a.example.com', '/exact', 'default_web_80', 'an Exact "/exact/" does not answer "/exact" (no auto-redirect)'],
    ['A.Example.COM', '/api', 'default_api_80', 'host names are case-insensitive'],
    ['x.w.example.com', '/', 'default_api_80', 'one-label wildcard'],
    ['r.example.com', '/V2/ITEMS', 'default_api_80', 'use-regex: case-insensitive'],
    ['r.example.com', '/other', 'default_web_80', 'prefix when no regex matches'],
  ];
  const got = await backendsOf(cases.map(([h, p]) => [h, p]));
  cases.forEach(([h, p, want, why], i) => assert.equal(got[i], want, `${h}${p}: ${why}`));
  assert.equal((await send('y.x.w.example.com', '/')).status, 404, 'a wildcard matches one label only');
  assert.equal((await send('unknown.example.com', '/')).status, 404);
});

test('answers: redirect to HTTPS, fail closed, body-size profile (Content-Length and chunked)', async () => {
  const r = await send('s.example.com', '/p?q=1');
  assert.equal(r.status, 308);
  assert.equal(r.location, 'https://s.example.com/p?q=1');
  assert.equal((await send('c.example.com', '/')).status, 503, 'unsupported access control fails closed');
  const big = 'x'.repeat(2000);
  assert.equal((await send('u.example.com', '/', { method: 'POST', body: big })).status, 413, 'Content-Length over the route limit');
  assert.equal((await send('u.example.com', '/', { method: 'POST', body: big, chunked: true })).status, 413, 'chunked body over the route limit');
  assert.equal((await send('u.example.com', '/', { method: 'POST', body: 'x'.repeat(500) })).status, 503, 'within the limit: proxied');
  assert.equal((await send('a.example.com', '/', { method: 'POST', body: big })).status, 503, 'other routes keep the global 1m');
});

test('route changes are pushed without a reload and answered at once', async () => {
  const pid = nginx.pid;
  const next = translate(
    snapshotOf({ ...objects, ingresses: [...objects.ingresses, ing('late', { rules: [rule('late.example.com', [{ path: '/', backend: svcRef('api', 80) }])] })] }),
    { ...OPTS, listen: LISTEN },
  ).config;
  const d = diffConfig(running, next);
  assert.equal(d.reload, false);
  assert.equal((await send('late.example.com', '/')).status, 404);
  await dynamic.push(d.delta);
  assert.deepEqual(await backendsOf([['late.example.com', '/']]), ['default_api_80']);
  const back = diffConfig(next, running);
  await dynamic.push(back.delta);
  assert.equal((await send('late.example.com', '/')).status, 404, 'removed again');
  assert.equal(nginx.pid, pid, 'the same nginx master, never reloaded');
});
