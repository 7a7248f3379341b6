// Issue 21, limits across replicas: ingress-nginx's global-rate-limit annotations and Plugins with `policy: redis`
// through parsing, the ConfigMap's Redis keys and the pure translation — table tests, no cluster. (The data plane's
// side: nginx-assets/lua/tests/redis_limit_test.lua; real nginx + real Redis:
// reconcilers/nginx-driver/nginx/global-rate-limit.nginx.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../operator/kube/object.ts';
import { normalizePlugin, normalizeRoute } from '../crds/normalize.ts';
import { parsePluginConfig } from '../../crds/schema/index.ts';
import { annotationPlugins } from '../annotations/plugins.ts';
import { parseAnnotations } from '../annotations/parse.ts';
import { defaultGlobalConfig, parseGlobalConfig, refusedConfigWhy } from '../model/global-config.ts';
import type { Model } from '../model/model.ts';
import { keyTemplateParts, windowSeconds } from '../config/plugins/rate-limit.ts';
import { ing, modelOf, OPTS, rule, svc, svcRef } from './fixtures.test-helpers.ts';
import { translate } from './translate.ts';

const N = 'nginx.ingress.kubernetes.io/';
const web = (ns: string) => svc('web', [{ port: 80 }], ns);

type Inst = { type: string; policy?: string } & Record<string, unknown>;

function model(ingresses: KubeObject[], config: Record<string, string> = {}): Model {
  const m = modelOf({ services: [web('default'), web('team-a'), web('team-b')], ingresses });
  const g = parseGlobalConfig(config, defaultGlobalConfig());
  assert.deepEqual(g.errors, []);
  m.setGlobalConfig(g.values);
  return m;
}
const ingress = (name: string, host: string, annotations: Record<string, string>, ns = 'default') =>
  ing(name, { rules: [rule(host, [{ path: '/', backend: svcRef('web', 80) }, { path: '/api', backend: svcRef('web', 80) }])] }, { annotations, ns });

function limitsOf(r: ReturnType<typeof translate>, host: string): ({ id: string } & Inst)[] {
  const rules = r.config.data.routes[host]?.rules ?? [];
  const ids = [...new Set(rules.flatMap((x) => x.route.plugins ?? []))];
  return ids.map((id) => ({ id, ...(r.config.data.plugins[id] as unknown as Inst) })).filter((p) => p.type === 'rate-limit');
}

const REDIS = { 'global-rate-limit-redis-host': '10.96.0.20' };
const GRL = { [`${N}global-rate-limit`]: '100', [`${N}global-rate-limit-window`]: '1m' };

test('global-rate-limit + -window → one rate-limit with policy redis for all the Ingress\'s paths, status 429, the ConfigMap\'s Redis', () => {
  const r = translate(model([ingress('a', 'a.example.com', GRL)], REDIS).snapshot(), OPTS);
  const l = limitsOf(r, 'a.example.com');
  assert.equal(l.length, 1, 'one counter per Ingress: every path names the same instance (as ingress-nginx)');
  const rules = r.config.data.routes['a.example.com']?.rules ?? [];
  assert.equal(rules.length, 2);
  for (const x of rules) assert.ok(x.route.plugins?.includes(l[0]!.id));
  const { id, key, ...rest } = l[0]!;
  assert.match(id, /^ing\.default\.a\.grl$/);
  assert.match(String(key), /^ing\.default\.a\.grl_[0-9a-f]{8}$/, 'counters named after the namespace and Ingress (and its limits)');
  assert.deepEqual(rest, {
    name: 'default/a (annotations)',
    type: 'rate-limit',
    policy: 'redis',
    limit: 100,
    windowSeconds: 60,
    by: 'ip',
    status: 429,
    failOpen: true,
    redis: { host: '10.96.0.20', port: 6379, timeoutMs: 50, poolSize: 50, idleMs: 10_000 },
  });
  assert.deepEqual(r.events.filter((e) => e.type === 'Warning'), []);
});

