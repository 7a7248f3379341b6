// Rendering the proxy-ssl-* profile settings: the proxy_ssl_* and grpc_ssl_* directives of a profile's location,
// the client certificate and key as files named by digest (mode 0600, directory 0700, never their text in
// nginx.conf), nginx -t on the result, and the escaping helpers refusing what no schema should have let through.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Profile, Structure } from '../../config/types.ts';
import { normalizeIngress } from '../../model/normalize.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { issue, makeCa, proxySslData } from '../../translate/pki.test-helpers.ts';
import { translate } from '../../translate/translate.ts';
import { UnsafeValueError } from './escape.ts';
import { clientCertificateFiles, renderNginxConf, runtimePaths, trustedCaFile, writeClientCertificates, writeTrustedCas } from './render.ts';
import { nginxTest, runtimeDir } from './nginx-t.test-helpers.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'portico-pssl-render-'));
const ca = makeCa(dir, 'test-ca');
const client = issue(dir, ca, 'client');
const A = 'nginx.ingress.kubernetes.io/';

/** The structure the controller renders for one Ingress with these annotations (Secret default/backend-tls). */
function structureFor(annotations: Record<string, string>): Structure {
  const m = modelOf({ services: [svc('api', [{ port: 443 }])], slices: [slice('api-1', 'api', [{ port: 443 }], [{ ip: '10.0.0.5' }])] });
  const secrets: Record<string, Record<string, string>> = { 'default/backend-tls': proxySslData({ client, ca }) };
  const r = normalizeIngress(ing('app', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('api', 443) }])] }, { annotations }), (k) => (secrets[k] ? { data: secrets[k] } : undefined));
  assert.ok(r.ok);
  m.setIngress(r.ingress);
  return translate(m.snapshot(), OPTS).config.structure;
}

/** The named location of the structure's only profile. */
function locationOf(conf: string, p: Profile): string {
  const m = new RegExp(`location @portico_${p.name} \\{[\\s\\S]*?\\n    \\}`).exec(conf);
  assert.ok(m, `location of ${p.name}`);
  return m[0];
}

test('every setting renders in the profile\'s location (proxy_ssl_* and grpc_ssl_*); the key is a file of mode 0600, never in nginx.conf; nginx -t passes', () => {
  const s = structureFor({ [`${A}backend-protocol`]: 'HTTPS', [`${A}proxy-ssl-secret`]: 'backend-tls', [`${A}proxy-ssl-verify`]: 'on', [`${A}proxy-ssl-verify-depth`]: '3', [`${A}proxy-ssl-name`]: 'backend.internal', [`${A}proxy-ssl-server-name`]: 'on', [`${A}proxy-ssl-protocols`]: 'TLSv1.3', [`${A}proxy-ssl-ciphers`]: 'HIGH:!aNULL:!MD5' });
  const p = s.profiles[0];
  assert.ok(p?.sslCertificate && p.trustedCa);
  const rt = runtimeDir();
  writeTrustedCas(s, rt);
  writeClientCertificates(s, rt);
  const conf = renderNginxConf(s, rt, 'c');
  const files = clientCertificateFiles(rt, p.sslCertificate);
  const loc = locationOf(conf, p);
  for (const d of ['proxy', 'grpc']) {
    assert.ok(loc.includes(`      ${d}_ssl_certificate "${files.cert}";\n`), `${d}_ssl_certificate`);
    assert.ok(loc.includes(`      ${d}_ssl_certificate_key "${files.key}";\n`), `${d}_ssl_certificate_key`);
    assert.ok(loc.includes(`      ${d}_ssl_trusted_certificate "${trustedCaFile(rt, p.trustedCa)}";\n`));
    for (const line of [`${d}_ssl_verify on;`, `${d}_ssl_verify_depth 3;`, `${d}_ssl_server_name on;`, `${d}_ssl_name backend.internal;`, `${d}_ssl_protocols TLSv1.3;`, `${d}_ssl_ciphers HIGH:!aNULL:!MD5;`]) assert.ok(loc.includes(`      ${line}\n`), line);
  }
  assert.match(loc, /proxy_pass https:\/\/portico_be_p_[a-z0-9]+;/);
  // The key and certificate are in their files only.
  const keyBody = p.sslCertificate.key.split('\n')[1] ?? '';
  assert.ok(keyBody.length > 20 && !conf.includes(keyBody), 'no key material in nginx.conf');
  assert.ok(!conf.includes('PRIVATE KEY'));
  assert.equal(readFileSync(files.key, 'utf8'), p.sslCertificate.key);
  assert.equal(readFileSync(files.cert, 'utf8'), p.sslCertificate.cert);
  for (const f of [files.key, files.cert]) assert.equal(statSync(f).mode & 0o777, 0o600, f);
  assert.equal(statSync(path.dirname(files.key)).mode & 0o777, 0o700);
  assert.match(path.basename(files.key), /^[0-9a-f]{32}\.key$/, 'named by digest');
  nginxTest(rt, conf);
  // Rewriting is idempotent (a file nginx uses is never rewritten).
  writeClientCertificates(s, rt);
  assert.equal(readFileSync(files.key, 'utf8'), p.sslCertificate.key);
});

