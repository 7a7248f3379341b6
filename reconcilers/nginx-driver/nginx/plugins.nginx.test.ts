// The plugin engine inside a real nginx (Debian's, as in production): the rendered configuration (its @portico_lua
// location and the external-auth subrequest location), plugins, consumers and routes pushed over the
// configuration socket, and real requests proving each plugin's effect — on the client's answer and on what the
// backend received (an echo server answering with the request it got as JSON). Plugin changes are data: the
// last test changes one and sees the effect without a reload.
// The Lua side never proxies to loopback (peers.lua), so the echo and auth servers run in this file's own network
// namespace (testnet.test-helpers.ts, subnet 198.19.253.0/30) and listen on its address; clients connect to nginx on 127.0.0.1
// (the address ip-restriction sees).
// Ports 31200-31205 belong to this file: nginx 31200-31202, the echo backend 31203, the auth service 31204, and
// 31205 where nothing listens.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { translate } from '../../translate/translate.ts';
import { diffConfig } from '../../translate/diff.ts';
import { OPTS, modelOf } from '../../translate/fixtures.test-helpers.ts';
import type { Backend, ConsumerSet, GatewayConfig, HostRoutes, PluginInstance } from '../../config/types.ts';
import { until } from '../../../e2e/harness/http.ts';
import { TestNet, type Seen } from './testnet.test-helpers.ts';
import { capturingLogger, liveNginx, sendTo, startLive, stopLive, type Answer } from './live.test-helpers.ts';

const LISTEN = { httpPort: 31200, httpsPort: 31201, statusPort: 31202, address: '127.0.0.1' };
const ECHO_PORT = 31203;
const AUTH_PORT = 31204;
const DOWN_PORT = 31205; // nothing listens

// This file's network namespace (subnet 253 of testnet.test-helpers.ts; health.nginx.test.ts uses 254).
const net = new TestNet(253);
const IP = net.ip;

// nginx's error log (its stderr) arrives through the logger.
const { logger, lines: nginxLines } = capturingLogger();
const { dynamic, nginx } = liveNginx('portico-plugins-', logger);

// The backend ('echo') answers with the request it received as JSON. The auth service ('auth'): "Bearer good"
// passes (X-User: alice), "Bearer forbidden" gets 403, anything else 401; /slow answers too late (3 s, past the
// plugin's timeout). Both run in the namespace (testnet-backend.test-helpers.ts), which records what each received.
/** Requests the echo backend has received so far. */
const echoHits = () => net.count('echo');

const sha256hex = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
// A bcrypt hash of "s3cret-pw" (cost 5), made once with Debian's libxcrypt through Python:
//   python3 -c 'import crypt; print(crypt.crypt("s3cret-pw", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1<<5)))'
const BCRYPT = '$2b$05$1cPIePbsQ.gi3ftG/mODJuwOfLNv9hkNqZ.Rdu4X9IYSIBcWWRrJm';
const SALT = '0123456789abcdef';

