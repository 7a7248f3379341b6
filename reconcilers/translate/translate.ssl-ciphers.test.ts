// ssl-ciphers (per Ingress): the strict cipher-list schema, and the translation — the list goes with the certificate of
// each host of the Ingress's rules (and so with its server-alias names), the oldest Ingress's list wins on a shared
// host, and a host that cannot carry it is said in a Warning, never silently left with the ConfigMap's list.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../operator/kube/object.ts';
import { cipherListSchema } from '../values/safe.ts';
import { parseAnnotations } from '../annotations/parse.ts';
import { certificateBody, certificateId } from '../nginx-driver/nginx/dynamic.ts';
import { OPTS, ing, modelOf, rule, svc, svcRef } from './fixtures.test-helpers.ts';
import { translate } from './translate.ts';

const N = 'nginx.ingress.kubernetes.io/';

test('cipherListSchema: OpenSSL cipher-list syntax only, bounded, and at least one TLS 1.2 cipher OpenSSL knows', () => {
  for (const ok of ['ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256', 'HIGH:!aNULL:!MD5', 'ALL:!EXPORT56:RC4+RSA:+HIGH:+MEDIUM:-LOW', 'HIGH:@STRENGTH:@SECLEVEL=2', 'kECDHE+AESGCM', 'TLS_AES_128_GCM_SHA256:ECDHE-RSA-AES128-GCM-SHA256']) {
    const r = cipherListSchema.safeParse(ok);
    assert.ok(r.success, `${ok}: ${r.success ? '' : r.error.message}`);
  }
  const cases: [string, RegExp][] = [
    ['HIGH;ssl_protocols SSLv3', /"HIGH;ssl_protocols SSLv3" is not an OpenSSL cipher-list entry/],
    ['HIGH ALL', /is not an OpenSSL cipher-list entry/],
    ['HIGH,ALL', /is not an OpenSSL cipher-list entry/],
    ["'HIGH'", /is not an OpenSSL cipher-list entry/],
    ['HIGH\nssl_protocols', /is not an OpenSSL cipher-list entry/],
    ['HIGH::MEDIUM', /an empty entry/],
    ['$ssl_ciphers', /is not an OpenSSL cipher-list entry/],
    ['@SECLEVEL=9', /is not an OpenSSL cipher-list entry/],
    ['NOT-A-CIPHER:ALSO-NOT', /OpenSSL matches no TLS 1\.2 cipher/],
    ['TLS_AES_128_GCM_SHA256', /OpenSSL matches no TLS 1\.2 cipher in this list \(TLS 1\.3 suites are not set by ssl-ciphers\)/],
    ['@STRENGTH', /OpenSSL matches no TLS 1\.2 cipher/],
    [`${'AES128-SHA:'.repeat(64)}HIGH`, /more than 64/],
    ['A'.repeat(1025), /longer than 1024/],
  ];
  for (const [v, why] of cases) {
    const r = cipherListSchema.safeParse(v);
    assert.equal(r.success, false, v);
    assert.match(r.success ? '' : r.error.issues.map((i) => i.message).join(), why, v);
  }
  // As an annotation: an invalid value is reported, never applied.
  const p = parseAnnotations({ [`${N}ssl-ciphers`]: 'HIGH;evil' });
  assert.equal(p.values['ssl-ciphers'], undefined);
  assert.deepEqual(p.errors.map((e) => e.annotation), [`${N}ssl-ciphers`]);
  assert.match(p.errors[0]?.message ?? '', /not an OpenSSL cipher-list entry/);
  assert.deepEqual(p.unsupported, [], 'no longer refused');
});

const mat = (key: string, hosts: string[]) => ({ key, ok: true as const, cert: `C ${key}`, privateKey: 'K', hosts, notAfter: '2099-01-01T00:00:00.000Z', fingerprint: key });
function run(ingresses: KubeObject[], secrets: string[][] = []) {
  const m = modelOf({ services: [svc('web', [{ port: 80 }])], ingresses });
  for (const [key, ...hosts] of secrets) m.setSecret(mat(key as string, hosts));
  const r = translate(m.snapshot(), OPTS);
  const warnings = (reason: string) => r.events.filter((e) => e.reason === reason).map((e) => `${e.ref}: ${e.message}`);
  return { r, certs: r.config.data.certificates, warnings };
}
const web = [{ path: '/', backend: svcRef('web', 80) }];
const STRICT = 'ECDHE-RSA-AES256-GCM-SHA384';
const OTHER = 'ECDHE-RSA-AES128-GCM-SHA256';

