// nginx as a supervised child process: started with `daemon off`, restarted with backoff when the master dies
// (the owner is told, so it re-applies configuration and data), reloaded with SIGHUP and confirmed by asking the
// Lua side which configuration checksum it runs, stopped gracefully (SIGQUIT, then SIGKILL after the shutdown
// timeout). `test()` validates a candidate file with `nginx -t` before anything is swapped.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Backoff, sleep } from '../../../operator/backoff.ts';
import type { Logger } from '../../../operator/log.ts';
import type { DynamicClient } from './dynamic.ts';
import type { RuntimePaths } from './render.ts';

const execFileP = promisify(execFile);

export interface NginxOptions {
  binary: string;
  runtime: RuntimePaths;
  /** Graceful stop: how long workers may finish in-flight requests. */
  shutdownTimeoutMs: number;
}

export class NginxProcess {
  private readonly o: NginxOptions;
  private readonly log: Logger;
  private readonly dynamic: DynamicClient;
  private child: ChildProcess | undefined;
  private stopping = false;
  private readonly restartListeners: (() => void)[] = [];
  private readonly backoff = new Backoff({ initialMs: 200, maxMs: 10_000 });
  readonly confPath: string;
  restarts = 0;

  get runtime(): RuntimePaths {
    return this.o.runtime;
  }

  constructor(o: NginxOptions, dynamic: DynamicClient, log: Logger) {
    this.o = o;
    this.dynamic = dynamic;
    this.log = log.child({ component: 'nginx' });
    this.confPath = path.join(o.runtime.dir, 'nginx.conf');
  }

