// The admission webhook's own PKI: a CA and a serving certificate, both made by Portico (no cert-manager, no Job),
// kept in one Secret that every replica loads. The leader decides when to issue or rotate; `plan()` is the pure part
// of that decision, `issue*` the only code that makes keys (openssl with fixed arguments — no value a tenant controls
// ever reaches it: the names come from Portico's own flags, which are validated).
//
// Rotation without a gap: the webhook configuration trusts a *bundle* (the current CA and, while it is still valid,
// the previous one). A new CA is added to the bundle first; the serving certificate is re-issued from it only once
// the bundle with the new CA has been written into the webhook configuration (see server.ts), so the API server
// always trusts the certificate the replicas present.
import { spawnSync } from 'node:child_process';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const DAY = 86_400_000;
/** Lifetimes and renewal thresholds (a third of the lifetime left, as kubelet client certificates do it). */
export const CA_DAYS = 5 * 365;
export const CA_RENEW_DAYS = 365;
export const SERVING_DAYS = 365;
export const SERVING_RENEW_DAYS = 120;

export interface WebhookPki {
  caCert: string;
  caKey: string;
  /** PEM bundle the API server must trust: the current CA first, then a previous one until it expires. */
  bundle: string;
  cert: string;
  key: string;
}

/** Secret data keys (base64 in the Secret). */
export const KEYS = { caCert: 'ca.crt', caKey: 'ca.key', bundle: 'ca-bundle.crt', cert: 'tls.crt', key: 'tls.key' } as const;

export function pkiFromSecretData(data: Record<string, string> | undefined): WebhookPki | null {
  if (!data) return null;
  const get = (k: string) => (data[k] ? Buffer.from(data[k], 'base64').toString('utf8') : '');
  const pki = { caCert: get(KEYS.caCert), caKey: get(KEYS.caKey), bundle: get(KEYS.bundle), cert: get(KEYS.cert), key: get(KEYS.key) };
  return pki.caCert && pki.caKey && pki.cert && pki.key ? { ...pki, bundle: pki.bundle || pki.caCert } : null;
}

export function secretDataOf(p: WebhookPki): Record<string, string> {
  const b = (s: string) => Buffer.from(s, 'utf8').toString('base64');
  return { [KEYS.caCert]: b(p.caCert), [KEYS.caKey]: b(p.caKey), [KEYS.bundle]: b(p.bundle), [KEYS.cert]: b(p.cert), [KEYS.key]: b(p.key) };
}

/** Splits a PEM bundle into its certificates (unparseable blocks are dropped). */
export function certsOf(bundle: string): X509Certificate[] {
  const out: X509Certificate[] = [];
  for (const m of bundle.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)) {
    try {
      out.push(new X509Certificate(m[0]));
    } catch {
      /* not a certificate */
    }
  }
  return out;
}

export type PkiAction =
  | { action: 'create'; why: string }
  | { action: 'rotate-ca'; why: string }
  | { action: 'reissue'; why: string }
  | { action: 'none' };

/**
 * What the leader must do with the PKI found in the Secret, for a serving certificate that must cover `dnsNames`
 * (and `ips`). Pure: `now` is passed in. A new CA is only ever followed by a re-issue in a later step (after the
 * bundle was published), never in the same step.
 */
export function plan(pki: WebhookPki | null, dnsNames: string[], ips: string[], now: number): PkiAction {
  if (!pki) return { action: 'create', why: 'no webhook certificate yet' };
  let ca: X509Certificate;
  let cert: X509Certificate;
  try {
    ca = new X509Certificate(pki.caCert);
    cert = new X509Certificate(pki.cert);
    createPrivateKey(pki.caKey);
    createPrivateKey(pki.key);
  } catch {
    return { action: 'create', why: 'the stored certificate or key cannot be parsed' };
  }
  const caLeft = Date.parse(ca.validTo) - now;
  if (!ca.ca || caLeft <= 0) return { action: 'create', why: 'the CA expired or is not a CA' };
  if (caLeft < CA_RENEW_DAYS * DAY) return { action: 'rotate-ca', why: `the CA expires on ${new Date(Date.parse(ca.validTo)).toISOString()}` };
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return { action: 'reissue', why: 'the serving certificate was not issued by the current CA' };
  if (!cert.checkPrivateKey(createPrivateKey(pki.key))) return { action: 'reissue', why: 'the serving key does not match its certificate' };
  if (Date.parse(cert.validTo) - now < SERVING_RENEW_DAYS * DAY) return { action: 'reissue', why: `the serving certificate expires on ${new Date(Date.parse(cert.validTo)).toISOString()}` };
  const want = [...dnsNames.map((d) => `DNS:${d}`), ...ips.map((i) => `IP Address:${i}`)].sort();
  const have = (cert.subjectAltName ?? '').split(', ').filter(Boolean).sort();
  if (want.join(',') !== have.join(',')) return { action: 'reissue', why: `the serving certificate names ${have.join(', ') || 'nothing'}, not ${want.join(', ')}` };
  if (!certsOf(pki.bundle).some((c) => c.fingerprint256 === ca.fingerprint256)) return { action: 'reissue', why: 'the CA bundle lacks the current CA' };
  return { action: 'none' };
}

