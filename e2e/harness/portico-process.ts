// Portico as its own process (as the image runs it: app/node-flags.ts's flags, its ServiceAccount's kubeconfig),
// for benchmarks that measure the controller's memory or compare it with other controllers' processes. The in-process
// harness (portico.ts) shares the test's heap and cannot say what the controller costs.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, closeSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { NODE_ENV, NODE_FLAGS } from '../../app/node-flags.ts';
import { serviceAccountKubeconfigFile } from './cluster.ts';
import { request, until } from './http.ts';
import { installPorticoRbac, porticoEntry, REPO_ROOT } from './portico.ts';

export interface PorticoProcess {
  pid: number;
  httpPort: number;
  httpsPort: number;
  healthPort: number;
  /** The controller's own log (JSON lines) and nginx's, as the process prints them. */
  logPath: string;
  /** VmRSS of the controller process (not nginx), MB. */
  rssMB(): number;
  /** Proportional set size of its nginx master and workers (shared zones counted once), MB. */
  nginxPssMB(): number;
  /** A counter or gauge from its /metrics (sum over label sets that match). */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  stop(): Promise<void>;
}

const statusKb = (pid: number, key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);

function childPids(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const t of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) {
      const c = Number(t);
      out.push(c, ...childPids(c));
    }
  } catch {
    // gone
  }
  return out;
}

function pssKb(pid: number): number {
  try {
    return Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Starts Portico as a process on ports base..base+3 with these extra flags; resolves once /readyz answers 200. */
export async function startPorticoProcess(base: number, extraFlags: string[] = []): Promise<PorticoProcess> {
  await installPorticoRbac();
  const kubeconfig = await serviceAccountKubeconfigFile('portico-system', 'portico');
  const runtime = path.join(REPO_ROOT, '.dev', `nginx-proc-${base}`);
  mkdirSync(runtime, { recursive: true });
  const logPath = path.join(runtime, 'portico.log');
  const out = openSync(logPath, 'w');
  const child: ChildProcess = spawn(path.join(REPO_ROOT, 'node_modules/.bin/node'), [
    ...NODE_FLAGS,
    porticoEntry().file, '--kubeconfig', kubeconfig, '--http-port', String(base), '--https-port', String(base + 1),
    '--status-port', String(base + 2), '--health-addr', `127.0.0.1:${base + 3}`, '--runtime-dir', runtime,
    '--access-log-path', path.join(runtime, 'access.log'), '--election-id', `proc-${base}-${Date.now().toString(36)}`,
    '--log-level', 'warn', ...extraFlags,
  ], { stdio: ['ignore', out, out], env: { ...process.env, ...NODE_ENV } });
  closeSync(out);
  const kill = () => { try { child.kill('SIGKILL'); } catch { /* gone */ } };
  process.on('exit', kill);
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const t = setTimeout(kill, 20_000);
      await exited;
      clearTimeout(t);
    }
    process.off('exit', kill);
  };
  try {
    await Promise.race([
      exited.then(() => { throw new Error(`Portico exited (${child.exitCode ?? child.signalCode}); log: ${logPath}`); }),
      until('Portico ready', async () => (await request(base + 3, 'x', '/readyz').catch(() => ({ status: 0 }))).status === 200, 60_000, 50),
    ]);
  } catch (e) {
    await stop();
    throw e;
  }
  const pid = child.pid as number;
  return {
    pid,
    httpPort: base,
    httpsPort: base + 1,
    healthPort: base + 3,
    logPath,
    rssMB: () => statusKb(pid, 'VmRSS') / 1024,
    nginxPssMB: () => childPids(pid).reduce((s, c) => s + pssKb(c), 0) / 1024,
    metric: async (name, labels = {}) => {
      const text = (await request(base + 3, 'x', '/metrics')).body;
      let sum = 0;
      for (const line of text.split('\n')) {
        if (!line.startsWith(name) || (line[name.length] !== ' ' && line[name.length] !== '{')) continue;
        if (Object.entries(labels).some(([k, v]) => !line.includes(`${k}="${v}"`))) continue;
        sum += Number(line.slice(line.lastIndexOf(' ') + 1));
      }
      return sum;
    },
    stop,
  };
}
