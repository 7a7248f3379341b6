// A network of its own for one real-nginx test file. Portico's Lua never proxies to loopback (peers.lua), and tests
// may only send traffic to loopback or into network namespaces they created, so the backends of these tests live
// in a namespace made here: `portico-ut-<pid>-<subnet>`, joined to the host by a veth pair
//   host end       ptu<subnet>h<pid>  198.19.<subnet>.1/30
//   namespace end  ptu<subnet>n<pid>  198.19.<subnet>.2/30   (the backends listen here; `ip` below)
// with `lo` up inside. Each backend is a child process in the namespace (`ip netns exec <ns> node
// testnet-backend.test-helpers.ts`), see that file for what it answers.
//
// Subnets: each test file passes its own constant <subnet> (health 254, plugins 253; take the next lower one for a
// new file), so files running concurrently never share addresses or interface names. 198.18.0.0/15 is the
// benchmark range the project uses for cluster addresses; the local cluster's pod host (e2e/podhost/daemon.ts)
// allocates pod IPs from it only after TEST-NET-2/3, in /24 order from 198.18.0, and only host parts .10-.254,
// so the /30s here (host parts .0-.3, at the far end of 198.19) never meet a pod IP; its more specific route wins
// over the cluster's 198.18.0.0/15 route to the pod namespace.
//
// Teardown (close(), and on process exit, SIGINT, SIGTERM and SIGHUP) kills the backends and deletes the veth pair
// and the namespace. Leftovers of a test process that was killed outright (same subnet, dead pid) are removed by
// the next up(); the backends themselves exit when their test process is gone.
// up() throws (never skips) when the namespace cannot be made: these tests need root and iproute2.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CONTROL, type BackendArgs, type BackendKind, type Seen } from './testnet-backend.test-helpers.ts';

export type { BackendKind, Seen };

const BACKEND_SCRIPT = path.join(import.meta.dirname, 'testnet-backend.test-helpers.ts');
const NODE = path.resolve(import.meta.dirname, '../../../node_modules/.bin/node');
const READY_TIMEOUT_MS = 10_000;

function ip(...args: string[]): string {
  try {
    return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`ip ${args.join(' ')}: ${(err.stderr ?? '').trim() || err.message}`);
  }
}

