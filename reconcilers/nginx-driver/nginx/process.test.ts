// NginxProcess with a real nginx (Debian's, as in production): the configuration API is reachable only on its
// unix socket, and no process of an old nginx generation survives a stop, a master crash or a controller crash.
// Ports 31084-31086 (loopback) belong to this file.
import { after, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { nullLogger } from '../../../operator/log.ts';
import { translate } from '../../translate/translate.ts';
import { emptyDelta, structureChecksum } from '../../translate/diff.ts';
import { OPTS, ing, modelOf, rule, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { DynamicClient } from './dynamic.ts';
import { NginxProcess, nginxLevel } from './process.ts';
import { groupMembers, waitGroupGone } from './procgroup.ts';
import { renderNginxConf, runtimePaths } from './render.ts';
import type { Structure } from '../../config/types.ts';
import { until as waitFor } from '../../../e2e/harness/http.ts';

const LISTEN = { httpPort: 31084, httpsPort: 31085, statusPort: 31086, address: '127.0.0.1' };
const running: NginxProcess[] = [];
after(async () => {
  for (const n of running) await n.stop();
});

/** The shared polling helper, with this file's tighter step and deadline (nginx starts in well under a second). */
const until = <T>(what: string, fn: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 10_000): Promise<T> =>
  waitFor(what, fn, timeoutMs, 20);

function httpGet(port: number, p: string, method = 'GET'): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path: p, method, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.end(method === 'POST' ? '{"upsert":{"x":{"endpoints":[{"address":"10.0.0.1","port":80}]}}}' : undefined);
  });
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

async function started(t: TestContext): Promise<{ nginx: NginxProcess; dynamic: DynamicClient; checksum: string; dir: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-proc-'));
  const m = modelOf({ services: [svc('web', [{ port: 80 }])], ingresses: [ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] })] });
  const s = translate(m.snapshot(), { ...OPTS, listen: LISTEN }).config.structure;
  const dynamic = new DynamicClient();
  const nginx = new NginxProcess({ binary: '/usr/sbin/nginx', runtime: runtimePaths(dir), shutdownTimeoutMs: 2_000 }, dynamic, nullLogger());
  running.push(nginx);
  t.after(() => nginx.stop());
  nginx.prepare();
  const checksum = structureChecksum(s);
  const v = await nginx.writeValidated(renderNginxConf(s, nginx.runtime, checksum));
  assert.ok(v.ok, v.output);
  nginx.start();
  assert.ok(await nginx.waitLive(checksum), 'nginx answers on its unix socket');
  return { nginx, dynamic, checksum, dir };
}

test('the configuration API is a unix socket in a 0700 directory; over TCP there is only /healthz', async (t) => {
  const { nginx, dynamic } = await started(t);
  const rt = nginx.runtime;
  assert.equal(dynamic.socketPath, rt.apiSocket);
  assert.equal(statSync(rt.apiDir).mode & 0o777, 0o700, 'the directory is the lock');
  const sock = statSync(rt.apiSocket);
  assert.ok(sock.isSocket());
  assert.equal(sock.mode & 0o777, 0o666, 'nginx makes its unix sockets 0666 itself (which is why the directory matters)');
  const cfg = await dynamic.getConfig();
  assert.deepEqual(cfg.dictFailures, { data: 0, certs: 0, metrics: 0 });
  assert.equal(cfg.rejectedEndpoints, 0);
  assert.equal(await httpGet(LISTEN.statusPort, '/healthz'), 200);
  for (const [method, p] of [['GET', '/portico/config'], ['GET', '/portico/backends'], ['POST', '/portico/backends'], ['GET', '/portico/certificates']] as const) {
    assert.equal(await httpGet(LISTEN.statusPort, p, method), 404, `${method} ${p} over TCP`);
    assert.equal(await httpGet(LISTEN.httpPort, p, method), 404, `${method} ${p} on the public listener`);
  }
  assert.equal((await dynamic.getConfig()).backendsVersion, 0, 'nothing sent over TCP was applied');
  if (process.getuid?.() === 0) {
    // Another user (nginx's own workers run as nobody) cannot connect: the directory refuses it.
    const probe = `require('net').connect(${JSON.stringify(rt.apiSocket)}).on('connect',()=>{console.log('connected');process.exit(0)}).on('error',(e)=>{console.log(e.code);process.exit(0)})`;
    const r = spawnSync(process.execPath, ['-e', probe], { uid: 65534, gid: 65534, encoding: 'utf8' });
    assert.equal(r.stdout.trim(), 'EACCES', r.stderr);
  }
});

