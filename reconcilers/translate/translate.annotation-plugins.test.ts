// ingress-nginx annotations that are plugins in disguise (IP allow/deny lists, CORS, rate limits) become the same
// plugin instances Portico's Plugin objects give, validated by the same schemas — table tests, no cluster.
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ing, modelOf, OPTS, rule, svc, svcRef } from './fixtures.test-helpers.ts';
import { translate } from './translate.ts';
import { Model } from '../model/model.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../model/global-config.ts';
import { normalizeIngress, normalizeIngressClass, normalizeService } from '../model/normalize.ts';
import { portico } from './fixtures.test-helpers.ts';

const web = svc('web', [{ port: 80 }]);
const N = 'nginx.ingress.kubernetes.io/';
function one(annotations: Record<string, string>) {
  const r = translate(modelOf({ services: [web], ingresses: [ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations })] }).snapshot(), OPTS);
  const route = r.config.data.routes['a.example.com']?.rules[0]?.route;
  const plugins = (route?.plugins ?? []).map((id) => ({ id, ...r.config.data.plugins[id] }) as { id: string; type: string } & Record<string, unknown>);
  return { r, route, plugins };
}

test('allow- and denylist → one ip-restriction plugin (deny wins, others 403); allowlist-source-range wins over its older name', () => {
  const { route, plugins } = one({ [`${N}whitelist-source-range`]: '10.0.0.0/8, 192.0.2.0/24', [`${N}allowlist-source-range`]: '198.51.100.0/24', [`${N}denylist-source-range`]: '198.51.100.7' });
  assert.equal(route?.backendId, 'default_web_80', 'served (not failing closed)');
  assert.deepEqual(plugins, [{ id: 'ing.default.a.ip', name: 'default/a (annotations)', type: 'ip-restriction', status: 403, allow: ['198.51.100.0/24'], deny: ['198.51.100.7'] }]);
});

test('an IP list Portico cannot apply fails the Ingress closed (503), never open', () => {
  const { route, r } = one({ [`${N}whitelist-source-range`]: '10.0.0.0/8, 300.1.1.1' });
  assert.equal(route?.backendId, null);
  assert.equal(route?.action, 'unavailable');
  assert.match(route?.closedReason ?? '', /client IP (allowlist|list).*(invalid|cannot be applied)/);
  assert.ok(r.events.some((e) => e.reason === 'UnsupportedAccessControl'));
});

test("enable-cors → cors plugin with ingress-nginx's defaults; origin \"*\" never with credentials; cors-* without enable-cors is reported", () => {
  let { plugins } = one({ [`${N}enable-cors`]: 'true' });
  assert.deepEqual(plugins, [
    {
      id: 'ing.default.a.cors',
      name: 'default/a (annotations)',
      type: 'cors',
      allowOrigins: ['*'],
      allowMethods: ['GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS'],
      allowHeaders: ['dnt', 'keep-alive', 'user-agent', 'x-requested-with', 'if-modified-since', 'cache-control', 'content-type', 'range', 'authorization'],
      exposeHeaders: [],
      allowCredentials: false,
      maxAgeSeconds: 1728000,
    },
  ]);
  ({ plugins } = one({ [`${N}enable-cors`]: 'true', [`${N}cors-allow-origin`]: 'https://app.example.com, https://*.example.org', [`${N}cors-allow-methods`]: 'get, post', [`${N}cors-max-age`]: '600' }));
  const c = plugins[0] as unknown as { allowOrigins: string[]; allowMethods: string[]; allowCredentials: boolean; maxAgeSeconds: number };
  assert.deepEqual(c.allowOrigins, ['https://app.example.com', 'https://*.example.org']);
  assert.deepEqual(c.allowMethods, ['GET', 'POST']);
  assert.equal(c.allowCredentials, true, 'ingress-nginx default with explicit origins');
  assert.equal(c.maxAgeSeconds, 600);
  const stray = one({ [`${N}cors-allow-origin`]: 'https://x.example' });
  assert.deepEqual(stray.plugins, []);
  assert.ok(stray.r.events.some((e) => e.reason === 'InvalidConfiguration' && /has no effect without .*enable-cors/.test(e.message)));
  const bad = one({ [`${N}enable-cors`]: 'true', [`${N}cors-allow-origin`]: 'not an origin' });
  assert.deepEqual(bad.plugins, [], 'an invalid CORS setting leaves the plugin out (as ingress-nginx ignores it)');
  assert.equal(bad.route?.backendId, 'default_web_80');
  assert.ok(bad.r.events.some((e) => e.reason === 'InvalidConfiguration' && /allowOrigins/.test(e.message)));
});

