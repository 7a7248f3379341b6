// The data plane end to end (real apiserver, Portico as its ServiceAccount, real nginx, echo pods on pod IPs):
// WebSockets and HTTP/2 through Portico, forwarded headers, upstream keep-alive, generic 503s, and a
// configuration API that nothing over TCP reaches. Port base 31080 (http, https, status, health).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Agent, WebSocket } from 'undici';
import { ensureCluster, kubectl, uniqueNamespace } from './harness/cluster.ts';
import { addPod, deleteNamespace } from './harness/pods.ts';
import { request, until } from './harness/http.ts';
import { startPortico, type RunningPortico } from './harness/portico.ts';
import { groupMembers } from '../reconcilers/nginx-driver/nginx/procgroup.ts';
import { emptyDelta } from '../reconcilers/translate/diff.ts';

const BASE = 31080;
let p: RunningPortico | undefined;
let ns: string;
const SUF = `dp${Date.now().toString(36)}.test`;
const apply = (yaml: string) => kubectl(['apply', '-f', '-'], yaml);
const portico = (): RunningPortico => {
  if (!p) throw new Error('Portico is not running');
  return p;
};

function service(name: string, app: string): string {
  return `apiVersion: v1\nkind: Service\nmetadata: { name: ${name}, namespace: ${ns} }\nspec:\n  selector: { app: ${app} }\n  ports: [{ name: http, port: 80, targetPort: http }]\n`;
}
function ingress(name: string, host: string, svc: string, extra = ''): string {
  return `apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: { name: ${name}, namespace: ${ns} }\nspec:\n  ingressClassName: portico\n${extra}  rules:\n    - host: ${host}\n      http:\n        paths:\n          - { path: /, pathType: Prefix, backend: { service: { name: ${svc}, port: { number: 80 } } } }\n`;
}
type Echo = { pod: string; headers: Record<string, string>; remotePort: number };

before(async () => {
  await ensureCluster();
  ns = await uniqueNamespace('dp');
  p = await startPortico(BASE);
  await until('portico ready', async () => (await request(BASE + 3, 'x', '/readyz')).status === 200);
  apply(service('echo', 'echo'));
  await addPod(ns, 'echo-1', { labels: { app: 'echo' } });
});

after(async () => {
  await p?.stop();
  if (ns) await deleteNamespace(ns);
});

describe('protocols', () => {
  test('a WebSocket echo through Portico: Upgrade and Connection reach the pod, messages come back', async () => {
    const host = `ws.${SUF}`;
    apply(ingress('ws', host, 'echo'));
    await until('ws host served', async () => (await request(BASE, host, '/')).status === 200);
    // Every name resolves to Portico's loopback listener, so the Host header is the test host.
    const lookup: net.LookupFunction = (_host, o, cb) => (o.all ? cb(null, [{ address: '127.0.0.1', family: 4 }]) : cb(null, '127.0.0.1', 4));
    const dispatcher = new Agent({ connect: { lookup } });
    try {
      const ws = new WebSocket(`ws://${host}:${BASE}/chat`, { dispatcher });
      const messages: string[] = [];
      ws.addEventListener('message', (e) => messages.push(String(e.data)));
      const next = async (n: number) => {
        await until(`message ${n}`, () => messages.length >= n, 10_000, 10);
        return messages[n - 1] as string;
      };
      await new Promise<void>((resolve, reject) => {
        ws.addEventListener('open', () => resolve());
        ws.addEventListener('error', () => reject(new Error('WebSocket handshake through Portico failed')));
      });
      const hello = JSON.parse(await next(1)) as { pod: string; path: string; headers: Record<string, string> };
      assert.equal(hello.pod, 'echo-1');
      assert.equal(hello.path, '/chat');
      assert.equal(hello.headers.upgrade, 'websocket');
      assert.match(hello.headers.connection ?? '', /upgrade/i);
      ws.send('hello through portico');
      assert.equal(await next(2), 'hello through portico');
      const big = 'x'.repeat(70_000);
      ws.send(big);
      assert.equal(await next(3), big, 'a large (64-bit length) frame round-trips');
      ws.close(1000);
    } finally {
      await dispatcher.close();
    }
  });

  test('HTTP/2 is negotiated by ALPN on the TLS listener and proxies to the pod', async () => {
    const host = `h2.${SUF}`;
    const dir = mkdtempSync(path.join(tmpdir(), 'portico-h2-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', `/CN=${host}`,
      '-addext', `subjectAltName=DNS:${host}`, '-keyout', path.join(dir, 'k.pem'), '-out', path.join(dir, 'c.pem')], { stdio: 'ignore' });
    kubectl(['-n', ns, 'create', 'secret', 'tls', 'h2-tls', `--cert=${path.join(dir, 'c.pem')}`, `--key=${path.join(dir, 'k.pem')}`]);
    apply(ingress('h2', host, 'echo', `  tls: [{ hosts: [${host}], secretName: h2-tls }]\n`));
    const ca = readFileSync(path.join(dir, 'c.pem'));
    const once = () =>
      new Promise<{ alpn: string | false | undefined; status: number; body: string }>((resolve, reject) => {
        const session = http2.connect(`https://127.0.0.1:${BASE + 1}`, { servername: host, ca });
        session.on('error', reject);
        session.on('connect', () => {
          const alpn = session.alpnProtocol;
          const req = session.request({ ':path': '/h2', ':authority': host });
          let status = 0;
          let body = '';
          req.on('response', (h) => (status = Number(h[':status'])));
          req.setEncoding('utf8');
          req.on('data', (d: string) => (body += d));
          req.on('end', () => {
            session.close();
            resolve({ alpn, status, body });
          });
          req.on('error', reject);
          req.end();
        });
      });
    const r = await until('h2 served with the Secret\'s certificate', async () => {
      const x = await once();
      return x.status === 200 && x;
    });
    assert.equal(r.alpn, 'h2');
    const echo = JSON.parse(r.body) as Echo;
    assert.equal(echo.pod, 'echo-1');
    assert.equal(echo.headers['x-forwarded-proto'], 'https');
    assert.equal(echo.headers['x-forwarded-port'], '443', 'the port the client used behind a Service, not nginx\'s');
  });
});

