import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseTlsSecret, normalizeEndpointSlice, TLS_SECRET_LIMITS } from './normalize.ts';
import { defaultGlobalConfig, parseGlobalConfig, configReferenceMarkdown } from './global-config.ts';
import { annotationsMarkdown } from '../annotations/table.ts';
import { parseAnnotations } from '../annotations/parse.ts';

function pair(cn: string, days: number): { cert: string; key: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-cert-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', String(days), '-subj', `/CN=${cn}`, '-addext', `subjectAltName=DNS:${cn}`, '-keyout', path.join(dir, 'k'), '-out', path.join(dir, 'c')], { stdio: 'ignore' });
  return { cert: readFileSync(path.join(dir, 'c'), 'utf8'), key: readFileSync(path.join(dir, 'k'), 'utf8') };
}
const secret = (cert: string, key: string, type = 'kubernetes.io/tls') => ({
  metadata: { name: 's', namespace: 'ns' },
  type,
  data: { 'tls.crt': Buffer.from(cert).toString('base64'), 'tls.key': Buffer.from(key).toString('base64') },
});

test('TLS secrets: valid pair accepted with its SANs; mismatched key, garbage and expiry rejected with a specific reason', () => {
  const a = pair('a.example.com', 30);
  const b = pair('b.example.com', 30);
  const ok = parseTlsSecret(secret(a.cert, a.key), new Date());
  assert.ok(ok.ok);
  assert.deepEqual(ok.ok && ok.hosts, ['a.example.com']);
  const mismatch = parseTlsSecret(secret(a.cert, b.key), new Date());
  assert.equal(!mismatch.ok && mismatch.error, 'tls.key does not match the certificate in tls.crt');
  const garbage = parseTlsSecret(secret('nope', a.key), new Date());
  assert.match(!garbage.ok ? garbage.error : '', /not a PEM certificate/);
  const later = parseTlsSecret(secret(a.cert, a.key), new Date(Date.now() + 60 * 86400_000));
  assert.match(!later.ok ? later.error : '', /expired/);
  const opaque = parseTlsSecret(secret(a.cert, a.key, 'Opaque'), new Date());
  assert.match(!opaque.ok ? opaque.error : '', /expected kubernetes.io\/tls/);
});

test('TLS secrets: only the parsed chain is kept (no text, padding or other blocks); tls.crt ≤ 64 KiB and 10 certificates, tls.key ≤ 16 KiB', () => {
  const a = pair('a.example.com', 30);
  const ca = pair('ca.example.com', 30);
  const certs = (pem: string) => [...pem.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)].map((m) => m[0]);
  // openssl-style text around the blocks, an extra block of another type, CRLF line ends: only the certificates stay.
  const noisy = `subject=CN = a.example.com\n${a.cert.replace(/\n/g, '\r\n')}# intermediate\n${ca.cert}-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n`;
  const ok = parseTlsSecret(secret(noisy, a.key), new Date());
  assert.ok(ok.ok, !ok.ok ? ok.error : '');
  assert.equal(ok.cert, certs(a.cert).concat(certs(ca.cert)).map((c) => `${c}\n`).join(''), 'exactly the two certificates, re-encoded');
  assert.match(ok.privateKey, /^-----BEGIN PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+-----END PRIVATE KEY-----\n$/, 'the key as PKCS#8, nothing else');
  // A valid certificate padded to 900 KB is refused (it used to be stored verbatim in the shared zone).
  const padded = parseTlsSecret(secret(`${a.cert}${`# ${'x'.repeat(97)}\n`.repeat(9000)}`, a.key), new Date());
  assert.equal(!padded.ok && padded.error, 'tls.crt is 880 KiB; Portico accepts at most 64 KiB (a chain of at most 10 certificates; text around them counts)');
  const justUnder = parseTlsSecret(secret(`${a.cert}${'#'.repeat(TLS_SECRET_LIMITS.crtBytes - a.cert.length - 1)}\n`, a.key), new Date());
  assert.ok(justUnder.ok && !justUnder.cert.includes('#'), 'at the bound: accepted, and the padding is not kept');
  const ten = parseTlsSecret(secret(a.cert + ca.cert.repeat(9), a.key), new Date());
  assert.ok(ten.ok && certs(ten.cert).length === 10);
  const eleven = parseTlsSecret(secret(a.cert + ca.cert.repeat(10), a.key), new Date());
  assert.equal(!eleven.ok && eleven.error, 'tls.crt holds more than 10 certificates; Portico accepts a chain of at most 10');
  const bigKey = parseTlsSecret(secret(a.cert, `${a.key}${'#'.repeat(16 * 1024)}\n`), new Date());
  assert.equal(!bigKey.ok && bigKey.error, 'tls.key is 17 KiB; Portico accepts at most 16 KiB');
  const badBlock = parseTlsSecret(secret(`${a.cert}-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n`, a.key), new Date());
  assert.match(!badBlock.ok ? badBlock.error : '', /^certificate 2 of tls\.crt cannot be read/);
  const notKey = parseTlsSecret(secret(a.cert, 'MII-secret-looking-bytes'), new Date());
  assert.equal(!notKey.ok && notKey.error, 'tls.key is not a PEM private key (an encrypted key is not supported)');
});

test('ConfigMap: a bad value keeps the previous value and is reported; unknown keys listed', () => {
  const prev = { ...defaultGlobalConfig(), proxyBodySize: '4m' };
  const r = parseGlobalConfig({ 'proxy-body-size': '5m;evil', 'keep-alive': '30s', 'worker-processes': '3', 'no-such-key': 'x' }, prev);
  assert.equal(r.values.proxyBodySize, '4m');
  assert.equal(r.values.keepAliveSeconds, 30);
  assert.equal(r.values.workerProcesses, 3);
  assert.equal(r.errors.length, 1);
  assert.match(r.errors[0]?.message ?? '', /proxy-body-size.*keeping "4m"/);
  assert.deepEqual(r.unknown, ['no-such-key']);
  assert.match(configReferenceMarkdown(), /\| `proxy-body-size` \| `"1m"` \|/);
});

test('annotations: portico.dev wins over nginx.ingress.kubernetes.io; unsupported ones listed; bad values reported', () => {
  const r = parseAnnotations({
    'nginx.ingress.kubernetes.io/proxy-read-timeout': '30',
    'portico.dev/proxy-read-timeout': '45',
    'nginx.ingress.kubernetes.io/enable-influxdb': 'true',
    'nginx.ingress.kubernetes.io/ssl-redirect': 'maybe',
  });
  assert.equal(r.values['proxy-read-timeout'], 45);
  assert.deepEqual(r.unsupported, ['nginx.ingress.kubernetes.io/enable-influxdb']);
  assert.match(r.errors[0]?.message ?? '', /ssl-redirect.*"true" or "false"/);
  assert.match(annotationsMarkdown(), /use-regex/);
});

test('EndpointSlice: nil conditions follow the API defaults; invalid addresses dropped', () => {
  const n = normalizeEndpointSlice({
    metadata: { name: 's', namespace: 'ns', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080 }],
    endpoints: [{ addresses: ['10.0.0.1'] }, { addresses: ['not-an-ip'] }, { addresses: ['10.0.0.2'], conditions: { ready: false, serving: true, terminating: true } }],
  } as never);
  assert.deepEqual(n?.endpoints, [
    { address: '10.0.0.1', ready: true, serving: true, terminating: false },
    { address: '10.0.0.2', ready: false, serving: true, terminating: true },
  ]);
  assert.equal(n?.serviceKey, 'ns/web');
});