const plugins: Record<string, PluginInstance> = {
  t_ka: { name: 'team/ka', type: 'key-auth', namespace: 'team', header: 'apikey', hideCredentials: true },
  t_ba: { name: 'team/ba', type: 'basic-auth', namespace: 'team', realm: 'Team area', hideCredentials: true },
  t_rl: { name: 'team/rl', type: 'rate-limit', rate: 1, periodSeconds: 60, burst: 2, by: 'ip', status: 429, key: 't_rl' },
  t_ip: { name: 'team/ip', type: 'ip-restriction', deny: ['127.0.0.1', '::1'], status: 403 },
  t_cors: { name: 'team/cors', type: 'cors', allowOrigins: ['https://*.example.com'], allowMethods: ['GET', 'PUT'], allowHeaders: ['x-token'], exposeHeaders: ['x-total'], allowCredentials: true, maxAgeSeconds: 600 },
  t_rq: { name: 'team/rq', type: 'request-headers', set: [{ name: 'x-env', value: 'prod $host' }], add: [], remove: ['x-drop'] },
  t_rs: { name: 'team/rs', type: 'response-headers', set: [{ name: 'x-frame-options', value: 'DENY' }], add: [], remove: ['x-powered-by'] },
  t_ea: { name: 'team/ea', type: 'external-auth', backendId: 't_auth_80', path: '/check?from=portico', method: 'GET', forwardHeaders: [], upstreamHeaders: ['x-user'], clientHeaders: ['www-authenticate'], timeoutMs: 2000 },
  t_ea_slow: { name: 'team/ea-slow', type: 'external-auth', backendId: 't_auth_80', path: '/slow', method: 'GET', forwardHeaders: ['authorization'], upstreamHeaders: [], clientHeaders: [], timeoutMs: 300 },
  t_ea_down: { name: 'team/ea-down', type: 'external-auth', backendId: 't_down_80', path: '/', method: 'GET', forwardHeaders: [], upstreamHeaders: [], clientHeaders: [], timeoutMs: 1000 },
  t_rel: { name: 'team/rel', type: 'redirect', status: 302, path: '/landing', keepQuery: false },
  t_redir: { name: 'team/redir', type: 'redirect', status: 301, scheme: 'https', host: 'new.example.com', prefix: { from: '/old', to: '/new' }, keepQuery: true },
  t_rw: { name: 'team/rw', type: 'rewrite', prefix: { from: '/api', to: '/' }, host: 'internal.example' },
  t_rx: { name: 'team/rx', type: 'rewrite', regex: { pattern: '^/v(\\d+)/(.*)$', replacement: '/items/$2/version/$1' } },
};

const consumers: Record<string, ConsumerSet> = {
  team: {
    consumers: [
      {
        name: 'alice',
        username: 'alice@team',
        keys: [sha256hex('alice-key-0001')],
        basic: [
          // sha256$<salt>$<hex of sha256(salt text + password)>, as the controller computes it for a plain password
          { username: 'alice', hash: `sha256$${SALT}$${sha256hex(SALT + 'wonderland')}` },
          { username: 'bob', hash: BCRYPT },
        ],
        plugins: [],
      },
    ],
  },
};

const ROUTES: Record<string, string[]> = {
  'ka.example.com': ['t_ka'],
  'ba.example.com': ['t_ba'],
  'rl.example.com': ['t_rl'],
  'ip.example.com': ['t_ip'],
  'cors.example.com': ['t_cors'],
  'hdr.example.com': ['t_rs', 't_rq'],
  'ea.example.com': ['t_ea'],
  'ea-slow.example.com': ['t_ea_slow'],
  'ea-down.example.com': ['t_ea_down'],
  'redir.example.com': ['t_redir'],
  'rel.example.com': ['t_rel'],
  'rw.example.com': ['t_rw'],
  'rx.example.com': ['t_rx'],
  'missing.example.com': ['t_ka', 't_ghost'],
  // Rules without a host: what a request without a Host header is routed by (its $host is the server_name, "_").
  _: ['t_rx'],
};

function routes(): Record<string, HostRoutes> {
  const out: Record<string, HostRoutes> = {};
  for (const [host, ids] of Object.entries(ROUTES)) {
    out[host] = { tls: false, rules: [{ path: '/', match: 'prefix', route: { source: `Route/team/${host.split('.')[0]}`, backendId: 't_echo_80', sslRedirect: false, plugins: ids } }] };
  }
  return out;
}

const backend = (id: string, port: number): Backend => ({ id, endpoints: [{ address: IP, port, weight: 1 }], balance: 'round_robin' });

function config(p: Record<string, PluginInstance>): GatewayConfig {
  const base = translate(modelOf({}).snapshot(), { ...OPTS, listen: LISTEN }).config;
  return {
    structure: base.structure,
    data: { ...base.data, routes: routes(), backends: { t_echo_80: backend('t_echo_80', ECHO_PORT), t_auth_80: backend('t_auth_80', AUTH_PORT), t_down_80: backend('t_down_80', DOWN_PORT) }, plugins: p, consumers },
  };
}

