// ingress-nginx's auth-snippet through the whole data plane: Ingresses with auth-url and an auth-snippet are
// translated (with the ConfigMap's allow-snippet-annotations and annotations-risk-level: Critical), rendered and
// pushed into a real nginx (Debian's, as in production); a fake auth service (Bearer good → 200, Bearer forbidden →
// 403, else 401) and an echo backend run in this file's own network namespace (testnet.test-helpers.ts, subnet
// 198.19.226.0/30). Real requests prove that the snippet's headers reach the auth service (which decides on them),
// that the client request reaches the backend without them, and that a snippet that cannot apply fails closed.
// Ports 31940-31959 belong to this file: nginx 31940-31942, the echo backend 31943, the auth service 31944.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { translate } from '../../translate/translate.ts';
import { ing, modelOf, OPTS, rule, slice, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../../model/global-config.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { TestNet, type Seen } from './testnet.test-helpers.ts';
import { capturingLogger, liveNginx, sendTo, startLive, stopLive, type Answer } from './live.test-helpers.ts';

const LISTEN = { httpPort: 31940, httpsPort: 31941, statusPort: 31942, address: '127.0.0.1' };
const ECHO_PORT = 31943;
const AUTH_PORT = 31944;

const net = new TestNet(226);
const IP = net.ip;

const { logger } = capturingLogger();
const { dynamic, nginx } = liveNginx('portico-auth-snippet-', logger);

const N = 'nginx.ingress.kubernetes.io/';
const AUTH_SNIPPET = `${N}auth-snippet`;
const AUTH = `http://auth.team.svc.cluster.local:${AUTH_PORT}`;
const app = (name: string, host: string, annotations: Record<string, string>) =>
  ing(name, { rules: [rule(host, [{ path: '/', backend: svcRef('web', 80) }])] }, { ns: 'team', annotations: Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${N}${k}`, v])) });

// The auth service decides on Authorization: the snippet builds it from a header the client sends under another name
// (the pattern of auth-snippets that adapt a client's credentials to what the auth service expects).
const SNIPPET = [
  'set $team platform;',
  'if ($http_x_legacy = "1") { set $team legacy; }',
  'proxy_set_header Authorization "Bearer $http_x_token";',
  'proxy_set_header X-Team $team;',
  'more_set_input_headers "X-Original-Path: $request_uri";',
  'more_clear_input_headers "X-Debug-*";',
].join('\n');

function desired(): GatewayConfig {
  const m = modelOf({
    services: [svc('web', [{ name: 'http', port: 80, targetPort: ECHO_PORT }], 'team'), svc('auth', [{ name: 'http', port: AUTH_PORT, targetPort: AUTH_PORT }], 'team')],
    slices: [slice('web-x', 'web', [{ name: 'http', port: ECHO_PORT }], [{ ip: IP }], 'team'), slice('auth-x', 'auth', [{ name: 'http', port: AUTH_PORT }], [{ ip: IP }], 'team')],
    ingresses: [
      app('snip', 'snip.test', { 'auth-url': `${AUTH}/check`, 'auth-response-headers': 'X-User', 'auth-snippet': SNIPPET }),
      app('refused', 'refused.test', { 'auth-url': `${AUTH}/check`, 'auth-snippet': 'proxy_set_header Authorization "Bearer good";\nreturn 200;' }),
      app('plain', 'plain.test', { 'auth-url': `${AUTH}/check` }),
    ],
  });
  m.setGlobalConfig(parseGlobalConfig({ 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' }, defaultGlobalConfig()).values);
  const r = translate(m.snapshot(), { ...OPTS, listen: LISTEN });
  const invalid = r.events.filter((e) => e.reason === 'InvalidSnippet').map((e) => `${e.ref}: ${e.message}`);
  assert.deepEqual(invalid, [
    `Ingress/team/refused: annotation ${AUTH_SNIPPET} is refused: ` + 'line 2: directive "return" would answer the auth subrequest in place of the auth service; Portico does not run it there (an auth-snippet may only shape the subrequest: proxy_set_header, more_set_input_headers, more_clear_input_headers, set, if); nothing of this snippet is applied and the Ingress fails closed (its auth service would decide without what the snippet sets)',
  ]);
  return r.config;
}

before(async () => {
  net.up();
  await net.start('echo', ECHO_PORT, 'echo');
  await net.start('auth', AUTH_PORT, 'auth');
  await startLive(nginx, dynamic, desired());
});
after(() => stopLive(nginx, dynamic, net));

const send = (host: string, p: string, headers: Record<string, string> = {}): Promise<Answer> => sendTo(LISTEN.httpPort, host, p, { headers });
async function lastAuth(): Promise<Seen> {
  const all = await net.requests('auth');
  assert.ok(all.length, 'the auth service was asked');
  return all[all.length - 1] as Seen;
}

test('auth-snippet: the auth service receives the snippet\'s headers and allows on them; the backend gets the client\'s request', async () => {
  const a = await send('snip.test', '/doc?x=1', { 'x-token': 'good', 'x-debug-trace': 'on', authorization: 'Basic Y2xpZW50' });
  assert.equal(a.status, 200, a.body);
  const seenByAuth = await lastAuth();
  assert.equal(seenByAuth.headers.authorization, 'Bearer good', "proxy_set_header with the client's X-Token");
  assert.equal(seenByAuth.headers['x-team'], 'platform', 'set, read by proxy_set_header');
  assert.equal(seenByAuth.headers['x-original-path'], '/doc?x=1', 'more_set_input_headers with $request_uri');
  assert.equal(seenByAuth.headers['x-debug-trace'], undefined, 'more_clear_input_headers with a prefix');
  assert.equal(seenByAuth.headers['x-original-url'], 'http://snip.test/doc?x=1', "ingress-nginx's own auth headers stay");
  const backend = JSON.parse(a.body) as Seen;
  assert.equal(backend.headers['x-user'], 'alice', 'auth-response-headers from the allowing answer');
  assert.equal(backend.headers.authorization, 'Basic Y2xpZW50', "the backend gets the client's own Authorization");
  assert.equal(backend.headers['x-team'], undefined, "the snippet's headers are the auth subrequest's only");
  assert.equal(backend.headers['x-debug-trace'], 'on');
});

test('auth-snippet: the auth service denies on the snippet\'s headers (403, 401); an if block changes what it receives', async () => {
  const echoed = await net.count('echo');
  assert.equal((await send('snip.test', '/', { 'x-token': 'forbidden' })).status, 403);
  assert.equal((await lastAuth()).headers.authorization, 'Bearer forbidden');
  const none = await send('snip.test', '/');
  assert.equal(none.status, 401);
  assert.equal(none.headers['www-authenticate'], 'Bearer realm="portico-test"');
  // Authorization sent by the client under its own name is replaced by the snippet's: denied.
  assert.equal((await send('snip.test', '/', { authorization: 'Bearer good' })).status, 401);
  assert.equal(await net.count('echo'), echoed, 'the backend saw none of them');
  assert.equal((await send('snip.test', '/', { 'x-token': 'good', 'x-legacy': '1' })).status, 200);
  assert.equal((await lastAuth()).headers['x-team'], 'legacy');
});

test('auth-snippet that cannot apply (return in the auth subrequest) fails the Ingress closed; without a snippet the client\'s Authorization decides', async () => {
  const asked = await net.count('auth');
  const r = await send('refused.test', '/', { authorization: 'Bearer good' });
  assert.equal(r.status, 503, 'fails closed, never served without its auth-snippet');
  assert.equal(await net.count('auth'), asked, 'not even asked');
  assert.equal((await send('plain.test', '/', { authorization: 'Bearer good' })).status, 200);
  assert.equal((await send('plain.test', '/', { 'x-token': 'good' })).status, 401);
});
