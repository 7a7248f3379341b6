// The echo backend: answers every request with JSON describing the pod and the request it received.
//   ?status=NNN  answer with that status;  ?delay=MS  answer after a delay.
import http from 'node:http';

export interface EchoServer {
  close(): Promise<void>;
}

export function startEcho(o: { ip: string; port: number; pod: string; namespace: string; delayMs?: number }): Promise<EchoServer> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const status = Number(url.searchParams.get('status') ?? 200);
    const delay = Number(url.searchParams.get('delay') ?? 0) + (o.delayMs ?? 0);
    const body = JSON.stringify({
      pod: o.pod,
      namespace: o.namespace,
      ip: o.ip,
      method: req.method,
      path: req.url,
      host: req.headers.host,
      headers: req.headers,
    });
    const reply = () => {
      res.writeHead(Number.isInteger(status) && status >= 100 && status < 600 ? status : 200, {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(body),
        'X-Pod': o.pod,
      });
      res.end(body);
    };
    req.resume();
    req.on('end', () => (delay > 0 ? setTimeout(reply, Math.min(delay, 60_000)) : reply()));
  });
  server.keepAliveTimeout = 65_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.ip, () => {
      server.off('error', reject);
      resolve({
        close: () =>
          new Promise<void>((r) => {
            server.close(() => r());
            server.closeAllConnections();
          }),
      });
    });
  });
}
