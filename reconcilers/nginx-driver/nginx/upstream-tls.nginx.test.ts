// TLS to the backend inside a real nginx (Upstream protocol HTTPS with tls.verify): an HTTPS backend in this file's
// own network namespace (testnet.test-helpers.ts, subnet 252) whose certificate a test CA signed for "api.default.svc". The
// configuration comes from the pure translation of an Upstream with that CA (caSecret's ca.crt), so what is tested
// is what the controller renders: the CA file is written by digest before nginx -t, the request is proxied with
// SNI and verified; the same backend against another CA is refused (502), never proxied unverified.
// Ports 31400-31404 belong to this file: nginx 31400-31402, the HTTPS backend 31403.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import winston from 'winston';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { normalizeRoute, normalizeUpstream } from '../../crds/normalize.ts';
import { translate } from '../../translate/translate.ts';
import { diffConfig, structureChecksum } from '../../translate/diff.ts';
import { OPTS, modelOf, slice, svc } from '../../translate/fixtures.test-helpers.ts';
import { issue, makeCa } from '../../translate/pki.test-helpers.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { DynamicClient } from './dynamic.ts';
import { NginxProcess } from './process.ts';
import { renderNginxConf, runtimePaths, trustedCaFile, writeTrustedCas } from './render.ts';
import { TestNet } from './testnet.test-helpers.ts';
import { startLive, stopLive } from './live.test-helpers.ts';

const LISTEN = { httpPort: 31400, httpsPort: 31401, statusPort: 31402, address: '127.0.0.1' };
const TLS_PORT = 31403;
const net = new TestNet(252);
const dir = mkdtempSync(path.join(tmpdir(), 'portico-upstls-'));
const dynamic = new DynamicClient();
const logger = winston.createLogger({ level: 'error', transports: [new winston.transports.Console({ silent: true })] });
const nginx = new NginxProcess({ binary: '/usr/sbin/nginx', runtime: runtimePaths(path.join(dir, 'rt')), shutdownTimeoutMs: 2_000 }, dynamic, logger);

const ca = makeCa(dir, 'test-ca');
const otherCa = makeCa(dir, 'other-ca');
// The backend's certificate: for the Service's cluster name, signed by test-ca.
const server = issue(dir, ca, 'api.default.svc', ['api.default.svc']);

const cr = (kind: string, name: string, spec: unknown) =>
  ({ apiVersion: 'portico.dev/v1alpha1', kind, metadata: { name, namespace: 'default', uid: `u-${name}`, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' }, spec }) as KubeObject;

/** The configuration the controller would render for an HTTPS Upstream verifying against `caFile`. */
function configWith(caFile: string): GatewayConfig {
  const m = modelOf({
    services: [svc('api', [{ name: 'https', port: 443, targetPort: TLS_PORT }])],
    slices: [slice('api-1', 'api', [{ name: 'https', port: TLS_PORT }], [{ ip: net.ip }])],
  });
  const secrets = (k: string) => (k === 'default/api-ca' ? { data: { 'ca.crt': readFileSync(caFile).toString('base64') } } : undefined);
  const up = normalizeUpstream(cr('Upstream', 'api', { service: { name: 'api' }, protocol: 'HTTPS', tls: { verify: true, caSecret: 'api-ca' } }), secrets);
  const rt = normalizeRoute(cr('Route', 'api', { hosts: ['api.example.com'], rules: [{ backends: [{ service: { name: 'api', port: 443 } }] }] }));
  assert.ok(up.ok && rt.ok);
  m.setCrd('Upstream', up.record);
  m.setCrd('Route', rt.record);
  return translate(m.snapshot(), { ...OPTS, listen: LISTEN }).config;
}

let running: GatewayConfig;
async function apply(next: GatewayConfig): Promise<void> {
  const checksum = structureChecksum(next.structure);
  writeTrustedCas(next.structure, nginx.runtime);
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

function get(): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: LISTEN.httpPort, path: '/hello', headers: { host: 'api.example.com' }, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

before(async () => {
  net.up();
  await net.start('api', TLS_PORT, 'tls-echo', { cert: server.certFile, key: server.keyFile });
  nginx.prepare();
});
after(() => stopLive(nginx, dynamic, net));

test('HTTPS backend verified against the Upstream\'s CA: proxied with SNI of the Service name', async () => {
  const cfg = configWith(ca.certFile);
  const prof = cfg.structure.profiles.find((p) => p.trustedCa);
  assert.ok(prof, 'a profile verifies the backend');
  await apply(cfg);
  assert.equal(readFileSync(trustedCaFile(nginx.runtime, prof.trustedCa as string), 'utf8'), prof.trustedCa, 'the CA file nginx reads is the bundle');
  const r = await get();
  assert.equal(r.status, 200, r.body);
  const seen = JSON.parse(r.body) as { url: string; headers: Record<string, string> };
  assert.equal(seen.url, '/hello');
  const reqs = await net.requests('api');
  assert.ok(reqs.some((x) => x.url === '/hello'), 'the request reached the HTTPS backend');
});

test('the same backend against another CA is refused (502), never proxied unverified', async () => {
  const before = (await net.requests('api')).filter((x) => x.url === '/hello').length;
  await apply(configWith(otherCa.certFile));
  const r = await get();
  assert.equal(r.status, 502);
  const after = (await net.requests('api')).filter((x) => x.url === '/hello').length;
  assert.equal(after, before, 'no request reached the backend');
});
