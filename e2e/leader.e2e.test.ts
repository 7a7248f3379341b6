// Two replicas campaign for the same Lease with the default timings (15 s lease / 10 s renew / 2 s retry):
// exactly one leads; SIGKILL it (no release) and the other takes over within the lease duration; a graceful
// SIGTERM releases the lease so the next replica takes over at once.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { ensureCluster, serviceAccountKubeconfigFile } from './harness/cluster.ts';
import { installPorticoRbac, REPO_ROOT } from './harness/portico.ts';

interface Line {
  identity: string;
  state: 'started' | 'leading' | 'stopped';
  at: number;
}
const lines: Line[] = [];
const children = new Map<string, ChildProcess>();
let kubeconfig: string;

function startCandidate(identity: string, lease: string): void {
  const child = spawn(
    path.join(REPO_ROOT, 'node_modules/.bin/node'),
    [path.join(REPO_ROOT, 'e2e/fixtures/leader-candidate.ts'), kubeconfig, identity],
    { env: { ...process.env, LEASE_NAME: lease }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.set(identity, child);
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (l) => lines.push(JSON.parse(l) as Line));
}

async function until<T>(what: string, fn: () => T | undefined | false, timeoutMs: number): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const leaders = () => {
  const state = new Map<string, string>();
  for (const l of lines) if (l.state !== 'started') state.set(l.identity, l.state);
  return [...state].filter(([, s]) => s === 'leading').map(([id]) => id);
};

before(async () => {
  await ensureCluster();
  await installPorticoRbac();
  kubeconfig = await serviceAccountKubeconfigFile('portico-system', 'portico');
});

after(() => {
  for (const c of children.values()) c.kill('SIGKILL');
});

test('exactly one leader; killing it hands the lease over within the lease duration', async () => {
  const lease = `e2e-leader-${Date.now()}`;
  startCandidate('replica-a', lease);
  startCandidate('replica-b', lease);
  const first = await until('a leader', () => leaders()[0], 20_000);
  // Watch for several renew periods: still exactly one.
  await new Promise((r) => setTimeout(r, 6_000));
  assert.deepEqual(leaders(), [first], 'exactly one leader');
  const other = first === 'replica-a' ? 'replica-b' : 'replica-a';

  const killedAt = Date.now();
  children.get(first)?.kill('SIGKILL');
  await until(`${other} to lead`, () => leaders().includes(other) && leaders(), 25_000);
  const tookOver = (lines.find((l) => l.identity === other && l.state === 'leading')?.at ?? 0) - killedAt;
  console.log(`[leader] takeover after SIGKILL: ${tookOver} ms (lease 15 s, retry 2 s)`);
  assert.ok(tookOver <= 15_000 + 2_000 * 1.2 + 500, `took over in ${tookOver}ms`);

  // Graceful stop releases the lease: a new replica leads almost at once.
  startCandidate('replica-c', lease);
  await until('replica-c started', () => lines.some((l) => l.identity === 'replica-c' && l.state === 'started'), 20_000);
  const stoppedAt = Date.now();
  children.get(other)?.kill('SIGTERM');
  await until('replica-c to lead', () => leaders().includes('replica-c'), 10_000);
  const handover = (lines.find((l) => l.identity === 'replica-c' && l.state === 'leading')?.at ?? 0) - stoppedAt;
  console.log(`[leader] takeover after graceful release: ${handover} ms`);
  assert.ok(handover < 5_000, `released lease taken in ${handover}ms`);
});
