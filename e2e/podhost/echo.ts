// The echo backend: answers every request with JSON describing the pod and the request it received (including
// the client port of the connection it came on, so tests can see upstream keep-alive reuse, the HTTP version, and
// for TLS pods the server name, protocol, cipher and client certificate of the connection).
//   ?status=NNN or header X-Echo-Status: NNN  answer with that status;  ?delay=MS  answer after a delay. A pod
//   started with `status` answers every request with it (a failing pod).
//   ?set-cookie=V (repeatable)  a Set-Cookie header per value;  ?location=URL  a Location header;
//   ?header-size=N  an X-Big header of N bytes;  ?size=N  N bytes of padding in the body ("pad");
//   ?chunks=N&every=MS  the headers at once, then the body streamed as N chunks MS apart (the first after MS);
//   ?noread=1  the request body is never read and no answer is sent (a stalled backend).
// Every request is also recorded (see `seen`): method, path, headers, client port, HTTP version, body size, whether
// the answer was all sent, time.
// WebSocket upgrades are accepted (see websocket.ts): a first message describes the pod and the handshake
// request, then every message is echoed back. A pod with `tls` serves HTTPS and HTTP/2 over TLS (ALPN), a pod
// with `h2c` HTTP/2 without TLS (prior knowledge); on HTTP/2 a gRPC call (content-type application/grpc) is
// answered with one gRPC message holding the JSON description and grpc-status 0.
import dgram from 'node:dgram';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import type { TLSSocket } from 'node:tls';
import { acceptWebSocket } from './websocket.ts';

export interface EchoServer {
  close(): Promise<void>;
}

export interface SeenRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  remotePort: number | undefined;
  httpVersion: string;
  /** Bytes of request body read so far; `complete` once the body ended. */
  bodyBytes: number;
  complete: boolean;
  /** The whole answer was handed to the connection (the proxy took it, whatever its client has read). */
  answered: boolean;
  at: number;
}

export interface EchoTls {
  cert: string;
  key: string;
  /** Client certificates are asked for (and verified against `ca` when given; unverified ones are still reported). */
  requestCert?: boolean;
  ca?: string;
  minVersion?: 'TLSv1.2' | 'TLSv1.3';
  maxVersion?: 'TLSv1.2' | 'TLSv1.3';
  ciphers?: string;
}

export interface EchoOptions {
  ip: string;
  port: number;
  pod: string;
  namespace: string;
  delayMs?: number;
  status?: number;
  tls?: EchoTls;
  h2c?: boolean;
  /** Where each request is recorded (the caller owns the array; the daemon keeps the last 500). */
  seen?: SeenRequest[];
}

type Req = http.IncomingMessage | http2.Http2ServerRequest;
type Res = http.ServerResponse | http2.Http2ServerResponse;

function tlsInfo(req: Req): Record<string, unknown> | undefined {
  const s = req.socket as TLSSocket;
  if (!s || typeof s.getProtocol !== 'function') return undefined;
  const peer = s.getPeerCertificate?.();
  return {
    sni: (s as TLSSocket & { servername?: string | false }).servername || null,
    protocol: s.getProtocol(),
    cipher: s.getCipher?.()?.name,
    alpn: s.alpnProtocol || null,
    peerCN: peer && peer.subject ? peer.subject.CN : null,
    peerVerified: s.authorized,
  };
}

