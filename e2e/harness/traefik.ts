// Traefik beside Portico, for the peer benchmark (make bench-peers): the real Traefik binary (built from its Go module
// by e2e/bench/peers/build-traefik.sh) as a process on this machine, against the test API server with its Kubernetes
// Ingress provider, as a ServiceAccount of its own with the permissions that provider needs. It serves the Ingresses
// of IngressClass "traefik" (controller traefik.io/ingress-controller) on one loopback entrypoint, and proxies to the
// pods' addresses from their EndpointSlices (its own load balancing, as Portico does), like Portico's nginx.
//
// Settings that matter for a comparison: GOMAXPROCS=1 (Portico's nginx runs one worker in the benchmarks), no access
// log, no throttling of provider events (Traefik waits 2 s by default before applying a change; Portico applies at
// once), and nothing that leaves the machine (Traefik checks for new versions by default).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { admin, adminKubeConfig, kubectl, ROOT } from './cluster.ts';
import { request, until } from './http.ts';

export const TRAEFIK_INGRESS_CLASS = 'traefik';
export const TRAEFIK_CONTROLLER = 'traefik.io/ingress-controller';

/** The binary's path; builds it first unless `build: false` (the build takes minutes; a cached one returns at once). */
export function traefikBinary(o: { build?: boolean } = {}): string {
  const script = path.join(ROOT, 'e2e/bench/peers/build-traefik.sh');
  if (o.build !== false) execFileSync('bash', [script], { stdio: ['ignore', 'ignore', 'inherit'] });
  const bin = execFileSync('bash', [script, 'path'], { encoding: 'utf8' }).trim();
  if (!existsSync(bin)) throw new Error(`${bin} is not built (bash e2e/bench/peers/build-traefik.sh)`);
  return bin;
}

/**
 * The ServiceAccount "traefik" of `ns`, bound to a ClusterRole with what Traefik's kubernetesingress provider reads
 * (its informers: Ingresses, Services, EndpointSlices, Secrets in every namespace; IngressClasses and Nodes cluster-wide)
 * and writes (the Ingresses' status), and the IngressClass it serves.
 */
function grant(ns: string): void {
  kubectl(['apply', '-f', '-'], `
apiVersion: v1
kind: ServiceAccount
metadata: { name: traefik, namespace: ${ns} }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: portico-bench-traefik }
rules:
  - { apiGroups: [""], resources: [services, secrets, nodes], verbs: [get, list, watch] }
  - { apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [get, list, watch] }
  - { apiGroups: [networking.k8s.io], resources: [ingresses, ingressclasses], verbs: [get, list, watch] }
  - { apiGroups: [networking.k8s.io], resources: [ingresses/status], verbs: [update] }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: portico-bench-traefik-${ns} }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: portico-bench-traefik }
subjects: [{ kind: ServiceAccount, name: traefik, namespace: ${ns} }]
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: { name: ${TRAEFIK_INGRESS_CLASS} }
spec: { controller: ${TRAEFIK_CONTROLLER} }
`);
}

/** A free TCP port on 127.0.0.1 (bound and released; the caller binds it next). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

function rssOf(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

export interface RunningTraefik {
  /** The entrypoint: http://127.0.0.1:port. */
  port: number;
  pid: number;
  /** Traefik's own log (level INFO unless `logLevel`). */
  logPath: string;
  /** The command line it runs with (the token is a file path, not the token). */
  args: string[];
  /** Resident memory of the Traefik process now, in MB (VmRSS). */
  rssMB(): number;
  /** SIGTERM, SIGKILL after 15 s; removes its ClusterRoleBinding, token and CA files (its log stays). */
  stop(): Promise<void>;
}

export interface StartTraefikOptions {
  /** The namespace of its ServiceAccount "traefik" (created with the test's namespace). */
  ns: string;
  /** Loopback port of its one entrypoint (default: a free one). */
  port?: number;
  /** Wait until this host (and path, default "/") answers 200 through Traefik; otherwise only until it listens. */
  waitFor?: { host: string; path?: string; timeoutMs?: number };
  logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /** Flags added after the defaults (a later flag of the same name wins). */
  extraArgs?: string[];
  /** Skip the build step (the binary must be there). */
  build?: boolean;
}

