// What `portico migrate` reads: its command line, and the Ingresses, controller ConfigMap and Secrets it judges —
// from manifests (files, directories, stdin) or from a cluster (list and get, never write). The analysis and the
// report are app/migrate.ts's.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { loadAllYaml } from '@kubernetes/client-node';
import type { KubeObject } from '../operator/kube/object.ts';
import { NGINX_PREFIX, PORTICO_PREFIX } from '../reconcilers/annotations/table.ts';

export class UsageError extends Error {}

export interface MigrateOptions {
  files: string[];
  kubeconfig?: string;
  ingressClass?: string;
  configmap?: { namespace: string; name: string };
  /** text (the report's default), json, or yaml (the default with --to gateway-api). */
  output: 'text' | 'json' | 'yaml';
  /** --to gateway-api: write the HTTPRoutes (and Plugins...) serving the same requests (app/migrate-gateway-api.ts). */
  to?: 'gateway-api';
  /** --gateway NAMESPACE/NAME: the Gateway the routes attach to (default: "portico" in each Ingress's namespace). */
  gateway?: { namespace: string; name: string };
  /** --section-name NAME: every route attaches to this one listener of the Gateway. */
  sectionName?: string;
  /** --gateway-class NAME: write the Gateway(s) too, of this GatewayClass. */
  gatewayClass?: string;
}

const USAGE = `usage: portico migrate [-f FILE|DIR|-]... [--kubeconfig FILE] [--ingress-class NAME] [--configmap NAMESPACE/NAME] [-o text|json]
       portico migrate --to gateway-api [--gateway NAMESPACE/NAME] [--section-name NAME] [--gateway-class NAME] [-f ...] [-o yaml|json]
  -f, --filename       manifests to read (multi-document YAML or JSON; a directory: its .yaml/.yml/.json files; - = stdin); repeatable.
                       Without -f, the cluster of --kubeconfig (or $KUBECONFIG, ~/.kube/config, in-cluster) is read.
  --ingress-class      only Ingresses of this class (spec.ingressClassName or kubernetes.io/ingress.class)
  --configmap          the ingress-nginx controller ConfigMap (with -f: found among the manifests; default: one named
                       ingress-nginx-controller or labelled app.kubernetes.io/name=ingress-nginx)
  -o, --output         text (default) or json; with --to gateway-api: yaml (default) or json
  --to gateway-api     write HTTPRoutes (and Portico Plugins, Consumers, ReferenceGrants) serving the same requests as the
                       Ingresses to stdout; the report (converted, converted to a Plugin, not convertible and why) to stderr
  --gateway            the Gateway the routes attach to (default: a Gateway "portico" in each Ingress's namespace)
  --section-name       attach every route to this listener only (default: listener "http", and "https-<host>" per TLS host)
  --gateway-class      also write the Gateway(s) the routes need (listeners, certificates), of this GatewayClass
exit status: 0 ready to move as-is (with --to: everything converted), 1 something needs changes (not converted),
             2 usage error or unreadable input`;

