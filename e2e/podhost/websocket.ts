// A minimal RFC 6455 server side for the echo backend: the opening handshake, unfragmented text/binary messages
// echoed back, ping answered with pong, close answered with close. Enough to prove a WebSocket passes through the
// proxy end to end; not a general WebSocket library.
import { createHash } from 'node:crypto';
import type http from 'node:http';
import type { Duplex } from 'node:stream';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

interface Frame {
  opcode: number;
  payload: Buffer;
  size: number;
}

/** One complete client frame at the start of buf (clients always mask), or null when more bytes are needed. */
function parseFrame(buf: Buffer): Frame | null {
  if (buf.length < 2) return null;
  const opcode = (buf[0] as number) & 0x0f;
  const masked = ((buf[1] as number) & 0x80) !== 0;
  let len = (buf[1] as number) & 0x7f;
  let at = 2;
  if (len === 126) {
    if (buf.length < 4) return null;
    len = buf.readUInt16BE(2);
    at = 4;
  } else if (len === 127) {
    if (buf.length < 10) return null;
    len = Number(buf.readBigUInt64BE(2));
    at = 10;
  }
  const maskAt = at;
  if (masked) at += 4;
  if (buf.length < at + len) return null;
  const payload = Buffer.from(buf.subarray(at, at + len));
  if (masked) for (let i = 0; i < payload.length; i++) payload[i] = (payload[i] as number) ^ (buf[maskAt + (i % 4)] as number);
  return { opcode, payload, size: at + len };
}

function frame(opcode: number, payload: Buffer): Buffer {
  const n = payload.length;
  const head = n < 126 ? Buffer.from([0x80 | opcode, n]) : n < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  if (n >= 126 && n < 65536) {
    head[0] = 0x80 | opcode;
    head[1] = 126;
    head.writeUInt16BE(n, 2);
  } else if (n >= 65536) {
    head[0] = 0x80 | opcode;
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(n), 2);
  }
  return Buffer.concat([head, payload]);
}

export function acceptWebSocket(req: http.IncomingMessage, socket: Duplex, head: Buffer, who: { pod: string; namespace: string; ip: string }): void {
  const key = req.headers['sec-websocket-key'];
  if (String(req.headers.upgrade ?? '').toLowerCase() !== 'websocket' || typeof key !== 'string') {
    socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    return;
  }
  const accept = createHash('sha1').update(key + GUID).digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  socket.write(frame(1, Buffer.from(JSON.stringify({ ...who, path: req.url, headers: req.headers }))));
  let buf = head;
  socket.on('error', () => socket.destroy());
  socket.on('data', (d: Buffer) => {
    buf = Buffer.concat([buf, d]);
    for (let f = parseFrame(buf); f; f = parseFrame(buf)) {
      buf = buf.subarray(f.size);
      if (f.opcode === 1 || f.opcode === 2) socket.write(frame(f.opcode, f.payload));
      else if (f.opcode === 9) socket.write(frame(10, f.payload));
      else if (f.opcode === 8) {
        socket.end(frame(8, f.payload.subarray(0, 2)));
        return;
      }
    }
  });
}
