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
  output: 'text' | 'json';
}

const USAGE = `usage: portico migrate [-f FILE|DIR|-]... [--kubeconfig FILE] [--ingress-class NAME] [--configmap NAMESPACE/NAME] [-o text|json]
  -f, --filename       manifests to read (multi-document YAML or JSON; a directory: its .yaml/.yml/.json files; - = stdin); repeatable.
                       Without -f, the cluster of --kubeconfig (or $KUBECONFIG, ~/.kube/config, in-cluster) is read.
  --ingress-class      only Ingresses of this class (spec.ingressClassName or kubernetes.io/ingress.class)
  --configmap          the ingress-nginx controller ConfigMap (with -f: found among the manifests; default: one named
                       ingress-nginx-controller or labelled app.kubernetes.io/name=ingress-nginx)
  -o, --output         text (default) or json
exit status: 0 ready to move as-is, 1 something needs changes, 2 usage error or unreadable input`;

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
        if (v !== 'text' && v !== 'json') throw new UsageError(`-o must be text or json, got ${JSON.stringify(v)}`);
        o.output = v;
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
}

export type Obj = KubeObject & { spec?: { ingressClassName?: string }; data?: Record<string, unknown> };

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
      for (const it of items) if (isObj(it)) objects.push(it);
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
  return {
    source: { kind: 'manifests', files },
    ingresses,
    configMap: cm ? { namespace: ns(cm), name: cm.metadata.name, data: stringData(cm.data) } : null,
    secrets,
    missingSecrets: new Set(),
  };
}

/** A Secret's data, base64 as the API serves it (stringData of a manifest is encoded here). */
function secretData(o: Obj & { stringData?: Record<string, string> }): Record<string, string> {
  const out = stringData(o.data);
  for (const [k, v] of Object.entries(o.stringData ?? {})) out[k] = Buffer.from(String(v)).toString('base64');
  return out;
}

/** Reads a cluster: every Ingress (all namespaces), the ConfigMap, and the Secrets named by auth-secret, proxy-ssl-secret and auth-tls-secret. */
export async function loadCluster(opts: MigrateOptions): Promise<Input> {
  const { KubeClient, loadKubeConfig, isNotFound } = await import('../operator/kube/client.ts');
  let client: InstanceType<typeof KubeClient>;
  try {
    client = new KubeClient(loadKubeConfig(opts.kubeconfig), { rateLimit: false });
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
  return { source: { kind: 'cluster', server: client.server }, ingresses: selected, configMap, secrets, missingSecrets };
}
