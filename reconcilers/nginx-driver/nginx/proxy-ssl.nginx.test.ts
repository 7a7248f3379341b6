// ingress-nginx's proxy-ssl-* annotations inside a real nginx: HTTPS backends in this file's own network namespace
// (testnet.test-helpers.ts, subnet 245) with a certificate a test CA signed for "api.default.svc" and "backend.example.internal".
// One requires a client certificate signed by that CA, one speaks TLS 1.2 at most. Every configuration comes from
// the pure translation of an Ingress and its proxy-ssl-secret, so what is tested is what the controller renders:
// the client certificate and CA files written by digest before nginx -t; the client certificate presented (200)
// or not (502); verification against the right CA (200) or another (502, the backend sees nothing); any certificate
// accepted with verification off; the SNI the backend sees; protocols the backend does not speak (502); a missing
// Secret answered 503 without reaching the backend.
// Ports 32100-32109 belong to this file: nginx 32100-32102, the backends 32103-32104.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import winston from 'winston';
import type { GatewayConfig } from '../../config/types.ts';
import { normalizeIngress } from '../../model/normalize.ts';
import { diffConfig, structureChecksum } from '../../translate/diff.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { issue, makeCa, proxySslData, type Pem } from '../../translate/pki.test-helpers.ts';
import { translate } from '../../translate/translate.ts';
import { DynamicClient } from './dynamic.ts';
import { stopLive } from './live.test-helpers.ts';
import { NginxProcess } from './process.ts';
import { renderNginxConf, runtimePaths, writeClientCertificates, writeTrustedCas } from './render.ts';
import { TestNet, type Seen } from './testnet.test-helpers.ts';

const LISTEN = { httpPort: 32100, httpsPort: 32101, statusPort: 32102, address: '127.0.0.1' };
const MTLS_PORT = 32103;
const TLS12_PORT = 32104;
const net = new TestNet(245);
const dir = mkdtempSync(path.join(tmpdir(), 'portico-pssl-'));
const dynamic = new DynamicClient();
const logger = winston.createLogger({ level: 'error', transports: [new winston.transports.Console({ silent: true })] });
const nginx = new NginxProcess({ binary: '/usr/sbin/nginx', runtime: runtimePaths(path.join(dir, 'rt')), shutdownTimeoutMs: 2_000 }, dynamic, logger);

const ca = makeCa(dir, 'test-ca');
const otherCa = makeCa(dir, 'other-ca');
const server = issue(dir, ca, 'backend', ['api.default.svc', 'api12.default.svc', 'backend.example.internal']);
const client = issue(dir, ca, 'portico-client');
/** A client certificate the backend does not trust. */
const stranger = issue(dir, otherCa, 'stranger');

const A = 'nginx.ingress.kubernetes.io/';

/** The configuration the controller renders for one Ingress to Service `service` with these annotations and Secrets. */
function configWith(annotations: Record<string, string>, secrets: Record<string, { client?: Pem; ca?: Pem }>, service: 'api' | 'api12' = 'api'): GatewayConfig {
  const m = modelOf({
    services: [svc('api', [{ name: 'https', port: 443, targetPort: MTLS_PORT }]), svc('api12', [{ name: 'https', port: 443, targetPort: TLS12_PORT }])],
    slices: [slice('api-1', 'api', [{ name: 'https', port: MTLS_PORT }], [{ ip: net.ip }]), slice('api12-1', 'api12', [{ name: 'https', port: TLS12_PORT }], [{ ip: net.ip }])],
  });
  const r = normalizeIngress(ing('app', { rules: [rule('app.example.com', [{ path: '/', backend: svcRef(service, 443) }])] }, { annotations: { [`${A}backend-protocol`]: 'HTTPS', ...annotations } }), (k) => {
    const s = secrets[k];
    return s ? { data: proxySslData(s) } : undefined;
  });
  assert.ok(r.ok);
  m.setIngress(r.ingress);
  return translate(m.snapshot(), { ...OPTS, listen: LISTEN }).config;
}

let running: GatewayConfig | undefined;
async function apply(next: GatewayConfig): Promise<void> {
  const checksum = structureChecksum(next.structure);
  writeTrustedCas(next.structure, nginx.runtime);
  writeClientCertificates(next.structure, nginx.runtime);
  const v = await nginx.writeValidated(renderNginxConf(next.structure, nginx.runtime, checksum));
  assert.ok(v.ok, v.output);
  if (nginx.isRunning()) assert.ok(await nginx.reload(checksum));
  else {
    nginx.start();
    assert.ok(await nginx.waitLive(checksum));
  }
  await dynamic.push(diffConfig(nginx.isRunning() && running ? running : null, next).delta);
  running = next;
}

let n = 0;
/** A request through nginx to a path of its own; what the backend recorded for it (undefined: it saw nothing). */
async function get(backend: 'mtls' | 'tls12'): Promise<{ status: number; body: string; seen: Seen | undefined }> {
  const url = `/req-${++n}`;
  const r = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: LISTEN.httpPort, path: url, headers: { host: 'app.example.com' }, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
  const seen = (await net.requests(backend)).find((x) => x.url === url);
  return { ...r, seen };
}

before(async () => {
  net.up();
  await net.start('mtls', MTLS_PORT, 'tls-echo', { cert: server.certFile, key: server.keyFile, clientCa: ca.certFile });
  await net.start('tls12', TLS12_PORT, 'tls-echo', { cert: server.certFile, key: server.keyFile, maxTlsVersion: 'TLSv1.2' });
  nginx.prepare();
});
after(() => stopLive(nginx, dynamic, net));

