// auth-tls-*: the schemas (good values, and injection payloads refused with a clear message), the Secret (same
// namespace, ca.crt, no ca.crl, fail closed otherwise), and the model indexing the Secret so a change requeues the
// Ingress.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { authTlsPlugin } from './groups/auth-tls.ts';
import { clientCaId, errorPageSchema, matchCnSchema, verifyClientSchema, verifyDepthSchema } from './auth-tls.ts';
import { NGINX_PREFIX } from './table.ts';
import { parseAnnotations } from './parse.ts';
import { normalizeIngress } from '../model/normalize.ts';
import { Model } from '../model/model.ts';
import { ing, rule, svcRef } from '../translate/fixtures.test-helpers.ts';
import { zodMessage } from '../values/safe.ts';

const N = NGINX_PREFIX;
const dir = mkdtempSync(path.join(tmpdir(), 'portico-authtls-'));
function makeCa(name: string): string {
  const cert = path.join(dir, `${name}.crt`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', `/CN=${name}`, '-keyout', path.join(dir, `${name}.key`), '-out', cert], { stdio: 'ignore' });
  return readFileSync(cert, 'utf8');
}
const CA = makeCa('ca-one');
const CA2 = makeCa('ca-two');
const b64 = (s: string) => Buffer.from(s).toString('base64');

const refusal = (schema: { safeParse(v: string): { success: boolean; error?: unknown } }, v: string): string | null => {
  const r = schema.safeParse(v);
  return r.success ? null : zodMessage(r.error as Parameters<typeof zodMessage>[0]);
};

/** What ingress-nginx's template would have pasted into nginx.conf: each must be refused, with a message. */
const PAYLOADS = ['x;', 'x}', 'x\nssl_verify_client off;', 'x#', 'x$host', 'x"', "x'", 'x\u0000', 'x\u2028', 'x\u2029', 'x\u00a0y', 'x\r\n'];

test('verify-client: on, off, optional, optional_no_ca (trimmed); anything else refused', () => {
  for (const v of ['on', 'off', 'optional', 'optional_no_ca', ' optional ']) assert.equal(refusal(verifyClientSchema, v), null, v);
  for (const v of ['require', 'ON', 'on;', 'optional no ca', '', ...PAYLOADS]) assert.match(refusal(verifyClientSchema, v) ?? '', /on, off, optional or optional_no_ca/, JSON.stringify(v));
});

test('verify-depth: 0-10 (0 means 1, as ingress-nginx)', () => {
  assert.equal(verifyDepthSchema.parse('0'), 0);
  assert.equal(verifyDepthSchema.parse(' 3 '), 3);
  for (const v of ['11', '-1', '1.5', 'two', '', ...PAYLOADS]) assert.match(refusal(verifyDepthSchema, v) ?? '', /between 0 and 10/, JSON.stringify(v));
});

test('error-page: an absolute http(s) URL with a literal host; variables, user info, fragments and injection payloads refused', () => {
  for (const v of ['https://errors.example.com/cert-error', 'http://example.com', 'https://example.com:8443/a/b?x=1&y=%20z', 'HTTPS://Example.COM/Err', 'https://10.0.0.1/x']) assert.equal(refusal(errorPageSchema, v), null, v);
  const bad = [
    '/relative', 'example.com/cert', 'ftp://example.com/', 'javascript:alert(1)', 'https://user:pw@example.com/', 'https://example.com/#frag', 'https://$host/x',
    'https://example.com/$request_uri', 'https://example.com/a b', 'https://example.com/%zz', 'https://example.com:99999/', 'https:///x', `https://example.com/${'a'.repeat(2048)}`,
    ...PAYLOADS.map((p) => `https://example.com/${p}`),
  ];
  for (const v of bad) assert.ok(refusal(errorPageSchema, v), JSON.stringify(v));
});

test('match-cn: a regex naming CN= of a restricted alphabet; braces, quotes, ";", "#", variables, nested quantifiers refused', () => {
  for (const v of ['CN=client1', '^CN=client[0-9]+,O=Acme$', 'CN=(alice|bob)', '(?i)CN=client', 'CN=John Doe', 'CN=a\\.b\\-c']) assert.equal(refusal(matchCnSchema, v), null, v);
  const bad: [string, RegExp][] = [
    ['O=Acme', /CN=/],
    ['CN=(a+)+$', /nested quantifiers/],
    ['CN=(.*)*', /nested quantifiers/],
    ['CN=a{2}', /no braces/],
    ['CN=[]', /empty class/],
    ['CN=\\q', /escapes/],
    ['CN=\\1', /escapes/],
    ['CN=(', /not a valid regular expression/],
    ['CN=a$host', /"\$" only at the end/],
    [`CN=${'a'.repeat(260)}`, /longer than 256/],
    ...PAYLOADS.map((p): [string, RegExp] => [`CN=${p}`, /./]),
  ];
  for (const [v, why] of bad) assert.match(refusal(matchCnSchema, v) ?? '', why, JSON.stringify(v));
});

test('an invalid auth-tls value fails the Ingress closed (access control), it is never ignored', () => {
  for (const [n, v] of [['auth-tls-secret', 'Bad_Name'], ['auth-tls-verify-client', 'require'], ['auth-tls-error-page', 'https://a/$host'], ['auth-tls-match-cn', 'CN=a;b'], ['auth-tls-verify-depth', '99'], ['auth-tls-pass-certificate-to-upstream', 'yes']]) {
    const r = parseAnnotations({ [`${N}${n}`]: v as string });
    assert.equal(r.accessControl.length, 1, n as string);
    assert.match(r.accessControl[0]?.kind ?? '', /client-certificate authentication with an invalid value/, n as string);
  }
});

const secretsOf = (data: Record<string, string> | undefined, key = 'default/ca') => (k: string) => (data && k === key ? { data } : undefined);

test('auth-tls-secret with ca.crt → the client-cert settings (defaults: on, depth 1, no certificate passed)', () => {
  const v = parseAnnotations({ [`${N}auth-tls-secret`]: 'default/ca' }).values;
  const r = authTlsPlugin(v, 'default', secretsOf({ 'ca.crt': b64(CA) }));
  assert.deepEqual(r.closed, []);
  assert.equal(r.secretKey, 'default/ca');
  assert.ok(r.plugin && 'clientCert' in r.plugin);
  const s = r.plugin.clientCert;
  assert.deepEqual({ verify: s.verify, depth: s.depth, pass: s.passCertificate, secret: s.secret }, { verify: 'on', depth: 1, pass: false, secret: 'default/ca' });
  assert.match(s.ca, /^-----BEGIN CERTIFICATE-----\n[\s\S]+-----END CERTIFICATE-----\n$/);
  assert.equal(s.caId, clientCaId(s.ca, 1));
  assert.match(s.caId, /^[0-9a-f]{30}$/);
  // Every setting, a bundle of two CAs (text around the blocks, as `openssl x509 -text` leaves it, is ignored).
  const all = parseAnnotations({
    [`${N}auth-tls-secret`]: 'ca',
    [`${N}auth-tls-verify-client`]: 'optional_no_ca',
    [`${N}auth-tls-verify-depth`]: '0',
    [`${N}auth-tls-error-page`]: 'https://errors.example.com/cert',
    [`${N}auth-tls-match-cn`]: 'CN=client1',
    [`${N}auth-tls-pass-certificate-to-upstream`]: 'true',
  }).values;
  const r2 = authTlsPlugin(all, 'default', secretsOf({ 'ca.crt': b64(`${CA}\n${CA2}`), 'tls.crt': b64('ignored') }));
  assert.ok(r2.plugin && 'clientCert' in r2.plugin);
  const s2 = r2.plugin.clientCert;
  assert.deepEqual({ verify: s2.verify, depth: s2.depth, page: s2.errorPage, cn: s2.matchCn, pass: s2.passCertificate }, { verify: 'optional_no_ca', depth: 1, page: 'https://errors.example.com/cert', cn: 'CN=client1', pass: true });
  assert.equal(s2.ca.match(/BEGIN CERTIFICATE/g)?.length, 2);
  assert.notEqual(s2.caId, s.caId, 'another bundle, another id');
  const depth2 = authTlsPlugin({ ...v, 'auth-tls-verify-depth': 2 }, 'default', secretsOf({ 'ca.crt': b64(CA) }));
  assert.ok(depth2.plugin && 'clientCert' in depth2.plugin);
  assert.notEqual(depth2.plugin.clientCert.caId, s.caId, 'the depth is part of the id');
});

test('a Secret Portico cannot use fails the Ingress closed, naming why (and the Secret is still indexed)', () => {
  const cases: [Record<string, string>, Record<string, string> | undefined, RegExp, string | undefined][] = [
    [{ [`${N}auth-tls-secret`]: 'default/ca' }, undefined, /Secret default\/ca not found/, 'default/ca'],
    [{ [`${N}auth-tls-secret`]: 'other/ca' }, { 'ca.crt': b64(CA) }, /another namespace/, undefined],
    [{ [`${N}auth-tls-secret`]: 'ca' }, { 'tls.crt': b64(CA) }, /has no ca\.crt/, 'default/ca'],
    [{ [`${N}auth-tls-secret`]: 'ca' }, { 'ca.crt': b64('not a certificate') }, /ca\.crt must hold only PEM certificates/, 'default/ca'],
    [{ [`${N}auth-tls-secret`]: 'ca' }, { 'ca.crt': '' }, /no certificate in ca\.crt/, 'default/ca'],
    [{ [`${N}auth-tls-secret`]: 'ca' }, { 'ca.crt': b64(`${CA}-----BEGIN PRIVATE KEY-----\nQUJD\n-----END PRIVATE KEY-----\n`) }, /only PEM certificates/, 'default/ca'],
    [{ [`${N}auth-tls-secret`]: 'ca' }, { 'ca.crt': b64('-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n') }, /cannot be read/, 'default/ca'],
    [{ [`${N}auth-tls-secret`]: 'ca' }, { 'ca.crt': b64(CA), 'ca.crl': b64('crl') }, /ca\.crl: Portico does not apply certificate revocation lists/, 'default/ca'],
    [{ [`${N}auth-tls-verify-client`]: 'on' }, undefined, /auth-tls-secret is missing/, undefined],
    [{ [`${N}auth-tls-match-cn`]: 'CN=x', [`${N}auth-tls-error-page`]: 'https://e.example/' }, undefined, /auth-tls-secret is missing/, undefined],
  ];
  for (const [annotations, data, why, key] of cases) {
    const n = normalizeIngress(ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations }), secretsOf(data));
    assert.ok(n.ok);
    assert.equal(n.ingress.accessControl.length, 1, JSON.stringify(annotations));
    assert.match(n.ingress.accessControl[0]?.kind ?? '', why, JSON.stringify(annotations));
    assert.match(n.ingress.accessControl[0]?.kind ?? '', /^client-certificate authentication that cannot be applied/);
    assert.equal(n.ingress.annotationPlugins.some((p) => 'clientCert' in p), false);
    assert.equal(n.ingress.authTlsSecret, key);
  }
  // verify-client off alone asks for nothing: reported, not closed (as ingress-nginx ignores it).
  const off = normalizeIngress(ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { [`${N}auth-tls-verify-client`]: 'off' } }));
  assert.ok(off.ok);
  assert.deepEqual(off.ingress.accessControl, []);
  assert.match(off.ingress.problems.join(), /has no effect without nginx\.ingress\.kubernetes\.io\/auth-tls-secret/);
});

test('the model indexes the auth-tls Secret: a change of it requeues the Ingress; a removed reference is dropped', () => {
  const m = new Model();
  const mk = (annotations: Record<string, string>) => {
    const n = normalizeIngress(ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations }), secretsOf({ 'ca.crt': b64(CA), auth: b64('x') }));
    assert.ok(n.ok);
    return n.ingress;
  };
  m.setIngress(mk({ [`${N}auth-tls-secret`]: 'ca' }));
  assert.deepEqual(m.crdsUsingSecret('default/ca'), ['Ingress/default/a']);
  assert.equal(m.isSecretReferenced('default/ca'), true);
  // The same Secret for basic auth and client certificates: one reference, dropped once neither names it.
  m.setIngress(mk({ [`${N}auth-tls-secret`]: 'ca', [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'ca' }));
  assert.deepEqual(m.crdsUsingSecret('default/ca'), ['Ingress/default/a']);
  m.setIngress(mk({}));
  assert.deepEqual(m.crdsUsingSecret('default/ca'), []);
  assert.equal(m.isSecretReferenced('default/ca'), false);
});
