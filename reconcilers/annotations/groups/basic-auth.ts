// Basic and digest authentication: auth-type basic or digest with auth-secret (an htpasswd or htdigest file, or an
// auth-map) → the basic-auth plugin, or the digest-auth plugin, with the Secret's users. Access control: anything
// that leaves no usable user fails the Ingress closed.
import { z } from 'zod';
import type { PluginInstance } from '../../config/types.ts';
import { checkPasswordHash } from '../../config/password-hash.ts';
import { NGINX_PREFIX, row, type Closed, type SecretReader, type Values } from '../group.ts';
import { ownNamespaceRef } from '../own-namespace.ts';
import { authSecretSchema, realmSchema } from '../../values/safe.ts';
import { digestUsers, USER, type DigestAuthPlugin } from './digest-auth.ts';

export const rows = {
  'auth-type': row(z.enum(['basic', 'digest'], { error: () => 'auth-type must be basic or digest' }), 'ingress', 'low', 'HTTP basic authentication (basic-auth plugin) or HTTP Digest authentication (digest-auth plugin: MD5, qop=auth) against the users of auth-secret', { access: 'basic/digest authentication', difference: 'digest: MD5 with qop=auth only; a nonce lasts 300 s (then stale=true), a reused nc is refused; no auth-realm: the htdigest file\'s one realm (ingress-nginx then lets every request in)' }),
  'auth-secret': row(authSecretSchema, 'ingress', 'medium', 'Secret with the users: its name, or "namespace/name" of the Ingress\'s own namespace (another namespace is refused and fails closed)', { access: 'basic/digest authentication', difference: 'only a Secret of the Ingress\'s own namespace; one in another namespace makes the Ingress fail closed' }),
  'auth-secret-type': row(z.enum(['auth-file', 'auth-map'], { error: () => 'auth-secret-type must be auth-file or auth-map' }), 'ingress', 'low', 'auth-file (default: an htpasswd file, or for digest an htdigest file of "user:realm:HA1" lines, under the key "auth") or auth-map (a key per user, the value its password hash; for digest "realm:HA1" or the HA1 alone)', { access: 'basic/digest authentication' }),
  'auth-realm': row(realmSchema, 'ingress', 'medium', 'Realm of the challenge (basic default "Authentication Required"; digest: the realm of the users\' HA1, default the one realm of the htdigest file)', { access: 'basic/digest authentication' }),
};

/** Refused together (translate/risk.ts): basic auth is applied as written or fails closed, never in part. */
export const refusedTogether = [['auth-type', 'auth-secret', 'auth-secret-type', 'auth-realm']] as const;

/** The users of auth-secret (its Secret cannot be named by a Plugin object inline, so this is the instance's data). */
export interface BasicAuthPlugin {
  suffix: 'auth';
  basicAuth: { realm: string; users: { username: string; hash: string }[] };
}

/**
 * auth-type: basic with auth-secret (ingress-nginx): the users of an htpasswd file ("auth" key) or of an auth-map
 * (a key per user); auth-type: digest: those of an htdigest file or auth-map (digest-auth.ts). Any problem that
 * leaves no usable user fails the Ingress closed; a line Portico cannot use is reported and skipped. Only a Secret of
 * the Ingress's own namespace is read.
 */
