// /healthz, /readyz and /metrics on one small HTTP server (host and port chosen by the application).
import http from 'node:http';
import type { Registry } from 'prom-client';

export interface HealthChecks {
  /** Named checks; /readyz is 200 only when all return true. */
  ready: () => Record<string, boolean>;
  healthy: () => Record<string, boolean>;
  registry: Registry;
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
      checks.registry
        .metrics()
        .then((text) => res.writeHead(200, { 'Content-Type': checks.registry.contentType }).end(text))
        .catch((e: unknown) => res.writeHead(500).end(String(e)));
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