test('limit-rps / limit-rpm → rate-limit per client IP, burst = rate × multiplier (default 5), 503, limit-whitelist exempt; after CORS and IP lists', () => {
  const { plugins } = one({ [`${N}limit-rps`]: '10', [`${N}limit-rpm`]: '300', [`${N}limit-burst-multiplier`]: '3', [`${N}limit-whitelist`]: '10.0.0.0/8', [`${N}enable-cors`]: 'true', [`${N}denylist-source-range`]: '203.0.113.0/24' });
  assert.deepEqual(plugins.map((p) => p.type), ['ip-restriction', 'cors', 'rate-limit', 'rate-limit'], 'the fixed plugin order');
  type RL = { rate: number; periodSeconds: number; burst: number; by: string; status: number; exempt: string[]; key: string };
  const rps = plugins.find((p) => p.id === 'ing.default.a.rps') as unknown as RL;
  const rpm = plugins.find((p) => p.id === 'ing.default.a.rpm') as unknown as RL;
  assert.deepEqual({ ...rps, key: undefined }, { id: 'ing.default.a.rps', name: 'default/a (annotations)', type: 'rate-limit', rate: 10, periodSeconds: 1, burst: 30, by: 'ip', status: 503, exempt: ['10.0.0.0/8'], key: undefined });
  assert.equal(rpm?.rate, 300);
  assert.equal(rpm?.periodSeconds, 60);
  assert.equal(rpm?.burst, 900);
  assert.match(rps?.key ?? '', /^ing\.default\.a\.rps_[0-9a-f]{8}$/, 'counters keyed by the limits');
  assert.deepEqual(one({ [`${N}limit-rps`]: '7' }).plugins.map((p) => (p as { burst?: number }).burst), [35]);
  const stray = one({ [`${N}limit-whitelist`]: '10.0.0.0/8' });
  assert.ok(stray.r.events.some((e) => /has no effect without .*limit-rps/.test(e.message)));
});

test('ConfigMap limit-req-status-code sets the status of the limit-rps / limit-rpm rate limits', () => {
  const m = modelOf({ services: [web], ingresses: [ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { [`${N}limit-rps`]: '5' } })] });
  m.setGlobalConfig({ ...m.globalConfig(), limitReqStatusCode: 429 });
  const r = translate(m.snapshot(), OPTS);
  assert.equal((r.config.data.plugins['ing.default.a.rps'] as { status?: number }).status, 429);
});

test('annotation plugins and named Plugins mix on one route; no annotation plugin → the fast path (no plugins)', () => {
  assert.equal(one({}).route?.plugins, undefined);
});

test('limit-connections → a conn-limit plugin per Ingress with the ConfigMap limit-conn-status-code; limit-allowlist exempts', () => {
  const { plugins, r } = one({ [`${N}limit-connections`]: '5', [`${N}limit-allowlist`]: '198.51.100.0/24' });
  assert.deepEqual(plugins, [{ id: 'ing.default.a.conn', name: 'default/a (annotations)', type: 'conn-limit', limit: 5, status: 503, key: 'ing.default.a.conn', exempt: ['198.51.100.0/24'] }]);
  assert.equal(r.events.filter((e) => e.type === 'Warning').length, 0, JSON.stringify(r.events));
  const m = modelOf({ services: [web], ingresses: [ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { [`${N}limit-connections`]: '2' } })] });
  m.setGlobalConfig({ ...m.globalConfig(), limitConnStatusCode: 429 });
  assert.equal((translate(m.snapshot(), OPTS).config.data.plugins['ing.default.a.conn'] as { status?: number }).status, 429);
  const bad = one({ [`${N}limit-connections`]: '5;' });
  assert.equal(bad.plugins.length, 0);
  assert.ok(bad.r.events.some((e) => e.type === 'Warning' && /limit-connections/.test(e.message)), JSON.stringify(bad.r.events));
});

