// TCP/UDP services through a real nginx (Debian's, with libnginx-mod-stream), driven by the real NginxDriver
// on a Model: bytes round-trip through Portico's TCP and UDP listeners to echo servers in this file's network
// namespace (testnet.test-helpers.ts, subnet 247), PROXY protocol is decoded from the client and sent to the backend, an
// endpoint change reaches new connections after exactly one (debounced) reload, and a listener without endpoints
// accepts and closes. Ports 31900-31919 belong to this file: nginx 31900-31902 (HTTP, HTTPS, status), TCP/UDP
// listeners 31903-31906, echo servers 31910-31912.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Metrics } from '../../../operator/metrics.ts';
import { createLogger } from '../../../operator/log.ts';
import type { EventRecorder } from '../../../operator/events.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { Model } from '../../model/model.ts';
import { normalizeEndpointSlice, normalizeService } from '../../model/normalize.ts';
import { parseStreamServices } from '../../tcpudp.ts';
import { OPTS } from '../../translate/fixtures.test-helpers.ts';
import { NginxDriver } from '../driver.ts';
import { TestNet } from './testnet.test-helpers.ts';
import { until } from '../../../e2e/harness/http.ts';
import { tcp, udp } from './stream-client.test-helpers.ts';

const LISTEN = { httpPort: 31900, httpsPort: 31901, statusPort: 31902, address: '127.0.0.1' };
const TCP = 31903;
const TCP_PROXY = 31904;
const UDP = 31905;
const CLOSED = 31906;
const ECHO_A = 31910;
const ECHO_B = 31911;
const ECHO_UDP = 31912;

const tnet = new TestNet(247);
const IP = tnet.ip;
const NODE = path.resolve(import.meta.dirname, '../../../node_modules/.bin/node');

// The echo servers, one process inside the namespace: a TCP server greets with its name and a newline, then echoes
// every byte (a PROXY header nginx sends comes back to the client as text); the UDP one answers "<name>:<datagram>".
const ECHO_SCRIPT = `
const net = require('node:net'); const dgram = require('node:dgram');
const [ip, servers] = JSON.parse(process.argv[1]);
for (const s of servers) {
  if (s.udp) {
    const u = dgram.createSocket('udp4');
    u.on('message', (m, r) => u.send(Buffer.concat([Buffer.from(s.name + ':'), m]), r.port, r.address));
    u.bind(s.port, ip);
  } else net.createServer((c) => { c.write(s.name + '\\n'); c.pipe(c); c.on('error', () => {}); }).listen(s.port, ip);
}
setInterval(() => { try { process.kill(${process.pid}, 0); } catch { process.exit(0); } }, 1000);
`;

const events: string[] = [];
const recorder = { event: (o: KubeObject, type: string, reason: string, _a: string, note: string) => events.push(`${o.kind} ${type} ${reason}: ${note}`) } as unknown as EventRecorder;
const model = new Model();
const dir = mkdtempSync(path.join(tmpdir(), 'portico-stream-'));
const gateway = new NginxDriver(
  { translate: { ...OPTS, listen: LISTEN, ownAddresses: ['127.0.0.1'] }, nginxBinary: '/usr/sbin/nginx', runtimeDir: dir, accessLog: path.join(dir, 'access.log'), quietMs: 0, maxWaitMs: 250, shutdownTimeoutMs: 2_000 },
  { model, events: recorder, metrics: new Metrics({ prefix: 'portico' }), log: createLogger('error'), objectFor: () => undefined, controllerObject: () => undefined },
);
const stop = new AbortController();
let running: Promise<void> | undefined;

function setSlice(service: string, portName: string, protocol: string, port: number | null): void {
  const s = normalizeEndpointSlice({
    metadata: { name: `${service}-1`, namespace: 'default', labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    ports: [{ name: portName, port: port ?? 1, protocol }],
    endpoints: port === null ? [] : [{ addresses: [IP], conditions: { ready: true, serving: true, terminating: false } }],
  } as KubeObject);
  model.setEndpointSlices(`default/${service}`, s ? [s] : []);
}

const reloads = () => gateway.history.filter((r) => r.lane === 'structural' && r.reload && r.ok).length;


/** The first bytes an echo server sends on a direct connection (the host reaches the namespace through the veth). */
function direct(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = net.connect(port, IP);
    c.on('data', (b) => {
      resolve(b.toString());
      c.destroy();
    });
    c.on('error', reject);
  });
}

