// Pure normalizers: raw Kubernetes JSON (from the informer cache) → validated model records. Invalid parts are
// dropped with a specific reason; an object that cannot be served at all is reported as rejected.
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import type { KubeObject } from '../../operator/kube/object.ts';
import { annotationPlugins, authProxyHeaders, basicAuthPlugin, customHeadersPlugin, type ConfigMapReader, type SecretReader } from '../annotations/plugins.ts';
import { NGINX_PREFIX, PORTICO_PREFIX, PROXY_SSL_ANNOTATIONS } from '../annotations/table.ts';
import { parseAnnotations, type AnnotationResult } from '../annotations/parse.ts';
import { authTlsPlugin } from '../annotations/groups/auth-tls.ts';
import { fastcgiParamsOf } from '../annotations/groups/fastcgi.ts';
import { ownNamespaceRef } from '../annotations/own-namespace.ts';
import { parseIpv4, parseIpv6 } from '../values/addresses.ts';
import {
  dns1123LabelSchema,
  dns1123SubdomainSchema,
  hostSchema,
  nameProblem,
  pathSchema,
  portNameSchema,
  servicePortNameSchema,
  portNumberSchema,
  regexPathSchema,
  serviceNameSchema,
  zodMessage,
} from '../values/safe.ts';
import type {
  IngressClassInfo,
  IngressPath,
  IngressRule,
  NormalizedIngress,
  NormalizedService,
  NormalizedSlice,
  ProxySslSecret,
  ServiceBackendRef,
  TlsMaterial,
} from './types.ts';

