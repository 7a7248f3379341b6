// Portico's malloc addon (operator/native/malloc.c), loaded as the controller loads it: free chunks glibc keeps
// inside its heap come back to the system with trim(), and stats() reports them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { MALLOC_ADDON, loadMallocAddon } from '../memory.ts';

test('the addon is built and loads with both functions', () => {
  assert.ok(existsSync(MALLOC_ADDON), `${MALLOC_ADDON} is built (make deps, or bash operator/native/build.sh)`);
  const m = loadMallocAddon();
  assert.ok(!(m instanceof Error), String(m));
  const s = m.stats();
  for (const k of ['heapBytes', 'freeBytes', 'mmapBytes'] as const) assert.ok(Number.isFinite(s[k]) && s[k] >= 0, `${k}: ${s[k]}`);
  assert.ok(s.freeBytes <= s.heapBytes);
});

test('a file that is not the addon is reported, not thrown', () => {
  const e = loadMallocAddon('/nonexistent/portico_malloc.node');
  assert.ok(e instanceof Error);
  assert.match(e.message, /nonexistent/);
});

// In a child node (its own heap, --expose-gc): 80 MB of 96 KB Buffers (under glibc's 128 KB mmap threshold: they
// come from the heap), every page written, then a small live Buffer above them so the heap's top cannot shrink on
// its own. Once they are collected and freed, the pages stay resident until trim().
test('trim() gives back the free pages in the middle of the heap; without it they stay resident', () => {
  const script = `
    const m = require(${JSON.stringify(MALLOC_ADDON)});
    const rssAnon = () => Number(/RssAnon:\\s+(\\d+)/.exec(require('fs').readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
    let bufs = [];
    for (let i = 0; i < 850; i++) bufs.push(Buffer.allocUnsafeSlow(96 * 1024).fill(7));
    const pin = Buffer.allocUnsafeSlow(64).fill(1);
    const held = rssAnon();
    bufs = null;
    const t0 = Date.now();
    // The backing stores are freed by V8's sweeper after the collection: wait until malloc sees them free.
    (function wait() {
      gc();
      if (m.stats().freeBytes < 60 * 1048576 && Date.now() - t0 < 10000) return setTimeout(wait, 20);
      const freed = m.stats().freeBytes;
      const before = rssAnon();
      const trimmed = m.trim();
      const after = rssAnon();
      console.log(JSON.stringify({ held, freed, before, trimmed, after, pin: pin[0] }));
    })();`;
  // glibc's own trimming is off in the child (its threshold out of reach, the mmap threshold fixed so it does not
  // move): the pin above is not sure to land at the heap's top (a small chunk may come from a hole), and when it did
  // not, free() gave the top back by itself — half the Buffers once, on a loaded machine (CI) — and nothing was left
  // for trim() to show. What is measured is trim() on pages only it returns.
  const env = { ...process.env, GLIBC_TUNABLES: 'glibc.malloc.trim_threshold=4294967295:glibc.malloc.mmap_threshold=131072' };
  const out = JSON.parse(execFileSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8', env })) as Record<string, number | boolean>;
  const MB = 1048576;
  const show = JSON.stringify(out);
  assert.ok((out.freed as number) >= 60 * MB, `glibc holds the freed Buffers as free chunks: ${show}`);
  assert.ok((out.before as number) >= 60 * MB, `their pages are still resident before the trim: ${show}`);
  assert.equal(out.trimmed, true);
  assert.ok((out.before as number) - (out.after as number) >= 50 * MB, `trim released at least 50 MB: ${show}`);
});
