// The router's native path inside a real nginx (Debian's, with Portico's variables module): once the Lua router has
// routed a request for a host in a worker, that worker routes the host's plain routes in C
// (ngx_http_portico_vars_route.c) without running set_by_lua, and leaves everything else to the router. What is observed,
// request by request, in the access log ($portico_routed_natively and $pid next to $upstream_addr): each request reaches
// the backend nginx's location rules give it whichever path routed it; after a worker's first request for a plain host,
// every later one of that worker is native (HTTPS too, with HSTS for a host with a TLS section); what the native path
// must leave to the router (the redirect to HTTPS, nginx's "/foo" → "/foo/" redirect, regex hosts, unmatched paths) is
// answered as before, on every request; a name served through a wildcard is routed natively as a name of its own; a route's own proxy timeouts hold on the native path; and
// a change of routes or endpoints, pushed without a reload, is followed from the very next request.
// Backends live in this file's network namespace (subnet 223). Ports 38700-38706 belong to this file: nginx
// 38700-38702, the backends 38703 (web), 38704 (api), 38705 (web after its endpoints change) and 38706 (slow: its
// paths under /slow answer after 3 s).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../../model/global-config.ts';
import { diffConfig } from '../../translate/diff.ts';
import { translate } from '../../translate/translate.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { makeCa, issue } from '../../translate/pki.test-helpers.ts';
import { TestNet } from './testnet.test-helpers.ts';
import { capturingLogger, liveNginx, loggedLines, sendTo, startLive, stopLive } from './live.test-helpers.ts';

const LISTEN = { httpPort: 38700, httpsPort: 38701, statusPort: 38702, address: '127.0.0.1' };
const WEB = 38703;
const API = 38704;
const WEB_MOVED = 38705;
const SLOW = 38706;
const net = new TestNet(223);
const { logger } = capturingLogger();
const { dir, dynamic, nginx } = liveNginx('portico-native-route-', logger);
const ca = makeCa(dir, 'test-ca');
const cert = issue(dir, ca, 'tls.test', ['tls.test']);

function config(o: { webPort: number; apiPathTo: 'api' | 'web' }): GatewayConfig {
  const cfg = parseGlobalConfig({ 'log-format-upstream': '$request_uri $status $upstream_addr n=$portico_routed_natively pid=$pid' }, defaultGlobalConfig());
  assert.deepEqual(cfg.errors, []);
  const ingresses: KubeObject[] = [
    ing('plain', { rules: [rule('plain.test', [
      { path: '/', backend: svcRef('web', 80) },
      { path: '/api', backend: svcRef(o.apiPathTo, 80) },
      { path: '/exact', pathType: 'Exact', backend: svcRef('api', 80) },
    ])] }),
    ing('secure', { rules: [rule('secure.test', [{ path: '/', backend: svcRef('web', 80) }])] }, {
      annotations: { 'nginx.ingress.kubernetes.io/force-ssl-redirect': 'true' },
    }),
    ing('slash', { rules: [rule('slash.test', [{ path: '/docs/', pathType: 'ImplementationSpecific', backend: svcRef('api', 80) }, { path: '/', backend: svcRef('web', 80) }])] }),
    // A host with a TLS section: HTTPS is served (with HSTS, which needs $portico_tls_host), plain HTTP redirected.
    ing('tls', { rules: [rule('tls.test', [{ path: '/', backend: svcRef('web', 80) }])], tls: [{ hosts: ['tls.test'], secretName: 'tls' }] }),
    // proxy-read-timeout: the route's own timeouts, which nginx applies to the request natively.
    ing('timeout', { rules: [rule('timeout.test', [{ path: '/', backend: svcRef('slow', 80) }])] }, {
      annotations: { 'nginx.ingress.kubernetes.io/proxy-read-timeout': '1' },
    }),
    ing('wild', { rules: [rule('*.wild.test', [{ path: '/', backend: svcRef('api', 80) }])] }),
    ing('rx', { rules: [rule('rx.test', [
      { path: '/r[0-9]+', pathType: 'ImplementationSpecific', backend: svcRef('api', 80) },
      { path: '/', pathType: 'ImplementationSpecific', backend: svcRef('web', 80) },
    ])] }, { annotations: { 'nginx.ingress.kubernetes.io/use-regex': 'true' } }),
  ];
  const m = modelOf({
    services: [
      svc('web', [{ name: 'http', port: 80, targetPort: 'http' }]), svc('api', [{ name: 'http', port: 80, targetPort: 'http' }]),
      svc('slow', [{ name: 'http', port: 80, targetPort: 'http' }]),
    ],
    slices: [
      slice('web-1', 'web', [{ name: 'http', port: o.webPort }], [{ ip: net.ip }]),
      slice('api-1', 'api', [{ name: 'http', port: API }], [{ ip: net.ip }]),
      slice('slow-1', 'slow', [{ name: 'http', port: SLOW }], [{ ip: net.ip }]),
    ],
    ingresses,
  });
  m.setGlobalConfig(cfg.values);
  m.setSecret({ key: 'default/tls', ok: true, cert: cert.cert, privateKey: cert.key, hosts: ['tls.test'], notAfter: new Date(Date.now() + 86400_000).toISOString(), fingerprint: 'tls' } as Parameters<typeof m.setSecret>[0]);
  return translate(m.snapshot(), { ...OPTS, listen: LISTEN }).config;
}

