// Gateway → its model record (the listeners as written; the attachment, translate/gateway-api/attach.ts, judges
// them and reports per listener). Fields Portico does not serve are refused by name.
//
// spec.tls.frontend (client certificates): the CA bundles its caCertificateRefs name are read here, from the
// ConfigMaps' ca.crt or the ClusterTrustBundles' spec.trustBundle (the record says, per reference, the PEM or why it
// cannot be used); the record reads those ConfigMaps and bundles (gatewayReads), so a change of one normalizes the
// Gateway again. Whether a reference may be used (its kind, a ReferenceGrant for a ConfigMap of another namespace;
// a ClusterTrustBundle is cluster-scoped and needs none) is judged by the attachment, per listener.
import { isIP } from 'node:net';
import { z } from 'zod';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { ConfigMapReader } from '../../annotations/plugins.ts';
import { caCertificates } from '../../annotations/auth-tls.ts';
import type { RecordReads } from '../../model/model.ts';
import { isTrustBundleRef, TRUST_BUNDLE_GROUP, TRUST_BUNDLE_KIND } from '../../model/gateway-api.ts';
import type { CaCertificateRefN, ClusterTrustBundleReader, FrontendValidationN, GatewayRecord, LabelSelectorN, ListenerFilterN, ListenerN } from '../../model/gateway-api.ts';
import { issuesText, metaOf, type CrdResult } from '../crd-normalize.ts';
import { caCertificateRefSchema, groupSchema, gwHostnameSchema, gwPortSchema, kindSchema, labelSelectorSchema, namespaceSchema, objectNameSchema, sectionNameSchema } from './schema.ts';

/** A listener's filters.requests entry (ListenerFilter): the union is judged by the attachment, not here. */
const listenerFilterSchema = z.looseObject({
  type: z.string().min(1).max(64),
  extensionRef: z.looseObject({ group: groupSchema, kind: kindSchema, name: objectNameSchema }).optional(),
  externalAuth: z
    .looseObject({
      protocol: z.string().max(16).default(''),
      backendRef: z.looseObject({ group: groupSchema.default(''), kind: kindSchema.default('Service'), name: objectNameSchema, namespace: namespaceSchema.optional(), port: gwPortSchema.optional() }),
      http: z
        .looseObject({
          path: z.string().max(1024).optional(),
          allowedHeaders: z.array(z.string().max(256)).max(64).optional(),
          allowedResponseHeaders: z.array(z.string().max(256)).max(64).optional(),
        })
        .optional(),
      forwardBody: z.looseObject({ maxSize: z.number().int().min(0).optional() }).optional(),
    })
    .optional(),
});

export const listenerSchema = z.looseObject({
  name: sectionNameSchema,
  hostname: gwHostnameSchema.optional(),
  port: gwPortSchema,
  protocol: z.string().min(1).max(255),
  tls: z
    .looseObject({
      mode: z.enum(['Terminate', 'Passthrough']).default('Terminate'),
      certificateRefs: z
        .array(z.looseObject({ group: groupSchema.default(''), kind: kindSchema.default('Secret'), name: objectNameSchema, namespace: namespaceSchema.optional() }))
        .max(64)
        .default([]),
      options: z.record(z.string(), z.string()).optional(),
    })
    .optional(),
  allowedRoutes: z
    .looseObject({
      namespaces: z.looseObject({ from: z.enum(['All', 'Same', 'Selector', 'None']).default('Same'), selector: labelSelectorSchema.optional() }).optional(),
      kinds: z.array(z.looseObject({ group: groupSchema.default('gateway.networking.k8s.io'), kind: kindSchema })).max(8).optional(),
    })
    .optional(),
  filters: z.looseObject({ requests: z.array(listenerFilterSchema).max(16).optional() }).nullish(),
});

/** FrontendTLSValidation: 1-16 caCertificateRefs (ObjectReference) and the mode. */
const frontendValidationSchema = z.looseObject({
  caCertificateRefs: z
    .array(caCertificateRefSchema)
    .min(1)
    .max(16),
  mode: z.enum(['AllowValidOnly', 'AllowInsecureFallback']).default('AllowValidOnly'),
});

const frontendTlsSchema = z.looseObject({
  default: z.looseObject({ validation: frontendValidationSchema.optional() }),
  perPort: z
    .array(z.looseObject({ port: gwPortSchema, tls: z.looseObject({ validation: frontendValidationSchema.optional() }) }))
    .max(64)
    .refine((ps) => new Set(ps.map((p) => p.port)).size === ps.length, { message: 'Port for TLS configuration must be unique within the Gateway' })
    .optional(),
});

