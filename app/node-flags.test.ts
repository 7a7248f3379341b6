import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_ENV, NODE_FLAGS } from './node-flags.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const read = (f: string) => readFileSync(path.join(root, f), 'utf8');

test('the image runs node with NODE_FLAGS (Containerfile and the daemonless build agree)', () => {
  // main.js: the image runs the controller compiled by image/build-js.sh.
  const entry = JSON.stringify(['/usr/bin/tini', '--', '/usr/local/bin/node', ...NODE_FLAGS, '/app/app/main.js']);
  const compact = (s: string) => s.replace(/",\s+"/g, '","');
  assert.ok(compact(read('Containerfile')).includes(`ENTRYPOINT ${entry}`), 'Containerfile ENTRYPOINT');
  assert.ok(compact(read('image/build-portico.sh')).includes(`"Entrypoint": ${entry}`), 'image/build-portico.sh Entrypoint');
  for (const [k, v] of Object.entries(NODE_ENV)) {
    assert.match(read('Containerfile'), new RegExp(`^ENV ${k}=${v}$`, 'm'), `Containerfile ENV ${k}`);
    assert.ok(read('image/build-portico.sh').includes(`"${k}=${v}"`), `image/build-portico.sh Env ${k}`);
  }
});

test('the benchmarks start Portico with NODE_FLAGS', () => {
  // porticoEntry() (e2e/harness/portico.ts): the compiled controller unless BENCH_ENTRY=ts.
  for (const f of ['e2e/bench/startup.ts', 'e2e/bench/apiserver-scale.ts', 'e2e/harness/portico-process.ts']) {
    assert.match(read(f), /\.\.\.NODE_FLAGS,\s*(entry|porticoEntry\(\))\.file,/, f);
    assert.match(read(f), /env: \{ \.\.\.process\.env, \.\.\.NODE_ENV \}/, `${f}: NODE_ENV`);
  }
});
