// /healthz, /readyz and /metrics on one small HTTP server (host and port chosen by the application).
import http from 'node:http';

export interface HealthChecks {
  /** Named checks; /readyz is 200 only when all return true. */
  ready: () => Record<string, boolean>;
  healthy: () => Record<string, boolean>;
  /** The exposition in pieces (Metrics.exposition), written out one at a time: a big scrape is never one string. */
  metrics: () => AsyncIterable<string>;
  contentType: string;
}

/** Writes the pieces with backpressure; a failure before the first piece answers 500, a later one cuts the answer. */
async function sendMetrics(res: http.ServerResponse, pieces: AsyncIterable<string>, contentType: string): Promise<void> {
  const settled = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
  try {
    for await (const piece of pieces) {
      if (res.destroyed) return;
      if (!res.headersSent) res.writeHead(200, { 'Content-Type': contentType });
      if (!res.write(piece)) await settled();
    }
    if (!res.headersSent) res.writeHead(200, { 'Content-Type': contentType });
    res.end();
  } catch (e) {
    if (res.headersSent) res.destroy(e instanceof Error ? e : new Error(String(e)));
    else res.writeHead(500).end(String(e));
  }
}

export function startHealthServer(host: string, port: number, checks: HealthChecks): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405).end();
      return;
    }
    if (path === '/healthz' || path === '/readyz') {
      const results = path === '/healthz' ? checks.healthy() : checks.ready();
      const ok = Object.values(results).every(Boolean);
      const body = Object.entries(results)
        .map(([k, v]) => `[${v ? '+' : '-'}]${k} ${v ? 'ok' : 'failed'}`)
        .join('\n');
      res.writeHead(ok ? 200 : 503, { 'Content-Type': 'text/plain' }).end(`${body}\n${ok ? 'ok' : 'not ok'}\n`);
      return;
    }
    if (path === '/metrics') {
      void sendMetrics(res, checks.metrics(), checks.contentType);
      return;
    }
    res.writeHead(404).end();
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}
