// followReads: after each change of an object whose kind declares what it reads, what it read before and what it
// reads now are both handed on (so a reference that appears is loaded and one that goes is dropped).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Model } from '../model/model.ts';
import type { NormalizedPlugin } from '../model/types.ts';
import type { KindDescriptor } from './kind.ts';
import { followReads } from './reads.ts';

test('what an object read before and reads now, at each of its changes; kinds without a reader are not followed', () => {
  const m = new Model();
  const kinds = [
    { kind: 'Plugin', secretsRead: (model: Model, key: string) => ({ tls: [], other: [...model.readsOf(`Plugin/${key}`).secrets] }) },
    { kind: 'Consumer' },
  ] as unknown as KindDescriptor[];
  const seen: string[] = [];
  followReads(m, kinds, {
    read: (k) => k.secretsRead,
    none: { tls: [], other: [] },
    isEmpty: (r) => !r.tls.length && !r.other.length,
    changed: (before, now) => seen.push(`${before.other.join(',') || '-'} → ${now.other.join(',') || '-'}`),
  });
  const rec = (name: string) => ({ key: `default/${name}`, namespace: 'default', name, uid: name, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' }) as NormalizedPlugin;
  m.setCrd('Plugin', rec('p'), { secrets: ['default/a'] });
  m.setCrd('Plugin', { ...rec('p'), generation: 2 }, { secrets: ['default/b'] });
  m.setCrd('Consumer', { ...rec('c'), username: 'c' } as never, { secrets: ['default/x'] });
  m.deleteCrd('Plugin', 'default/p');
  m.setCrd('Plugin', rec('p'));
  assert.deepEqual(seen, ['- → default/a', 'default/a → default/b', 'default/b → -', '- → -']);
});
