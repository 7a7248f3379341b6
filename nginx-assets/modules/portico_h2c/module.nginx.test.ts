// Portico's h2c module in Debian's nginx, on its own: one nginx whose ports named by portico_h2c_ports serve HTTP/1.x
// and HTTP/2 with prior knowledge (h2c, what gRPC clients speak in plaintext) on the same port, with curl, Node's
// HTTP/2 client, a gRPC-style backend behind grpc_pass (Node's HTTP/2 server, h2c) and raw sockets for what clients
// should not do. Traffic only to loopback: nginx listens on 33010 (named, reuseport), 33011 (not named: HTTP/1 only),
// 33012 (named, deferred accept: the first bytes are there when the connection is accepted) and 33013 (named, PROXY
// protocol); 33014 and 33015 appear only in configurations that nginx -t refuses, and 33016 is a second nginx's, short
// of connections. The backend takes a free port.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { H2C_MODULE } from '../../../reconcilers/nginx-driver/nginx/runtime.ts';
import { until } from '../../../e2e/harness/http.ts';
import { startNginx, stopNginx, type Nginx } from '../nginx.test-helpers.ts';

const H2C = 33010;
const PLAIN = 33011;
const DEFERRED = 33012;
const PP = 33013;
const NAMED = [H2C, DEFERRED, PP];
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
const HEADER_TIMEOUT_MS = 1_000;
const dirs: string[] = [];
/** Every test's deadline: a test that waits for something that does not come fails instead of hanging. */
const T = { timeout: 60_000 };

interface Seen { path: string; headers: http2.IncomingHttpHeaders; body: Buffer }
let backend: http2.Http2Server;
let backendPort = 0;
const seen: Seen[] = [];
let n: Nginx;

/** The generation each answer names (X-Generation), portico_h2c_ports' value (all named ports unless given), and
 * more of http{}. */
interface Conf { generation: number; ports?: string; extra?: string }

function conf(dir: string, o: Conf): string {
  return `daemon off;
master_process on;
worker_processes 2;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log debug;
load_module ${H2C_MODULE};
events { worker_connections 256; }
http {
  access_log off;
  client_header_timeout ${HEADER_TIMEOUT_MS}ms;
  portico_h2c_ports ${o.ports ?? NAMED.join(' ')};
  server {
    listen 127.0.0.1:${H2C} reuseport;
    listen 127.0.0.1:${PLAIN};
    listen 127.0.0.1:${DEFERRED} deferred;
    listen 127.0.0.1:${PP} proxy_protocol;
    add_header X-Protocol $server_protocol always;
    add_header X-Connection $connection always;
    add_header X-Connection-Requests $connection_requests always;
    add_header X-Proxy-Addr "$proxy_protocol_addr" always;
    add_header X-Generation ${o.generation} always;
    location /portico.test.Echo/ { grpc_pass grpc://127.0.0.1:${backendPort}; }
    location / { return 200 "ok $request_method $request_body"; }
  }
${o.extra ?? ''}}
`;
}

const start = (o: Conf): Promise<Nginx> =>
  startNginx({ module: H2C_MODULE, prefix: 'portico-h2c-', conf: (dir) => conf(dir, o), dirs, answers: async () => (await curl(['--http1.1', '-o', '/dev/null', '-w', '%{http_code}', `http://127.0.0.1:${PLAIN}/`])).out === '200' });
const stop = stopNginx;

/** Reloads nginx with `o` and waits until every answer comes from the new workers (their generation, ten times). */
async function reload(x: Nginx, o: Conf): Promise<void> {
  writeFileSync(path.join(x.dir, 'nginx.conf'), conf(x.dir, o));
  x.proc.kill('SIGHUP');
  await until(`the reload to generation ${o.generation}`, async () => {
    for (let i = 0; i < 10; i++) {
      const h = headerBlocks((await curl(['--http1.1', '-D', '-', '-o', '/dev/null', `http://127.0.0.1:${H2C}/`])).out);
      if (h[0]?.headers['x-generation'] !== String(o.generation)) return false;
    }
    return true;
  }, 15_000);
}

const errorLog = () => readFileSync(path.join(n.dir, 'error.log'), 'utf8');
/** The error log's lines of level alert, crit or emerg (a crash is logged as alert: "worker process ... exited on signal"). */
const severe = () => errorLog().split('\n').filter((l) => /\[(alert|crit|emerg)\]/.test(l));
/** The master's worker processes. */
const workers = () => readFileSync(`/proc/${n.proc.pid}/task/${n.proc.pid}/children`, 'utf8').trim().split(/\s+/).sort();

