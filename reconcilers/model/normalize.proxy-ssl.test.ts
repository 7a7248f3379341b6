// normalizeIngress and proxy-ssl-secret: the Secret is read from the Ingress's own namespace only (and indexed, so a
// change of it reconciles the Ingress again); a missing or unusable Secret, another namespace, an invalid proxy-ssl-*
// value or proxy-ssl-verify without ca.crt is an error the translation fails closed on, with a clear text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { SecretReader } from '../annotations/plugins.ts';
import { ing, rule, svcRef } from '../translate/fixtures.test-helpers.ts';
import { b64, issue, makeCa, proxySslData } from '../translate/pki.test-helpers.ts';
import { Model } from './model.ts';
import { normalizeIngress } from './normalize.ts';
import type { NormalizedIngress } from './types.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'portico-pssl-norm-'));
const ca = makeCa(dir, 'test-ca');
const client = issue(dir, ca, 'client');
const other = issue(dir, ca, 'other-client');

const A = 'nginx.ingress.kubernetes.io/';
function normalized(annotations: Record<string, string>, secrets: Record<string, Record<string, string>> = {}): NormalizedIngress {
  const reader: SecretReader = (k) => (secrets[k] ? { data: secrets[k] } : undefined);
  const r = normalizeIngress(ing('app', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('api', 443) }])] }, { ns: 'team', annotations }), reader);
  assert.ok(r.ok);
  return r.ingress;
}

test('a Secret with tls.crt, tls.key and ca.crt: the client certificate and the CA, re-encoded as PEM', () => {
  const n = normalized({ [`${A}proxy-ssl-secret`]: 'team/backend-tls', [`${A}proxy-ssl-verify`]: 'on' }, { 'team/backend-tls': proxySslData({ client, ca }) });
  assert.equal(n.proxySsl?.error, undefined);
  assert.equal(n.proxySsl?.secretKey, 'team/backend-tls');
  assert.match(n.proxySsl?.certificate?.cert ?? '', /^-----BEGIN CERTIFICATE-----\n[\s\S]+-----END CERTIFICATE-----\n$/);
  assert.match(n.proxySsl?.certificate?.key ?? '', /^-----BEGIN PRIVATE KEY-----\n[\s\S]+-----END PRIVATE KEY-----\n$/);
  assert.equal(n.proxySsl?.ca, ca.cert.replace(/\r\n/g, '\n'));
  assert.deepEqual(n.problems, []);
  // A bare name is the Ingress's namespace; ca.crt alone (verification only, no client certificate) is usable.
  const caOnly = normalized({ [`${A}proxy-ssl-secret`]: 'backend-ca' }, { 'team/backend-ca': proxySslData({ ca }) });
  assert.deepEqual([caOnly.proxySsl?.secretKey, caOnly.proxySsl?.certificate, caOnly.proxySsl?.error, typeof caOnly.proxySsl?.ca], ['team/backend-ca', undefined, undefined, 'string']);
});

test('the Secret is indexed: a change of it reconciles the Ingress again; none is read in another namespace', () => {
  const m = new Model();
  m.setIngress(normalized({ [`${A}proxy-ssl-secret`]: 'team/backend-tls' }));
  assert.deepEqual(m.crdsUsingSecret('team/backend-tls'), ['Ingress/team/app']);
  assert.ok(m.isSecretReferenced('team/backend-tls'), 'its data is kept by the informers');
  m.setIngress(normalized({}));
  assert.deepEqual(m.crdsUsingSecret('team/backend-tls'), [], 'dropped with the annotation');
  const asked: string[] = [];
  const r = normalizeIngress(ing('app', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('api', 443) }])] }, { ns: 'team', annotations: { [`${A}proxy-ssl-secret`]: 'kube-system/admin-tls' } }), (k) => {
    asked.push(k);
    return { data: proxySslData({ client }) };
  });
  assert.ok(r.ok);
  assert.deepEqual(asked, [], 'a Secret of another namespace is never read');
  assert.equal(r.ingress.proxySsl?.secretKey, undefined);
  assert.match(r.ingress.proxySsl?.error ?? '', /proxy-ssl-secret kube-system\/admin-tls is in another namespace; only a Secret of the Ingress's own namespace \(team\) is read/);
});

