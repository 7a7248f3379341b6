// A tiny HTTP client for tests: sets the Host header (fetch cannot), keeps connections alive, never throws on
// HTTP errors (returns status 0 with the error for transport failures).
import http from 'node:http';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';

let agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/**
 * Drops pooled keep-alive connections. After an nginx reload the old workers close their idle client
 * connections; a request racing that close fails on the client side (as with any HTTP/1.1 server closing an idle
 * connection). Tests that count failures start from fresh connections once the reload has settled.
 */
export function resetConnections(): void {
  agent.destroy();
  agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
}

export interface Reply {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
  error?: string;
  json<T = { pod: string; ip: string; path: string; headers: Record<string, string> }>(): T;
}

type Opts = { method?: string; headers?: Record<string, string>; body?: string | Buffer; timeoutMs?: number; /** Where Portico listens (default 127.0.0.1). */ address?: string };

/**
 * One HTTP request. Like browsers and HTTP libraries (RFC 9112 §9.3.1), an idempotent request that fails on a
 * reused keep-alive connection before any response byte (the server closed it meanwhile) is retried once on a new
 * connection; any other failure is returned as status 0.
 */
export async function request(port: number, host: string, path: string, opts: Opts = {}): Promise<Reply> {
  const first = await requestOnce(port, host, path, opts);
  const idempotent = (opts.method ?? 'GET') === 'GET' || opts.method === 'HEAD';
  if (first.status === 0 && first.reused && idempotent) return requestOnce(port, host, path, opts);
  return first;
}

function requestOnce(port: number, host: string, path: string, opts: Opts): Promise<Reply & { reused?: boolean }> {
  return new Promise((resolve) => {
    const req = http.request(
      { host: opts.address ?? '127.0.0.1', port, path, method: opts.method ?? 'GET', agent, headers: { host, ...(opts.headers ?? {}) }, timeout: opts.timeoutMs ?? 10_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body, headers: res.headers, json: <T>() => JSON.parse(body) as T });
        });
        res.on('error', (e) => resolve({ status: 0, body: '', headers: {}, error: String(e), json: () => { throw e; } }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve({ status: 0, body: '', headers: {}, error: String(e), reused: req.reusedSocket, json: () => { throw e; } }));
    req.end(opts.body);
  });
}

export async function until<T>(what: string, fn: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 20_000, stepMs = 50): Promise<T> {
  const t0 = Date.now();
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

export interface TlsReply { status: number; body: string; headers: http.IncomingHttpHeaders; location?: string; peerCN?: string; error?: string }

/**
 * One HTTPS request to 127.0.0.1:port on a new connection: TLS server name `servername`, Host `host` (default the
 * server name), optionally a client certificate (PEM, with its chain) and key. The server's certificate is not
 * checked; its subject CN is returned.
 */
export function tlsRequest(port: number, servername: string, o: { host?: string; path?: string; cert?: string; key?: string } = {}): Promise<TlsReply> {
  return new Promise((resolve) => {
    const req = https.request(
      { host: '127.0.0.1', port, path: o.path ?? '/', servername, headers: { host: o.host ?? servername }, rejectUnauthorized: false, agent: false, ...(o.cert ? { cert: o.cert, key: o.key } : {}) },
      (res) => {
        const peerCN = String((res.socket as TLSSocket).getPeerCertificate?.()?.subject?.CN ?? '');
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers, peerCN, ...(res.headers.location ? { location: res.headers.location } : {}) }));
      },
    );
    req.on('error', (e) => resolve({ status: 0, body: '', headers: {}, error: String(e) }));
    req.end();
  });
}
