// The kind registry and the list of claim processors the translation runs (kinds/processors.ts, which cannot
// import the registry: the translation is pure) name the same kinds, in the same order: processors.ts is generated
// from the registry (processors-gen.ts, `make processors`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROCESSORS } from './processors.ts';
import { folderOf, processorsDrifted, renderProcessors } from './processors-gen.ts';
import { sourceFiles } from '../../tools/imports.ts';
import { KINDS } from './registry.ts';

test('kinds/processors.ts lists exactly the registered kinds\' processors, in registry order', () => {
  const declared = KINDS.flatMap((k) => (k.processor ? [k.processor] : []));
  assert.deepEqual(PROCESSORS.map((p) => p.kind), declared.map((p) => p.kind), 'add the processor of a new kind to kinds/processors.ts (registry order)');
  assert.deepEqual(PROCESSORS, declared);
  for (const k of KINDS) if (k.processor) assert.equal(k.processor.kind, k.kind, `${k.kind}: its processor is for its own kind`);
});

test('kinds/processors.ts is what the kind registry generates (else run `make processors`)', async () => {
  assert.equal(await processorsDrifted(), false, 'reconcilers/kinds/processors.ts is out of date with the registry: regenerate it with `make processors`');
  execFileSync(process.execPath, [fileURLToPath(new URL('./processors-gen.ts', import.meta.url)), '--check'], { stdio: 'pipe' });
  // Without processors, the list is empty; a processor its folder does not export is refused.
  assert.match(await renderProcessors([]), /^export const PROCESSORS: readonly ClaimProcessor\[\] = \[\];$/m);
  const [ingress] = KINDS.filter((k) => k.processor);
  await assert.rejects(renderProcessors([{ ...ingress!, kind: 'Route' }]), /Route: its claim processor is not exported by reconcilers\/kinds\/route\/processor\.ts/);
});

test('a kind is a folder: reconcilers/kinds/<kind in lower case>/index.ts', () => {
  for (const k of KINDS) assert.ok(existsSync(new URL(`./${folderOf(k.kind)}/index.ts`, import.meta.url)), `${k.kind}: reconcilers/kinds/${folderOf(k.kind)}/index.ts`);
});

/**
 * The list literals of a source text that list kinds: two or more registered kind names as strings (['Route',
 * 'Upstream']), or only identifiers named after kinds, at least two of them ([ingressProcessor, routeProcessor]).
 */
function kindLists(source: string, kinds: readonly string[] = KINDS.map((k) => k.kind)): string[] {
  const names = new Set(kinds);
  // An identifier named after a kind: its name with a lower-case first letter, alone or followed by a capitalized word.
  const words = kinds.map((k) => k[0]!.toLowerCase() + k.slice(1)).sort((a, b) => b.length - a.length);
  const kindOf = (id: string) => words.find((w) => id === w || (id.startsWith(w) && /^[A-Z]/.test(id.slice(w.length))));
  const out: string[] = [];
  // (A destructuring, `const [namespace, service] = ...`, names variables, not kinds.)
  for (const m of source.matchAll(/(?<!(?:const|let) )\[([^[\]]*)\]/g)) {
    const items = m[1]!.split(',').map((s) => s.trim()).filter(Boolean);
    const quoted = new Set(items.flatMap((s) => /^['"`]([A-Za-z]+)['"`]$/.exec(s)?.[1] ?? []).filter((n) => names.has(n)));
    const named = items.map((s) => (/^[a-z][A-Za-z]*$/.test(s) ? kindOf(s) : undefined));
    if (quoted.size >= 2 || (named.length >= 2 && named.every(Boolean) && new Set(named).size >= 2)) out.push(m[0]);
  }
  return out;
}

test('the registry is the only hand-written list of kinds (the generated files list them from it)', () => {
  assert.deepEqual(kindLists("const a = ['Route', 'Upstream']; const b = [ingressProcessor, routeProcessor]; const c = [route];"), ["['Route', 'Upstream']", '[ingressProcessor, routeProcessor]']);
  assert.deepEqual(kindLists("const a = ['Route', 'x']; const b = [pods, ingress]; const c = [ingressClass, ingress];"), ['[ingressClass, ingress]']);
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const found: string[] = [];
  for (const f of sourceFiles(root)) {
    if (f === 'reconcilers/kinds/registry.ts' || f === 'reconcilers/kinds/registry.test.ts') continue; // the list; these examples
    const text = readFileSync(path.join(root, f), 'utf8');
    if (text.startsWith('// Generated from the kind registry')) continue;
    for (const l of kindLists(text)) found.push(`${f}: ${l.replace(/\s+/g, ' ')}`);
  }
  assert.deepEqual(found, [], 'derive these from the registry (reconcilers/kinds/registry.ts) instead of listing kinds by hand');
});
