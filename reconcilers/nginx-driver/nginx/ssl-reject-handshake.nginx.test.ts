// ssl-reject-handshake in a real nginx (Debian's, as in production): with the key, a server name that is a host
// Portico serves (a certificate of its own, or routes) completes the handshake and any other name — or none — is
// refused in the handshake; without it (the default) an unknown name still gets the default certificate.
// Ports 32980-32985 belong to this file.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { nullLogger } from '../../../operator/log.ts';
import { translate } from '../../translate/translate.ts';
import { OPTS, ing, modelOf, rule, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { makeCa, issue } from '../../translate/pki.test-helpers.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../../model/global-config.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { liveNginx, startLive, stopLive } from './live.test-helpers.ts';

const ON = { httpPort: 32980, httpsPort: 32981, statusPort: 32982, address: '127.0.0.1' };
const OFF = { httpPort: 32983, httpsPort: 32984, statusPort: 32985, address: '127.0.0.1' };
const on = liveNginx('portico-reject-on-', nullLogger());
const off = liveNginx('portico-reject-off-', nullLogger());
const ca = makeCa(on.dir, 'test-ca');
const own = issue(on.dir, ca, 'own.example.com', ['own.example.com']);
const dflt = issue(on.dir, ca, 'default.example.com', ['default.example.com']);
const notAfter = new Date(Date.now() + 86400_000).toISOString();

function config(reject: boolean, listen: typeof ON): GatewayConfig {
  const m = modelOf({
    services: [svc('web', [{ port: 80 }])],
    ingresses: [
      ing('own', { rules: [rule('own.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }),
      ing('plain', { rules: [rule('plain.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }),
    ],
  });
  const parsed = parseGlobalConfig(reject ? { 'ssl-reject-handshake': 'true' } : {}, defaultGlobalConfig());
  assert.deepEqual(parsed.errors, []);
  m.setGlobalConfig(parsed.values);
  const c = translate(m.snapshot(), { ...OPTS, listen }).config;
  c.data.certificates['own.example.com'] = { cert: own.cert, key: own.key, source: 'default/own', notAfter };
  c.data.defaultCertificate = { cert: dflt.cert, key: dflt.key, source: 'default/dflt', notAfter };
  return c;
}

before(async () => {
  await startLive(on.nginx, on.dynamic, config(true, ON));
  await startLive(off.nginx, off.dynamic, config(false, OFF));
});
after(async () => {
  try {
    await stopLive(on.nginx, on.dynamic);
  } finally {
    await stopLive(off.nginx, off.dynamic);
  }
});

/** The subject of the certificate served for `servername` (none: no SNI), or the handshake's error. */
function handshake(port: number, servername: string | undefined): Promise<{ subject?: string; error?: string }> {
  return new Promise((resolve) => {
    const s = tls.connect({ host: '127.0.0.1', port, servername: servername ?? '', rejectUnauthorized: false }, () => {
      const raw = s.getPeerCertificate(true).raw;
      s.end();
      resolve({ subject: new X509Certificate(raw).subject });
    });
    s.on('error', (e: Error) => resolve({ error: e.message }));
  });
}

test('ssl-reject-handshake: known server names complete the handshake, unknown ones and none are refused in it', async () => {
  assert.match((await handshake(ON.httpsPort, 'own.example.com')).subject ?? '', /CN=own\.example\.com/, 'a host with its own certificate');
  assert.match((await handshake(ON.httpsPort, 'PLAIN.example.com')).subject ?? '', /CN=default\.example\.com/, 'a host with routes only gets the default certificate, as in ingress-nginx');
  const unknown = await handshake(ON.httpsPort, 'unknown.example.com');
  assert.equal(unknown.subject, undefined, 'no certificate for an unknown name');
  assert.match(unknown.error ?? '', /alert|handshake|socket hang up|ECONNRESET/i);
  const none = await handshake(ON.httpsPort, undefined);
  assert.equal(none.subject, undefined, 'no certificate without a server name');
});

test('without ssl-reject-handshake (default) an unknown server name still gets the default certificate', async () => {
  assert.match((await handshake(OFF.httpsPort, 'unknown.example.com')).subject ?? '', /CN=default\.example\.com/);
  assert.match((await handshake(OFF.httpsPort, undefined)).subject ?? '', /CN=default\.example\.com/);
  assert.match((await handshake(OFF.httpsPort, 'own.example.com')).subject ?? '', /CN=own\.example\.com/);
});
