// Per-Ingress ssl-ciphers in a real nginx (Debian's, as in production): Ingresses with TLS Secrets are translated and
// pushed; the host whose Ingress sets ssl-ciphers negotiates TLS 1.2 only from its list (a cipher outside it is
// refused in the handshake) while another host with the very same certificate keeps the ConfigMap's list; TLS 1.3 is
// not affected; a TLS 1.2 session of the other host is not resumed on it; a younger Ingress's other list is a
// Warning and changes nothing. No reload: the list travels with the certificate through the configuration API.
// Also HSTS (hsts, on by default): Strict-Transport-Security on HTTPS responses of hosts with a TLS section only.
// Ports 31945-31947 belong to this file (loopback only).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import tls from 'node:tls';
import https from 'node:https';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { nullLogger } from '../../../operator/log.ts';
import { translate } from '../../translate/translate.ts';
import { OPTS, ing, modelOf, rule, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { makeCa, issue } from '../../translate/pki.test-helpers.ts';
import type { Model } from '../../model/model.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { liveNginx, startLive, stopLive } from './live.test-helpers.ts';

const LISTEN = { httpPort: 31945, httpsPort: 31946, statusPort: 31947, address: '127.0.0.1' };
const live = liveNginx('portico-ssl-ciphers-', nullLogger());
const ca = makeCa(live.dir, 'test-ca');
// One certificate for both hosts: only the list differs.
const both = issue(live.dir, ca, 'strict.example.com', ['strict.example.com', 'open.example.com']);

const N = 'nginx.ingress.kubernetes.io/';
const STRICT = 'ECDHE-ECDSA-AES256-GCM-SHA384';
const OUTSIDE = 'ECDHE-ECDSA-AES128-GCM-SHA256'; // in the ConfigMap's default list, not in STRICT

let warnings: string[] = [];
function config(): GatewayConfig {
  const m: Model = modelOf({
    services: [svc('web', [{ port: 80 }])],
    ingresses: [
      ing('strict', { rules: [rule('strict.example.com', [{ path: '/', backend: svcRef('web', 80) }])], tls: [{ hosts: ['strict.example.com'], secretName: 'both' }] }, { created: '2026-01-01T00:00:00Z', annotations: { [`${N}ssl-ciphers`]: STRICT } }),
      ing('late', { rules: [rule('strict.example.com', [{ path: '/late', backend: svcRef('web', 80) }])] }, { created: '2026-02-01T00:00:00Z', annotations: { [`${N}ssl-ciphers`]: OUTSIDE } }),
      ing('open', { rules: [rule('open.example.com', [{ path: '/', backend: svcRef('web', 80) }])], tls: [{ hosts: ['open.example.com'], secretName: 'both' }] }),
      ing('plain', { rules: [rule('plain.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }),
    ],
  });
  m.setSecret({ key: 'default/both', ok: true, cert: both.cert, privateKey: both.key, hosts: ['strict.example.com', 'open.example.com'], notAfter: new Date(Date.now() + 86400_000).toISOString(), fingerprint: 'both' } as Parameters<Model['setSecret']>[0]);
  const r = translate(m.snapshot(), { ...OPTS, listen: LISTEN });
  warnings = r.events.filter((e) => e.reason.startsWith('SSLCiphers')).map((e) => `${e.ref} ${e.reason}: ${e.message}`);
  return r.config;
}

before(async () => {
  await startLive(live.nginx, live.dynamic, config());
});
after(() => stopLive(live.nginx, live.dynamic));

type Hello = { cipher?: string; version?: string; error?: string };
/** A handshake with `servername`, the client offering `ciphers` (TLS ≤ 1.2) up to `maxVersion`. */
function handshake(servername: string, o: { ciphers?: string; maxVersion?: tls.SecureVersion } = {}): Promise<Hello> {
  return new Promise((resolve) => {
    const s = tls.connect({ host: '127.0.0.1', port: LISTEN.httpsPort, servername, rejectUnauthorized: false, maxVersion: o.maxVersion ?? 'TLSv1.2', ...(o.ciphers ? { ciphers: o.ciphers } : {}) });
    s.on('secureConnect', () => {
      const out = { cipher: s.getCipher().standardName, version: s.getProtocol() ?? undefined };
      s.end();
      resolve(out);
    });
    s.on('error', (e: Error) => resolve({ error: e.message }));
  });
}

test('ssl-ciphers: a TLS 1.2 cipher outside the host\'s list is refused for that host only; one in it is negotiated', async () => {
  const refused = await handshake('strict.example.com', { ciphers: OUTSIDE });
  assert.equal(refused.cipher, undefined, 'no handshake with a cipher outside the list');
  assert.match(refused.error ?? '', /handshake failure|alert|ECONNRESET|socket hang up/i);
  const other = await handshake('open.example.com', { ciphers: OUTSIDE });
  assert.equal(other.cipher, 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', `the other host (same certificate) keeps the ConfigMap's list: ${other.error}`);
  const ok = await handshake('strict.example.com', { ciphers: `${OUTSIDE}:${STRICT}` });
  assert.equal(ok.version, 'TLSv1.2');
  assert.equal(ok.cipher, 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'only the list\'s cipher is chosen');
  // An unknown name gets the default certificate with the ConfigMap's list.
  assert.equal((await handshake('unknown.example.com', { ciphers: OUTSIDE })).cipher, 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256');
});

test('ssl-ciphers: TLS 1.3 is not affected (as nginx\'s ssl_ciphers)', async () => {
  const t13 = await handshake('strict.example.com', { maxVersion: 'TLSv1.3' });
  assert.equal(t13.version, 'TLSv1.3', t13.error);
});

/**
 * A TLS 1.2 handshake by `openssl s_client` (Node's client never offers a session to another server name; a client
 * that wants to can): "New" or "Reused" and the cipher, saving the session to `out` or offering the one in `in`.
 */
function sClient(servername: string, ciphers: string, o: { out?: string; in?: string }): { reuse?: string; cipher?: string } {
  const args = ['s_client', '-connect', `127.0.0.1:${LISTEN.httpsPort}`, '-servername', servername, '-tls1_2', '-cipher', ciphers, ...(o.out ? ['-sess_out', o.out] : []), ...(o.in ? ['-sess_in', o.in] : [])];
  const r = spawnSync('openssl', args, { input: '', encoding: 'utf8', timeout: 10_000 });
  const m = /^(New|Reused), TLSv1\.2, Cipher is (\S+)/m.exec(r.stdout ?? '');
  return m ? { reuse: m[1], cipher: m[2] } : {};
}

test('ssl-ciphers: a TLS 1.2 session made on another host is not resumed on it (its cipher came from another list); its own sessions are', () => {
  const open = path.join(live.dir, 'open.session');
  const strict = path.join(live.dir, 'strict.session');
  assert.deepEqual(sClient('open.example.com', OUTSIDE, { out: open }), { reuse: 'New', cipher: OUTSIDE });
  assert.deepEqual(sClient('strict.example.com', `${OUTSIDE}:${STRICT}`, { in: open, out: strict }), { reuse: 'New', cipher: STRICT }, 'the other host\'s session is not resumed here');
  assert.deepEqual(sClient('strict.example.com', `${OUTSIDE}:${STRICT}`, { in: strict }), { reuse: 'Reused', cipher: STRICT }, 'its own session is');
  assert.deepEqual(sClient('open.example.com', `${OUTSIDE}:${STRICT}`, { in: strict }).reuse, 'New', 'nor is its session resumed on the other host');
});

test('ssl-ciphers: on a host several Ingresses set it for, the oldest one\'s list applies and the younger gets a Warning', () => {
  assert.deepEqual(warnings, [`Ingress/default/late SSLCiphersConflict: ssl-ciphers for host strict.example.com: Ingress default/strict (older) sets another list for it; that one applies`]);
});

/** Strict-Transport-Security of nginx's answer (the Service has no endpoint: a 503, which HSTS covers too) to GET / for `host`. */
function hsts(scheme: 'http' | 'https', host: string): Promise<{ status: number; hsts: string | undefined }> {
  return new Promise((resolve, reject) => {
    const o = { host: '127.0.0.1', path: '/', headers: { host }, agent: false as const };
    const done = (res: import('node:http').IncomingMessage) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, hsts: res.headers['strict-transport-security'] as string | undefined }));
    };
    const req = scheme === 'https'
      ? https.get({ ...o, port: LISTEN.httpsPort, servername: host, rejectUnauthorized: false }, done)
      : import('node:http').then((http) => http.get({ ...o, port: LISTEN.httpPort }, done).on('error', reject));
    if ('on' in req) req.on('error', reject);
  });
}

test('HSTS: Strict-Transport-Security on HTTPS answers of a host with a TLS section; not over HTTP, not for a host without TLS', async () => {
  const tlsHost = await hsts('https', 'open.example.com');
  assert.equal(tlsHost.status, 503);
  assert.equal(tlsHost.hsts, 'max-age=31536000; includeSubDomains');
  const overHttp = await hsts('http', 'open.example.com');
  assert.equal(overHttp.status, 308, 'ssl-redirect of a TLS host');
  assert.equal(overHttp.hsts, undefined, 'not over plain HTTP');
  const noTls = await hsts('https', 'plain.example.com');
  assert.equal(noTls.status, 503);
  assert.equal(noTls.hsts, undefined, 'not for a host without a TLS section, even over HTTPS');
});