test('ssl-ciphers: the list goes with the certificate of each host of the Ingress (and its server-alias); other hosts keep theirs without', () => {
  const { certs, warnings } = run(
    [
      ing('a', { rules: [rule('a.example', web), rule('b.example', web)], tls: [{ hosts: ['a.example', 'b.example', 'alias.example'], secretName: 's' }] }, { annotations: { [`${N}ssl-ciphers`]: STRICT, [`${N}server-alias`]: 'alias.example' } }),
      ing('plain', { rules: [rule('c.example', web)], tls: [{ hosts: ['c.example'], secretName: 's' }] }, { created: '2026-03-01T00:00:00Z' }),
    ],
    [['default/s', 'a.example', 'b.example', 'c.example', 'alias.example']],
  );
  assert.equal(certs['a.example']?.ciphers, STRICT);
  assert.equal(certs['b.example']?.ciphers, STRICT);
  assert.equal(certs['alias.example']?.ciphers, STRICT, 'an alias name is the host\'s server (ingress-nginx\'s server_name)');
  assert.equal(certs['c.example']?.ciphers, undefined);
  assert.equal(certs['c.example']?.cert, certs['a.example']?.cert, 'the same certificate');
  assert.deepEqual([...warnings('SSLCiphersIgnored'), ...warnings('SSLCiphersConflict')], []);
  // On the wire: the same certificate with a list is an entry of its own, carrying the list.
  const body = certificateBody({ upsert: { 'a.example': certs['a.example']!, 'c.example': certs['c.example']! }, remove: [], defaultChanged: false, default: null });
  const [ida, idc] = [body.hosts['a.example'] as string, body.hosts['c.example'] as string];
  assert.notEqual(ida, idc);
  assert.equal(body.certificates[ida]?.ciphers, STRICT);
  assert.equal(body.certificates[idc]?.ciphers, undefined);
  assert.equal(certificateId(certs['c.example']!), idc);
});

test('ssl-ciphers: the oldest Ingress on a host wins (a younger one with another list gets SSLCiphersConflict); a host without a certificate of its own gets SSLCiphersIgnored', () => {
  const { certs, warnings } = run(
    [
      ing('old', { rules: [rule('a.example', web)], tls: [{ hosts: ['a.example'], secretName: 's' }] }, { created: '2026-01-01T00:00:00Z', annotations: { [`${N}ssl-ciphers`]: STRICT } }),
      ing('young', { rules: [rule('a.example', [{ path: '/y', backend: svcRef('web', 80) }]), rule('plain.example', web)] }, { created: '2026-02-01T00:00:00Z', annotations: { [`${N}ssl-ciphers`]: OTHER } }),
      ing('same', { rules: [rule('a.example', [{ path: '/s', backend: svcRef('web', 80) }])] }, { created: '2026-03-01T00:00:00Z', annotations: { [`${N}ssl-ciphers`]: STRICT } }),
      ing('nohost', { rules: [rule(undefined, web)] }, { created: '2026-04-01T00:00:00Z', annotations: { [`${N}ssl-ciphers`]: STRICT } }),
    ],
    [['default/s', 'a.example']],
  );
  assert.equal(certs['a.example']?.ciphers, STRICT);
  assert.equal(certs['plain.example'], undefined, 'no certificate is made up for a host without one');
  assert.deepEqual(warnings('SSLCiphersConflict'), ['Ingress/default/young: ssl-ciphers for host a.example: Ingress default/old (older) sets another list for it; that one applies']);
  assert.deepEqual(warnings('SSLCiphersIgnored'), [
    "Ingress/default/young: ssl-ciphers for host plain.example: the host has no certificate of its own (no TLS section with a usable Secret), so its handshake is the default certificate's, with the ConfigMap's ssl-ciphers",
    "Ingress/default/nohost: ssl-ciphers: the Ingress has no rule with a host (a TLS handshake picks its cipher list by server name); the ConfigMap's ssl-ciphers apply",
  ]);
});

test('ssl-ciphers: an Ingress of another namespace than the one configuring the host\'s TLS never changes its handshake', () => {
  const { certs, warnings } = run(
    [
      ing('owner', { rules: [rule('shared.example', web)], tls: [{ hosts: ['shared.example'], secretName: 's' }] }, { created: '2026-02-01T00:00:00Z' }),
      ing('other', { rules: [rule('shared.example', [{ path: '/b', backend: svcRef('web', 80) }])] }, { ns: 'team-b', created: '2026-01-01T00:00:00Z', annotations: { [`${N}ssl-ciphers`]: STRICT } }),
      ing('mine', { rules: [rule('shared.example', [{ path: '/m', backend: svcRef('web', 80) }])] }, { created: '2026-03-01T00:00:00Z', annotations: { [`${N}ssl-ciphers`]: OTHER } }),
    ],
    [['default/s', 'shared.example']],
  );
  assert.equal(certs['shared.example']?.ciphers, OTHER, 'the TLS owner\'s namespace sets it, even from a younger Ingress');
  assert.deepEqual(warnings('SSLCiphersIgnored'), ['Ingress/team-b/other: ssl-ciphers for host shared.example: its TLS is configured by an Ingress of another namespace, whose handshake namespace team-b does not change']);
  assert.deepEqual(warnings('SSLCiphersConflict'), []);
});
