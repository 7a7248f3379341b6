// Runs the pure Lua unit tests with luajit (OpenResty's luajit2 from Debian) under node's test runner.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

test('Lua: smooth weighted round-robin', () => {
  const r = spawnSync('luajit', [path.join(here, 'rr_test.lua'), path.join(here, '..')], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  assert.match(r.stdout, /ok - smooth 5:1:1 sequence/);
  assert.doesNotMatch(r.stdout, /not ok/);
});

test('Lua: consistent hash ring (stability when an endpoint is added, balance)', () => {
  const r = spawnSync('luajit', [path.join(here, 'chash_test.lua'), path.join(here, '..')], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  assert.doesNotMatch(r.stdout, /not ok/);
  assert.match(r.stdout, /ok - adding 1 endpoint/);
});

test('Lua: EWMA with two random choices prefers fast peers and decays back', () => {
  const r = spawnSync('luajit', [path.join(here, 'ewma_test.lua'), path.join(here, '..')], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  assert.doesNotMatch(r.stdout, /not ok/);
});
