// Passive health checking inside a real nginx (Debian's, as in production): two HTTP backends, one answering 503
// to everything, behind a backend with passiveHealth {failures: 3, statuses: [503], ejectSeconds: 30}. Once the
// failing endpoint is ejected, clients only get 200s and it receives nothing; removing passiveHealth (a data push,
// no reload) sends it traffic again. A second backend has an endpoint refusing connections: nginx retries those
// requests on the healthy endpoint and the balancer counts the refusals until it is ejected too.
// The Lua side never proxies to loopback (peers.lua), so the backends run in this file's own network namespace
// (testnet.test-helpers.ts, subnet 198.19.254.0/30) and listen on its address. The backend has passive health checking, so the
// router sends its requests through the plugin location, whose log handler reports each attempt to health.lua —
// decided per request from the backend data, never by a reload.
// Ports 31300-31305 belong to this file: nginx 31300-31302, backends 31303 (healthy) and 31304 (failing), and
// 31305 where nothing listens.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import winston from 'winston';
import { translate } from '../../translate/translate.ts';
import { diffConfig } from '../../translate/diff.ts';
import { OPTS, modelOf } from '../../translate/fixtures.test-helpers.ts';
import { DynamicClient } from './dynamic.ts';
import { NginxProcess } from './process.ts';
import { runtimePaths } from './render.ts';
import type { Backend, GatewayConfig } from '../../config/types.ts';
import { until } from '../../../e2e/harness/http.ts';
import { TestNet } from './testnet.test-helpers.ts';
import { startLive, stopLive } from './live.test-helpers.ts';

const LISTEN = { httpPort: 31300, httpsPort: 31301, statusPort: 31302, address: '127.0.0.1' };
const GOOD_PORT = 31303;
const BAD_PORT = 31304;
const CLOSED_PORT = 31305;
const HOST = 'health.example.com';
const ID = 'default_flaky_80';
const HOST2 = 'refused.example.com';
const ID2 = 'default_refused_80';
const PH = { failures: 3, statuses: [503], ejectSeconds: 30 };

// This file's network namespace (subnet 254 of testnet.test-helpers.ts; plugins.nginx.test.ts uses 253).
const net = new TestNet(254);
const IP = net.ip;

// nginx's error log (its stderr) arrives through the logger: kept to see when an endpoint was ejected.
const nginxLines: string[] = [];
const logger = winston.createLogger({
  level: 'info',
  format: winston.format.json(),
  transports: [
    new winston.transports.Stream({
      stream: new Writable({
        write(chunk: Buffer, _enc, cb) {
          nginxLines.push(chunk.toString());
          cb();
        },
      }),
    }),
  ],
});

const dir = mkdtempSync(path.join(tmpdir(), 'portico-health-'));
const dynamic = new DynamicClient();
const nginx = new NginxProcess({ binary: '/usr/sbin/nginx', runtime: runtimePaths(dir), shutdownTimeoutMs: 2_000 }, dynamic, logger);

/** Requests the failing endpoint has received so far. */
const badHits = () => net.count('bad');

function backend(id: string, failingPort: number, passiveHealth: Backend['passiveHealth']): Backend {
  return {
    id,
    endpoints: [
      { address: IP, port: GOOD_PORT, weight: 1 },
      { address: IP, port: failingPort, weight: 1 },
    ],
    // Round robin: the failing endpoint gets every other request, so its ejection does not depend on chance (with
    // ewma two fast endpoints tie, and under load the failing one was drawn three times only after hundreds).
    balance: 'round_robin',
    ...(passiveHealth ? { passiveHealth } : {}),
  };
}

const route = (id: string) => ({ tls: false, rules: [{ path: '/', match: 'prefix' as const, route: { source: `Ingress/default/${id}`, backendId: id, sslRedirect: false } }] });