function handler(o: EchoOptions) {
  return (req: Req, res: Res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const q = url.searchParams;
    const seen: SeenRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: { ...req.headers },
      remotePort: req.socket?.remotePort,
      httpVersion: req.httpVersion,
      bodyBytes: 0,
      complete: false,
      answered: false,
      at: Date.now(),
    };
    res.on('finish', () => (seen.answered = true));
    if (o.seen) {
      o.seen.push(seen);
      if (o.seen.length > 500) o.seen.shift();
    }
    if (q.get('noread') === '1') return; // never read, never answer: nginx's timeouts end it
    const hdr = req.headers['x-echo-status'];
    const status = Number(q.get('status') ?? (typeof hdr === 'string' ? hdr : undefined) ?? o.status ?? 200);
    const delay = Number(q.get('delay') ?? 0) + (o.delayMs ?? 0);
    const grpc = req.httpVersion === '2.0' && String(req.headers['content-type'] ?? '').startsWith('application/grpc');
    const describe = () =>
      JSON.stringify({
        pod: o.pod,
        namespace: o.namespace,
        ip: o.ip,
        method: req.method,
        path: req.url,
        host: req.headers.host ?? req.headers[':authority'],
        headers: req.headers,
        remotePort: req.socket?.remotePort,
        httpVersion: req.httpVersion,
        bodyBytes: seen.bodyBytes,
        ...(o.tls ? { tls: tlsInfo(req) } : {}),
        ...(q.has('size') ? { pad: 'p'.repeat(Math.min(Number(q.get('size')) || 0, 64 << 20)) } : {}),
      });
    const reply = () => {
      if (grpc) return replyGrpc(res as http2.Http2ServerResponse, Buffer.from(describe()));
      const body = describe();
      const headers: Record<string, string | string[] | number> = { 'Content-Type': 'application/json', 'X-Pod': o.pod };
      const cookies = q.getAll('set-cookie');
      if (cookies.length) headers['Set-Cookie'] = cookies;
      if (q.has('location')) headers.Location = q.get('location') as string;
      if (q.has('header-size')) headers['X-Big'] = 'b'.repeat(Math.min(Number(q.get('header-size')) || 0, 256 << 10));
      const code = Number.isInteger(status) && status >= 100 && status < 600 ? status : 200;
      const chunks = Math.min(Number(q.get('chunks') ?? 0) || 0, 100);
      if (chunks > 1) {
        const every = Math.min(Number(q.get('every') ?? 500) || 0, 10_000);
        (res as http.ServerResponse).writeHead(code, headers);
        (res as http.ServerResponse).flushHeaders();
        let i = 0;
        const next = () => {
          (res as http.ServerResponse).write(`chunk ${i}\n`);
          if (++i < chunks) setTimeout(next, every);
          else res.end(body);
        };
        setTimeout(next, every);
        return;
      }
      headers['Content-Length'] = Buffer.byteLength(body);
      (res as http.ServerResponse).writeHead(code, headers);
      res.end(body);
    };
    req.on('data', (c: Buffer) => (seen.bodyBytes += c.length));
    req.on('end', () => {
      seen.complete = true;
      if (delay > 0) setTimeout(reply, Math.min(delay, 60_000));
      else reply();
    });
  };
}

/** One gRPC message (5-byte prefix: not compressed, length) then trailers with grpc-status 0. */
function replyGrpc(res: http2.Http2ServerResponse, message: Buffer): void {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(message.length, 1);
  res.writeHead(200, { 'content-type': 'application/grpc' });
  res.addTrailers({ 'grpc-status': '0', 'grpc-message': 'ok' });
  res.end(Buffer.concat([prefix, message]));
}

export function startEcho(o: EchoOptions): Promise<EchoServer> {
  const onRequest = handler(o);
  const server: net.Server & { closeAllConnections?: () => void } = o.tls
    ? http2.createSecureServer(
        {
          allowHTTP1: true,
          cert: o.tls.cert,
          key: o.tls.key,
          ca: o.tls.ca,
          requestCert: o.tls.requestCert ?? false,
          rejectUnauthorized: false,
          minVersion: o.tls.minVersion,
          maxVersion: o.tls.maxVersion,
          ...(o.tls.ciphers ? { ciphers: o.tls.ciphers } : {}),
        },
        onRequest,
      )
    : o.h2c
      ? http2.createServer(onRequest)
      : http.createServer(onRequest);
  if (!o.tls && !o.h2c) {
    server.on('upgrade', (req: http.IncomingMessage, socket, head) => acceptWebSocket(req, socket, head, { pod: o.pod, namespace: o.namespace, ip: o.ip }));
    (server as http.Server).keepAliveTimeout = 65_000;
  }
  const sockets = new Set<net.Socket>();
  server.on(o.tls ? 'secureConnection' : 'connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.ip, () => {
      server.off('error', reject);
      resolve({
        close: () =>
          new Promise<void>((r) => {
            server.close(() => r());
            for (const s of sockets) s.destroy();
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
