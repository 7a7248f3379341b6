// A full certificate zone in a real nginx (Debian's, as in production): one tenant's certificates fill
// portico_certs; the Lua side refuses what does not fit and evicts nothing, and the rest of the same push — another
// tenant's certificate, a new route — is applied. (The zone used to answer 507 to the whole certificate update and
// the controller then sent no routes or backends at all until space was freed: every tenant's changes waited.)
// Ports 32700-32702 belong to this file.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import tls from 'node:tls';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import { nullLogger } from '../../../operator/log.ts';
import { translate } from '../../translate/translate.ts';
import { diffConfig, emptyDelta } from '../../translate/diff.ts';
import { OPTS, ing, modelOf, rule, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { makeCa, issue } from '../../translate/pki.test-helpers.ts';
import { DynamicClient } from './dynamic.ts';
import { NginxProcess } from './process.ts';
import { runtimePaths } from './render.ts';
import { heldWithout } from '../nginx-state.ts';
import type { Certificate, GatewayConfig } from '../../config/types.ts';
import { startLive } from './live.test-helpers.ts';

const LISTEN = { httpPort: 32700, httpsPort: 32701, statusPort: 32702, address: '127.0.0.1' };
const dir = mkdtempSync(path.join(tmpdir(), 'portico-certs-full-'));
const dynamic = new DynamicClient();
const nginx = new NginxProcess({ binary: '/usr/sbin/nginx', runtime: runtimePaths(dir), shutdownTimeoutMs: 2_000 }, dynamic, nullLogger());
const ca = makeCa(dir, 'test-ca');
const keep = issue(dir, ca, 'keep.example.com', ['keep.example.com']);
const other = issue(dir, ca, 'other.example.com', ['other.example.com']);
const notAfter = new Date(Date.now() + 86400_000).toISOString();

let running: GatewayConfig;
before(async () => {
  const m = modelOf({
    services: [svc('web', [{ port: 80 }])],
    ingresses: [ing('keep', { rules: [rule('keep.example.com', [{ path: '/', backend: svcRef('web', 80) }])] })],
  });
  m.setGlobalConfig({ ...m.globalConfig(), luaSharedDicts: { dataKb: 8 * 1024, certsKb: 1024 } });
  running = translate(m.snapshot(), { ...OPTS, listen: LISTEN }).config;
  running.data.certificates['keep.example.com'] = { cert: keep.cert, key: keep.key, source: 'team-a/keep', notAfter };
  await startLive(nginx, dynamic, running);
});
after(async () => {
  await nginx.stop();
  await dynamic.close();
});

function servedCn(host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port: LISTEN.httpsPort, servername: host, rejectUnauthorized: false }, () => {
      const raw = s.getPeerCertificate(true).raw;
      s.end();
      resolve(new X509Certificate(raw).subject);
    });
    s.on('error', reject);
  });
}

function status(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: LISTEN.httpPort, path: '/', headers: { host }, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', reject);
  });
}

// A chain shaped as the controller sends it (PEM certificate blocks only, 10 of them, ~60 KiB): the zone does not
// parse it until a handshake asks for it, so filler base64 is enough to take the space.
const filler = (i: number): Certificate => {
  const line = (n: number) => Buffer.alloc(48, (i * 31 + n) % 251).toString('base64');
  const block = `-----BEGIN CERTIFICATE-----\n${Array.from({ length: 95 }, (_, n) => line(n)).join('\n')}\n-----END CERTIFICATE-----\n`;
  return { cert: block.repeat(10), key: keep.key, source: `team-b/filler-${i}`, notAfter };
};

test('full certificate zone: what does not fit is refused and named, nothing is evicted, the rest of the push (another tenant’s certificate, routes) is applied', async () => {
  assert.match(await servedCn('keep.example.com'), /CN=keep\.example\.com/);
  const delta = emptyDelta();
  for (let i = 0; i < 30; i++) delta.certificates.upsert[`f${i}.team-b.example`] = filler(i);
  delta.certificates.upsert['other.example.com'] = { cert: other.cert, key: other.key, source: 'team-c/other', notAfter };
  const next = translate(
    modelOf({
      services: [svc('web', [{ port: 80 }])],
      ingresses: [
        ing('keep', { rules: [rule('keep.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }),
        ing('new', { rules: [rule('new.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }),
      ],
    }).snapshot(),
    { ...OPTS, listen: LISTEN },
  ).config;
  delta.routes = diffConfig(running, next).delta.routes;
  assert.ok(delta.routes.upsert['new.example.com'], 'the delta carries a new route');
  assert.equal(await status('new.example.com'), 404, 'not routed before');

  const r = await dynamic.pushData(delta);
  assert.ok(r.notStored, 'the Lua side says what it could not store');
  const missing = new Set(r.notStored.hosts);
  assert.ok(missing.size > 0, 'some filler did not fit');
  assert.ok(missing.size < 30, 'some fitted');
  assert.match(r.notStored.error, /portico_certs is full/);
  assert.equal(await status('new.example.com'), 503, 'the new route of the same push is live (no endpoints: 503)');
  assert.match(await servedCn('keep.example.com'), /CN=keep\.example\.com/, "the first tenant's certificate was not evicted");
  // Another tenant's certificate in the same update: stored if it fitted (Lua stores in table order), else named.
  const listing = await dynamic.getCertificates();
  assert.ok(listing['other.example.com'] === 'team-c/other' || missing.has('other.example.com'));
  for (let i = 0; i < 30; i++) {
    const h = `f${i}.team-b.example`;
    assert.ok((listing[h] === `team-b/filler-${i}`) !== missing.has(h), `${h}: either stored or named as missing`);
  }
  const stats = await dynamic.getConfig();
  assert.ok(stats.dictFailures.certs >= missing.size, 'each refusal is counted (portico_nginx_shared_dict_write_failures)');

  // The controller holds what Lua holds: the refused hosts stay out, so the next sync sends them again.
  const desired = { ...running.data, certificates: { ...running.data.certificates, ...delta.certificates.upsert } };
  const held = heldWithout(desired, running.data, r.notStored);
  for (const h of missing) assert.equal(held.certificates[h], undefined);
  assert.ok(held.certificates['keep.example.com']);
  const retry = diffConfig({ structure: next.structure, data: held }, { structure: next.structure, data: desired }).delta;
  assert.deepEqual(Object.keys(retry.certificates.upsert).sort(), [...missing].sort());
});