test('a SIGKILLed master: its workers are killed before a new master starts, which is re-programmed quickly', async (t) => {
  const { nginx, checksum } = await started(t);
  let restarted = 0;
  nginx.onRestart(() => restarted++);
  const old = nginx.pid as number;
  assert.ok(groupMembers(old).length >= 2, 'master and workers share the process group');
  const t0 = performance.now();
  process.kill(old, 'SIGKILL');
  await until('a new master', () => nginx.pid !== undefined && nginx.pid !== old);
  assert.deepEqual(groupMembers(old), [], 'no process of the old generation is left when the new master starts');
  assert.ok(await nginx.waitLive(checksum), 'the new master answers');
  const ms = performance.now() - t0;
  assert.equal(restarted, 1);
  assert.ok(ms < 3_000, `restarted in ${ms.toFixed(0)} ms`);
  assert.equal(await httpGet(LISTEN.httpPort, '/'), 404, 'the public listener answers (unknown host)');
});

test('stop(): graceful, then nothing of the group is left and the ports are free', async (t) => {
  const { nginx } = await started(t);
  const pgid = nginx.pid as number;
  await nginx.stop();
  assert.deepEqual(groupMembers(pgid), []);
  assert.ok(await portFree(LISTEN.httpPort));
  assert.ok(await portFree(LISTEN.statusPort));
  assert.equal(nginx.isRunning(), false);
});

test('start-up after a crashed controller whose nginx master was then SIGKILLed: the orphaned workers are stopped', async (t) => {
  // An nginx that outlived its controller (it runs in its own session, so it keeps serving), started the way
  // NginxProcess starts it but owned by nobody in this process.
  const { nginx, dir } = await started(t);
  const conf = readFileSync(nginx.confPath, 'utf8');
  await nginx.stop();
  const orphan = spawn('/usr/sbin/nginx', ['-p', dir, '-c', nginx.confPath, '-e', 'stderr'], { stdio: 'ignore', detached: true });
  orphan.unref();
  const pgid = orphan.pid as number;
  await until('orphan nginx with workers', () => groupMembers(pgid).length >= 2 && readFileSync(path.join(dir, 'nginx.pid'), 'utf8').trim() === String(pgid));
  // `make down` used to SIGKILL the master only: its workers stayed, still bound to the ports.
  process.kill(pgid, 'SIGKILL');
  await until('master gone', () => !groupMembers(pgid).includes(pgid));
  assert.ok(groupMembers(pgid).length >= 1, 'orphaned workers are still running');
  // A new controller on the same runtime directory.
  const next = new NginxProcess({ binary: '/usr/sbin/nginx', runtime: runtimePaths(dir), shutdownTimeoutMs: 2_000 }, new DynamicClient(), nullLogger());
  running.push(next);
  t.after(() => next.stop());
  next.prepare();
  assert.ok(await waitGroupGone(pgid, 1), 'prepare() removed the old generation');
  assert.ok(await portFree(LISTEN.httpPort), 'nothing holds the public port');
  assert.equal(conf.length > 0, true);
});

