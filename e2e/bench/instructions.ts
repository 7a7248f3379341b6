// Instructions per proxied request, counted by valgrind's callgrind: a figure that, unlike req/s, does not move
// with whatever else the machine is running. nginx runs as a single process (master_process off) under
// callgrind twice, serving `few` and then `many` keep-alive requests, counted from the moment nginx answers (the
// counters are zeroed then); the difference divided by (many - few) leaves out shutdown and the first requests' costs
// (LuaJIT compiling its traces). Used by dataplane.ts; skipped when valgrind is not installed.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';

export function haveValgrind(): boolean {
  return spawnSync('valgrind', ['--version'], { stdio: 'ignore' }).status === 0;
}

function requests(port: number, host: string, n: number, headers: Record<string, string> = {}): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const one = () =>
    new Promise<number>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: '/', agent, headers: { ...headers, host } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        })
        .on('error', reject);
    });
  return (async () => {
    for (let i = 0; i < n; i++) {
      const s = await one();
      if (s !== 200) throw new Error(`instruction count: request ${i} answered ${s}`);
    }
    agent.destroy();
  })();
}

/** Resolves once 127.0.0.1:port answers `host` with 200; throws after timeoutMs. */
export async function answers(port: number, host: string, timeoutMs: number, headers: Record<string, string> = {}): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      http
        .get({ host: '127.0.0.1', port, path: '/', agent: false, headers: { ...headers, host } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode === 200));
        })
        .on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > end) throw new Error(`instruction count: nginx on ${port} never answered 200`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The configuration run as one process: master_process off, one worker. */
export function singleProcessConf(conf: string): string {
  return `master_process off;\n${conf.replace(/^master_process on;\n/m, '').replace(/^worker_processes .*;$/m, 'worker_processes 1;')}`;
}

/**
 * conf: a complete nginx.conf for one process (the function forces master_process off and one worker) whose
 * listener `port` serves `host`; ready(): called once nginx runs, before counting (e.g. to push backends).
 */
export async function instructionsPerRequest(o: { dir: string; conf: string; port: number; host: string; headers?: Record<string, string>; ready?: () => Promise<void>; few?: number; many?: number }): Promise<number> {
  // BENCH_CG_FEW / BENCH_CG_MANY: more requests average LuaJIT's collector over more cycles (slower under callgrind).
  const few = o.few ?? Number(process.env.BENCH_CG_FEW ?? 200);
  const many = o.many ?? Number(process.env.BENCH_CG_MANY ?? 2200);
  const file = path.join(o.dir, 'callgrind.conf');
  writeFileSync(file, singleProcessConf(o.conf));
  const total = async (n: number): Promise<number> => {
    const out = path.join(o.dir, `callgrind.${n}.out`);
    rmSync(out, { force: true });
    const vg = spawn('valgrind', ['--tool=callgrind', `--callgrind-out-file=${out}`, 'nginx', '-p', o.dir, '-c', file, '-e', 'stderr'], { stdio: 'ignore' });
    const exited = new Promise<void>((r) => vg.once('exit', () => r()));
    try {
      // Start-up under callgrind is slow: a configuration with a few thousand Ingresses takes minutes to load.
      if (o.ready) {
        const end = Date.now() + 15 * 60_000;
        for (;;) {
          try {
            await o.ready();
            break;
          } catch (e) {
            if (Date.now() > end) throw e;
            await new Promise((r) => setTimeout(r, 200));
          }
        }
      }
      await answers(o.port, o.host, 15 * 60_000, o.headers);
      // Counted from here: start-up and what ready() pushed (a 1,000-host table, retried while nginx starts) cost a
      // different amount in each run, which the difference of the two runs would take for request costs.
      const z = spawnSync('callgrind_control', ['-z', String(vg.pid)], { encoding: 'utf8' });
      if (z.status !== 0 || /not detected|error/i.test(z.stdout + z.stderr)) throw new Error(`callgrind_control -z: ${z.stdout}${z.stderr}`);
      await requests(o.port, o.host, n, o.headers);
    } finally {
      vg.kill('SIGQUIT');
      await exited;
    }
    const m = /^(?:summary|totals):\s+(\d+)/m.exec(readFileSync(out, 'utf8'));
    if (!m) throw new Error(`no totals in ${out}`);
    return Number(m[1]);
  };
  const a = await total(few);
  const b = await total(many);
  return Math.round((b - a) / (many - few));
}

/**
 * Inclusive instructions per request of the functions whose callgrind name matches `fn`, from the two profiles
 * instructionsPerRequest left in `dir` (callgrind_annotate --inclusive): what one part of the request costs, without
 * the run-to-run drift of the whole (LuaJIT's collector and traces move the total by a few thousand).
 */
export function inclusivePerRequest(dir: string, fn: RegExp, few = 200, many = 2200): number {
  const at = (n: number): number => {
    const out = spawnSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', path.join(dir, `callgrind.${n}.out`)], { encoding: 'utf8', maxBuffer: 64 << 20 });
    if (out.status !== 0) throw new Error(`callgrind_annotate: ${out.stderr}`);
    let sum = 0;
    for (const line of out.stdout.split('\n')) {
      const m = /^\s*([\d,]+)\s+\([^)]*\)\s+(.*)$/.exec(line);
      if (m && fn.test(m[2] as string)) sum += Number((m[1] as string).replaceAll(',', ''));
    }
    return sum;
  };
  return Math.round((at(many) - at(few)) / (many - few));
}