let running: GatewayConfig;

before(async () => {
  net.up(); // throws (the tests fail) when the namespace cannot be made
  await net.start('echo', ECHO_PORT, 'echo');
  await net.start('auth', AUTH_PORT, 'auth');
  running = config(plugins);
  await startLive(nginx, dynamic, running);
});
after(() => stopLive(nginx, dynamic, net));

const send = (host: string, p: string, o: { method?: string; headers?: Record<string, string> } = {}): Promise<Answer> => sendTo(LISTEN.httpPort, host, p, o);
/** What the backend received, for a request it answered. */
function seen(a: Answer): Seen {
  assert.equal(a.status, 200, `proxied to the backend: ${a.status} ${a.body}`);
  return JSON.parse(a.body) as Seen;
}

test('key-auth: 401 without or with a wrong key; the right key reaches the backend as its consumer, without the key', async () => {
  const none = await send('ka.example.com', '/');
  assert.equal(none.status, 401);
  assert.equal(none.body, 'Unauthorized\n', 'a short plain-text body');
  assert.equal((await send('ka.example.com', '/', { headers: { apikey: 'wrong-key-0001' } })).status, 401);
  const got = seen(await send('ka.example.com', '/', { headers: { apikey: 'alice-key-0001', 'x-consumer-username': 'root' } }));
  assert.equal(got.headers['x-consumer-username'], 'alice@team', 'the identified consumer, not the client-sent header');
  assert.equal(got.headers.apikey, undefined, 'hideCredentials');
  const many: Record<string, string> = {};
  for (let i = 0; i < 120; i++) many[`x-filler-${i}`] = 'x';
  const crowded = seen(await send('ka.example.com', '/', { headers: { ...many, 'x-consumer-id': 'forged', apikey: 'alice-key-0001' } }));
  assert.equal(crowded.headers['x-consumer-id'], undefined, 'a client-sent X-Consumer-* cannot hide behind 100 other headers');
});

test('basic-auth: 401 with the realm challenge; sha256 and bcrypt passwords pass', async () => {
  const basic = (u: string, p: string) => ({ authorization: `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}` });
  const bad = await send('ba.example.com', '/', { headers: basic('alice', 'nope') });
  assert.equal(bad.status, 401);
  assert.equal(bad.headers['www-authenticate'], 'Basic realm="Team area"');
  assert.equal((await send('ba.example.com', '/')).status, 401);
  const a = seen(await send('ba.example.com', '/', { headers: basic('alice', 'wonderland') }));
  assert.equal(a.headers['x-consumer-username'], 'alice@team');
  assert.equal(a.headers.authorization, undefined, 'hideCredentials');
  const b = seen(await send('ba.example.com', '/', { headers: basic('bob', 's3cret-pw') }));
  assert.equal(b.headers['x-consumer-username'], 'alice@team', 'bcrypt (libxcrypt through FFI inside nginx)');
  assert.equal((await send('ba.example.com', '/', { headers: basic('bob', 's3cret-px') })).status, 401);
});

test('rate-limit: 1 + burst requests pass, then 429 with Retry-After', async () => {
  const statuses: number[] = [];
  let limited: Answer | undefined;
  for (let i = 0; i < 4; i++) {
    const a = await send('rl.example.com', '/');
    statuses.push(a.status);
    if (a.status === 429) limited = a;
  }
  assert.deepEqual(statuses, [200, 200, 200, 429]);
  const retry = Number(limited?.headers['retry-after']);
  assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60, `Retry-After ${limited?.headers['retry-after']}`);
});

test('ip-restriction: 127.0.0.1 in deny gets 403 and the backend sees nothing', async () => {
  const before = await echoHits();
  assert.equal((await send('ip.example.com', '/')).status, 403);
  assert.equal(await echoHits(), before);
});

