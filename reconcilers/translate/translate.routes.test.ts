// Table tests: Portico's CRDs (Route, Upstream, Plugin, Consumer) through normalization and the pure translation,
// next to Ingresses — precedence and conflicts across kinds, conditions, splits, plugins failing closed, Upstream
// overrides, consumers as data. No cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../operator/kube/object.ts';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { normalizeConsumer, normalizePlugin, normalizeRoute, normalizeUpstream, passwordHash, type SecretLookup } from '../crds/normalize.ts';
import type { Model } from '../model/model.ts';
import { ing, modelOf, OPTS, rule, slice, svc, svcRef } from './fixtures.test-helpers.ts';
import { translate } from './translate.ts';

const cr = (kind: string, name: string, spec: unknown, o: { ns?: string; created?: string; generation?: number } = {}): KubeObject =>
  ({ apiVersion: 'portico.dev/v1alpha1', kind, metadata: { name, namespace: o.ns ?? 'default', uid: `uid-${name}`, generation: o.generation ?? 1, creationTimestamp: o.created ?? '2026-01-01T00:00:00Z' }, spec }) as KubeObject;

const noSecrets: SecretLookup = () => undefined;
const b64 = (s: string) => Buffer.from(s).toString('base64');

function addRoute(m: Model, obj: KubeObject): void {
  const r = normalizeRoute(obj);
  if (r.ok) m.setCrd('Route', r.record);
  else m.rejectCrd('Route', { key: `${obj.metadata.namespace}/${obj.metadata.name}`, generation: 1, reason: r.reason });
}
function addPlugin(m: Model, obj: KubeObject, secrets = noSecrets): void {
  const r = normalizePlugin(obj, secrets);
  if (r.ok) m.setCrd('Plugin', r.record);
  else m.rejectCrd('Plugin', { key: `${obj.metadata.namespace}/${obj.metadata.name}`, generation: 1, reason: r.reason });
}

const base = () =>
  modelOf({
    services: [svc('web', [{ port: 80 }]), svc('api', [{ port: 8080 }]), svc('auth', [{ port: 9000 }])],
    slices: [slice('web-1', 'web', [{ port: 8080 }], [{ ip: '198.18.0.10' }]), slice('api-1', 'api', [{ port: 8080 }], [{ ip: '198.18.0.20' }])],
  });

test('Route: hosts × rules × matches become routes; Prefix trailing slash dropped; weighted split; conditions ordered before the fallback', () => {
  const m = base();
  addRoute(
    m,
    cr('Route', 'shop', {
      hosts: ['shop.example.com'],
      rules: [
        { name: 'v2', matches: [{ path: { type: 'Prefix', value: '/api/' }, headers: [{ name: 'X-Version', value: '2' }] }], backends: [{ service: { name: 'api', port: 8080 } }] },
        { name: 'api', matches: [{ path: { value: '/api' } }], backends: [{ service: { name: 'web', port: 80 }, weight: 3 }, { service: { name: 'api', port: 8080 }, weight: 1 }] },
        { name: 'post', matches: [{ path: { type: 'Exact', value: '/login' }, methods: ['POST'] }], backends: [{ service: { name: 'web', port: 80 } }] },
      ],
    }),
  );
  const r = translate(m.snapshot(), OPTS);
  const rules = r.config.data.routes['shop.example.com']?.rules ?? [];
  assert.deepEqual(rules.map((x) => `${x.match} ${x.path} ${x.conditions ? 'cond' : '-'} ${x.route.backendId}`), [
    'exact /login cond default_web_80',
    'prefix /api cond default_api_8080',
    'prefix /api - default_web_80',
  ]);
  assert.deepEqual(rules[1]?.conditions, { headers: [{ name: 'x-version', type: 'exact', value: '2' }] });
  assert.deepEqual(rules[2]?.route.split, [{ backendId: 'default_web_80', weight: 3 }, { backendId: 'default_api_8080', weight: 1 }]);
  assert.deepEqual(rules[0]?.conditions, { methods: ['POST'] });
  assert.equal(rules[0]?.route.source, 'Route/default/shop');
  assert.ok(r.config.data.backends.default_web_80 && r.config.data.backends.default_api_8080, 'every split backend is resolved');
  assert.equal(r.status.get('Route/default/shop')?.programmed, true);
});

