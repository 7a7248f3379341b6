// TLSRoutes on Terminate listeners through a real nginx (Debian's, with libnginx-mod-stream), driven by the real
// NginxDriver on a Model (translation, stream section, key files, nginx -t, start): one Gateway with a Mixed port
// (8883: tls.example.com terminated, abc.example.com passed through) and a Terminate port (8443: r.example.org, its
// backend under a BackendTLSPolicy). Proven with real TLS clients: a client giving the server name tls.example.com
// gets the listener's certificate and reaches the plaintext echo backend (which sees no TLS); abc.example.com on the
// same port reaches the TLS backend undecrypted (the client sees the backend's own certificate and the backend the
// client's server name); r.example.org is terminated and re-encrypted, the backend seeing the policy's hostname as
// the server name and nginx verifying it against the policy's CA (a policy with a CA that did not sign the backend
// gets no byte to it); an unknown name is closed. A Secret whose key does
// not match its certificate closes only the names of its listener, with a Warning, and the rest keeps serving.
// The backends run in this file's network namespace (testnet.test-helpers.ts, subnet 221).
// Ports 36420-36439 belong to this file: nginx 36420-36422 (HTTP, HTTPS, status), echo backend 36430, TLS echo
// backend 36431; the Gateway's pod ports are the ones Portico allocates for it (20000-29999, fixed by the Gateway's
// namespace, name and ports, which no other test uses).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import type { EventRecorder } from '../../../operator/events.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { createLogger } from '../../../operator/log.ts';
import { Metrics } from '../../../operator/metrics.ts';
import { until } from '../../../e2e/harness/http.ts';
import { normalizeBackendTlsPolicy, policyReads } from '../../kinds/backendtlspolicy/normalize.ts';
import { normalizeGateway } from '../../kinds/gateway/normalize.ts';
import { normalizeGatewayClass } from '../../kinds/gatewayclass/index.ts';
import { normalizeStreamRoute } from '../../kinds/tcproute/normalize.ts';
import type { Model } from '../../model/model.ts';
import { gatewayApiState } from '../../translate/gateway-api/attach.ts';
import { modelOf, OPTS, slice, svc } from '../../translate/fixtures.test-helpers.ts';
import { issue, makeCa } from '../../translate/pki.test-helpers.ts';
import { NginxDriver } from '../driver.ts';
import { TestNet } from './testnet.test-helpers.ts';

const LISTEN = { httpPort: 36420, httpsPort: 36421, statusPort: 36422, address: '127.0.0.1' };
const ECHO_PORT = 36430;
const TLS_ECHO_PORT = 36431;
const NS = 'tlsterm';
const GA = { controllerName: 'portico.dev/gateway-controller', reservedPorts: [LISTEN.httpPort, LISTEN.httpsPort, LISTEN.statusPort] };
const tnet = new TestNet(221);
const dir = mkdtempSync(path.join(tmpdir(), 'portico-gw-tlsterm-'));
const FRONT_CA = makeCa(dir, 'front-ca');
const FRONT = issue(dir, FRONT_CA, 'front', ['tls.example.com', 'r.example.org']);
const BACKEND_CA = makeCa(dir, 'backend-ca');
const BACKEND = issue(dir, BACKEND_CA, 'backend', ['abc.example.com']);
const STRANGER = issue(dir, makeCa(dir, 'stranger-ca'), 'stranger', ['nobody.example.com']);

let clock = 0;
const obj = (kind: string, name: string, spec: unknown): KubeObject =>
  ({ apiVersion: 'gateway.networking.k8s.io/v1', kind, metadata: { name, namespace: NS, uid: `uid-${name}`, generation: 1, creationTimestamp: `2026-01-01T00:00:${String(clock++).padStart(2, '0')}Z` }, spec }) as KubeObject;
const WRONG_CA = makeCa(dir, 'wrong-ca');
const readCm = (k: string) => (k === `${NS}/backend-ca` ? { data: { 'ca.crt': BACKEND_CA.cert } } : k === `${NS}/wrong-ca` ? { data: { 'ca.crt': WRONG_CA.cert } } : undefined);

function put(m: Model, o: KubeObject): void {
  const n = o.kind === 'GatewayClass' ? normalizeGatewayClass(o) : o.kind === 'Gateway' ? normalizeGateway(o, readCm) : o.kind === 'TLSRoute' ? normalizeStreamRoute('TLSRoute', o) : normalizeBackendTlsPolicy(o, readCm);
  assert.ok(n.ok, `${o.kind} ${o.metadata.name}: ${n.ok ? '' : n.reason}`);
  m.setCrd(o.kind as 'BackendTLSPolicy', n.record as never, o.kind === 'BackendTLSPolicy' ? policyReads(o) : undefined);
}

