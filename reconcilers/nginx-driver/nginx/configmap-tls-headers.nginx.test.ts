// ConfigMap keys in a real nginx (Debian's) that need this file's network namespace (subnet 230):
// * add-headers and proxy-set-headers: the headers of the ConfigMaps they name, resolved as the controller does
//   (model/global-headers.ts), are on every response — a backend's header of the same name replaced, nginx's own
//   404 included — and on every request the echo backend receives (variables read per request); a header that does
//   not pass is left out and the rest applies; without the keys nothing changes.
// * enable-ocsp: an OCSP responder (`openssl ocsp`) runs in the namespace; a leaf whose AIA names it, served with
//   the key on, gets a good stapled response once nginx has fetched it in the background (first handshakes go
//   without); a revoked leaf of the same CA never gets one (the answer is fetched and refused); with the key off,
//   nothing is stapled.
// Ports 32986-32996 belong to this file: nginx 32986-32988 (headers), the echo backend 32989, nginx 32990-32992
// (OCSP; with the key off 32994-32996), the OCSP responder 32993.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { defaultGlobalConfig, parseGlobalConfig } from '../../model/global-config.ts';
import { globalHeadersOf } from '../../model/global-headers.ts';
import { translate } from '../../translate/translate.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { TestNet } from './testnet.test-helpers.ts';
import { until } from '../../../e2e/harness/http.ts';
import { ocspPki } from '../ocsp.test-helpers.ts';
import { applyOcspResponders } from '../ocsp-responders.ts';
import { capturingLogger, liveNginx, sendTo, startLive, stopLive } from './live.test-helpers.ts';

const LISTEN = { httpPort: 32986, httpsPort: 32987, statusPort: 32988, address: '127.0.0.1' };
const BACKEND = 32989;
const testNet = new TestNet(230);
const { logger, lines } = capturingLogger();

function config(cm: Record<string, string>, referenced: Record<string, Record<string, string>>) {
  const cfg = parseGlobalConfig(cm, defaultGlobalConfig());
  assert.deepEqual(cfg.errors, []);
  const h = globalHeadersOf(cfg.values, (k) => (referenced[k] ? { data: referenced[k] } : undefined));
  if (h.headers) cfg.values.globalHeaders = h.headers;
  const m = modelOf({
    services: [svc('echo', [{ port: 80, targetPort: BACKEND }])],
    slices: [slice('echo-1', 'echo', [{ port: BACKEND }], [{ ip: testNet.ip }])],
    ingresses: [ing('web', { rules: [rule('shop.example.com', [{ path: '/', backend: svcRef('echo', 80) }])] })],
  });
  m.setGlobalConfig(cfg.values);
  return { config: translate(m.snapshot(), { ...OPTS, listen: LISTEN }).config, warnings: h.warnings };
}

before(async () => {
  testNet.up();
  await testNet.start('echo', BACKEND, 'echo');
});
after(() => testNet.close());

async function withNginx(cm: Record<string, string>, referenced: Record<string, Record<string, string>>, fn: (warnings: string[]) => Promise<void>): Promise<void> {
  const { dynamic, nginx } = liveNginx('portico-global-headers-', logger);
  const c = config(cm, referenced);
  await startLive(nginx, dynamic, c.config);
  try {
    await fn(c.warnings);
  } finally {
    await stopLive(nginx, dynamic);
  }
}

const KEYS = { 'add-headers': 'ingress/response-headers', 'proxy-set-headers': 'ingress/request-headers' };
const REFERENCED = {
  'ingress/response-headers': { 'X-Frame-Options': 'DENY', 'X-Powered-By': 'portico-test', 'X-Served-Scheme': '$scheme', 'X-Quoted': 'a "b"; c {d} #e', 'Content-Length': '1' },
  'ingress/request-headers': { 'X-Team': 'payments', 'X-Client-Said': '${http_x_client}-seen', 'X-Empty': '', 'X-Bad': '$portico_backend' },
};