before(async () => {
  tnet.up();
  const servers = [{ name: 'A', port: ECHO_A }, { name: 'B', port: ECHO_B }, { name: 'U', port: ECHO_UDP, udp: true }];
  const child = spawn('ip', ['netns', 'exec', tnet.netns, NODE, '-e', ECHO_SCRIPT, JSON.stringify([IP, servers])], { stdio: 'ignore' });
  child.unref();
  await until('the echo servers', () => direct(ECHO_A).then((g) => g === 'A\n').catch(() => false), 10_000, 25);

  model.setService(normalizeService({ metadata: { name: 'tcp-echo', namespace: 'default' }, spec: { ports: [{ name: 'echo', port: 7000 }] } } as KubeObject));
  model.setService(normalizeService({ metadata: { name: 'udp-echo', namespace: 'default' }, spec: { ports: [{ name: 'echo', port: 7000, protocol: 'UDP' }] } } as KubeObject));
  setSlice('tcp-echo', 'echo', 'TCP', ECHO_A);
  setSlice('udp-echo', 'echo', 'UDP', ECHO_UDP);
  const reserved = new Set([31900, 31901, 31902]);
  model.setStreamServices('TCP', parseStreamServices('TCP', 'ingress/tcp', {
    [TCP]: 'default/tcp-echo:echo',
    [TCP_PROXY]: 'default/tcp-echo:7000:PROXY:PROXY',
    [CLOSED]: 'default/nothing-here:80',
  }, reserved).entries);
  model.setStreamServices('UDP', parseStreamServices('UDP', 'ingress/udp', { [UDP]: 'default/udp-echo:echo' }, reserved).entries);
  running = gateway.run(stop.signal);
  await new Promise<void>((r) => gateway.onReady(r));
});

after(async () => {
  stop.abort();
  await running;
  await tnet.close();
});

test('TCP: bytes round-trip through the stream listener', async () => {
  const r = await tcp(TCP, 'hello over tcp', (s) => s.includes('hello over tcp'));
  assert.equal(r.data, 'A\nhello over tcp');
});

test('UDP: a datagram round-trips through the stream listener', async () => {
  assert.equal(await until('UDP answer', () => udp(UDP, 'ping').catch(() => false), 5_000), 'U:ping');
});

test('PROXY protocol: decoded from the client, sent to the backend with the client\'s addresses', async () => {
  const r = await tcp(TCP_PROXY, 'PROXY TCP4 203.0.113.7 198.51.100.1 40000 443\r\nhi', (s) => s.endsWith('hi'));
  assert.match(r.data, /^A\nPROXY TCP4 203\.0\.113\.7 127\.0\.0\.1 40000 31904\r\nhi$/);
  // Without a header from the client the listener refuses the connection (closes it).
  const bare = await tcp(TCP_PROXY, 'hi\r\n', () => false).catch(() => ({ data: '', closed: true }));
  assert.equal(bare.closed, true);
  assert.ok(!bare.data.includes('hi'));
});

test('a listener whose Service is missing accepts and closes at once; a Warning names the ConfigMap key', async () => {
  const r = await tcp(CLOSED, 'x', () => false);
  assert.deepEqual(r, { data: '', closed: true });
  assert.ok(events.some((e) => e.startsWith('ConfigMap Warning ServiceNotFound') && e.includes(String(CLOSED))), events.join('\n'));
});

test('endpoint change: new connections reach the new backend after one reload; propagation measured', async () => {
  await sleep(300); // let earlier syncs settle
  const before = reloads();
  const t0 = performance.now();
  setSlice('tcp-echo', 'echo', 'TCP', ECHO_B);
  let tries = 0;
  await until('a connection to backend B', async () => {
    tries++;
    const r = await tcp(TCP, '', (s) => s.includes('\n'), 1_000).catch(() => null);
    return r?.data === 'B\n';
  }, 10_000, 5);
  const ms = performance.now() - t0;
  await sleep(500);
  const after = reloads();
  console.log(`# TCP endpoint change → first connection to the new backend: ${ms.toFixed(0)} ms (${tries} probes), reloads: ${after - before}`);
  assert.equal(after - before, 1, 'exactly one reload for one endpoint change');
  // A burst of endpoint changes is coalesced by the structural lane's debounce: far fewer reloads than changes.
  const b2 = reloads();
  for (let i = 0; i < 10; i++) setSlice('tcp-echo', 'echo', 'TCP', i % 2 ? ECHO_A : ECHO_B);
  setSlice('tcp-echo', 'echo', 'TCP', ECHO_A);
  await until('back on A', async () => (await tcp(TCP, '', (s) => s.includes('\n'), 1_000).catch(() => null))?.data === 'A\n', 10_000, 10);
  await sleep(500);
  const burst = reloads() - b2;
  console.log(`# 11 endpoint changes in a burst → ${burst} reload(s)`);
  assert.ok(burst >= 1 && burst <= 3, `burst reloads: ${burst}`);
  // HTTP keeps working and TCP through the new configuration still round-trips.
  assert.equal((await tcp(TCP, 'again', (s) => s.includes('again'))).data, 'A\nagain');
});

test('no endpoints left: the listener stays and closes connections', async () => {
  setSlice('tcp-echo', 'echo', 'TCP', null);
  await until('closed listener', async () => {
    const r = await tcp(TCP, 'x', () => false, 1_000).catch(() => null);
    return r?.closed === true && r.data === '';
  }, 10_000, 20);
  setSlice('tcp-echo', 'echo', 'TCP', ECHO_A);
  await until('served again', async () => (await tcp(TCP, '', (s) => s.includes('\n'), 1_000).catch(() => null))?.data === 'A\n', 10_000, 20);
});
