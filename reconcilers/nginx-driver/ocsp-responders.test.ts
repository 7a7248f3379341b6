// enable-ocsp, the controller's half (ocsp-responders.ts): the responder a certificate names is read, resolved and
// vetted like any tenant-controlled address before Lua may connect to it; without the key nothing is added.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { applyOcspResponders, ocspNames, parseResponderUrl, responderOf } from './ocsp-responders.ts';
import { ocspPki } from './ocsp.test-helpers.ts';
import { certificateId } from './nginx/dynamic.ts';
import type { ResolvedName } from './resolver.ts';
import type { Certificate, GatewayConfig } from '../config/types.ts';
import { modelOf, slice, svc } from '../translate/fixtures.test-helpers.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'portico-ocsp-unit-'));
const byIp = ocspPki(dir, 'ip.example.com', 'http://198.51.100.7:8080/ocsp');
const byLoopback = ocspPki(dir, 'lo.example.com', 'http://127.0.0.1/');
const byName = ocspPki(dir, 'name.example.com', 'http://ocsp.example.net/');
const byPod = ocspPki(dir, 'pod.example.com', 'http://10.1.2.3/');
const byHttps = ocspPki(dir, 'https.example.com', 'https://ocsp.example.net/');
const cert = (p: { leaf: { chain: string; key: string } }, source: string): Certificate => ({ cert: p.leaf.chain, key: p.leaf.key, source, notAfter: '2030-01-01T00:00:00Z' });

function desired(enableOcsp: boolean, certs: Record<string, Certificate>): GatewayConfig {
  return { structure: { global: { enableOcsp } }, data: { certificates: certs, defaultCertificate: null } } as unknown as GatewayConfig;
}

test('the responder URL: http:// only, port and path kept, nothing odd', () => {
  assert.deepEqual(parseResponderUrl('http://ocsp.example.net'), { host: 'ocsp.example.net', port: 80, path: '/' });
  assert.deepEqual(parseResponderUrl('http://[2001:db8::1]:8080/a?b'), { host: '2001:db8::1', port: 8080, path: '/a?b' });
  for (const bad of ['https://ocsp.example.net/', 'ldap://x/', 'http://user:pw@x/', 'not a url']) assert.ok(parseResponderUrl(bad) && 'error' in (parseResponderUrl(bad) as object), bad);
  assert.deepEqual(responderOf(byIp.leaf.chain), { host: '198.51.100.7', port: 8080, path: '/ocsp' });
  assert.equal(responderOf(byIp.ca.cert), null, 'a certificate that names no responder');
});

test('responders are vetted: an allowed address is sent to Lua; loopback, pods, https and unresolved names are not', () => {
  const model = modelOf({ services: [svc('web', [{ port: 80 }])], slices: [slice('web-1', 'web', [{ port: 80 }], [{ ip: '10.1.2.3' }])] });
  const certs = { 'ip.example.com': cert(byIp, 'a/ip'), 'lo.example.com': cert(byLoopback, 'a/lo'), 'pod.example.com': cert(byPod, 'a/pod'), 'https.example.com': cert(byHttps, 'a/https'), 'name.example.com': cert(byName, 'a/name') };
  const warned: string[] = [];
  const log = { warn: (_m: string, f?: Record<string, unknown>) => warned.push(`${String(f?.secret)}: ${String(f?.reason)}`) };
  const names: Record<string, ResolvedName> = { 'ocsp.example.net': { addresses: ['203.0.113.9'], refused: [], at: 0 } };
  const resolver = { get: (n: string) => names[n] };

  const off = desired(false, certs);
  applyOcspResponders(off, resolver, model, new Set(), log);
  assert.equal(off.data.certificates['ip.example.com']?.ocsp, undefined, 'enable-ocsp off: nothing');
  assert.equal(ocspNames(off).size, 0);

  const on = desired(true, certs);
  assert.deepEqual([...ocspNames(on)], ['ocsp.example.net'], 'names go to the resolver (IP literals do not)');
  applyOcspResponders(on, resolver, model, new Set(), log);
  const c = on.data.certificates;
  assert.deepEqual(c['ip.example.com']?.ocsp, { host: '198.51.100.7', address: '198.51.100.7', port: 8080, path: '/ocsp' });
  assert.deepEqual(c['name.example.com']?.ocsp, { host: 'ocsp.example.net', address: '203.0.113.9', port: 80, path: '/' });
  assert.equal(c['lo.example.com']?.ocsp, undefined);
  assert.equal(c['pod.example.com']?.ocsp, undefined);
  assert.equal(c['https.example.com']?.ocsp, undefined);
  assert.ok(warned.some((w) => /a\/lo: .*loopback/.test(w)), warned.join(' | '));
  assert.ok(warned.some((w) => /a\/pod: .*pod/.test(w)));
  assert.ok(warned.some((w) => /a\/https: .*not http/.test(w)));
  assert.equal(certs['ip.example.com'].ocsp, undefined, 'the translation\'s objects are not changed');

  // Own addresses, and a name that resolves only to something refused.
  const own = desired(true, { 'ip.example.com': cert(byIp, 'a/ip'), 'name.example.com': cert(byName, 'a/name') });
  names['ocsp.example.net'] = { addresses: ['10.1.2.3'], refused: [], at: 0 };
  applyOcspResponders(own, resolver, model, new Set(['198.51.100.7']), log);
  assert.equal(own.data.certificates['ip.example.com']?.ocsp, undefined, "Portico's own address");
  assert.equal(own.data.certificates['name.example.com']?.ocsp, undefined, 'a name resolving to a pod');
  delete names['ocsp.example.net'];
  const pending = desired(true, { 'name.example.com': cert(byName, 'a/name') });
  applyOcspResponders(pending, resolver, model, new Set(), log);
  assert.equal(pending.data.certificates['name.example.com']?.ocsp, undefined, 'not resolved yet: none');
});

test('the certificate id covers its responder (Lua stores each id once)', () => {
  const base = cert(byIp, 'a/ip');
  const withR = { ...base, ocsp: { host: 'h', address: '198.51.100.7', port: 80, path: '/' } };
  assert.notEqual(certificateId(base), certificateId(withR));
  assert.notEqual(certificateId(withR), certificateId({ ...withR, ocsp: { ...withR.ocsp, address: '198.51.100.8' } }));
  assert.equal(certificateId(base), certificateId({ ...base }));
});