const gatewaySpecSchema = z.looseObject({
  gatewayClassName: objectNameSchema,
  tls: z
    .looseObject({
      frontend: frontendTlsSchema.optional(),
      // The client certificate Portico presents to backends it speaks TLS to (BackendTLSPolicy), per Gateway.
      backend: z
        .looseObject({ clientCertificateRef: z.looseObject({ group: groupSchema.default(''), kind: kindSchema.default('Secret'), name: objectNameSchema, namespace: namespaceSchema.optional() }).optional() })
        .optional(),
    })
    .optional(),
  listeners: z.array(listenerSchema).min(1).max(64),
  allowedListeners: z
    .looseObject({ namespaces: z.looseObject({ from: z.enum(['All', 'Same', 'Selector', 'None']).default('None'), selector: labelSelectorSchema.optional() }).optional() })
    .optional(),
  addresses: z.array(z.looseObject({ type: z.string().default('IPAddress'), value: z.string().max(253).optional(), routability: z.string().max(253).optional() })).max(16).optional(),
  infrastructure: z
    .looseObject({
      labels: z.record(z.string(), z.string().max(63)).optional(),
      annotations: z.record(z.string(), z.string().max(4096)).optional(),
      parametersRef: z.looseObject({ group: z.string(), kind: z.string(), name: z.string() }).optional(),
    })
    .optional(),
});

/** What the spec of a Gateway names that Portico does not serve yet: refused by name. */
function unserved(spec: z.infer<typeof gatewaySpecSchema>): string[] {
  const out: string[] = [];
  // Addresses of other types are recorded and refused by the attachment (Accepted False, UnsupportedAddress); an
  // IPAddress value becomes a Service's clusterIP, so it must be one (the CRD checks it too).
  spec.addresses?.forEach((a, i) => {
    if (a.type === 'IPAddress' && a.value && !isIP(a.value)) out.push(`spec.addresses.${i}.value: ${JSON.stringify(a.value)} is not an IP address`);
  });
  spec.listeners.forEach((l, i) => out.push(...unservedListener(l, `spec.listeners.${i}`)));
  const scope = (spec as { defaultScope?: unknown }).defaultScope;
  if (scope !== undefined && scope !== null && scope !== '') out.push('spec.defaultScope: default Gateways are not served by Portico (yet); routes attach by parentRefs');
  return out;
}

type LabelSelectorIn = NonNullable<z.infer<typeof labelSelectorSchema>>;
function selectorOf(sel: LabelSelectorIn): LabelSelectorN {
  return { matchLabels: { ...(sel.matchLabels ?? {}) }, matchExpressions: (sel.matchExpressions ?? []).map((e) => ({ key: e.key, operator: e.operator, values: [...(e.values ?? [])] })) };
}

/** One listener (of a Gateway, or of a ListenerSet: `ns` is its object's namespace, the default of certificateRefs). */
export function listenerOf(l: z.infer<typeof listenerSchema>, ns: string): ListenerN {
  const out: ListenerN = {
    name: l.name,
    port: l.port,
    protocol: l.protocol,
    allowedRoutes: {
      namespaces: {
        from: l.allowedRoutes?.namespaces?.from ?? 'Same',
        ...(l.allowedRoutes?.namespaces?.selector ? { selector: selectorOf(l.allowedRoutes.namespaces.selector) } : {}),
      },
      ...(l.allowedRoutes?.kinds ? { kinds: l.allowedRoutes.kinds.map((k) => ({ group: k.group, kind: k.kind })) } : {}),
    },
  };
  if (l.hostname) out.hostname = l.hostname;
  if (l.tls) out.tls = { mode: l.tls.mode, certificateRefs: l.tls.certificateRefs.map((c) => ({ group: c.group, kind: c.kind, name: c.name, namespace: c.namespace ?? ns })) };
  const filters = (l.filters?.requests ?? []).map((f) => filterOf(f, ns));
  if (filters.length) out.filters = filters;
  return out;
}

/** One listener filter, references defaulted to namespace `ns` (the Gateway's or the ListenerSet's). */
function filterOf(f: z.infer<typeof listenerFilterSchema>, ns: string): ListenerFilterN {
  const out: ListenerFilterN = { type: f.type };
  if (f.extensionRef) out.extensionRef = { group: f.extensionRef.group, kind: f.extensionRef.kind, name: f.extensionRef.name };
  const a = f.externalAuth;
  if (a) {
    const b = a.backendRef;
    out.externalAuth = {
      protocol: a.protocol,
      backendRef: { group: b.group, kind: b.kind, namespace: b.namespace ?? ns, name: b.name, ...(b.port !== undefined ? { port: b.port } : {}) },
      path: a.http?.path ?? '',
      allowedHeaders: [...(a.http?.allowedHeaders ?? [])],
      allowedResponseHeaders: [...(a.http?.allowedResponseHeaders ?? [])],
      forwardBodyMaxSize: a.forwardBody?.maxSize ?? 0,
    };
  }
  return out;
}

