// TCP and UDP clients for tests of Portico's stream listeners (real-nginx tests and e2e): loopback only.
import dgram from 'node:dgram';
import net from 'node:net';

/** Connects to a listener, sends `send`, reads until `done(received)` or the peer closes; resolves what arrived. */
export function tcp(port: number, send: string, done: (s: string) => boolean, timeoutMs = 3_000): Promise<{ data: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const c = net.connect(port, '127.0.0.1');
    let data = '';
    const timer = setTimeout(() => {
      c.destroy();
      reject(new Error(`tcp ${port}: timeout, got ${JSON.stringify(data)}`));
    }, timeoutMs);
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      c.destroy();
      resolve({ data, closed });
    };
    c.on('connect', () => c.write(send));
    c.on('data', (b) => {
      data += b.toString('latin1');
      if (done(data)) finish(false);
    });
    c.on('end', () => finish(true));
    c.on('close', () => finish(true));
    c.on('error', (e: NodeJS.ErrnoException) => {
      // A listener that closes with the client's bytes unread may reset the connection: closed all the same.
      if (e.code === 'ECONNRESET') return finish(true);
      clearTimeout(timer);
      reject(e);
    });
  });
}

export function udp(port: number, msg: string, timeoutMs = 1_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = dgram.createSocket('udp4');
    const timer = setTimeout(() => {
      s.close();
      reject(new Error(`udp ${port}: no answer`));
    }, timeoutMs);
    s.on('message', (m) => {
      clearTimeout(timer);
      s.close();
      resolve(m.toString());
    });
    s.send(msg, port, '127.0.0.1');
  });
}
