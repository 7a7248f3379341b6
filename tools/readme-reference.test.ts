import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DOCUMENTS, ROOT, SECTIONS, regenerate } from './readme-reference.ts';

for (const [doc, sections] of Object.entries(DOCUMENTS)) {
  test(`${doc}: the reference tables are exactly what the code validates (run \`node tools/readme-reference.ts\` to update)`, () => {
    const text = readFileSync(path.join(ROOT, doc), 'utf8');
    assert.equal(regenerate(text, sections, doc), text);
  });
}

test('a missing marker is an error, not a silently skipped table', () => {
  assert.throws(() => regenerate('# no markers', DOCUMENTS['docs/reference/flags.md']), /reference:flags/);
  assert.throws(() => regenerate('# no markers'), /reference:flags/);
});

test('each generated section lives in exactly one document, and no other document (README.md included) holds a stale copy', () => {
  const docs = ['README.md', ...markdownUnder('docs')];
  for (const name of Object.keys(SECTIONS)) {
    const holders = docs.filter((d) => readFileSync(path.join(ROOT, d), 'utf8').includes(`<!-- reference:${name} -->`));
    assert.deepEqual(holders, Object.entries(DOCUMENTS).filter(([, s]) => name in s).map(([d]) => d), name);
  }
});

function markdownUnder(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => path.posix.join(dir, f.split(path.sep).join('/')))
    .sort();
}