  /** Called after nginx had to be restarted: its shared memory (backends, certificates) is empty. */
  onRestart(cb: () => void): void {
    this.restartListeners.push(cb);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  isRunning(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Creates the runtime directory and a throw-away placeholder certificate (no user data), mode 0600. */
  prepare(): void {
    const r = this.o.runtime;
    this.killStale();
    // 0711: when nginx starts as root its workers run as an unprivileged user and must traverse into the temp
    // directories (nginx creates and chowns those itself); nothing in here is listable or readable by others.
    mkdirSync(r.tempDir, { recursive: true, mode: 0o711 });
    chmodSync(r.dir, 0o711);
    chmodSync(r.tempDir, 0o711);
    if (!existsSync(r.placeholderCert)) {
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
      const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
      writeFileSync(r.placeholderKey, keyPem, { mode: 0o600 });
      // openssl makes the self-signed placeholder from that key; nothing user-controlled is passed.
      const res = spawnSyncOpenssl(['req', '-x509', '-new', '-key', r.placeholderKey, '-subj', '/CN=portico-placeholder', '-days', '3650', '-out', r.placeholderCert]);
      if (!res) throw new Error('openssl failed to create the placeholder certificate');
      chmodSync(r.placeholderCert, 0o600);
    }
  }

  /**
   * An nginx left running from a previous Portico process on this runtime directory (crash, SIGKILL) would hold
   * the ports and answer the status API with stale data: stop its whole process group.
   */
  private killStale(): void {
    let pid: number;
    try {
      pid = Number.parseInt(readFileSync(this.o.runtime.pidFile, 'utf8').trim(), 10);
    } catch {
      return;
    }
    if (!Number.isInteger(pid) || pid <= 1) return;
    let cmd = '';
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      return;
    }
    if (!cmd.includes('nginx') || !cmd.includes(this.o.runtime.dir)) return;
    this.log.warn('stopping a stale nginx left by a previous run', { pid });
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  }

  /** `nginx -t` on a candidate file. Never throws: returns the verdict and nginx's output. */
  async test(confPath: string): Promise<{ ok: boolean; output: string }> {
    try {
      const { stderr, stdout } = await execFileP(this.o.binary, ['-t', '-q', '-p', this.o.runtime.dir, '-c', confPath, '-e', 'stderr'], {
        timeout: 120_000,
        maxBuffer: 4 * 1024 * 1024,
      });
      return { ok: true, output: `${stdout}${stderr}`.trim() };
    } catch (e) {
      const err = e as { stderr?: string; stdout?: string; message: string };
      return { ok: false, output: `${err.stdout ?? ''}${err.stderr ?? ''}`.trim() || err.message };
    }
  }

  /** `nginx -t` on content (written to a temporary file that is removed afterwards). */
  async testContent(content: string): Promise<{ ok: boolean; output: string }> {
    const tmp = path.join(this.o.runtime.dir, `nginx.conf.${randomBytes(4).toString('hex')}.probe`);
    writeFileSync(tmp, content, { mode: 0o600 });
    try {
      return await this.test(tmp);
    } finally {
      rmSync(tmp, { force: true });
    }
  }

  /** Writes `content` next to the live file, validates it, and atomically replaces the live file. */
  async writeValidated(content: string): Promise<{ ok: boolean; output: string }> {
    const tmp = path.join(this.o.runtime.dir, `nginx.conf.${randomBytes(4).toString('hex')}.tmp`);
    writeFileSync(tmp, content, { mode: 0o600 });
    const t = await this.test(tmp);
    if (!t.ok) {
      renameSync(tmp, path.join(this.o.runtime.dir, 'nginx.conf.rejected'));
      return t;
    }
    renameSync(tmp, this.confPath);
    return t;
  }

  start(): void {
    if (this.isRunning()) return;
    this.stopping = false;
    // Own process group: if the master dies, its orphaned workers (still bound to the ports with reuseport,
    // running the old configuration) are killed with the group.
    const child = spawn(this.o.binary, ['-p', this.o.runtime.dir, '-c', this.confPath, '-e', 'stderr'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    this.child = child;
    let buf = '';
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      buf += d;
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (line.trim()) this.log.info(line.replace(/^\S+ \S+ /, ''), { source: 'nginx' });
      }
    });
    child.on('exit', (code, signal) => {
      if (this.child !== child) return;
      this.child = undefined;
      if (child.pid) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* group already gone */
        }
      }
      if (this.stopping) return;
      const delay = this.backoff.next();
      this.log.error('nginx master exited unexpectedly, restarting', { code, signal, retryInMs: delay });
      setTimeout(() => {
        if (this.stopping) return;
        this.restarts++;
        this.start();
        for (const cb of this.restartListeners) cb();
      }, delay).unref();
    });
    this.log.info('nginx started', { pid: child.pid });
  }

  /** Waits until the status API answers with the given checksum (the new generation is live). */
  async waitLive(checksum: string, timeoutMs = 15_000): Promise<boolean> {
    const end = performance.now() + timeoutMs;
    while (performance.now() < end) {
      try {
        const c = await this.dynamic.getConfig(1_000);
        if (c.checksum === checksum) {
          this.backoff.reset();
          return true;
        }
      } catch {
        /* not up yet */
      }
      await sleep(10);
    }
    return false;
  }

  private async waitAnswering(timeoutMs: number): Promise<boolean> {
    const end = performance.now() + timeoutMs;
    while (performance.now() < end) {
      try {
        await this.dynamic.getConfig(1_000);
        return true;
      } catch {
        await sleep(10);
      }
    }
    return false;
  }

  /** SIGHUP the master and wait until the new configuration answers. */
  async reload(checksum: string): Promise<boolean> {
    const pid = this.child?.pid;
    if (!pid || !this.isRunning()) return false;
    // A master that has not finished starting has no SIGHUP handler yet (the signal would kill it): wait until
    // its workers answer first.
    const up = await this.waitAnswering(10_000);
    if (!up || !this.isRunning() || this.child?.pid !== pid) return false;
    process.kill(pid, 'SIGHUP');
    return this.waitLive(checksum);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (!child || !this.isRunning()) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGQUIT');
    const t = setTimeout(() => child.kill('SIGKILL'), this.o.shutdownTimeoutMs + 2_000);
    await exited;
    clearTimeout(t);
    this.child = undefined;
  }
}

import { spawnSync } from 'node:child_process';
function spawnSyncOpenssl(args: string[]): boolean {
  const r = spawnSync('openssl', args, { stdio: 'ignore' });
  return r.status === 0;
}
