// How KubeClient reaches and authenticates to the API server, without loading @kubernetes/client-node.
//
// client-node's KubeConfig imports the whole generated API (every model and API class of every group): about
// 75 MB of the controller's resident memory for code Portico never calls. Portico reads the two shapes a
// controller actually runs with itself — in a pod (the ServiceAccount's projected token and CA) and kubeconfig
// files with a token, token file, client certificate or basic credentials — and hands everything else (exec and
// auth-provider plugins, proxies, impersonation) to client-node's KubeConfig, imported only then.
import { readFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { load as loadYaml } from 'js-yaml';
import type { ApiserverOverride, Credentials, TlsOptions } from './credential-types.ts';

export type { ApiserverOverride, Credentials, TlsOptions } from './credential-types.ts';

/** How long a token read from a file is used before the file is read again (client-go re-reads every minute). */
const TOKEN_REREAD_MS = 60_000;

const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** A token kept in a file (projected ServiceAccount token, tokenFile): read at most once a minute. */
function fileToken(file: string, now: () => number = () => performance.now()): () => Promise<string> {
  let cached: { token: string; at: number } | undefined;
  let reading: Promise<string> | undefined;
  return async () => {
    if (cached && now() - cached.at < TOKEN_REREAD_MS) return cached.token;
    reading ??= readFile(file, 'utf8')
      .then((t) => {
        const token = t.trim();
        cached = { token, at: now() };
        return token;
      })
      .catch((e: unknown) => {
        // A token that cannot be read again keeps the last one (the file is replaced atomically by the kubelet).
        if (cached) return cached.token;
        throw e;
      })
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };
}

function bearer(token: string): Record<string, string> {
  return token ? { Authorization: `Bearer ${token}` } : {};
}

/** A file's bytes, or the inline base64 data, or nothing. */
async function material(file: string | undefined, data: string | undefined, base: string): Promise<Buffer | undefined> {
  if (data) return Buffer.from(data, 'base64');
  if (file) return readFile(path.resolve(base, file));
  return undefined;
}

/** Running in a pod: the ServiceAccount's token (re-read, it rotates) and CA, the Service's address from env. */
export function inClusterCredentials(dir = SA_DIR, env: NodeJS.ProcessEnv = process.env): Credentials {
  const host = env.KUBERNETES_SERVICE_HOST ?? '';
  const port = env.KUBERNETES_SERVICE_PORT ?? '443';
  if (!host) throw new Error('not running in a pod: KUBERNETES_SERVICE_HOST is not set');
  // Same rule as client-go and client-node: the usual plain-HTTP ports mean http.
  const scheme = ['80', '8080', '8001'].includes(port) ? 'http' : 'https';
  const server = `${scheme}://${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
  const token = fileToken(path.join(dir, 'token'));
  const caFile = path.join(dir, 'ca.crt');
  return {
    server,
    source: 'in-cluster',
    headers: async () => bearer(await token()),
    tls: async () => (scheme === 'https' ? { ca: await readFile(caFile) } : undefined),
  };
}

interface NamedEntry<T> {
  name?: unknown;
  cluster?: T;
  user?: T;
  context?: T;
}
type Fields = Record<string, unknown>;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** User fields the lean loader understands; any other field (exec, auth-provider, as...) goes to client-node. */
const LEAN_USER_FIELDS = new Set(['token', 'tokenFile', 'client-certificate', 'client-certificate-data', 'client-key', 'client-key-data', 'username', 'password']);
const LEAN_CLUSTER_FIELDS = new Set(['server', 'certificate-authority', 'certificate-authority-data', 'insecure-skip-tls-verify', 'tls-server-name', 'extensions']);

/**
 * A kubeconfig's current context, read by Portico when it only uses fields Portico understands; undefined
 * otherwise (the caller then takes client-node). Throws on a kubeconfig that names no usable cluster.
 */
export function leanKubeconfig(text: string, file: string, override?: ApiserverOverride): Credentials | undefined {
  const doc = (loadYaml(text) ?? {}) as Fields;
  const pick = <K extends 'cluster' | 'user' | 'context'>(list: unknown, name: string | undefined, k: K): Fields | undefined => {
    if (!Array.isArray(list) || name === undefined) return undefined;
    const e = (list as NamedEntry<Fields>[]).find((x) => x && x.name === name);
    return e?.[k] ?? undefined;
  };
  const ctxName = str(doc['current-context']);
  const ctx = pick(doc.contexts, ctxName, 'context');
  if (!ctx) throw new Error(`kubeconfig ${file}: no current context${ctxName ? ` named ${ctxName}` : ''}`);
  const cluster = pick(doc.clusters, str(ctx.cluster), 'cluster');
  if (!cluster || !str(cluster.server)) throw new Error(`kubeconfig ${file}: context ${ctxName} names no cluster with a server`);
  const user = pick(doc.users, str(ctx.user), 'user') ?? {};
  if (Object.keys(cluster).some((k) => !LEAN_CLUSTER_FIELDS.has(k))) return undefined;
  if (Object.keys(user).some((k) => !LEAN_USER_FIELDS.has(k))) return undefined;
  const base = path.dirname(path.resolve(file));
  const server = (override?.server ?? (cluster.server as string)).replace(/\/+$/, '');
  const caFile = override?.caFile ?? str(cluster['certificate-authority']);
  const caData = override?.caFile ? undefined : str(cluster['certificate-authority-data']);
  const skipVerify = cluster['insecure-skip-tls-verify'] === true;
  const servername = str(cluster['tls-server-name']);
  if (server.startsWith('http:') && !skipVerify) throw new Error(`kubeconfig ${file}: plain http to ${server} needs insecure-skip-tls-verify`);
  const staticToken = str(user.token);
  const tokenFile = str(user.tokenFile);
  const token = staticToken ? async () => staticToken : tokenFile ? fileToken(path.resolve(base, tokenFile)) : undefined;
  const username = str(user.username);
  const basic = username ? `Basic ${Buffer.from(`${username}:${str(user.password) ?? ''}`).toString('base64')}` : undefined;
  return {
    server,
    source: `kubeconfig ${file}${ctxName ? ` (context ${ctxName})` : ''}`,
    headers: async () => (token ? bearer(await token()) : basic ? { Authorization: basic } : {}),
    tls: async () => {
      if (server.startsWith('http:')) return undefined;
      const o: TlsOptions = {};
      const ca = await material(caFile, caData, base);
      if (ca) o.ca = ca;
      const cert = await material(str(user['client-certificate']), str(user['client-certificate-data']), base);
      const key = await material(str(user['client-key']), str(user['client-key-data']), base);
      if (cert) o.cert = cert;
      if (key) o.key = key;
      if (skipVerify) o.rejectUnauthorized = false;
      if (servername) o.servername = servername;
      return o;
    },
  };
}

/**
 * The credentials Portico runs with: --kubeconfig (or $KUBECONFIG, ~/.kube/config), else the pod's
 * ServiceAccount; `override` is --apiserver-host (with --certificate-authority). Without any kubeconfig, an
 * override alone means that URL without credentials. Kubeconfigs with fields Portico does not read itself
 * (exec or auth-provider plugins, proxies, impersonation, several files in $KUBECONFIG) go through client-node.
 */
export async function loadCredentials(file?: string, override?: ApiserverOverride): Promise<Credentials> {
  if (override && !file) {
    const o = override;
    return {
      server: o.server.replace(/\/+$/, ''),
      source: `--apiserver-host ${o.server}`,
      headers: async () => ({}),
      tls: async () => (o.server.startsWith('http:') ? undefined : o.caFile ? { ca: await readFile(o.caFile) } : {}),
    };
  }
  if (!file && process.env.KUBERNETES_SERVICE_HOST) return inClusterCredentials();
  let files: string[];
  if (file) files = [file];
  else {
    files = (process.env.KUBECONFIG ?? '').split(':').filter(Boolean);
    if (!files.length && process.env.HOME) files = [`${process.env.HOME}/.kube/config`];
    files = files.filter((f) => existsSync(f));
    if (!files.length) throw new Error('no kubeconfig found ($KUBECONFIG, ~/.kube/config) and not running in a pod');
  }
  if (files.length === 1) {
    const only = files[0] as string;
    const lean = leanKubeconfig(readFileSync(only, 'utf8'), only, override);
    if (lean) return lean;
  }
  const { kubeConfigCredentials, loadKubeConfig } = await import('./kubeconfig.ts');
  return kubeConfigCredentials(loadKubeConfig(file, override));
}