test('cors: the preflight is answered by Portico; a normal request gets Allow-Origin on the backend response', async () => {
  const before = await echoHits();
  const pre = await send('cors.example.com', '/x', { method: 'OPTIONS', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'PUT' } });
  assert.equal(pre.status, 204);
  assert.equal(pre.headers['access-control-allow-origin'], 'https://app.example.com');
  assert.equal(pre.headers['access-control-allow-methods'], 'GET, PUT');
  assert.equal(pre.headers['access-control-allow-headers'], 'x-token');
  assert.equal(pre.headers['access-control-max-age'], '600');
  assert.equal(pre.headers['access-control-allow-credentials'], 'true');
  assert.match(String(pre.headers.vary), /Origin/);
  assert.equal(await echoHits(), before, 'the backend never sees the preflight');
  const normal = await send('cors.example.com', '/x', { headers: { origin: 'https://app.example.com' } });
  assert.equal(normal.status, 200);
  assert.equal(normal.headers['access-control-allow-origin'], 'https://app.example.com');
  assert.equal(normal.headers['access-control-expose-headers'], 'x-total');
  const other = await send('cors.example.com', '/x', { headers: { origin: 'https://example.org' } });
  assert.equal(other.status, 200);
  assert.equal(other.headers['access-control-allow-origin'], undefined, 'an origin that does not match gets no CORS headers');
});

test('request-headers and response-headers: literal values upstream, set/remove on the response', async () => {
  const a = await send('hdr.example.com', '/', { headers: { 'x-drop': 'gone', 'x-env': 'dev' } });
  const got = seen(a);
  assert.equal(got.headers['x-env'], 'prod $host', 'the literal value: no nginx variable is interpreted');
  assert.equal(got.headers['x-drop'], undefined);
  assert.equal(a.headers['x-frame-options'], 'DENY');
  assert.equal(a.headers['x-powered-by'], undefined);
});

test('external-auth: allow with upstream headers, 401/403 with client headers, through the balancer to the auth service', async () => {
  const asked = (await net.requests('auth')).length;
  const ok = await send('ea.example.com', '/doc?page=2', { headers: { authorization: 'Bearer good', 'x-user': 'forged' } });
  const got = seen(ok);
  assert.equal(got.headers['x-user'], 'alice', "the auth service's X-User replaces the client's");
  assert.equal(got.headers['x-internal'], undefined, 'only upstreamHeaders are copied');
  assert.equal(got.headers.authorization, 'Bearer good', 'the client request is otherwise unchanged');
  assert.equal(got.headers['x-forwarded-uri'], undefined, 'the X-Forwarded-* for the auth service do not leak upstream');
  const a = (await net.requests('auth'))[asked];
  assert.ok(a, 'the auth service was asked');
  assert.equal(a.method, 'GET');
  assert.equal(a.url, '/check?from=portico');
  assert.equal(a.headers['x-forwarded-method'], 'GET');
  assert.equal(a.headers['x-forwarded-uri'], '/doc?page=2');
  assert.equal(a.headers['x-forwarded-host'], 'ea.example.com');
  assert.equal(a.headers['x-forwarded-proto'], 'http');
  assert.equal(a.headers['content-length'], undefined, 'no body to the auth service');
  const denied = await send('ea.example.com', '/doc', { headers: { authorization: 'Bearer nope' } });
  assert.equal(denied.status, 401);
  assert.equal(denied.headers['www-authenticate'], 'Bearer realm="portico-test"');
  assert.equal(denied.headers['x-internal'], undefined, 'only clientHeaders are copied');
  assert.equal((await send('ea.example.com', '/doc', { headers: { authorization: 'Bearer forbidden' } })).status, 403);
});

