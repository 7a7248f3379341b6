// Admission decisions: the same schemas and translation as the reconcilers, no cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ing, modelOf, OPTS, rule, svc, svcRef } from '../../reconcilers/translate/fixtures.test-helpers.ts';
import { responseOf, reviewCrd, reviewIngress, secretsWanted, subjectOf } from './admission.ts';
import { normalizeIngress } from '../../reconcilers/model/normalize.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { issue, makeCa, proxySslData } from '../../reconcilers/translate/pki.test-helpers.ts';

const N = 'nginx.ingress.kubernetes.io/';
const web = svc('web', [{ port: 80 }]);
const older = ing('old', { rules: [rule('a.example.com', [{ path: '/api', backend: svcRef('web', 80) }])] }, { created: '2025-01-01T00:00:00Z' });
const snap = () => modelOf({ services: [web], ingresses: [older] }).snapshot();
const none = new Map();
const candidate = (spec: Record<string, unknown>, annotations?: Record<string, string>, name = 'new') => {
  const o = ing(name, spec, { annotations });
  delete (o.metadata as { creationTimestamp?: string }).creationTimestamp;
  return o;
};

test('a valid Ingress is admitted without warnings', () => {
  const v = reviewIngress(candidate({ rules: [rule('b.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }), snap(), OPTS, none);
  assert.deepEqual(v, { allowed: true, warnings: [] });
});

test('an invalid path for its type is denied, naming the field', () => {
  const v = reviewIngress(candidate({ rules: [rule('b.example.com', [{ path: '/ok', backend: svcRef('web', 80) }, { path: 'api', pathType: 'Exact', backend: svcRef('web', 80) }])] }), snap(), OPTS, none);
  assert.equal(v.allowed, false);
  assert.match(v.message ?? '', /rules\[0\]\.paths\[1\] path "api"/);
});

test('injection payloads in annotation values are denied with the annotation named', () => {
  for (const [k, val] of [
    ['proxy-body-size', '1m; include /etc/passwd'],
    ['proxy-read-timeout', '60;}\nlocation /x { return 200; }'],
    ['session-cookie-name', 'a"b'],
    ['upstream-hash-by', '$request_uri; content_by_lua_block { os.execute("id") }'],
  ] as const) {
    const v = reviewIngress(candidate({ rules: [rule('b.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { [`${N}${k}`]: val }), snap(), OPTS, none);
    assert.equal(v.allowed, false, `${k}=${JSON.stringify(val)} must be denied`);
    assert.match(v.message ?? '', new RegExp(k), `${k}: message names it`);
  }
});

test('an IP allowlist that cannot be applied is denied (it would fail closed)', () => {
  const v = reviewIngress(candidate({ rules: [rule('b.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { [`${N}whitelist-source-range`]: '10.0.0.0/8,300.0.0.1' }), snap(), OPTS, none);
  assert.equal(v.allowed, false);
  assert.match(v.message ?? '', /whitelist-source-range/);
});

test('a conflict with an older Ingress is admitted with a warning naming the winner', () => {
  const v = reviewIngress(candidate({ rules: [rule('a.example.com', [{ path: '/api', backend: svcRef('web', 80) }])] }), snap(), OPTS, none);
  assert.equal(v.allowed, true);
  assert.equal(v.warnings.length, 1, v.warnings.join('\n'));
  assert.match(v.warnings[0]!, /^Conflict: host a\.example\.com path \/api .*already served by Ingress default\/old/);
});

test('updating the Ingress that owns a path is no conflict with itself', () => {
  const v = reviewIngress(ing('old', { rules: [rule('a.example.com', [{ path: '/api', backend: svcRef('web', 80) }, { path: '/v2', backend: svcRef('web', 80) }])] }, { created: '2025-01-01T00:00:00Z' }), snap(), OPTS, none);
  assert.deepEqual(v, { allowed: true, warnings: [] });
});

test('Ingresses of other classes are not judged', () => {
  const o = candidate({ ingressClassName: 'nginx', rules: [rule('b.example.com', [{ path: '/a(b', pathType: 'Exact', backend: svcRef('web', 80) }])] });
  assert.deepEqual(reviewIngress(o, snap(), OPTS, none), { allowed: true, warnings: [] });
});

test('basic auth with a Secret that does not exist yet: admitted with a warning; with another namespace: denied', () => {
  const spec = { rules: [rule('b.example.com', [{ path: '/', backend: svcRef('web', 80) }])] };
  const ann = { [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'users' };
  const asked = secretsWanted((read) => normalizeIngress(candidate(spec, ann), read));
  assert.deepEqual(asked, ['default/users']);
  const v = reviewIngress(candidate(spec, ann), snap(), OPTS, new Map([['default/users', undefined]]));
  assert.equal(v.allowed, true);
  assert.match(v.warnings.join('\n'), /Secret default\/users not found.*503/);
  const present = new Map([['default/users', { data: { auth: Buffer.from('u:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\n').toString('base64') } }]]);
  assert.deepEqual(reviewIngress(candidate(spec, ann), snap(), OPTS, present), { allowed: true, warnings: [] });
  const other = reviewIngress(candidate(spec, { ...ann, [`${N}auth-secret`]: 'kube-system/users' }), snap(), OPTS, none);
  assert.equal(other.allowed, false);
  assert.match(other.message ?? '', /another namespace/);
});

test('basic auth whose Secret has a line over the hash cost bound: denied, naming the Secret, line and user (never the hash)', () => {
  const spec = { rules: [rule('b.example.com', [{ path: '/', backend: svcRef('web', 80) }])] };
  const ann = { [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'users' };
  const file = `u:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\nmallory:$2b$31$abcdefghijklmnopqrstuu${'A'.repeat(31)}\n`;
  const v = reviewIngress(candidate(spec, ann), snap(), OPTS, new Map([['default/users', { data: { auth: Buffer.from(file).toString('base64') } }]]));
  assert.equal(v.allowed, false);
  assert.match(v.message ?? '', /auth-secret default\/users: line 2, user mallory: bcrypt cost 31 is over Portico's bound of 12/);
  assert.ok(!(v.message ?? '').includes('abcdefgh'));
});

test('proxy-ssl-secret that does not exist yet: admitted with a warning; another namespace, an invalid value or an unusable Secret: denied', () => {
  const spec = { rules: [rule('b.example.com', [{ path: '/', backend: svcRef('web', 80) }])] };
  const ann = { [`${N}backend-protocol`]: 'HTTPS', [`${N}proxy-ssl-secret`]: 'backend-tls' };
  assert.deepEqual(secretsWanted((read) => normalizeIngress(candidate(spec, ann), read)), ['default/backend-tls']);
  const later = reviewIngress(candidate(spec, ann), snap(), OPTS, new Map([['default/backend-tls', undefined]]));
  assert.equal(later.allowed, true);
  assert.match(later.warnings.join('\n'), /BackendTLSUnavailable: Secret default\/backend-tls \(proxy-ssl-secret\) not found; failing closed/);
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-adm-pssl-'));
  const ca = makeCa(dir, 'ca');
  const ok = new Map([['default/backend-tls', { data: proxySslData({ client: issue(dir, ca, 'client'), ca }) }]]);
  assert.deepEqual(reviewIngress(candidate(spec, { ...ann, [`${N}proxy-ssl-verify`]: 'on' }), snap(), OPTS, ok), { allowed: true, warnings: [] });
  for (const [extra, secrets, why] of [
    [{ [`${N}proxy-ssl-secret`]: 'kube-system/backend-tls' }, none, /another namespace/],
    [{ [`${N}proxy-ssl-protocols`]: 'TLSv1.2; proxy_ssl_verify off' }, ok, /proxy-ssl-protocols/],
    [{}, new Map([['default/backend-tls', { data: { 'ca.crt': Buffer.from('junk').toString('base64') } }]]), /ca\.crt of Secret default\/backend-tls must hold only PEM certificates/],
  ] as const) {
    const v = reviewIngress(candidate(spec, { ...ann, ...extra }), snap(), OPTS, secrets);
    assert.equal(v.allowed, false, String(why));
    assert.match(v.message ?? '', why);
  }
});

const route = (name: string, spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'portico.dev/v1alpha1', kind: 'Route', metadata: { name, namespace: 'default' }, spec: { ingressClassName: 'portico', ...spec } }) as KubeObject;

test('Routes: schema errors denied by field; a conflict with an older Ingress warned', () => {
  const bad = reviewCrd('Route', route('r', { hosts: ['a.example.com'], rules: [{ matches: [{ path: { type: 'Prefix', value: 'api' } }], backends: [{ service: { name: 'web', port: 80 } }] }] }), snap(), OPTS, none);
  assert.equal(bad.allowed, false);
  assert.match(bad.message ?? '', /spec\.rules\.0\.matches\.0\.path\.value/);
  const clash = reviewCrd('Route', route('r', { hosts: ['a.example.com'], rules: [{ matches: [{ path: { type: 'Prefix', value: '/api' } }], backends: [{ service: { name: 'web', port: 80 } }] }] }), snap(), OPTS, none);
  assert.equal(clash.allowed, true);
  assert.match(clash.warnings.join('\n'), /Conflict: .*already served by Ingress default\/old/);
});

test('Plugins: a bad config is denied; a configFrom Secret that does not exist yet is a warning', () => {
  const plugin = (spec: Record<string, unknown>) => ({ apiVersion: 'portico.dev/v1alpha1', kind: 'Plugin', metadata: { name: 'p', namespace: 'default' }, spec }) as KubeObject;
  const bad = reviewCrd('Plugin', plugin({ type: 'rate-limit', config: { requestsPerSecond: 5, requestsPerMinute: 10 } }), snap(), OPTS, none);
  assert.equal(bad.allowed, false);
  assert.match(bad.message ?? '', /exactly one of requestsPerSecond and requestsPerMinute/);
  const later = reviewCrd('Plugin', plugin({ type: 'rate-limit', configFrom: { secretKeyRef: { name: 'cfg', key: 'c' } } }), snap(), OPTS, new Map([['default/cfg', undefined]]));
  assert.equal(later.allowed, true);
  assert.match(later.warnings.join('\n'), /Secret default\/cfg not found/);
});

test('AdmissionReview plumbing: only CREATE/UPDATE of the validated kinds; namespace from the request', () => {
  const obj = { metadata: { name: 'x' } } as KubeObject;
  assert.equal(subjectOf({ uid: '1', kind: { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' }, operation: 'DELETE', object: obj }), null);
  assert.equal(subjectOf({ uid: '1', kind: { group: '', version: 'v1', kind: 'Secret' }, operation: 'CREATE', object: obj }), null);
  assert.equal(subjectOf({ uid: '1', kind: { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' }, operation: 'CREATE', namespace: 'ns1', object: obj })?.obj.metadata.namespace, 'ns1');
  const denied = responseOf('u1', { allowed: false, message: 'bad', warnings: ['w'] }) as { response: Record<string, unknown> };
  assert.deepEqual(denied.response, { uid: 'u1', allowed: false, status: { code: 400, reason: 'Invalid', message: 'Portico: bad' }, warnings: ['w'] });
});