const meta = z.object({
  name: z.string(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  generation: z.number().optional(),
  creationTimestamp: z.string().optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  labels: z.record(z.string(), z.string()).optional(),
});

const ingressClassSchema = z.object({
  metadata: meta,
  spec: z.object({ controller: z.string().optional() }).optional(),
});

/** Throws on a malformed IngressClass or an invalid name (the reconciler reports the error and retries). */
export function normalizeIngressClass(obj: KubeObject): IngressClassInfo {
  const o = ingressClassSchema.parse(obj);
  const bad = nameProblem(dns1123SubdomainSchema, o.metadata.name, 'IngressClass name');
  if (bad) throw new Error(bad);
  return {
    name: o.metadata.name,
    controller: o.spec?.controller ?? '',
    isDefault: o.metadata.annotations?.['ingressclass.kubernetes.io/is-default-class'] === 'true',
  };
}

const backendSchema = z.object({
  service: z
    .object({
      name: z.string(),
      port: z.object({ number: z.number().int().optional(), name: z.string().optional() }).optional(),
    })
    .optional(),
  resource: z.object({ kind: z.string(), name: z.string() }).loose().optional(),
});

const ingressSchema = z.object({
  metadata: meta,
  spec: z
    .object({
      ingressClassName: z.string().optional(),
      defaultBackend: backendSchema.optional(),
      rules: z
        .array(
          z.object({
            host: z.string().optional(),
            http: z
              .object({
                paths: z.array(z.object({ path: z.string().optional(), pathType: z.string().optional(), backend: backendSchema })),
              })
              .optional(),
          }),
        )
        .optional(),
      tls: z.array(z.object({ hosts: z.array(z.string()).optional(), secretName: z.string().optional() })).optional(),
    })
    .optional(),
});

function backendRef(b: z.infer<typeof backendSchema>, where: string, problems: string[]): ServiceBackendRef | null {
  if (b.resource) {
    problems.push(`${where}: resource backends (${b.resource.kind}/${b.resource.name}) are not supported by Portico; use a Service`);
    return null;
  }
  if (!b.service) {
    problems.push(`${where}: backend has no service`);
    return null;
  }
  const bad = nameProblem(serviceNameSchema, b.service.name, 'service name');
  if (bad) {
    problems.push(`${where}: ${bad}; this backend is ignored`);
    return null;
  }
  const p = b.service.port;
  if (p?.number !== undefined) {
    const badPort = nameProblem(portNumberSchema, p.number, `service ${b.service.name} port number`);
    if (badPort) {
      problems.push(`${where}: ${badPort}; this backend is ignored`);
      return null;
    }
    return { service: b.service.name, port: { number: p.number } };
  }
  if (p?.name) {
    const badPort = nameProblem(portNameSchema, p.name, `service ${b.service.name} port name`);
    if (badPort) {
      problems.push(`${where}: ${badPort}; this backend is ignored`);
      return null;
    }
    return { service: b.service.name, port: { name: p.name } };
  }
  problems.push(`${where}: service ${b.service.name} has no port number or name`);
  return null;
}

export type IngressResult = { ok: true; ingress: NormalizedIngress } | { ok: false; key: string; reason: string };

/**
 * secrets: reads auth-secret. configMaps: reads the custom-headers ConfigMap; absent (the admission webhook), its
 * content is not judged here.
 */
export function normalizeIngress(obj: KubeObject, secrets: SecretReader = () => undefined, configMaps?: ConfigMapReader): IngressResult {
  const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
  const parsed = ingressSchema.safeParse(obj);
  if (!parsed.success) return { ok: false, key, reason: `malformed Ingress: ${zodMessage(parsed.error)}` };
  const o = parsed.data;
  const badName =
    nameProblem(dns1123LabelSchema, o.metadata.namespace ?? 'default', 'namespace') ?? nameProblem(dns1123SubdomainSchema, o.metadata.name, 'Ingress name');
  if (badName) return { ok: false, key, reason: `invalid Ingress: ${badName}` };
  const legacy = o.metadata.annotations?.['kubernetes.io/ingress.class'];
  const className = o.spec?.ingressClassName ?? legacy ?? null;
  if (className !== null) {
    const badClass = nameProblem(dns1123SubdomainSchema, className, o.spec?.ingressClassName !== undefined ? 'spec.ingressClassName' : 'kubernetes.io/ingress.class');
    if (badClass) return { ok: false, key, reason: `invalid Ingress: ${badClass}` };
  }
  const problems: string[] = [];
  const ann = parseAnnotations(o.metadata.annotations);
  const proxySsl = proxySslOf(ann, o.metadata.annotations, o.metadata.namespace ?? 'default', secrets);
  // With proxy-ssl-secret, an invalid proxy-ssl-* value is not ignored: the paths fail closed (proxySsl.error).
  for (const e of ann.errors) if (!proxySsl || !isProxySslAnnotation(e.annotation)) problems.push(`annotation ignored: ${e.message}`);
  const ap = annotationPlugins(ann.values);
  const ba = basicAuthPlugin(ann.values, o.metadata.namespace ?? 'default', secrets);
  const mtls = authTlsPlugin(ann.values, o.metadata.namespace ?? 'default', secrets);
  problems.push(...ap.problems, ...ba.problems, ...mtls.problems);
  const accessControl = [...ann.accessControl, ...ap.closed, ...ba.closed, ...mtls.closed];
  const ch = customHeadersPlugin(ann.values, o.metadata.namespace ?? 'default', configMaps);
  const aph = authProxyHeaders(ann.values, o.metadata.namespace ?? 'default', ap.plugins, configMaps);
  problems.push(...aph.problems);
  accessControl.push(...aph.closed);
  // FastCGI (backend-protocol FCGI): the params ConfigMap (what has no effect is said by the translation's Warnings).
  const fastcgi = fastcgiParamsOf(ann.values, o.metadata.namespace ?? 'default', configMaps);
  const pluginsFromAnnotations = [...ap.plugins, ...(ba.plugin ? [ba.plugin] : []), ...(mtls.plugin ? [mtls.plugin] : []), ...(ch.plugin ? [ch.plugin] : [])];
  // ingress-nginx: rewrite-target implies regex paths (its rewrite reads the path as a regex with captures), so the
  // ImplementationSpecific paths of such an Ingress are regexes as with use-regex.
  const useRegex = ann.values['use-regex'] === true || ann.values['rewrite-target'] !== undefined;
  const rules: IngressRule[] = [];
  (o.spec?.rules ?? []).forEach((r, ri) => {
    let host: string | null = null;
    if (r.host !== undefined && r.host !== '') {
      const h = hostSchema.safeParse(r.host);
      if (!h.success) {
        problems.push(`rules[${ri}].host ${JSON.stringify(r.host)}: ${zodMessage(h.error)}`);
        return;
      }
      host = h.data;
    }
    const paths: IngressPath[] = [];
    (r.http?.paths ?? []).forEach((p, pi) => {
      const where = `rules[${ri}].paths[${pi}]`;
      const raw = p.path ?? '/';
      const type = p.pathType ?? 'ImplementationSpecific';
      let match: IngressPath['match'];
      if (type === 'Exact') match = 'exact';
      else if (type === 'Prefix') match = 'prefix';
      else if (type === 'ImplementationSpecific') match = useRegex ? 'regex' : 'prefix';
      else {
        problems.push(`${where}: unknown pathType ${JSON.stringify(type)}`);
        return;
      }
      const schema = match === 'regex' ? regexPathSchema : pathSchema;
      const pr = schema.safeParse(raw);
      if (!pr.success) {
        problems.push(`${where} path ${JSON.stringify(raw.slice(0, 100))}: ${zodMessage(pr.error)}`);
        return;
      }
      let path = pr.data;
      // Prefix matching is element-wise: "/foo/" and "/foo" are the same prefix (the Ingress spec: a trailing slash
      // is ignored). The path as written is kept (`written`) for what ingress-nginx derives from it: rewrite-target
      // and host-wide regex paths, and — for ImplementationSpecific paths only — the 301 of its `location /foo/`
      // for "/foo" (slashQuirk).
      if (match === 'prefix' && path.length > 1) path = path.replace(/\/+$/, '') || '/';
      const backend = backendRef(p.backend, where, problems);
      if (!backend) return;
      const ip: IngressPath = path === pr.data ? { path, match, backend } : { path, match, backend, written: pr.data };
      if (type === 'ImplementationSpecific' && match === 'prefix' && pr.data === `${path}/`) ip.slashQuirk = true;
      paths.push(ip);
    });
    rules.push({ host, paths });
  });
  const defaultBackend = o.spec?.defaultBackend ? backendRef(o.spec.defaultBackend, 'defaultBackend', problems) : null;
  const tls = (o.spec?.tls ?? []).map((t, ti) => {
    let secretName = t.secretName ?? null;
    const badSecret = secretName !== null ? nameProblem(dns1123SubdomainSchema, secretName, `tls[${ti}] secretName`) : null;
    if (badSecret) {
      problems.push(`${badSecret}; its hosts get the default certificate`);
      secretName = null;
    }
    return {
      hosts: (t.hosts ?? []).filter((h) => {
        const ok = hostSchema.safeParse(h).success;
        if (!ok) problems.push(`tls[${ti}] host ${JSON.stringify(h)} is not a valid DNS name`);
        return ok;
      }),
      secretName,
    };
  });
  if (rules.every((r) => r.paths.length === 0) && !defaultBackend) {
    const why = problems.length ? problems.join('; ') : 'it has no rules with paths and no defaultBackend';
    return { ok: false, key, reason: `nothing to serve: ${why}` };
  }
  return {
    ok: true,
    ingress: {
      key,
      namespace: o.metadata.namespace ?? 'default',
      name: o.metadata.name,
      uid: o.metadata.uid ?? '',
      generation: o.metadata.generation ?? 0,
      creationTimestamp: o.metadata.creationTimestamp ?? '',
      className,
      classFromAnnotation: o.spec?.ingressClassName === undefined && legacy !== undefined,
      rules,
      defaultBackend,
      tls,
      annotations: ann.values,
      ...annotationTextOf(o.metadata.annotations),
      problems,
      unsupportedAnnotations: ann.unsupported,
      accessControl,
      annotationPlugins: pluginsFromAnnotations,
      ...(ba.secretKey ? { authSecret: ba.secretKey } : {}),
      ...(ch.configMapKey ? { customHeadersConfigMap: ch.configMapKey } : {}),
      ...(aph.configMapKey ? { authProxyHeadersConfigMap: aph.configMapKey } : {}),
      ...(fastcgi ? { fastcgi } : {}),
      ...(proxySsl ? { proxySsl } : {}),
      ...(mtls.secretKey ? { authTlsSecret: mtls.secretKey } : {}),
      testInvalidDirective: o.metadata.annotations?.['portico.dev/test-invalid-directive'] === 'true',
    },
  };
}

const isProxySslAnnotation = (full: string): boolean => (PROXY_SSL_ANNOTATIONS as readonly string[]).includes(full.replace(/^[^/]+\//, ''));

/**
 * ingress-nginx's proxy-ssl-secret, read when the annotation is set (the other proxy-ssl-* annotations mean nothing
 * without it, as in ingress-nginx): only a Secret of the Ingress's own namespace; tls.crt with tls.key (a client
 * certificate) and/or ca.crt (what proxy-ssl-verify checks the backend against), each PEM, re-encoded here. An
 * invalid proxy-ssl-* value, another namespace, a missing or unusable Secret, or proxy-ssl-verify without ca.crt
 * is an `error`: the translation fails the Ingress's paths closed instead of proxying with less TLS than asked.
 */
export function proxySslOf(ann: AnnotationResult, raw: Record<string, string> | undefined, namespace: string, secrets: SecretReader): ProxySslSecret | undefined {
  const written = raw?.[`${PORTICO_PREFIX}proxy-ssl-secret`] ?? raw?.[`${NGINX_PREFIX}proxy-ssl-secret`];
  if (written === undefined) return undefined;
  const invalid = ann.errors.filter((e) => isProxySslAnnotation(e.annotation)).map((e) => e.message);
  if (invalid.length) return { error: `invalid ${invalid.join('; ')}` };
  const ref = ann.values['proxy-ssl-secret'] as string;
  const { key: secretKey, elsewhere, found: sec } = ownNamespaceRef(ref, namespace, secrets);
  if (elsewhere) return { error: `proxy-ssl-secret ${ref} is in another namespace; only a Secret of the Ingress's own namespace (${namespace}) is read` };
  if (!sec?.data) return { secretKey, error: `Secret ${secretKey} (proxy-ssl-secret) not found`, missing: true };
  const m = proxySslMaterial(secretKey, sec.data);
  if ('error' in m) return { secretKey, error: m.error };
  if (ann.values['proxy-ssl-verify'] === true && !m.ca) return { secretKey, error: `proxy-ssl-verify is on but Secret ${secretKey} has no ca.crt to verify the backend's certificate against` };
  return { secretKey, ...m };
}

/** PEM certificates only (at most 256 KiB), each parsed and re-encoded; or why not. */
function pemCertificates(pem: string, what: string): { pem: string } | { error: string } {
  if (pem.length > 256 * 1024) return { error: `${what} is larger than 256 KiB` };
  const blocks = pem.trim().split(/(?<=-----END CERTIFICATE-----)\s*/).filter((b) => b.trim());
  if (!blocks.length) return { error: `${what} holds no PEM certificate` };
  const out: string[] = [];
  for (const b of blocks) {
    if (!/^-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----$/.test(b.trim())) return { error: `${what} must hold only PEM certificates` };
    try {
      out.push(new X509Certificate(b.trim()).toString());
    } catch (e) {
      return { error: `${what} holds a certificate that cannot be read: ${(e as Error).message}` };
    }
  }
  return { pem: out.join('') };
}

/** What a proxy-ssl-secret holds: a client certificate (tls.crt + tls.key, matching) and/or ca.crt; or why it is unusable. */
function proxySslMaterial(key: string, data: Record<string, string>): Pick<ProxySslSecret, 'certificate' | 'ca'> | { error: string } {
  const decode = (b64: string | undefined) => (b64 === undefined ? undefined : Buffer.from(b64, 'base64').toString('utf8'));
  const crt = decode(data['tls.crt']);
  const k = decode(data['tls.key']);
  const ca = decode(data['ca.crt']);
  if ((crt === undefined) !== (k === undefined)) return { error: `Secret ${key} (proxy-ssl-secret) has ${crt === undefined ? 'tls.key but no tls.crt' : 'tls.crt but no tls.key'}` };
  if (crt === undefined && ca === undefined) return { error: `Secret ${key} (proxy-ssl-secret) has neither tls.crt and tls.key (a client certificate) nor ca.crt` };
  const out: Pick<ProxySslSecret, 'certificate' | 'ca'> = {};
  if (crt !== undefined && k !== undefined) {
    const chain = pemCertificates(crt, `tls.crt of Secret ${key}`);
    if ('error' in chain) return chain;
    let pk: KeyObject;
    try {
      if (k.length > 64 * 1024) throw new Error('too large');
      pk = createPrivateKey(k);
    } catch {
      // The parser's message is left out: nothing of the key may reach an event.
      return { error: `tls.key of Secret ${key} is not a PEM private key (an encrypted key is not supported)` };
    }
    if (!new X509Certificate(chain.pem).checkPrivateKey(pk)) return { error: `tls.key of Secret ${key} does not match the certificate in its tls.crt` };
    out.certificate = { cert: chain.pem, key: pk.export({ type: 'pkcs8', format: 'pem' }) as string };
  }
  if (ca !== undefined) {
    const c = pemCertificates(ca, `ca.crt of Secret ${key}`);
    if ('error' in c) return c;
    out.ca = c.pem;
  }
  return out;
}

const serviceSchema = z.object({
  metadata: meta,
  spec: z
    .object({
      type: z.string().optional(),
      externalName: z.string().optional(),
      clusterIP: z.string().optional(),
      clusterIPs: z.array(z.string()).nullish(),
      externalIPs: z.array(z.string()).nullish(),
      ports: z
        .array(
          z.object({
            name: z.string().optional(),
            port: z.number().int(),
            targetPort: z.union([z.number().int(), z.string()]).optional(),
            protocol: z.string().optional(),
            appProtocol: z.string().optional(),
          }),
        )
        .optional(),
    })
    .optional(),
  status: z.object({ loadBalancer: z.object({ ingress: z.array(z.object({ ip: z.string().optional() })).nullish() }).nullish() }).nullish(),
});

/** Throws on a malformed Service or an invalid name; invalid ports are dropped and listed in `problems`. */
export function normalizeService(obj: KubeObject): NormalizedService {
  const o = serviceSchema.parse(obj);
  const bad = nameProblem(dns1123LabelSchema, o.metadata.namespace ?? 'default', 'namespace') ?? nameProblem(serviceNameSchema, o.metadata.name, 'Service name');
  if (bad) throw new Error(bad);
  const problems: string[] = [];
  const type = o.spec?.type ?? 'ClusterIP';
  const ext = type === 'ExternalName' ? o.spec?.externalName ?? null : null;
  const externalName = ext && hostSchema.safeParse(ext.toLowerCase()).success ? ext.toLowerCase() : null;
  if (ext && !externalName) problems.push(`externalName ${JSON.stringify(ext.slice(0, 100))} is not a valid DNS name`);
  const ports: NormalizedService['ports'] = [];
  for (const p of o.spec?.ports ?? []) {
    const badPort = nameProblem(portNumberSchema, p.port, 'port') ?? (p.name ? nameProblem(servicePortNameSchema, p.name, 'port name') : null);
    if (badPort) {
      problems.push(`${badPort}; this port is ignored`);
      continue;
    }
    ports.push({ name: p.name ?? '', port: p.port, targetPort: p.targetPort ?? p.port, protocol: p.protocol ?? 'TCP', ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}) });
  }
  // service-upstream: the cluster IP as written ("None" for a headless Service); anything else that is not an IP is dropped.
  const cip = o.spec?.clusterIP;
  const clusterIP = cip === 'None' ? 'None' : cip && (parseIpv4(cip) || parseIpv6(cip)) ? cip : null;
  // Every other address the Service answers on (dual-stack cluster IPs, external IPs, load-balancer IPs): read only
  // for Portico's own Service, whose addresses no tenant may make it proxy to. Omitted when there are none.
  const extra = new Set<string>();
  for (const a of [...(o.spec?.clusterIPs ?? []), ...(o.spec?.externalIPs ?? []), ...(o.status?.loadBalancer?.ingress ?? []).map((i) => i.ip ?? '')]) {
    if (a && a !== clusterIP && (parseIpv4(a) || parseIpv6(a))) extra.add(a);
  }
  return {
    key: `${o.metadata.namespace}/${o.metadata.name}`,
    type,
    externalName,
    ports,
    problems,
    clusterIP,
    ...(o.metadata.uid ? { uid: o.metadata.uid } : {}),
    ...(extra.size ? { otherIPs: [...extra].sort() } : {}),
  };
}

const sliceSchema = z.object({
  metadata: meta,
  addressType: z.string(),
  ports: z
    .array(z.object({ name: z.string().optional(), port: z.number().int().optional(), protocol: z.string().optional() }))
    .nullish(),
  endpoints: z
    .array(
      z.object({
        addresses: z.array(z.string()),
        conditions: z
          .object({ ready: z.boolean().nullish(), serving: z.boolean().nullish(), terminating: z.boolean().nullish() })
          .nullish(),
      }),
    )
    .nullish(),
});

export function serviceKeyOfSlice(obj: KubeObject): string | null {
  const svc = obj.metadata.labels?.['kubernetes.io/service-name'];
  return svc ? `${obj.metadata.namespace}/${svc}` : null;
}

export function normalizeEndpointSlice(obj: KubeObject): NormalizedSlice | null {
  const serviceKey = serviceKeyOfSlice(obj);
  if (!serviceKey) return null;
  const o = sliceSchema.parse(obj);
  // Strict parsers (no "0127.1"-style forms); FQDN slices are deprecated and never served.
  const parse = o.addressType === 'IPv4' ? parseIpv4 : o.addressType === 'IPv6' ? parseIpv6 : null;
  return {
    key: `${o.metadata.namespace}/${o.metadata.name}`,
    serviceKey,
    addressType: o.addressType,
    ports: (o.ports ?? [])
      .filter((p) => portNumberSchema.safeParse(p.port).success && (!p.name || servicePortNameSchema.safeParse(p.name).success))
      .map((p) => ({ name: p.name ?? '', port: p.port as number, protocol: p.protocol ?? 'TCP' })),
    endpoints: parse
      ? (o.endpoints ?? [])
          .filter((e) => e.addresses[0] !== undefined && parse(e.addresses[0]) !== null)
          .map((e) => ({
            address: e.addresses[0] as string,
            // The API defines a nil ready as ready, nil serving as ready's value, nil terminating as false.
            ready: e.conditions?.ready ?? true,
            serving: e.conditions?.serving ?? e.conditions?.ready ?? true,
            terminating: e.conditions?.terminating ?? false,
          }))
      : [],
  };
}

/**
 * What one TLS Secret may put into the certificate zone that every tenant shares (portico_certs, 32 MiB by default):
 * tls.crt at most 64 KiB as written and at most 10 certificates (a leaf and its intermediates are 2–6; ten RSA-4096
 * certificates are about 20 KB of PEM, and a bundle with openssl's text dumps of four certificates about 25 KB);
 * tls.key at most 16 KiB (an RSA-8192 key is 6.4 KB of PEM). What is stored is re-encoded from what was parsed — each
 * certificate as PEM, the key as PKCS#8 PEM — so text around the blocks, padding and blocks of other types never
 * reach shared memory: a Secret costs the zone what its certificates are, at most about 64 KiB.
 */
export const TLS_SECRET_LIMITS = { crtBytes: 64 * 1024, certificates: 10, keyBytes: 16 * 1024 } as const;

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g;

/** The certificates of a PEM text (blocks of other types and text between blocks are skipped), or why not. */
function certificateChain(pem: string): X509Certificate[] | string {
  const out: X509Certificate[] = [];
  for (const m of pem.matchAll(PEM_BLOCK)) {
    if (m[1] !== 'CERTIFICATE') continue;
    if (out.length === TLS_SECRET_LIMITS.certificates) return `tls.crt holds more than ${TLS_SECRET_LIMITS.certificates} certificates; Portico accepts a chain of at most ${TLS_SECRET_LIMITS.certificates}`;
    if (!/^[A-Za-z0-9+/=\s]+$/.test(m[2]!)) return `certificate ${out.length + 1} of tls.crt is not base64 PEM`;
    try {
      out.push(new X509Certificate(Buffer.from(m[2]!.replace(/\s+/g, ''), 'base64')));
    } catch (e) {
      return `certificate ${out.length + 1} of tls.crt cannot be read: ${(e as Error).message}`;
    }
  }
  return out.length ? out : 'tls.crt is not a PEM certificate: it holds no BEGIN CERTIFICATE block';
}

const kib = (n: number) => `${Math.ceil(n / 1024)} KiB`;

/**
 * Validates a kubernetes.io/tls Secret: within TLS_SECRET_LIMITS, both PEMs parse, the key matches the first
 * certificate, it is not expired. The material kept is re-encoded from what was parsed.
 */
export function parseTlsSecret(obj: KubeObject & { type?: string; data?: Record<string, string> }, now: Date): TlsMaterial {
  const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
  if (obj.type !== 'kubernetes.io/tls') return { key, ok: false, error: `secret type is ${obj.type ?? 'unset'}, expected kubernetes.io/tls` };
  const crt = obj.data?.['tls.crt'];
  const k = obj.data?.['tls.key'];
  if (!crt || !k) return { key, ok: false, error: 'secret lacks tls.crt or tls.key' };
  const crtBytes = Buffer.from(crt, 'base64');
  const keyBytes = Buffer.from(k, 'base64');
  if (crtBytes.length > TLS_SECRET_LIMITS.crtBytes) {
    return { key, ok: false, error: `tls.crt is ${kib(crtBytes.length)}; Portico accepts at most ${kib(TLS_SECRET_LIMITS.crtBytes)} (a chain of at most ${TLS_SECRET_LIMITS.certificates} certificates; text around them counts)` };
  }
  if (keyBytes.length > TLS_SECRET_LIMITS.keyBytes) return { key, ok: false, error: `tls.key is ${kib(keyBytes.length)}; Portico accepts at most ${kib(TLS_SECRET_LIMITS.keyBytes)}` };
  const chain = certificateChain(crtBytes.toString('utf8'));
  if (typeof chain === 'string') return { key, ok: false, error: chain };
  const x509 = chain[0]!;
  let pk: KeyObject;
  try {
    pk = createPrivateKey(keyBytes.toString('utf8'));
  } catch {
    // The parser's message is left out: nothing of the key may reach an event.
    return { key, ok: false, error: 'tls.key is not a PEM private key (an encrypted key is not supported)' };
  }
  if (!x509.checkPrivateKey(pk)) return { key, ok: false, error: 'tls.key does not match the certificate in tls.crt' };
  const notAfter = new Date(x509.validTo);
  if (notAfter.getTime() < now.getTime()) return { key, ok: false, error: `certificate expired on ${notAfter.toISOString()}` };
  const hosts = (x509.subjectAltName ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.startsWith('DNS:'))
    .map((s) => s.slice(4).toLowerCase());
  // Only what was parsed is kept (see TLS_SECRET_LIMITS).
  const cert = chain.map((c) => c.toString()).join('');
  const privateKey = pk.export({ type: 'pkcs8', format: 'pem' }) as string;
  return { key, ok: true, cert, privateKey, hosts, notAfter: notAfter.toISOString(), fingerprint: x509.fingerprint256 };
}

/** The ingress-nginx and Portico annotations as written, for the ConfigMap's annotation-value-word-blocklist. */
function annotationTextOf(all: Record<string, string> | undefined): { annotationText?: Record<string, string> } {
  const out: Record<string, string> = {};
  let n = 0;
  for (const [k, v] of Object.entries(all ?? {})) {
    if ((k.startsWith(NGINX_PREFIX) || k.startsWith(PORTICO_PREFIX)) && typeof v === 'string') {
      out[k] = v;
      n++;
    }
  }
  return n ? { annotationText: out } : {};
}
