// An nginx of its own for the tests of Portico's nginx modules (nginx-assets/modules/*/module.nginx.test.ts): a
// hand-written nginx.conf in a fresh directory, started once the module is built, and known to serve only when its
// pid file names the process this test started (another process holding the ports would answer otherwise).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { until } from '../../e2e/harness/http.ts';

export interface Nginx { dir: string; proc: ChildProcess; stderr: string[] }

/**
 * module: the .so the configuration loads (asserted built); prefix: the temporary directory's; conf(dir): the
 * configuration's text for that directory (pid file dir/nginx.pid); answers(): whether nginx serves what the test
 * needs. The directory is pushed onto `dirs` for the test file to remove.
 */
export async function startNginx(o: { module: string; prefix: string; conf: (dir: string) => string; answers: () => Promise<boolean>; dirs: string[] }): Promise<Nginx> {
  assert.ok(existsSync(o.module), `${o.module} is built (make deps, or bash nginx-assets/modules/build.sh)`);
  const dir = mkdtempSync(path.join(tmpdir(), o.prefix));
  o.dirs.push(dir);
  writeFileSync(path.join(dir, 'nginx.conf'), o.conf(dir));
  const proc = spawn('nginx', ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', 'stderr'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const stderr: string[] = [];
  proc.stderr?.on('data', (b: Buffer) => stderr.push(b.toString()));
  // nginx exits at once when it cannot listen (another process holds these ports): say so instead of talking to it.
  let exited = false;
  proc.once('exit', () => (exited = true));
  await until('nginx answers', async () => {
    if (exited) throw new Error(`nginx exited before it served: ${stderr.join('').slice(0, 500)}`);
    // Its pid file is written once it listens: then the answers are its own.
    let pid = '';
    try {
      pid = readFileSync(path.join(dir, 'nginx.pid'), 'utf8').trim();
    } catch {
      return false;
    }
    return pid === String(proc.pid) && (await o.answers().catch(() => false));
  }, 10_000);
  assert.ok(!exited, `nginx is still running: ${stderr.join('').slice(0, 500)}`);
  return { dir, proc, stderr };
}

/** Stops it (SIGQUIT: graceful) and waits for the exit; nothing to do when it already exited. */
export async function stopNginx(n: Nginx): Promise<void> {
  if (n.proc.exitCode !== null || n.proc.signalCode !== null) return;
  const exited = new Promise<void>((r) => n.proc.once('exit', () => r()));
  n.proc.kill('SIGQUIT');
  await exited;
}
