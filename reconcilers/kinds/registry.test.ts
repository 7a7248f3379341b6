// The kind registry and the list of claim processors the translation runs (kinds/processors.ts, which cannot
// import the registry: the translation is pure) name the same kinds, in the same order: processors.ts is generated
// from the registry (processors-gen.ts, `make processors`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PROCESSORS } from './processors.ts';
import { folderOf, processorsDrifted, renderProcessors } from './processors-gen.ts';
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
