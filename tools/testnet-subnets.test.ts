// Each file that builds a test network namespace (TestNet, reconcilers/nginx-driver/nginx/testnet.test-helpers.ts)
// owns its subnet: two files with one subnet fail each other when they run at the same time (a unit run beside a
// benchmark), so every `new TestNet(N)` in the repository must name a different N.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './readme-reference.ts';

test('every TestNet subnet belongs to one file', () => {
  const owners = new Map<number, string[]>();
  for (const dir of ['reconcilers', 'e2e', 'app', 'nginx-assets', 'tools']) {
    for (const f of readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })) {
      if (!f.endsWith('.ts')) continue;
      const file = `${dir}/${f}`;
      for (const m of readFileSync(path.join(ROOT, file), 'utf8').matchAll(/new TestNet\((\d+)\)/g)) {
        const n = Number(m[1]);
        owners.set(n, [...(owners.get(n) ?? []), file]);
      }
    }
  }
  assert.ok(owners.size >= 10, `found only ${owners.size} subnets: the scan is broken`);
  const shared = [...owners].filter(([, files]) => files.length > 1);
  assert.deepEqual(shared, [], `subnets used by more than one file: ${JSON.stringify(shared)}`);
});
