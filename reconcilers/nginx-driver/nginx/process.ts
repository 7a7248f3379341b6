// nginx as a supervised child process: started with `daemon off` in its own process group, restarted with backoff
// when the master dies (the workers of that generation are killed first, so none keeps a reuseport listener; the
// owner is told, so it re-applies configuration and data), reloaded with SIGHUP and confirmed by asking the Lua
// side which configuration checksum it runs, stopped gracefully (SIGQUIT, then SIGKILL of the whole group after
// the shutdown timeout). `test()` validates a candidate file with `nginx -t` before anything is swapped. The Lua
// side is reached on a unix socket in a 0700 directory (RuntimePaths.apiSocket), never over TCP.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import path from 'node:path';
import { Backoff, sleep } from '../../../operator/backoff.ts';
import type { Logger } from '../../../operator/log.ts';
import type { DynamicClient, LiveConfig } from './dynamic.ts';
import { groupMembers, killGroup, signalGroup, waitGroupGoneSync } from './procgroup.ts';
import type { RuntimePaths } from './runtime.ts';

/** chmod, unless the path belongs to another user (then its mode is theirs to choose). */
function chmodIfOwned(p: string, mode: number): void {
  if (statSync(p).uid === process.getuid?.()) chmodSync(p, mode);
}


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
  /** Resolves once the process group of the last master that exited has no live member. */
  private groupGone: Promise<void> = Promise.resolve();
  private lastPgid: number | undefined;
  /** Forward nginx's info and debug lines (error-log-level info or debug in the live configuration). */
  private forwardInfo = false;
  readonly confPath: string;
  restarts = 0;

  get runtime(): RuntimePaths {
    return this.o.runtime;
  }

  constructor(o: NginxOptions, dynamic: DynamicClient, log: Logger) {
    this.o = o;
    this.dynamic = dynamic;
    // The API lives where this nginx's runtime says: the client always talks to the nginx it supervises.
    dynamic.attach(o.runtime.apiSocket);
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
    // The runtime directory may be a mount point owned by someone else (a pod's emptyDir is root's, mode 0777, and
    // Portico runs as uid 101): its mode is then the mount's business, and what must be private is below it.
    chmodIfOwned(r.dir, 0o711);
    chmodSync(r.tempDir, 0o711);
    // The configuration API socket lives here. nginx creates unix sockets with mode 0666, so this directory's
    // 0700 is what keeps every other user (nginx's own unprivileged workers included) from connecting.
    mkdirSync(r.apiDir, { recursive: true, mode: 0o700 });
    chmodSync(r.apiDir, 0o700);
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
   * the ports and answer the API with stale data. Its process group — the old master's pid, which also finds
   * workers whose master is already gone — is asked to stop gracefully (SIGQUIT: workers close their listeners
   * at once and finish in-flight requests) for a few seconds, then killed.
   */
  private killStale(): void {
    let pid: number;
    try {
      pid = Number.parseInt(readFileSync(this.o.runtime.pidFile, 'utf8').trim(), 10);
    } catch {
      return;
    }
    if (!Number.isInteger(pid) || pid <= 1) return;
    // Only a group made entirely of nginx processes (its master naming this runtime directory) is ours: the pid
    // file may be stale and the number reused by something else.
    const members = groupMembers(pid);
    if (members.length === 0 || !members.every((m) => isNginx(m, m === pid ? this.o.runtime.dir : undefined))) return;
    this.log.warn('stopping a stale nginx left by a previous run', { pgid: pid, processes: members.length });
    signalGroup(pid, 'SIGQUIT');
    if (waitGroupGoneSync(pid, Math.min(this.o.shutdownTimeoutMs, 5_000))) return;
    signalGroup(pid, 'SIGKILL');
    if (!waitGroupGoneSync(pid, 5_000)) this.log.error('a stale nginx process group did not exit', { pgid: pid });
  }

  /** `nginx -t` on a candidate file. Never throws: returns the verdict and nginx's output. */
  async test(confPath: string): Promise<{ ok: boolean; output: string }> {
    // stdout is /dev/null, not a pipe: Node's stdio "pipes" are socketpairs, and nginx cannot open /dev/stdout
    // (the default access log) on a socket — every `nginx -t` would fail with ENXIO. Its report goes to stderr.
    return new Promise((resolve) => {
      const child = spawn(this.o.binary, ['-t', '-q', '-p', this.o.runtime.dir, '-c', confPath, '-e', 'stderr'], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr?.on('data', (c: Buffer) => {
        if (stderr.length < 4 * 1024 * 1024) stderr += c.toString();
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
      child.on('error', (e) => {
        clearTimeout(timer);
        resolve({ ok: false, output: e.message });
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        const output = stderr.trim();
        resolve({ ok: code === 0, output: output || (code === 0 ? '' : `nginx -t exited with ${code ?? signal}`) });
      });
    });
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
    // error-log-level info or debug: nginx's lines of those levels are wanted in the controller's log too.
    this.forwardInfo = /^error_log stderr (info|debug);$/m.test(content);
    return t;
  }

  start(): void {
    if (this.isRunning()) return;
    this.stopping = false;
    // Never start next to a previous generation: if its group is still being killed, finish that first (SIGKILL
    // takes milliseconds).
    if (this.lastPgid !== undefined && groupMembers(this.lastPgid).length > 0) {
      signalGroup(this.lastPgid, 'SIGKILL');
      if (!waitGroupGoneSync(this.lastPgid, 5_000)) this.log.error('a previous nginx process group did not exit', { pgid: this.lastPgid });
    }
    // A master that was killed leaves its unix sockets behind, and nginx refuses to bind over an existing file.
    // No nginx of ours is running at this point (start() runs only when the previous group is gone).
    for (const f of [this.o.runtime.apiSocket, this.o.runtime.unavailableSocket, this.o.runtime.httpsSocket, this.o.runtime.passthroughSocket]) rmSync(f, { force: true });
    // The Gateway TLS listeners' terminating hops (gwtls-<n>.sock), however many the last generation had.
    const hopPrefix = path.basename(this.o.runtime.gatewayTlsSocketPrefix);
    const hopDir = path.dirname(this.o.runtime.gatewayTlsSocketPrefix);
    for (const f of existsSync(hopDir) ? readdirSync(hopDir) : []) if (f.startsWith(`${hopPrefix}-`) && f.endsWith('.sock')) rmSync(path.join(hopDir, f), { force: true });
    // Own process group (detached = setsid): the master leads it and its workers inherit it, so the group is
    // "this generation of nginx". stdout is the controller's own when the access log goes there (nginx writes to
    // it directly, one write per line); nginx's error log (stderr) is forwarded into the controller's log.
    const child = spawn(this.o.binary, ['-p', this.o.runtime.dir, '-c', this.confPath, '-e', 'stderr'], {
      stdio: ['ignore', this.o.runtime.accessLog === '/dev/stdout' ? 'inherit' : 'ignore', 'pipe'],
      detached: true,
    });
    this.child = child;
    this.lastPgid = child.pid;
    let buf = '';
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      buf += d;
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        const fwd = forwardedNginxLine(line, this.forwardInfo);
        if (fwd) this.log.log(fwd.level, fwd.message, { source: fwd.source });
      }
    });
    child.on('exit', (code, signal) => {
      if (this.child !== child) return;
      this.child = undefined;
      const pgid = child.pid;
      // Whatever is left of this generation (workers of a master that died) still holds the listeners and serves
      // the old configuration: kill it, and start the next master only once it is gone.
      const gone = pgid ? killGroup(pgid) : Promise.resolve(true);
      this.groupGone = gone.then(() => undefined);
      if (this.stopping) return;
      const delay = this.backoff.next();
      this.log.error('nginx master exited unexpectedly, restarting', { code, signal, retryInMs: delay });
      const t0 = performance.now();
      void gone.then((ok) => {
        if (!ok) this.log.error('workers of the dead nginx master did not exit', { pgid });
        setTimeout(() => {
          if (this.stopping || this.isRunning()) return;
          this.restarts++;
          this.start();
          for (const cb of this.restartListeners) cb();
        }, Math.max(0, delay - (performance.now() - t0))).unref();
      });
    });
    this.log.info('nginx started', { pid: child.pid });
  }

  /** Waits until the status API answers with the given checksum (the new generation is live). */
  async waitLive(checksum: string, timeoutMs = 15_000): Promise<boolean> {
    return (await this.liveConfig(checksum, timeoutMs)) !== undefined;
  }

  /** The API's answer from a worker of the generation with this checksum (undefined on timeout). */
  private async liveConfig(checksum: string, timeoutMs: number): Promise<LiveConfig | undefined> {
    const end = performance.now() + timeoutMs;
    while (performance.now() < end) {
      try {
        const c = await this.dynamic.getConfig(1_000);
        if (c.checksum === checksum) {
          this.backoff.reset();
          return c;
        }
      } catch {
        /* not up yet */
      }
      await sleep(10);
    }
    return undefined;
  }

  private async waitAnswering(timeoutMs: number): Promise<LiveConfig | undefined> {
    const end = performance.now() + timeoutMs;
    while (performance.now() < end) {
      try {
        return await this.dynamic.getConfig(1_000);
      } catch {
        await sleep(10);
      }
    }
    return undefined;
  }

  /**
   * SIGHUP the master and wait until the new configuration answers. A reload that changed a shared dict's size
   * gives that zone a fresh, empty memory (its epoch changes): the restart listeners are told, as after a
   * restart, so the owner sends all data again.
   */
  /** `timeoutMs`: how long the new generation may take to answer (parsing grows with the configuration). */
  async reload(checksum: string, timeoutMs = 15_000): Promise<boolean> {
    const pid = this.child?.pid;
    if (!pid || !this.isRunning()) return false;
    // A master that has not finished starting has no SIGHUP handler yet (the signal would kill it): wait until
    // its workers answer first.
    const before = await this.waitAnswering(Math.max(10_000, timeoutMs));
    if (!before || !this.isRunning() || this.child?.pid !== pid) return false;
    process.kill(pid, 'SIGHUP');
    // Compared with an answer of the new generation: only its workers see the zones the reload created.
    const after = await this.liveConfig(checksum, timeoutMs);
    if (!after) return false;
    if (after.epochs.data !== before.epochs.data || after.epochs.certs !== before.epochs.certs) {
      this.log.warn('nginx shared memory was recreated by the reload (lua-shared-dicts changed): re-sending all data');
      for (const cb of this.restartListeners) cb();
    }
    return true;
  }

  /** Graceful stop: SIGQUIT (workers finish in-flight requests), then SIGKILL for the whole group. */
  async stop(): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (child?.pid && this.isRunning()) {
      const pgid = child.pid;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGQUIT');
      const t = setTimeout(() => signalGroup(pgid, 'SIGKILL'), this.o.shutdownTimeoutMs + 2_000);
      await exited;
      clearTimeout(t);
      this.child = undefined;
    }
    // The exit handler kills what is left of the group; stop() returns once nothing of it is running.
    await this.groupGone;
    await this.dynamic.close();
  }
}

