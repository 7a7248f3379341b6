// CPU time per proxied request on one core, without the cluster: plain nginx, plain nginx with an access log, and
// Portico's nginx with `routes` other hosts in its router (default 10,000), the same static backend (standalone.ts:
// network namespace subnet 216, listeners on 31880-31889). Each nginx runs as one process pinned to core 0; wrk
// (-t1 -c32) runs on core 1; the servers take turns for `rounds` rounds of `seconds` each, so a slow spell of the
// machine hits all of them. Per request, the process's user and system (kernel) time from /proc (wrk.ts): what one
// core serves is the inverse of the total, which req/s on a two-core machine (wrk and the backend sharing the cores)
// dilutes. The medians of the rounds are printed, and every round's total.
// Usage: node e2e/bench/dataplane-cpu.ts [seconds=2] [rounds=10] [routes=10000]
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { answers, singleProcessConf } from './instructions.ts';
import { standaloneBench, type BenchServer } from './standalone.ts';
import { wrk, type WrkResult } from './wrk.ts';

const seconds = Number(process.argv[2] ?? 2);
const rounds = Number(process.argv[3] ?? 10);
const extraHosts = Number(process.argv[4] ?? 10_000);

/** Starts the server as one nginx process (no master) on core 0; resolves once it answers 200. */
async function start(s: BenchServer, children: ChildProcess[]): Promise<ChildProcess> {
  const file = path.join(s.dir, 'cpu.conf');
  writeFileSync(file, singleProcessConf(s.conf));
  const child = spawn('taskset', ['-c', '0', 'nginx', '-p', s.dir, '-c', file, '-e', 'stderr'], { stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(child);
  const end = Date.now() + 60_000;
  for (;;) {
    try {
      await s.ready?.(); // refused until nginx listens on its configuration socket
      break;
    } catch (e) {
      if (Date.now() > end) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  await answers(s.port, s.host, 60_000);
  return child;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

await standaloneBench({ tag: 'dataplane-cpu', subnet: 216, backendPort: 31889, httpPort: 31880 }, async (b) => {
  const servers = [
    b.plain('plain', 31885, () => 'access_log off;'),
    b.plain('plain+log', 31886, (d) => `access_log ${d}/access.log l buffer=64k flush=1s;`),
    await b.portico(extraHosts),
  ];
  const children: ChildProcess[] = [];
  try {
    for (const s of servers) await start(s, children);
    const run = (s: BenchServer, secs: number) => wrk(s.port, secs, { Host: s.host });
    for (const s of servers) run(s, 2); // warm-up: LuaJIT's traces, keep-alive connections to the backend
    const res = new Map<string, WrkResult[]>(servers.map((s) => [s.name, []]));
    for (let r = 0; r < rounds; r++) for (const s of servers) res.get(s.name)?.push(run(s, seconds));
    const med = (name: string, f: (x: WrkResult) => number) => median((res.get(name) ?? []).map(f));
    for (const s of servers) {
      const xs = res.get(s.name) ?? [];
      const errors = xs.reduce((n, x) => n + x.errors, 0);
      console.log(`[dataplane-cpu] ${s.name.padEnd(9)} CPU per request ${med(s.name, (x) => x.cpuUs).toFixed(2)} µs (user ${med(s.name, (x) => x.userUs).toFixed(2)}, system ${med(s.name, (x) => x.sysUs).toFixed(2)}); ${med(s.name, (x) => x.rps).toFixed(0)} req/s, p99 ${med(s.name, (x) => x.p99).toFixed(2)} ms; non-2xx ${errors}; rounds ${xs.map((x) => x.cpuUs.toFixed(1)).join(' ')}`);
      if (errors) throw new Error(`${s.name}: ${errors} answers were not 2xx/3xx`);
    }
    const total = (name: string) => med(name, (x) => x.cpuUs);
    console.log(`[dataplane-cpu] one core serves ${(total('plain') / total('portico')).toFixed(2)} of plain nginx's requests with Portico (${(total('plain+log') / total('portico')).toFixed(2)} of plain with the same access log), ${extraHosts + 1} hosts in Portico's router, per-request metrics on; medians of ${rounds} rounds of ${seconds} s`);
  } finally {
    for (const c of children) c.kill('SIGQUIT');
    await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : undefined)));
  }
});