/** What a listener names that Portico does not serve (`at`: its path, "spec.listeners.0"). */
export function unservedListener(l: z.infer<typeof listenerSchema>, at: string): string[] {
  const out: string[] = [];
  if (l.tls?.options && Object.keys(l.tls.options).length) out.push(`${at}.tls.options: no option is supported`);
  // filters: served (the attachment judges each one per listener); a phase other than requests is refused by name.
  const other = Object.keys(l.filters ?? {}).filter((k) => k !== 'requests');
  if (other.length) out.push(`${at}.filters: ${other.map((k) => `${k}`).join(', ')}: only filters.requests is served by Portico`);
  return out;
}

/** The key of a ConfigMap holding a client-certificate CA bundle (PEM certificates). */
export const CA_KEY = 'ca.crt';

/** What the frontend validation reads its CA certificates from. */
interface CaReaders {
  configMaps: ConfigMapReader;
  /** Undefined: the API server does not serve ClusterTrustBundles. */
  trustBundles: ClusterTrustBundleReader | undefined;
}

/** A caCertificateRef naming a ClusterTrustBundle: cluster-scoped (namespace '' in the record), read by name. */
function trustBundleRefOf(ref: z.infer<typeof frontendValidationSchema>['caCertificateRefs'][number], trustBundles: ClusterTrustBundleReader | undefined): CaCertificateRefN {
  const out: CaCertificateRefN = { group: ref.group, kind: ref.kind, namespace: '', name: ref.name };
  if (!trustBundles) {
    out.kindProblem = `the API server does not serve ${TRUST_BUNDLE_GROUP}/${TRUST_BUNDLE_KIND} (v1, or v1beta1 with its feature gate)`;
    return out;
  }
  // The CRD's rule (experimental channel), repeated: a cluster-scoped object has no namespace to name.
  if (ref.namespace !== undefined) {
    out.problem = `a ClusterTrustBundle is cluster-scoped: the reference must not set a namespace (${ref.namespace})`;
    return out;
  }
  const b = trustBundles(ref.name);
  if (!b) out.problem = 'ClusterTrustBundle not found';
  else if (b.trustBundle.trim() === '') out.problem = 'the ClusterTrustBundle has no certificates (spec.trustBundle is empty)';
  else {
    const r = caCertificates(b.trustBundle);
    // (caCertificates words its errors for a ConfigMap's ca.crt.)
    if ('error' in r) out.problem = r.error.replaceAll('ca.crt', 'spec.trustBundle');
    else out.ca = r.ca;
  }
  return out;
}

/** One caCertificateRef, its ConfigMap or ClusterTrustBundle read (other kinds are the attachment's to refuse). */
function caRefOf(ref: z.infer<typeof frontendValidationSchema>['caCertificateRefs'][number], gwNs: string, readers: CaReaders): CaCertificateRefN {
  if (isTrustBundleRef(ref)) return trustBundleRefOf(ref, readers.trustBundles);
  const out: CaCertificateRefN = { group: ref.group, kind: ref.kind, namespace: ref.namespace ?? gwNs, name: ref.name };
  if (ref.group !== '' || ref.kind !== 'ConfigMap') return out;
  const configMaps = readers.configMaps;
  const cm = configMaps(`${out.namespace}/${out.name}`);
  const pem = cm?.data?.[CA_KEY];
  if (!cm) out.problem = 'ConfigMap not found';
  else if (pem === undefined) out.problem = `the ConfigMap has no key ${CA_KEY}`;
  else {
    const r = caCertificates(pem);
    if ('error' in r) out.problem = r.error;
    else out.ca = r.ca;
  }
  return out;
}

function validationOf(v: z.infer<typeof frontendValidationSchema> | undefined, gwNs: string, readers: CaReaders): FrontendValidationN | undefined {
  return v ? { mode: v.mode, caCertificateRefs: v.caCertificateRefs.map((r) => caRefOf(r, gwNs, readers)) } : undefined;
}