test('the ConfigMap: status code, Redis port/timeouts/pool, fail closed; memcached keys refused by name, pointing to the Redis keys', () => {
  const cfg = { ...REDIS, 'global-rate-limit-status-code': '503', 'global-rate-limit-redis-port': '16379', 'global-rate-limit-redis-timeout': '20', 'global-rate-limit-redis-pool-size': '8', 'global-rate-limit-redis-max-idle-timeout': '30000', 'global-rate-limit-redis-fail-open': 'false' };
  const r = translate(model([ingress('a', 'a.example.com', GRL)], cfg).snapshot(), OPTS);
  const l = limitsOf(r, 'a.example.com')[0]!;
  assert.equal(l.status, 503);
  assert.equal(l.failOpen, false);
  assert.deepEqual(l.redis, { host: '10.96.0.20', port: 16379, timeoutMs: 20, poolSize: 8, idleMs: 30_000 });
  // Values are checked: a host name (nginx resolves none), bad ports and statuses keep the previous value, reported.
  const bad = parseGlobalConfig({ 'global-rate-limit-redis-host': 'redis.cache.svc', 'global-rate-limit-redis-port': '0', 'global-rate-limit-status-code': '200', 'global-rate-limit-redis-fail-open': 'maybe' }, defaultGlobalConfig());
  assert.deepEqual(bad.errors.map((e) => e.key).sort(), ['global-rate-limit-redis-fail-open', 'global-rate-limit-redis-host', 'global-rate-limit-redis-port', 'global-rate-limit-status-code']);
  assert.match(bad.errors.find((e) => e.key === 'global-rate-limit-redis-host')!.message, /expected an IP address/);
  assert.equal(bad.values.globalRateLimitRedisHost, '');
  assert.equal(parseGlobalConfig({ 'global-rate-limit-redis-host': '0.0.0.0' }, defaultGlobalConfig()).errors.length, 1);
  // ingress-nginx's memcached keys: not silently unknown — each one refused with a pointer to the Redis keys.
  const mem = parseGlobalConfig({ 'global-rate-limit-memcached-host': 'memcached.cache', 'global-rate-limit-memcached-port': '11211', 'global-rate-limit-memcached-connect-timeout': '50', 'global-rate-limit-memcached-max-idle-timeout': '10000', 'global-rate-limit-memcached-pool-size': '50' }, defaultGlobalConfig());
  assert.equal(mem.unknown.length, 5);
  for (const k of mem.unknown) assert.match(refusedConfigWhy(k) ?? '', /Redis, not memcached: set global-rate-limit-redis-host/, k);
  // Portico's own keys are known (none of them unknown).
  assert.deepEqual(parseGlobalConfig(cfg, defaultGlobalConfig()).unknown, []);
});

test('no Redis in the ConfigMap: the limit is kept (it fails open, or closed) and the Ingress gets a Warning — never silently ignored', () => {
  const r = translate(model([ingress('a', 'a.example.com', GRL)]).snapshot(), OPTS);
  const l = limitsOf(r, 'a.example.com');
  assert.equal(l.length, 1);
  assert.equal(l[0]!.redis, undefined);
  assert.equal(l[0]!.failOpen, true);
  const w = r.events.filter((e) => e.reason === 'GlobalRateLimitWithoutRedis');
  assert.equal(w.length, 1, 'once per Ingress, not per path');
  assert.equal(w[0]!.ref, 'Ingress/default/a');
  assert.match(w[0]!.message, /sets no global-rate-limit-redis-host: every request is let through unlimited/);
  const closed = translate(model([ingress('a', 'a.example.com', GRL)], { 'global-rate-limit-redis-fail-open': 'false' }).snapshot(), OPTS);
  assert.match(closed.events.find((e) => e.reason === 'GlobalRateLimitWithoutRedis')!.message, /answered 503/);
});