export function parseMigrateArgs(argv: readonly string[]): MigrateOptions {
  const o: MigrateOptions = { files: [], output: 'text' };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const value = (): string => {
      if (eq > 0) return arg.slice(eq + 1);
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '-f':
      case '--filename':
        o.files.push(value());
        break;
      case '--kubeconfig':
        o.kubeconfig = value();
        break;
      case '--ingress-class':
        o.ingressClass = value();
        break;
      case '--configmap': {
        const v = value();
        const m = /^([a-z0-9][-a-z0-9]{0,62})\/([a-z0-9][-a-z0-9.]{0,252})$/.exec(v);
        if (!m) throw new UsageError(`--configmap must be NAMESPACE/NAME, got ${JSON.stringify(v)}`);
        o.configmap = { namespace: m[1] as string, name: m[2] as string };
        break;
      }
      case '-o':
      case '--output': {
        const v = value();
        if (v !== 'text' && v !== 'json' && v !== 'yaml') throw new UsageError(`-o must be text, json or yaml, got ${JSON.stringify(v)}`);
        o.output = v;
        break;
      }
      case '--to': {
        const v = value();
        if (v !== 'gateway-api') throw new UsageError(`--to must be gateway-api, got ${JSON.stringify(v)}`);
        o.to = v;
        break;
      }
      case '--gateway': {
        const v = value();
        const m = /^([a-z0-9][-a-z0-9]{0,62})\/([a-z0-9][-a-z0-9.]{0,252})$/.exec(v);
        if (!m) throw new UsageError(`--gateway must be NAMESPACE/NAME, got ${JSON.stringify(v)}`);
        o.gateway = { namespace: m[1] as string, name: m[2] as string };
        break;
      }
      case '--section-name': {
        const v = value();
        if (!/^[a-z0-9]([-a-z0-9]{0,251}[a-z0-9])?$/.test(v)) throw new UsageError(`--section-name must be a listener name (lower-case letters, digits and "-"), got ${JSON.stringify(v)}`);
        o.sectionName = v;
        break;
      }
      case '--gateway-class': {
        const v = value();
        if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(v)) throw new UsageError(`--gateway-class must be a GatewayClass name, got ${JSON.stringify(v)}`);
        o.gatewayClass = v;
        break;
      }
      case '-h':
      case '--help':
        throw new UsageError(USAGE);
      default:
        throw new UsageError(`unknown argument ${JSON.stringify(arg)}\n${USAGE}`);
    }
  }
  if (o.files.length && o.kubeconfig) throw new UsageError('give either -f (manifests) or --kubeconfig (a cluster), not both');
  if (!o.to) {
    if (o.output === 'yaml') throw new UsageError('-o yaml is the output of --to gateway-api; the report is text or json');
    for (const [set, flag] of [[o.gateway, '--gateway'], [o.sectionName, '--section-name'], [o.gatewayClass, '--gateway-class']] as const) if (set !== undefined) throw new UsageError(`${flag} needs --to gateway-api`);
  } else if (o.output === 'text') {
    if (argv.some((a) => a === '-o' || a === '--output' || a.startsWith('--output='))) throw new UsageError('--to gateway-api writes yaml (default) or json, not text');
    o.output = 'yaml';
  }
  return o;
}

// ---- input --------------------------------------------------------------------------------------------------------

export interface ConfigMapInput {
  namespace: string;
  name: string;
  data: Record<string, string>;
}

export interface Input {
  source: { kind: 'manifests'; files: string[] } | { kind: 'cluster'; server: string };
  ingresses: KubeObject[];
  configMap: ConfigMapInput | null;
  /** Secrets available to check basic-auth users, proxy-ssl-secret certificates and auth-tls CAs ("namespace/name"). */
  secrets: Map<string, { data?: Record<string, string> }>;
  /** Secrets known not to exist (a cluster answered 404): basic auth and auth-tls on them fail closed. */
  missingSecrets: Set<string>;
  /**
   * Services by "namespace/name" with their ports, for --to gateway-api (a backendRef needs the port number an
   * Ingress may give by name). Absent or without the Service: a port name cannot be resolved.
   */
  services?: Map<string, { ports: { name?: string; port: number }[] }>;
  /** ConfigMaps by "namespace/name" (the custom-headers ones), for --to gateway-api. */
  configMaps?: Map<string, { data?: Record<string, string> }>;
}

export type Obj = KubeObject & { spec?: { ingressClassName?: string }; data?: Record<string, unknown> };
type Backend = { service?: { name?: string; port?: { name?: string; number?: number } } };

const isObj = (v: unknown): v is Obj =>
  typeof v === 'object' && v !== null && typeof (v as Obj).metadata === 'object' && (v as Obj).metadata !== null && typeof (v as Obj).metadata.name === 'string';

export function classOf(o: Obj): string | null {
  return o.spec?.ingressClassName ?? o.metadata.annotations?.['kubernetes.io/ingress.class'] ?? null;
}

const stringData = (d: Record<string, unknown> | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(d ?? {}).map(([k, v]) => [k, typeof v === 'string' ? v : String(v)]));

const looksLikeControllerConfigMap = (o: Obj) =>
  o.metadata.name === 'ingress-nginx-controller' || o.metadata.labels?.['app.kubernetes.io/name'] === 'ingress-nginx';