/** Starts nginx with a structure's configuration plus a probe host on the HTTP listener that prints the forwarding variables. */
async function probeForwarding(t: TestContext, global: Partial<Structure['global']>): Promise<(headers: Record<string, string>) => Promise<string>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-fwd-'));
  const m = modelOf({ services: [svc('web', [{ port: 80 }])], ingresses: [ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] })] });
  const s0 = translate(m.snapshot(), { ...OPTS, listen: LISTEN }).config.structure;
  const s: Structure = { ...s0, global: { ...s0.global, ...global } };
  const nginx = new NginxProcess({ binary: '/usr/sbin/nginx', runtime: runtimePaths(dir), shutdownTimeoutMs: 2_000 }, new DynamicClient(), nullLogger());
  running.push(nginx);
  t.after(() => nginx.stop());
  nginx.prepare();
  const checksum = structureChecksum(s);
  const conf = renderNginxConf(s, nginx.runtime, checksum);
  const probe = `  server { listen 127.0.0.1:${LISTEN.httpPort}; server_name probe.test; location / { return 200 "$remote_addr|$portico_forwarded_for|$portico_forwarded_proto|$portico_forwarded_port|$portico_forwarded_host"; } }\n}\n`;
  const v = await nginx.writeValidated(conf.replace(/\}\s*$/, probe));
  assert.ok(v.ok, v.output);
  nginx.start();
  assert.ok(await nginx.waitLive(checksum));
  return (headers) =>
    new Promise((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port: LISTEN.httpPort, path: '/', agent: false, headers: { host: 'probe.test', ...headers } }, (res) => {
          let b = '';
          res.on('data', (d: Buffer) => (b += d.toString()));
          res.on('end', () => resolve(b));
        })
        .on('error', reject);
    });
}

const SPOOF = { 'X-Forwarded-For': '203.0.113.5, 198.51.100.9', 'X-Forwarded-Proto': 'https', 'X-Forwarded-Port': '8443', 'X-Forwarded-Host': 'spoofed.example' };

test('forwarded headers, untrusted (default): the client address and scheme are nginx\'s own view, whatever the client sends', async (t) => {
  const get = await probeForwarding(t, {});
  assert.equal(await get(SPOOF), '127.0.0.1|127.0.0.1|http|80|probe.test');
});

test('forwarded headers, trusted proxy: the client is the right-most address the proxy did not add, never the left-most', async (t) => {
  const get = await probeForwarding(t, { useForwardedHeaders: true, proxyRealIpCidr: ['127.0.0.1/32'] });
  assert.equal(await get(SPOOF), '198.51.100.9|198.51.100.9|https|8443|spoofed.example');
  assert.equal(await get({}), '127.0.0.1|127.0.0.1|http|80|probe.test', 'nothing forwarded: nginx\'s own view');
  assert.equal(await get({ 'X-Forwarded-Proto': 'gopher', 'X-Forwarded-Port': '99999x' }), '127.0.0.1|127.0.0.1|http|80|probe.test', 'malformed values are ignored');
});

test('forwarded headers, use-forwarded-headers without a trusted CIDR covering the peer: nothing is trusted', async (t) => {
  const get = await probeForwarding(t, { useForwardedHeaders: true, proxyRealIpCidr: ['192.0.2.0/24'] });
  assert.equal(await get(SPOOF), '127.0.0.1|127.0.0.1|http|80|probe.test');
});

test('forwarded headers, use-forwarded-headers with the default proxy-real-ip-cidr: every IPv4 peer is trusted (ingress-nginx\'s 0.0.0.0/0)', async (t) => {
  const get = await probeForwarding(t, { useForwardedHeaders: true });
  // Every address in the list is a trusted peer, so the recursive search ends at the left-most one: whoever reaches
  // Portico directly picks its own address (why the reference says to list the load balancer's addresses).
  assert.equal(await get(SPOOF), '203.0.113.5|203.0.113.5|https|8443|spoofed.example');
});

