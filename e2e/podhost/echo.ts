// The echo backend: answers every request with JSON describing the pod and the request it received (including
// the client port of the connection it came on, so tests can see upstream keep-alive reuse).
//   ?status=NNN or header X-Echo-Status: NNN  answer with that status;  ?delay=MS  answer after a delay. A pod
//   started with `status` answers every request with it (a failing pod).
// WebSocket upgrades are accepted (see websocket.ts): a first message describes the pod and the handshake
// request, then every message is echoed back.
import dgram from 'node:dgram';
import http from 'node:http';
import net from 'node:net';
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

/**
 * Optional raw TCP and UDP echo of a pod (TCP/UDP services tests). TCP: the pod's name and a newline on connect,
 * then every byte echoed back (a PROXY protocol header comes back as text). UDP: every datagram answered with
 * "<pod>:<datagram>".
 */
export async function startStreamEcho(o: { ip: string; pod: string; tcpPort?: number; udpPort?: number }): Promise<EchoServer> {
  const closers: (() => Promise<void>)[] = [];
  if (o.tcpPort) {
    const sockets = new Set<net.Socket>();
    const server = net.createServer((c) => {
      sockets.add(c);
      c.on('close', () => sockets.delete(c));
      c.on('error', () => undefined);
      c.write(`${o.pod}\n`);
      c.pipe(c);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(o.tcpPort, o.ip, () => resolve());
    });
    closers.push(() => new Promise<void>((r) => {
      server.close(() => r());
      for (const s of sockets) s.destroy();
    }));
  }
  if (o.udpPort) {
    const sock = dgram.createSocket('udp4');
    sock.on('message', (m, r) => sock.send(Buffer.concat([Buffer.from(`${o.pod}:`), m]), r.port, r.address));
    await new Promise<void>((resolve, reject) => {
      sock.once('error', reject);
      sock.bind(o.udpPort, o.ip, () => resolve());
    });
    closers.push(() => new Promise<void>((r) => sock.close(() => r())));
  }
  return { close: async () => void (await Promise.all(closers.map((c) => c()))) };
}