test('annotations: key templates from the allowlist, ignored CIDRs, ingress-nginx\'s default key; half a limit or a bad value is reported', () => {
  const withKey = translate(model([ingress('a', 'a.example.com', { ...GRL, [`${N}global-rate-limit-key`]: '${remote_addr}-${http_X_Api_Client}', [`${N}global-rate-limit-ignored-cidrs`]: '10.0.0.0/8, 192.0.2.1' })], REDIS).snapshot(), OPTS);
  const l = limitsOf(withKey, 'a.example.com')[0]!;
  assert.equal(l.by, 'key');
  assert.deepEqual(l.keyTemplate, [{ v: 'remote_addr' }, '-', { v: 'http_x_api_client' }], 'header variables in lower case, as nginx reads them');
  assert.deepEqual(l.exempt, ['10.0.0.0/8', '192.0.2.1']);
  const dflt = annotationPlugins(parseAnnotations({ ...GRL, [`${N}global-rate-limit-key`]: '$remote_addr' }).values).plugins;
  assert.equal((dflt[0] as { config: { by: string } }).config.by, 'ip', '$remote_addr, the default, counts by client address');
  const problems = (a: Record<string, string>) => {
    const p = parseAnnotations(a);
    return [...p.errors.map((e) => e.message), ...annotationPlugins(p.values).problems].join('\n');
  };
  assert.match(problems({ [`${N}global-rate-limit`]: '100' }), /annotation ignored: .*global-rate-limit: a global rate limit needs both .*global-rate-limit and .*global-rate-limit-window/);
  assert.match(problems({ [`${N}global-rate-limit-window`]: '1m', [`${N}global-rate-limit-key`]: '$host' }), /global-rate-limit-window, .*global-rate-limit-key: a global rate limit needs both/);
  assert.match(problems({ ...GRL, [`${N}global-rate-limit-key`]: '$request_body' }), /\$request_body is not a variable a key may use/);
  assert.match(problems({ ...GRL, [`${N}global-rate-limit-key`]: '$host; include /etc/passwd' }), /expected text/);
  assert.match(problems({ ...GRL, [`${N}global-rate-limit-window`]: '500ms' }), /at least 1s/);
  assert.match(problems({ ...GRL, [`${N}global-rate-limit-window`]: '1000h' }), /at most 7 days/);
  assert.match(problems({ ...GRL, [`${N}global-rate-limit`]: '0' }), /global-rate-limit/);
  assert.match(problems({ ...GRL, [`${N}global-rate-limit-ignored-cidrs`]: '10.0.0.0/33' }), /annotation ignored: .*global-rate-limit.*exempt/);
  // A key template costs what it is allowed to: bounded in length and parts; no backtracking pattern over it.
  const long = `$remote_addr${'a'.repeat(300)}`;
  assert.ok('error' in keyTemplateParts(long));
  const t0 = performance.now();
  assert.ok('error' in keyTemplateParts(`${'$a'.repeat(100)}!`));
  assert.ok(performance.now() - t0 < 50, 'linear in the length');
  assert.ok('error' in keyTemplateParts(Array.from({ length: 17 }, () => '$host').join('-')), 'at most 16 parts');
  assert.deepEqual(windowSeconds('1h30m'), { seconds: 5400 });
  assert.deepEqual(windowSeconds('1.9s'), { seconds: 1 }, 'whole seconds, cut as ingress-nginx (int(d.Seconds()))');
});

test('tenants: two namespaces\' Ingresses with the same name, host path and limit never share counters', () => {
  const r = translate(model([ingress('shop', 'a.example.com', GRL, 'team-a'), ingress('shop', 'b.example.com', GRL, 'team-b')], REDIS).snapshot(), OPTS);
  const a = limitsOf(r, 'a.example.com')[0]!;
  const b = limitsOf(r, 'b.example.com')[0]!;
  assert.match(String(a.key), /^ing\.team-a\.shop\.grl_/);
  assert.match(String(b.key), /^ing\.team-b\.shop\.grl_/);
  assert.notEqual(a.key, b.key);
  // A changed limit or window starts fresh counters (as the local policy does).
  const other = translate(model([ingress('shop', 'a.example.com', { ...GRL, [`${N}global-rate-limit`]: '50' }, 'team-a')], REDIS).snapshot(), OPTS);
  assert.notEqual(limitsOf(other, 'a.example.com')[0]!.key, a.key);
});