test('forwarded headers, use-forwarded-headers with an empty proxy-real-ip-cidr: fails safe, nothing is trusted', async (t) => {
  const get = await probeForwarding(t, { useForwardedHeaders: true, proxyRealIpCidr: [] });
  assert.equal(await get(SPOOF), '127.0.0.1|127.0.0.1|http|80|probe.test');
});

test('a reload that resizes a shared dict (lua-shared-dicts) empties it: the owner is told to send all data again', async (t) => {
  const { nginx, dynamic } = await started(t);
  let told = 0;
  nginx.onRestart(() => told++);
  const m = modelOf({ services: [svc('web', [{ port: 80 }])], ingresses: [ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] })] });
  const s0 = translate(m.snapshot(), { ...OPTS, listen: LISTEN }).config.structure;
  const reload = async (s: Structure) => {
    const checksum = structureChecksum(s);
    assert.ok((await nginx.writeValidated(renderNginxConf(s, nginx.runtime, checksum))).ok);
    assert.ok(await nginx.reload(checksum));
  };
  await dynamic.push({
    ...emptyDelta(),
    backends: { upsert: { b: { id: 'b', balance: 'round_robin', endpoints: [{ address: '192.0.2.1', port: 80, weight: 1 }] } }, remove: [] },
  });
  const epochs = (await dynamic.getConfig()).epochs;
  await reload({ ...s0, global: { ...s0.global, keepAliveSeconds: 30 } });
  assert.equal(told, 0, 'same zone sizes: the data survives a reload');
  assert.deepEqual((await dynamic.getConfig()).epochs, epochs);
  assert.ok((await dynamic.getBackends()).b);
  await reload({ ...s0, global: { ...s0.global, luaSharedDicts: { dataKb: 64 * 1024, certsKb: 32 * 1024 } } });
  assert.equal(told, 1, 'resized data zone: told once');
  const after = (await dynamic.getConfig()).epochs;
  assert.notEqual(after.data, epochs.data);
  assert.equal(after.certs, epochs.certs, 'the certificate zone kept its size and its data');
  assert.equal((await dynamic.getBackends()).b, undefined, 'the resized zone is empty, as the owner was told');
});

test('nginx error-log lines keep their severity in the controller log (routine upstream errors are warnings)', () => {
  assert.equal(nginxLevel('2026/11/22 19:45:18 [notice] 1#1: start worker processes'), 'info');
  assert.equal(nginxLevel('2026/11/22 19:45:18 [warn] 2#2: *4 [lua] balancer.lua:145: 503 for backend x'), 'warn');
  assert.equal(nginxLevel('2026/11/22 19:45:18 [error] 2#2: *9 connect() failed (111: Connection refused)'), 'warn');
  assert.equal(nginxLevel('2026/11/22 19:45:18 [crit] 2#2: open() failed'), 'error');
  assert.equal(nginxLevel('2026/11/22 19:45:18 [emerg] 1#1: bind() failed'), 'error');
  assert.equal(nginxLevel(`2026/11/22 19:45:18 [info] 2#2: ${'x'.repeat(30)} [error] only in the message`), 'info');
});

test('nginx -t passes with the default access log /dev/stdout (Node stdio pipes are sockets nginx cannot open)', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-proc-'));
  const m = modelOf({ services: [svc('web', [{ port: 80 }])], ingresses: [ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] })] });
  const s = translate(m.snapshot(), { ...OPTS, listen: LISTEN }).config.structure;
  const nginx = new NginxProcess({ binary: '/usr/sbin/nginx', runtime: runtimePaths(dir, { accessLog: '/dev/stdout' }), shutdownTimeoutMs: 2_000 }, new DynamicClient(), nullLogger());
  nginx.prepare();
  const v = await nginx.writeValidated(renderNginxConf(s, nginx.runtime, 'x'));
  assert.ok(v.ok, v.output);
  const bad = await nginx.testContent('events {} http { this_is_not_a_directive; }');
  assert.equal(bad.ok, false);
  assert.match(bad.output, /unknown directive/);
});