test('Route vs Ingress on the same host and path: the older wins across kinds, the loser gets a Warning naming the winner', () => {
  const m = modelOf({
    services: [svc('web', [{ port: 80 }]), svc('api', [{ port: 8080 }])],
    ingresses: [ing('old-ing', { rules: [rule('x.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { created: '2026-01-01T00:00:00Z' })],
  });
  addRoute(m, cr('Route', 'newer', { hosts: ['x.example.com'], rules: [{ backends: [{ service: { name: 'api', port: 8080 } }] }] }, { created: '2026-02-01T00:00:00Z' }));
  addRoute(m, cr('Route', 'older', { hosts: ['y.example.com'], rules: [{ backends: [{ service: { name: 'api', port: 8080 } }] }] }, { created: '2025-01-01T00:00:00Z' }));
  const m2 = modelOf({ services: [svc('web', [{ port: 80 }])], ingresses: [ing('late', { rules: [rule('y.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { created: '2026-03-01T00:00:00Z' })] });
  for (const rt of m.records('Route').values()) m2.setCrd('Route', rt);
  let r = translate(m.snapshot(), OPTS);
  assert.equal(r.config.data.routes['x.example.com']?.rules[0]?.route.source, 'Ingress/default/old-ing');
  const ev = r.events.find((e) => e.ref === 'Route/default/newer' && e.reason === 'Conflict');
  assert.match(ev?.message ?? '', /already served by Ingress default\/old-ing, which is older/);
  r = translate(m2.snapshot(), OPTS);
  assert.equal(r.config.data.routes['y.example.com']?.rules[0]?.route.source, 'Route/default/older');
  assert.match(r.events.find((e) => e.ref === 'Ingress/default/late' && e.reason === 'Conflict')?.message ?? '', /Route default\/older/);
});

test('Route of another class is not served; a rejected Route gets its schema message as status', () => {
  const m = base();
  addRoute(m, cr('Route', 'other', { ingressClassName: 'nginx', hosts: ['o.example.com'], rules: [{ backends: [{ service: { name: 'web', port: 80 } }] }] }));
  addRoute(m, cr('Route', 'bad', { hosts: ['b.example.com'], rules: [{ matches: [{ path: { type: 'Exact', value: 'no-slash' } }] }] }));
  const r = translate(m.snapshot(), OPTS);
  assert.equal(r.config.data.routes['o.example.com'], undefined);
  assert.equal(r.status.get('Route/default/other')?.served, false);
  assert.match(r.status.get('Route/default/bad')?.problems[0] ?? '', /spec\.rules\.0\.matches\.0\.path\.value/);
});

test('plugins: resolved to data in the fixed order; a missing or invalid Plugin fails the path closed (503) with ResolvedRefs', () => {
  const m = base();
  addPlugin(m, cr('Plugin', 'limit', { type: 'rate-limit', config: { requestsPerSecond: 5, burst: 10, by: 'consumer' } }));
  addPlugin(m, cr('Plugin', 'auth', { type: 'key-auth' }));
  addPlugin(m, cr('Plugin', 'allow', { type: 'ip-restriction', config: { allow: ['198.51.100.0/24'] } }));
  addPlugin(m, cr('Plugin', 'broken', { type: 'rate-limit', config: { requestsPerSecond: 5, requestsPerMinute: 5 } }));
  addRoute(
    m,
    cr('Route', 'r', {
      hosts: ['p.example.com'],
      rules: [
        { name: 'ok', matches: [{ path: { value: '/ok' } }], backends: [{ service: { name: 'web', port: 80 } }], plugins: ['limit', 'auth', 'allow'] },
        { name: 'missing', matches: [{ path: { value: '/missing' } }], backends: [{ service: { name: 'web', port: 80 } }], plugins: ['auth', 'nope'] },
        { name: 'invalid', matches: [{ path: { value: '/invalid' } }], backends: [{ service: { name: 'web', port: 80 } }], plugins: ['broken'] },
      ],
    }),
  );
  const r = translate(m.snapshot(), OPTS);
  const byPath = Object.fromEntries((r.config.data.routes['p.example.com']?.rules ?? []).map((x) => [x.path, x.route]));
  assert.deepEqual(byPath['/ok']?.plugins, ['default_allow', 'default_auth', 'default_limit'], 'ip-restriction → auth → rate-limit');
  const { key, ...limit } = r.config.data.plugins.default_limit as { key: string };
  assert.deepEqual(limit, { name: 'default/limit', type: 'rate-limit', rate: 5, periodSeconds: 1, burst: 10, by: 'consumer', status: 429 });
  assert.match(key, /^default_limit_[0-9a-f]{8}$/, 'counters keyed by the plugin and its limits');
  assert.deepEqual(r.config.data.plugins.default_auth, { name: 'default/auth', type: 'key-auth', namespace: 'default', header: 'apikey', hideCredentials: true });
  assert.equal(byPath['/missing']?.action, 'unavailable');
  assert.equal(byPath['/missing']?.backendId, null, 'never proxied without its auth');
  assert.match(byPath['/missing']?.closedReason ?? '', /Plugin default\/nope not found/);
  assert.equal(byPath['/invalid']?.action, 'unavailable');
  assert.match(byPath['/invalid']?.closedReason ?? '', /requestsPerSecond|exactly one/);
  assert.deepEqual(r.status.get('Route/default/r')?.unresolved, ['Plugin nope', 'Plugin broken']);
  assert.ok(r.events.some((e) => e.ref === 'Route/default/r' && e.reason === 'PluginUnavailable'));
  assert.equal(r.config.data.plugins.default_broken, undefined);
});

test('Ingress portico.dev/plugins uses the same plugins; Ingress routes with plugins go through the plugin location', () => {
  const m = modelOf({
    services: [svc('web', [{ port: 80 }])],
    ingresses: [ing('i', { rules: [rule('i.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { 'portico.dev/plugins': 'auth' } })],
  });
  addPlugin(m, cr('Plugin', 'auth', { type: 'basic-auth', config: { realm: 'shop' } }));
  const r = translate(m.snapshot(), OPTS);
  assert.deepEqual(r.config.data.routes['i.example.com']?.rules[0]?.route.plugins, ['default_auth']);
  assert.equal(r.config.data.plugins.default_auth?.type, 'basic-auth');
});

test('external-auth: its Service becomes a backend of the data plane; the plugin names it', () => {
  const m = base();
  addPlugin(m, cr('Plugin', 'ext', { type: 'external-auth', config: { service: { name: 'auth', port: 9000 }, path: '/check', timeout: '2s', upstreamHeaders: ['X-User'] } }));
  addRoute(m, cr('Route', 'r', { hosts: ['e.example.com'], rules: [{ backends: [{ service: { name: 'web', port: 80 } }], plugins: ['ext'] }] }));
  const r = translate(m.snapshot(), OPTS);
  const p = r.config.data.plugins.default_ext;
  assert.equal(p?.type, 'external-auth');
  assert.ok(p?.type === 'external-auth' && p.backendId === 'default_auth_9000' && p.timeoutMs === 2000 && p.upstreamHeaders[0] === 'x-user');
  assert.ok(r.config.data.backends.default_auth_9000, 'auth backend resolved');
});

test('Upstream wins over Ingress balancing annotations for its Service (with an Event), adds passive health, and its routes are observed', () => {
  const m = modelOf({
    services: [svc('web', [{ port: 80 }])],
    ingresses: [ing('i', { rules: [rule('u.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { 'nginx.ingress.kubernetes.io/load-balance': 'ewma' } })],
  });
  const u = normalizeUpstream(cr('Upstream', 'web', { service: { name: 'web' }, loadBalancer: { algorithm: 'ConsistentHash', hashOn: { header: 'X-User' } }, healthCheck: { passive: { failures: 2, ejectDuration: '10s' } }, timeouts: { read: '90s' } }));
  assert.ok(u.ok);
  m.setCrd('Upstream', u.record);
  const r = translate(m.snapshot(), OPTS);
  const b = r.config.data.backends.default_web_80;
  assert.equal(b?.balance, 'chash');
  assert.equal(b?.hashBy, '$http_x_user');
  assert.deepEqual(b?.passiveHealth, { failures: 2, statuses: [502, 503, 504], ejectSeconds: 10 });
  const route = r.config.data.routes['u.example.com']?.rules[0]?.route;
  assert.equal(route?.observe, true);
  assert.equal(route?.timeouts?.read, 90);
  assert.ok(r.events.some((e) => e.ref === 'Ingress/default/i' && e.reason === 'UpstreamOverrides'));
});

test('Route retries and an HTTPS Upstream become a directive profile; timeouts from durations', () => {
  const m = base();
  const u = normalizeUpstream(cr('Upstream', 'api', { service: { name: 'api' }, protocol: 'HTTPS', tls: { serverName: 'api.internal' } }));
  assert.ok(u.ok);
  m.setCrd('Upstream', u.record);
  addRoute(m, cr('Route', 'r', { hosts: ['t.example.com'], rules: [{ backends: [{ service: { name: 'api', port: 8080 } }], retries: { attempts: 2, on: ['error', 'http_502'] }, timeouts: { connect: '500ms' } }] }));
  const r = translate(m.snapshot(), OPTS);
  const route = r.config.data.routes['t.example.com']?.rules[0]?.route;
  const prof = r.config.structure.profiles.find((p) => p.name === route?.profile);
  assert.deepEqual({ ...prof, name: undefined }, { name: undefined, nextUpstream: 'error http_502', nextUpstreamTries: 3, backendProtocol: 'HTTPS', sslServerName: 'api.internal' });
  assert.deepEqual(route?.timeouts, { connect: 0.5, send: 60, read: 60 });
});

test('Plugin config errors name the field; configFrom reads a Secret (missing → unresolved)', () => {
  const bad = normalizePlugin(cr('Plugin', 'p', { type: 'rate-limit', config: { requestsPerSecond: 0 } }), noSecrets);
  assert.ok(bad.ok && bad.record.instance === null);
  assert.match(bad.ok ? (bad.record.error ?? '') : '', /^spec\.config\.requestsPerSecond: /);
  const missing = normalizePlugin(cr('Plugin', 'p', { type: 'ip-restriction', configFrom: { secretKeyRef: { name: 's', key: 'config' } } }), noSecrets);
  assert.ok(missing.ok && missing.record.unresolved && missing.record.secretKey === 'default/s');
  const fromSecret = normalizePlugin(cr('Plugin', 'p', { type: 'ip-restriction', configFrom: { secretKeyRef: { name: 's', key: 'config' } } }), (k) => (k === 'default/s' ? { data: { config: b64('deny: ["203.0.113.0/24"]') } } : undefined));
  assert.ok(fromSecret.ok && fromSecret.record.instance?.type === 'ip-restriction');
  assert.deepEqual(fromSecret.ok && fromSecret.record.instance?.type === 'ip-restriction' ? fromSecret.record.instance.deny : null, ['203.0.113.0/24']);
});

test('Plugin configFrom: a Secret that does not parse or fit the schema is reported without quoting it (unknown keys, values, parser snippets)', () => {
  const from = (text: string) => normalizePlugin(cr('Plugin', 'p', { type: 'ip-restriction', configFrom: { secretKeyRef: { name: 's', key: 'config' } } }), (k) => (k === 'default/s' ? { data: { config: b64(text) } } : undefined));
  for (const [text, leak] of [
    ['{"allow": ["10.0.0.0/8"], "tok3n-field": 1}', 'tok3n-field'],
    ['allow: ["pa55w0rd-not-a-cidr"]', 'pa55w0rd'],
    ['{"allow": [hunter2-secret', 'hunter2'],
    ['allow: [x]\n  : sup3r: [', 'sup3r'],
  ] as const) {
    const r = from(text);
    assert.ok(r.ok && r.record.instance === null && r.record.error, text);
    const error = r.ok ? (r.record.error ?? '') : '';
    assert.match(error, /^spec\.configFrom: key config of Secret default\/s is not (JSON or YAML|a valid ip-restriction configuration)/);
    assert.ok(!error.includes(leak), `${JSON.stringify(leak)} from the Secret in: ${error}`);
  }
});

test('Consumer: keys hashed (never in clear), plain passwords salted+hashed, bcrypt kept, missing Secrets reported; consumers are data per namespace', () => {
  const table: Record<string, { data: Record<string, string> }> = {
      'default/k': { data: { key: b64('s3cret-key-123') } },
      'default/b': { data: { username: b64('alice'), password: b64('wonderland') } },
      'default/bc': { data: { username: b64('bob'), password: b64('$2y$05$abcdefghijklmnopqrstuuJ1Q0m3h4nB0nA7dQeXw7n0QJk2V6p0e') } },
  };
  const secrets: SecretLookup = (k) => table[k];
  const c = normalizeConsumer(
    cr('Consumer', 'alice', {
      username: 'alice',
      credentials: [
        { type: 'key-auth', secretRef: { name: 'k' } },
        { type: 'basic-auth', secretRef: { name: 'b' } },
        { type: 'basic-auth', secretRef: { name: 'bc' } },
        { type: 'key-auth', secretRef: { name: 'gone' } },
      ],
    }),
    secrets,
  );
  assert.ok(c.ok);
  const rec = c.record;
  assert.equal(rec.keys.length, 1);
  assert.match(rec.keys[0] ?? '', /^[0-9a-f]{64}$/);
  assert.ok(!JSON.stringify(rec).includes('s3cret') && !JSON.stringify(rec).includes('wonderland'), 'no secret in clear');
  assert.equal(rec.basic[0]?.hash, passwordHash('wonderland', 'uid-alice', 'alice'));
  assert.match(rec.basic[0]?.hash ?? '', /^sha256\$[0-9a-f]{16}\$[0-9a-f]{64}$/);
  assert.match(rec.basic[1]?.hash ?? '', /^\$2y\$05\$/);
  assert.deepEqual(rec.problems, ['spec.credentials.3: Secret default/gone not found']);
  assert.deepEqual(rec.secretKeys, ['default/b', 'default/bc', 'default/gone', 'default/k']);
  const m = base();
  m.setCrd('Consumer', rec);
  const r = translate(m.snapshot(), OPTS);
  assert.deepEqual(r.config.data.consumers.default?.consumers[0]?.username, 'alice');
});

test('Consumer basic-auth: a stored bcrypt hash over the cost bound (31) is not used; the problem names the Secret and user, never the hash', () => {
  const BC31 = `$2b$31$abcdefghijklmnopqrstuu${'A'.repeat(31)}`;
  const table: Record<string, { data: Record<string, string> }> = {
    'default/slow': { data: { username: b64('mallory'), password: b64(BC31) } },
    'default/ok': { data: { username: b64('bob'), password: b64('$2y$12$abcdefghijklmnopqrstuuJ1Q0m3h4nB0nA7dQeXw7n0QJk2V6p0e') } },
  };
  const c = normalizeConsumer(
    cr('Consumer', 'm', { username: 'm', credentials: [{ type: 'basic-auth', secretRef: { name: 'slow' } }, { type: 'basic-auth', secretRef: { name: 'ok' } }] }),
    (k) => table[k],
  );
  assert.ok(c.ok);
  assert.deepEqual(c.record.basic.map((b) => b.username), ['bob']);
  assert.equal(c.record.problems.length, 1);
  assert.match(c.record.problems[0] ?? '', /^spec\.credentials\.0: Secret default\/slow, user mallory: the password is a bcrypt hash whose cost 31 is over Portico's bound of 12/);
  assert.ok(!c.record.problems[0]?.includes('abcdefgh'));
});

test('Upstream tls.verify: the CA from caSecret verifies the backend (profile with the bundle, SNI = the Service name by default); without a readable CA the backend fails closed', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-ca-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=test-ca', '-keyout', path.join(dir, 'k.pem'), '-out', path.join(dir, 'c.pem')], { stdio: 'ignore' });
  const ca = readFileSync(path.join(dir, 'c.pem'), 'utf8');
  const secrets: SecretLookup = (k) => (k === 'default/api-ca' ? { data: { 'ca.crt': b64(ca) } } : k === 'default/junk' ? { data: { 'ca.crt': b64('not a pem') } } : undefined);
  const m = base();
  const u = normalizeUpstream(cr('Upstream', 'api', { service: { name: 'api' }, protocol: 'HTTPS', tls: { verify: true, caSecret: 'api-ca' } }), secrets);
  assert.ok(u.ok && u.record.tls?.caPem?.includes('BEGIN CERTIFICATE'));
  m.setCrd('Upstream', u.record);
  addRoute(m, cr('Route', 'r', { hosts: ['v.example.com'], rules: [{ backends: [{ service: { name: 'api', port: 8080 } }] }] }));
  let r = translate(m.snapshot(), OPTS);
  const route = r.config.data.routes['v.example.com']?.rules[0]?.route;
  const prof = r.config.structure.profiles.find((p) => p.name === route?.profile);
  assert.equal(prof?.backendProtocol, 'HTTPS');
  assert.equal(prof?.sslServerName, 'api.default.svc');
  assert.equal(prof?.trustedCa, ca.trim() + '\n');
  assert.equal(r.config.data.backends.default_api_8080?.endpoints.length, 1);
  for (const [secret, why] of [['missing', /Secret default\/missing not found/], ['junk', /only PEM certificates|no certificate/]] as const) {
    const bad = normalizeUpstream(cr('Upstream', 'api', { service: { name: 'api' }, protocol: 'HTTPS', tls: { verify: true, caSecret: secret } }), secrets);
    assert.ok(bad.ok && bad.record.tls?.caError);
    m.setCrd('Upstream', bad.record);
    r = translate(m.snapshot(), OPTS);
    const b = r.config.data.backends.default_api_8080;
    assert.deepEqual(b?.endpoints, [], 'fails closed: never proxied unverified');
    assert.match(b?.unavailableReason ?? '', why);
    assert.ok(!r.config.structure.profiles.some((p) => p.trustedCa), 'no profile verifies against nothing');
  }
});
