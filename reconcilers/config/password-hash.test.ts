import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { checkPasswordHash, MAX_BCRYPT_COST, MAX_SHA_CRYPT_ROUNDS } from './password-hash.ts';

// Shapes only: none of these is ever computed here.
const bcrypt = (cost: string) => `$2b$${cost}$${'abcdefghijklmnopqrstuu'}${'A'.repeat(31)}`;
const sha512 = (rounds?: string) => `$6$${rounds === undefined ? '' : `rounds=${rounds}$`}saltsalt$${'x'.repeat(86)}`;
const sha256 = (rounds?: string) => `$5$${rounds === undefined ? '' : `rounds=${rounds}$`}saltsalt$${'x'.repeat(43)}`;

test('password hashes: every scheme Portico verifies is recognized, with its cost', () => {
  assert.deepEqual(checkPasswordHash('$apr1$Ab3dEf9h$uOfqhQrHMNaJeurM74PYM0'), { ok: true, work: { scheme: 'apr1' } });
  assert.deepEqual(checkPasswordHash('{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g='), { ok: true, work: { scheme: 'sha1' } });
  assert.deepEqual(checkPasswordHash('$1$saltsalt$4px9i58NU2Z2/vZOUlGjq.'), { ok: true, work: { scheme: 'md5-crypt' } });
  assert.deepEqual(checkPasswordHash('abJnggxhB/yWI'), { ok: true, work: { scheme: 'des-crypt' } });
  assert.deepEqual(checkPasswordHash(bcrypt('05')), { ok: true, work: { scheme: 'bcrypt', cost: 5 } });
  assert.deepEqual(checkPasswordHash(sha512()), { ok: true, work: { scheme: 'sha512-crypt', cost: 5000 } });
  assert.deepEqual(checkPasswordHash(sha256('100000')), { ok: true, work: { scheme: 'sha256-crypt', cost: 100000 } });
  assert.equal(checkPasswordHash('plaintext').ok, false);
});

test('password hashes: bcrypt cost and sha-crypt rounds are bounded (12, 500,000); the reason never echoes the hash', () => {
  assert.equal(checkPasswordHash(bcrypt(String(MAX_BCRYPT_COST))).ok, true);
  assert.equal(checkPasswordHash(sha512(String(MAX_SHA_CRYPT_ROUNDS))).ok, true);
  assert.equal(checkPasswordHash(sha256(String(MAX_SHA_CRYPT_ROUNDS))).ok, true);
  for (const [hash, why] of [
    [bcrypt('13'), /bcrypt cost 13 is over Portico's bound of 12 .*0\.4 s.*rehash it with cost 12 or less/],
    [bcrypt('31'), /bcrypt cost 31 is over Portico's bound of 12 .*about 29 h/],
    [bcrypt('03'), /bcrypt cost 03 is not valid \(4-12\)/],
    [sha512('999999999'), /sha512-crypt rounds=999999999 is over Portico's bound of 500000 .*about 7 min/],
    [sha256('500001'), /sha256-crypt rounds=500001 is over Portico's bound/],
    [sha512('999'), /rounds=999 is not valid/],
    [sha512('0500000'), /without leading zeros/],
    [sha512('+5000'), /without leading zeros/],
  ] as const) {
    const r = checkPasswordHash(hash);
    assert.equal(r.ok, false, hash);
    if (r.ok) continue;
    assert.match(r.reason, why);
    assert.ok(!r.reason.includes('saltsalt') && !r.reason.includes('abcdefgh'), `no salt or digest in "${r.reason}"`);
  }
});

test('password hashes: the Lua data plane enforces the same bounds (plugins/crypto.lua)', () => {
  const lua = readFileSync(new URL('../../nginx-assets/lua/portico/plugins/crypto.lua', import.meta.url), 'utf8');
  assert.match(lua, new RegExp(`_M\\.MAX_BCRYPT_COST = ${MAX_BCRYPT_COST}\\b`));
  assert.match(lua, new RegExp(`_M\\.MAX_SHA_CRYPT_ROUNDS = ${MAX_SHA_CRYPT_ROUNDS}\\b`));
});