test('satisfy: any flags the Ingress\'s access plugins (allowlist, basic auth, auth-url) — and only those', () => {
  const annotations = { [`${N}satisfy`]: 'any', [`${N}whitelist-source-range`]: '198.51.100.0/24', [`${N}auth-url`]: 'http://auth.default.svc.cluster.local/check', [`${N}limit-rps`]: '5' };
  const r = translate(modelOf({ services: [web, svc('auth', [{ port: 80 }])], ingresses: [ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations })] }).snapshot(), OPTS);
  const plugins = (r.config.data.routes['a.example.com']?.rules[0]?.route.plugins ?? []).map((id) => r.config.data.plugins[id] as { type: string; satisfyAny?: true });
  const byType = Object.fromEntries(plugins.map((p) => [p.type, p.satisfyAny]));
  assert.deepEqual(byType, { 'ip-restriction': true, 'external-auth': true, 'rate-limit': undefined });
  const all = one({ [`${N}satisfy`]: 'all', [`${N}whitelist-source-range`]: '198.51.100.0/24' });
  assert.equal(all.plugins[0]?.satisfyAny, undefined);
  const bad = one({ [`${N}satisfy`]: 'any;', [`${N}whitelist-source-range`]: '198.51.100.0/24' });
  assert.equal(bad.plugins[0]?.satisfyAny, undefined, 'an invalid value is refused (satisfy all)');
  assert.ok(bad.r.events.some((e) => e.type === 'Warning' && /satisfy/.test(e.message)));
});

test('satisfy: any with the ConfigMap\'s global-auth-url uses a flagged copy of the global instance (others keep the shared one)', () => {
  const m = modelOf({
    services: [web, svc('auth', [{ port: 80 }])],
    ingresses: [
      ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { [`${N}satisfy`]: 'any', [`${N}whitelist-source-range`]: '198.51.100.0/24' } }),
      ing('b', { rules: [rule('b.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }),
    ],
  });
  m.setGlobalConfig({ ...m.globalConfig(), globalAuthUrl: 'http://auth.default.svc.cluster.local/check' });
  const r = translate(m.snapshot(), OPTS);
  const pa = r.config.data.routes['a.example.com']?.rules[0]?.route.plugins ?? [];
  const pb = r.config.data.routes['b.example.com']?.rules[0]?.route.plugins ?? [];
  assert.ok(pa.includes('portico.global-auth.any') && pb.includes('portico.global-auth'), `${pa} / ${pb}`);
  assert.equal(r.config.data.plugins['portico.global-auth.any']?.satisfyAny, true);
  assert.equal(r.config.data.plugins['portico.global-auth']?.satisfyAny, undefined);
});

const APR1 = '$apr1$Ab3dEf9h$uOfqhQrHMNaJeurM74PYM0'; // openssl passwd -apr1 -salt Ab3dEf9h pa55word
const b64 = (x: string) => Buffer.from(x).toString('base64');
function withSecret(annotations: Record<string, string>, data: Record<string, string> | undefined, secretNs = 'default') {
  const m = new Model();
  m.setIngressClass(normalizeIngressClass(portico()));
  m.setService(normalizeService(web));
  const secrets = (k: string) => (data && k === `${secretNs}/users` ? { data } : undefined);
  const n = normalizeIngress(ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations }), secrets);
  assert.ok(n.ok);
  m.setIngress(n.ingress);
  const r = translate(m.snapshot(), OPTS);
  return { n: n.ingress, r, route: r.config.data.routes['a.example.com']?.rules[0]?.route };
}

