// TLS passthrough (--enable-ssl-passthrough, ingress-nginx's ssl-passthrough annotation) through a real nginx
// (Debian's, with libnginx-mod-stream), driven by the real NginxDriver on a Model: TLS backends in this file's
// network namespace (testnet.test-helpers.ts, subnet 240) present their own certificates for pass.example.com. Proven here: a
// client connecting to Portico's HTTPS port with that server name gets the backend's certificate and answer (the
// backend saw the name: nothing was decrypted on the way); a terminated host gets Portico's certificate and the HTTP
// routing as before, and the backend sees the client's own address (PROXY protocol between the two hops); an unknown
// name gets the default certificate; the passthrough host over Portico's TLS is 421; plain HTTP to it is routed as
// usual; an endpoint change reaches new connections after one reload (propagation measured), while a connection made
// before it keeps its backend.
// Ports 32600-32609 belong to this file: nginx 32600-32602 (HTTP, HTTPS, status), backends 32605-32607.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { Metrics } from '../../../operator/metrics.ts';
import { createLogger } from '../../../operator/log.ts';
import type { EventRecorder } from '../../../operator/events.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { Model } from '../../model/model.ts';
import { normalizeEndpointSlice, normalizeIngress, normalizeIngressClass, normalizeService, parseTlsSecret } from '../../model/normalize.ts';
import { OPTS, ing, portico, rule, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { b64, issue, makeCa } from '../../translate/pki.test-helpers.ts';
import { NginxDriver } from '../driver.ts';
import { TestNet } from './testnet.test-helpers.ts';
import { until } from '../../../e2e/harness/http.ts';

const LISTEN = { httpPort: 32600, httpsPort: 32601, statusPort: 32602, address: '127.0.0.1' };
const PASS_A = 32605;
const PASS_B = 32606;
const WEB = 32607;

const tnet = new TestNet(240);
const dir = mkdtempSync(path.join(tmpdir(), 'portico-passthrough-'));
// Certificates: each passthrough backend its own (two CAs, so they differ), Portico's for the terminated host, and
// the default one for unknown names.
const backendA = issue(dir, makeCa(dir, 'backend-ca-a'), 'pass-a', ['pass.example.com']);
const backendB = issue(dir, makeCa(dir, 'backend-ca-b'), 'pass-b', ['pass.example.com']);
const porticoCa = makeCa(dir, 'portico-ca');
const webCert = issue(dir, porticoCa, 'web', ['web.example.com']);
const defaultCert = issue(dir, porticoCa, 'portico-default');
const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;

const events: string[] = [];
const recorder = { event: (o: KubeObject, type: string, reason: string, _a: string, note: string) => events.push(`${o.kind} ${type} ${reason}: ${note}`) } as unknown as EventRecorder;
const model = new Model();
// The runtime directory is a directory of its own (0711 once prepared): nginx's workers (an unprivileged user when the
// tests run as root) connect to its unix sockets, so every directory above it must let them through.
const gateway = new NginxDriver(
  { translate: { ...OPTS, listen: LISTEN, ownAddresses: ['127.0.0.1'], sslPassthrough: true }, nginxBinary: '/usr/sbin/nginx', runtimeDir: mkdtempSync(path.join(tmpdir(), 'portico-passthrough-rt-')), accessLog: path.join(dir, 'access.log'), quietMs: 0, maxWaitMs: 250, shutdownTimeoutMs: 2_000 },
  { model, events: recorder, metrics: new Metrics({ prefix: 'portico' }), log: createLogger('error'), objectFor: () => undefined, controllerObject: () => undefined },
);
const stop = new AbortController();
let running: Promise<void> | undefined;

const reloads = () => gateway.history.filter((r) => r.lane === 'structural' && r.reload && r.ok).length;

function setSlice(service: string, port: number): void {
  const s = normalizeEndpointSlice({
    metadata: { name: `${service}-1`, namespace: 'default', labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    ports: [{ name: 'main', port, protocol: 'TCP' }],
    endpoints: [{ addresses: [tnet.ip], conditions: { ready: true, serving: true, terminating: false } }],
  } as KubeObject);
  model.setEndpointSlices(`default/${service}`, s ? [s] : []);
}

function setIngress(obj: KubeObject): void {
  const n = normalizeIngress(obj);
  assert.ok(n.ok, JSON.stringify(n));
  model.setIngress(n.ingress);
}

interface Answer {
  status: number;
  body: string;
  /** SHA-256 fingerprint of the certificate the server presented. */
  cert: string;
}

/** One HTTP/1.1 request over TLS to Portico's HTTPS port with `servername` as SNI (empty: none) and `host` as Host. */
function request(servername: string, o: { host?: string; path?: string; socket?: tls.TLSSocket } = {}): Promise<Answer & { socket: tls.TLSSocket }> {
  return new Promise((resolve, reject) => {
    const socket = o.socket ?? tls.connect({ host: '127.0.0.1', port: LISTEN.httpsPort, ...(servername ? { servername } : {}), rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] });
    const timer = setTimeout(() => reject(new Error(`request to ${servername}: timeout`)), 5_000);
    const send = () => {
      const cert = socket.getPeerCertificate().fingerprint256;
      // No agent: the request goes on this very socket (a second request may reuse it).
      const req = http.request({ createConnection: () => socket, path: o.path ?? '/hello', headers: { host: o.host ?? servername, connection: 'keep-alive', 'x-forwarded-for': '203.0.113.99' } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, body, cert, socket });
        });
      });
      req.shouldKeepAlive = true;
      req.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      req.end();
    };
    if (o.socket) send();
    else socket.once('secureConnect', send);
    socket.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

