// A real Redis for the global rate limit's tests and benchmark (issue 21): Debian's redis-server on a loopback port,
// with a temporary directory of its own and no persistence, stopped with the test; a minimal RESP client of the
// tests' own (not the code under test) to look at the counters; and the test network of the global rate limit's
// real-nginx test and benchmark (subnet 228 of testnet.test-helpers.ts: they share it, so they never run at the same
// time — the second one's TestNet.up() refuses with the reason).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { until } from '../../../e2e/harness/http.ts';
import { TestNet } from './testnet.test-helpers.ts';

/** The test network of global-rate-limit.nginx.test.ts and e2e/bench/global-rate-limit.ts. */
export const globalRateLimitNet = (): TestNet => new TestNet(228);

/** The end of one whole RESP reply starting at `at` in `s`, or -1 while it is incomplete. */
export function replyEnd(s: string, at = 0): number {
  const eol = s.indexOf('\r\n', at);
  if (eol < 0) return -1;
  const n = Number(s.slice(at + 1, eol));
  if (s[at] === '$') return n < 0 ? eol + 2 : s.length >= eol + 2 + n + 2 ? eol + 2 + n + 2 : -1;
  if (s[at] !== '*') return eol + 2;
  let pos = eol + 2;
  for (let i = 0; i < n; i++) {
    pos = replyEnd(s, pos);
    if (pos < 0) return -1;
  }
  return pos;
}

/** One command to the Redis on 127.0.0.1:`port`: its whole reply, as RESP text ("+PONG\r\n", "$2\r\n10\r\n"...). */
export function redisCommand(port: number, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port });
    let got = '';
    s.setTimeout(2_000, () => s.destroy(new Error('redis: timeout')));
    s.on('connect', () => s.write(`*${args.length}\r\n${args.map((x) => `$${Buffer.byteLength(x)}\r\n${x}\r\n`).join('')}`));
    s.on('data', (d) => {
      got += d.toString('utf8');
      if (replyEnd(got) === got.length) {
        s.end();
        resolve(got);
      }
    });
    s.on('error', reject);
  });
}

export interface TestRedis {
  port: number;
  /** Stops redis-server (SIGKILL: what "Redis is gone" looks like to nginx) and waits until it no longer answers. */
  kill(): Promise<void>;
  /** kill() and the temporary directory removed. */
  close(): Promise<void>;
}

/** Starts redis-server on 127.0.0.1:`port` and waits (with a deadline) until it answers PING. */
export async function startRedis(port: number): Promise<TestRedis> {
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-redis-'));
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let exited: string | undefined;
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (s: string) => void (stderr = (stderr + s).slice(-2_000)));
  child.on('exit', (code, sig) => void (exited = sig ?? `code ${code}`));
  child.on('error', (e) => void (exited = String(e)));
  const kill = async () => {
    if (exited === undefined) child.kill('SIGKILL');
    await until('redis-server to be gone', async () => {
      try {
        await redisCommand(port, 'PING');
        return false;
      } catch {
        return true;
      }
    }, 10_000, 25);
  };
  try {
    await until('redis-server to answer PING', async () => {
      if (exited !== undefined) throw new Error(`redis-server exited (${exited}): ${stderr.trim()}`);
      return (await redisCommand(port, 'PING')) === '+PONG\r\n';
    }, 10_000, 25);
  } catch (e) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    port,
    kill,
    close: async () => {
      try {
        await kill();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
