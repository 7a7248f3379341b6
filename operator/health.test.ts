// /metrics writes the exposition piece by piece: what a client reads is every piece in order; a source that fails
// before its first piece answers 500.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { startHealthServer } from './health.ts';

async function serve(metrics: () => AsyncIterable<string>) {
  const server = await startHealthServer('127.0.0.1', 0, { ready: () => ({ a: true }), healthy: () => ({ a: true }), metrics, contentType: 'text/plain; version=0.0.4; charset=utf-8' });
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics` };
}

test('/metrics: many pieces arrive whole and in order (more than the socket buffers at once)', async () => {
  const piece = (i: number) => `m{i="${i}"} ${i}\n`.padEnd(4096, '#');
  const { server, url } = await serve(async function* () {
    for (let i = 0; i < 2000; i++) yield piece(i);
  });
  try {
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    const body = await res.text();
    assert.equal(body.length, 2000 * 4096);
    assert.equal(body, Array.from({ length: 2000 }, (_, i) => piece(i)).join(''));
  } finally {
    server.close();
  }
});

test('/metrics: a source that fails before its first piece answers 500', async () => {
  const { server, url } = await serve(async function* () {
    await Promise.resolve();
    throw new Error('collector broke');
  });
  try {
    const res = await fetch(url);
    assert.equal(res.status, 500);
    assert.match(await res.text(), /collector broke/);
  } finally {
    server.close();
  }
});