test('external-auth fails closed: an auth service that answers too late or cannot be reached → 503, with the reason logged', async () => {
  const before = await echoHits();
  const t0 = Date.now();
  assert.equal((await send('ea-slow.example.com', '/', { headers: { authorization: 'Bearer good' } })).status, 503);
  assert.ok(Date.now() - t0 < 2_500, 'the plugin timeout applies, not the global proxy timeouts');
  assert.equal((await send('ea-down.example.com', '/')).status, 503);
  assert.equal(await echoHits(), before, 'nothing reached the backend');
  await until('the reasons in the error log', () => nginxLines.some((l) => l.includes('auth service t_auth_80 timed out')) && nginxLines.some((l) => l.includes('auth service t_down_80 cannot be reached')), 5_000);
});

test('redirect: status and Location from the configured scheme/host and prefix, query kept', async () => {
  const r = await send('redir.example.com', '/old/a/b?x=1');
  assert.equal(r.status, 301);
  assert.equal(r.headers.location, 'https://new.example.com/new/a/b?x=1');
  assert.equal((await send('redir.example.com', '/older')).status, 200, 'a path the prefix does not match is proxied');
  const rel = await send('rel.example.com', '/x?y=1');
  assert.equal(rel.status, 302);
  assert.equal(rel.headers.location, '/landing', 'without scheme/host/port the Location stays a path (nginx does not make it absolute)');
});

test('rewrite: the backend sees the rewritten path and Host; regex captures', async () => {
  const got = seen(await send('rw.example.com', '/api/users/7?q=1'));
  assert.equal(got.url, '/users/7?q=1');
  assert.equal(got.headers.host, 'internal.example');
  const rx = seen(await send('rx.example.com', '/v3/shoes'));
  assert.equal(rx.url, '/items/shoes/version/3');
  assert.equal(rx.headers.host, 'rx.example.com', 'without a host rewrite the client Host is sent');
  assert.equal(seen(await send('rx.example.com', '/other')).url, '/other', 'no match: the path is kept');
});

/** An HTTP/1.0 GET without a Host header; the backend's JSON answer (what it received). */
function http10WithoutHost(p: string): Promise<Seen> {
  return new Promise((resolve, reject) => {
    const s = connect(LISTEN.httpPort, '127.0.0.1', () => s.write(`GET ${p} HTTP/1.0\r\n\r\n`));
    const chunks: Buffer[] = [];
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('error', reject);
    s.on('end', () => {
      const raw = Buffer.concat(chunks).toString();
      const at = raw.indexOf('\r\n\r\n');
      if (!/^HTTP\/1\.[01] 200 /.test(raw) || at < 0) return reject(new Error(`not proxied: ${raw.slice(0, 200)}`));
      resolve(JSON.parse(raw.slice(at + 4)) as Seen);
    });
  });
}

test('the Host sent without a host rewrite: the client\'s as sent, port included; nginx\'s $host for a request without one', async () => {
  assert.equal(seen(await send('rx.example.com:8080', '/other')).headers.host, 'rx.example.com:8080');
  assert.equal((await http10WithoutHost('/other')).headers.host, '_', 'no Host header: $host (the server_name)');
});

test('an unknown plugin id fails the route closed with 503 and an error log line naming it', async () => {
  const r = await send('missing.example.com', '/', { headers: { apikey: 'alice-key-0001' } });
  assert.equal(r.status, 503);
  assert.doesNotMatch(r.body, /ghost/);
  await until('the error log line', () => nginxLines.some((l) => l.includes('plugin t_ghost is not programmed')), 5_000);
});

test('a plugin change is data: applied without a reload', async () => {
  const pid = nginx.pid;
  const next = config({ ...plugins, t_rs: { name: 'team/rs', type: 'response-headers', set: [{ name: 'x-frame-options', value: 'SAMEORIGIN' }], add: [], remove: [] } });
  const d = diffConfig(running, next);
  assert.equal(d.reload, false);
  await dynamic.push(d.delta);
  running = next;
  const a = await send('hdr.example.com', '/');
  assert.equal(a.headers['x-frame-options'], 'SAMEORIGIN');
  assert.equal(a.headers['x-powered-by'], 'node', 'the removal is gone too');
  assert.equal(nginx.pid, pid, 'the same nginx master, never reloaded');
});