/** Reads manifests: files, directories (their .yaml/.yml/.json files, sorted, not recursive) and "-" (stdin). */
export function loadManifests(paths: readonly string[], opts: Pick<MigrateOptions, 'ingressClass' | 'configmap'>, stdin: () => string = () => readFileSync(0, 'utf8')): Input {
  const files: string[] = [];
  for (const p of paths) {
    if (p === '-') {
      files.push(p);
      continue;
    }
    let st;
    try {
      st = statSync(p);
    } catch {
      throw new UsageError(`${p}: no such file or directory`);
    }
    if (st.isDirectory()) {
      for (const f of readdirSync(p).sort()) if (/\.(ya?ml|json)$/.test(f)) files.push(path.join(p, f));
    } else files.push(p);
  }
  const objects: Obj[] = [];
  for (const f of files) {
    const text = f === '-' ? stdin() : readFileSync(f, 'utf8');
    let docs: unknown[];
    try {
      docs = loadAllYaml(text);
    } catch (e) {
      throw new UsageError(`${f}: not valid YAML: ${(e as Error).message.split('\n')[0]}`);
    }
    for (const d of docs) {
      // A List (kubectl get -o yaml) holds its objects in items.
      const items = typeof d === 'object' && d !== null && Array.isArray((d as { items?: unknown }).items) ? (d as { items: unknown[] }).items : [d];
      for (const it of items) if (isObj(it)) objects.push(undated(it));
    }
  }
  const ns = (o: Obj) => o.metadata.namespace ?? 'default';
  const ingresses = objects
    .filter((o) => o.kind === 'Ingress')
    .map((o) => ({ ...o, metadata: { ...o.metadata, namespace: ns(o) } }))
    .filter((o) => !opts.ingressClass || classOf(o) === opts.ingressClass);
  const configMaps = objects.filter((o) => o.kind === 'ConfigMap');
  let cm: Obj | undefined;
  if (opts.configmap) {
    const want = opts.configmap;
    cm = configMaps.find((o) => o.metadata.name === want.name && ns(o) === want.namespace);
    if (!cm) throw new UsageError(`ConfigMap ${want.namespace}/${want.name} is not among the manifests`);
  } else cm = configMaps.find(looksLikeControllerConfigMap);
  const secrets = new Map<string, { data?: Record<string, string> }>();
  for (const o of objects) if (o.kind === 'Secret') secrets.set(`${ns(o)}/${o.metadata.name}`, { data: secretData(o) });
  const services = new Map<string, { ports: { name?: string; port: number }[] }>();
  for (const o of objects) if (o.kind === 'Service') services.set(`${ns(o)}/${o.metadata.name}`, { ports: servicePorts(o) });
  const configMapsByKey = new Map<string, { data?: Record<string, string> }>();
  for (const o of configMaps) configMapsByKey.set(`${ns(o)}/${o.metadata.name}`, { data: stringData(o.data) });
  return {
    source: { kind: 'manifests', files },
    ingresses,
    configMap: cm ? { namespace: ns(cm), name: cm.metadata.name, data: stringData(cm.data) } : null,
    secrets,
    missingSecrets: new Set(),
    services,
    configMaps: configMapsByKey,
  };
}

/**
 * The object with every Date a string again, as the API serves it ("2026-01-01T00:00:00Z"): the YAML loader of
 * @kubernetes/client-node makes Dates of the timestamps it knows (metadata.creationTimestamp), which the
 * normalizers read as strings — a manifest from `kubectl get -o yaml` would otherwise be a malformed Ingress.
 */
function undated<T>(v: T): T {
  if (v instanceof Date) return v.toISOString().replace(/\.000Z$/, 'Z') as T;
  if (Array.isArray(v)) return v.map(undated) as T;
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, undated(x)])) as T;
  return v;
}

/** A Service's ports (name and number), as far as they are well-formed. */
function servicePorts(o: Obj): { name?: string; port: number }[] {
  const ports = (o as { spec?: { ports?: unknown } }).spec?.ports;
  if (!Array.isArray(ports)) return [];
  return ports.flatMap((p: { name?: unknown; port?: unknown }) => (typeof p?.port === 'number' ? [{ ...(typeof p.name === 'string' ? { name: p.name } : {}), port: p.port }] : []));
}

/** A Secret's data, base64 as the API serves it (stringData of a manifest is encoded here). */
function secretData(o: Obj & { stringData?: Record<string, string> }): Record<string, string> {
  const out = stringData(o.data);
  for (const [k, v] of Object.entries(o.stringData ?? {})) out[k] = Buffer.from(String(v)).toString('base64');
  return out;
}

