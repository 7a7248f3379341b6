// Admission decisions: the same schemas and translation as the reconcilers, no cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ing, modelOf, OPTS, rule, svc, svcRef } from '../../reconcilers/translate/fixtures.test-helpers.ts';
import { responseOf, reviewCrd, reviewIngress, subjectOf } from './admission.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../../reconcilers/model/global-config.ts';

const N = 'nginx.ingress.kubernetes.io/';
const web = svc('web', [{ port: 80 }]);
const older = ing('old', { rules: [rule('a.example.com', [{ path: '/api', backend: svcRef('web', 80) }])] }, { created: '2025-01-01T00:00:00Z' });
const snap = () => modelOf({ services: [web], ingresses: [older] }).snapshot();
const candidate = (spec: Record<string, unknown>, annotations?: Record<string, string>, name = 'new') => {
  const o = ing(name, spec, { annotations });
  delete (o.metadata as { creationTimestamp?: string }).creationTimestamp;
  return o;
};

test('a valid Ingress is admitted without warnings', () => {
  const v = reviewIngress(candidate({ rules: [rule('b.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }), snap(), OPTS);
  assert.deepEqual(v, { allowed: true, warnings: [] });
});

test('an invalid path for its type is denied, naming the field', () => {
  const v = reviewIngress(candidate({ rules: [rule('b.example.com', [{ path: '/ok', backend: svcRef('web', 80) }, { path: 'api', pathType: 'Exact', backend: svcRef('web', 80) }])] }), snap(), OPTS);
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
    const v = reviewIngress(candidate({ rules: [rule('b.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { [`${N}${k}`]: val }), snap(), OPTS);
    assert.equal(v.allowed, false, `${k}=${JSON.stringify(val)} must be denied`);
    assert.match(v.message ?? '', new RegExp(k), `${k}: message names it`);
  }
});

test('an IP allowlist that cannot be applied is denied (it would fail closed)', () => {
  const v = reviewIngress(candidate({ rules: [rule('b.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { [`${N}whitelist-source-range`]: '10.0.0.0/8,300.0.0.1' }), snap(), OPTS);
  assert.equal(v.allowed, false);
  assert.match(v.message ?? '', /whitelist-source-range/);
});

test('a conflict with an older Ingress is admitted with a warning naming the winner', () => {
  const v = reviewIngress(candidate({ rules: [rule('a.example.com', [{ path: '/api', backend: svcRef('web', 80) }])] }), snap(), OPTS);
  assert.equal(v.allowed, true);
  assert.equal(v.warnings.length, 1, v.warnings.join('\n'));
  assert.match(v.warnings[0]!, /^Conflict: host a\.example\.com path \/api .*already served by Ingress default\/old/);
});

test('updating the Ingress that owns a path is no conflict with itself', () => {
  const v = reviewIngress(ing('old', { rules: [rule('a.example.com', [{ path: '/api', backend: svcRef('web', 80) }, { path: '/v2', backend: svcRef('web', 80) }])] }, { created: '2025-01-01T00:00:00Z' }), snap(), OPTS);
  assert.deepEqual(v, { allowed: true, warnings: [] });
});

test('Ingresses of other classes are not judged', () => {
  const o = candidate({ ingressClassName: 'nginx', rules: [rule('b.example.com', [{ path: '/a(b', pathType: 'Exact', backend: svcRef('web', 80) }])] });
  assert.deepEqual(reviewIngress(o, snap(), OPTS), { allowed: true, warnings: [] });
});

test('Secret-dependent checks are the controller\'s: auth-secret, auth-tls-secret, proxy-ssl-secret and TLS Secrets are neither read nor judged; another namespace or a bad value still is', () => {
  const spec = { rules: [rule('b.example.com', [{ path: '/', backend: svcRef('web', 80) }])], tls: [{ hosts: ['b.example.com'], secretName: 'b-tls' }] };
  const allowed: Record<string, string>[] = [
    { [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'users' },
    // Digest (served by the digest-auth plugin; it used to be denied as unsupported): the Secret is the controller's.
    { [`${N}auth-type`]: 'digest', [`${N}auth-secret`]: 'users', [`${N}auth-realm`]: 'Team' },
    { [`${N}auth-tls-secret`]: 'default/client-ca' },
    { [`${N}backend-protocol`]: 'HTTPS', [`${N}proxy-ssl-secret`]: 'backend-tls', [`${N}proxy-ssl-verify`]: 'on' },
  ];
  for (const ann of allowed) {
    assert.deepEqual(reviewIngress(candidate(spec, ann), snap(), OPTS), { allowed: true, warnings: [] }, JSON.stringify(ann));
  }
  const denied: [Record<string, string>, RegExp][] = [
    [{ [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'kube-system/users' }, /auth-secret kube-system\/users is in another namespace/],
    [{ [`${N}auth-tls-secret`]: 'kube-system/ca' }, /auth-tls-secret kube-system\/ca is in another namespace/],
    [{ [`${N}backend-protocol`]: 'HTTPS', [`${N}proxy-ssl-secret`]: 'kube-system/backend-tls' }, /another namespace/],
    [{ [`${N}backend-protocol`]: 'HTTPS', [`${N}proxy-ssl-secret`]: 'backend-tls', [`${N}proxy-ssl-protocols`]: 'TLSv1.2; proxy_ssl_verify off' }, /proxy-ssl-protocols/],
    [{ [`${N}auth-type`]: 'digest', [`${N}auth-secret`]: 'kube-system/users' }, /digest authentication that cannot be applied \(auth-secret kube-system\/users is in another namespace/],
    [{ [`${N}auth-type`]: 'ntlm', [`${N}auth-secret`]: 'users' }, /auth-type must be basic or digest/],
  ];
  for (const [ann, why] of denied) {
    const v = reviewIngress(candidate(spec, ann), snap(), OPTS);
    assert.equal(v.allowed, false, String(why));
    assert.match(v.message ?? '', why);
  }
});

test('a forged review naming Secrets of another namespace: nothing of the model\'s Secrets reaches the verdict (TLS material is not translated)', () => {
  // The model holds a TLS Secret of kube-system (an Ingress there uses it); a review for an Ingress "in" kube-system
  // naming it must not learn its SANs, whether it is valid, or that it exists.
  const m = modelOf({ services: [web, svc('web', [{ port: 80 }], 'kube-system')], ingresses: [older] });
  m.setSecret({ key: 'kube-system/private-tls', ok: false, error: 'tls.key does not match; SAN internal-only.corp.example' });
  const obj = candidate({ rules: [rule('z.example.com', [{ path: '/', backend: svcRef('web', 80) }])], tls: [{ hosts: ['z.example.com'], secretName: 'private-tls' }] }, { [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'private-tls' });
  obj.metadata.namespace = 'kube-system';
  const v = reviewIngress(obj, m.snapshot(), OPTS);
  assert.deepEqual(v, { allowed: true, warnings: [] });
});

const route = (name: string, spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'portico.dev/v1alpha1', kind: 'Route', metadata: { name, namespace: 'default' }, spec: { ingressClassName: 'portico', ...spec } }) as KubeObject;

test('Routes: schema errors denied by field; a conflict with an older Ingress warned', () => {
  const bad = reviewCrd('Route', route('r', { hosts: ['a.example.com'], rules: [{ matches: [{ path: { type: 'Prefix', value: 'api' } }], backends: [{ service: { name: 'web', port: 80 } }] }] }), snap(), OPTS);
  assert.equal(bad.allowed, false);
  assert.match(bad.message ?? '', /spec\.rules\.0\.matches\.0\.path\.value/);
  const clash = reviewCrd('Route', route('r', { hosts: ['a.example.com'], rules: [{ matches: [{ path: { type: 'Prefix', value: '/api' } }], backends: [{ service: { name: 'web', port: 80 } }] }] }), snap(), OPTS);
  assert.equal(clash.allowed, true);
  assert.match(clash.warnings.join('\n'), /Conflict: .*already served by Ingress default\/old/);
});

test('Plugins: a bad config is denied; a configFrom Secret is not read (the controller judges it)', () => {
  const plugin = (spec: Record<string, unknown>) => ({ apiVersion: 'portico.dev/v1alpha1', kind: 'Plugin', metadata: { name: 'p', namespace: 'default' }, spec }) as KubeObject;
  const bad = reviewCrd('Plugin', plugin({ type: 'rate-limit', config: { requestsPerSecond: 5, requestsPerMinute: 10 } }), snap(), OPTS);
  assert.equal(bad.allowed, false);
  assert.match(bad.message ?? '', /exactly one of requestsPerSecond and requestsPerMinute/);
  const later = reviewCrd('Plugin', plugin({ type: 'rate-limit', configFrom: { secretKeyRef: { name: 'cfg', key: 'c' } } }), snap(), OPTS);
  assert.deepEqual(later, { allowed: true, warnings: [] });
});

test('AdmissionReview plumbing: only CREATE/UPDATE of the validated kinds; namespace from the request', () => {
  const obj = { metadata: { name: 'x' } } as KubeObject;
  assert.equal(subjectOf({ uid: '1', kind: { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' }, operation: 'DELETE', object: obj }), null);
  assert.equal(subjectOf({ uid: '1', kind: { group: '', version: 'v1', kind: 'Secret' }, operation: 'CREATE', object: obj }), null);
  assert.equal(subjectOf({ uid: '1', kind: { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' }, operation: 'CREATE', namespace: 'ns1', object: obj })?.obj.metadata.namespace, 'ns1');
  const denied = responseOf('u1', { allowed: false, message: 'bad', warnings: ['w'] }) as { response: Record<string, unknown> };
  assert.deepEqual(denied.response, { uid: 'u1', allowed: false, status: { code: 400, reason: 'Invalid', message: 'Portico: bad' }, warnings: ['w'] });
});

test('annotation-value-word-blocklist: an Ingress with a listed word in an annotation value is denied, naming both; without the list it is admitted', () => {
  const m = modelOf({ services: [web], ingresses: [older] });
  const obj = candidate({ rules: [rule('b.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { [`${N}rewrite-target`]: '/alias/x' });
  assert.equal(reviewIngress(obj, m.snapshot(), OPTS).allowed, true);
  m.setGlobalConfig(parseGlobalConfig({ 'annotation-value-word-blocklist': 'load_module,alias' }, defaultGlobalConfig()).values);
  const v = reviewIngress(obj, m.snapshot(), OPTS);
  assert.equal(v.allowed, false);
  assert.match(v.message ?? '', /annotation nginx\.ingress\.kubernetes\.io\/rewrite-target contains the word "alias"/);
});

test('FastCGI: a params ConfigMap of another namespace is denied; the own namespace\'s is admitted unread; proxy_* annotations without effect are a warning, not a denial', () => {
  const spec = { rules: [rule('b.example.com', [{ path: '/', backend: svcRef('web', 80) }])] };
  const fcgi = { [`${N}backend-protocol`]: 'FCGI', [`${N}fastcgi-index`]: 'index.php' };
  const elsewhere = reviewIngress(candidate(spec, { ...fcgi, [`${N}fastcgi-params-configmap`]: 'other/php' }), snap(), OPTS);
  assert.equal(elsewhere.allowed, false);
  assert.match(elsewhere.message ?? '', /fastcgi-params-configmap: ConfigMap other\/php is in another namespace/);
  assert.deepEqual(reviewIngress(candidate(spec, { ...fcgi, [`${N}fastcgi-params-configmap`]: 'php' }), snap(), OPTS), { allowed: true, warnings: [] });
  const noEffect = reviewIngress(candidate(spec, { ...fcgi, [`${N}proxy-buffering`]: 'on' }), snap(), OPTS);
  assert.equal(noEffect.allowed, true);
  assert.equal(noEffect.warnings.length, 1);
  assert.match(noEffect.warnings[0] ?? '', /proxy-buffering has no effect with nginx\.ingress\.kubernetes\.io\/backend-protocol "FCGI"/);
  const alone = reviewIngress(candidate(spec, { [`${N}fastcgi-index`]: 'index.php' }), snap(), OPTS);
  assert.equal(alone.allowed, true);
  assert.match(alone.warnings.join(), /fastcgi-index has no effect without nginx\.ingress\.kubernetes\.io\/backend-protocol "FCGI"/);
});
