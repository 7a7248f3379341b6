// Consumer → its normalized model record, with the credentials read from the Secrets it names (only those).
import { createHash } from 'node:crypto';
import { consumerSpecSchema } from '../../../crds/schema/index.ts';
import { BCRYPT_SHAPE, checkPasswordHash } from '../../config/password-hash.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { NormalizedConsumer } from '../../model/types.ts';
import { decode, issuesText, metaOf, type CrdResult, type SecretLookup } from '../crd-normalize.ts';

const sha256hex = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/**
 * The password hash the data plane compares against: bcrypt ($2a$/$2b$/$2y$) and htpasswd {SHA} hashes are kept as
 * given; a plain password becomes "sha256$<salt>$<hex of sha256(salt .. password)>", the salt derived from the
 * consumer's uid and user name (stable, so the data does not change while the Secret does not).
 */
export function passwordHash(password: string, uid: string, username: string): string {
  if (BCRYPT_SHAPE.test(password) || /^\{SHA\}[A-Za-z0-9+/]{27}=$/.test(password)) return password;
  const salt = sha256hex(`portico:${uid}:${username}`).slice(0, 16);
  return `sha256$${salt}$${sha256hex(salt + password)}`;
}

/** A Consumer with its credentials read from the Secrets it names (only those); missing ones are problems. */
export function normalizeConsumer(obj: KubeObject, secrets: SecretLookup): CrdResult<NormalizedConsumer> {
  const r = consumerSpecSchema.safeParse((obj as { spec?: unknown }).spec ?? {});
  if (!r.success) return { ok: false, reason: issuesText(r.error) };
  const spec = r.data;
  const meta = metaOf(obj);
  const rec: NormalizedConsumer = { ...meta, username: spec.username, keys: [], basic: [], secretKeys: [], plugins: [...(spec.plugins ?? [])], problems: [] };
  for (const [i, c] of (spec.credentials ?? []).entries()) {
    const key = `${meta.namespace}/${c.secretRef.name}`;
    if (!rec.secretKeys.includes(key)) rec.secretKeys.push(key);
    const s = secrets(key);
    const at = `spec.credentials.${i}`;
    if (!s) {
      rec.problems.push(`${at}: Secret ${key} not found`);
      continue;
    }
    if (c.type === 'key-auth') {
      const k = decode(s.data?.key);
      if (!k) rec.problems.push(`${at}: Secret ${key} has no data.key (the API key)`);
      else if (k.length < 8) rec.problems.push(`${at}: the key in Secret ${key} is shorter than 8 characters`);
      else rec.keys.push(sha256hex(k));
    } else {
      const u = decode(s.data?.username);
      const p = decode(s.data?.password);
      if (!u || !p) rec.problems.push(`${at}: Secret ${key} needs data.username and data.password`);
      else if (!/^[\x21-\x39\x3b-\x7e]{1,128}$/.test(u)) rec.problems.push(`${at}: the user name in Secret ${key} must be printable ASCII without spaces or ":"`);
      else {
        // A stored bcrypt hash is verified by the nginx worker: its cost is bounded (config/password-hash.ts).
        const bad = BCRYPT_SHAPE.test(p) ? checkPasswordHash(p) : undefined;
        if (bad && !bad.ok) rec.problems.push(`${at}: Secret ${key}, user ${u}: the password is a bcrypt hash whose ${bad.reason.replace(/^bcrypt /, '')}; this credential is not used`);
        else rec.basic.push({ username: u, hash: passwordHash(p, meta.uid, u) });
      }
    }
  }
  rec.secretKeys.sort();
  return { ok: true, record: rec };
}

// The model stores Consumers with the other CRs, by kind (model.ts CrdRecords): this is their record type there.
declare module '../../model/model.ts' {
  interface CrdRecords {
    Consumer: NormalizedConsumer;
  }
}