/** Reads a cluster: every Ingress (all namespaces), the ConfigMap, and the Secrets named by auth-secret, proxy-ssl-secret and auth-tls-secret. */
export async function loadCluster(opts: MigrateOptions): Promise<Input> {
  const { KubeClient, isNotFound } = await import('../operator/kube/client.ts');
  const { loadCredentials } = await import('../operator/kube/credentials.ts');
  let client: InstanceType<typeof KubeClient>;
  try {
    client = new KubeClient(await loadCredentials(opts.kubeconfig), { rateLimit: false });
  } catch (e) {
    throw new UsageError(`cannot load a kubeconfig: ${(e as Error).message} (pass --kubeconfig, set KUBECONFIG, or use -f)`);
  }
  const ingresses: Obj[] = [];
  try {
    let cont: string | undefined;
    do {
      const page = await client.request<{ items: Obj[]; metadata?: { continue?: string } }>('GET', '/apis/networking.k8s.io/v1/ingresses', { query: { limit: 500, continue: cont } });
      ingresses.push(...page.items);
      cont = page.metadata?.continue || undefined;
    } while (cont);
  } catch (e) {
    throw new UsageError(`cannot list Ingresses from ${client.server}: ${(e as Error).message}`);
  }
  let configMap: ConfigMapInput | null = null;
  if (opts.configmap) {
    const { namespace, name } = opts.configmap;
    try {
      const cm = await client.request<Obj>('GET', `/api/v1/namespaces/${namespace}/configmaps/${name}`);
      configMap = { namespace, name, data: stringData(cm.data) };
    } catch (e) {
      throw new UsageError(`cannot read ConfigMap ${namespace}/${name}: ${(e as Error).message}`);
    }
  }
  const selected = ingresses.filter((o) => !opts.ingressClass || classOf(o) === opts.ingressClass);
  const secrets = new Map<string, { data?: Record<string, string> }>();
  const missingSecrets = new Set<string>();
  for (const ing of selected) {
    const a = ing.metadata.annotations ?? {};
    for (const n of ['auth-secret', 'proxy-ssl-secret', 'auth-tls-secret']) {
      const ref = a[`${PORTICO_PREFIX}${n}`] ?? a[`${NGINX_PREFIX}${n}`];
      if (!ref || !/^([a-z0-9-]+\/)?[a-z0-9.-]+$/.test(ref)) continue;
      const key = ref.includes('/') ? ref : `${ing.metadata.namespace}/${ref}`;
      if (secrets.has(key) || missingSecrets.has(key)) continue;
      const [ns, name] = key.split('/') as [string, string];
      try {
        const s = await client.request<Obj>('GET', `/api/v1/namespaces/${ns}/secrets/${name}`);
        secrets.set(key, { data: stringData(s.data) });
      } catch (e) {
        if (isNotFound(e)) missingSecrets.add(key);
        // Forbidden or anything else: the Secret's content is not checked (a note says so).
      }
    }
  }
  const out: Input = { source: { kind: 'cluster', server: client.server }, ingresses: selected, configMap, secrets, missingSecrets };
  if (opts.to === 'gateway-api') {
    // What the conversion reads besides: the Services whose ports the Ingresses name (a backendRef needs the
    // number) and the custom-headers ConfigMaps. Not found or not readable: reported by the conversion.
    out.services = new Map();
    out.configMaps = new Map();
    for (const ing of selected) {
      const namespace = ing.metadata.namespace ?? 'default';
      const spec = (ing as { spec?: { defaultBackend?: Backend; rules?: { http?: { paths?: { backend?: Backend }[] } }[] } }).spec;
      const named = [spec?.defaultBackend, ...(spec?.rules ?? []).flatMap((r) => (r.http?.paths ?? []).map((p) => p.backend))].filter((b) => b?.service?.port?.name !== undefined);
      for (const b of named) {
        const key = `${namespace}/${b?.service?.name}`;
        if (out.services.has(key) || !/^[a-z0-9-]+$/.test(b?.service?.name ?? '')) continue;
        try {
          const s = await client.request<Obj>('GET', `/api/v1/namespaces/${namespace}/services/${b?.service?.name}`);
          out.services.set(key, { ports: servicePorts(s) });
        } catch {
          // Not found or forbidden: the port name stays unresolved (reported).
        }
      }
      const a = ing.metadata.annotations ?? {};
      const ref = a[`${PORTICO_PREFIX}custom-headers`] ?? a[`${NGINX_PREFIX}custom-headers`];
      if (!ref || !/^([a-z0-9-]+\/)?[a-z0-9.-]+$/.test(ref)) continue;
      const key = ref.includes('/') ? ref : `${namespace}/${ref}`;
      if (out.configMaps.has(key)) continue;
      const [cns, cname] = key.split('/') as [string, string];
      try {
        const c = await client.request<Obj>('GET', `/api/v1/namespaces/${cns}/configmaps/${cname}`);
        out.configMaps.set(key, { data: stringData(c.data) });
      } catch {
        // Not found or forbidden: custom-headers is reported as not convertible.
      }
    }
  }
  return out;
}
