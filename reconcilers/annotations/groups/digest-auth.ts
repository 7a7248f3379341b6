// auth-type: digest (part of the basic-auth group, basic-auth.ts): the users of auth-secret as HTTP Digest knows them,
// name and HA1 = MD5("user:realm:password") — for the digest-auth plugin (nginx-assets/lua/portico/plugins/
// digest_auth.lua). ingress-nginx hands the Secret to the nginx-http-auth-digest module as a file:
//   auth-file  the "auth" key is an htdigest file: "user:realm:HA1" lines;
//   auth-map   a key per user; ingress-nginx writes "<key>:<value>" lines, so the value is "realm:HA1". Portico also
//              takes the HA1 alone (then it is the HA1 for auth-realm).
// A user counts only with the realm of the challenge (auth-realm): a line of another realm, as one of an htdigest
// file holding several realms, is reported and skipped. Without auth-realm, the one realm the usable lines name is
// the challenge's; several → fail closed (ingress-nginx's module, given no realm, lets every request in).
// Messages name a line number or key position and the realm (not secret: every challenge sends it), never a user name
// or an HA1: problems become Events, which the namespace's users read without being allowed to read the Secret.
import type { PluginInstance } from '../../config/types.ts';

/** A user name: printable ASCII without spaces or ":", at most 128 characters (as for basic auth). */
export const USER = /^[\x21-\x39\x3b-\x7e]{1,128}$/;
const HA1 = /^[0-9a-fA-F]{32}$/;
/** A realm an htdigest line can hold and a challenge can quote: printable ASCII without ", \ or ":". */
const REALM = /^[\x20\x21\x23-\x39\x3b-\x5b\x5d-\x7e]{1,128}$/;
/** What the data plane takes (digest_auth.lua's check): more users are reported and left out. */
export const MAX_DIGEST_USERS = 10_000;

/** The digest-auth plugin's users (they come from a Secret, so they are the instance's data). */
export interface DigestAuthPlugin {
  suffix: 'auth';
  digestAuth: { realm: string; users: { username: string; ha1: string }[] };
}

/**
 * The digest users of a Secret's data (base64 values): the plugin's realm and users, or why nothing is usable
 * (`closed`: the Ingress fails closed). `problems` are the entries skipped.
 */
export function digestUsers(
  secretType: 'auth-file' | 'auth-map',
  authRealm: string | undefined,
  data: Record<string, string>,
  secretKey: string,
  decode: (b64: string) => string,
): { digestAuth: DigestAuthPlugin['digestAuth']; problems: string[] } | { closed: string; problems: string[] } {
  const problems: string[] = [];
  if (authRealm !== undefined && !REALM.test(authRealm)) {
    return { closed: `auth-realm contains ":", which the realm of an htdigest line cannot hold`, problems };
  }
  // Every entry as (user, realm or undefined for an auth-map's bare HA1, HA1, where).
  const entries: { user: string; realm: string | undefined; ha1: string; where: string }[] = [];
  if (secretType === 'auth-file') {
    const file = data.auth;
    if (file === undefined) return { closed: `Secret ${secretKey} has no "auth" key (an htdigest file)`, problems };
    decode(file)
      .split(/\r?\n/)
      .forEach((raw, n) => {
        const line = raw.trim();
        if (!line || line.startsWith('#')) return;
        const f = line.split(':');
        const where = `line ${n + 1} of "auth"`;
        if (f.length !== 3) problems.push(`auth-secret ${secretKey}: ${where}: not "user:realm:HA1" (htdigest); skipped`);
        else entries.push({ user: f[0] as string, realm: f[1] as string, ha1: f[2] as string, where });
      });
  } else {
    Object.entries(data)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .forEach(([user, b64], n) => {
        const value = decode(b64).trim();
        const where = `key ${n + 1} (in sorted order)`;
        const f = value.split(':');
        if (f.length === 1) entries.push({ user, realm: undefined, ha1: value, where });
        else if (f.length === 2) entries.push({ user, realm: f[0] as string, ha1: f[1] as string, where });
        else problems.push(`auth-secret ${secretKey}: ${where}: the value is not "realm:HA1" or an HA1; skipped`);
      });
  }
  // The realm: auth-realm, else the one realm the well-formed entries name.
  const wellFormed = entries.filter((e) => {
    const why = !USER.test(e.user)
      ? 'the user name is not printable ASCII without ":"'
      : !HA1.test(e.ha1)
        ? 'the HA1 is not 32 hex digits (MD5 of "user:realm:password")'
        : e.realm !== undefined && !REALM.test(e.realm)
          ? 'the realm is empty, longer than 128 characters or not printable ASCII without quotes or backslashes'
          : null;
    if (why) problems.push(`auth-secret ${secretKey}: ${e.where}: ${why}; skipped`);
    return !why;
  });
  let realm = authRealm;
  if (realm === undefined) {
    const named = [...new Set(wellFormed.flatMap((e) => (e.realm === undefined ? [] : [e.realm])))].sort();
    if (named.length > 1) return { closed: `the entries of Secret ${secretKey} name ${named.length} realms and no auth-realm says which one the challenge asks for`, problems };
    if (!named.length) {
      for (const e of wellFormed) problems.push(`auth-secret ${secretKey}: ${e.where}: an HA1 without a realm needs auth-realm; skipped`);
      return { closed: `Secret ${secretKey} holds no usable user`, problems };
    }
    realm = named[0] as string;
  }
  const users: { username: string; ha1: string }[] = [];
  const seen = new Set<string>();
  let over = 0;
  for (const e of wellFormed) {
    if (e.realm !== undefined && e.realm !== realm) {
      problems.push(`auth-secret ${secretKey}: ${e.where}: its realm is not "${realm}" (the challenge's); skipped`);
    } else if (seen.has(e.user)) {
      problems.push(`auth-secret ${secretKey}: ${e.where}: a user already given earlier; the first one counts`);
    } else if (users.length >= MAX_DIGEST_USERS) over++;
    else {
      seen.add(e.user);
      users.push({ username: e.user, ha1: e.ha1.toLowerCase() });
    }
  }
  if (over) problems.push(`auth-secret ${secretKey}: more than ${MAX_DIGEST_USERS} users; the ${over} after the first ${MAX_DIGEST_USERS} are left out`);
  if (!users.length) return { closed: `Secret ${secretKey} holds no usable user for realm "${realm}"`, problems };
  return { digestAuth: { realm, users }, problems };
}

/** The digest-auth instance of an Ingress: its realm and users. */
export function digestAuthInstance(d: DigestAuthPlugin['digestAuth'], name: string): PluginInstance {
  return { name, type: 'digest-auth', realm: d.realm, users: d.users };
}