let running: GatewayConfig;
before(async () => {
  net.up();
  await net.start('web', WEB, 'echo');
  await net.start('api', API, 'echo');
  await net.start('moved', WEB_MOVED, 'echo');
  await net.start('slow', SLOW, 'auth');
  running = config({ webPort: WEB, apiPathTo: 'api' });
  await startLive(nginx, dynamic, running);
});
after(() => stopLive(nginx, dynamic, net));

interface Line { uri: string; status: number; addr: string; native: boolean; pid: string }
/** The access log's lines for the given URIs (each unique), in the order written, once all are there. */
function logged(uris: string[]): Promise<Line[]> {
  return loggedLines(nginx, uris, (l) => {
    const m = /^(\S+) (\d+) (\S+) n=(1?) pid=(\d+)$/.exec(l);
    return m ? { uri: m[1]!, item: { uri: m[1]!, status: Number(m[2]), addr: m[3]!, native: m[4] === '1', pid: m[5]! } } : null;
  });
}

const at = (port: number) => `${net.ip}:${port}`;
let seq = 0;
/** n requests to host for path + a unique query (so each has a line of its own), one at a time, each on its own
 * connection (the workers take turns). Returns the URIs sent. */
async function send(host: string, path: string, n: number, expectStatus = 200, headers: Record<string, string> = {}): Promise<string[]> {
  const uris: string[] = [];
  for (let i = 0; i < n; i++) {
    const uri = `${path}?n=${seq++}`;
    const a = await sendTo(LISTEN.httpPort, host, uri, { headers });
    assert.equal(a.status, expectStatus, `${host}${uri}: ${a.status}`);
    uris.push(uri);
  }
  return uris;
}

/** Every line after its worker's first one is native (the first of a worker registers the host: the router ran). */
function nativeAfterFirst(lines: Line[], what: string): void {
  const seenPid = new Set<string>();
  for (const l of lines) {
    if (seenPid.has(l.pid)) assert.ok(l.native, `${what}: ${l.uri} (worker ${l.pid}) was routed by the router, not natively`);
    seenPid.add(l.pid);
  }
  assert.ok(lines.filter((l) => l.native).length >= lines.length - seenPid.size && lines.some((l) => l.native), `${what}: no request was routed natively`);
}

