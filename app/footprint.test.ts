// What the controller process loads: @kubernetes/client-node's KubeConfig drags in its whole generated API (about
// 75 MB of resident memory), so the controller reads its credentials itself (operator/kube/credentials.ts) and
// must not load client-node on the way to running. Checked in a fresh process with a module resolve hook.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');

test('the controller\'s modules (main.ts\'s imports, setup, the client and credentials) never load @kubernetes/client-node', () => {
  const script = `
    import { registerHooks } from 'node:module';
    const seen = [];
    registerHooks({ resolve(spec, ctx, next) { if (spec.startsWith('@kubernetes/client-node')) seen.push(spec + ' from ' + ctx.parentURL); return next(spec, ctx); } });
    await import('./app/setup.ts');
    await import('./operator/kube/client.ts');
    await import('./operator/kube/credentials.ts');
    await import('./operator/manager.ts');
    // The probe itself must work: the client-node adapter does load it.
    const before = seen.length;
    await import('./operator/kube/kubeconfig.ts');
    console.log(JSON.stringify({ controller: seen.slice(0, before), probe: seen.length > before }));
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  const r = JSON.parse(out.trim().split('\n').pop() as string) as { controller: string[]; probe: boolean };
  assert.equal(r.probe, true, 'the resolve hook sees client-node when kubeconfig.ts is imported');
  assert.deepEqual(r.controller, []);
});
