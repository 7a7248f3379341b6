// One HTTP backend for the real-nginx tests, run by testnet.test-helpers.ts inside the test's own network namespace
// (`ip netns exec <ns> node testnet-backend.test-helpers.ts '<json>'`) and listening on the namespace's veth address.
// Argument: {name, ip, port, kind, status?, parentPid}. Kinds:
//   echo    200 with the request it received as JSON {method, url, headers} (and X-Powered-By: node)
//   status  the fixed `status` for every request, body "<name>\n"
//   auth    an auth service: "Bearer good" → 200 with X-User: alice; "Bearer forbidden" → 403; anything else → 401
//           with a Bearer challenge (200 and 401 also set a cookie when the URL holds "cookie"); paths under /slow
//           answer only after 3 s, paths under /fail answer 500
//   tls-echo  echo over HTTPS with the certificate and key files `cert`/`key` (the control path too); with
//           `clientCa` it requires a client certificate that CA signed (the handshake fails without one; the
//           control client presents the backend's own certificate, which must be signed by it too), with
//           `maxTlsVersion` it speaks no newer TLS; each request records the SNI, TLS version and client CN seen
//   rewrite 302 to "http://internal.local/next" with "Set-Cookie: sid=1; Domain=internal.local; Path=/", and the
//           request (with its HTTP version) as the JSON body: for proxy_redirect / proxy_cookie_* tests
// Every request is recorded (with its body, once read), except those to the control path CONTROL, which answers the recorded requests as JSON
// (the test counts and inspects them through it; it is also the readiness probe).
// The backend exits on its own when the test process that started it is gone (it never outlives its test).
import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import type { TLSSocket } from 'node:tls';

export const CONTROL = '/__portico_testnet/requests';

export type BackendKind = 'echo' | 'status' | 'auth' | 'tls-echo' | 'rewrite' | 'flaky';
export interface BackendArgs {
  name: string;
  ip: string;
  port: number;
  kind: BackendKind;
  status?: number;
  /** tls-echo: PEM files of the server certificate and key. */
  cert?: string;
  key?: string;
  /** tls-echo: PEM file of the CA whose client certificates are required. */
  clientCa?: string;
  /** tls-echo: the newest TLS version spoken. */
  maxTlsVersion?: 'TLSv1.2' | 'TLSv1.3';
  parentPid: number;
}
/** flaky: requests seen per id. */
const flakyCount = new Map<string, number>();

export interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  /** "1.1" or "1.0": the HTTP version of the request. */
  httpVersion?: string;
  /** tls-echo: the server name the client sent (SNI), the TLS version, the CN of its certificate (null: none). */
  tls?: { servername: string | null; protocol: string | null; clientCN: string | null };
  /** The request body (UTF-8), when it had one. */
  body?: string;
}

const SLOW_MS = 3_000;

function handler(a: BackendArgs, seen: Seen[]): http.RequestListener {
  return (req, res) => {
    if (req.url === CONTROL) {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(seen));
      return;
    }
    const s = req.socket as TLSSocket;
    const tls = a.kind === 'tls-echo' ? { servername: typeof s.servername === 'string' ? s.servername : null, protocol: s.getProtocol(), clientCN: (s.getPeerCertificate().subject?.CN as string | undefined) ?? null } : undefined;
    const entry: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, httpVersion: req.httpVersion, ...(tls ? { tls } : {}) };
    seen.push(entry);
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      if (body) entry.body = body;
    });
    switch (a.kind) {
      case 'echo':
      case 'tls-echo':
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json', 'x-powered-by': 'node' });
          res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers }));
        });
        return;
      case 'rewrite':
        req.on('end', () => {
          res.writeHead(302, { location: 'http://internal.local/next', 'set-cookie': 'sid=1; Domain=internal.local; Path=/', 'content-type': 'application/json' });
          res.end(JSON.stringify({ method: req.method, url: req.url, httpVersion: req.httpVersion, headers: req.headers }));
        });
        return;
      case 'status':
        res.writeHead(a.status ?? 200, { 'content-type': 'text/plain' }).end(`${a.name}\n`);
        return;
      case 'flaky': {
        // "?id=<x>&fail=<n>&code=<c>": the first n requests with that id are answered <c> (default 500), then 200.
        const q = new URL(req.url ?? '/', 'http://x').searchParams;
        const id = q.get('id') ?? '';
        const n = (flakyCount.get(id) ?? 0) + 1;
        flakyCount.set(id, n);
        const fail = Number(q.get('fail') ?? '0');
        res.writeHead(n <= fail ? Number(q.get('code') ?? '500') : 200, { 'content-type': 'text/plain' }).end(`attempt ${n}\n`);
        return;
      }
      case 'auth': {
        const auth = req.headers.authorization;
        const cookie = (v: string): Record<string, string> => (req.url?.includes('cookie') ? { 'set-cookie': `portico_auth=${v}; Path=/` } : {});
        if (req.url?.startsWith('/slow')) setTimeout(() => res.writeHead(200).end(), SLOW_MS);
        else if (req.url?.startsWith('/fail')) res.writeHead(500, { 'content-type': 'text/plain' }).end('broken');
        else if (auth === 'Bearer good') res.writeHead(200, { 'x-user': 'alice', 'x-internal': 'secret', ...cookie('ok') }).end();
        else if (auth === 'Bearer forbidden') res.writeHead(403, { 'content-type': 'text/plain' }).end('no');
        else res.writeHead(401, { 'www-authenticate': 'Bearer realm="portico-test"', 'x-internal': 'secret', ...cookie('retry') }).end('who?');
        return;
      }
    }
  };
}

function main(): void {
  const a = JSON.parse(process.argv[2] ?? '') as BackendArgs;
  const seen: Seen[] = [];
  const server =
    a.kind === 'tls-echo'
      ? https.createServer(
          {
            cert: readFileSync(a.cert ?? ''),
            key: readFileSync(a.key ?? ''),
            ...(a.clientCa ? { ca: readFileSync(a.clientCa), requestCert: true, rejectUnauthorized: true } : {}),
            ...(a.maxTlsVersion ? { maxVersion: a.maxTlsVersion } : {}),
          },
          handler(a, seen),
        )
      : http.createServer(handler(a, seen));
  server.on('error', (e) => {
    process.stderr.write(`backend ${a.name} on ${a.ip}:${a.port}: ${String(e)}\n`);
    process.exit(1);
  });
  server.listen(a.port, a.ip);
  // `ip netns exec` execs this process in place, so the test process is the parent: once it is gone (killed
  // without running its teardown) the parent changes, and this backend goes too.
  setInterval(() => {
    if (process.ppid !== a.parentPid) process.exit(0);
  }, 500).unref();
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => process.exit(0));
}

if (import.meta.main) main();
