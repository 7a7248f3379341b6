// ingress-nginx's own oauth2-proxy example (docs/examples/auth/oauth-external-auth): auth-url
// "https://$host/oauth2/auth" and auth-signin "https://$host/oauth2/start?rd=$escaped_request_uri" on the
// application's Ingress, a second Ingress without auth annotations for /oauth2 on the same host. Translated,
// rendered and pushed into a real nginx (Debian's, as in production) with a real oauth2-proxy built from Go modules
// (e2e/oauth2-proxy/build.sh) and an echo backend in this file's own network namespace (testnet.test-helpers.ts,
// subnet 198.19.232.0/30). oauth2-proxy signs users in from an htpasswd file (its --htpasswd-file form): no identity
// provider is ever contacted (the Google provider it is configured with only names where /oauth2/start redirects).
// The auth subrequest for "$host" is never resolved by name: it goes to the backend of the host's own route for
// /oauth2/auth. Ports 32940-32959 belong to this file: nginx 32940-32942, the echo backend 32943, oauth2-proxy 32944.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { translate } from '../../translate/translate.ts';
import { ing, modelOf, OPTS, rule, slice, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { until } from '../../../e2e/harness/http.ts';
import { TestNet, type Seen } from './testnet.test-helpers.ts';
import { capturingLogger, liveNginx, sendTo, startLive, stopLive, type Answer } from './live.test-helpers.ts';

const LISTEN = { httpPort: 32940, httpsPort: 32941, statusPort: 32942, address: '127.0.0.1' };
const ECHO_PORT = 32943;
const PROXY_PORT = 32944;

const net = new TestNet(232);
const IP = net.ip;
const { logger, lines: nginxLines } = capturingLogger();
const { dir, dynamic, nginx } = liveNginx('portico-oauth2-proxy-', logger);

const N = 'nginx.ingress.kubernetes.io/';
/** The application's annotations, as ingress-nginx's example writes them (plus the headers oauth2-proxy sets). */
const EXAMPLE = {
  'auth-url': 'https://$host/oauth2/auth',
  'auth-signin': 'https://$host/oauth2/start?rd=$escaped_request_uri',
  'auth-response-headers': 'X-Auth-Request-User, X-Auth-Request-Email',
};
const annotated = (a: Record<string, string>) => Object.fromEntries(Object.entries(a).map(([k, v]) => [`${N}${k}`, v]));
const app = (name: string, host: string, ns = 'team', a: Record<string, string> = EXAMPLE) => ing(name, { rules: [rule(host, [{ path: '/', backend: svcRef('web', 80) }])] }, { ns, annotations: annotated(a) });
const oauth2 = (name: string, host: string, ns = 'team', annotations: Record<string, string> = {}) =>
  ing(name, { rules: [rule(host, [{ path: '/oauth2', backend: svcRef('oauth2-proxy', 4180) }])] }, { ns, annotations: annotated(annotations) });

function desired(): GatewayConfig {
  const services = [];
  const slices = [];
  for (const ns of ['team', 'other']) {
    services.push(svc('web', [{ name: 'http', port: 80, targetPort: ECHO_PORT }], ns), svc('oauth2-proxy', [{ name: 'http', port: 4180, targetPort: PROXY_PORT }], ns));
    slices.push(slice('web-x', 'web', [{ name: 'http', port: ECHO_PORT }], [{ ip: IP }], ns), slice('oauth2-proxy-x', 'oauth2-proxy', [{ name: 'http', port: PROXY_PORT }], [{ ip: IP }], ns));
  }
  const m = modelOf({
    services,
    slices,
    ingresses: [
      app('app', 'app.test'),
      oauth2('oauth2-proxy', 'app.test'),
      // Variables in the query of a $host auth URL, and in the path and query of a literal one (a Service).
      app('vars', 'vars.test', 'team', { ...EXAMPLE, 'auth-url': 'https://$host/oauth2/auth?from=$escaped_request_uri&m=$request_method' }),
      oauth2('vars-oauth2', 'vars.test'),
      app('svc', 'svc.test', 'team', { ...EXAMPLE, 'auth-url': 'http://oauth2-proxy.team.svc:4180/oauth2/auth?u=$request_uri&h=$host' }),
      // No /oauth2 route on this host: its "/" is the application itself, never taken for the auth service.
      app('lonely', 'lonely.test'),
      // The /oauth2 route requires auth-url itself: the auth subrequest would recurse.
      app('loop', 'loop.test'),
      oauth2('loop-oauth2', 'loop.test', 'team', EXAMPLE),
      // The /oauth2 route of the host is another namespace's (allow-cross-namespace-auth is off).
      app('shared', 'shared.test'),
      oauth2('their-oauth2', 'shared.test', 'other'),
    ],
  });
  return translate(m.snapshot(), { ...OPTS, listen: LISTEN }).config;
}

let proxy: ChildProcess | undefined;
const proxyOut: string[] = [];

before(async () => {
  const root = path.resolve(import.meta.dirname, '../../..');
  execFileSync('bash', [path.join(root, 'e2e/oauth2-proxy/build.sh')], { stdio: ['ignore', 'ignore', 'inherit'] });
  const bin = execFileSync('bash', [path.join(root, 'e2e/oauth2-proxy/build.sh'), 'path'], { encoding: 'utf8' }).trim();
  assert.ok(existsSync(bin), bin);
  const htpasswd = path.join(dir, 'htpasswd');
  writeFileSync(htpasswd, `alice:{SHA}${createHash('sha1').update('wonderland').digest('base64')}\n`);
  net.up();
  await net.start('echo', ECHO_PORT, 'echo');
  proxy = spawn('ip', ['netns', 'exec', net.netns, bin,
    `--http-address=${IP}:${PROXY_PORT}`, '--provider=google', '--client-id=portico-test', '--client-secret=never-used',
    '--cookie-secret=0123456789abcdef0123456789abcdef', '--cookie-secure=false', '--email-domain=*', `--htpasswd-file=${htpasswd}`,
    '--upstream=static://202', '--set-xauthrequest', '--reverse-proxy', `--trusted-proxy-ip=${net.hostIp}/32`], { stdio: ['ignore', 'pipe', 'pipe'] });
  for (const s of [proxy.stdout, proxy.stderr]) {
    let partial = '';
    s?.on('data', (c: Buffer) => {
      const lines = (partial + c.toString()).split('\n');
      partial = lines.pop() ?? '';
      proxyOut.push(...lines.filter(Boolean));
    });
  }
  await startLive(nginx, dynamic, desired());
  await until('oauth2-proxy answers through Portico', async () => (await send('app.test', '/oauth2/auth')).status === 401, 10_000);
});
after(async () => {
  proxy?.kill();
  await stopLive(nginx, dynamic, net);
});

const send = (host: string, p: string, o: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> => sendTo(LISTEN.httpPort, host, p, o);

async function signIn(): Promise<string> {
  const a = await send('app.test', '/oauth2/sign_in', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'username=alice&password=wonderland&rd=%2Fdoc' });
  assert.equal(a.status, 302, `${a.status} ${a.body}`);
  const cookie = (a.headers['set-cookie'] ?? []).find((c) => c.startsWith('_oauth2_proxy='));
  assert.ok(cookie, 'oauth2-proxy set its session cookie');
  return cookie.split(';')[0] as string;
}

test('unauthenticated: 302 to the sign-in URL on the request\'s own host, rd = the escaped request URI', async () => {
  const a = await send('app.test', '/doc/a%20b?x=1&y=2');
  assert.equal(a.status, 302, a.body);
  assert.equal(a.headers.location, 'https://app.test/oauth2/start?rd=%2Fdoc%2Fa%2520b%3Fx%3D1%26y%3D2');
  await until('the real oauth2-proxy answered the auth subrequest (its log)', () => proxyOut.some((l) => l.includes(' app.test GET ') && l.includes('"/oauth2/auth"') && l.includes(' 401 ')), 5_000);
});

test('/oauth2/* is served by the oauth2-proxy Ingress without authentication: /oauth2/start redirects to the provider, sign-in sets the cookie', async () => {
  const start = await send('app.test', '/oauth2/start?rd=%2Fdoc');
  assert.equal(start.status, 302, start.body);
  assert.match(start.headers.location ?? '', /^https:\/\/accounts\.google\.com\/o\/oauth2\/auth\?.*redirect_uri=http%3A%2F%2Fapp\.test%2Foauth2%2Fcallback/);
  assert.match(await signIn(), /^_oauth2_proxy=.+/);
});

test('authenticated (the session cookie): 200 from the application with auth-response-headers from oauth2-proxy, forged ones replaced', async () => {
  const cookie = await signIn();
  const a = await send('app.test', '/doc?page=2', { headers: { cookie, 'x-auth-request-user': 'mallory' } });
  assert.equal(a.status, 200, `${a.status} ${a.body}`);
  const seen = JSON.parse(a.body) as Seen;
  assert.equal(seen.url, '/doc?page=2');
  assert.equal(seen.headers['x-auth-request-user'], 'alice');
  // oauth2-proxy accepted the session, asked with the request's own Host (in ingress-nginx the subrequest hairpins
  // through the load balancer; here it takes Portico's route for /oauth2/auth).
  await until('oauth2-proxy logged the accepted subrequest', () => proxyOut.some((l) => l.includes(' alice ') && l.includes(' app.test GET ') && l.includes('"/oauth2/auth"') && l.includes(' 202 ')), 5_000);
});

test('variables in the auth URL are filled from the request and percent-encoded, on the request\'s own host and on a literal one', async () => {
  const cookie = await signIn();
  const a = await send('vars.test', '/doc?page=2', { headers: { cookie } });
  assert.equal(a.status, 200, `${a.status} ${a.body}`);
  assert.equal((JSON.parse(a.body) as Seen).headers['x-auth-request-user'], 'alice');
  const b = await send('svc.test', '/doc/%22x%22?q=a%20b', { headers: { cookie } });
  assert.equal(b.status, 200, `${b.status} ${b.body}`);
  await until('oauth2-proxy logged both subrequests', () =>
    proxyOut.some((l) => l.includes(' vars.test GET ') && l.includes('"/oauth2/auth?from=%2Fdoc%3Fpage%3D2&m=GET"')) &&
    proxyOut.some((l) => l.includes(' oauth2-proxy.team.svc GET ') && l.includes('"/oauth2/auth?u=/doc/%22x%22?q=a%20b&h=svc.test"')), 5_000);
});

test('a host without a /oauth2 route (only its application\'s "/"), a /oauth2 route with auth-url itself, another namespace\'s /oauth2: 500, with the reason logged', async () => {
  const cookie = await signIn();
  for (const host of ['lonely.test', 'loop.test', 'shared.test']) {
    const a = await send(host, '/doc', { headers: { cookie } });
    assert.equal(a.status, 500, `${host}: ${a.status} ${a.body}`);
  }
  await until('the reasons in the error log', () =>
    nginxLines.some((l) => l.includes('host lonely.test has no route for /oauth2/auth but its catch-all')) &&
    nginxLines.some((l) => l.includes('the route of host loop.test for /oauth2/auth requires authentication itself (it would loop)')) &&
    nginxLines.some((l) => l.includes('the route of host shared.test for /oauth2/auth is another namespace')), 5_000);
  // The loop host's own /oauth2 is protected like any path of it: no recursion, the same 500.
  assert.equal((await send('loop.test', '/oauth2/start', { headers: { cookie } })).status, 500);
});