test('auth-type basic + auth-secret (htpasswd auth-file or auth-map) → basic-auth plugin with those users; Authorization kept', () => {
  const file = withSecret({ [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'users', [`${N}auth-realm`]: 'Staff only' }, { auth: b64(`# staff\nann:${APR1}\nbad line without colon\nbob:plaintext\n`) });
  assert.equal(file.n.authSecret, 'default/users', 'the Secret is indexed so it is loaded');
  assert.equal(file.route?.backendId, 'default_web_80');
  const id = file.route?.plugins?.[0] ?? '';
  assert.deepEqual(file.r.config.data.plugins[id], { name: 'default/a (annotations)', type: 'basic-auth', namespace: 'default', realm: 'Staff only', hideCredentials: false, users: [{ username: 'ann', hash: APR1 }] });
  assert.ok(file.r.events.some((e) => /line 4 of "auth": not "user:hash" with a password hash Portico can verify/.test(e.message)), 'a plaintext line is reported (by its number), not used');
  const map = withSecret({ [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'default/users', [`${N}auth-secret-type`]: 'auth-map' }, { zed: b64(APR1) });
  assert.deepEqual((map.r.config.data.plugins[map.route?.plugins?.[0] ?? ''] as { users: unknown }).users, [{ username: 'zed', hash: APR1 }]);
});

test('auth-secret: a line whose hash costs more than the bound (bcrypt 31, sha512-crypt 999999999 rounds) is refused with the Secret and line named (never the user or hash); the others are served', () => {
  const BC31 = `$2b$31$abcdefghijklmnopqrstuu${'A'.repeat(31)}`;
  const SHA_HUGE = `$6$rounds=999999999$saltsalt$${'x'.repeat(86)}`;
  const BC12 = '$2b$12$abcdefghijklmnopqrstuuUlLaM5x9SyIDmIHkwFhJ0prKxzUBZ.u';
  const file = withSecret({ [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'users' }, { auth: b64(`ann:${APR1}\nmallory:${BC31}\n# a comment\nmel:${SHA_HUGE}\nbo:${BC12}\n`) });
  const users = (file.r.config.data.plugins[file.route?.plugins?.[0] ?? ''] as { users: { username: string }[] }).users;
  assert.deepEqual(users.map((u) => u.username), ['ann', 'bo'], 'the lines within the bound are served');
  const msgs = file.n.problems.join('\n');
  assert.match(msgs, /auth-secret default\/users: line 2 of "auth": bcrypt cost 31 is over Portico's bound of 12/);
  assert.match(msgs, /auth-secret default\/users: line 4 of "auth": sha512-crypt rounds=999999999 is over Portico's bound of 500000/);
  assert.ok(!msgs.includes('abcdefghijklmnop') && !msgs.includes('saltsalt') && !msgs.includes('mallory'), 'no hash content or user name in the message');
  assert.ok(file.r.events.some((e) => e.type === 'Warning' && /line 2 of "auth": bcrypt cost 31/.test(e.message)), 'a Warning Event on the Ingress');
  // An auth-map entry is named by its position among the keys.
  const map = withSecret({ [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'users', [`${N}auth-secret-type`]: 'auth-map' }, { mallory: b64(BC31) });
  assert.equal(map.route?.action, 'unavailable', 'no usable user left: fails closed');
  assert.match(map.n.problems.join('\n'), /auth-secret default\/users: key 1 \(in sorted order\): bcrypt cost 31 is over/);
});

test('basic auth: problems with the Secret name lines or key positions, never its content or key names (Events are read by users who may not read Secrets)', () => {
  const leaky = ['hunter2-no-colon', 'carol', 's3cret-plain', 'dave', 'not-a-hash'];
  const file = withSecret({ [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'users' }, { auth: b64(`ann:${APR1}\nhunter2-no-colon\ncarol:s3cret-plain\n`) });
  const map = withSecret({ [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'users', [`${N}auth-secret-type`]: 'auth-map' }, { ann: b64(APR1), dave: b64('not-a-hash') });
  const bad = withSecret({ [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'users' }, { auth: b64('hunter2-no-colon\n') });
  for (const x of [file, map, bad]) {
    const said = [...x.r.events.map((e) => e.message), ...x.n.problems, ...x.n.accessControl.map((a) => a.kind), x.route?.closedReason ?? ''].join('\n');
    for (const s of leaky) assert.ok(!said.includes(s), `${JSON.stringify(s)} from the Secret reached a message:\n${said}`);
  }
  assert.match(file.r.events.map((e) => e.message).join('\n'), /line 2 of "auth".*skipped[\s\S]*line 3 of "auth".*skipped/);
  assert.match(map.r.events.map((e) => e.message).join('\n'), /key 2 \(in sorted order\): not "user:hash"/);
  assert.equal(bad.route?.action, 'unavailable');
});

test('basic or digest auth that cannot be applied fails closed: missing Secret, no usable user, another namespace, an htpasswd file given to digest', () => {
  for (const [ann, data, why] of [
    [{ [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'users' }, undefined, /Secret default\/users not found/],
    [{ [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'users' }, { auth: b64('x:plain\n') }, /no usable user/],
    [{ [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'other/users' }, { auth: b64(`ann:${APR1}`) }, /another namespace/],
    [{ [`${N}auth-type`]: 'basic' }, undefined, /auth-secret is missing/],
    // digest used to fail closed whatever the Secret held (not supported); now only when nothing in it is usable.
    [{ [`${N}auth-type`]: 'digest', [`${N}auth-secret`]: 'users' }, { auth: b64(`ann:${APR1}`) }, /digest authentication that cannot be applied \(Secret default\/users holds no usable user/],
    [{ [`${N}auth-type`]: 'digest', [`${N}auth-secret`]: 'users' }, undefined, /digest authentication that cannot be applied \(Secret default\/users not found/],
    [{ [`${N}auth-type`]: 'digest', [`${N}auth-secret`]: 'other/users' }, { auth: b64(`ann:R:${HA1_ANN}`) }, /another namespace/],
    [{ [`${N}auth-type`]: 'digest' }, undefined, /auth-secret is missing/],
  ] as const) {
    const { route } = withSecret(ann, data as Record<string, string> | undefined);
    assert.equal(route?.backendId, null, String(why));
    assert.equal(route?.action, 'unavailable');
    assert.match(route?.closedReason ?? '', why);
  }
});

const md5 = (x: string) => createHash('md5').update(x).digest('hex');
const HA1_ANN = md5('ann:R:pa55word');

test('auth-type digest + an htdigest auth-secret → digest-auth plugin with the users of the challenge\'s realm; bad lines reported by number', () => {
  const bob = md5('bob:Team:s3cret');
  const file = withSecret({ [`${N}auth-type`]: 'digest', [`${N}auth-secret`]: 'users', [`${N}auth-realm`]: 'Team' }, {
    auth: b64(`# team\nann:Team:${md5('ann:Team:pa55word').toUpperCase()}\nbob:Team:${bob}\nann:Team:${bob}\ncarol:Other:${bob}\ndave:Team:not-a-hash\nerin:${bob}\n`),
  });
  assert.equal(file.route?.backendId, 'default_web_80', 'served');
  assert.equal(file.n.authSecret, 'default/users', 'the Secret is indexed so it is loaded (and its changes re-read)');
  const id = file.route?.plugins?.[0] ?? '';
  assert.deepEqual(file.r.config.data.plugins[id], {
    name: 'default/a (annotations)',
    type: 'digest-auth',
    realm: 'Team',
    users: [{ username: 'ann', ha1: md5('ann:Team:pa55word') }, { username: 'bob', ha1: bob }],
  });
  const msgs = file.n.problems.join('\n');
  assert.match(msgs, /line 4 of "auth": a user already given earlier; the first one counts/);
  assert.match(msgs, /line 5 of "auth": its realm is not "Team" \(the challenge's\); skipped/);
  assert.match(msgs, /line 6 of "auth": the HA1 is not 32 hex digits/);
  assert.match(msgs, /line 7 of "auth": not "user:realm:HA1" \(htdigest\); skipped/);
  for (const leak of ['carol', 'dave', 'erin', bob, 'not-a-hash']) assert.ok(!msgs.includes(leak), `${leak} reached a message`);
  assert.ok(file.r.events.some((e) => e.type === 'Warning' && /line 5 of "auth"/.test(e.message)), 'a Warning Event on the Ingress');
});

test('digest: without auth-realm the one realm of the file is the challenge\'s; several realms, or bare HA1s without a realm, fail closed', () => {
  const one = withSecret({ [`${N}auth-type`]: 'digest', [`${N}auth-secret`]: 'users' }, { auth: b64(`ann:R:${HA1_ANN}\n`) });
  assert.deepEqual(one.r.config.data.plugins[one.route?.plugins?.[0] ?? ''], { name: 'default/a (annotations)', type: 'digest-auth', realm: 'R', users: [{ username: 'ann', ha1: HA1_ANN }] });
  const two = withSecret({ [`${N}auth-type`]: 'digest', [`${N}auth-secret`]: 'users' }, { auth: b64(`ann:R:${HA1_ANN}\nbob:S:${HA1_ANN}\n`) });
  assert.equal(two.route?.action, 'unavailable');
  assert.match(two.route?.closedReason ?? '', /name 2 realms and no auth-realm says which one/);
  const bare = withSecret({ [`${N}auth-type`]: 'digest', [`${N}auth-secret`]: 'users', [`${N}auth-secret-type`]: 'auth-map' }, { ann: b64(HA1_ANN) });
  assert.equal(bare.route?.action, 'unavailable');
  assert.match(bare.n.problems.join('\n'), /key 1 \(in sorted order\): an HA1 without a realm needs auth-realm/);
  // A realm an htdigest line cannot hold fails closed.
  const colon = withSecret({ [`${N}auth-type`]: 'digest', [`${N}auth-secret`]: 'users', [`${N}auth-realm`]: 'a:b' }, { auth: b64(`ann:R:${HA1_ANN}\n`) });
  assert.equal(colon.route?.action, 'unavailable');
  assert.match(colon.route?.closedReason ?? '', /auth-realm contains ":"/);
});

test('digest auth-map: a key per user, the value "realm:HA1" (what ingress-nginx writes into the file) or the HA1 alone (for auth-realm)', () => {
  const map = withSecret({ [`${N}auth-type`]: 'digest', [`${N}auth-secret`]: 'users', [`${N}auth-secret-type`]: 'auth-map', [`${N}auth-realm`]: 'R' }, {
    ann: b64(`R:${HA1_ANN}\n`),
    bob: b64(md5('bob:R:x')),
    carol: b64(`Other:${HA1_ANN}`),
    dave: b64('a:b:c'),
  });
  assert.deepEqual((map.r.config.data.plugins[map.route?.plugins?.[0] ?? ''] as { users: unknown }).users, [{ username: 'ann', ha1: HA1_ANN }, { username: 'bob', ha1: md5('bob:R:x') }]);
  assert.match(map.n.problems.join('\n'), /key 3 \(in sorted order\): its realm is not "R"/);
  assert.match(map.n.problems.join('\n'), /key 4 \(in sorted order\): the value is not "realm:HA1" or an HA1/);
});

test('digest: at most 10,000 users (what the data plane takes); the rest are reported and left out', () => {
  const lines = Array.from({ length: 10_002 }, (_, i) => `u${i}:R:${HA1_ANN}`).join('\n');
  const big = withSecret({ [`${N}auth-type`]: 'digest', [`${N}auth-secret`]: 'users' }, { auth: b64(lines) });
  assert.equal((big.r.config.data.plugins[big.route?.plugins?.[0] ?? ''] as { users: unknown[] }).users.length, 10_000);
  assert.match(big.n.problems.join('\n'), /more than 10000 users; the 2 after the first 10000 are left out/);
});

test('digest with satisfy any and an allowlist: both flagged satisfyAny; no-auth-locations drop the digest plugin', () => {
  const any = withSecret({ [`${N}auth-type`]: 'digest', [`${N}auth-secret`]: 'users', [`${N}satisfy`]: 'any', [`${N}whitelist-source-range`]: '10.0.0.0/8' }, { auth: b64(`ann:R:${HA1_ANN}\n`) });
  const types = (any.route?.plugins ?? []).map((id) => [any.r.config.data.plugins[id]?.type, any.r.config.data.plugins[id]?.satisfyAny]);
  assert.deepEqual(types, [['ip-restriction', true], ['digest-auth', true]]);
  const m = new Model();
  m.setIngressClass(normalizeIngressClass(portico()));
  m.setService(normalizeService(web));
  const n = normalizeIngress(ing('a', { rules: [rule('a.example.com', [{ path: '/.well-known/acme-challenge', backend: svcRef('web', 80) }, { path: '/', backend: svcRef('web', 80) }])] }, { annotations: { [`${N}auth-type`]: 'digest', [`${N}auth-secret`]: 'users' } }), (k) => (k === 'default/users' ? { data: { auth: b64(`ann:R:${HA1_ANN}\n`) } } : undefined));
  assert.ok(n.ok);
  m.setIngress(n.ingress);
  const r = translate(m.snapshot(), OPTS);
  const byPath = Object.fromEntries((r.config.data.routes['a.example.com']?.rules ?? []).map((x) => [x.path, (x.route.plugins ?? []).map((id) => r.config.data.plugins[id]?.type)]));
  assert.deepEqual(byPath, { '/.well-known/acme-challenge': [], '/': ['digest-auth'] });
});

test('digest refused by annotations-risk-level (auth-secret and auth-realm are Medium): refused together, the Ingress fails closed, never served open', () => {
  const m = new Model();
  m.setIngressClass(normalizeIngressClass(portico()));
  m.setService(normalizeService(web));
  m.setGlobalConfig(parseGlobalConfig({ 'annotations-risk-level': 'Low' }, defaultGlobalConfig()).values);
  const n = normalizeIngress(ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { [`${N}auth-type`]: 'digest', [`${N}auth-secret`]: 'users' } }), (k) => (k === 'default/users' ? { data: { auth: b64(`ann:R:${HA1_ANN}\n`) } } : undefined));
  assert.ok(n.ok);
  m.setIngress(n.ingress);
  const r = translate(m.snapshot(), OPTS);
  const route = r.config.data.routes['a.example.com']?.rules[0]?.route;
  assert.equal(route?.action, 'unavailable');
  assert.deepEqual(route?.plugins ?? [], []);
  assert.ok(r.events.some((e) => e.reason === 'RiskyAnnotation' && /auth-type .*belongs with .*auth-secret/.test(e.message)), JSON.stringify(r.events.map((e) => e.message)));
});

test('permanent-redirect / temporal-redirect (+ -code) → a redirect plugin answering every request with that URL', () => {
  let { plugins, route } = one({ [`${N}permanent-redirect`]: 'https://www.example.com/new-home' });
  assert.equal(route?.backendId, 'default_web_80');
  assert.deepEqual(plugins, [{ id: 'ing.default.a.redirect', name: 'default/a (annotations)', type: 'redirect', status: 301, keepQuery: false, scheme: 'https', host: 'www.example.com', path: '/new-home' }]);
  ({ plugins } = one({ [`${N}temporal-redirect`]: 'http://other.example.com:8443/', [`${N}temporal-redirect-code`]: '307' }));
  assert.deepEqual(plugins.map((p) => [p.status, p.scheme, p.host, p.port, p.path]), [[307, 'http', 'other.example.com', 8443, '/']]);
  const both = one({ [`${N}permanent-redirect`]: 'https://a.example.com', [`${N}temporal-redirect`]: 'https://b.example.com' });
  assert.equal(both.plugins[0]?.host, 'a.example.com');
  assert.ok(both.r.events.some((e) => /permanent-redirect wins/.test(e.message)));
  // A query of its own is kept, percent-encoded as a URL has it (ingress-nginx's `return 301 <url>`).
  assert.deepEqual(one({ [`${N}permanent-redirect`]: 'https://x.example.com/land?utm_source=old site&a=1' }).plugins.map((p) => [p.path, p.query, p.keepQuery]), [['/land', 'utm_source=old%20site&a=1', false]]);
  for (const bad of ['ftp://x.example.com/', 'https://user:pw@x.example.com/', 'https://x.example.com/#frag', 'not a url']) {
    const r = one({ [`${N}permanent-redirect`]: bad });
    assert.deepEqual(r.plugins, [], bad);
    assert.ok(r.r.events.some((e) => e.reason === 'InvalidConfiguration' && /permanent-redirect/.test(e.message)), bad);
  }
  assert.deepEqual(one({ [`${N}permanent-redirect`]: 'https://x.example.com', [`${N}permanent-redirect-code`]: '304' }).plugins, [], 'a code that is not a redirect is refused');
});

test('x-forwarded-prefix → request-headers; upstream-vhost → rewrite of the Host sent upstream; invalid values reported', () => {
  const { plugins } = one({ [`${N}x-forwarded-prefix`]: '/shop', [`${N}upstream-vhost`]: 'backend.internal' });
  assert.deepEqual(plugins.map((p) => [p.type, JSON.stringify(p.type === 'rewrite' ? p.host : p.set)]), [
    ['request-headers', JSON.stringify([{ name: 'x-forwarded-prefix', value: '/shop' }])],
    ['rewrite', JSON.stringify('backend.internal')],
  ]);
  // The variables ingress-nginx users write: $host is what is sent anyway; $http_host / $best_http_host the header as sent.
  const same = one({ [`${N}upstream-vhost`]: '$host' });
  assert.deepEqual([same.plugins, same.r.events.filter((e) => e.type === 'Warning').length], [[], 0]);
  for (const v of ['$http_host', '$best_http_host']) assert.deepEqual(one({ [`${N}upstream-vhost`]: v }).plugins.map((p) => [p.type, p.type === 'rewrite' ? p.hostHeader : null]), [['rewrite', true]], v);
  for (const v of ['$host.internal', '$request_uri']) assert.equal(one({ [`${N}upstream-vhost`]: v }).r.events.filter((e) => e.reason === 'InvalidConfiguration').length, 1, v);
  const bad = one({ [`${N}upstream-vhost`]: 'bad host!', [`${N}x-forwarded-prefix`]: 'a\u0007b' });
  assert.deepEqual(bad.plugins, []);
  assert.equal(bad.r.events.filter((e) => e.reason === 'InvalidConfiguration').length, 2);
});

test('backend-protocol → the route\'s directive profile (https / grpc / grpcs / fcgi); HTTP and AUTO_HTTP need none; an invalid one is reported', () => {
  for (const [value, proto] of [['HTTPS', 'HTTPS'], ['GRPC', 'GRPC'], ['GRPCS', 'GRPCS'], ['FCGI', 'FCGI'], ['HTTP', undefined], ['AUTO_HTTP', undefined]] as const) {
    const { r, route } = one({ [`${N}backend-protocol`]: value });
    const prof = r.config.structure.profiles.find((p) => p.name === route?.profile);
    assert.equal(prof?.backendProtocol, proto, value);
    assert.equal(prof?.sslServerName, undefined, 'no SNI without an Upstream (ingress-nginx default)');
  }
  const bad = one({ [`${N}backend-protocol`]: 'UWSGI' });
  assert.equal(bad.route?.profile, undefined);
  assert.ok(bad.r.events.some((e) => /backend-protocol must be HTTP, HTTPS, GRPC, GRPCS, FCGI or AUTO_HTTP/.test(e.message)));
});

test('limit-rate with proxy-buffering "off" cannot be applied (nginx does not limit unbuffered answers): a Warning, no profile', () => {
  const { r, route } = one({ [`${N}limit-rate`]: '10', [`${N}proxy-buffering`]: 'off' });
  assert.ok(r.events.some((e) => e.type === 'Warning' && /limit-rate: nginx does not rate-limit responses it does not buffer/.test(e.message)), JSON.stringify(r.events));
  assert.equal(r.config.structure.profiles.some((p) => p.limitRateKb !== undefined), false);
  assert.equal(route?.backendId, 'default_web_80');
});