function curl(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile('curl', ['-sS', '--max-time', '10', ...args], { encoding: 'utf8' }, (e, out, err) =>
      resolve({ code: e ? (typeof e.code === 'number' ? e.code : -1) : 0, out, err }));
  });
}

/** curl -D - output: one block per response, its status line and headers (names in lower case). */
function headerBlocks(out: string): { status: string; headers: Record<string, string> }[] {
  return out.split(/\r?\n\r?\n/).filter((b) => b.trim()).map((b) => {
    const [status = '', ...lines] = b.split(/\r?\n/);
    const headers: Record<string, string> = {};
    for (const l of lines) {
      const i = l.indexOf(':');
      if (i > 0) headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
    }
    return { status, headers };
  });
}

/** A raw TCP connection to nginx: what it sent back so far, and when it closed (ms after the connection opened; an
 * error when nginx has not closed it within 10 s). */
function raw(port: number) {
  const s = net.connect({ host: '127.0.0.1', port });
  s.setNoDelay(true);
  const chunks: Buffer[] = [];
  const t0 = Date.now();
  s.on('data', (b: Buffer) => chunks.push(b));
  s.on('error', () => {}); // a reset is an outcome here, read through `closed`
  const closed = new Promise<number>((resolve, reject) => {
    const t = setTimeout(() => {
      s.destroy();
      reject(new Error(`the connection to ${port} was still open after 10 s; nginx sent ${JSON.stringify(Buffer.concat(chunks).toString('latin1').slice(0, 200))}`));
    }, 10_000);
    s.once('close', () => {
      clearTimeout(t);
      resolve(Date.now() - t0);
    });
  });
  const connected = new Promise<void>((r, j) => {
    s.once('connect', () => r());
    s.once('error', j);
  });
  return { s, connected, closed, data: () => Buffer.concat(chunks) };
}

/** A PROXY protocol header naming `src` as the client: version 1 (text) or 2 (binary, IPv4). */
function proxyHeader(version: 1 | 2, src: string, dstPort: number): Buffer {
  if (version === 1) return Buffer.from(`PROXY TCP4 ${src} 127.0.0.1 40000 ${dstPort}\r\n`);
  const h = Buffer.alloc(28);
  Buffer.from('\r\n\r\n\0\r\nQUIT\n', 'latin1').copy(h, 0);
  h[12] = 0x21; // version 2, PROXY
  h[13] = 0x11; // AF_INET, STREAM
  h.writeUInt16BE(12, 14);
  src.split('.').forEach((o, i) => (h[16 + i] = Number(o)));
  [127, 0, 0, 1].forEach((o, i) => (h[20 + i] = o));
  h.writeUInt16BE(40000, 24);
  h.writeUInt16BE(dstPort, 26);
  return h;
}

/** An HTTP/2 session with prior knowledge to `port`, after a PROXY header when one is given. */
function h2session(port: number, proxy?: Buffer): http2.ClientHttp2Session {
  const session = http2.connect(`http://127.0.0.1:${port}`, proxy ? {
    createConnection: () => {
      const s = net.connect({ host: '127.0.0.1', port });
      s.write(proxy);
      return s;
    },
  } : {});
  session.on('error', () => {}); // surfaced by the requests
  return session;
}

interface H2Answer { headers: http2.IncomingHttpHeaders & http2.IncomingHttpStatusHeader; body: Buffer; trailers: http2.IncomingHttpHeaders }

function h2request(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders, body?: Buffer): Promise<H2Answer> {
  return new Promise((resolve, reject) => {
    const req = session.request(headers);
    const chunks: Buffer[] = [];
    let head: H2Answer['headers'] = {};
    let trailers: http2.IncomingHttpHeaders = {};
    req.on('response', (h) => (head = h));
    req.on('trailers', (t) => (trailers = t));
    req.on('data', (c: Buffer) => chunks.push(c));
    let ended = false;
    req.on('end', () => {
      ended = true;
      resolve({ headers: head, body: Buffer.concat(chunks), trailers });
    });
    req.on('error', reject);
    req.on('close', () => ended || reject(new Error(`the stream closed before its end (code ${req.rstCode})`)));
    req.setTimeout(10_000, () => req.close(http2.constants.NGHTTP2_CANCEL));
    req.end(body);
  });
}

