// Names are validated where they enter Portico, so the escaping helpers never meet (and throw on) a bad one later:
// a throw there used to skip fault isolation and block every sync.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import type { KubeObject } from '../../operator/kube/object.ts';
import { renderNginxConf } from '../nginx-driver/nginx/render.ts';
import { runtimeDir } from '../nginx-driver/nginx/nginx-t.test-helpers.ts';
import { structureChecksum } from '../translate/diff.ts';
import { translate } from '../translate/translate.ts';
import { OPTS, ing, modelOf, rule, svc, svcRef } from '../translate/fixtures.test-helpers.ts';
import { normalizeEndpointSlice, normalizeIngress, normalizeIngressClass, normalizeService } from './normalize.ts';

const ok = { path: '/ok', backend: svcRef('web', 80) };

test('a path with an invalid backend Service name or port is dropped with a specific reason; the rest is served', () => {
  const table: [string, { service: { name: string; port: { number?: number; name?: string } } }, RegExp][] = [
    ['upper case', svcRef('Web', 80), /service name "Web" must be a DNS-1123 label/],
    ['underscore', svcRef('my_web', 80), /service name "my_web" must be a DNS-1123 label/],
    ['nginx variable', svcRef('web$host', 80), /service name "web\$host" must be a DNS-1123 label/],
    ['quote and semicolon', svcRef('web";', 80), /must be a DNS-1123 label/],
    ['too long', svcRef(`w${'e'.repeat(63)}`, 80), /must be at most 63 characters/],
    ['port 0', svcRef('web', 0), /service web port number 0 must be between 1 and 65535/],
    ['port 70000', svcRef('web', 70000), /port number 70000 must be between 1 and 65535/],
    ['port name upper case', svcRef('web', 'HTTP'), /service web port name "HTTP" must be lower-case/],
    ['port name without a letter', svcRef('web', '8080'), /port name "8080" must contain at least one letter/],
    ['port name with --', svcRef('web', 'h--p'), /port name "h--p" must not contain "--"/],
    ['port name too long', svcRef('web', 'abcdefghijklmnop'), /port name "abcdefghijklmnop" must be at most 15 characters/],
    ['port name with $', svcRef('web', 'h$x'), /port name "h\$x" must be lower-case/],
  ];
  for (const [name, backend, why] of table) {
    const r = normalizeIngress(ing('i', { rules: [rule('a.example.com', [ok, { path: '/bad', backend }])] }));
    assert.ok(r.ok, name);
    assert.deepEqual(r.ingress.rules[0]?.paths.map((p) => p.path), ['/ok'], name);
    assert.equal(r.ingress.problems.length, 1, name);
    assert.match(r.ingress.problems[0] ?? '', /^rules\[0\]\.paths\[1\]: /, name);
    assert.match(r.ingress.problems[0] ?? '', why, name);
    assert.match(r.ingress.problems[0] ?? '', /this backend is ignored$/, name);
  }
});

test('the dropped path becomes a Warning and the configuration renders (the escaping helper never throws)', () => {
  const m = modelOf({
    services: [svc('web', [{ port: 80 }])],
    ingresses: [ing('i', { rules: [rule('a.example.com', [ok, { path: '/bad', backend: svcRef('web$host', 80) }, { path: '/bad2', backend: svcRef('web', 'p"x') }])] })],
  });
  const r = translate(m.snapshot(), OPTS);
  assert.deepEqual(r.config.data.routes['a.example.com']?.rules.map((l) => l.path), ['/ok']);
  assert.equal(r.events.filter((e) => e.reason === 'InvalidConfiguration' && e.ref === 'Ingress/default/i').length, 2);
  const rt = runtimeDir();
  try {
    assert.doesNotThrow(() => renderNginxConf(r.config.structure, rt, structureChecksum(r.config.structure)));
  } finally {
    rmSync(rt.dir, { recursive: true, force: true });
  }
});