test('plain routes: nginx\'s location rules (exact, longest prefix, element-wise), natively after a worker\'s first request', async () => {
  const cases: [string, number][] = [['/', WEB], ['/x/y', WEB], ['/api', API], ['/api/v1', API], ['/apix', WEB], ['/exact', API], ['/exact/', WEB], ['/exactly', WEB]];
  // Warm every worker up first (a worker's first request for the host goes through the router), then the cases.
  const warm = await send('plain.test', '/warm', 12);
  const sent: [string, number][] = [];
  for (let round = 0; round < 3; round++) {
    for (const [path, port] of cases) for (const uri of await send('plain.test', path, 1)) sent.push([uri, port]);
  }
  const lines = await logged([...warm, ...sent.map(([u]) => u)]);
  const byUri = new Map(lines.map((l) => [l.uri, l]));
  for (const [uri, port] of sent) assert.equal(byUri.get(uri)!.addr, at(port), `${uri} went to ${byUri.get(uri)!.addr}`);
  nativeAfterFirst(lines, 'plain.test');
});

test('what the native path leaves to the router is answered by it on every request', async () => {
  // force-ssl-redirect: plain HTTP is redirected, every time (the native path never serves it).
  for (let i = 0; i < 6; i++) {
    const a = await sendTo(LISTEN.httpPort, 'secure.test', `/s?i=${i}`);
    assert.equal(a.status, 308, `secure.test request ${i}`);
    assert.match(String(a.headers.location), /^https:\/\/secure\.test\/s\?i=\d$/);
  }
  // nginx's "/docs" → "/docs/" redirect of a prefix written with its slash; the paths under it are plain.
  for (let i = 0; i < 6; i++) {
    const a = await sendTo(LISTEN.httpPort, 'slash.test', '/docs');
    assert.equal(a.status, 301, `slash.test /docs request ${i}`);
  }
  const docs = await send('slash.test', '/docs/a', 8);
  // A name served through a wildcard: registered under that name (native after a worker's first request for it).
  const wild = await send('a.wild.test', '/w', 8);
  const wild2 = await send('b.wild.test', '/w', 8);
  // A host with regex paths: routed by the router, every request.
  const rxApi = await send('rx.test', '/r12', 6);
  const rxWeb = await send('rx.test', '/other', 6);
  // No path of a plain host's: 404 (plain.test has "/", so an unknown host; its requests are the router's too).
  await send('nothing.test', '/', 4, 404);
  const lines = await logged([...docs, ...wild, ...wild2, ...rxApi, ...rxWeb]);
  const of = (uris: string[]) => lines.filter((l) => uris.includes(l.uri));
  for (const l of of(docs)) assert.equal(l.addr, at(API), l.uri);
  nativeAfterFirst(of(docs), 'slash.test /docs/a');
  for (const l of of([...wild, ...wild2])) assert.equal(l.addr, at(API), l.uri);
  nativeAfterFirst(of(wild), 'a.wild.test');
  nativeAfterFirst(of(wild2), 'b.wild.test');
  for (const l of of(rxApi)) assert.equal(l.addr, at(API), l.uri);
  for (const l of of(rxWeb)) assert.equal(l.addr, at(WEB), l.uri);
  for (const l of [...of(rxApi), ...of(rxWeb)]) assert.equal(l.native, false, `${l.uri}: a regex host's prefix path was routed natively`);
});

/** A GET over HTTPS to nginx's TLS port for `host` (the test CA's certificate is not checked). */
function getTls(host: string, uri: string): Promise<{ status: number; hsts: string | undefined }> {
  return new Promise((resolve, reject) => {
    https.get({ host: '127.0.0.1', port: LISTEN.httpsPort, path: uri, servername: host, headers: { host }, rejectUnauthorized: false, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, hsts: res.headers['strict-transport-security'] as string | undefined }));
    }).on('error', reject);
  });
}

