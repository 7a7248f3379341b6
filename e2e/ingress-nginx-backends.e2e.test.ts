// ingress-nginx's backend-side annotations end to end, by their behaviour: real apiserver (RBAC on, Portico as its
// ServiceAccount, Secrets read by its own informers), real nginx, echo pods in the pod network namespace — HTTPS
// and HTTP/2 (gRPC) pods, pods whose address drops every packet, a Service cluster IP forwarded as kube-proxy would:
//   backend-protocol HTTPS / GRPC / GRPCS    the pod speaks TLS, cleartext HTTP/2 (gRPC) or gRPC over TLS
//   proxy-ssl-secret / -verify / -verify-depth / -name / -server-name / -protocols / -ciphers
//                                           client certificate to the backend, verification of its certificate and
//                                           name, SNI, TLS versions and ciphers offered
//   ssl-passthrough                         (with --enable-ssl-passthrough) the client's TLS reaches the pod undecrypted
//   service-upstream                        nginx's upstream is the Service's cluster IP, not the pod
//   proxy-connect-timeout, proxy-send-timeout, proxy-next-upstream-timeout
//   proxy-buffering, proxy-buffer-size, proxy-buffers-number, proxy-max-temp-file-size, client-body-buffer-size,
//   proxy-request-buffering
//
// Isolation: an IngressClass and hosts of this run, Portico on its own ports (54180-54183).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Transform } from 'node:stream';
import winston from 'winston';
import { admin, ensureCluster, ownIngressClass, uniqueNamespace } from './harness/cluster.ts';
import { addPod, addServiceVip, deleteNamespace, podRequests, type AddPodOptions } from './harness/pods.ts';
import { request, tlsRequest, until, type Reply } from './harness/http.ts';
import { startPortico, type RunningPortico } from './harness/portico.ts';
import { createIngress } from './harness/objects.ts';
import { Pki } from './harness/pki.ts';

let p: RunningPortico;
let ns: string;
const RUN = Date.now().toString(36);
const H = (name: string) => `${name}.be${RUN}.test`;
const N = 'nginx.ingress.kubernetes.io/';
let CLASS = '';
let removeClass: (() => Promise<void>) | undefined;
const pki = new Pki();
const b64 = (s: string) => Buffer.from(s).toString('base64');
const cleanups: (() => Promise<void>)[] = [];
/** nginx's error log lines (forwarded into Portico's log at warn level), captured for the buffering tests. */
const nginxLog: string[] = [];

/** A Service selecting app=<app>, port 80 (or `port`) → the pods' `targetPort` (default 8080). */
function service(name: string, app: string, port = 80, targetPort = 8080): Promise<{ spec: { clusterIP: string } }> {
  return admin().request('POST', `/api/v1/namespaces/${ns}/services`, {
    body: { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { selector: { app }, ports: [{ name: 'http', port, targetPort }] } },
  });
}
const secret = (name: string, data: Record<string, string>, type = 'Opaque') =>
  admin().request('POST', `/api/v1/namespaces/${ns}/secrets`, { body: { apiVersion: 'v1', kind: 'Secret', type, metadata: { name }, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])) } });
const ingress = (name: string, host: string, annotations: Record<string, string>, o: { svc?: string; tls?: string; path?: string } = {}) => createIngress(ns, CLASS, name, host, annotations, o);
const get = (host: string, p0: string, o: { headers?: Record<string, string>; method?: string; body?: string | Buffer; timeoutMs?: number } = {}): Promise<Reply> => request(p.httpPort, host, p0, o);
/** A Service and one pod of its own for a scenario (balancing and TLS settings are per Service port). */
async function backend(name: string, o: AddPodOptions = {}, port = 80): Promise<{ ip: string; clusterIP: string }> {
  const svc = await service(name, name, port, o.port ?? 8080);
  const ip = await addPod(ns, `${name}-1`, { labels: { app: name }, ...o });
  return { ip, clusterIP: svc.spec.clusterIP };
}
// A new combination of nginx-only settings (a directive profile) is applied with a reload: wait until none is pending.
const settled = () => until('no structural sync pending', () => p.gateway.structural.state === 'idle' && !p.gateway.structural.dirty);
const accessLog = () => { try { return readFileSync(path.join(p.config['runtime-dir'], 'access.log'), 'utf8'); } catch { return ''; } };
/** The access-log line of the one request whose path holds `marker` (the log is flushed every second). */
const logLine = (marker: string) => until(`access log line for ${marker}`, () => accessLog().split('\n').find((l) => l.includes(marker)), 10_000, 200);