describe('headers and connections', () => {
  test('X-Forwarded-For is the client address (a client\'s own header is dropped); X-Forwarded-Port the published port', async () => {
    const host = `fwd.${SUF}`;
    apply(ingress('fwd', host, 'echo'));
    const r = await until('fwd served', async () => {
      const x = await request(BASE, host, '/', { headers: { 'X-Forwarded-For': '203.0.113.66', 'X-Forwarded-Port': '1', 'X-Forwarded-Proto': 'https', 'X-Real-IP': '203.0.113.67' } });
      return x.status === 200 && x;
    });
    const h = r.json<Echo>().headers;
    assert.equal(h['x-forwarded-for'], '127.0.0.1');
    assert.equal(h['x-real-ip'], '127.0.0.1');
    assert.equal(h['x-forwarded-port'], '80');
    assert.equal(h['x-forwarded-proto'], 'http');
    assert.equal(h.upgrade, undefined, 'no Upgrade header on a plain request');
    assert.doesNotMatch(h.connection ?? '', /upgrade|close/i, 'Connection stays empty: keep-alive to the pod');
  });

  test('plain requests reuse upstream keep-alive connections (Connection is not forced to close or upgrade)', async () => {
    const host = `ka.${SUF}`;
    apply(ingress('ka', host, 'echo'));
    await until('ka served', async () => (await request(BASE, host, '/')).status === 200);
    // One client connection lands on one nginx worker, which should reuse its idle upstream connection.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const ports = new Set<number>();
    for (let i = 0; i < 8; i++) {
      const port = await new Promise<number>((resolve, reject) => {
        http
          .get({ host: '127.0.0.1', port: BASE, path: '/', agent, headers: { host } }, (res) => {
            let b = '';
            res.on('data', (d: Buffer) => (b += d.toString()));
            res.on('end', () => resolve((JSON.parse(b) as Echo).remotePort));
          })
          .on('error', reject);
      });
      ports.add(port);
    }
    agent.destroy();
    assert.equal(ports.size, 1, `8 requests used ${ports.size} upstream connections`);
  });

  test('cookie affinity: the first answer sets the cookie (from the balancer), later requests stay on that pod', async () => {
    const host = `sticky.${SUF}`;
    apply(service('sticky', 'sticky'));
    await addPod(ns, 'sticky-1', { labels: { app: 'sticky' } });
    await addPod(ns, 'sticky-2', { labels: { app: 'sticky' } });
    apply(`apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: sticky\n  namespace: ${ns}\n  annotations: { nginx.ingress.kubernetes.io/affinity: cookie, nginx.ingress.kubernetes.io/session-cookie-name: STICKY }\nspec:\n  ingressClassName: portico\n  rules:\n    - host: ${host}\n      http:\n        paths:\n          - { path: /, pathType: Prefix, backend: { service: { name: sticky, port: { number: 80 } } } }\n`);
    await until('both pods serve', async () => ((await portico().gateway.dynamic.getBackends())[`${ns}_sticky_80`] as { endpoints: unknown[] } | undefined)?.endpoints.length === 2);
    const first = await until('a cookie is set', async () => {
      const r = await request(BASE, host, '/');
      return r.status === 200 && String(r.headers['set-cookie'] ?? '').startsWith('STICKY=') && r;
    });
    const cookie = String(first.headers['set-cookie']).split(';')[0] as string;
    assert.match(String(first.headers['set-cookie']), /^STICKY=[0-9a-f]+; Path=\/; HttpOnly/);
    const pods = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const r = await request(BASE, host, '/', { headers: { cookie } });
      assert.equal(r.headers['set-cookie'], undefined, 'no new cookie for a returning client');
      pods.add(r.json<Echo>().pod);
    }
    assert.equal(pods.size, 1, `one pod for one cookie, got ${[...pods].join(', ')}`);
  });

  test('503 answers are generic: no Service, namespace or reason reaches the client', async () => {
    const host = `gone.${SUF}`;
    apply(`apiVersion: v1\nkind: Service\nmetadata: { name: empty, namespace: ${ns} }\nspec:\n  selector: { app: nobody-has-this-label }\n  ports: [{ name: http, port: 80, targetPort: http }]\n`);
    apply(`apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: { name: gone, namespace: ${ns} }\nspec:\n  ingressClassName: portico\n  rules:\n    - host: ${host}\n      http:\n        paths:\n          - { path: /missing, pathType: Prefix, backend: { service: { name: secret-payments-svc, port: { number: 80 } } } }\n          - { path: /empty, pathType: Prefix, backend: { service: { name: empty, port: { number: 80 } } } }\n`);
    const internal = new RegExp(`secret-payments-svc|empty|not found|endpoints|${ns}`);
    for (const pathname of ['/missing', '/empty']) {
      const r = await until(`${pathname} answers 503`, async () => {
        const x = await request(BASE, host, pathname);
        return x.status === 503 && x;
      });
      assert.doesNotMatch(r.body, internal, `${pathname}: ${r.body}`);
      assert.match(r.body, /503 Service Temporarily Unavailable/);
      for (const name of Object.keys(r.headers)) assert.doesNotMatch(name, /portico/i, `${pathname}: header ${name}`);
    }
  });
});

