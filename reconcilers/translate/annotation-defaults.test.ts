// The ConfigMap's defaults of preserve-trailing-slash, use-port-in-redirects and service-upstream reach the
// Ingresses that do not set the annotation, and only those (ingress-nginx's parsers fall back to the ConfigMap).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { translate } from './translate.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from './fixtures.test-helpers.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../model/global-config.ts';

function config(data: Record<string, string>) {
  const m = modelOf({
    services: [svc('web', [{ port: 80, targetPort: 8080 }], 'default', { clusterIP: '198.18.0.10' }), svc('web2', [{ port: 80, targetPort: 8080 }], 'default', { clusterIP: '198.18.0.11' })],
    slices: [slice('web-1', 'web', [{ port: 8080 }], [{ ip: '198.18.1.5' }]), slice('web2-1', 'web2', [{ port: 8080 }], [{ ip: '198.18.1.6' }])],
    ingresses: [
      ing('plain', { rules: [rule('a.example.com', [{ path: '/docs/', pathType: 'ImplementationSpecific', backend: svcRef('web', 80) }])], tls: [{ hosts: ['a.example.com'], secretName: 'cert' }] }),
      ing('own', { rules: [rule('b.example.com', [{ path: '/docs/', pathType: 'ImplementationSpecific', backend: svcRef('web2', 80) }])], tls: [{ hosts: ['b.example.com'], secretName: 'cert' }] }, {
        annotations: { 'nginx.ingress.kubernetes.io/preserve-trailing-slash': 'false', 'nginx.ingress.kubernetes.io/service-upstream': 'false', 'nginx.ingress.kubernetes.io/use-port-in-redirects': 'false' },
      }),
    ],
  });
  const r = parseGlobalConfig(data, defaultGlobalConfig());
  assert.deepEqual(r.errors, []);
  m.setGlobalConfig(r.values);
  return translate(m.snapshot(), OPTS).config;
}

const routeOf = (c: ReturnType<typeof config>, host: string) => c.data.routes[host]?.rules.find((r) => r.path === '/docs/' || r.path === '/docs');

test('ConfigMap defaults apply to Ingresses without the annotation; an Ingress that sets it keeps its own', () => {
  const off = config({});
  const on = config({ 'preserve-trailing-slash': 'true', 'use-port-in-redirects': 'true', 'service-upstream': 'true' });
  const a0 = routeOf(off, 'a.example.com');
  const a1 = routeOf(on, 'a.example.com');
  const b1 = routeOf(on, 'b.example.com');
  assert.ok(a0 && a1 && b1, 'routes exist');
  assert.notEqual(a0.route.preserveTrailingSlash, true);
  assert.equal(a1.route.preserveTrailingSlash, true, 'the ConfigMap default reaches the Ingress without the annotation');
  assert.notEqual(b1.route.preserveTrailingSlash, true, 'an Ingress that says "false" keeps it');
  assert.notEqual(a0.portInRedirect, true);
  assert.equal(a1.portInRedirect, true);
  assert.notEqual(b1.portInRedirect, true);
  // service-upstream: the backend is the cluster IP for the Ingress without the annotation.
  const backend = (c: ReturnType<typeof config>, id: string) => c.data.backends[id];
  const idA = a1.route.backendId as string;
  const idB = b1.route.backendId as string;
  assert.deepEqual(backend(on, idA)?.endpoints.map((e) => e.address), ['198.18.0.10']);
  assert.deepEqual(backend(off, a0.route.backendId as string)?.endpoints.map((e) => e.address), ['198.18.1.5']);
  assert.deepEqual(backend(on, idB)?.endpoints.map((e) => e.address), ['198.18.1.6'], 'the Ingress that says "false" keeps its endpoints');
});

test('no-tls-redirect-locations: paths that start with one are never redirected to HTTPS (ACME HTTP-01 by default)', () => {
  const m = modelOf({
    services: [svc('web', [{ port: 80 }])],
    ingresses: [
      ing('site', { rules: [rule('s.example.com', [{ path: '/', backend: svcRef('web', 80) }])], tls: [{ hosts: ['s.example.com'], secretName: 'cert' }] }),
      ing('acme', { rules: [rule('s.example.com', [{ path: '/.well-known/acme-challenge/tok', pathType: 'Exact', backend: svcRef('web', 80) }])] }, { annotations: { 'nginx.ingress.kubernetes.io/force-ssl-redirect': 'true' } }),
    ],
  });
  const rules = (data: Record<string, string>) => {
    const r = parseGlobalConfig(data, defaultGlobalConfig());
    assert.deepEqual(r.errors, []);
    m.setGlobalConfig(r.values);
    return Object.fromEntries((translate(m.snapshot(), OPTS).config.data.routes['s.example.com']?.rules ?? []).map((x) => [x.path, x.route.sslRedirect === true]));
  };
  assert.deepEqual(rules({}), { '/.well-known/acme-challenge/tok': false, '/': true }, 'the default list keeps the challenge on HTTP, even with force-ssl-redirect');
  assert.deepEqual(rules({ 'no-tls-redirect-locations': '' }), { '/.well-known/acme-challenge/tok': true, '/': true });
  assert.deepEqual(rules({ 'no-tls-redirect-locations': '/.well-known/acme-challenge,/' }), { '/.well-known/acme-challenge/tok': false, '/': false });
});