/**
 * configMaps: the referenced ConfigMaps' data (the ConfigMap kind serves it once a record reads them); absent, every
 * CA ConfigMap reads as not found — the listeners it concerns refuse (fail closed). trustBundles: ClusterTrustBundles
 * by name; absent, the API server does not serve them and a reference to one is of a kind Portico cannot read.
 */
export function normalizeGateway(obj: KubeObject, configMaps: ConfigMapReader = () => undefined, trustBundles?: ClusterTrustBundleReader): CrdResult<GatewayRecord> {
  const readers: CaReaders = { configMaps, trustBundles };
  const r = gatewaySpecSchema.safeParse((obj as { spec?: unknown }).spec ?? {});
  if (!r.success) return { ok: false, reason: issuesText(r.error) };
  const spec = r.data;
  const refused = unserved(spec);
  if (refused.length) return { ok: false, reason: refused.join('; ') };
  const meta = metaOf(obj);
  const listeners = spec.listeners.map((l) => listenerOf(l, meta.namespace));
  const addresses = (spec.addresses ?? []).map((a) => ({ type: a.type, ...(a.value ? { value: a.value } : {}), ...(a.routability ? { routability: a.routability } : {}) }));
  const al = spec.allowedListeners?.namespaces;
  const allowedListeners: GatewayRecord['allowedListeners'] = { from: al?.from ?? 'None', ...(al?.selector ? { selector: selectorOf(al.selector) } : {}) };
  const rec: GatewayRecord = { ...meta, className: spec.gatewayClassName, listeners, addresses, allowedListeners };
  const ft = spec.tls?.frontend;
  if (ft) {
    const def = validationOf(ft.default.validation, meta.namespace, readers);
    rec.frontendTls = {
      ...(def ? { default: def } : {}),
      perPort: (ft.perPort ?? []).map((p) => {
        const v = validationOf(p.tls.validation, meta.namespace, readers);
        return { port: p.port, ...(v ? { validation: v } : {}) };
      }),
    };
  }
  const cc = spec.tls?.backend?.clientCertificateRef;
  if (cc) rec.backendClientCertificate = { group: cc.group, kind: cc.kind, name: cc.name, namespace: cc.namespace ?? meta.namespace };
  if (spec.infrastructure) {
    rec.infrastructure = { labels: { ...(spec.infrastructure.labels ?? {}) }, annotations: { ...(spec.infrastructure.annotations ?? {}) } };
    const pr = spec.infrastructure.parametersRef;
    if (pr) rec.infrastructure.parametersRef = `${pr.group || 'core'}/${pr.kind} ${pr.name}`;
  }
  return { ok: true, record: rec };
}

/** The ConfigMaps ("namespace/name") a Gateway's record was made from: the CA bundles of spec.tls.frontend. */
export function gatewayConfigMaps(g: GatewayRecord): string[] {
  const out = new Set<string>();
  const ft = g.frontendTls;
  for (const v of [ft?.default, ...(ft?.perPort ?? []).map((p) => p.validation)]) {
    for (const r of v?.caCertificateRefs ?? []) if (r.group === '' && r.kind === 'ConfigMap') out.add(`${r.namespace}/${r.name}`);
  }
  return [...out].sort();
}

/** The ClusterTrustBundles (by name) a Gateway's record was made from: those spec.tls.frontend names. */
export function gatewayTrustBundles(g: GatewayRecord): string[] {
  const out = new Set<string>();
  const ft = g.frontendTls;
  for (const v of [ft?.default, ...(ft?.perPort ?? []).map((p) => p.validation)]) {
    for (const r of v?.caCertificateRefs ?? []) if (isTrustBundleRef(r)) out.add(r.name);
  }
  return [...out].sort();
}

/** What a Gateway's record reads: its certificate Secrets, its CA ConfigMaps and ClusterTrustBundles. */
export function gatewayReads(g: GatewayRecord): RecordReads {
  const configMaps = gatewayConfigMaps(g);
  const clusterTrustBundles = gatewayTrustBundles(g);
  return { secrets: gatewaySecrets(g), ...(configMaps.length ? { configMaps } : {}), ...(clusterTrustBundles.length ? { clusterTrustBundles } : {}) };
}

/** The certificate Secrets a Gateway reads (TLS key material). */
export function gatewaySecrets(g: GatewayRecord): string[] {
  const out = new Set<string>();
  for (const l of g.listeners) for (const c of l.tls?.certificateRefs ?? []) if (c.group === '' && c.kind === 'Secret') out.add(`${c.namespace}/${c.name}`);
  const cc = g.backendClientCertificate;
  if (cc && cc.group === '' && cc.kind === 'Secret') out.add(`${cc.namespace}/${cc.name}`);
  return [...out].sort();
}
