// ingress-nginx's auth-url through the whole data plane: Ingresses with the external-authentication annotations (and
// the ConfigMap's global-auth-url) are translated, rendered and pushed into a real nginx (Debian's, as in
// production); a fake auth service and an echo backend run in this file's own network namespace (testnet.test-helpers.ts,
// subnet 198.19.249.0/30) — the Lua side never proxies to loopback. Real requests prove auth_request's semantics:
// allowed / 401 / 403 / 500, the sign-in redirect with rd, response headers copied, the auth cookie, the answer
// cache (the auth service asked once), https to the auth service, and failing closed.
// Ports 31700-31719 belong to this file: nginx 31700-31702, the echo backend 31703, the auth service 31704, an
// https echo as an auth service 31705, 31706 where nothing listens.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { translate } from '../../translate/translate.ts';
import { diffConfig } from '../../translate/diff.ts';
import { ing, modelOf, OPTS, rule, slice, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../../model/global-config.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { until } from '../../../e2e/harness/http.ts';
import { TestNet, type Seen } from './testnet.test-helpers.ts';
import { capturingLogger, liveNginx, sendTo, startLive, stopLive, type Answer } from './live.test-helpers.ts';

const LISTEN = { httpPort: 31700, httpsPort: 31701, statusPort: 31702, address: '127.0.0.1' };
const ECHO_PORT = 31703;
const AUTH_PORT = 31704;
const TLS_AUTH_PORT = 31705;
const DOWN_PORT = 31706; // nothing listens

// This file's network namespace (subnet 249 of testnet.test-helpers.ts).
const net = new TestNet(249);
const IP = net.ip;

const { logger, lines: nginxLines } = capturingLogger();
const { dir, dynamic, nginx } = liveNginx('portico-auth-url-', logger);

// A self-signed certificate for the https auth service (its certificate is not verified, as in ingress-nginx).
const tlsCert = path.join(dir, 'auth.crt');
const tlsKey = path.join(dir, 'auth.key');
execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=auth-tls', '-keyout', tlsKey, '-out', tlsCert], { stdio: 'ignore' });

const N = 'nginx.ingress.kubernetes.io/';
const AUTH = `http://auth.team.svc.cluster.local:${AUTH_PORT}`;
const app = (name: string, host: string, annotations: Record<string, string>) =>
  ing(name, { rules: [rule(host, [{ path: '/', backend: svcRef('web', 80) }])] }, { ns: 'team', annotations: Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${N}${k}`, v])) });

function desired(): GatewayConfig {
  const m = modelOf({
    services: [
      svc('web', [{ name: 'http', port: 80, targetPort: ECHO_PORT }], 'team'),
      svc('auth', [{ name: 'http', port: AUTH_PORT, targetPort: AUTH_PORT }], 'team'),
      svc('auth-down', [{ name: 'http', port: DOWN_PORT, targetPort: DOWN_PORT }], 'team'),
    ],
    slices: [
      slice('web-x', 'web', [{ name: 'http', port: ECHO_PORT }], [{ ip: IP }], 'team'),
      slice('auth-x', 'auth', [{ name: 'http', port: AUTH_PORT }], [{ ip: IP }], 'team'),
      slice('auth-down-x', 'auth-down', [{ name: 'http', port: DOWN_PORT }], [{ ip: IP }], 'team'),
    ],
    ingresses: [
      app('allow', 'allow.test', { 'auth-url': `${AUTH}/check?from=portico&cookie=1`, 'auth-response-headers': 'X-User' }),
      app('method', 'method.test', { 'auth-url': `${AUTH}/check`, 'auth-method': 'POST', 'auth-request-redirect': 'https://$host/after' }),
      app('signin', 'signin.test', { 'auth-url': `${AUTH}/check?cookie=1`, 'auth-signin': 'https://login.example/start' }),
      app('always', 'always.test', { 'auth-url': `${AUTH}/check?cookie=1`, 'auth-always-set-cookie': 'true' }),
      app('fail', 'fail.test', { 'auth-url': `${AUTH}/fail` }),
      app('down', 'down.test', { 'auth-url': `http://auth-down.team.svc:${DOWN_PORT}/` }),
      app('cache', 'cache.test', { 'auth-url': `${AUTH}/check`, 'auth-cache-key': '$http_authorization', 'auth-cache-duration': '200 401 1m' }),
      app('tls', 'tls.test', { 'auth-url': `https://${IP}:${TLS_AUTH_PORT}/verify` }),
      app('missing', 'missing.test', { 'auth-url': 'http://nothere.team.svc.cluster.local/' }),
      app('plain', 'plain.test', {}),
      app('optout', 'optout.test', { 'enable-global-auth': 'false' }),
    ],
  });
  m.setGlobalConfig(parseGlobalConfig({ 'global-auth-url': `${AUTH}/global`, 'global-auth-response-headers': 'X-User' }, defaultGlobalConfig()).values);
  return translate(m.snapshot(), { ...OPTS, listen: LISTEN }).config;
}