/** An HTTPS request to Portico's TLS port with this server name. */
const tlsGet = (servername: string, p0 = '/') => tlsRequest(p.httpsPort, servername, { path: p0 });

/** One gRPC call over HTTP/2 with TLS to Portico (ALPN h2): the answer's status, grpc-status and first message. */
function grpcCall(host: string, method: string): Promise<{ status: number; grpcStatus?: string; message?: string; error?: string }> {
  return new Promise((resolve) => {
    const session = http2.connect(`https://127.0.0.1:${p.httpsPort}`, { servername: host, rejectUnauthorized: false });
    const done = (r: { status: number; grpcStatus?: string; message?: string; error?: string }) => { session.close(); resolve(r); };
    session.on('error', (e) => done({ status: 0, error: String(e) }));
    const req = session.request({ ':method': 'POST', ':path': method, ':authority': host, 'content-type': 'application/grpc', te: 'trailers' });
    let status = 0;
    let grpcStatus: string | undefined;
    const chunks: Buffer[] = [];
    req.on('response', (h) => { status = Number(h[':status']); if (h['grpc-status'] !== undefined) grpcStatus = String(h['grpc-status']); });
    req.on('trailers', (t) => { grpcStatus = String(t['grpc-status']); });
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const buf = Buffer.concat(chunks);
      const message = buf.length >= 5 ? buf.subarray(5, 5 + buf.readUInt32BE(1)).toString('utf8') : undefined;
      done({ status, grpcStatus, message });
    });
    req.on('error', (e) => done({ status: 0, error: String(e) }));
    const msg = Buffer.from('hello');
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(msg.length, 1);
    req.end(Buffer.concat([prefix, msg]));
  });
}

before(async () => {
  await ensureCluster();
  ns = await uniqueNamespace('be');
  const cls = await ownIngressClass('be');
  CLASS = cls.name;
  removeClass = cls.remove;
  p = await startPortico(54180, [...cls.flags, '--enable-ssl-passthrough']);
  // nginx's error log reaches Portico's log at warn level; the suite's console stays at error.
  for (const t of p.manager.log.transports) t.level = 'error';
  p.manager.log.level = 'warn';
  p.manager.log.add(new winston.transports.Stream({
    level: 'warn',
    stream: new Transform({ objectMode: true, transform(info: { message?: string }, _e, cb) { if (typeof info.message === 'string') nginxLog.push(info.message); cb(); } }),
  }));
  await until('portico ready', async () => (await request(p.healthPort, 'x', '/readyz')).status === 200);
  // Certificates: the backends' CA (and an intermediate under it), another CA, Portico's client certificate for the
  // backends, and the certificate Portico serves for the gRPC hosts.
  pki.ca('backend-ca').ca('backend-int', 'backend-ca').ca('backend-int2', 'backend-int').ca('other-ca').client('portico-client', 'backend-ca', 'portico-client');
  pki.ca('front-ca').server('front', 'front-ca', H('grpc')).server('front-grpcs', 'front-ca', H('grpcs'));
  await secret('front-tls', { 'tls.crt': pki.read('front.crt'), 'tls.key': pki.read('front.key') }, 'kubernetes.io/tls');
  await secret('front-grpcs-tls', { 'tls.crt': pki.read('front-grpcs.crt'), 'tls.key': pki.read('front-grpcs.key') }, 'kubernetes.io/tls');
  await secret('to-backend', { 'tls.crt': pki.read('portico-client.crt'), 'tls.key': pki.read('portico-client.key'), 'ca.crt': pki.read('backend-ca.crt') });
});

