// The webhook PKI: issuing (real openssl) and the pure rotation plan.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { apply, bundleWith, certsOf, issueCa, issueServing, pkiFromSecretData, plan, secretDataOf, SERVING_DAYS } from './certs.ts';

const DAY = 86_400_000;
const names = ['portico-webhook.portico-system', 'portico-webhook.portico-system.svc', 'portico-webhook.portico-system.svc.cluster.local'];

test('create: a CA and a serving certificate for the Service names, issued by it; round-trips through Secret data', () => {
  const now = Date.now();
  const step = plan(null, names, ['127.0.0.1'], now);
  assert.equal(step.action, 'create');
  const pki = apply(step, null, names, ['127.0.0.1'], now)!;
  const ca = new X509Certificate(pki.caCert);
  const cert = new X509Certificate(pki.cert);
  assert.equal(ca.ca, true);
  assert.equal(cert.ca, false);
  assert.ok(cert.checkIssued(ca) && cert.verify(ca.publicKey));
  assert.equal(cert.checkHost('portico-webhook.portico-system.svc'), 'portico-webhook.portico-system.svc');
  assert.equal(cert.checkIP('127.0.0.1'), '127.0.0.1');
  assert.equal(cert.checkHost('evil.example.com'), undefined);
  const back = pkiFromSecretData(secretDataOf(pki));
  assert.deepEqual(back, pki);
  assert.deepEqual(plan(back, names, ['127.0.0.1'], now), { action: 'none' });
});

test('a changed Service name or a serving certificate near its end is re-issued from the same CA', () => {
  const now = Date.now();
  const pki = apply({ action: 'create', why: '' }, null, names, [], now)!;
  assert.equal(plan(pki, ['other.portico-system.svc'], [], now).action, 'reissue');
  const late = now + (SERVING_DAYS - 100) * DAY;
  const step = plan(pki, names, [], late);
  assert.equal(step.action, 'reissue');
  const next = apply(step, pki, names, [], late)!;
  assert.equal(next.caCert, pki.caCert, 'same CA');
  assert.notEqual(next.cert, pki.cert);
  assert.ok(new X509Certificate(next.cert).checkIssued(new X509Certificate(pki.caCert)));
});

test('CA rotation: the new CA joins the bundle first, the serving certificate follows in the next step', () => {
  const now = Date.now();
  const old = { ...issueCa(300), bundle: '' };
  const pki = { ...old, bundle: bundleWith(old.caCert, '', now), ...issueServing(old, names, [], 290) };
  const step = plan(pki, names, [], now);
  assert.equal(step.action, 'rotate-ca');
  const rotated = apply(step, pki, names, [], now)!;
  assert.equal(rotated.cert, pki.cert, 'still serving the old certificate');
  const bundle = certsOf(rotated.bundle).map((c) => c.fingerprint256);
  assert.deepEqual(bundle, [new X509Certificate(rotated.caCert).fingerprint256, new X509Certificate(old.caCert).fingerprint256]);
  const step2 = plan(rotated, names, [], now);
  assert.equal(step2.action, 'reissue');
  const done = apply(step2, rotated, names, [], now)!;
  assert.ok(new X509Certificate(done.cert).checkIssued(new X509Certificate(rotated.caCert)));
  assert.equal(certsOf(done.bundle).length, 2, 'old CA kept in the bundle while valid');
  assert.deepEqual(plan(done, names, [], now), { action: 'none' });
  // Once the old CA has expired it leaves the bundle.
  assert.equal(certsOf(bundleWith(done.caCert, done.bundle, now + 301 * DAY)).length, 1);
});

test('garbage in the Secret is replaced, never served', () => {
  assert.equal(pkiFromSecretData({ 'tls.crt': 'eA==' }), null);
  const now = Date.now();
  const pki = apply({ action: 'create', why: '' }, null, names, [], now)!;
  assert.equal(plan({ ...pki, key: '-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n' }, names, [], now).action, 'create');
  const other = apply({ action: 'create', why: '' }, null, names, [], now)!;
  assert.equal(plan({ ...pki, key: other.key }, names, [], now).action, 'reissue');
});

test('names that are not DNS names or IPs never reach openssl', () => {
  const ca = issueCa(10);
  assert.throws(() => issueServing(ca, ['a,DNS:evil.example'], []), /not a DNS name/);
  assert.throws(() => issueServing(ca, ['ok.example'], ['1.2.3.4,DNS:x']), /not an IP address/);
});