const model = modelOf({
  services: [svc('echo', [{ name: 'plain', port: 3000 }], NS), svc('tls-echo', [{ name: 'btls', port: 8443 }], NS)],
  slices: [slice('echo-1', 'echo', [{ name: 'plain', port: ECHO_PORT }], [{ ip: tnet.ip }], NS), slice('tls-echo-1', 'tls-echo', [{ name: 'btls', port: TLS_ECHO_PORT }], [{ ip: tnet.ip }], NS)],
});
put(model, obj('GatewayClass', 'portico', { controllerName: GA.controllerName }));
put(
  model,
  obj('Gateway', 'tlsterm-gw', {
    gatewayClassName: 'portico',
    listeners: [
      { name: 'tls-terminate', port: 8883, protocol: 'TLS', hostname: 'tls.example.com', tls: { mode: 'Terminate', certificateRefs: [{ name: 'front' }] } },
      { name: 'tls-passthrough', port: 8883, protocol: 'TLS', hostname: 'abc.example.com', tls: { mode: 'Passthrough' } },
      { name: 'reencrypt', port: 8443, protocol: 'TLS', hostname: 'r.example.org', tls: { mode: 'Terminate', certificateRefs: [{ name: 'front-2' }] } },
    ],
  }),
);
const secret = (name: string, cert: string, key: string) => model.setSecret({ key: `${NS}/${name}`, ok: true, cert, privateKey: key, hosts: [], notAfter: '2099-01-01T00:00:00.000Z', fingerprint: `${name}-${key.length}-${cert.length}` });
secret('front', FRONT.cert, FRONT.key);
secret('front-2', FRONT.cert, FRONT.key);
const route = (name: string, parent: Record<string, unknown>, host: string, service: string, port: number) =>
  put(model, obj('TLSRoute', name, { parentRefs: [{ name: 'tlsterm-gw', ...parent }], hostnames: [host], rules: [{ backendRefs: [{ name: service, port }] }] }));
route('terminated', {}, 'tls.example.com', 'echo', 3000);
route('passthrough', {}, 'abc.example.com', 'tls-echo', 8443);
route('reencrypted', { sectionName: 'reencrypt' }, 'r.example.org', 'tls-echo', 8443);
put(model, obj('BackendTLSPolicy', 'btls', { targetRefs: [{ group: '', kind: 'Service', name: 'tls-echo', sectionName: 'btls' }], validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'backend-ca' }], hostname: 'abc.example.com' } }));

const listeners = gatewayApiState(model.snapshot(), GA).gateways.get(`${NS}/tlsterm-gw`)!.listeners;
const MIXED = listeners.find((l) => l.name === 'tls-terminate')!.podPort!;
const REENCRYPT = listeners.find((l) => l.name === 'reencrypt')!.podPort!;

const events: string[] = [];
const recorder = { event: (o: KubeObject, type: string, reason: string, _a: string, note: string) => events.push(`${o.kind}/${o.metadata.name} ${type} ${reason}: ${note}`) } as unknown as EventRecorder;
const driver = new NginxDriver(
  { translate: { ...OPTS, listen: LISTEN, ownAddresses: ['127.0.0.1'], gatewayApi: GA }, nginxBinary: '/usr/sbin/nginx', runtimeDir: mkdtempSync(path.join(tmpdir(), 'portico-gw-tlsterm-rt-')), accessLog: path.join(dir, 'access.log'), quietMs: 0, maxWaitMs: 250, shutdownTimeoutMs: 2_000 },
  { model, events: recorder, metrics: new Metrics({ prefix: 'portico' }), log: createLogger('error'), objectFor: () => undefined, controllerObject: () => undefined },
);
const stop = new AbortController();
let running: Promise<void> | undefined;

interface Answer {
  /** The subject CN of the certificate the client was shown. */
  peer: string;
  /** The HTTP response (the echo backends answer the request they received as JSON). */
  body: string;
}

/** An HTTP/1.0 GET over TLS to pod port `port` with server name `sni`, verifying the server's certificate against `ca`. */
function get(port: number, sni: string, ca: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, servername: sni, ca, timeout: 3_000 }, () => {
      s.write(`GET /hello HTTP/1.0\r\nHost: ${sni}\r\n\r\n`);
    });
    let body = '';
    s.setEncoding('utf8');
    s.on('data', (d: string) => (body += d));
    let peer: string | undefined;
    s.on('secureConnect', () => (peer = String(s.getPeerCertificate()?.subject?.CN ?? '')));
    // Closed before the handshake finished (an unknown name, a listener without its certificate): refused.
    s.on('end', () => (peer === undefined ? reject(new Error(`${sni}: closed before the TLS handshake finished`)) : resolve({ peer, body })));
    s.on('timeout', () => s.destroy(new Error('timeout')));
    s.on('error', reject);
  });
}

before(async () => {
  tnet.up();
  await tnet.start('echo', ECHO_PORT, 'echo');
  await tnet.start('tls-echo', TLS_ECHO_PORT, 'tls-echo', { cert: path.join(dir, 'backend.crt'), key: path.join(dir, 'backend.key') });
  running = driver.run(stop.signal);
  await new Promise<void>((r) => driver.onReady(r));
});

