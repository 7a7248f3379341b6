// BackendTLSPolicy → its model record: the Service ports it targets, the hostname (the SNI sent and, without
// subjectAltNames, the name the backend's certificate must carry), the subjectAltNames (the names of which the
// certificate must carry one; checked by Portico's nginx module portico_upstream_ssl) and the CA bundle its
// caCertificateRefs name — ConfigMaps of its own namespace, key ca.crt, and ClusterTrustBundles (certificates.k8s.io,
// cluster-scoped: by name, from any namespace, no ReferenceGrant), spec.trustBundle — read here (what it reads is
// declared, so a change of such a ConfigMap or bundle normalizes it again). A reference Portico cannot use is kept
// with its ResolvedRefs reason; what Portico does not serve (options; subjectAltNames without the module, or ones it
// refuses) is named, the policy is then not accepted and the Service ports it targets fail closed.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { isTrustBundleRef, TRUST_BUNDLE_GROUP, TRUST_BUNDLE_KIND, type BackendTlsPolicyRecord, type ClusterTrustBundleReader } from '../../model/gateway-api.ts';
import type { RecordReads } from '../../model/model.ts';
import { caBundleProblem } from '../../values/safe.ts';
import { issuesText, metaOf, type CrdResult } from '../crd-normalize.ts';
import type { ConfigMapReader } from '../../annotations/plugins.ts';
import { caCertificateRefSchema, groupSchema, kindSchema, objectNameSchema, sectionNameSchema } from '../gateway/schema.ts';

/** PreciseHostname: a lower-case DNS name without a wildcard (the API server's pattern). */
const preciseHostname = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, 'must be a lower-case DNS name without a wildcard');

const specSchema = z.looseObject({
  targetRefs: z
    .array(z.looseObject({ group: groupSchema, kind: kindSchema, name: objectNameSchema, sectionName: sectionNameSchema.optional() }))
    .min(1)
    .max(16),
  validation: z.looseObject({
    caCertificateRefs: z.array(caCertificateRefSchema).max(8).optional(),
    wellKnownCACertificates: z.string().optional(),
    hostname: preciseHostname,
    subjectAltNames: z.array(z.unknown()).max(5).optional(),
  }),
  options: z.record(z.string(), z.string()).optional(),
});

/** Hostname (the API's pattern): a lower-case DNS name, a wildcard label "*." first allowed. */
const SAN_HOSTNAME = /^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/**
 * AbsoluteURI as Portico takes it: the API's shape (a scheme, "://", the rest) in printable ASCII without spaces,
 * quotes, backslashes or "$" (nginx's configuration would give "$" a meaning; a URI SAN has no need of it).
 */
