// Shared pieces of the data-plane benchmarks: one wrk run, and a copy of Portico's running nginx.conf moved to
// other ports, sockets and files (for counting instructions under callgrind next to the live one).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { RunningPortico } from '../harness/portico.ts';

export interface WrkResult {
  rps: number;
  /** ms */
  p99: number;
  /** non-2xx/3xx answers */
  errors: number;
  /**
   * CPU time (user + system, µs) the serving processes spent per request: nginx's workers (not its master), or every
   * process listening on the port when none is an nginx worker (Traefik). What one core can serve is 1e6 / this, which
   * wrk, the backends and other load on the machine do not move the way they move req/s. NaN when unknown.
   */
  cpuUs: number;
  /** The user and the system (kernel) part of cpuUs. */
  userUs: number;
  sysUs: number;
}

/** The processes serving a port: nginx workers listening on it, else every process listening on it. */
function servingPids(port: number): number[] {
  let out = '';
  try {
    out = execFileSync('ss', ['-Hltnp', `sport = :${port}`], { encoding: 'utf8' });
  } catch {
    return [];
  }
  const pids = [...new Set([...out.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1])))];
  const workers = pids.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('nginx: worker process');
    } catch {
      return false;
    }
  });
  return workers.length ? workers : pids;
}

/** utime and stime of these processes, in clock ticks (proc(5): fields 14 and 15 of /proc/<pid>/stat). */
function cpuTicks(pids: number[]): { user: number; sys: number } {
  const t = { user: 0, sys: 0 };
  for (const pid of pids) {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // after "pid (comm) ": field 3 is f[0]
    t.user += Number(f[11]);
    t.sys += Number(f[12]);
  }
  return t;
}
const TICK_US = 1e6 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/**
 * wrk -t1 -c32 for `seconds` against 127.0.0.1:port with these headers (Host first), pinned to the second core so
 * the load generator and the measured nginx worker do not take turns on one.
 */
export function wrk(port: number, seconds: number, headers: Record<string, string>): WrkResult {
  const h = Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
  const pids = servingPids(port);
  const before = pids.length ? cpuTicks(pids) : undefined;
  const out = execFileSync('taskset', ['-c', '1', 'wrk', '-t1', '-c32', `-d${seconds}s`, '--latency', ...h, `http://127.0.0.1:${port}/`], { encoding: 'utf8' });
  const after = pids.length ? cpuTicks(pids) : undefined;
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const p99raw = /99%\s+([\d.]+)(us|ms|s)/.exec(out);
  const p99 = p99raw ? Number(p99raw[1]) * (p99raw[2] === 'us' ? 0.001 : p99raw[2] === 's' ? 1000 : 1) : NaN;
  const errors = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? '0');
  const per = (ticks: number | undefined) => (requests > 0 && ticks !== undefined ? (ticks * TICK_US) / requests : NaN);
  const userUs = per(after && before && after.user - before.user);
  const sysUs = per(after && before && after.sys - before.sys);
  return { rps, p99, errors, cpuUs: userUs + sysUs, userUs, sysUs };
}

/**
 * Portico's rendered nginx.conf in directory `d`, with its pid, sockets and access log there and its HTTP, HTTPS and
 * status listeners on `port`, `port + 1`, `port + 2`. Returns the configuration and its API socket (a fresh nginx
 * holds no data: push it there).
 */
export function relocatedConf(p: RunningPortico, d: string, port: number): { conf: string; apiSocket: string } {
  const rt = p.gateway.nginx.runtime;
  mkdirSync(path.join(d, 'api'), { recursive: true, mode: 0o700 });
  const apiSocket = path.join(d, 'api', 'config.sock');
  const moved: Record<number, string> = { [p.httpPort]: `127.0.0.1:${port}`, [p.httpsPort]: `127.0.0.1:${port + 1}`, [p.httpPort + 2]: `127.0.0.1:${port + 2}` };
  const conf = readFileSync(p.gateway.nginx.confPath, 'utf8')
    .replaceAll(rt.pidFile, path.join(d, 'nginx.pid'))
    .replaceAll(rt.apiSocket, apiSocket)
    .replaceAll(rt.unavailableSocket, path.join(d, 'unavailable.sock'))
    .replaceAll(rt.accessLog, path.join(d, 'access.log'))
    .replace(/127\.0\.0\.1:(\d+)\b/g, (all, n: string) => moved[Number(n)] ?? all);
  return { conf, apiSocket };
}