test('add-headers and proxy-set-headers: on every response and every proxied request; refused headers left out', async () => {
  await withNginx(KEYS, REFERENCED, async (warnings) => {
    assert.equal(warnings.length, 2, warnings.join(' | '));
    const r = await sendTo(LISTEN.httpPort, 'shop.example.com', '/x', { headers: { 'x-client': 'abc', 'x-empty': 'from-client' } });
    assert.equal(r.status, 200, r.body);
    assert.equal(r.headers['x-frame-options'], 'DENY');
    assert.equal(r.headers['x-powered-by'], 'portico-test', "the backend's own X-Powered-By (node) is replaced, not repeated");
    assert.equal(r.headers['x-served-scheme'], 'http', 'variables are read per request');
    assert.equal(r.headers['x-quoted'], 'a "b"; c {d} #e', 'quotes, ";", braces and "#" are text');
    const seen = (JSON.parse(r.body) as { headers: Record<string, string> }).headers;
    assert.equal(seen['x-team'], 'payments');
    assert.equal(seen['x-client-said'], 'abc-seen');
    assert.equal(seen['x-empty'], undefined, "an empty value removes the client's header");
    assert.equal(seen['x-bad'], undefined, 'a refused header is left out');
    assert.ok(seen['x-forwarded-for'], "Portico's own headers are still sent");
    // nginx's own answer (no route): the response headers are there too.
    const miss = await sendTo(LISTEN.httpPort, 'nowhere.example.com', '/');
    assert.equal(miss.status, 404);
    assert.equal(miss.headers['x-frame-options'], 'DENY');
  });
  assert.ok(!lines.some((l) => /\[emerg\]/.test(l)), 'nginx accepted the configuration');
});

test('without the keys, or with a ConfigMap that does not exist: no headers, nginx runs as before', async () => {
  await withNginx({ 'add-headers': 'ingress/gone' }, {}, async (warnings) => {
    assert.match(warnings.join(''), /add-headers: ConfigMap ingress\/gone not found/);
    const r = await sendTo(LISTEN.httpPort, 'shop.example.com', '/');
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-frame-options'], undefined);
    assert.equal(r.headers['x-powered-by'], 'node', "the backend's header passes untouched");
    assert.equal((JSON.parse(r.body) as { headers: Record<string, string> }).headers['x-team'], undefined);
  });
});

// ---- enable-ocsp ----------------------------------------------------------------------------------------------
const OCSP_ON = { httpPort: 32990, httpsPort: 32991, statusPort: 32992, address: '127.0.0.1' };
const OCSP_OFF = { httpPort: 32994, httpsPort: 32995, statusPort: 32996, address: '127.0.0.1' };
const RESPONDER_PORT = 32993;
const HOST = 'stapled.example.com';

function ocspConfig(enable: boolean, listen: typeof OCSP_ON, pki: ReturnType<typeof ocspPki>) {
  const cfg = parseGlobalConfig(enable ? { 'enable-ocsp': 'true' } : {}, defaultGlobalConfig());
  assert.deepEqual(cfg.errors, []);
  const m = modelOf({
    // No endpoints: the echo backend's address is a pod's here, which a responder may not be (only handshakes are made).
    services: [svc('echo', [{ port: 80, targetPort: BACKEND }])],
    ingresses: [ing('tls', { rules: [rule(HOST, [{ path: '/', backend: svcRef('echo', 80) }]), rule(`revoked.${HOST}`, [{ path: '/', backend: svcRef('echo', 80) }])] })],
  });
  m.setGlobalConfig(cfg.values);
  const c = translate(m.snapshot(), { ...OPTS, listen }).config;
  c.data.certificates[HOST] = { cert: pki.leaf.chain, key: pki.leaf.key, source: 'default/stapled', notAfter: new Date(Date.now() + 86400_000).toISOString() };
  c.data.certificates[pki.revoked.name] = { cert: pki.revoked.chain, key: pki.revoked.key, source: 'default/revoked', notAfter: new Date(Date.now() + 86400_000).toISOString() };
  // As the controller does before each push: the responder (an IP literal here) vetted and attached.
  const warned: string[] = [];
  applyOcspResponders(c, { get: () => undefined }, m, new Set(['127.0.0.1']), { warn: (msg: string) => warned.push(msg) });
  assert.deepEqual(warned, []);
  if (enable) assert.deepEqual(c.data.certificates[HOST]?.ocsp, { host: testNet.ip, address: testNet.ip, port: RESPONDER_PORT, path: '/' });
  return c;
}