test('a host with a TLS section: HTTPS served natively with HSTS on every answer; plain HTTP redirected on every request', async () => {
  const uris: string[] = [];
  for (let i = 0; i < 10; i++) {
    const uri = `/t?n=${seq++}`;
    const a = await getTls('tls.test', uri);
    assert.equal(a.status, 200, uri);
    assert.equal(a.hsts, 'max-age=31536000; includeSubDomains', `${uri}: HSTS missing (is $portico_tls_host written natively?)`);
    uris.push(uri);
  }
  for (let i = 0; i < 4; i++) assert.equal((await sendTo(LISTEN.httpPort, 'tls.test', `/t?plain=${i}`)).status, 308);
  const lines = await logged(uris);
  for (const l of lines) assert.equal(l.addr, at(WEB), l.uri);
  nativeAfterFirst(lines, 'tls.test over HTTPS');
});

test('an Upgrade on a plain route is proxied as before (the router decides only for routes that refuse it)', async () => {
  const uris = await send('plain.test', '/up', 4, 200, { upgrade: 'websocket', connection: 'upgrade' });
  const lines = await logged(uris);
  for (const l of lines) assert.equal(l.addr, at(WEB), l.uri);
});

test('a route\'s own read timeout holds on the native path: 504 after 1 s from a backend that answers after 3 s', async () => {
  // The backend answers 401 at once (no credentials), so the warm-up registers the host in every worker.
  const warm = await send('timeout.test', '/warm', 12, 401);
  const slow: string[] = [];
  for (let i = 0; i < 4; i++) {
    const uri = `/slow/x?n=${seq++}`;
    const t0 = performance.now();
    const a = await sendTo(LISTEN.httpPort, 'timeout.test', uri);
    const ms = performance.now() - t0;
    assert.equal(a.status, 504, `${uri}: ${a.status}`);
    // The location's own proxy_read_timeout (60 s) would wait for the answer at 3 s.
    assert.ok(ms >= 900 && ms < 2_500, `${uri}: answered after ${ms.toFixed(0)} ms, not after the route's 1 s`);
    slow.push(uri);
  }
  const lines = await logged([...warm, ...slow]);
  for (const l of lines) assert.equal(l.addr, at(SLOW), l.uri);
  nativeAfterFirst(lines, 'timeout.test');
  const warmed = new Set(lines.filter((l) => warm.includes(l.uri)).map((l) => l.pid));
  const slowLines = lines.filter((l) => slow.includes(l.uri));
  assert.ok(slowLines.some((l) => warmed.has(l.pid) && l.native), 'no request with the read timeout was routed natively');
});

test('a route change and an endpoint change, pushed without a reload, are followed from the next request', async () => {
  const pid = nginx.pid;
  // Every worker has plain.test registered (the first test): now /api goes to web.
  let next = config({ webPort: WEB, apiPathTo: 'web' });
  let d = diffConfig(running, next);
  assert.equal(d.reload, false);
  await dynamic.push(d.delta);
  running = next;
  const moved = await send('plain.test', '/api/after-route-change', 10);
  // web's endpoint moves to another port.
  next = config({ webPort: WEB_MOVED, apiPathTo: 'web' });
  d = diffConfig(running, next);
  assert.equal(d.reload, false);
  await dynamic.push(d.delta);
  running = next;
  const endpoint = await send('plain.test', '/after-endpoint-change', 10);
  const lines = await logged([...moved, ...endpoint]);
  const of = (uris: string[]) => lines.filter((l) => uris.includes(l.uri));
  for (const l of of(moved)) assert.equal(l.addr, at(WEB), `${l.uri} still went to ${l.addr}`);
  for (const l of of(endpoint)) assert.equal(l.addr, at(WEB_MOVED), `${l.uri} still went to ${l.addr}`);
  nativeAfterFirst(of(moved), 'after the route change');
  nativeAfterFirst(of(endpoint), 'after the endpoint change');
  assert.equal(nginx.pid, pid, 'the same nginx master, never reloaded');
});
