// Starting and stopping a real nginx with a first configuration, shared by the real-nginx tests: render and validate
// nginx.conf, start nginx, wait until the configuration is live, push the route and backend data; and the teardown
// that stops nginx, the API client and the test network even when one of them fails. Also the setup before that:
// a logger that keeps nginx's error log, and the nginx process with its API client in a temporary directory; and a
// request to nginx.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import winston from 'winston';
import type { GatewayConfig } from '../../config/types.ts';
import type { Logger } from '../../../operator/log.ts';
import { diffConfig, structureChecksum } from '../../translate/diff.ts';
import { until } from '../../../e2e/harness/http.ts';
import { DynamicClient } from './dynamic.ts';
import { NginxProcess } from './process.ts';
import { renderNginxConf, runtimePaths } from './render.ts';

/** A logger that keeps every line it writes (JSON), in `lines`: nginx's error log (its stderr) arrives through it. */
export function capturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const logger = winston.createLogger({
    level: 'info',
    format: winston.format.json(),
    transports: [new winston.transports.Stream({ stream: new Writable({ write(chunk: Buffer, _e, cb) { lines.push(chunk.toString()); cb(); } }) })],
  });
  return { logger, lines };
}

/** Debian's nginx (as in production) with its runtime in a new temporary directory named from `prefix`, and its API client. */
export function liveNginx(prefix: string, logger: Logger): { dir: string; dynamic: DynamicClient; nginx: NginxProcess } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  const dynamic = new DynamicClient();
  const nginx = new NginxProcess({ binary: '/usr/sbin/nginx', runtime: runtimePaths(dir), shutdownTimeoutMs: 2_000 }, dynamic, logger);
  return { dir, dynamic, nginx };
}

export async function startLive(nginx: NginxProcess, dynamic: DynamicClient, config: GatewayConfig): Promise<void> {
  nginx.prepare();
  const checksum = structureChecksum(config.structure);
  const v = await nginx.writeValidated(renderNginxConf(config.structure, nginx.runtime, checksum));
  assert.ok(v.ok, v.output);
  nginx.start();
  assert.ok(await nginx.waitLive(checksum));
  await dynamic.push(diffConfig(null, config).delta);
}

export async function stopLive(nginx: NginxProcess, dynamic: DynamicClient, net?: { close(): Promise<void> }): Promise<void> {
  try {
    await nginx.stop();
    await dynamic.close();
  } finally {
    await net?.close();
  }
}

/** nginx's answer to a request: status, headers and the body as text. */
export interface Answer { status: number; headers: http.IncomingHttpHeaders; body: string }

/** A request (GET unless `method`) to nginx on 127.0.0.1:`port` for Host `host`, on a connection of its own. */
export function sendTo(port: number, host: string, p: string, o: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: p, method: o.method ?? 'GET', headers: { host, ...o.headers }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

/**
 * The access log's lines about the given URIs (the first field of the test's log format), in the order written, as
 * `parse` reads them (null: a line of no interest), once there is one per URI (the log is buffered: waited for, with a
 * deadline).
 */
export async function loggedLines<T>(nginx: NginxProcess, uris: string[], parse: (line: string) => { uri: string; item: T } | null): Promise<T[]> {
  const wanted = new Set(uris);
  return until(`${uris.length} access-log lines`, async () => {
    let text = '';
    try {
      text = readFileSync(nginx.runtime.accessLog, 'utf8');
    } catch {
      return false;
    }
    const out: T[] = [];
    for (const line of text.split('\n')) {
      const p = parse(line);
      if (p && wanted.has(p.uri)) out.push(p.item);
    }
    return out.length === uris.length && out;
  });
}
