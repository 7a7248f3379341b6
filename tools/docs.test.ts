// README.md and docs/: every relative link resolves, README stays a short entry point that keeps what the tests and
// CI rely on (the two commands, the quick start e2e/install.e2e.test.ts runs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './readme-reference.ts';

const DOCS = ['README.md', ...readdirSync(path.join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.md'))
  .map((f) => path.posix.join('docs', f.split(path.sep).join('/')))
  .sort()];

/** Link targets of a markdown text: inline links and images, and reference definitions; code is skipped. */
export function linkTargets(md: string): string[] {
  const prose = md
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '') // fenced code blocks
    .replace(/(`+)[\s\S]*?\1/g, ''); // inline code
  const out: string[] = [];
  for (const m of prose.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*(?:<([^>\n]+)>|([^)\s]+))(?:\s+"[^"]*")?\s*\)/g)) out.push(m[1] ?? m[2] ?? '');
  for (const m of prose.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)) out.push(m[1] ?? '');
  return out;
}

/** A relative link's file, or undefined for external links and same-page anchors. */
export function linkedFile(from: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#') || target.startsWith('//')) return undefined;
  const file = decodeURIComponent(target.replace(/[#?].*$/, ''));
  return path.posix.normalize(path.posix.join(path.posix.dirname(from), file));
}

test('linkTargets finds inline, image and reference links, and skips code', () => {
  const md = [
    'see [a](docs/a.md), ![img](x.png "t") and [b](<docs/b c.md#part>)',
    '`[not](code.md)`',
    '```',
    '[not](fenced.md)',
    '```',
    '[ref]: docs/ref.md',
    '[web](https://example.com) [here](#anchor)',
  ].join('\n');
  assert.deepEqual(linkTargets(md), ['docs/a.md', 'x.png', 'docs/b c.md#part', 'https://example.com', '#anchor', 'docs/ref.md']);
  assert.equal(linkedFile('docs/x.md', '../e2e/node/README.md#layout'), 'e2e/node/README.md');
  assert.equal(linkedFile('README.md', 'https://example.com/a.md'), undefined);
  assert.equal(linkedFile('README.md', '#anchor'), undefined);
});

test('every relative link in README.md and docs/ points at an existing file inside the repository', () => {
  assert.ok(DOCS.length > 1, 'docs/ holds documents');
  const broken: string[] = [];
  for (const doc of DOCS) {
    for (const target of linkTargets(readFileSync(path.join(ROOT, doc), 'utf8'))) {
      const file = linkedFile(doc, target);
      if (file === undefined) continue;
      if (file.startsWith('../') || !existsSync(path.join(ROOT, file))) broken.push(`${doc}: ${target}`);
    }
  }
  assert.deepEqual(broken, []);
});

test('every document under docs/ is reachable from README.md', () => {
  const seen = new Set(['README.md']);
  const todo = ['README.md'];
  while (todo.length) {
    const doc = todo.pop()!;
    for (const target of linkTargets(readFileSync(path.join(ROOT, doc), 'utf8'))) {
      const file = linkedFile(doc, target);
      if (file && file.endsWith('.md') && DOCS.includes(file) && !seen.has(file)) { seen.add(file); todo.push(file); }
    }
  }
  assert.deepEqual(DOCS.filter((d) => !seen.has(d)), []);
});

test('README.md is a short entry point that keeps the two commands and the quick start', () => {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  assert.ok(readme.split('\n').length <= 200, 'README.md ≤ 200 lines: move details into docs/');
  assert.match(readme, /`make run`/);
  assert.match(readme, /`make test`/);
  assert.match(readFileSync(path.join(ROOT, '.ci/run'), 'utf8'), /^make test$/m, '.ci/run calls make test, as README says');
  // The commands e2e/install.e2e.test.ts runs on the real node.
  for (const cmd of [
    'kubectl apply -k kustomize/',
    'kubectl create deployment web --image=',
    'kubectl create service clusterip web --tcp=8080:8080',
    'kubectl create ingress web --class=portico --rule="web.example/*=web:8080"',
  ]) assert.ok(readme.includes(cmd), cmd);
});
