// Checking a rendered nginx.conf with the real binary (`nginx -t`), shared by the render tests: a runtime directory
// with what nginx -t needs, and the check itself.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runtimePaths, type RuntimePaths } from './render.ts';

/**
 * A new runtime directory (under the system's temp directory) with what nginx -t needs: temp dirs, the API socket
 * directory, a placeholder certificate and key. `maxOpenFiles` replaces the hard limit read from the system.
 */
export function runtimeDir(o: { maxOpenFiles?: number | null } = {}): RuntimePaths {
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-nginx-t-'));
  const rt = { ...runtimePaths(dir), ...(o.maxOpenFiles !== undefined ? { maxOpenFiles: o.maxOpenFiles } : {}) };
  mkdirSync(rt.tempDir, { recursive: true });
  mkdirSync(rt.apiDir, { recursive: true, mode: 0o700 });
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=t', '-keyout', rt.placeholderKey, '-out', rt.placeholderCert], { stdio: 'ignore' });
  return rt;
}

/**
 * Writes `conf` as nginx.conf of `rt` and runs `nginx -t` on it; throws when nginx refuses it. With `withOutput`,
 * the error thrown is "nginx -t failed: " and what nginx printed (otherwise execFileSync's own error).
 */
export function nginxTest(rt: RuntimePaths, conf: string, o: { withOutput?: boolean } = {}): void {
  const file = path.join(rt.dir, 'nginx.conf');
  writeFileSync(file, conf);
  try {
    execFileSync('nginx', ['-t', '-q', '-p', rt.dir, '-c', file, '-e', 'stderr'], { stdio: 'pipe' });
  } catch (e) {
    if (!o.withOutput) throw e;
    throw new Error(`nginx -t failed: ${String((e as { stderr?: Buffer }).stderr ?? e)}`);
  }
}