function plainHttp(host: string): Promise<{ status: number; location: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: LISTEN.httpPort, path: '/x', headers: { host }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location }));
    });
    req.on('error', reject);
    req.end();
  });
}

before(async () => {
  tnet.up();
  await Promise.all([
    tnet.start('passA', PASS_A, 'tls-echo', { cert: backendA.certFile, key: backendA.keyFile }),
    tnet.start('passB', PASS_B, 'tls-echo', { cert: backendB.certFile, key: backendB.keyFile }),
    tnet.start('web', WEB, 'echo'),
  ]);
  model.setIngressClass(normalizeIngressClass(portico()));
  model.setService(normalizeService({ metadata: { name: 'pass', namespace: 'default' }, spec: { ports: [{ name: 'main', port: 443 }] } } as KubeObject));
  model.setService(normalizeService({ metadata: { name: 'web', namespace: 'default' }, spec: { ports: [{ name: 'main', port: 80 }] } } as KubeObject));
  setSlice('pass', PASS_A);
  setSlice('web', WEB);
  model.setSecret(parseTlsSecret({ metadata: { name: 'web-tls', namespace: 'default' }, type: 'kubernetes.io/tls', data: { 'tls.crt': b64(webCert.cert), 'tls.key': b64(webCert.key) } } as KubeObject & { type: string; data: Record<string, string> }, new Date()));
  model.setDefaultCertificate(null, { key: '(test default)', ok: true, cert: defaultCert.cert, privateKey: defaultCert.key, hosts: [], notAfter: new Date(Date.now() + 86400_000).toISOString(), fingerprint: '' });
  setIngress(ing('pass', { rules: [rule('pass.example.com', [{ path: '/', backend: svcRef('pass', 443) }])] }, { annotations: { 'nginx.ingress.kubernetes.io/ssl-passthrough': 'true', 'nginx.ingress.kubernetes.io/force-ssl-redirect': 'true' } }));
  setIngress(ing('web', { tls: [{ hosts: ['web.example.com'], secretName: 'web-tls' }], rules: [rule('web.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }));
  running = gateway.run(stop.signal);
  await new Promise<void>((r) => gateway.onReady(r));
});

after(async () => {
  stop.abort();
  await running;
  await tnet.close();
});

test('SNI of a passthrough host: the backend\'s own certificate and answer, nothing decrypted on the way', async () => {
  const r = await request('pass.example.com');
  assert.equal(r.cert, fingerprint(backendA.cert), 'the backend\'s certificate, not one of Portico\'s');
  assert.equal(r.status, 200, r.body);
  assert.equal((JSON.parse(r.body) as { url: string }).url, '/hello');
  r.socket.destroy();
  const seen = (await tnet.requests('passA')).filter((x) => x.url === '/hello');
  assert.ok(seen.length >= 1);
  assert.equal(seen.at(-1)?.tls?.servername, 'pass.example.com', 'the backend terminated TLS itself (it saw the server name)');
  assert.equal(seen.at(-1)?.headers['x-forwarded-for'], '203.0.113.99', 'headers pass untouched: Portico never read the request');
});

test('SNI of a terminated host: Portico\'s certificate, the HTTP routing as before, the client\'s own address at the backend', async () => {
  const r = await request('web.example.com');
  assert.equal(r.cert, fingerprint(webCert.cert));
  assert.equal(r.status, 200, r.body);
  r.socket.destroy();
  const seen = JSON.parse(r.body) as { url: string; headers: Record<string, string> };
  assert.equal(seen.url, '/hello');
  assert.equal(seen.headers['x-real-ip'], '127.0.0.1', 'X-Real-IP is the client (from the PROXY header), not the stream hop');
  assert.equal(seen.headers['x-forwarded-for'], '127.0.0.1', 'X-Forwarded-For is the client\'s address (a client\'s own header is replaced)');
  assert.equal(seen.headers['x-forwarded-proto'], 'https');
  assert.equal(seen.headers['x-forwarded-port'], '443');
});

test('an unknown server name, or none, gets the default certificate', async () => {
  for (const name of ['unknown.example.com', '']) {
    const r = await request(name, { host: 'unknown.example.com' });
    assert.equal(r.cert, fingerprint(defaultCert.cert), name || '(no SNI)');
    assert.equal(r.status, 404);
    r.socket.destroy();
  }
});

test('the passthrough host over Portico\'s own TLS is 421; over plain HTTP it is routed as usual (here: force-ssl-redirect)', async () => {
  const r = await request('web.example.com', { host: 'pass.example.com' });
  assert.equal(r.cert, fingerprint(webCert.cert));
  assert.equal(r.status, 421);
  r.socket.destroy();
  assert.deepEqual(await plainHttp('pass.example.com'), { status: 308, location: 'https://pass.example.com/x' });
});

test('endpoint change: new connections reach the new backend after one reload, a connection made before keeps its own; propagation measured', async () => {
  await sleep(300); // let earlier syncs settle
  const old = await request('pass.example.com');
  assert.equal(old.cert, fingerprint(backendA.cert));
  const before = reloads();
  const t0 = performance.now();
  setSlice('pass', PASS_B);
  let probes = 0;
  await until('a new connection to backend B', async () => {
    probes++;
    const r = await request('pass.example.com').catch(() => null);
    r?.socket.destroy();
    return r?.cert === fingerprint(backendB.cert);
  }, 10_000, 5);
  const ms = performance.now() - t0;
  await sleep(500);
  const sync = gateway.history.filter((r) => r.lane === 'structural' && r.reload && r.ok).at(-1);
  console.log(`# passthrough endpoint change → first new connection to the new backend: ${ms.toFixed(0)} ms (${probes} probes; the reloading sync itself: ${sync?.ms.toFixed(0)} ms), reloads: ${reloads() - before}`);
  assert.equal(reloads() - before, 1, 'exactly one reload for one endpoint change');
  // The connection made before the reload still talks to backend A (the old worker drains it).
  const again = await request('pass.example.com', { socket: old.socket });
  assert.equal(again.status, 200);
  assert.equal(again.cert, fingerprint(backendA.cert));
  old.socket.destroy();
  // Terminated HTTPS keeps working through the new configuration.
  const w = await request('web.example.com');
  assert.equal(w.status, 200);
  w.socket.destroy();
  assert.ok(!events.some((e) => / Warning /.test(e)), events.join('\n'));
});
