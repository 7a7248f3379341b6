import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { README, regenerate } from './readme-reference.ts';

test('README reference tables are exactly what the code validates (run `node tools/readme-reference.ts` to update)', () => {
  const readme = readFileSync(README, 'utf8');
  assert.equal(regenerate(readme), readme);
});

test('a missing marker is an error, not a silently skipped table', () => {
  assert.throws(() => regenerate('# no markers'), /reference:flags/);
});