test('verification without SNI, GRPCS, and the Upstream\'s defaults (depth 4) render as asked and pass nginx -t', () => {
  const rt = runtimeDir();
  const s = structureFor({ [`${A}backend-protocol`]: 'GRPCS', [`${A}proxy-ssl-secret`]: 'backend-tls', [`${A}proxy-ssl-verify`]: 'on' });
  const p = s.profiles[0];
  assert.ok(p);
  writeTrustedCas(s, rt);
  writeClientCertificates(s, rt);
  const loc = locationOf(renderNginxConf(s, rt, 'c'), p);
  assert.ok(!loc.includes('ssl_server_name'), 'SNI stays off: the name is only verified');
  assert.ok(loc.includes('      grpc_ssl_name api.default.svc;\n'));
  assert.ok(loc.includes('      grpc_ssl_verify_depth 1;\n'));
  assert.ok(loc.includes('      proxy_ssl_protocols TLSv1.2 TLSv1.3;\n'));
  assert.ok(loc.includes('      proxy_ssl_ciphers DEFAULT;\n'));
  assert.match(loc, /grpc_pass grpcs:\/\/portico_be_p_[a-z0-9]+;/);
  nginxTest(rt, renderNginxConf(s, rt, 'c'));
  // An Upstream's verification (no sslVerifyDepth) keeps its depth of 4.
  const up: Structure = { ...s, profiles: [{ name: 'p_up', backendProtocol: 'HTTPS', sslServerName: 'api.default.svc', trustedCa: ca.cert }] };
  writeTrustedCas(up, rt);
  const upLoc = locationOf(renderNginxConf(up, rt, 'c'), up.profiles[0] as Profile);
  assert.ok(upLoc.includes('      proxy_ssl_verify_depth 4;\n') && upLoc.includes('      proxy_ssl_server_name on;\n'));
});

test('the escaping helpers refuse settings no schema should have let through; the files are checked again', () => {
  const base = structureFor({ [`${A}backend-protocol`]: 'HTTPS', [`${A}proxy-ssl-secret`]: 'backend-tls' });
  const p = base.profiles[0] as Profile;
  const rt = runtimePaths('/run/portico-never-written');
  const bad: Partial<Profile>[] = [
    { sslProtocols: 'TLSv1.2; include /etc/passwd' },
    { sslProtocols: 'TLSv1.2\nproxy_ssl_verify off' },
    { sslCiphers: 'HIGH}' },
    { sslCiphers: 'HIGH:$x' },
    { sslCiphers: 'HIGH #' },
    { sslCiphers: 'content_by_lua_block' },
    { sslServerName: '$host', sslSni: false },
    { sslServerName: 'a.example; proxy_ssl_verify off' },
    { trustedCa: ca.cert, sslVerifyDepth: -1 },
    { trustedCa: ca.cert, sslVerifyDepth: '3;' as unknown as number },
  ];
  for (const b of bad) assert.throws(() => renderNginxConf({ ...base, profiles: [{ ...p, ...b }] }, rt, 'c'), UnsafeValueError, JSON.stringify(b));
  const files = runtimeDir();
  for (const c of [
    { cert: 'not a certificate', key: p.sslCertificate?.key ?? '' },
    { cert: `${client.cert}-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n`, key: p.sslCertificate?.key ?? '' },
    { cert: client.cert, key: `${p.sslCertificate?.key}ssl_verify off;\n` },
    { cert: client.cert, key: `${p.sslCertificate?.key}${p.sslCertificate?.key}` },
    { cert: client.cert, key: '-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n' },
  ]) {
    assert.throws(() => writeClientCertificates({ ...base, profiles: [{ ...p, sslCertificate: c }] }, files), UnsafeValueError);
  }
});
