// The real ingress-nginx controller for the migration tests: its Go controller (built from its Go module by
// e2e/controlplane/build.sh, the same code as its images' /nginx-ingress-controller) runs against the test apiserver
// as a ServiceAccount with the permissions its Helm chart grants, on a Pod object of its own (it reads its pod at
// start, as in a cluster).
//
// What is NOT real is its data plane: ingress-nginx's nginx is an OpenResty build with modules Debian does not ship,
// so NGINX_BINARY is a stand-in that accepts every configuration test and reload and otherwise idles. The
// controller's own logic — which Ingresses and classes it claims, leader election, the status it publishes and
// clears on shutdown — is ingress-nginx's code, unchanged. ingress-nginx writes /etc/nginx and /etc/ingress-controller:
// it runs in a mount namespace of its own where /etc is an overlay whose writes land in a temporary directory, so
// this machine's /etc is never touched.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { admin, kubectl, ROOT, serviceAccountKubeconfigFile } from './cluster.ts';
import { NODE_NAME } from './pods.ts';

function binary(): string {
  const out = execFileSync('bash', [path.join(ROOT, 'e2e/controlplane/build.sh'), 'paths'], { encoding: 'utf8' });
  const m = /^INGRESS_NGINX_BIN=(.+)$/m.exec(out);
  if (!m?.[1]) throw new Error('build.sh paths names no INGRESS_NGINX_BIN');
  return m[1];
}

/** The ServiceAccount "ingress-nginx" of `ns` with ingress-nginx's permissions (cluster-wide reads, its status, its lease). */
async function grant(ns: string): Promise<void> {
  kubectl(['apply', '-f', '-'], `
apiVersion: v1
kind: ServiceAccount
metadata: { name: ingress-nginx, namespace: ${ns} }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: portico-e2e-ingress-nginx-${ns} }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: portico-e2e-ingress-nginx }
subjects: [{ kind: ServiceAccount, name: ingress-nginx, namespace: ${ns} }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: portico-e2e-ingress-nginx }
rules:
  - { apiGroups: [""], resources: [configmaps, endpoints, nodes, pods, secrets, namespaces, services], verbs: [get, list, watch] }
  - { apiGroups: [""], resources: [events], verbs: [create, patch] }
  - { apiGroups: [networking.k8s.io], resources: [ingresses, ingressclasses], verbs: [get, list, watch] }
  - { apiGroups: [networking.k8s.io], resources: [ingresses/status], verbs: [update] }
  - { apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [get, list, watch] }
  - { apiGroups: [coordination.k8s.io], resources: [leases], verbs: [get, create, update] }
`);
}

export interface IngressNginx {
  /** Sends SIGTERM and waits for the process to exit (ingress-nginx clears its Ingresses' status on the way out). */
  stop(): Promise<void>;
  /** What the controller has logged so far. */
  log(): string;
}

/**
 * Starts ingress-nginx's controller for `ingressClass` (controller value k8s.io/ingress-nginx), watching `ns`,
 * publishing `statusAddress` in its Ingresses' status. Ports: base..base+6 (its listeners are checked free at start).
 */
export async function startIngressNginx(o: { ns: string; ingressClass: string; statusAddress: string; base: number; electionId: string }): Promise<IngressNginx> {
  await grant(o.ns);
  const pod = 'ingress-nginx-controller-0';
  await admin().request('POST', `/api/v1/namespaces/${o.ns}/pods`, {
    body: {
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name: pod, labels: { 'app.kubernetes.io/name': 'ingress-nginx', 'app.kubernetes.io/component': 'controller' } },
      spec: { nodeName: NODE_NAME, serviceAccountName: 'ingress-nginx', automountServiceAccountToken: false, containers: [{ name: 'controller', image: 'registry.k8s.io/ingress-nginx/controller:e2e' }] },
    },
  });
  const kubeconfig = await serviceAccountKubeconfigFile(o.ns, 'ingress-nginx');
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-ingress-nginx-'));
  for (const d of ['upper/nginx/template', 'work']) mkdirSync(path.join(dir, d), { recursive: true });
  const bin = binary();
  copyFileSync(`${bin}.tmpl`, path.join(dir, 'upper/nginx/template/nginx.tmpl'));
  // The data-plane stand-in: `-t`, `-v` and `-s reload` succeed at once; a start idles until `-s quit|stop`.
  const fake = path.join(dir, 'nginx');
  const idle = path.join(dir, 'idle.pid');
  writeFileSync(fake, [
    '#!/bin/sh',
    'case " $* " in',
    '  *" -s reload "*|*" -t "*) exit 0;;',
    '  *" -v "*|*" -V "*) echo "nginx version: nginx/1.25.5 (stand-in)" >&2; exit 0;;',
    `  *" -s "*) kill "$(cat ${idle})" 2>/dev/null; exit 0;;`,
    'esac',
    `echo $$ > ${idle}`,
    'exec sleep 2147483647',
    '',
  ].join('\n'));
  chmodSync(fake, 0o755);
  const flags = [
    `--kubeconfig=${kubeconfig}`,
    `--ingress-class=${o.ingressClass}`,
    '--controller-class=k8s.io/ingress-nginx',
    `--watch-namespace=${o.ns}`,
    `--publish-status-address=${o.statusAddress}`,
    `--election-id=${o.electionId}`,
    '--status-update-interval=5',
    '--update-status=true',
    '--update-status-on-shutdown=true',
    `--http-port=${o.base}`, `--https-port=${o.base + 1}`, `--status-port=${o.base + 2}`, `--stream-port=${o.base + 3}`,
    `--default-server-port=${o.base + 4}`, `--healthz-port=${o.base + 5}`, '--healthz-host=127.0.0.1', `--profiler-port=${o.base + 6}`,
    '--profiling=false', '--enable-metrics=false', '--post-shutdown-grace-period=1', '--v=2',
  ];
  const script = [
    'set -e',
    `mount -t overlay overlay -o lowerdir=/etc,upperdir=${dir}/upper,workdir=${dir}/work /etc`,
    `exec env POD_NAME=${pod} POD_NAMESPACE=${o.ns} NGINX_BINARY=${fake} ${bin} ${flags.map((f) => `'${f}'`).join(' ')}`,
  ].join('\n');
  // Its own PID namespace too, as in its container: on shutdown it waits until no process named "nginx" is left,
  // and would otherwise see the nginx of every Portico running on this machine.
  const child: ChildProcess = spawn('unshare', ['--mount', '--pid', '--fork', '--mount-proc', '--propagation', 'private', '--', 'sh', '-c', script], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  return {
    log: () => out,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      // unshare waits for the controller (PID 1 of its namespace, in unshare's process group): the group gets the
      // SIGTERM. When the controller exits, the kernel ends whatever is left in its PID namespace (the stand-in).
      process.kill(-child.pid!, 'SIGTERM');
      const t = setTimeout(() => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } }, 30_000);
      await exited;
      clearTimeout(t);
    },
  };
}