export function basicAuthPlugin(
  v: Values<typeof rows>,
  namespace: string,
  secrets: SecretReader,
): { plugin?: BasicAuthPlugin | DigestAuthPlugin; secretKey?: string; problems: string[]; closed: Closed[] } {
  const problems: string[] = [];
  const closed: Closed[] = [];
  const secretName = v['auth-secret'];
  const type = v['auth-type'];
  if (type !== 'basic' && type !== 'digest') {
    if (secretName !== undefined || v['auth-secret-type'] !== undefined || v['auth-realm'] !== undefined) {
      problems.push(`annotation ignored: ${NGINX_PREFIX}auth-secret/-secret-type/-realm have no effect without ${NGINX_PREFIX}auth-type: basic or digest`);
    }
    return { problems, closed };
  }
  const fail = (why: string) => {
    closed.push({ annotation: `${NGINX_PREFIX}auth-type`, kind: `${type} authentication that cannot be applied (${why})` });
    return { problems, closed };
  };
  if (!secretName) return fail(`${NGINX_PREFIX}auth-secret is missing`);
  const { key: secretKey, elsewhere, found: sec } = ownNamespaceRef(secretName, namespace, secrets);
  if (elsewhere) return fail(`auth-secret ${secretName} is in another namespace; only the Ingress's own namespace is read`);
  if (!sec?.data) return { ...fail(`Secret ${secretKey} not found`), secretKey };
  const decode = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');
  if (type === 'digest') {
    const d = digestUsers(v['auth-secret-type'] ?? 'auth-file', v['auth-realm'], sec.data, secretKey, decode);
    problems.push(...d.problems);
    if ('closed' in d) return { ...fail(d.closed), secretKey };
    return { plugin: { suffix: 'auth', digestAuth: d.digestAuth }, secretKey, problems, closed };
  }
  // Where an entry is, for messages: a line number of the htpasswd file, or a position among the auth-map's keys.
  // Never its user name or any other part of it: problems become Events, which the namespace's users read without
  // being allowed to read the Secret (a line without ":" may well be a password).
  const entries: { user: string; hash: string; where: string }[] = [];
  if ((v['auth-secret-type'] ?? 'auth-file') === 'auth-file') {
    const file = sec.data.auth;
    if (file === undefined) return { ...fail(`Secret ${secretKey} has no "auth" key (an htpasswd file)`), secretKey };
    decode(file)
      .split(/\r?\n/)
      .forEach((raw, n) => {
        const line = raw.trim();
        if (!line || line.startsWith('#')) return;
        const i = line.indexOf(':');
        entries.push({ user: i < 0 ? line : line.slice(0, i), hash: i < 0 ? '' : line.slice(i + 1), where: `line ${n + 1} of "auth"` });
      });
  } else {
    Object.entries(sec.data)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .forEach(([user, b64], n) => entries.push({ user, hash: decode(b64).trim(), where: `key ${n + 1} (in sorted order)` }));
  }
  const users: { username: string; hash: string }[] = [];
  const seen = new Set<string>();
  for (const { user, hash, where } of entries) {
    if (!USER.test(user)) problems.push(`auth-secret ${secretKey}: ${where}: the user name is not printable ASCII without ":"; skipped`);
    else {
      // The cost bound (password-hash.ts): a hash over it would block an nginx worker; the reason names the scheme
      // and cost only, never the hash.
      const checked = checkPasswordHash(hash);
      const unverifiable = 'not "user:hash" with a password hash Portico can verify (apr1, bcrypt, {SHA}, crypt md5/sha256/sha512/DES)';
      if (!checked.ok) problems.push(`auth-secret ${secretKey}: ${where}: ${hash && !checked.reason.startsWith('a password hash') ? checked.reason : unverifiable}; skipped`);
      else if (!seen.has(user)) {
        seen.add(user);
        users.push({ username: user, hash });
      }
    }
  }
  if (!users.length) return { ...fail(`Secret ${secretKey} holds no usable user`), secretKey };
  return { plugin: { suffix: 'auth', basicAuth: { realm: v['auth-realm'] ?? 'Authentication Required', users } }, secretKey, problems, closed };
}

/**
 * The basic-auth instance: the users of auth-secret; the Authorization header goes upstream as with nginx's
 * auth_basic.
 */
export function basicAuthInstance(b: BasicAuthPlugin['basicAuth'], name: string, namespace: string): PluginInstance {
  return { name, type: 'basic-auth', namespace, realm: b.realm, hideCredentials: false, users: b.users };
}