function configWith(flaky: Backend, refused: Backend): GatewayConfig {
  const base = translate(modelOf({}).snapshot(), { ...OPTS, listen: LISTEN }).config;
  return {
    structure: base.structure,
    data: { ...base.data, routes: { [HOST]: route(ID), [HOST2]: route(ID2) }, backends: { [ID]: flaky, [ID2]: refused } },
  };
}

let running: GatewayConfig;

before(async () => {
  net.up(); // throws (the tests fail) when the namespace cannot be made
  await net.start('good', GOOD_PORT, 'status', { status: 200 });
  await net.start('bad', BAD_PORT, 'status', { status: 503 });
  running = configWith(backend(ID, BAD_PORT, PH), backend(ID2, CLOSED_PORT, PH));
  await startLive(nginx, dynamic, running);
});
after(() => stopLive(nginx, dynamic, net));

function get(host = HOST, p = '/'): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: LISTEN.httpPort, path: p, headers: { host }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

const ejectedLine = (id = ID, port = BAD_PORT) => nginxLines.find((l) => l.includes(`backend ${id}: endpoint ${IP}:${port} ejected for 30 s after 3 failure`));

test('an endpoint answering 503 is ejected after 3 failures: then every request gets 200 and it gets none', async () => {
  const pid = nginx.pid;
  // Traffic until the failing endpoint has failed 3 times in a row and nginx logged its ejection (the log phase
  // runs after the client has its answer, so the log line, not the third 503, says it happened).
  let sent = 0;
  await until('the failing endpoint to be ejected', async () => {
    if (ejectedLine()) return true;
    sent++;
    await get();
    return false;
  }, 15_000, 0);
  const badBefore = await badHits();
  assert.ok(badBefore >= 3, `the failing endpoint got ${badBefore} requests before its ejection`);
  assert.ok(sent < 40, `ejected after ${sent} requests`);

  const N = 40;
  const statuses: number[] = [];
  for (let i = 0; i < N; i++) statuses.push(await get());
  assert.deepEqual(statuses, new Array<number>(N).fill(200), 'no client error while the endpoint is ejected');
  assert.equal(await badHits(), badBefore, 'the ejected endpoint receives no requests');
  assert.equal(nginx.pid, pid, 'no reload');
});

test('removing passiveHealth is a data push that stops the ejection at once', async () => {
  const pid = nginx.pid;
  const next = configWith(backend(ID, BAD_PORT, undefined), running.data.backends[ID2] as Backend);
  const d = diffConfig(running, next);
  assert.equal(d.reload, false, 'passive health settings are data');
  assert.deepEqual(Object.keys(d.delta.backends.upsert), [ID]);
  const badBefore = await badHits();
  await dynamic.push(d.delta);
  running = next;
  await until('the formerly ejected endpoint to get traffic again', async () => (await get()) === 503, 10_000, 0);
  assert.ok((await badHits()) > badBefore);
  assert.equal(nginx.pid, pid, 'no reload');
});

test('connection errors seen by the balancer on retries eject an endpoint: clients never noticed, then it is not tried', async () => {
  let n = 0;
  await until('the refusing endpoint to be ejected', async () => {
    if (ejectedLine(ID2, CLOSED_PORT)) return true;
    assert.equal(await get(HOST2, `/?r${++n}`), 200, 'a refused connection is retried on the healthy endpoint');
    return false;
  }, 15_000, 0);
  // Tagged requests after the ejection: the access log (flushed once a second) lists each one's upstream attempts.
  const tags = Array.from({ length: 20 }, (_, i) => `after${i}`);
  for (const t of tags) assert.equal(await get(HOST2, `/?${t}`), 200);
  const lines = await until('access log lines', () => {
    const log = readFileSync(nginx.runtime.accessLog, 'utf8').split('\n');
    const found = tags.map((t) => log.find((l) => l.includes(`?${t} `)));
    return found.every((l) => l !== undefined) ? (found as string[]) : undefined;
  }, 5_000);
  for (const l of lines) assert.doesNotMatch(l, new RegExp(`:${CLOSED_PORT}\\b`), `the ejected endpoint was tried: ${l}`);
});
