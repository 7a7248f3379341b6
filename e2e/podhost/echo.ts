// The echo backend: answers every request with JSON describing the pod and the request it received (including
// the client port of the connection it came on, so tests can see upstream keep-alive reuse).
//   ?status=NNN or header X-Echo-Status: NNN  answer with that status;  ?delay=MS  answer after a delay. A pod
//   started with `status` answers every request with it (a failing pod).
// WebSocket upgrades are accepted (see websocket.ts): a first message describes the pod and the handshake
// request, then every message is echoed back.
import http from 'node:http';
import { acceptWebSocket } from './websocket.ts';

export interface EchoServer {
  close(): Promise<void>;
}

export function startEcho(o: { ip: string; port: number; pod: string; namespace: string; delayMs?: number; status?: number }): Promise<EchoServer> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const hdr = req.headers['x-echo-status'];
    const status = Number(url.searchParams.get('status') ?? (typeof hdr === 'string' ? hdr : undefined) ?? o.status ?? 200);
    const delay = Number(url.searchParams.get('delay') ?? 0) + (o.delayMs ?? 0);
    const body = JSON.stringify({
      pod: o.pod,
      namespace: o.namespace,
      ip: o.ip,
      method: req.method,
      path: req.url,
      host: req.headers.host,
      headers: req.headers,
      remotePort: req.socket.remotePort,
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
  server.on('upgrade', (req, socket, head) => acceptWebSocket(req, socket, head, { pod: o.pod, namespace: o.namespace, ip: o.ip }));
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
