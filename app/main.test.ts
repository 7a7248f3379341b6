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

test('--version prints the package version and exits 0 (ingress-nginx\'s flag)', () => {
  const r = run(['--version']);
  assert.equal(r.status, 0);
  assert.match(r.stdout, /^portico \d+\.\d+\.\d+\n$/);
});

test('the ingress-nginx chart\'s default arguments get past flag parsing (the next stop, outside a pod, is the kubeconfig)', () => {
  const r = run(['/nginx-ingress-controller', '--publish-service=ingress-nginx/ingress-nginx-controller', '--election-id=ingress-nginx-leader', '--controller-class=k8s.io/ingress-nginx', '--ingress-class=nginx', '--configmap=ingress-nginx/ingress-nginx-controller', '--validating-webhook=:8443', '--validating-webhook-certificate=/usr/local/certificates/cert', '--validating-webhook-key=/usr/local/certificates/key'], { POD_NAMESPACE: 'ingress-nginx' });
  assert.equal(r.status, 2);
  assert.match(r.stderr.trim(), /^portico: cannot load a kubeconfig/);
  const refused = run(['--maxmind-license-key=abc']);
  assert.equal(refused.status, 2);
  assert.match(refused.stderr.trim(), /^portico: unknown flag --maxmind-license-key: an ingress-nginx flag Portico does not support \(Portico downloads no MaxMind database[^\n]*\)$/);
});