before(async () => {
  net.up();
  await net.start('echo', ECHO_PORT, 'echo');
  await net.start('auth', AUTH_PORT, 'auth');
  await net.start('tls-auth', TLS_AUTH_PORT, 'tls-echo', { cert: tlsCert, key: tlsKey });
  const config = desired();
  await startLive(nginx, dynamic, config);
});
after(() => stopLive(nginx, dynamic, net));

const send = (host: string, p: string, o: { method?: string; headers?: Record<string, string> } = {}): Promise<Answer> =>
  sendTo(LISTEN.httpPort, host, p, { ...o, body: o.method === 'POST' ? 'body-for-the-backend' : undefined });
function seen(a: Answer): Seen {
  assert.equal(a.status, 200, `proxied to the backend: ${a.status} ${a.body}`);
  return JSON.parse(a.body) as Seen;
}
const good = { authorization: 'Bearer good' };
async function lastAuth(name = 'auth'): Promise<Seen> {
  const all = await net.requests(name);
  assert.ok(all.length, `${name} was asked`);
  return all[all.length - 1] as Seen;
}

test('allowed: 2xx from the auth service → proxied, auth-response-headers copied (a forged one replaced), the auth cookie set', async () => {
  const a = await send('allow.test', '/doc?page=2', { method: 'POST', headers: { ...good, 'x-user': 'mallory', 'x-forwarded-proto': 'gopher', 'x-forwarded-for': '6.6.6.6', cookie: 's=1' } });
  const got = seen(a);
  assert.equal(got.method, 'POST');
  assert.equal(got.url, '/doc?page=2');
  assert.equal(got.headers['x-user'], 'alice', "the auth service's X-User replaces the client's");
  assert.equal(got.headers['x-internal'], undefined, 'only auth-response-headers are copied');
  assert.equal(got.headers['x-original-url'], undefined, 'the headers made for the auth service do not leak upstream');
  assert.equal(a.headers['set-cookie']?.[0], 'portico_auth=ok; Path=/', "the auth response's Set-Cookie reaches the client");
  const seenByAuth = await lastAuth();
  assert.equal(seenByAuth.method, 'GET', 'auth_request: GET unless auth-method');
  assert.equal(seenByAuth.url, '/check?from=portico&cookie=1');
  assert.equal(seenByAuth.headers.host, 'auth.team.svc.cluster.local', "Host: the auth URL's host");
  assert.equal(seenByAuth.headers.authorization, 'Bearer good');
  assert.equal(seenByAuth.headers.cookie, 's=1', 'the client headers go along');
  assert.equal(seenByAuth.headers['x-original-url'], 'http://allow.test/doc?page=2');
  assert.equal(seenByAuth.headers['x-original-method'], 'POST');
  assert.equal(seenByAuth.headers['x-auth-request-redirect'], '/doc?page=2');
  assert.equal(seenByAuth.headers['x-sent-from'], 'nginx-ingress-controller');
  assert.equal(seenByAuth.headers['x-real-ip'], '127.0.0.1', 'the client address');
  assert.equal(seenByAuth.headers['x-forwarded-for'], '127.0.0.1', 'the client address, not a value it sent');
  assert.equal(seenByAuth.headers['x-forwarded-proto'], undefined, 'ingress-nginx clears X-Forwarded-Proto');
  assert.equal(seenByAuth.headers['content-length'], undefined, 'no body to the auth service');
  assert.equal(seenByAuth.headers['x-original-uri'], undefined, 'only with auth-method');
  assert.match(String(seenByAuth.headers['x-request-id'] ?? ''), /^[0-9a-f]{32}$/, 'generated: 32 hex characters');
  assert.equal(seenByAuth.headers['x-request-id'], got.headers['x-request-id'], 'the auth service and the backend see the same id');
});

test('auth-method and auth-request-redirect: the method, X-Original-URI, X-Scheme and the templated redirect', async () => {
  seen(await send('method.test', '/m?x=1', { headers: good }));
  const s = await lastAuth();
  assert.equal(s.method, 'POST');
  assert.equal(s.headers['x-original-uri'], '/m?x=1');
  assert.equal(s.headers['x-scheme'], 'http');
  assert.equal(s.headers['x-auth-request-redirect'], 'https://method.test/after');
});