test('a missing Secret, or one Portico cannot use: a clear error, never a partial configuration', () => {
  const ann = { [`${A}proxy-ssl-secret`]: 'team/backend-tls' };
  const missing = normalized(ann);
  assert.deepEqual(missing.proxySsl, { secretKey: 'team/backend-tls', error: 'Secret team/backend-tls (proxy-ssl-secret) not found', missing: true });
  const cases: [Record<string, string>, RegExp][] = [
    [{}, /has neither tls\.crt and tls\.key \(a client certificate\) nor ca\.crt/],
    [{ 'tls.crt': b64(client.cert) }, /has tls\.crt but no tls\.key/],
    [{ 'tls.key': b64(client.key) }, /has tls\.key but no tls\.crt/],
    [{ 'tls.crt': b64('not a certificate'), 'tls.key': b64(client.key) }, /tls\.crt of Secret team\/backend-tls must hold only PEM certificates/],
    [{ 'tls.crt': b64(`${client.cert}\n-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n`), 'tls.key': b64(client.key) }, /tls\.crt .* must hold only PEM certificates/],
    [{ 'tls.crt': b64('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'), 'tls.key': b64(client.key) }, /tls\.crt .* holds a certificate that cannot be read/],
    [{ 'tls.crt': b64(client.cert), 'tls.key': b64('garbage') }, /tls\.key of Secret team\/backend-tls is not a PEM private key/],
    [{ 'tls.crt': b64(client.cert), 'tls.key': b64(other.key) }, /tls\.key of Secret team\/backend-tls does not match the certificate in its tls\.crt/],
    [{ 'ca.crt': b64('junk') }, /ca\.crt of Secret team\/backend-tls must hold only PEM certificates/],
  ];
  for (const [data, why] of cases) {
    const n = normalized(ann, { 'team/backend-tls': data });
    assert.match(n.proxySsl?.error ?? '', why, JSON.stringify(Object.keys(data)));
    assert.equal(n.proxySsl?.secretKey, 'team/backend-tls', 'still watched: fixing the Secret fixes the Ingress');
    assert.equal(n.proxySsl?.certificate, undefined);
    assert.equal(n.proxySsl?.missing, undefined);
  }
  // Nothing of the key reaches the error text.
  const badKey = normalized(ann, { 'team/backend-tls': { 'tls.crt': b64(client.cert), 'tls.key': b64('-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleS1tYXRlcmlhbA==\n-----END PRIVATE KEY-----\n') } });
  assert.doesNotMatch(badKey.proxySsl?.error ?? '', /c2VjcmV0|secret-key-material/);
  // proxy-ssl-verify on needs ca.crt: nothing to verify against is an error, not an unverified backend.
  const noCa = normalized({ ...ann, [`${A}proxy-ssl-verify`]: 'on' }, { 'team/backend-tls': proxySslData({ client }) });
  assert.match(noCa.proxySsl?.error ?? '', /proxy-ssl-verify is on but Secret team\/backend-tls has no ca\.crt/);
});

test('with proxy-ssl-secret an invalid proxy-ssl-* value is an error (not ignored); without it, values are kept for the Warning', () => {
  const n = normalized({ [`${A}proxy-ssl-secret`]: 'team/backend-tls', [`${A}proxy-ssl-protocols`]: 'SSLv3', [`${A}proxy-ssl-name`]: '$host' }, { 'team/backend-tls': proxySslData({ client, ca }) });
  assert.match(n.proxySsl?.error ?? '', /^invalid .*proxy-ssl-name="\$host": expected a DNS name.*proxy-ssl-protocols="SSLv3": "SSLv3" is not a TLS version/);
  assert.equal(n.proxySsl?.certificate, undefined, 'nothing is applied');
  assert.deepEqual(n.problems, [], 'reported once, as what fails closed — not as "ignored"');
  const badSecret = normalized({ [`${A}proxy-ssl-secret`]: 'team/Bad_Name' });
  assert.match(badSecret.proxySsl?.error ?? '', /^invalid nginx\.ingress\.kubernetes\.io\/proxy-ssl-secret="team\/Bad_Name": must be a Secret name/);
  // Without proxy-ssl-secret, as in ingress-nginx, the others mean nothing: no proxySsl; an invalid value is an
  // ordinary ignored annotation.
  const alone = normalized({ [`${A}proxy-ssl-verify`]: 'on', [`${A}proxy-ssl-ciphers`]: 'HIGH;' });
  assert.equal(alone.proxySsl, undefined);
  assert.equal(alone.annotations['proxy-ssl-verify'], true);
  assert.equal(alone.problems.length, 1);
  assert.match(alone.problems[0] ?? '', /^annotation ignored: nginx\.ingress\.kubernetes\.io\/proxy-ssl-ciphers/);
});