/**
 * The controller log level for one line of nginx's error log: a failed upstream connection ([error]) is routine
 * for a proxy and stays a warning; [crit], [alert] and [emerg] are errors.
 */
/**
 * How a line of nginx's stderr is forwarded into the controller's log, or null when it is not. nginx logs at notice
 * level, except in the locations of ModSecurity profiles (info, see http.hbs): there ModSecurity writes each rule
 * match at info level ("ModSecurity: Warning. ...", a detection, also in DetectionOnly mode) and each block at error
 * level ("ModSecurity: Access denied ..."). Those are forwarded as warnings (source "modsecurity"); nginx's other
 * info lines (a keep-alive connection closed...) are not, unless error-log-level asks for info or debug
 * (`forwardInfo`).
 */
export function forwardedNginxLine(line: string, forwardInfo = false): { level: 'error' | 'warn' | 'info'; message: string; source: 'nginx' | 'modsecurity' } | null {
  if (!line.trim()) return null;
  const message = line.replace(/^\S+ \S+ /, '');
  // The connector's own prefix, right after nginx's (a client's text later in a line cannot make one).
  if (/^\S+ \S+ \[(info|warn|error)\] \d+#\d+: \*\d+ (\[client [^\]]{1,64}\] )?ModSecurity: /.test(line)) return { level: 'warn', message, source: 'modsecurity' };
  if (!forwardInfo && /\[(info|debug)\]/.test(line.slice(0, 40))) return null;
  return { level: nginxLevel(line), message, source: 'nginx' };
}

export function nginxLevel(line: string): 'error' | 'warn' | 'info' {
  const m = /\[(emerg|alert|crit|error|warn)\]/.exec(line.slice(0, 40));
  if (!m) return 'info';
  return m[1] === 'error' || m[1] === 'warn' ? 'warn' : 'error';
}

/** Whether `pid` is an nginx process (a master must also name our runtime directory on its command line). */
function isNginx(pid: number, runtimeDir: string | undefined): boolean {
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmd.startsWith('nginx') && (runtimeDir === undefined || cmd.includes(runtimeDir));
  } catch {
    return false;
  }
}

function spawnSyncOpenssl(args: string[]): boolean {
  const r = spawnSync('openssl', args, { stdio: 'ignore' });
  return r.status === 0;
}