/** openssl s_client asking for the certificate status: what it printed about OCSP. */
async function stapled(port: number, servername = HOST): Promise<string> {
  const child = execFile('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-servername', servername, '-status'], { timeout: 10_000 });
  child.stdin?.end();
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise((resolve) => child.on('close', resolve));
  return out;
}

test('enable-ocsp: a good response is stapled once fetched in the background, a revoked one never; without the key nothing', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-ocsp-pki-'));
  const pki = ocspPki(dir, HOST, `http://${testNet.ip}:${RESPONDER_PORT}/`);
  const responder = spawn('ip', ['netns', 'exec', testNet.netns, 'openssl', 'ocsp', '-index', pki.index, '-port', String(RESPONDER_PORT), '-rsigner', pki.signer.certFile, '-rkey', pki.signer.keyFile, '-CA', pki.ca.certFile, '-nmin', '60', '-ignore_err'], { stdio: ['ignore', 'pipe', 'pipe'] });
  // It says when it listens (a probe connection would hold its one-at-a-time loop: it serves a connection until it ends).
  let said = '';
  for (const out of [responder.stdout, responder.stderr]) out.on('data', (d: Buffer) => (said += d.toString()));
  const on = liveNginx('portico-ocsp-on-', logger);
  const off = liveNginx('portico-ocsp-off-', logger);
  try {
    await until('the OCSP responder listens', () => /ACCEPT/.test(said));
    await startLive(on.nginx, on.dynamic, ocspConfig(true, OCSP_ON, pki));
    await startLive(off.nginx, off.dynamic, ocspConfig(false, OCSP_OFF, pki));
    const first = await stapled(OCSP_ON.httpsPort);
    assert.match(first, /OCSP response: no response sent/, 'the first handshake does not wait for the responder');
    assert.match(first, new RegExp(`CN ?= ?${HOST.replace(/\./g, '\\.')}`), 'the certificate is served');
    let offOut = '';
    const got = await until('a stapled OCSP response', async () => {
      offOut = await stapled(OCSP_OFF.httpsPort);
      const out = await stapled(OCSP_ON.httpsPort);
      return /OCSP Response Status: successful/.test(out) && out;
    }, 20_000, 100);
    assert.match(got, /Cert Status: good/);
    assert.match(got, /Next Update:/);
    assert.match(offOut, /OCSP response: no response sent/, 'enable-ocsp off: nothing stapled, though the certificate names a responder');
    // A revoked certificate: the responder's answer (status revoked) is fetched but not kept, so nothing is stapled.
    const before = lines.length;
    await stapled(OCSP_ON.httpsPort, pki.revoked.name);
    await until('the revoked answer is refused', () => lines.slice(before).some((l) => /OCSP for certificate .*answer not used.*revoked/.test(l)));
    assert.match(await stapled(OCSP_ON.httpsPort, pki.revoked.name), /OCSP response: no response sent/);
    assert.ok(!lines.some((l) => /\[emerg\]/.test(l)));
  } finally {
    responder.kill();
    try {
      await stopLive(on.nginx, on.dynamic);
    } finally {
      await stopLive(off.nginx, off.dynamic);
    }
  }
});
