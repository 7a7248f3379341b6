// BackendTLSPolicy → its model record: the Service ports it targets, the hostname (the SNI sent and the name the
// backend's certificate must carry) and the CA bundle its caCertificateRefs name — ConfigMaps of its own namespace,
// key ca.crt, and ClusterTrustBundles (certificates.k8s.io, cluster-scoped: by name, from any namespace, no
// ReferenceGrant), spec.trustBundle, read here (what it reads is declared, so a change of such a ConfigMap or bundle
// normalizes it again). A
// reference Portico cannot use is kept with its ResolvedRefs reason; what Portico does not serve (subjectAltNames,
// options) is named, the policy is then not accepted and the Service ports it targets fail closed.
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
export function normalizeBackendTlsPolicy(obj: KubeObject, configMaps: ConfigMapReader, trustBundles?: ClusterTrustBundleReader): CrdResult<BackendTlsPolicyRecord> {
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
  if (v.subjectAltNames?.length) unsupported.push('spec.validation.subjectAltNames: nginx checks the backend certificate against one name (the hostname); a list of subject alternative names is not served by Portico');
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
  const rec: BackendTlsPolicyRecord = { ...meta, targets, hostname: v.hostname, refProblems, ...(caPem ? { caPem } : {}) };
  if (unsupported.length) rec.unsupported = unsupported.join('; ');
  return { ok: true, record: rec };
}
