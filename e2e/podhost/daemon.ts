// The pod host: a tiny stand-in for a kubelet, running inside the test network namespace. One process serves
// every pod: for each pod it adds the pod IP (/32) to the namespace's loopback and binds an HTTP echo server to
// it. Controlled over HTTP on a unix socket (filesystem sockets work across network namespaces):
//   POST   /pods  {namespace, name, port?, tcpPort?, udpPort?, tls?, h2c?, blackhole?}   → {ip}   (allocates the
//          lowest free IP; tcpPort and udpPort add a raw TCP / UDP echo, see startStreamEcho in echo.ts; tls / h2c
//          serve HTTPS or cleartext HTTP/2, see echo.ts; blackhole: the address exists but every packet to it is
//          dropped — no listener, connections to it time out, as to a node that vanished)
//   GET    /pods/<ns>/<name>/requests        → the requests the pod received (last 500, oldest first)
//   DELETE /pods/<ns>/<name>                 → stops the listener, removes the address
//   GET    /pods                             → [{namespace, name, ip, port}]
//   POST   /vips  {ip, port, targetIp, targetPort}   → a Service's cluster IP: the address on this namespace's
//          loopback and a TCP forwarder to one pod (what kube-proxy's userspace mode did); DELETE /vips/<ip>:<port>
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import { existsSync, unlinkSync } from 'node:fs';
import net from 'node:net';
import { startEcho, startStreamEcho, type EchoServer, type EchoTls, type SeenRequest } from './echo.ts';

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
  seen: SeenRequest[];
  blackhole?: boolean;
}
const vips = new Map<string, { ip: string; close(): Promise<void> }>();
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

/** Drops (or stops dropping) every packet to ip in this namespace: connections to it time out. */
function blackholeRule(op: 'add' | 'del', ip: string): void {
  try {
    execFileSync('iptables', ['-w', op === 'add' ? '-I' : '-D', 'INPUT', '-d', `${ip}/32`, '-j', 'DROP'], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    if (op === 'add') throw new Error(String((e as { stderr?: Buffer }).stderr ?? e));
  }
}

/** A TCP forwarder from ip:port to target (one Service port of a cluster IP). */
function startForwarder(ip: string, port: number, targetIp: string, targetPort: number): Promise<{ close(): Promise<void> }> {
  const conns = new Set<net.Socket>();
  const server = net.createServer((c) => {
    const up = net.connect(targetPort, targetIp);
    conns.add(c).add(up);
    const done = () => { c.destroy(); up.destroy(); conns.delete(c); conns.delete(up); };
    c.on('error', done).on('close', done);
    up.on('error', done).on('close', done);
    c.pipe(up).pipe(c);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, ip, () => resolve({
      close: () => new Promise<void>((r) => { server.close(() => r()); for (const s of conns) s.destroy(); }),
    }));
  });
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
  if (req.method === 'GET' && parts[0] === 'pods' && parts.length === 4 && parts[3] === 'requests') {
    const pod = pods.get(`${parts[1]}/${parts[2]}`);
    if (!pod) return send(res, 404, { error: `no pod ${parts[1]}/${parts[2]}` });
    return send(res, 200, pod.seen);
  }
  if (req.method === 'POST' && url.pathname === '/vips') {
    const b = (await readBody(req)) as { ip?: string; port?: number; targetIp?: string; targetPort?: number };
    if (!b.ip || !b.port || !b.targetIp || !b.targetPort) return send(res, 400, { error: 'ip, port, targetIp and targetPort required' });
    const key = `${b.ip}:${b.port}`;
    if (vips.has(key)) return send(res, 409, { error: `vip ${key} exists` });
    ipAddr('add', b.ip);
    vips.set(key, { ip: b.ip, ...(await startForwarder(b.ip, b.port, b.targetIp, b.targetPort)) });
    return send(res, 201, { ip: b.ip });
  }
  if (req.method === 'DELETE' && parts[0] === 'vips' && parts.length === 2) {
    const v = vips.get(parts[1] as string);
    if (!v) return send(res, 404, { error: `no vip ${parts[1]}` });
    await v.close();
    vips.delete(parts[1] as string);
    if (![...vips.values()].some((o) => o.ip === v.ip)) ipAddr('del', v.ip);
    return send(res, 200, { ip: v.ip });
  }
  if (req.method === 'POST' && url.pathname === '/pods') {
    const b = (await readBody(req)) as { namespace?: string; name?: string; port?: number; delayMs?: number; status?: number; tcpPort?: number; udpPort?: number; tls?: EchoTls; h2c?: boolean; blackhole?: boolean };
    if (!b.namespace || !b.name) return send(res, 400, { error: 'namespace and name required' });
    const key = `${b.namespace}/${b.name}`;
    const existing = pods.get(key);
    if (existing) return send(res, 200, { ip: existing.ip });
    const ip = allocate();
    used.add(ip);
    try {
      ipAddr('add', ip);
      const port = b.port ?? 8080;
      const seen: SeenRequest[] = [];
      if (b.blackhole) {
        blackholeRule('add', ip);
        pods.set(key, { namespace: b.namespace, name: b.name, ip, port, seen, blackhole: true, server: { close: async () => blackholeRule('del', ip) } });
        return send(res, 201, { ip });
      }
      let server = await startEcho({ ip, port, pod: b.name, namespace: b.namespace, delayMs: b.delayMs, status: b.status, tls: b.tls, h2c: b.h2c, seen });
      if (b.tcpPort || b.udpPort) {
        const web = server;
        const stream = await startStreamEcho({ ip, pod: b.name, tcpPort: b.tcpPort, udpPort: b.udpPort }).catch(async (e: unknown) => {
          await web.close();
          throw e;
        });
        server = { close: async () => void (await Promise.all([web.close(), stream.close()])) };
      }
      pods.set(key, { namespace: b.namespace, name: b.name, ip, port, server, seen });
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
  for (const v of vips.values()) await v.close();
  control.close();
  process.exit(0);
}
// One pod's failure (a bug in an echo server) must not take every pod of every suite down with the daemon.
process.on('uncaughtException', (e) => process.stderr.write(`podhost: uncaught ${e.stack ?? String(e)}\n`));
process.on('SIGTERM', () => void shutdown());
process.on('SIGINT', () => void shutdown());
