// Password hashes the data plane verifies for basic-auth (an ingress-nginx auth-secret's htpasswd lines, a
// Consumer's stored bcrypt hash), and the bound on their cost. A hash's cost is chosen by whoever writes the Secret,
// and the nginx worker computes it on its event loop: bcrypt cost 31 or `$6$rounds=999999999$` would block every
// request of that worker for hours. So a tunable cost is bounded, here and again in Lua (plugins/crypto.lua holds
// the same numbers; a unit test keeps them equal).
//
// The bounds are about the same wall time on the reference machine (2 cores, libxcrypt 4.4): bcrypt cost 12 ≈ 200 ms,
// sha256/sha512-crypt 500,000 rounds ≈ 210–225 ms. They admit the usual settings: htpasswd -B uses cost 5 (-C up
// to 17 exists but 10–12 is the common choice), mkpasswd and glibc's crypt use 5,000 sha-crypt rounds.

export const MAX_BCRYPT_COST = 12;
export const MIN_BCRYPT_COST = 4;
export const MAX_SHA_CRYPT_ROUNDS = 500_000;
/** libxcrypt refuses fewer (older glibc raised them to this). */
export const MIN_SHA_CRYPT_ROUNDS = 1_000;

const B64 = '[./0-9A-Za-z]';

/** What a recognized hash costs: its scheme and, for tunable schemes, the cost parameter. */
export interface HashWork {
  scheme: 'apr1' | 'bcrypt' | 'sha1' | 'md5-crypt' | 'sha256-crypt' | 'sha512-crypt' | 'des-crypt';
  /** bcrypt's log2 cost or sha-crypt's rounds; absent for fixed-cost schemes. */
  cost?: number;
}

/**
 * Checks an htpasswd-style hash. Returns its work, or why Portico does not verify it. The reason names the scheme
 * and the cost, never any other part of the hash (it goes into Events and admission messages).
 */
export function checkPasswordHash(hash: string): { ok: true; work: HashWork } | { ok: false; reason: string } {
  const unsupported = { ok: false as const, reason: 'a password hash Portico cannot verify (apr1, bcrypt, {SHA}, crypt md5/sha256/sha512/DES)' };
  if (new RegExp(`^\\$apr1\\$${B64}{1,8}\\$${B64}{22}$`).test(hash)) return { ok: true, work: { scheme: 'apr1' } };
  if (/^\{SHA\}[A-Za-z0-9+/]{27}=$/.test(hash)) return { ok: true, work: { scheme: 'sha1' } };
  const bc = new RegExp(`^\\$2[aby]\\$(\\d\\d)\\$${B64}{53}$`).exec(hash);
  if (bc) {
    const cost = Number(bc[1]);
    if (cost < MIN_BCRYPT_COST) return { ok: false, reason: `bcrypt cost ${bc[1]} is not valid (${MIN_BCRYPT_COST}-${MAX_BCRYPT_COST})` };
    if (cost > MAX_BCRYPT_COST) return { ok: false, reason: `bcrypt cost ${cost} is over Portico's bound of ${MAX_BCRYPT_COST} (one check would block an nginx worker for about ${aboutAtBound(2 ** (cost - MAX_BCRYPT_COST))}); rehash it with cost ${MAX_BCRYPT_COST} or less` };
    return { ok: true, work: { scheme: 'bcrypt', cost } };
  }
  if (new RegExp(`^\\$1\\$[^:\\s$]{1,16}\\$${B64}{22}$`).test(hash)) return { ok: true, work: { scheme: 'md5-crypt' } };
  const sha = new RegExp(`^\\$([56])\\$(?:rounds=([^$]*)\\$)?[^:\\s$]{1,16}\\$(${B64}+)$`).exec(hash);
  if (sha) {
    const scheme = sha[1] === '5' ? 'sha256-crypt' : 'sha512-crypt';
    if ((scheme === 'sha256-crypt' ? 43 : 86) !== sha[3]!.length) return unsupported;
    if (sha[2] === undefined) return { ok: true, work: { scheme, cost: 5000 } };
    if (!/^[1-9]\d{0,9}$/.test(sha[2])) return { ok: false, reason: `${scheme} rounds must be a number without leading zeros` };
    const rounds = Number(sha[2]);
    if (rounds < MIN_SHA_CRYPT_ROUNDS) return { ok: false, reason: `${scheme} rounds=${rounds} is not valid (${MIN_SHA_CRYPT_ROUNDS}-${MAX_SHA_CRYPT_ROUNDS})` };
    if (rounds > MAX_SHA_CRYPT_ROUNDS) return { ok: false, reason: `${scheme} rounds=${rounds} is over Portico's bound of ${MAX_SHA_CRYPT_ROUNDS} (one check would block an nginx worker for about ${aboutAtBound(rounds / MAX_SHA_CRYPT_ROUNDS)}); rehash it with ${MAX_SHA_CRYPT_ROUNDS} rounds or fewer` };
    return { ok: true, work: { scheme, cost: rounds } };
  }
  if (new RegExp(`^${B64}{13}$`).test(hash)) return { ok: true, work: { scheme: 'des-crypt' } };
  return unsupported;
}

/** Verify time at the bound on the reference machine (see the top of this file). */
const SECONDS_AT_BOUND = 0.2;

/** "0.4 s", "3 min", "29 h", "12 days": the time of a check `factor` times as costly as one at the bound. */
function aboutAtBound(factor: number): string {
  const s = SECONDS_AT_BOUND * factor;
  if (s < 60) return `${Number(s.toPrecision(2))} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 3 * 86400) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400).toLocaleString('en-US')} days`;
}

/** A stored bcrypt hash (what a Consumer's password may be instead of the password itself). */
export const BCRYPT_SHAPE = new RegExp(`^\\$2[aby]\\$\\d\\d\\$${B64}{53}$`);