describe('configuration API', () => {
  test('not reachable over TCP, and a backend pointing at loopback (ExternalName localhost → status port) gets no peer', async () => {
    const status = BASE + 2;
    assert.equal((await request(status, 'x', '/healthz')).status, 200);
    for (const api of ['/portico/backends', '/portico/certificates', '/portico/config']) {
      assert.equal((await request(status, 'x', api)).status, 404, `GET ${api} on the status port`);
      assert.equal((await request(status, 'x', api, { method: 'POST', body: '{"upsert":{}}' })).status, 404, `POST ${api} on the status port`);
    }
    const host = `loop.${SUF}`;
    apply(`apiVersion: v1\nkind: Service\nmetadata: { name: loop, namespace: ${ns} }\nspec:\n  type: ExternalName\n  externalName: localhost\n  ports: [{ name: http, port: ${status} }]\n`);
    apply(`apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: { name: loop, namespace: ${ns} }\nspec:\n  ingressClassName: portico\n  rules:\n    - host: ${host}\n      http:\n        paths:\n          - { path: /, pathType: Prefix, backend: { service: { name: loop, port: { number: ${status} } } } }\n`);
    await until('the Ingress is programmed', async () => (await portico().gateway.dynamic.getBackends())[`${ns}_loop_${status}`] !== undefined);
    const echoEndpoints = async () => JSON.stringify((await portico().gateway.dynamic.getBackends())[`${ns}_echo_80`]);
    const before = await echoEndpoints();
    for (const api of ['/portico/backends', '/healthz']) {
      const r = await request(BASE, host, api);
      assert.equal(r.status, 503, `${api} through the loopback backend: ${r.status} ${r.body.slice(0, 200)}`);
    }
    const r = await request(BASE, host, '/portico/backends', { method: 'POST', body: JSON.stringify({ upsert: { [`${ns}_echo_80`]: { endpoints: [{ address: '192.0.2.1', port: 80 }] } } }) });
    assert.equal(r.status, 503);
    assert.equal(await echoEndpoints(), before, 'the backend the request tried to reprogram is unchanged');
    // The second end: even if the control plane handed Lua a loopback endpoint, nginx never gets it as a peer.
    const id = `${ns}_loop_${status}`;
    const refusedBefore = (await portico().gateway.dynamic.getConfig()).rejectedEndpoints;
    await portico().gateway.dynamic.push({
      ...emptyDelta(),
      backends: { upsert: { [id]: { id, balance: 'round_robin', endpoints: [{ address: '127.0.0.1', port: status, weight: 1 }, { address: '::ffff:127.0.0.1', port: status, weight: 1 }] } }, remove: [] },
    });
    assert.equal((await portico().gateway.dynamic.getConfig()).rejectedEndpoints, refusedBefore + 2, 'both refused and counted');
    assert.equal((await request(BASE, host, '/healthz')).status, 503);
  });
});

describe('shutdown', () => {
  test('stopping Portico leaves no nginx process of its group and frees the ports', async () => {
    const pgid = portico().gateway.nginx.pid;
    assert.ok(pgid);
    assert.ok(groupMembers(pgid).length >= 2);
    await portico().stop();
    p = undefined;
    assert.deepEqual(groupMembers(pgid), []);
    for (const port of [BASE, BASE + 1, BASE + 2]) {
      const free = await new Promise<boolean>((resolve) => {
        const s = net.createServer();
        s.once('error', () => resolve(false));
        s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
      });
      assert.ok(free, `port ${port} is free`);
    }
  });
});