test('Plugin objects: rate-limit with policy redis (limit, window, by: key) validated, and run with the ConfigMap\'s Redis', () => {
  const ok = (c: Record<string, unknown>) => parsePluginConfig('rate-limit', c);
  assert.ok(ok({ policy: 'redis', limit: 10, window: '1m' }).ok);
  assert.ok(ok({ policy: 'redis', limit: 10, window: '30s', by: 'key', key: '${http_x_api_key}' }).ok);
  assert.ok(ok({ policy: 'redis', limit: 10, window: '30s', by: 'consumer' }).ok);
  for (const [bad, why] of [
    [{ policy: 'redis', limit: 10 }, /policy redis takes limit and window/],
    [{ policy: 'redis', limit: 10, window: '1m', requestsPerSecond: 5 }, /policy redis takes limit and window/],
    [{ policy: 'redis', limit: 10, window: '1m', burst: 5 }, /policy redis takes limit and window/],
    [{ requestsPerSecond: 5, limit: 10 }, /only go with policy redis/],
    [{ requestsPerSecond: 5, by: 'key', key: '$host' }, /only go with policy redis/],
    [{ policy: 'redis', limit: 10, window: '1m', by: 'key' }, /key is required with by: key/],
    [{ policy: 'redis', limit: 10, window: '1m', key: '$host' }, /key is required with by: key and only allowed with it/],
    [{ policy: 'redis', limit: 10, window: '1m', by: 'key', key: '$upstream_addr' }, /not a variable a key may use/],
    [{ policy: 'memcached', limit: 10, window: '1m' }, /policy/],
  ] as const) {
    const r = ok(bad as Record<string, unknown>);
    assert.ok(!r.ok && why.test(r.error), `${JSON.stringify(bad)}: ${r.ok ? 'accepted' : r.error}`);
  }
  // Through the model and the translation: the Plugin's instance gets the ConfigMap's Redis.
  const m = model([], REDIS);
  const obj = { apiVersion: 'portico.dev/v1alpha1', kind: 'Plugin', metadata: { name: 'per-key', namespace: 'team-a', uid: 'u1', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { type: 'rate-limit', config: { policy: 'redis', limit: 5, window: '10s', by: 'key', key: '$http_x_api_key' } } } as unknown as KubeObject;
  const n = normalizePlugin(obj, () => undefined);
  assert.ok(n.ok);
  m.setCrd('Plugin', n.record);
  const route = { apiVersion: 'portico.dev/v1alpha1', kind: 'Route', metadata: { name: 'r', namespace: 'team-a', uid: 'u2', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { hosts: ['p.example.com'], plugins: ['per-key'], rules: [{ backends: [{ service: { name: 'web', port: 80 } }] }] } } as unknown as KubeObject;
  {
    const rr = normalizeRoute(route);
    assert.ok(rr.ok, rr.ok ? '' : rr.reason);
    m.setCrd('Route', rr.record);
    const r = translate(m.snapshot(), OPTS);
    const l = limitsOf(r, 'p.example.com')[0]!;
    assert.equal(l.policy, 'redis');
    assert.equal(l.windowSeconds, 10);
    assert.deepEqual(l.keyTemplate, [{ v: 'http_x_api_key' }]);
    assert.match(String(l.key), /^team-a_per-key_[0-9a-f]{8}$/, 'counters in the Plugin\'s namespace');
    assert.deepEqual(l.redis, { host: '10.96.0.20', port: 6379, timeoutMs: 50, poolSize: 50, idleMs: 10_000 });
    const none = model([]);
    none.setCrd('Plugin', n.record);
    none.setCrd('Route', rr.record);
    const w = translate(none.snapshot(), OPTS).events.find((e) => e.reason === 'GlobalRateLimitWithoutRedis');
    assert.equal(w?.ref, 'Plugin/team-a/per-key');
  }
});