test('a backend that requires a client certificate: 200 with proxy-ssl-secret\'s, 502 without one or with one it does not trust', async () => {
  await apply(configWith({ [`${A}proxy-ssl-secret`]: 'default/backend-tls' }, { 'default/backend-tls': { client } }));
  let r = await get('mtls');
  assert.equal(r.status, 200, r.body);
  assert.equal(r.seen?.tls?.clientCN, 'portico-client', 'the backend saw proxy-ssl-secret\'s certificate');
  assert.equal(r.seen?.tls?.servername, null, 'no SNI by default (proxy-ssl-server-name off)');
  // The forwarded headers reach an HTTPS backend too (its upstream block is wrapped as portico_upstream is).
  const h = r.seen?.headers ?? {};
  assert.deepEqual([h['x-forwarded-for'], h['x-real-ip'], h['x-forwarded-proto'], h['x-forwarded-host'], h['x-scheme']], ['127.0.0.1', '127.0.0.1', 'http', 'app.example.com', 'http']);
  assert.match(String(h['x-request-id']), /^[0-9a-f]{32}$/);

  await apply(configWith({}, {}));
  r = await get('mtls');
  assert.equal(r.status, 502, 'without a client certificate the handshake fails');
  assert.equal(r.seen, undefined);

  await apply(configWith({ [`${A}proxy-ssl-secret`]: 'default/backend-tls' }, { 'default/backend-tls': { client: stranger } }));
  r = await get('mtls');
  assert.equal(r.status, 502);
  assert.equal(r.seen, undefined);
});

test('proxy-ssl-verify on: 200 against the CA that signed the backend, 502 against another (never proxied unverified)', async () => {
  const verify = { [`${A}proxy-ssl-secret`]: 'default/backend-tls', [`${A}proxy-ssl-verify`]: 'on' };
  await apply(configWith(verify, { 'default/backend-tls': { client, ca } }));
  let r = await get('mtls');
  assert.equal(r.status, 200, r.body);
  assert.equal(r.seen?.tls?.clientCN, 'portico-client');

  await apply(configWith(verify, { 'default/backend-tls': { client, ca: otherCa } }));
  r = await get('mtls');
  assert.equal(r.status, 502);
  assert.equal(r.seen, undefined, 'the request never reached the backend');

  // The name verified must be one the certificate names (default: api.default.svc, which it does).
  await apply(configWith({ ...verify, [`${A}proxy-ssl-name`]: 'elsewhere.example.internal' }, { 'default/backend-tls': { client, ca } }));
  r = await get('mtls');
  assert.equal(r.status, 502, 'a certificate that does not name proxy-ssl-name is refused');
  assert.equal(r.seen, undefined);
});

test('proxy-ssl-verify off: any certificate is accepted (the backend\'s is not checked against ca.crt)', async () => {
  await apply(configWith({ [`${A}proxy-ssl-secret`]: 'default/backend-tls', [`${A}proxy-ssl-verify`]: 'off' }, { 'default/backend-tls': { client, ca: otherCa } }));
  const r = await get('mtls');
  assert.equal(r.status, 200, r.body);
});

test('proxy-ssl-name and proxy-ssl-server-name reach the backend as SNI', async () => {
  const base = { [`${A}proxy-ssl-secret`]: 'default/backend-tls', [`${A}proxy-ssl-server-name`]: 'on' };
  const secrets = { 'default/backend-tls': { client, ca } };
  await apply(configWith({ ...base, [`${A}proxy-ssl-name`]: 'backend.example.internal', [`${A}proxy-ssl-verify`]: 'on' }, secrets));
  let r = await get('mtls');
  assert.equal(r.status, 200, r.body);
  assert.equal(r.seen?.tls?.servername, 'backend.example.internal');

  await apply(configWith(base, secrets));
  r = await get('mtls');
  assert.equal(r.status, 200, r.body);
  assert.equal(r.seen?.tls?.servername, 'api.default.svc', 'without proxy-ssl-name: <service>.<namespace>.svc');

  // The name alone is verified but not sent.
  await apply(configWith({ [`${A}proxy-ssl-secret`]: 'default/backend-tls', [`${A}proxy-ssl-name`]: 'backend.example.internal', [`${A}proxy-ssl-verify`]: 'on' }, secrets));
  r = await get('mtls');
  assert.equal(r.status, 200, r.body);
  assert.equal(r.seen?.tls?.servername, null);
});

test('proxy-ssl-protocols: TLSv1.3 only against a backend that speaks TLS 1.2 at most is refused (502); with TLSv1.2 it is served', async () => {
  const secrets = { 'default/backend-tls': { client } };
  await apply(configWith({ [`${A}proxy-ssl-secret`]: 'default/backend-tls', [`${A}proxy-ssl-protocols`]: 'TLSv1.3' }, secrets, 'api12'));
  let r = await get('tls12');
  assert.equal(r.status, 502);
  assert.equal(r.seen, undefined);

  await apply(configWith({ [`${A}proxy-ssl-secret`]: 'default/backend-tls', [`${A}proxy-ssl-protocols`]: 'TLSv1.2 TLSv1.3' }, secrets, 'api12'));
  r = await get('tls12');
  assert.equal(r.status, 200, r.body);
  assert.equal(r.seen?.tls?.protocol, 'TLSv1.2');
});

test('a proxy-ssl-secret that does not exist: 503, the backend sees nothing', async () => {
  await apply(configWith({ [`${A}proxy-ssl-secret`]: 'default/backend-tls' }, {}));
  const r = await get('mtls');
  assert.equal(r.status, 503);
  assert.equal(r.seen, undefined);
});