export async function startTraefik(o: StartTraefikOptions): Promise<RunningTraefik> {
  const bin = traefikBinary({ build: o.build });
  grant(o.ns);
  // Its credentials as a cluster-external client: the API server's address and CA from the admin kubeconfig, a
  // ServiceAccount token from the TokenRequest API (2 h), both in files only this user reads.
  const cluster = adminKubeConfig().getCurrentCluster();
  if (!cluster) throw new Error('admin kubeconfig has no cluster');
  const tr = await admin().request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${o.ns}/serviceaccounts/traefik/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 7200 } },
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-traefik-'));
  const tokenFile = path.join(dir, 'token');
  writeFileSync(tokenFile, tr.status.token, { mode: 0o600 });
  const caFile = path.join(dir, 'ca.crt');
  if (cluster.caData) writeFileSync(caFile, Buffer.from(cluster.caData, 'base64'), { mode: 0o600 });
  else if (cluster.caFile) writeFileSync(caFile, readFileSync(cluster.caFile), { mode: 0o600 });
  else throw new Error('admin kubeconfig names no CA for the API server');

  const port = o.port ?? (await freePort());
  const logPath = path.join(dir, 'traefik.log');
  const args = [
    `--entryPoints.web.address=127.0.0.1:${port}`,
    '--providers.kubernetesingress=true',
    `--providers.kubernetesingress.endpoint=${cluster.server}`,
    `--providers.kubernetesingress.token=${tokenFile}`,
    `--providers.kubernetesingress.certAuthFilePath=${caFile}`,
    `--providers.kubernetesingress.ingressClass=${TRAEFIK_INGRESS_CLASS}`,
    '--providers.kubernetesingress.ingressEndpoint.ip=127.0.0.1',
    '--providers.kubernetesingress.throttleDuration=0s',
    '--providers.providersThrottleDuration=0s',
    '--global.checkNewVersion=false',
    '--global.sendAnonymousUsage=false',
    `--log.level=${o.logLevel ?? 'INFO'}`,
    `--log.filePath=${logPath}`,
    ...(o.extraArgs ?? []),
  ];
  // Whatever it prints before its logger is set up (a bad flag) lands beside the log.
  const out = openSync(path.join(dir, 'stdout.log'), 'a');
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', GOMAXPROCS: '1' };
  const child: ChildProcess = spawn(bin, args, { stdio: ['ignore', out, out], env, detached: true });
  closeSync(out);
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  const kill = () => { try { child.kill('SIGKILL'); } catch { /* gone */ } };
  process.on('exit', kill); // never outlives the run
  const running = () => child.exitCode === null && child.signalCode === null;
  const tail = () => {
    const read = (f: string) => (existsSync(f) ? readFileSync(f, 'utf8') : '');
    return (read(path.join(dir, 'stdout.log')) + read(logPath)).split('\n').slice(-15).join('\n');
  };

  const stop = async () => {
    if (running()) {
      child.kill('SIGTERM');
      const t = setTimeout(kill, 15_000);
      await exited;
      clearTimeout(t);
    }
    process.off('exit', kill);
    for (const f of [tokenFile, caFile]) rmSync(f, { force: true }); // the log stays, for a look afterwards
    kubectl(['delete', 'clusterrolebinding', `portico-bench-traefik-${o.ns}`, '--ignore-not-found']);
  };
  // A Traefik that exits while it is waited for fails the start at once, with the end of its log.
  const died = exited.then(() => { throw new Error(`Traefik exited (${child.exitCode ?? child.signalCode})`); });
  died.catch(() => {});
  try {
    await Promise.race([died, until('Traefik listening', () => new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => { s.destroy(); resolve(true); });
      s.on('error', () => resolve(false));
    }), 30_000, 50)]);
    if (o.waitFor) {
      const w = o.waitFor;
      await Promise.race([died, until(`Traefik serving ${w.host}${w.path ?? '/'}`, async () => (await request(port, w.host, w.path ?? '/')).status === 200, w.timeoutMs ?? 30_000, 20)]);
    }
  } catch (e) {
    await stop();
    throw new Error(`${(e as Error).message}\n--- Traefik log (${logPath}) ---\n${tail()}`);
  }
  return { port, pid: child.pid!, logPath, args, rssMB: () => rssOf(child.pid!), stop };
}
