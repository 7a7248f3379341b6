// The proxy-ssl-* schemas: what reaches nginx.conf (protocols, ciphers, the name, on/off, the depth) has a closed
// alphabet; anything that could end a directive, open a block, start a comment, a variable or a string, break a
// line or hide behind a unicode separator is refused with a message saying what is expected.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CATALOGUE, NGINX_PREFIX, PROXY_SSL_ANNOTATIONS } from './table.ts';
import { parseAnnotations } from './parse.ts';

/** The parsed value, or the error message of the annotation. */
function parse(name: string, value: string): { value?: unknown; error?: string } {
  const r = parseAnnotations({ [`${NGINX_PREFIX}${name}`]: value });
  const v = (r.values as Record<string, unknown>)[name];
  return v !== undefined ? { value: v } : { error: r.errors[0]?.message ?? '(no error)' };
}

/** Payloads that must never reach nginx.conf, appended to a valid value and on their own. */
const INJECTIONS = [';', '; proxy_pass http://evil', '}', '{', '\n', '\r\nproxy_ssl_verify off', '#', '$host', '${x}', '"', "'", '\\', '\u0000', '\u2028', '\u2029', '\u00a0', '\u200b', '\u0085', '\u000b', '\u000c'];

test('the seven proxy-ssl-* rows are supported (some with a difference), with ingress-nginx\'s scope and risk', () => {
  const risk = { 'proxy-ssl-secret': 'medium', 'proxy-ssl-verify': 'low', 'proxy-ssl-verify-depth': 'low', 'proxy-ssl-name': 'high', 'proxy-ssl-server-name': 'low', 'proxy-ssl-ciphers': 'medium', 'proxy-ssl-protocols': 'low' };
  for (const n of PROXY_SSL_ANNOTATIONS) {
    const r = CATALOGUE[n];
    assert.ok(r && r.schema, `${n} is parsed`);
    assert.notEqual(r.status, 'refused', n);
    assert.equal(r.scope, 'ingress', n);
    assert.equal(r.risk, risk[n], n);
    assert.equal(r.access, undefined, `${n} is not access control`);
  }
});

test('proxy-ssl-protocols: TLS versions only, normalised to their order; SSL and anything else refused', () => {
  assert.deepEqual(parse('proxy-ssl-protocols', 'TLSv1.3'), { value: 'TLSv1.3' });
  assert.deepEqual(parse('proxy-ssl-protocols', ' TLSv1.3   TLSv1.2\tTLSv1.2 '), { value: 'TLSv1.2 TLSv1.3' });
  assert.deepEqual(parse('proxy-ssl-protocols', 'TLSv1 TLSv1.1'), { value: 'TLSv1 TLSv1.1' });
  for (const bad of ['', ' ', 'SSLv3', 'TLSv1.2 SSLv2', 'tlsv1.2', 'TLSv1.4', 'TLSv1.2,TLSv1.3', 'HTTPS']) {
    assert.match(parse('proxy-ssl-protocols', bad).error ?? '', /expected TLSv1, TLSv1\.1, TLSv1\.2 or TLSv1\.3/, JSON.stringify(bad));
  }
  for (const inj of INJECTIONS) {
    for (const v of [`TLSv1.2${inj}`, `TLSv1.2 ${inj}TLSv1.3`, inj]) assert.ok(parse('proxy-ssl-protocols', v).error, JSON.stringify(v));
  }
  // What is refused is shown as printable ASCII in the message (no raw control or separator characters).
  assert.match(parse('proxy-ssl-protocols', 'TLSv1.2\u2028x').error ?? '', /"TLSv1\.2\\u2028x" is not a TLS version/);
  assert.doesNotMatch(parse('proxy-ssl-protocols', 'TLSv1.2\u0000').error ?? '', /\u0000/);
});