after(async () => {
  stop.abort();
  await running;
  await tnet.close();
});

test('Terminate: the listener\'s certificate is served and the plaintext backend gets the bytes (no TLS at the backend)', async () => {
  const before = await tnet.count('echo');
  const r = await until('a terminated connection', () => get(MIXED, 'tls.example.com', FRONT_CA.cert).catch(() => undefined), 10_000, 25);
  assert.equal(r.peer, 'front');
  assert.match(r.body, /^HTTP\/1\.[01] 200/);
  assert.match(r.body, /"url":"\/hello"/);
  assert.equal(await tnet.count('echo'), before + 1, 'the plaintext echo backend answered');
});

test('Mixed: on the same port, a passthrough name reaches the TLS backend undecrypted (its own certificate, the client\'s server name)', async () => {
  const before = await tnet.count('tls-echo');
  const r = await until('a passed-through connection', () => get(MIXED, 'abc.example.com', BACKEND_CA.cert).catch(() => undefined), 10_000, 25);
  assert.equal(r.peer, 'backend', 'the client talks TLS with the backend itself');
  const seen = (await tnet.requests('tls-echo')).slice(before);
  assert.equal(seen.length, 1);
  assert.equal((seen[0] as { tls?: { servername: string | null } }).tls?.servername, 'abc.example.com');
});

test('BackendTLSPolicy: a terminated name is re-encrypted; the backend sees the policy\'s hostname and nginx verifies it with the policy\'s CA', async () => {
  const before = await tnet.count('tls-echo');
  const r = await until('a re-encrypted connection', () => get(REENCRYPT, 'r.example.org', FRONT_CA.cert).catch(() => undefined), 10_000, 25);
  assert.equal(r.peer, 'front', 'terminated with the listener\'s certificate');
  assert.match(r.body, /^HTTP\/1\.[01] 200/);
  const seen = (await tnet.requests('tls-echo')).slice(before);
  assert.equal(seen.length, 1);
  assert.equal((seen[0] as { tls?: { servername: string | null } }).tls?.servername, 'abc.example.com');
});

test('BackendTLSPolicy whose CA did not sign the backend: nginx refuses the backend\'s certificate, nothing reaches the backend', async () => {
  const policy = (ca: string) => put(model, obj('BackendTLSPolicy', 'btls', { targetRefs: [{ group: '', kind: 'Service', name: 'tls-echo', sectionName: 'btls' }], validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: ca }], hostname: 'abc.example.com' } }));
  policy('wrong-ca');
  // The client's handshake with the hop succeeds; the hop's with the backend fails verification, so no answer comes.
  // Ten refusals in a row: until then a worker of the configuration before the reload may still take a connection.
  const refused = async () => {
    for (let i = 0; i < 10; i++) if ((await get(REENCRYPT, 'r.example.org', FRONT_CA.cert).catch(() => undefined))?.body !== '') return false;
    return true;
  };
  await until('the re-encrypted name refused (ten times in a row)', refused, 10_000, 25);
  const before = await tnet.count('tls-echo');
  const r = await get(REENCRYPT, 'r.example.org', FRONT_CA.cert);
  assert.deepEqual(r, { peer: 'front', body: '' });
  assert.equal(await tnet.count('tls-echo'), before, 'no request reached the backend');
  policy('backend-ca');
  await until('verified again', () => get(REENCRYPT, 'r.example.org', FRONT_CA.cert).then((a) => (a.body.startsWith('HTTP/1') ? a : undefined), () => undefined), 10_000, 25);
});

test('an unknown server name is closed on both ports', async () => {
  for (const port of [MIXED, REENCRYPT]) await assert.rejects(get(port, 'unknown.example.com', FRONT_CA.cert), `port ${port}`);
});

test('a Secret whose key is another certificate\'s: that listener\'s names are closed with a Warning on the route; the other ports keep serving', async () => {
  secret('front-2', FRONT.cert, STRANGER.key);
  await until('the Warning', () => events.some((e) => e.startsWith('TLSRoute/reencrypted Warning InvalidCertificate')), 10_000, 25);
  await until('r.example.org closed', () => get(REENCRYPT, 'r.example.org', FRONT_CA.cert).then(() => false, () => true), 10_000, 25);
  const r = await get(MIXED, 'tls.example.com', FRONT_CA.cert);
  assert.match(r.body, /^HTTP\/1\.[01] 200/, 'the terminated name of the Mixed port is still served');
  // The Secret repaired: served again.
  secret('front-2', FRONT.cert, FRONT.key);
  const back = await until('r.example.org served again', () => get(REENCRYPT, 'r.example.org', FRONT_CA.cert).catch(() => undefined), 10_000, 25);
  assert.equal(back.peer, 'front');
});
