import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseTlsSecret, normalizeEndpointSlice } from './normalize.ts';
import { defaultGlobalConfig, parseGlobalConfig, configReferenceMarkdown } from './global-config.ts';
import { parseAnnotations, annotationsMarkdown } from '../annotations/table.ts';

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
    'nginx.ingress.kubernetes.io/enable-opentelemetry': 'true',
    'nginx.ingress.kubernetes.io/ssl-redirect': 'maybe',
  });
  assert.equal(r.values['proxy-read-timeout'], 45);
  assert.deepEqual(r.unsupported, ['nginx.ingress.kubernetes.io/enable-opentelemetry']);
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
