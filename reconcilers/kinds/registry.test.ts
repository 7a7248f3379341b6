// The kind registry and the list of claim processors the translation runs (kinds/processors.ts, which cannot
// import the registry: the translation is pure) name the same kinds, in the same order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PROCESSORS } from './processors.ts';
import { KINDS } from './registry.ts';

test('kinds/processors.ts lists exactly the registered kinds\' processors, in registry order', () => {
  const declared = KINDS.flatMap((k) => (k.processor ? [k.processor] : []));
  assert.deepEqual(PROCESSORS.map((p) => p.kind), declared.map((p) => p.kind), 'add the processor of a new kind to kinds/processors.ts (registry order)');
  assert.deepEqual(PROCESSORS, declared);
  for (const k of KINDS) if (k.processor) assert.equal(k.processor.kind, k.kind, `${k.kind}: its processor is for its own kind`);
});