/** `ip ...` for teardown: a missing namespace or device is already what we want. */
function ipQuiet(...args: string[]): void {
  try {
    ip(...args);
  } catch {
    // gone already (or never made)
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function killQuiet(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function netnsNames(): string[] {
  return ip('netns', 'list')
    .split('\n')
    .map((l) => l.split(' ')[0] ?? '')
    .filter(Boolean);
}

function linkNames(): string[] {
  return ip('-o', 'link', 'show')
    .split('\n')
    .map((l) => /^\d+:\s+([^:@\s]+)/.exec(l)?.[1] ?? '')
    .filter(Boolean);
}

/** Kills every process inside a namespace and deletes it. */
function removeNetns(ns: string): void {
  try {
    for (const p of ip('netns', 'pids', ns).split('\n').filter(Boolean)) killQuiet(Number(p));
  } catch {
    // no such namespace
  }
  ipQuiet('netns', 'del', ns);
}

interface Backend {
  args: BackendArgs;
  child: ChildProcess;
  stderr: string;
  exited?: string;
}

export class TestNet {
  readonly subnet: number;
  /** The namespace: portico-ut-<pid>-<subnet>. */
  readonly netns: string;
  /** The namespace end of the veth: where the backends listen, what nginx proxies to. */
  readonly ip: string;
  /** The host end of the veth. */
  readonly hostIp: string;
  private readonly hostIf: string;
  private readonly nsIf: string;
  private readonly backends = new Map<string, Backend>();
  private made = false;
  private readonly onExit = (): void => this.teardown();
  private readonly onSignal = (sig: NodeJS.Signals): void => {
    this.teardown();
    process.kill(process.pid, sig); // the listener is gone now: the default action ends the process
  };

  constructor(subnet: number) {
    if (!Number.isInteger(subnet) || subnet < 0 || subnet > 255) throw new Error(`test network subnet ${subnet}: 0-255`);
    this.subnet = subnet;
    this.netns = `portico-ut-${process.pid}-${subnet}`;
    this.hostIf = `ptu${subnet}h${process.pid}`;
    this.nsIf = `ptu${subnet}n${process.pid}`;
    this.hostIp = `198.19.${subnet}.1`;
    this.ip = `198.19.${subnet}.2`;
  }

  /** Creates the namespace and the veth pair; throws with the reason when it cannot (nothing is left then). */
  up(): void {
    if (this.made) return;
    try {
      this.removeStale();
      const taken = ip('-o', '-4', 'addr', 'show', 'to', `198.19.${this.subnet}.0/30`).trim();
      if (taken) throw new Error(`198.19.${this.subnet}.0/30 is already on this host:\n${taken}`);
      this.made = true;
      process.on('exit', this.onExit);
      for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(sig, this.onSignal);
      ip('netns', 'add', this.netns);
      ip('link', 'add', this.hostIf, 'type', 'veth', 'peer', 'name', this.nsIf, 'netns', this.netns);
      ip('addr', 'add', `${this.hostIp}/30`, 'dev', this.hostIf);
      ip('link', 'set', this.hostIf, 'up');
      ip('-n', this.netns, 'addr', 'add', `${this.ip}/30`, 'dev', this.nsIf);
      ip('-n', this.netns, 'link', 'set', this.nsIf, 'up');
      ip('-n', this.netns, 'link', 'set', 'lo', 'up');
    } catch (e) {
      this.teardown();
      throw new Error(
        `cannot create the test network namespace ${this.netns} (veth ${this.hostIf} ${this.hostIp}/30 <-> ${this.ip}/30); ` +
          `the real-nginx tests need root and iproute2 and do not skip: ${(e as Error).message}`,
      );
    }
  }

  /** Starts a backend in the namespace on ip:port and waits (polling, with a deadline) until it answers. */
  async start(name: string, port: number, kind: BackendKind, o: { status?: number; cert?: string; key?: string; clientCa?: string; maxTlsVersion?: 'TLSv1.2' | 'TLSv1.3' } = {}): Promise<void> {
    if (!this.made) throw new Error('TestNet.start before up()');
    if (this.backends.has(name)) throw new Error(`backend ${name} already started`);
    const args: BackendArgs = {
      name,
      ip: this.ip,
      port,
      kind,
      parentPid: process.pid,
      ...(o.status !== undefined ? { status: o.status } : {}),
      ...(o.cert ? { cert: o.cert, key: o.key } : {}),
      ...(o.clientCa ? { clientCa: o.clientCa } : {}),
      ...(o.maxTlsVersion ? { maxTlsVersion: o.maxTlsVersion } : {}),
    };
    const child = spawn('ip', ['netns', 'exec', this.netns, NODE, BACKEND_SCRIPT, JSON.stringify(args)], { stdio: ['ignore', 'ignore', 'pipe'] });
    const b: Backend = { args, child, stderr: '' };
    this.backends.set(name, b);
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (s: string) => {
      b.stderr = (b.stderr + s).slice(-4_000);
    });
    child.on('exit', (code, signal) => {
      b.exited = signal ?? `code ${code}`;
    });
    child.on('error', (e) => {
      b.exited = String(e);
    });
    // Neither the child nor its pipe keeps the test process alive: teardown kills it.
    child.unref();
    (child.stderr as unknown as { unref?: () => void } | null)?.unref?.();

    const deadline = Date.now() + READY_TIMEOUT_MS;
    let last = '';
    for (;;) {
      if (b.exited !== undefined) throw new Error(`backend ${name} (${kind}) on ${this.ip}:${port} exited (${b.exited}) before it was ready: ${b.stderr.trim()}`);
      try {
        await this.control(b);
        return;
      } catch (e) {
        last = String(e);
      }
      if (Date.now() > deadline) throw new Error(`backend ${name} (${kind}) on ${this.ip}:${port} not ready after ${READY_TIMEOUT_MS} ms: ${last} ${b.stderr.trim()}`);
      await sleep(25);
    }
  }

  /** The requests a backend received so far (oldest first), not counting control requests. */
  async requests(name: string): Promise<Seen[]> {
    const b = this.backends.get(name);
    if (!b) throw new Error(`no backend ${name}`);
    return this.control(b);
  }

  /** How many requests a backend received so far. */
  async count(name: string): Promise<number> {
    return (await this.requests(name)).length;
  }

  private control(b: Backend): Promise<Seen[]> {
    return new Promise((resolve, reject) => {
      const get = b.args.kind === 'tls-echo' ? https.get : http.get;
      // A backend that requires a client certificate gets its own (signed by the CA it requires).
      const clientCert = b.args.clientCa ? { cert: readFileSync(b.args.cert ?? ''), key: readFileSync(b.args.key ?? '') } : {};
      const req = get({ host: this.ip, port: b.args.port, path: CONTROL, agent: false, timeout: 2_000, rejectUnauthorized: false, ...clientCert }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) return reject(new Error(`${CONTROL} on ${b.args.name}: ${res.statusCode} ${body}`));
          try {
            resolve(JSON.parse(body) as Seen[]);
          } catch (e) {
            reject(e as Error);
          }
        });
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', reject);
    });
  }

  /** Kills the backends, deletes the veth pair and the namespace, and checks that neither is left. */
  async close(): Promise<void> {
    this.teardown();
    const deadline = Date.now() + 5_000;
    while ([...this.backends.values()].some((b) => b.exited === undefined) && Date.now() < deadline) await sleep(20);
    const left = [
      ...netnsNames().filter((n) => n === this.netns),
      ...linkNames().filter((l) => l === this.hostIf || l === this.nsIf),
      ...[...this.backends.values()].filter((b) => b.exited === undefined).map((b) => `backend ${b.args.name} (pid ${b.child.pid})`),
    ];
    if (left.length) throw new Error(`test network teardown left: ${left.join(', ')}`);
  }

  /** Synchronous, idempotent: usable from the exit and signal handlers. */
  private teardown(): void {
    process.off('exit', this.onExit);
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(sig, this.onSignal);
    for (const b of this.backends.values()) if (b.exited === undefined) killQuiet(b.child.pid);
    if (!this.made) return;
    this.made = false;
    removeNetns(this.netns); // also kills anything else still running inside
    ipQuiet('link', 'del', this.hostIf); // deletes both ends
  }

  /** Removes what a killed earlier test process left on this subnet; refuses a subnet a live process holds. */
  private removeStale(): void {
    const mine = this.subnet;
    for (const ns of netnsNames()) {
      const m = /^portico-ut-(\d+)-(\d+)$/.exec(ns);
      if (!m || Number(m[2]) !== mine) continue;
      // Our own name before we made it: a dead process with our pid left it.
      if (ns !== this.netns && alive(Number(m[1]))) throw new Error(`subnet ${mine} is in use by process ${m[1]} (network namespace ${ns})`);
      removeNetns(ns);
    }
    for (const l of linkNames()) {
      const m = /^ptu(\d+)[hn](\d+)$/.exec(l);
      if (!m || Number(m[1]) !== mine) continue;
      if (l !== this.hostIf && l !== this.nsIf && alive(Number(m[2]))) throw new Error(`subnet ${mine} is in use by process ${m[2]} (interface ${l})`);
      ipQuiet('link', 'del', l);
    }
  }
}