test('defaultBackend with a bad name is dropped; a bad TLS secretName falls back to the default certificate', () => {
  const r = normalizeIngress(
    ing('i', { defaultBackend: svcRef('Bad', 80), tls: [{ hosts: ['a.example.com'], secretName: 'bad_secret' }], rules: [rule('a.example.com', [ok])] }),
  );
  assert.ok(r.ok);
  assert.equal(r.ingress.defaultBackend, null);
  assert.deepEqual(r.ingress.tls, [{ hosts: ['a.example.com'], secretName: null }]);
  const problems = r.ingress.problems.join('\n');
  assert.match(problems, /defaultBackend: service name "Bad" must be a DNS-1123 label/);
  assert.match(problems, /tls\[0\] secretName "bad_secret" must be a DNS-1123 subdomain.*default certificate/);
});

test('an Ingress whose own name, namespace or class name is invalid is rejected as a whole, with why', () => {
  const cases: [KubeObject, RegExp][] = [
    [ing('Bad', { rules: [rule('a.example.com', [ok])] }), /invalid Ingress: Ingress name "Bad" must be a DNS-1123 subdomain/],
    [ing('a_b', { rules: [rule('a.example.com', [ok])] }), /Ingress name "a_b"/],
    [ing('a', { rules: [rule('a.example.com', [ok])] }, { ns: 'Team.A' }), /invalid Ingress: namespace "Team.A" must be a DNS-1123 label/],
    [ing('a', { rules: [rule('a.example.com', [ok])] }, { ns: 'a'.repeat(64) }), /namespace .* must be at most 63 characters/],
    [ing('a', { ingressClassName: 'Portico!', rules: [rule('a.example.com', [ok])] }), /spec\.ingressClassName "Portico!" must be a DNS-1123 subdomain/],
  ];
  for (const [obj, why] of cases) {
    const r = normalizeIngress(obj);
    assert.equal(r.ok, false);
    assert.match(!r.ok ? r.reason : '', why);
  }
  assert.ok(normalizeIngress(ing('a.b-c', { rules: [rule('a.example.com', [ok])] })).ok, 'dots are fine in Ingress names');
});

test('Services: invalid names throw (the reconciler reports it); invalid ports are dropped with why', () => {
  assert.throws(() => normalizeService(svc('Web', [{ port: 80 }])), /Service name "Web" must be a DNS-1123 label/);
  assert.throws(() => normalizeService(svc('web', [{ port: 80 }], 'Bad_NS')), /namespace "Bad_NS"/);
  const s = normalizeService(svc('web', [{ name: 'http', port: 80 }, { name: 'Bad', port: 81 }, { name: 'x', port: 0 }, { port: 82 }]));
  assert.deepEqual(s.ports.map((p) => p.port), [80, 82]);
  assert.equal(s.problems.length, 2);
  assert.match(s.problems[0] ?? '', /port name "Bad" must be a DNS-1123 label: lower-case.*this port is ignored/);
  assert.match(s.problems[1] ?? '', /port 0 must be between 1 and 65535/);
  const ext = normalizeService(svc('ext', [{ port: 80 }], 'default', { type: 'ExternalName', externalName: 'bad name' }));
  assert.equal(ext.externalName, null);
  assert.match(ext.problems[0] ?? '', /externalName "bad name" is not a valid DNS name/);
});

test('a missing port reported with why it was dropped', () => {
  const r = translate(
    modelOf({ services: [svc('web', [{ name: 'Bad', port: 80 }])], ingresses: [ing('i', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] })] }).snapshot(),
    OPTS,
  );
  assert.match(r.events.find((e) => e.reason === 'BackendNotFound')?.message ?? '', /has no port 80 \(ignored: port name "Bad"/);
});

