// Test-side access to the local control plane brought up by e2e/controlplane/up.sh.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, isAlreadyExists, isNotFound } from '../../operator/kube/client.ts';
import { leanKubeconfig, type ApiserverOverride, type Credentials } from '../../operator/kube/credentials.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const DEV = path.join(ROOT, '.dev');
export const ADMIN_KUBECONFIG = path.join(DEV, 'kubeconfig');
const CTL = path.join(ROOT, 'e2e/controlplane/ctl.sh');

/** Runs up.sh (idempotent: fast when the cluster is already healthy). */
export async function ensureCluster(): Promise<void> {
  execFileSync('bash', [path.join(ROOT, 'e2e/controlplane/up.sh')], { stdio: ['ignore', 'ignore', 'inherit'] });
}

export function adminKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(ADMIN_KUBECONFIG);
  return kc;
}

/**
 * Credentials from a kubeconfig file the harness wrote (client certificate or token), read as Portico reads such
 * files in production (credentials.ts, without client-node); `override` replaces the server.
 */
export function fileCredentials(file: string, override?: ApiserverOverride): Credentials {
  const c = leanKubeconfig(readFileSync(file, 'utf8'), file, override);
  if (!c) throw new Error(`${file}: a field Portico's own kubeconfig reader does not take`);
  return c;
}

export function adminCredentials(): Credentials {
  return fileCredentials(ADMIN_KUBECONFIG);
}

let adminClient: KubeClient | undefined;
export function admin(): KubeClient {
  adminClient ??= new KubeClient(adminCredentials(), { rateLimit: false }); // the test's own seeding is not Portico
  return adminClient;
}

export function kubectl(args: string[], input?: string): string {
  return execFileSync('kubectl', args, {
    env: { ...process.env, KUBECONFIG: ADMIN_KUBECONFIG },
    input,
    encoding: 'utf8',
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** A kubeconfig file that authenticates as a ServiceAccount (token from the TokenRequest API, 2 h). */
export async function serviceAccountKubeconfigFile(namespace: string, sa: string): Promise<string> {
  const tr = await admin().request<{ status: { token: string } }>(
    'POST',
    `/api/v1/namespaces/${namespace}/serviceaccounts/${sa}/token`,
    { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 7200 } } },
  );
  const kc = adminKubeConfig();
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('admin kubeconfig has no cluster');
  const out = new KubeConfig();
  out.loadFromOptions({
    clusters: [cluster],
    users: [{ name: `${namespace}-${sa}`, token: tr.status.token }],
    contexts: [{ name: 'sa', cluster: cluster.name, user: `${namespace}-${sa}` }],
    currentContext: 'sa',
  });
  const dir = path.join(DEV, 'sa-kubeconfigs');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, `${namespace}-${sa}.yaml`);
  writeFileSync(file, out.exportConfig(), { mode: 0o600 });
  return file;
}

/** Credentials of a ServiceAccount (a TokenRequest token), as Portico reads a kubeconfig. */
export async function serviceAccountKubeConfig(namespace: string, sa: string): Promise<Credentials> {
  return fileCredentials(await serviceAccountKubeconfigFile(namespace, sa));
}

export async function restartApiserver(): Promise<void> {
  execFileSync('bash', [CTL, 'restart-apiserver'], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** Compacts etcd to its current revision; returns that revision. */
export async function compactEtcd(): Promise<number> {
  return Number(execFileSync('bash', [CTL, 'compact'], { encoding: 'utf8' }).trim());
}

let seq = 0;
/** Creates a fresh namespace for one test file. */
export async function uniqueNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${process.pid}-${Date.now().toString(36)}-${seq++}`.slice(0, 63);
  try {
    await admin().request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
  }
  return name;
}

/**
 * An IngressClass of this run (its own controller value), so a test's Portico serves only the objects of that class
 * and a shared cluster's other objects cannot be blamed on it. Pass `flags` to startPortico; `remove()` in `after`.
 */
export async function ownIngressClass(prefix: string): Promise<{ name: string; controller: string; flags: string[]; remove: () => Promise<void> }> {
  const run = `${Date.now().toString(36)}${seq++}`;
  const name = `portico-${prefix}-${run}`;
  const controller = `portico.dev/${prefix}-${run}`;
  await admin().request('POST', '/apis/networking.k8s.io/v1/ingressclasses', {
    body: { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name }, spec: { controller } },
  });
  return {
    name,
    controller,
    flags: ['--controller-class', controller, '--ingress-class', name],
    remove: async () => {
      try {
        await admin().request('DELETE', `/apis/networking.k8s.io/v1/ingressclasses/${name}`);
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    },
  };
}
