// Pure normalizers: raw Kubernetes JSON (from the informer cache) → validated model records. Invalid parts are
// dropped with a specific reason; an object that cannot be served at all is reported as rejected.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { z } from 'zod';
import type { KubeObject } from '../../operator/kube/object.ts';
import { annotationPlugins, basicAuthPlugin, type SecretReader } from '../annotations/plugins.ts';
import { authTlsPlugin } from '../annotations/auth-tls.ts';
import { parseAnnotations } from '../annotations/table.ts';
import { parseIpv4, parseIpv6 } from '../translate/addresses.ts';
import {
  dns1123LabelSchema,
  dns1123SubdomainSchema,
  hostSchema,
  nameProblem,
  pathSchema,
  portNameSchema,
  portNumberSchema,
  regexPathSchema,
  serviceNameSchema,
  zodMessage,
} from '../translate/safe.ts';
import type {
  IngressClassInfo,
  IngressPath,
  IngressRule,
  NormalizedIngress,
  NormalizedService,
  NormalizedSlice,
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

export function normalizeIngress(obj: KubeObject, secrets: SecretReader = () => undefined): IngressResult {
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
  for (const e of ann.errors) problems.push(`annotation ignored: ${e.message}`);
  const ap = annotationPlugins(ann.values);
  const ba = basicAuthPlugin(ann.values, o.metadata.namespace ?? 'default', secrets);
  const mtls = authTlsPlugin(ann.values, o.metadata.namespace ?? 'default', secrets);
  problems.push(...ap.problems, ...ba.problems, ...mtls.problems);
  const accessControl = [...ann.accessControl, ...ap.closed, ...ba.closed, ...mtls.closed];
  const pluginsFromAnnotations = [...ap.plugins, ...(ba.plugin ? [ba.plugin] : []), ...(mtls.plugin ? [mtls.plugin] : [])];
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
      // Prefix matching is element-wise: "/foo/" and "/foo" are the same prefix. The path as written is kept
      // (`written`) for what ingress-nginx derives from it: the 301 of a location "/foo/" for "/foo", rewrite-target
      // and host-wide regex paths.
      if (match === 'prefix' && path.length > 1) path = path.replace(/\/+$/, '') || '/';
      const backend = backendRef(p.backend, where, problems);
      if (!backend) return;
      paths.push(path === pr.data ? { path, match, backend } : { path, match, backend, written: pr.data });
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
      problems,
      unsupportedAnnotations: ann.unsupported,
      accessControl,
      annotationPlugins: pluginsFromAnnotations,
      ...(ba.secretKey ? { authSecret: ba.secretKey } : {}),
      ...(mtls.secretKey ? { authTlsSecret: mtls.secretKey } : {}),
      testInvalidDirective: o.metadata.annotations?.['portico.dev/test-invalid-directive'] === 'true',
    },
  };
}

const serviceSchema = z.object({
  metadata: meta,
  spec: z
    .object({
      type: z.string().optional(),
      externalName: z.string().optional(),
      clusterIP: z.string().optional(),
      ports: z
        .array(
          z.object({
            name: z.string().optional(),
            port: z.number().int(),
            targetPort: z.union([z.number().int(), z.string()]).optional(),
            protocol: z.string().optional(),
          }),
        )
        .optional(),
    })
    .optional(),
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
    const badPort = nameProblem(portNumberSchema, p.port, 'port') ?? (p.name ? nameProblem(portNameSchema, p.name, 'port name') : null);
    if (badPort) {
      problems.push(`${badPort}; this port is ignored`);
      continue;
    }
    ports.push({ name: p.name ?? '', port: p.port, targetPort: p.targetPort ?? p.port, protocol: p.protocol ?? 'TCP' });
  }
  // service-upstream: the cluster IP as written ("None" for a headless Service); anything else that is not an IP is dropped.
  const cip = o.spec?.clusterIP;
  const clusterIP = cip === 'None' ? 'None' : cip && (parseIpv4(cip) || parseIpv6(cip)) ? cip : null;
  return { key: `${o.metadata.namespace}/${o.metadata.name}`, type, externalName, ports, problems, clusterIP };
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
      .filter((p) => portNumberSchema.safeParse(p.port).success && (!p.name || portNameSchema.safeParse(p.name).success))
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

/** Validates a kubernetes.io/tls Secret: both PEMs parse, the key matches the certificate, it is not expired. */
export function parseTlsSecret(obj: KubeObject & { type?: string; data?: Record<string, string> }, now: Date): TlsMaterial {
  const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
  if (obj.type !== 'kubernetes.io/tls') return { key, ok: false, error: `secret type is ${obj.type ?? 'unset'}, expected kubernetes.io/tls` };
  const crt = obj.data?.['tls.crt'];
  const k = obj.data?.['tls.key'];
  if (!crt || !k) return { key, ok: false, error: 'secret lacks tls.crt or tls.key' };
  const certPem = Buffer.from(crt, 'base64').toString('utf8');
  const keyPem = Buffer.from(k, 'base64').toString('utf8');
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(certPem);
  } catch (e) {
    return { key, ok: false, error: `tls.crt is not a PEM certificate: ${(e as Error).message}` };
  }
  try {
    if (!x509.checkPrivateKey(createPrivateKey(keyPem))) return { key, ok: false, error: 'tls.key does not match the certificate in tls.crt' };
  } catch (e) {
    return { key, ok: false, error: `tls.key is not a PEM private key: ${(e as Error).message}` };
  }
  const notAfter = new Date(x509.validTo);
  if (notAfter.getTime() < now.getTime()) return { key, ok: false, error: `certificate expired on ${notAfter.toISOString()}` };
  const hosts = (x509.subjectAltName ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.startsWith('DNS:'))
    .map((s) => s.slice(4).toLowerCase());
  return { key, ok: true, cert: certPem, privateKey: keyPem, hosts, notAfter: notAfter.toISOString(), fingerprint: x509.fingerprint256 };
}