test('IngressClass names are validated', () => {
  assert.throws(() => normalizeIngressClass({ metadata: { name: 'Portico' }, spec: { controller: 'portico.dev/ingress-controller' } } as KubeObject), /IngressClass name "Portico"/);
  assert.equal(normalizeIngressClass({ metadata: { name: 'portico' }, spec: { controller: 'x' } } as KubeObject).name, 'portico');
});

test('EndpointSlices: ports with invalid names or numbers and non-canonical addresses are dropped', () => {
  const n = normalizeEndpointSlice({
    metadata: { name: 's', namespace: 'ns', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080 }, { name: 'Bad', port: 8081 }, { name: 'x', port: 0 }],
    endpoints: [{ addresses: ['10.0.0.1'] }, { addresses: ['010.0.0.1'] }, { addresses: ['10.0.0.256'] }],
  } as never);
  assert.deepEqual(n?.ports.map((p) => p.port), [8080]);
  assert.deepEqual(n?.endpoints.map((e) => e.address), ['10.0.0.1']);
  const v6 = normalizeEndpointSlice({
    metadata: { name: 's6', namespace: 'ns', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv6',
    ports: [{ name: 'http', port: 8080 }],
    endpoints: [{ addresses: ['2001:db8::1'] }, { addresses: [':::'] }, { addresses: ['2001:db8::1%eth0'] }],
  } as never);
  assert.deepEqual(v6?.endpoints.map((e) => e.address), ['2001:db8::1']);
});

test('Service and EndpointSlice port names are DNS-1123 labels, as the API server checks them: kubectl create service names its port "8080-8080"', () => {
  const s = normalizeService(svc('web', [{ name: '8080-8080', port: 8080 }, { name: 'a'.repeat(63), port: 81 }, { name: 'a'.repeat(64), port: 82 }, { name: '-x', port: 83 }]));
  assert.deepEqual(s.ports.map((p) => [p.name, p.port]), [['8080-8080', 8080], ['a'.repeat(63), 81]]);
  assert.equal(s.problems.length, 2);
  const n = normalizeEndpointSlice({
    metadata: { name: 's', namespace: 'ns', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    ports: [{ name: '8080-8080', port: 8080 }, { name: 'x--y', port: 8081 }, { name: 'x_y', port: 8082 }],
    endpoints: [{ addresses: ['198.51.100.7'] }],
  } as never);
  assert.deepEqual(n?.ports.map((p) => [p.name, p.port]), [['8080-8080', 8080], ['x--y', 8081]]);
});

test('an Ingress backend port name stays an IANA_SVC_NAME (what the API server checks for service.port.name); hosts may have labels over 63 characters like the API server allows', () => {
  const mk = (portName: string, host = 'a.example') =>
    normalizeIngress({ metadata: { name: 'i', namespace: 'ns', creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { ingressClassName: 'portico', rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { name: portName } } } }] } }] } } as never);
  const ok = mk('http-alt');
  assert.ok(ok.ok && ok.ingress.rules[0]?.paths.length === 1);
  const digits = mk('8080-8080');
  assert.ok(!digits.ok && /port name "8080-8080" must contain at least one letter/.test(digits.reason));
  const long = mk('http', `${'a'.repeat(64)}.example`);
  assert.ok(long.ok && long.ingress.rules[0]?.host === `${'a'.repeat(64)}.example`);
});

test('Service names are DNS-1123 labels, as Kubernetes 1.36 accepts them ("1web"), for the Service and for an Ingress backend', () => {
  assert.equal(normalizeService(svc('1web', [{ port: 80 }])).key, 'default/1web');
  assert.throws(() => normalizeService(svc('a'.repeat(64), [{ port: 80 }])), /at most 63/);
  const r = normalizeIngress({ metadata: { name: 'i', namespace: 'ns', creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { ingressClassName: 'portico', rules: [{ host: 'a.example', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: '1web', port: { number: 80 } } } }] } }] } } as never);
  assert.ok(r.ok && r.ingress.rules[0]?.paths[0]?.backend.service === '1web');
});
