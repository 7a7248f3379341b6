import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(path.join(root, 'node_modules/.bin/node'), [path.join(root, 'app/main.ts'), ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent-home', ...env },
    timeout: 20_000,
  });

test('a bad flag exits 2 with a one-line reason', () => {
  const r = run(['--http-port', 'eighty']);
  assert.equal(r.status, 2);
  assert.equal(r.stderr.trim().split('\n').length, 1);
  assert.match(r.stderr, /^portico: invalid --http-port="eighty"/);
});

test('a missing kubeconfig exits 2 with a one-line reason', () => {
  const r = run(['--kubeconfig', '/nonexistent/kubeconfig']);
  assert.equal(r.status, 2);
  assert.match(r.stderr.trim(), /^portico: kubeconfig \/nonexistent\/kubeconfig does not exist$/);
  const none = run([]);
  assert.equal(none.status, 2);
  assert.match(none.stderr.trim(), /^portico: cannot load a kubeconfig/);
});