const SAN_URI = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[\x21-\x7e]*$/;
const SAN_URI_REFUSED = /["'\\$]/;

const sanSchema = z.looseObject({ type: z.string(), hostname: z.string().optional(), uri: z.string().optional() });

/**
 * The subjectAltNames as the record keeps them, or why one cannot be served (the policy is then not accepted and its
 * targets fail closed, rather than the object refused and its backends proxied without TLS).
 */
export function subjectAltNamesOf(sans: unknown[]): { names: NonNullable<BackendTlsPolicyRecord['subjectAltNames']> } | { problem: string } {
  const names: NonNullable<BackendTlsPolicyRecord['subjectAltNames']> = [];
  for (const [i, raw] of sans.entries()) {
    const at = `spec.validation.subjectAltNames.${i}`;
    const r = sanSchema.safeParse(raw);
    if (!r.success) return { problem: issuesText(r.error, at) };
    const san = r.data;
    if (san.type === 'Hostname') {
      if (san.uri) return { problem: `${at}: type Hostname takes no uri` };
      const h = san.hostname ?? '';
      if (!h || h.length > 253 || !SAN_HOSTNAME.test(h)) return { problem: `${at}.hostname: ${JSON.stringify(h)} is not a lower-case DNS name (a leading "*." allowed)` };
      names.push({ type: 'Hostname', value: h });
    } else if (san.type === 'URI') {
      if (san.hostname) return { problem: `${at}: type URI takes no hostname` };
      const u = san.uri ?? '';
      if (!u || u.length > 253 || !SAN_URI.test(u)) return { problem: `${at}.uri: ${JSON.stringify(u)} is not an absolute URI (<scheme>://..., printable ASCII without spaces, at most 253 characters)` };
      if (SAN_URI_REFUSED.test(u)) return { problem: `${at}.uri: ${JSON.stringify(u)} has a quote, a backslash or "$", which Portico does not put in nginx's configuration` };
      names.push({ type: 'URI', value: u });
    } else {
      return { problem: `${at}.type: ${JSON.stringify(san.type)} is not Hostname or URI` };
    }
  }
  return { names };
}

export interface BackendTlsNormalizeOptions {
  /** Portico's nginx module portico_upstream_ssl is installed: subjectAltNames can be served (without it they are refused). */
  subjectAltNames: boolean;
}

/** The system's CA bundle (Debian's ca-certificates), for wellKnownCACertificates: System. */
export const SYSTEM_CA_FILE = '/etc/ssl/certs/ca-certificates.crt';
let systemCa: { pem?: string; problem?: string } | undefined;
function systemBundle(): { pem?: string; problem?: string } {
  if (!systemCa) {
    try {
      const pem = readFileSync(SYSTEM_CA_FILE, 'utf8');
      systemCa = certificateProblem(pem) ? { problem: `${SYSTEM_CA_FILE}: ${certificateProblem(pem)}` } : { pem };
    } catch (e) {
      systemCa = { problem: `the system CA bundle ${SYSTEM_CA_FILE} cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})` };
    }
  }
  return systemCa;
}

/** Why a PEM bundle cannot be nginx's proxy_ssl_trusted_certificate (null: it can). Every block must parse. */
export function certificateProblem(pem: string): string | null {
  const syntax = caBundleProblem(pem);
  if (syntax) return syntax;
  for (const block of pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? []) {
    try {
      new X509Certificate(block);
    } catch {
      return 'a certificate in the bundle does not parse';
    }
  }
  return null;
}

/** The ConfigMaps ("namespace/name") and ClusterTrustBundles (by name) a policy names: what it reads. */
export function policyReads(obj: KubeObject): RecordReads {
  const refs = ((obj as { spec?: { validation?: { caCertificateRefs?: { group?: string; kind?: string; name?: string }[] } } }).spec?.validation?.caCertificateRefs ?? []);
  const ns = obj.metadata.namespace ?? '';
  const bundles = [...new Set(refs.filter((r) => isTrustBundleRef(r) && r.name).map((r) => r.name!))].sort();
  return {
    secrets: [],
    configMaps: [...new Set(refs.filter((r) => (r.group ?? '') === '' && r.kind === 'ConfigMap' && r.name).map((r) => `${ns}/${r.name}`))].sort(),
    ...(bundles.length ? { clusterTrustBundles: bundles } : {}),
  };
}

/** A ClusterTrustBundle's certificates (PEM), or why they cannot be used (missing, empty, not certificates). */
function trustBundleProblem(name: string, read: ClusterTrustBundleReader): { problem: string } | { pem: string } {
  const b = read(name);
  if (!b) return { problem: `ClusterTrustBundle ${name} not found` };
  if (b.trustBundle.trim() === '') return { problem: `ClusterTrustBundle ${name} has no certificates (spec.trustBundle is empty)` };
  const problem = certificateProblem(b.trustBundle);
  return problem ? { problem: `ClusterTrustBundle ${name}: ${problem}` } : { pem: b.trustBundle.trim() };
}

/**
 * configMaps: the ConfigMaps of the policy's namespace; trustBundles: ClusterTrustBundles by name, undefined when the
 * API server does not serve them (a reference to one is then InvalidKind).
 */
export function normalizeBackendTlsPolicy(obj: KubeObject, configMaps: ConfigMapReader, o: BackendTlsNormalizeOptions = { subjectAltNames: false }, trustBundles?: ClusterTrustBundleReader): CrdResult<BackendTlsPolicyRecord> {
  const r = specSchema.safeParse((obj as { spec?: unknown }).spec ?? {});
  if (!r.success) return { ok: false, reason: issuesText(r.error) };
  const spec = r.data;
  const meta = metaOf(obj);
  const v = spec.validation;
  const refs = v.caCertificateRefs ?? [];
  // The API server's rule, repeated: exactly one of the two.
  if (!refs.length === !v.wellKnownCACertificates) return { ok: false, reason: 'spec.validation: exactly one of caCertificateRefs and wellKnownCACertificates must be set' };
  const targets: BackendTlsPolicyRecord['targets'] = [];
  const unsupported: string[] = [];
  spec.targetRefs.forEach((t, i) => {
    if (t.group !== '' || t.kind !== 'Service') unsupported.push(`spec.targetRefs.${i}: ${t.group || 'core'}/${t.kind} is not a target Portico serves (core Service)`);
    else targets.push({ name: t.name, ...(t.sectionName ? { sectionName: t.sectionName } : {}) });
  });
  let subjectAltNames: BackendTlsPolicyRecord['subjectAltNames'];
  if (v.subjectAltNames?.length) {
    const sans = subjectAltNamesOf(v.subjectAltNames);
    if (!o.subjectAltNames) unsupported.push('spec.validation.subjectAltNames: nginx alone checks the backend certificate against one name (the hostname), and Portico\'s nginx module portico_upstream_ssl, which checks a list of subject alternative names, is not installed');
    else if ('problem' in sans) unsupported.push(sans.problem);
    else subjectAltNames = sans.names;
  }
  if (spec.options && Object.keys(spec.options).length) unsupported.push(`spec.options: Portico knows no option (${Object.keys(spec.options).slice(0, 5).join(', ')})`);
  const refProblems: BackendTlsPolicyRecord['refProblems'] = [];
  const pems: string[] = [];
  refs.forEach((ref, i) => {
    const at = `spec.validation.caCertificateRefs.${i}`;
    if (isTrustBundleRef(ref)) {
      if (!trustBundles) {
        refProblems.push({ reason: 'InvalidKind', message: `${at}: the API server does not serve ${TRUST_BUNDLE_GROUP}/${TRUST_BUNDLE_KIND} (v1, or v1beta1 with its feature gate)` });
        return;
      }
      const b = trustBundleProblem(ref.name, trustBundles);
      if ('problem' in b) refProblems.push({ reason: 'InvalidCACertificateRef', message: `${at}: ${b.problem}` });
      else pems.push(b.pem);
      return;
    }
    if (ref.group !== '' || ref.kind !== 'ConfigMap') {
      refProblems.push({ reason: 'InvalidKind', message: `${at}: ${ref.group || 'core'}/${ref.kind} is not a kind Portico reads CA certificates from (core ConfigMap, ${TRUST_BUNDLE_GROUP}/${TRUST_BUNDLE_KIND})` });
      return;
    }
    const cm = configMaps(`${meta.namespace}/${ref.name}`);
    const pem = cm?.data?.['ca.crt'];
    const problem = !cm ? `ConfigMap ${meta.namespace}/${ref.name} not found` : pem === undefined || pem.trim() === '' ? `ConfigMap ${meta.namespace}/${ref.name} has no ca.crt` : certificateProblem(pem);
    if (problem) refProblems.push({ reason: 'InvalidCACertificateRef', message: `${at}: ${problem}` });
    else pems.push(pem!.trim());
  });
  if (v.wellKnownCACertificates !== undefined) {
    if (v.wellKnownCACertificates !== 'System') unsupported.push(`spec.validation.wellKnownCACertificates: ${JSON.stringify(v.wellKnownCACertificates)} is not a set Portico knows (System)`);
    else {
      const sys = systemBundle();
      if (sys.pem) pems.push(sys.pem.trim());
      else refProblems.push({ reason: 'InvalidCACertificateRef', message: `spec.validation.wellKnownCACertificates: ${sys.problem}` });
    }
  }
  const caPem = pems.length ? `${pems.join('\n')}\n` : undefined;
  const rec: BackendTlsPolicyRecord = { ...meta, targets, hostname: v.hostname, ...(subjectAltNames ? { subjectAltNames } : {}), refProblems, ...(caPem ? { caPem } : {}) };
  if (unsupported.length) rec.unsupported = unsupported.join('; ');
  return { ok: true, record: rec };
}