test('401 → 401 with the auth service\'s WWW-Authenticate; 403 → 403; the backend sees neither', async () => {
  const before = await net.count('echo');
  const denied = await send('allow.test', '/', { headers: { authorization: 'Bearer nope' } });
  assert.equal(denied.status, 401);
  assert.equal(denied.headers['www-authenticate'], 'Bearer realm="portico-test"');
  assert.equal(denied.headers['x-internal'], undefined);
  assert.equal(denied.headers['set-cookie'], undefined, 'the cookie only with auth-always-set-cookie');
  assert.equal((await send('allow.test', '/', { headers: { authorization: 'Bearer forbidden' } })).status, 403);
  assert.equal(await net.count('echo'), before);
  const always = await send('always.test', '/', { headers: { authorization: 'Bearer nope' } });
  assert.equal(always.status, 401);
  assert.equal(always.headers['set-cookie']?.[0], 'portico_auth=retry; Path=/', 'auth-always-set-cookie: with the 401 too');
});

test('auth-signin: a 401 becomes a 302 to the sign-in URL with rd = the request\'s own URL, and the auth cookie', async () => {
  const r = await send('signin.test', '/private/a%20b?x=1&y=2');
  assert.equal(r.status, 302);
  assert.equal(r.headers.location, 'https://login.example/start?rd=http://signin.test%2Fprivate%2Fa%2520b%3Fx%3D1%26y%3D2');
  assert.equal(r.headers['set-cookie']?.[0], 'portico_auth=retry; Path=/');
  const spoofed = await send('signin.test', '/', { headers: { host: 'signin.test', 'x-forwarded-host': 'evil.example' } });
  assert.match(String(spoofed.headers.location), /^https:\/\/login\.example\/start\?rd=http:\/\/signin\.test%2F$/);
  assert.equal((await send('signin.test', '/', { headers: good })).status, 200, 'allowed requests are proxied');
});

test('an auth service that fails, or cannot be reached → 500 (auth_request), the reason logged; the backend sees nothing', async () => {
  const before = await net.count('echo');
  assert.equal((await send('fail.test', '/', { headers: good })).status, 500);
  assert.equal((await send('down.test', '/', { headers: good })).status, 500);
  assert.equal(await net.count('echo'), before);
  await until('the reasons in the error log', () => nginxLines.some((l) => l.includes('answered 500; answering 500')) && nginxLines.some((l) => l.includes('auth service team_auth-down_') && l.includes('answering 500')), 5_000);
});

test('auth-cache-key: the same credentials are answered from the cache (the auth service asked once), others are not', async () => {
  const before = await net.count('auth');
  const a1 = await send('cache.test', '/1', { headers: good });
  const a2 = await send('cache.test', '/2', { headers: { ...good, 'x-user': 'forged' } });
  seen(a1);
  seen(a2);
  assert.equal(await net.count('auth'), before + 1, 'one subrequest for two requests');
  assert.equal((await send('cache.test', '/', { headers: { authorization: 'Bearer other' } })).status, 401);
  assert.equal((await send('cache.test', '/', { headers: { authorization: 'Bearer other' } })).status, 401, 'a cached 401 stays 401');
  assert.equal(await net.count('auth'), before + 2);
});

test('https auth-url: TLS to the auth service, Host and SNI its host', async () => {
  const got = seen(await send('tls.test', '/t'));
  assert.equal(got.url, '/t');
  const s = await lastAuth('tls-auth');
  assert.equal(s.url, '/verify');
  assert.equal(s.headers.host, IP);
  assert.equal(s.headers['x-original-url'], 'http://tls.test/t');
});

test('an auth-url that cannot be applied fails closed: 503, the backend never reached', async () => {
  const before = await net.count('echo');
  assert.equal((await send('missing.test', '/', { headers: good })).status, 503);
  assert.equal(await net.count('echo'), before);
});

test('global-auth-url applies to every Ingress without its own auth-url, unless enable-global-auth: "false"', async () => {
  const before = await net.count('auth');
  assert.equal((await send('plain.test', '/')).status, 401, 'no credentials: refused by the global auth');
  const ok = seen(await send('plain.test', '/', { headers: good }));
  assert.equal(ok.headers['x-user'], 'alice');
  assert.equal((await lastAuth()).url, '/global');
  assert.equal(await net.count('auth'), before + 2);
  const out = seen(await send('optout.test', '/'));
  assert.equal(out.headers['x-user'], undefined);
  assert.equal(await net.count('auth'), before + 2, 'the opted-out Ingress is not authenticated');
});