const get = (session: http2.ClientHttp2Session, p = '/') => h2request(session, { ':method': 'GET', ':path': p });
/** Closes the session; destroys it when its streams have not ended within 5 s (a failed test's). */
const closeSession = (s: http2.ClientHttp2Session) => new Promise<void>((r) => {
  const t = setTimeout(() => {
    s.destroy();
    r();
  }, 5_000);
  s.close(() => {
    clearTimeout(t);
    r();
  });
});

before(async () => {
  const v = spawnSync('curl', ['-V'], { encoding: 'utf8' }).stdout;
  assert.match(v, /^Features:.*\bHTTP2\b/m, 'curl speaks HTTP/2 (--http2-prior-knowledge)');
  // The gRPC-style backend: HTTP/2 cleartext; echoes the message, answers with headers, the body and trailers.
  backend = http2.createServer();
  backend.on('stream', (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ path: String(headers[':path']), headers, body });
      stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'x-backend': 'echo' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0', 'grpc-message': 'echoed', 'x-trailer': String(body.length) }));
      stream.end(body);
    });
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', () => r()));
  backendPort = (backend.address() as net.AddressInfo).port;
  n = await start({ generation: 1 });
});

after(async () => {
  if (n) await stop(n);
  await new Promise<void>((r) => (backend ? backend.close(() => r()) : r()));
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

test('HTTP/1.1 on a named port: 200, $server_protocol HTTP/1.1, two requests on one kept-alive connection', T, async () => {
  for (const port of [H2C, DEFERRED]) {
    const url = `http://127.0.0.1:${port}/`;
    const r = await curl(['--http1.1', '-D', '-', '-o', '/dev/null', '-o', '/dev/null', '-w', 'connects=%{num_connects}\n', url, url]);
    assert.equal(r.code, 0, `${port}: ${r.err}`);
    const [a, b] = headerBlocks(r.out.replace(/connects=\d+\n/g, ''));
    assert.ok(a && b, `${port}: two answers: ${r.out}`);
    assert.match(a.status, /^HTTP\/1\.1 200/);
    assert.match(b.status, /^HTTP\/1\.1 200/);
    assert.equal(a.headers['x-protocol'], 'HTTP/1.1');
    assert.equal(b.headers['x-protocol'], 'HTTP/1.1');
    assert.equal(a.headers['x-connection'], b.headers['x-connection'], `${port}: both requests on one connection`);
    assert.deepEqual([a.headers['x-connection-requests'], b.headers['x-connection-requests']], ['1', '2']);
    assert.deepEqual([...r.out.matchAll(/connects=(\d+)/g)].map((m) => m[1]), ['1', '0'], `${port}: curl opened one connection`);
    // A POST starts with the preface's first letter: still HTTP/1, body and all.
    const post = await curl(['--http1.1', '-d', 'x=1', '-D', '-', url.replace(/\/$/, '/p')]);
    assert.equal(post.code, 0, post.err);
    assert.match(post.out, /^HTTP\/1\.1 200/);
    assert.match(post.out, /ok POST $/);
  }
});

test('HTTP/2 with prior knowledge on a named port: 200, $server_protocol HTTP/2.0, several streams on one connection', T, async () => {
  for (const port of [H2C, DEFERRED]) {
    const r = await curl(['--http2-prior-knowledge', '-D', '-', '-o', '/dev/null', `http://127.0.0.1:${port}/`]);
    assert.equal(r.code, 0, `${port}: ${r.err}`);
    const [b] = headerBlocks(r.out);
    assert.match(b?.status ?? '', /^HTTP\/2 200/, r.out);
    assert.equal(b?.headers['x-protocol'], 'HTTP/2.0');

    // Several streams on one connection: Node's client (curl 7.88.1 cannot reuse a prior-knowledge connection for a
    // second URL: "Error in the HTTP2 framing layer", against nginx's own http2-only listen as well). Eight at once,
    // then two more after those ended.
    const session = h2session(port);
    try {
      const answers = await Promise.all([...Array(8).keys()].map((i) => get(session, `/s${i}`)));
      answers.push(await get(session, '/later'), await get(session, '/last'));
      for (const a of answers) {
        assert.equal(a.headers[':status'], 200);
        assert.equal(a.headers['x-protocol'], 'HTTP/2.0');
        assert.equal(a.body.toString(), 'ok GET ');
      }
      assert.equal(new Set(answers.map((a) => a.headers['x-connection'])).size, 1, 'ten streams, one connection');
    } finally {
      await closeSession(session);
    }
  }
});

test('gRPC-style: an h2c POST of application/grpc through grpc_pass arrives intact (path, headers, body) and its answer too (headers, body, trailers)', T, async () => {
  const message = randomBytes(100_000); // above HTTP/2's initial window: flow control on both legs
  const frame = Buffer.concat([Buffer.from([0]), Buffer.alloc(4), message]);
  frame.writeUInt32BE(message.length, 1);
  const session = h2session(H2C);
  try {
    seen.length = 0;
    const a = await h2request(session, {
      ':method': 'POST', ':path': '/portico.test.Echo/Say', 'content-type': 'application/grpc', te: 'trailers',
      'grpc-timeout': '5S', 'x-client-meta': 'm1',
    }, frame);
    assert.equal(seen.length, 1, 'the backend got the call');
    const s = seen[0]!;
    assert.equal(s.path, '/portico.test.Echo/Say');
    assert.equal(s.headers[':method'], 'POST');
    assert.equal(s.headers['content-type'], 'application/grpc');
    assert.equal(s.headers.te, 'trailers');
    assert.equal(s.headers['grpc-timeout'], '5S');
    assert.equal(s.headers['x-client-meta'], 'm1');
    assert.ok(s.body.equals(frame), `the backend got the ${frame.length}-byte frame unchanged (${s.body.length} bytes)`);

    assert.equal(a.headers[':status'], 200);
    assert.equal(a.headers['content-type'], 'application/grpc');
    assert.equal(a.headers['x-backend'], 'echo');
    assert.equal(a.headers['x-protocol'], 'HTTP/2.0');
    assert.ok(a.body.equals(frame), `the client got the echo unchanged (${a.body.length} bytes)`);
    assert.equal(a.trailers['grpc-status'], '0');
    assert.equal(a.trailers['grpc-message'], 'echoed');
    assert.equal(a.trailers['x-trailer'], String(frame.length));
  } finally {
    await closeSession(session);
  }
});

test('a port not named is as before: HTTP/1 only (the preface is an HTTP/1 error there)', T, async () => {
  const url = `http://127.0.0.1:${PLAIN}/`;
  const h1 = await curl(['--http1.1', '-D', '-', '-o', '/dev/null', url]);
  assert.equal(h1.code, 0, h1.err);
  assert.equal(headerBlocks(h1.out)[0]?.headers['x-protocol'], 'HTTP/1.1');
  const h2 = await curl(['--http2-prior-knowledge', '-o', '/dev/null', '-w', '%{http_code}', url]);
  assert.notEqual(h2.code, 0, `HTTP/2 with prior knowledge fails on ${PLAIN}`);
  assert.notEqual(h2.out, '200');
  const c = raw(PLAIN);
  await c.connected;
  c.s.write(PREFACE);
  await c.closed;
  assert.match(c.data().toString('latin1'), /^HTTP\/1\.1 400 /, 'nginx\'s HTTP/1 answer to the preface');
});

test('PROXY protocol on a named port: HTTP/1.1 and HTTP/2 after a version 1 or 2 header; the header names the client', T, async () => {
  const h1 = await curl(['--haproxy-protocol', '--http1.1', '-D', '-', '-o', '/dev/null', `http://127.0.0.1:${PP}/`]);
  assert.equal(h1.code, 0, h1.err);
  assert.equal(headerBlocks(h1.out)[0]?.headers['x-protocol'], 'HTTP/1.1');
  assert.equal(headerBlocks(h1.out)[0]?.headers['x-proxy-addr'], '127.0.0.1');
  const h2 = await curl(['--haproxy-protocol', '--http2-prior-knowledge', '-D', '-', '-o', '/dev/null', `http://127.0.0.1:${PP}/`]);
  assert.equal(h2.code, 0, h2.err);
  assert.equal(headerBlocks(h2.out)[0]?.headers['x-protocol'], 'HTTP/2.0');

  for (const [version, src] of [[1, '192.0.2.7'], [2, '198.51.100.9']] as const) {
    const session = h2session(PP, proxyHeader(version, src, PP));
    try {
      const a = await get(session);
      assert.equal(a.headers[':status'], 200, `PROXY v${version}`);
      assert.equal(a.headers['x-protocol'], 'HTTP/2.0');
      assert.equal(a.headers['x-proxy-addr'], src, `PROXY v${version}: the header's client`);
    } finally {
      await closeSession(session);
    }
    const c = raw(PP);
    await c.connected;
    c.s.write(Buffer.concat([proxyHeader(version, src, PP), Buffer.from('GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n')]));
    await c.closed;
    assert.match(c.data().toString('latin1'), /^HTTP\/1\.1 200 /);
    assert.match(c.data().toString('latin1'), new RegExp(`\r\nX-Proxy-Addr: ${src.replace(/\./g, '\\.')}\r\n`));
  }

  // A header that is not one: nginx's HTTP/1 handler refuses it as before (closes without an answer).
  const bad = raw(PP);
  await bad.connected;
  bad.s.write('PROXY nonsense\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n');
  await bad.closed;
  assert.equal(bad.data().length, 0);
  await until('the broken PROXY header is logged', () => /broken header: "PROXY nonsense/.test(errorLog()), 5_000);
});

test('bytes that arrive in pieces: the decision waits for the preface (and the PROXY header) to be complete', T, async () => {
  // The module says at debug level when it waits (Debian's nginx is built --with-debug; the log level is debug here).
  const waits = () => (errorLog().match(/portico h2c: \d+ bytes so far, waiting for more/g) ?? []).length;
  for (const [port, head] of [[H2C, Buffer.alloc(0)], [PP, proxyHeader(1, '192.0.2.44', PP)]] as const) {
    // A PROXY header cut in two, then the preface cut in two; after each piece nginx has said it waits.
    const pieces = [...(head.length ? [head.subarray(0, 9), head.subarray(9)] : []), PREFACE.subarray(0, 16), PREFACE.subarray(16)];
    const c = raw(port);
    await c.connected;
    for (const [i, piece] of pieces.entries()) {
      const before = waits();
      c.s.write(piece);
      if (i < pieces.length - 1) await until(`nginx waits after piece ${i + 1} on ${port}`, () => waits() > before, 5_000);
    }
    // HTTP/2: nginx's first frame is its SETTINGS (type 4, stream 0).
    await until(`nginx's SETTINGS frame on ${port}`, () => c.data().length >= 9, 5_000);
    const d = c.data();
    assert.equal(d[3], 4, `a SETTINGS frame first on ${port}: ${d.subarray(0, 9).toString('hex')}`);
    assert.equal(d.readUInt32BE(5) & 0x7fffffff, 0);
    c.s.destroy();
  }
  // HTTP/1 that starts like the preface: decided at the first byte that differs ("PRIX" is an unknown method).
  for (const port of [H2C, PLAIN]) {
    const c = raw(port);
    await c.connected;
    c.s.write('PRIX / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
    await c.closed;
    assert.match(c.data().toString('latin1'), /^HTTP\/1\.1 200 [^]*ok PRIX $/, `port ${port}`);
  }
});

test('a client that stalls within the preface is closed after client_header_timeout, without an answer', T, async () => {
  const c = raw(H2C);
  await c.connected;
  c.s.write(PREFACE.subarray(0, 16));
  const ms = await c.closed;
  assert.equal(c.data().length, 0, 'nothing was sent: neither an HTTP/1 error nor HTTP/2 SETTINGS');
  assert.ok(ms >= HEADER_TIMEOUT_MS - 100, `closed by the timeout (${ms} ms), not at once`);
  assert.ok(ms < HEADER_TIMEOUT_MS + 4_000, `closed soon after the timeout (${ms} ms)`);
  await until('the timeout is logged', () => /client timed out/.test(errorLog()), 5_000);
  // The same bytes on the HTTP/1 port: nginx answers at once.
  const p = raw(PLAIN);
  await p.connected;
  p.s.write(PREFACE.subarray(0, 16));
  await until('the HTTP/1 answer', () => p.data().length > 0, 5_000);
  assert.match(p.data().toString('latin1'), /^HTTP\/1\.1 [45]\d\d /);
  p.s.destroy();
});

test('garbage gets nginx\'s usual HTTP/1 400, byte for byte as on the HTTP/1 port', T, async () => {
  const answer = async (port: number, bytes: Buffer | string) => {
    const c = raw(port);
    await c.connected;
    c.s.write(bytes);
    await c.closed;
    // All but the date and the connection's number.
    return c.data().toString('latin1').replace(/\r\n(Date|X-Connection): [^\r]*/g, '');
  };
  for (const garbage of ['HELLO THERE\r\n\r\n', Buffer.from('16030100a5010000a103030000', 'hex'), '\r\n\r\n\r\nxx\r\n\r\n']) {
    const plain = await answer(PLAIN, garbage);
    assert.match(plain, /^HTTP\/1\.1 400 Bad Request\r\n/);
    for (const port of [H2C, DEFERRED]) assert.equal(await answer(port, garbage), plain, `port ${port}: ${JSON.stringify(garbage)}`);
  }
});

test('clients that close at once or mid-preface leave no error: no alert or crit, the same workers, still serving', T, async () => {
  const before = workers();
  assert.equal(before.length, 2);
  for (const port of NAMED) {
    for (let i = 0; i < 10; i++) {
      // Closed right after connecting (FIN), reset (RST), and reset after part of the preface.
      const a = raw(port);
      await a.connected;
      a.s.end();
      await a.closed;
      const b = raw(port);
      await b.connected;
      b.s.resetAndDestroy();
      await b.closed;
      const c = raw(port);
      await c.connected;
      c.s.write(PREFACE.subarray(0, 10 + i));
      c.s.resetAndDestroy();
      await c.closed;
    }
  }
  // Both paths still serve, on every named port.
  for (const port of [H2C, DEFERRED]) {
    const session = h2session(port);
    try {
      assert.equal((await get(session)).headers[':status'], 200);
    } finally {
      await closeSession(session);
    }
    assert.equal((await curl(['--http1.1', '-o', '/dev/null', '-w', '%{http_code}', `http://127.0.0.1:${port}/`])).out, '200');
  }
  assert.deepEqual(workers(), before, 'no worker died');
  assert.deepEqual(severe(), []);
});

test('a worker short of connections closes connections still waiting for their first bytes, as nginx does for HTTP/1', T, async () => {
  // nginx closes reusable connections (those waiting for a request) when a worker runs short (ngx_drain_connections:
  // fewer than 1/16 of worker_connections free): it sets c->close and runs their read handler, which here is the
  // module's. A second nginx with 16 connections and a 30 s client_header_timeout, so a close within seconds is the
  // drain's, not the timeout's.
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-h2c-drain-'));
  dirs.push(dir);
  const port = 33016;
  writeFileSync(path.join(dir, 'nginx.conf'), `daemon off;
master_process on;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log info;
load_module ${H2C_MODULE};
events { worker_connections 16; }
http {
  access_log off;
  client_header_timeout 30s;
  portico_h2c_ports ${port};
  server { listen 127.0.0.1:${port}; add_header X-Protocol $server_protocol always; location / { return 200 "ok"; } }
}
`);
  const proc = spawn('nginx', ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')], { stdio: 'ignore' });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const log = () => readFileSync(path.join(dir, 'error.log'), 'utf8');
  const idle: ReturnType<typeof raw>[] = [];
  try {
    await until('the second nginx answers', async () => (await curl(['--http1.1', '-o', '/dev/null', '-w', '%{http_code}', `http://127.0.0.1:${port}/`])).out === '200', 10_000);
    let closedEarly = -1;
    for (let i = 0; i < 20; i++) {
      const c = raw(port);
      await c.connected;
      idle.push(c);
      c.closed.then(() => closedEarly < 0 && (closedEarly = i), () => {});
    }
    await until('nginx closes a waiting connection to make room', () => closedEarly >= 0, 5_000);
    assert.equal(idle[closedEarly]!.data().length, 0, 'closed without an answer');
    await until('the shortage is logged', () => /worker_connections are not enough, reusing connections/.test(log()), 5_000);
    // New connections still get served, each making room the same way.
    const session = h2session(port);
    try {
      assert.equal((await get(session)).headers['x-protocol'], 'HTTP/2.0');
    } finally {
      await closeSession(session);
    }
    const h1 = await curl(['--http1.1', '-D', '-', '-o', '/dev/null', `http://127.0.0.1:${port}/`]);
    assert.equal(headerBlocks(h1.out)[0]?.headers['x-protocol'], 'HTTP/1.1', h1.err);
    assert.deepEqual(log().split('\n').filter((l) => /\[(alert|crit|emerg)\]/.test(l)), []);
  } finally {
    idle.forEach((c) => c.s.destroy());
    proc.kill('SIGQUIT');
    await exited;
  }
});

test('reloads: a port dropped from portico_h2c_ports is HTTP/1 only in the new workers, named again it serves both', T, async () => {
  await reload(n, { generation: 2, ports: `${DEFERRED} ${PP}` });
  const h2 = await curl(['--http2-prior-knowledge', '-o', '/dev/null', '-w', '%{http_code}', `http://127.0.0.1:${H2C}/`]);
  assert.notEqual(h2.code, 0, 'no HTTP/2 on the dropped port');
  const still = await curl(['--http2-prior-knowledge', '-D', '-', '-o', '/dev/null', `http://127.0.0.1:${DEFERRED}/`]);
  assert.equal(headerBlocks(still.out)[0]?.headers['x-generation'], '2');
  assert.equal(headerBlocks(still.out)[0]?.headers['x-protocol'], 'HTTP/2.0');

  await reload(n, { generation: 3 });
  const back = await curl(['--http2-prior-knowledge', '-D', '-', '-o', '/dev/null', `http://127.0.0.1:${H2C}/`]);
  assert.equal(back.code, 0, back.err);
  assert.equal(headerBlocks(back.out)[0]?.headers['x-generation'], '3');
  assert.equal(headerBlocks(back.out)[0]?.headers['x-protocol'], 'HTTP/2.0');
  assert.deepEqual(severe(), []);
});

test('configuration errors are refused by nginx -t with the reason', T, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-h2c-t-'));
  dirs.push(dir);
  const check = (o: Conf) => {
    writeFileSync(path.join(dir, 'nginx.conf'), conf(dir, o));
    const r = spawnSync('nginx', ['-t', '-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', 'stderr'], { encoding: 'utf8' });
    return { ok: r.status === 0, err: r.stderr };
  };
  const good = check({ generation: 0 });
  assert.ok(good.ok, good.err);
  const line = conf(dir, { generation: 0 }).split('\n').findIndex((l) => l.includes('portico_h2c_ports')) + 1;
  const ssl = 'server { listen 127.0.0.1:33014 ssl; ssl_reject_handshake on; }\n';
  const h2only = 'server { listen 127.0.0.1:33015 http2; }\n';
  const cases: [Conf, RegExp][] = [
    [{ generation: 0, ports: 'http' }, /invalid port "http" in "portico_h2c_ports": a number from 1 to 65535/],
    [{ generation: 0, ports: '0' }, /invalid port "0" in "portico_h2c_ports"/],
    [{ generation: 0, ports: '65536' }, /invalid port "65536" in "portico_h2c_ports"/],
    [{ generation: 0, ports: `${H2C} ${H2C}` }, new RegExp(`port ${H2C} is named twice in "portico_h2c_ports"`)],
    [{ generation: 0, ports: '33019' }, new RegExp(`portico_h2c_ports: no server of this http\\{\\} block listens on port 33019 in .*nginx\\.conf:${line}`)],
    [{ generation: 0, ports: '33014', extra: ssl }, /portico_h2c_ports: port 33014 listens with "ssl" on 127\.0\.0\.1:33014; HTTP\/2 over TLS is negotiated by ALPN/],
    [{ generation: 0, ports: '33015', extra: h2only }, /portico_h2c_ports: port 33015 listens with "http2" on 127\.0\.0\.1:33015, which makes it HTTP\/2 only/],
    [{ generation: 0, extra: `portico_h2c_ports ${H2C};\n` }, /"portico_h2c_ports" directive is duplicate/],
    [{ generation: 0, extra: `server { listen 127.0.0.1:33014; portico_h2c_ports 33014; }\n` }, /"portico_h2c_ports" directive is not allowed here/],
    [{ generation: 0, ports: '' }, /invalid number of arguments in "portico_h2c_ports" directive/],
  ];
  for (const [o, want] of cases) {
    const r = check(o);
    assert.equal(r.ok, false, `refused: ${want}`);
    assert.match(r.err, want);
  }
  // The same ssl and http2 listens are fine when they are not named.
  const other = check({ generation: 0, extra: ssl + h2only });
  assert.ok(other.ok, other.err);
});