after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  await p?.stop();
  if (ns) await deleteNamespace(ns);
  await removeClass?.();
});

/** An HTTPS echo pod whose certificate names `dns`, issued by `issuer` (chain: the certificate and `extraChain`). */
function tlsPod(name: string, dns: string, issuer = 'backend-ca', extra: Partial<NonNullable<AddPodOptions['tls']>> = {}, extraChain: string[] = []): AddPodOptions {
  pki.server(`${name}-srv`, issuer, dns);
  return { port: 8443, tls: { cert: pki.chain(`${name}-srv`, ...extraChain), key: pki.read(`${name}-srv.key`), requestCert: true, ...extra } };
}

describe('ingress-nginx backend annotations (drop-in)', () => {
  test('backend-protocol HTTPS: nginx speaks TLS to the pod (without it the TLS pod cannot answer: 502)', async () => {
    await backend('tlsb', tlsPod('tlsb', `tlsb.${ns}.svc`));
    await ingress('https-be', H('https-be'), { [`${N}backend-protocol`]: 'HTTPS' }, { svc: 'tlsb' });
    await ingress('plain-be', H('plain-be'), {}, { svc: 'tlsb' });
    const r = await until('served over TLS', async () => { const x = await get(H('https-be'), '/'); return x.status === 200 && x; }, 30_000);
    assert.match(r.json<{ tls: { protocol: string } }>().tls.protocol, /^TLSv1\.[23]$/);
    const plain = await until('plain answered', async () => { const x = await get(H('plain-be'), '/'); return x.status !== 404 && x; });
    assert.equal(plain.status, 502, 'plain HTTP to a TLS pod');
  });

  test('backend-protocol GRPC: a gRPC call over HTTP/2 reaches a cleartext HTTP/2 pod (grpc-status 0, the pod saw HTTP/2 and the method)', async () => {
    await backend('grpcb', { h2c: true });
    await ingress('grpc', H('grpc'), { [`${N}backend-protocol`]: 'GRPC' }, { svc: 'grpcb', tls: 'front-tls' });
    const r = await until('gRPC answered', async () => { const x = await grpcCall(H('grpc'), '/echo.Echo/Say'); return x.grpcStatus === '0' && x; }, 30_000);
    assert.equal(r.status, 200);
    const seen = JSON.parse(r.message ?? '{}') as { httpVersion: string; path: string; headers: Record<string, string> };
    assert.equal(seen.httpVersion, '2.0');
    assert.equal(seen.path, '/echo.Echo/Say');
    assert.equal(seen.headers['content-type'], 'application/grpc');
  });

  test('backend-protocol GRPCS: the same call reaches a gRPC pod over TLS', async () => {
    await backend('grpcsb', tlsPod('grpcsb', `grpcsb.${ns}.svc`));
    await ingress('grpcs', H('grpcs'), { [`${N}backend-protocol`]: 'GRPCS' }, { svc: 'grpcsb', tls: 'front-grpcs-tls' });
    const r = await until('gRPC over TLS answered', async () => { const x = await grpcCall(H('grpcs'), '/echo.Echo/Secure'); return x.grpcStatus === '0' && x; }, 30_000);
    const seen = JSON.parse(r.message ?? '{}') as { httpVersion: string; path: string; tls: { alpn: string } };
    assert.equal(seen.httpVersion, '2.0');
    assert.equal(seen.path, '/echo.Echo/Secure');
    assert.equal(seen.tls.alpn, 'h2');
  });

  test('proxy-ssl-secret: nginx presents the Secret\'s client certificate to the HTTPS pod; proxy-ssl-verify on accepts a pod certificate of ca.crt for <service>.<namespace>.svc and refuses another CA\'s (502)', async () => {
    await backend('good', tlsPod('good', `good.${ns}.svc`));
    await backend('rogue', tlsPod('rogue', `rogue.${ns}.svc`, 'other-ca'));
    const ann = { [`${N}backend-protocol`]: 'HTTPS', [`${N}proxy-ssl-secret`]: `${ns}/to-backend`, [`${N}proxy-ssl-verify`]: 'on' };
    await ingress('verify-good', H('verify-good'), ann, { svc: 'good' });
    await ingress('verify-rogue', H('verify-rogue'), ann, { svc: 'rogue' });
    const r = await until('verified backend served', async () => { const x = await get(H('verify-good'), '/'); return x.status === 200 && x; }, 30_000);
    assert.equal(r.json<{ tls: { peerCN: string; peerVerified: boolean } }>().tls.peerCN, 'portico-client', 'the client certificate of proxy-ssl-secret');
    const bad = await until('rogue answered', async () => { const x = await get(H('verify-rogue'), '/'); return x.status !== 404 && x; });
    assert.equal(bad.status, 502, 'a certificate of another CA is refused');
  });

  test('proxy-ssl-name + proxy-ssl-server-name: the certificate is checked against that name, which is also sent as SNI; without server-name no SNI', async () => {
    await backend('named', tlsPod('named', 'api.internal.example'));
    const base = { [`${N}backend-protocol`]: 'HTTPS', [`${N}proxy-ssl-secret`]: 'to-backend', [`${N}proxy-ssl-verify`]: 'on' };
    await ingress('name-default', H('name-default'), base, { svc: 'named' });
    await ingress('name-set', H('name-set'), { ...base, [`${N}proxy-ssl-name`]: 'api.internal.example', [`${N}proxy-ssl-server-name`]: 'on' }, { svc: 'named' });
    await ingress('name-nosni', H('name-nosni'), { ...base, [`${N}proxy-ssl-name`]: 'api.internal.example' }, { svc: 'named' });
    const r = await until('named backend served', async () => { const x = await get(H('name-set'), '/'); return x.status === 200 && x; }, 30_000);
    assert.equal(r.json<{ tls: { sni: string } }>().tls.sni, 'api.internal.example');
    const nosni = await until('served without SNI', async () => { const x = await get(H('name-nosni'), '/'); return x.status === 200 && x; });
    assert.equal(nosni.json<{ tls: { sni: string | null } }>().tls.sni, null);
    const def = await until('default name answered', async () => { const x = await get(H('name-default'), '/'); return x.status !== 404 && x; });
    assert.equal(def.status, 502, `the default name named.${ns}.svc is not the certificate's`);
  });

  test('proxy-ssl-verify-depth: a pod certificate two intermediate CAs below ca.crt fails at depth 1 and passes at depth 2 (OpenSSL counts the intermediates)', async () => {
    await backend('deep', tlsPod('deep', `deep.${ns}.svc`, 'backend-int2', {}, ['backend-int2', 'backend-int']));
    const base = { [`${N}backend-protocol`]: 'HTTPS', [`${N}proxy-ssl-secret`]: 'to-backend', [`${N}proxy-ssl-verify`]: 'on' };
    await ingress('depth1', H('depth1'), { ...base, [`${N}proxy-ssl-verify-depth`]: '1' }, { svc: 'deep' });
    await ingress('depth2', H('depth2'), { ...base, [`${N}proxy-ssl-verify-depth`]: '2' }, { svc: 'deep' });
    await until('depth 2 served', async () => (await get(H('depth2'), '/')).status === 200, 30_000);
    const shallow = await until('depth 1 answered', async () => { const x = await get(H('depth1'), '/'); return x.status !== 404 && x; });
    assert.equal(shallow.status, 502);
  });

  test('proxy-ssl-protocols and proxy-ssl-ciphers: a TLS 1.2-only pod with one cipher is reached only when the offer includes both', async () => {
    await backend('old', tlsPod('old', `old.${ns}.svc`, 'backend-ca', { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES128-GCM-SHA256' }));
    const base = { [`${N}backend-protocol`]: 'HTTPS', [`${N}proxy-ssl-secret`]: 'to-backend' };
    await ingress('tls12', H('tls12'), { ...base, [`${N}proxy-ssl-protocols`]: 'TLSv1.2', [`${N}proxy-ssl-ciphers`]: 'ECDHE-ECDSA-AES128-GCM-SHA256' }, { svc: 'old' });
    await ingress('tls13', H('tls13'), { ...base, [`${N}proxy-ssl-protocols`]: 'TLSv1.3' }, { svc: 'old' });
    await ingress('cipher', H('cipher'), { ...base, [`${N}proxy-ssl-protocols`]: 'TLSv1.2', [`${N}proxy-ssl-ciphers`]: 'ECDHE-ECDSA-AES256-GCM-SHA384' }, { svc: 'old' });
    const r = await until('TLS 1.2 served', async () => { const x = await get(H('tls12'), '/'); return x.status === 200 && x; }, 30_000);
    assert.deepEqual([r.json<{ tls: { protocol: string; cipher: string } }>().tls.protocol, r.json<{ tls: { cipher: string } }>().tls.cipher], ['TLSv1.2', 'ECDHE-ECDSA-AES128-GCM-SHA256']);
    await settled();
    assert.equal((await get(H('tls13'), '/')).status, 502, 'TLS 1.3 only: no common version');
    assert.equal((await get(H('cipher'), '/')).status, 502, 'no common cipher');
  });

  test('ssl-passthrough (--enable-ssl-passthrough): the client\'s TLS goes undecrypted to the pod, which presents its own certificate; other hosts are still terminated by Portico', async () => {
    await backend('pass', tlsPod('pass', H('pass')));
    await ingress('pass', H('pass'), { [`${N}ssl-passthrough`]: 'true' }, { svc: 'pass' });
    const r = await until('passthrough served', async () => { const x = await tlsGet(H('pass'), '/through'); return x.status === 200 && x; }, 30_000);
    assert.equal(r.peerCN, H('pass'), 'the pod\'s own certificate');
    const seen = JSON.parse(r.body) as { tls: { sni: string }; path: string };
    assert.equal(seen.tls.sni, H('pass'));
    assert.equal(seen.path, '/through');
    const other = await until('terminated host served', async () => { const x = await grpcCall(H('grpc'), '/echo.Echo/Again'); return x.grpcStatus === '0' && x; });
    assert.equal(other.status, 200);
  });

  test('service-upstream: nginx proxies to the Service\'s cluster IP and port (kube-proxy\'s job), not to the pod', async () => {
    const { ip, clusterIP } = await backend('viaip');
    cleanups.push(await addServiceVip(clusterIP, 80, ip, 8080));
    await service('viapods', 'viaip'); // the same pod through another Service (balancing is per Service port)
    await ingress('svc-up', H('svc-up'), { [`${N}service-upstream`]: 'true' }, { svc: 'viaip' });
    await ingress('svc-pods', H('svc-pods'), {}, { svc: 'viapods' });
    await until('served through the cluster IP', async () => (await get(H('svc-up'), '/')).status === 200, 30_000);
    await until('served through the pod', async () => (await get(H('svc-pods'), '/')).status === 200);
    assert.equal((await get(H('svc-up'), `/up-${RUN}`)).status, 200);
    assert.equal((await get(H('svc-pods'), `/pods-${RUN}`)).status, 200);
    // ingress-nginx's default format: … $upstream_addr $upstream_response_length $upstream_response_time $upstream_status $req_id
    assert.match(await logLine(`/up-${RUN}`), new RegExp(` ${clusterIP.replace(/\./g, '\\.')}:80 \\d+ [\\d.]+ 200 `));
    assert.match(await logLine(`/pods-${RUN}`), new RegExp(` ${ip.replace(/\./g, '\\.')}:8080 \\d+ [\\d.]+ 200 `));
  });

  test('proxy-connect-timeout: a pod that never answers the connection gets 504 after that many seconds, not the default 5', async () => {
    await backend('hole', { blackhole: true });
    await ingress('connect', H('connect'), { [`${N}proxy-connect-timeout`]: '1' }, { svc: 'hole' });
    await until('routed (not 404)', async () => (await get(H('connect'), '/', { timeoutMs: 15_000 })).status !== 404, 30_000);
    const t0 = Date.now();
    const r = await get(H('connect'), '/', { timeoutMs: 15_000 });
    const took = Date.now() - t0;
    assert.equal(r.status, 504);
    assert.ok(took >= 900 && took < 4000, `took ${took} ms`);
  });

  test('proxy-next-upstream-timeout: with two silent pods and a 1 s connect timeout, the retry limit of 1 s leaves one try, without it both are tried', async () => {
    await service('holes', 'holes');
    await addPod(ns, 'holes-1', { labels: { app: 'holes' }, blackhole: true });
    await addPod(ns, 'holes-2', { labels: { app: 'holes' }, blackhole: true });
    await ingress('retry-capped', H('retry-capped'), { [`${N}proxy-connect-timeout`]: '1', [`${N}proxy-next-upstream-timeout`]: '1' }, { svc: 'holes' });
    await ingress('retry-all', H('retry-all'), { [`${N}proxy-connect-timeout`]: '1' }, { svc: 'holes' });
    await until('both pods in the backend', async () => (await admin().request<{ items: { endpoints: unknown[] }[] }>('GET', `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, { query: { labelSelector: 'kubernetes.io/service-name=holes' } })).items.reduce((n, s) => n + (s.endpoints?.length ?? 0), 0) === 2, 30_000);
    await until('routed', async () => (await get(H('retry-all'), '/', { timeoutMs: 15_000 })).status === 504, 30_000);
    await until('routed', async () => (await get(H('retry-capped'), '/', { timeoutMs: 15_000 })).status === 504, 30_000);
    assert.equal((await get(H('retry-capped'), `/capped-${RUN}`, { timeoutMs: 15_000 })).status, 504);
    assert.equal((await get(H('retry-all'), `/all-${RUN}`, { timeoutMs: 15_000 })).status, 504);
    const tries = (line: string) => (line.match(/198\.\d+\.\d+\.\d+:8080/g) ?? []).length;
    assert.equal(tries(await logLine(`/capped-${RUN}`)), 1);
    assert.equal(tries(await logLine(`/all-${RUN}`)), 2);
  });

  test('proxy-send-timeout: a pod that stops reading the request body gets 504 once nginx could not send for that many seconds', async () => {
    await backend('stall');
    await ingress('send', H('send'), { [`${N}proxy-send-timeout`]: '1', [`${N}proxy-read-timeout`]: '120', [`${N}proxy-body-size`]: '64m' }, { svc: 'stall' });
    await until('routed', async () => (await get(H('send'), '/')).status === 200, 30_000);
    await settled();
    const body = Buffer.alloc(48 << 20, 0x61); // more than the kernel buffers between nginx and the pod hold
    const t0 = Date.now();
    const r = await get(H('send'), '/?noread=1', { method: 'POST', body, timeoutMs: 30_000 });
    assert.equal(r.status, 504, r.error ?? r.body.slice(0, 200));
    assert.ok(Date.now() - t0 < 20_000, 'well before the 60 s default and the 120 s read timeout');
  });

  test('proxy-buffer-size: an answer whose headers exceed the default 4k is a 502, with 16k it passes', async () => {
    await backend('bighdr');
    await ingress('hdr-default', H('hdr-default'), {}, { svc: 'bighdr' });
    await ingress('hdr-16k', H('hdr-16k'), { [`${N}proxy-buffer-size`]: '16k' }, { svc: 'bighdr' });
    await until('routed', async () => (await get(H('hdr-16k'), '/')).status === 200, 30_000);
    await settled();
    const ok = await get(H('hdr-16k'), '/?header-size=6000');
    assert.equal(ok.status, 200);
    assert.equal(String(ok.headers['x-big']).length, 6000);
    assert.equal((await get(H('hdr-default'), '/?header-size=6000')).status, 502);
  });

  /** Sends a GET on a raw socket and reads nothing until `until` resolves, then reads the whole answer. */
  async function slowClient(host: string, p0: string, waitFor: () => Promise<unknown>): Promise<number> {
    const sock = net.connect(p.httpPort, '127.0.0.1');
    sock.pause();
    sock.write(`GET ${p0} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    await waitFor();
    let bytes = 0;
    sock.on('data', (c: Buffer) => (bytes += c.length));
    sock.resume();
    await new Promise((r) => sock.on('close', r));
    return bytes;
  }
  const spilled = (marker: string) => nginxLog.some((l) => l.includes('buffered to a temporary file') && l.includes(marker));

  test('proxy-buffering "on": nginx takes a whole 48 MB answer from the pod while its client reads nothing; "off" (the default) takes only what the client consumes', async () => {
    await backend('hold');
    const bufs = { [`${N}proxy-buffer-size`]: '64k', [`${N}proxy-buffers-number`]: '1024' }; // 64 MB of buffers
    await ingress('buf-on', H('buf-on'), { ...bufs, [`${N}proxy-buffering`]: 'on' }, { svc: 'hold' });
    await ingress('buf-off', H('buf-off'), bufs, { svc: 'hold' });
    for (const h of ['buf-on', 'buf-off']) await until(`${h} routed`, async () => (await get(H(h), '/')).status === 200, 30_000);
    await settled();
    const size = 48 << 20; // more than the kernel's socket buffers between the pod, nginx and the client hold
    const answered = async (marker: string) => (await podRequests(ns, 'hold-1')).find((r) => r.path.includes(marker))?.answered;
    let offAnsweredEarly: boolean | undefined;
    const off = slowClient(H('buf-off'), `/off-${RUN}?size=${size}`, async () => {
      await until('the buffered answer taken whole from the pod', () => answered(`on-${RUN}`), 20_000, 100);
      offAnsweredEarly = (await until('the unbuffered request reached the pod', async () => (await podRequests(ns, 'hold-1')).find((r) => r.path.includes(`off-${RUN}`)), 10_000, 50)).answered;
    });
    const on = slowClient(H('buf-on'), `/on-${RUN}?size=${size}`, () => until('the unbuffered one checked', () => offAnsweredEarly !== undefined, 25_000, 50));
    const [offBytes, onBytes] = await Promise.all([off, on]);
    assert.equal(offAnsweredEarly, false, 'unbuffered: the pod is held back by the client that does not read');
    assert.ok(onBytes > size && offBytes > size);
    assert.equal(await answered(`off-${RUN}`), true);
  });

  test('proxy-buffers-number / proxy-max-temp-file-size: with buffering on, a 16 MB answer to a client that does not read spills to a temporary file; 1024 buffers hold it in memory; max-temp-file-size 0 forbids the file', async () => {
    await backend('large');
    await ingress('spill', H('spill'), { [`${N}proxy-buffering`]: 'on' }, { svc: 'large' });
    await ingress('membufs', H('membufs'), { [`${N}proxy-buffering`]: 'on', [`${N}proxy-buffer-size`]: '64k', [`${N}proxy-buffers-number`]: '1024' }, { svc: 'large' });
    await ingress('nofile', H('nofile'), { [`${N}proxy-buffering`]: 'on', [`${N}proxy-max-temp-file-size`]: '0' }, { svc: 'large' });
    for (const h of ['spill', 'membufs', 'nofile']) await until(`${h} routed`, async () => (await get(H(h), '/')).status === 200, 30_000);
    await settled();
    const size = 16 << 20;
    const spillBytes = await slowClient(H('spill'), `/spill-${RUN}?size=${size}`, () => until('the answer spilled to a temporary file', () => spilled(`spill-${RUN}`), 20_000, 100));
    assert.ok(spillBytes > size);
    // The two others: the pod's whole answer is sent (its request complete) before the client reads a byte.
    const podDone = (marker: string) => () => until(`the pod answered ${marker}`, async () => (await podRequests(ns, 'large-1')).some((r) => r.path.includes(marker) && r.complete), 20_000, 100);
    assert.ok((await slowClient(H('membufs'), `/mem-${RUN}?size=${size}`, podDone(`mem-${RUN}`))) > size);
    assert.ok((await slowClient(H('nofile'), `/nofile-${RUN}?size=${size}`, podDone(`nofile-${RUN}`))) > size);
    assert.ok(!spilled(`mem-${RUN}`), '1024 × 64k buffers hold 16 MB');
    assert.ok(!spilled(`nofile-${RUN}`), 'proxy-max-temp-file-size 0: no temporary file');
  });

  test('client-body-buffer-size: a 32 KB request body goes to a temporary file with the default 8k buffer and stays in memory with 64k', async () => {
    await backend('bodies');
    await ingress('body-default', H('body-default'), {}, { svc: 'bodies' });
    await ingress('body-64k', H('body-64k'), { [`${N}client-body-buffer-size`]: '64k' }, { svc: 'bodies' });
    await until('routed', async () => (await get(H('body-64k'), '/')).status === 200, 30_000);
    await settled();
    const body = Buffer.alloc(32 << 10, 0x62);
    const a = await get(H('body-default'), `/bd-${RUN}`, { method: 'POST', body });
    const b = await get(H('body-64k'), `/b64-${RUN}`, { method: 'POST', body });
    assert.deepEqual([a.status, a.json<{ bodyBytes: number }>().bodyBytes, b.status, b.json<{ bodyBytes: number }>().bodyBytes], [200, 32 << 10, 200, 32 << 10]);
    await until('the default-buffer body was written to a file', () => nginxLog.some((l) => l.includes('client request body is buffered to a temporary file') && l.includes(`bd-${RUN}`)), 10_000, 100);
    assert.ok(!nginxLog.some((l) => l.includes('client request body is buffered') && l.includes(`b64-${RUN}`)));
  });

  test('proxy-request-buffering "off": the pod sees the request while the client is still sending its body; "on" (the default) only once it is complete', async () => {
    await backend('upload');
    await ingress('rb-off', H('rb-off'), { [`${N}proxy-request-buffering`]: 'off' }, { svc: 'upload' });
    await ingress('rb-on', H('rb-on'), {}, { svc: 'upload' });
    await until('routed', async () => (await get(H('rb-off'), '/')).status === 200, 30_000);
    await until('routed', async () => (await get(H('rb-on'), '/')).status === 200);
    await settled();
    const half = (host: string, marker: string) => {
      const sock = net.connect(p.httpPort, '127.0.0.1');
      sock.write(`POST /${marker} HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 2000\r\nConnection: close\r\n\r\n${'x'.repeat(1000)}`);
      return sock;
    };
    const seen = async (marker: string) => (await podRequests(ns, 'upload-1')).find((r) => r.path.includes(marker));
    const on = half(H('rb-on'), `on-${RUN}`);
    const off = half(H('rb-off'), `off-${RUN}`);
    const early = await until('the streamed request reached the pod', () => seen(`off-${RUN}`), 10_000, 50);
    assert.equal(early.complete, false);
    assert.equal(await seen(`on-${RUN}`), undefined, 'the buffered one has not reached the pod (sent at the same time)');
    const answered = (s: net.Socket) => new Promise<string>((r) => { let t = ''; s.on('data', (c: Buffer) => (t += c)); s.on('close', () => r(t)); });
    const [aOn, aOff] = [answered(on), answered(off)];
    // write, not end: nginx takes a client's half-close while it waits for the backend as an abort (499).
    on.write('y'.repeat(1000));
    off.write('y'.repeat(1000));
    assert.match(await aOn, /^HTTP\/1\.1 200/);
    assert.match(await aOff, /^HTTP\/1\.1 200/);
    assert.equal((await seen(`on-${RUN}`))?.bodyBytes, 2000);
  });
});