test('proxy-ssl-ciphers: the OpenSSL cipher-list alphabet, a list OpenSSL accepts', () => {
  for (const ok of ['DEFAULT', 'HIGH:!aNULL:!MD5', 'ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256', 'HIGH:+SHA1:@STRENGTH', 'DEFAULT:@SECLEVEL=1', ' HIGH ']) {
    assert.equal(typeof parse('proxy-ssl-ciphers', ok).value, 'string', ok);
  }
  assert.match(parse('proxy-ssl-ciphers', 'NO-SUCH-CIPHER').error ?? '', /OpenSSL matches no cipher/);
  assert.match(parse('proxy-ssl-ciphers', 'HIGH MEDIUM').error ?? '', /letters, digits and : \+ ! @ = _ - only/);
  for (const inj of INJECTIONS) {
    for (const v of [`HIGH${inj}`, `HIGH:${inj}!aNULL`, inj]) assert.ok(parse('proxy-ssl-ciphers', v).error, JSON.stringify(v));
  }
  assert.ok(parse('proxy-ssl-ciphers', 'HIGH;include /etc/passwd').error);
  assert.ok(parse('proxy-ssl-ciphers', 'x'.repeat(1025)).error);
});

test('proxy-ssl-name: a DNS name, lower-cased; no variables, no wildcards, nothing after it', () => {
  assert.deepEqual(parse('proxy-ssl-name', 'Backend.Example.Internal'), { value: 'backend.example.internal' });
  assert.deepEqual(parse('proxy-ssl-name', 'api.default.svc'), { value: 'api.default.svc' });
  for (const bad of ['$host', '$proxy_host', '*.example.com', 'a..b', '-a.example', 'a_b.example', 'https://a.example', 'a.example:443', `${'a'.repeat(64)}.example`, `${'a.'.repeat(127)}aa`]) {
    assert.match(parse('proxy-ssl-name', bad).error ?? '', /DNS name|longer than 253/, JSON.stringify(bad));
  }
  for (const inj of INJECTIONS) {
    for (const v of [`a.example${inj}`, `a${inj}.example`, inj]) assert.ok(parse('proxy-ssl-name', v).error, JSON.stringify(v));
  }
  // Characters that lower-case to ASCII (the Kelvin sign) are not letters of a DNS name.
  assert.ok(parse('proxy-ssl-name', '\u212aube.example').error);
});

test('proxy-ssl-verify, proxy-ssl-server-name: on/off (true/false, any case); proxy-ssl-verify-depth 0-100', () => {
  for (const n of ['proxy-ssl-verify', 'proxy-ssl-server-name']) {
    for (const [v, want] of [['on', true], ['off', false], ['On', true], ['OFF', false], ['true', true], ['false', false], [' on ', true]] as const) assert.deepEqual(parse(n, v), { value: want }, `${n}=${v}`);
    for (const bad of ['', 'yes', '1', 'enable', 'on off']) assert.match(parse(n, bad).error ?? '', /expected "on" or "off"/, `${n}=${bad}`);
    // Blanks around the value are dropped; anything else (unicode spaces included) is refused.
    for (const inj of INJECTIONS) for (const v of [`on${inj}`, `${inj}on`]) if (/[^ \t]/.test(inj)) assert.ok(parse(n, v).error, `${n}=${JSON.stringify(v)}`);
  }
  assert.deepEqual(parse('proxy-ssl-verify-depth', '2'), { value: 2 });
  assert.deepEqual(parse('proxy-ssl-verify-depth', '0'), { value: 0 });
  assert.deepEqual(parse('proxy-ssl-verify-depth', '100'), { value: 100 });
  for (const bad of ['101', '-1', '1.5', 'two', '', '1e2']) assert.match(parse('proxy-ssl-verify-depth', bad).error ?? '', /between 0 and 100/, bad);
  for (const inj of INJECTIONS) if (/[^ \t]/.test(inj)) assert.ok(parse('proxy-ssl-verify-depth', `2${inj}`).error, JSON.stringify(inj));
});

test('proxy-ssl-secret: a Secret name or "namespace/name"', () => {
  assert.deepEqual(parse('proxy-ssl-secret', 'default/client-cert'), { value: 'default/client-cert' });
  assert.deepEqual(parse('proxy-ssl-secret', 'client-cert'), { value: 'client-cert' });
  for (const bad of ['a/b/c', 'Default/x', '/x', 'x/', '../x', 'ns/x y']) assert.match(parse('proxy-ssl-secret', bad).error ?? '', /Secret name or "namespace\/name"/, bad);
  for (const inj of INJECTIONS) if (/[^ \t]/.test(inj)) assert.ok(parse('proxy-ssl-secret', `default/x${inj}`).error, JSON.stringify(inj));
});
