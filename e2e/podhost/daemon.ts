// The pod host: a tiny stand-in for a kubelet, running inside the test network namespace. One process serves
// every pod: for each pod it adds the pod IP (/32) to the namespace's loopback and binds an HTTP echo server to
// it. Controlled over HTTP on a unix socket (filesystem sockets work across network namespaces):
//   POST   /pods  {namespace, name, port?, tcpPort?, udpPort?}   → {ip}   (allocates the lowest free IP; tcpPort and
//          udpPort add a raw TCP / UDP echo, see startStreamEcho in echo.ts)
//   DELETE /pods/<ns>/<name>                 → stops the listener, removes the address
//   GET    /pods                             → [{namespace, name, ip, port}]
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import { existsSync, unlinkSync } from 'node:fs';
import { startEcho, startStreamEcho, type EchoServer } from './echo.ts';

const args = process.argv.slice(2);
const socket = args[args.indexOf('--socket') + 1];
if (!socket || args.indexOf('--socket') < 0) {
  process.stderr.write('usage: daemon.ts --socket <path>\n');
  process.exit(2);
}
// Pools: TEST-NET-2 (a documentation range), then 198.18.0.0/16 (RFC 2544, reserved for benchmark tests) for the
// scale benchmarks. Not TEST-NET-3: package registries may answer there on CI machines (see controlplane/env.sh). All are routed only into this namespace. (198.19.0.0/17 holds Service cluster
// IPs, see controlplane/env.sh; unit tests make their own network namespaces in 198.19.253-254.)
const POOLS = ['198.51.100', ...Array.from({ length: 256 }, (_, i) => `198.18.${i}`)];

interface Pod {
  namespace: string;
  name: string;
  ip: string;
  port: number;
  server: EchoServer;
}
const pods = new Map<string, Pod>();
const used = new Set<string>();

function allocate(): string {
  for (const p of POOLS) {
    for (let i = 10; i < 255; i++) {
      const ip = `${p}.${i}`;
      if (!used.has(ip)) return ip;
    }
  }
  throw new Error('pod IP pools exhausted');
}

function ipAddr(op: 'add' | 'del', ip: string): void {
  try {
    execFileSync('ip', ['addr', op, `${ip}/32`, 'dev', 'lo'], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    const msg = String((e as { stderr?: Buffer }).stderr ?? e);
    if (!(op === 'add' && /File exists/.test(msg)) && !(op === 'del' && /Cannot assign/.test(msg))) throw new Error(msg);
  }
}

async function readBody(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://podhost');
  const parts = url.pathname.split('/').filter(Boolean);
  if (req.method === 'GET' && url.pathname === '/pods') {
    return send(res, 200, [...pods.values()].map(({ namespace, name, ip, port }) => ({ namespace, name, ip, port })));
  }
  if (req.method === 'POST' && url.pathname === '/pods') {
    const b = (await readBody(req)) as { namespace?: string; name?: string; port?: number; delayMs?: number; status?: number; tcpPort?: number; udpPort?: number };
    if (!b.namespace || !b.name) return send(res, 400, { error: 'namespace and name required' });
    const key = `${b.namespace}/${b.name}`;
    const existing = pods.get(key);
    if (existing) return send(res, 200, { ip: existing.ip });
    const ip = allocate();
    used.add(ip);
    try {
      ipAddr('add', ip);
      const port = b.port ?? 8080;
      let server = await startEcho({ ip, port, pod: b.name, namespace: b.namespace, delayMs: b.delayMs, status: b.status });
      if (b.tcpPort || b.udpPort) {
        const web = server;
        const stream = await startStreamEcho({ ip, pod: b.name, tcpPort: b.tcpPort, udpPort: b.udpPort }).catch(async (e: unknown) => {
          await web.close();
          throw e;
        });
        server = { close: async () => void (await Promise.all([web.close(), stream.close()])) };
      }
      pods.set(key, { namespace: b.namespace, name: b.name, ip, port, server });
      return send(res, 201, { ip });
    } catch (e) {
      used.delete(ip);
      return send(res, 500, { error: String(e) });
    }
  }
  if (req.method === 'DELETE' && parts[0] === 'pods' && parts.length === 3) {
    const key = `${parts[1]}/${parts[2]}`;
    const pod = pods.get(key);
    if (!pod) return send(res, 404, { error: `no pod ${key}` });
    await pod.server.close();
    // ?keepAddress=1: the process "crashed" but the IP stays, so connections are refused at once.
    if (url.searchParams.get('keepAddress') === '1') return send(res, 200, { ip: pod.ip });
    ipAddr('del', pod.ip);
    pods.delete(key);
    used.delete(pod.ip);
    return send(res, 200, { ip: pod.ip });
  }
  send(res, 404, { error: 'not found' });
}

if (existsSync(socket)) unlinkSync(socket);
const control = http.createServer((req, res) => {
  handle(req, res).catch((e: unknown) => send(res, 500, { error: String(e) }));
});
control.listen(socket, () => process.stderr.write(`podhost listening on ${socket}\n`));

async function shutdown(): Promise<void> {
  for (const p of pods.values()) {
    await p.server.close();
    try {
      ipAddr('del', p.ip);
    } catch {
      /* namespace is going away anyway */
    }
  }
  control.close();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown());
process.on('SIGINT', () => void shutdown());