function openssl(dir: string, args: string[]): void {
  const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${(r.stderr || r.error?.message || '').trim().split('\n').slice(-1)[0]}`);
}

const DNS_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const IP = /^[0-9a-fA-F.:]+$/;

function withDir<T>(fn: (dir: string) => T): T {
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-webhook-'));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A new CA (ECDSA P-256). */
export function issueCa(days = CA_DAYS): { caCert: string; caKey: string } {
  return withDir((dir) => {
    openssl(dir, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', String(days),
      '-subj', `/CN=portico-webhook-ca-${Date.now().toString(36)}`, '-keyout', 'ca.key', '-out', 'ca.crt',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    return { caCert: readFileSync(path.join(dir, 'ca.crt'), 'utf8'), caKey: readFileSync(path.join(dir, 'ca.key'), 'utf8') };
  });
}

/** A serving certificate for `dnsNames`/`ips`, signed by the CA. */
export function issueServing(ca: { caCert: string; caKey: string }, dnsNames: string[], ips: string[], days = SERVING_DAYS): { cert: string; key: string } {
  for (const d of dnsNames) if (!DNS_NAME.test(d) || d.length > 253) throw new Error(`not a DNS name: ${JSON.stringify(d)}`);
  for (const i of ips) if (!IP.test(i)) throw new Error(`not an IP address: ${JSON.stringify(i)}`);
  if (!dnsNames.length) throw new Error('a serving certificate needs at least one DNS name');
  return withDir((dir) => {
    writeFileSync(path.join(dir, 'ca.crt'), ca.caCert);
    writeFileSync(path.join(dir, 'ca.key'), ca.caKey, { mode: 0o600 });
    const san = [...dnsNames.map((d) => `DNS:${d}`), ...ips.map((i) => `IP:${i}`)].join(',');
    openssl(dir, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', String(days),
      '-subj', `/CN=${dnsNames[0]}`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-keyout', 'tls.key', '-out', 'tls.crt',
      '-addext', `subjectAltName=${san}`, '-addext', 'extendedKeyUsage=serverAuth', '-addext', 'basicConstraints=critical,CA:FALSE',
      '-addext', 'keyUsage=critical,digitalSignature']);
    return { cert: readFileSync(path.join(dir, 'tls.crt'), 'utf8'), key: readFileSync(path.join(dir, 'tls.key'), 'utf8') };
  });
}

/** The bundle to publish: the current CA, plus any CA of the old bundle that is still valid (deduplicated). */
export function bundleWith(caCert: string, oldBundle: string, now: number): string {
  const cur = new X509Certificate(caCert);
  const keep = certsOf(oldBundle).filter((c) => c.fingerprint256 !== cur.fingerprint256 && Date.parse(c.validTo) > now);
  return [cur.toString().trim(), ...keep.map((c) => c.toString().trim())].join('\n') + '\n';
}

/** Carries out a plan step and returns the PKI to store (null: nothing to do). */
export function apply(step: PkiAction, pki: WebhookPki | null, dnsNames: string[], ips: string[], now: number): WebhookPki | null {
  switch (step.action) {
    case 'none':
      return null;
    case 'create': {
      const ca = issueCa();
      return { ...ca, bundle: bundleWith(ca.caCert, '', now), ...issueServing(ca, dnsNames, ips) };
    }
    case 'rotate-ca': {
      // Keep serving with the old certificate (still trusted through the bundle); re-issue in the next step.
      const ca = issueCa();
      return { ...pki!, ...ca, bundle: bundleWith(ca.caCert, pki!.bundle, now) };
    }
    case 'reissue':
      return { ...pki!, bundle: bundleWith(pki!.caCert, pki!.bundle, now), ...issueServing(pki!, dnsNames, ips) };
  }
}
