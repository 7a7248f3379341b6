// BackendTLSPolicy: the normalizer reading its CA ConfigMaps (kinds, missing, not PEM, not a certificate), which
// policy holds for a Service port (a port's own over the Service's, the oldest among equals, the rest Conflicted),
// the conditions, the ancestors, and the translation: an HTTPS (or GRPCS) profile with the policy's hostname as
// SNI and verified name and its CA bundle; a policy that cannot be applied fails its backend closed (500). The
// conformance tests BackendTLSPolicy* are the model for the objects. subjectAltNames: kept and checked when Portico's
// module portico_upstream_ssl is there (refused by name otherwise), carried by the profiles, rendered as the
// module's directives and taken by nginx -t. No cluster, no running nginx.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { Model } from '../../model/model.ts';
import { normalizeBackendTlsPolicy, policyReads } from '../../kinds/backendtlspolicy/normalize.ts';
import { normalizeGateway } from '../../kinds/gateway/normalize.ts';
import { normalizeGatewayClass } from '../../kinds/gatewayclass/index.ts';
import { normalizeHttpRoute } from '../../kinds/httproute/normalize.ts';
import { normalizeGrpcRoute } from '../../kinds/grpcroute/normalize.ts';
import { modelOf, OPTS, slice, svc } from '../fixtures.test-helpers.ts';
import { makeCa } from '../pki.test-helpers.ts';
import { translate, type TranslateOptions } from '../translate.ts';
import { gatewayApiState, listenerHost, type GatewayApiOptions } from './attach.ts';
import { backendTlsState, policyAncestors, policyFor } from './backend-tls.ts';
import { renderNginxConf, writeTrustedCas } from '../../nginx-driver/nginx/render.ts';
import { sslVerifyName, UnsafeValueError } from '../../nginx-driver/nginx/escape.ts';
import { nginxTest, runtimeDir } from '../../nginx-driver/nginx/nginx-t.test-helpers.ts';
import { UPSTREAM_SSL_MODULE } from '../../nginx-driver/nginx/runtime.ts';

const GA: GatewayApiOptions = { controllerName: 'portico.dev/gateway-controller', reservedPorts: [8080, 8443, 10246] };
const O: TranslateOptions = { ...OPTS, gatewayApi: GA };
const dir = mkdtempSync(path.join(tmpdir(), 'portico-btls-'));
const CA = makeCa(dir, 'backend-ca');
const CONFIGMAPS: Record<string, Record<string, string>> = {
  'infra/ca': { 'ca.crt': CA.cert },
  'infra/empty': {},
  'infra/not-pem': { 'ca.crt': 'hello' },
  // PEM armour around bytes that are no certificate: nginx -t would refuse the file, so it is refused here.
  'infra/not-cert': { 'ca.crt': '-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n' },
};
const readCm = (k: string) => (CONFIGMAPS[k] ? { data: CONFIGMAPS[k] } : undefined);

let t = 0;
const obj = (kind: string, name: string, spec: unknown, ns = 'infra', created?: string): KubeObject =>
  ({ apiVersion: 'gateway.networking.k8s.io/v1', kind, metadata: { name, namespace: ns, uid: `uid-${name}`, generation: 1, creationTimestamp: created ?? `2026-01-01T00:00:${String(t++ % 60).padStart(2, '0')}Z` }, spec }) as KubeObject;
const policy = (name: string, target: Record<string, unknown>, validation: Record<string, unknown>, extra: Record<string, unknown> = {}, created?: string) =>
  obj('BackendTLSPolicy', name, { targetRefs: [{ group: '', kind: 'Service', ...target }], validation: { hostname: 'abc.example.com', ...validation }, ...extra }, 'infra', created);
const caRef = (name: string, kind = 'ConfigMap', group = '') => ({ group, kind, name });

function put(m: Model, o: KubeObject): void {
  const n =
    o.kind === 'GatewayClass' ? normalizeGatewayClass(o) : o.kind === 'Gateway' ? normalizeGateway(o, readCm) : o.kind === 'HTTPRoute' ? normalizeHttpRoute(o) : o.kind === 'GRPCRoute' ? normalizeGrpcRoute(o) : normalizeBackendTlsPolicy(o, readCm);
  assert.ok(n.ok, `${o.kind} ${o.metadata.name}: ${n.ok ? '' : n.reason}`);
  m.setCrd(o.kind as 'BackendTLSPolicy', n.record as never, o.kind === 'BackendTLSPolicy' ? policyReads(o) : undefined);
}

function base(): Model {
  const m = modelOf({
    services: [
      svc('tls', [{ name: 'btls', port: 443, targetPort: 8443 }, { name: 'other', port: 444, targetPort: 8443 }], 'infra'),
      svc('tls2', [{ name: 'btls', port: 443, targetPort: 8443 }], 'infra'),
      svc('plain', [{ port: 8080 }], 'infra'),
    ],
    slices: [slice('tls-1', 'tls', [{ name: 'btls', port: 8443 }, { name: 'other', port: 8443 }], [{ ip: '198.18.0.50' }], 'infra'), slice('tls2-1', 'tls2', [{ name: 'btls', port: 8443 }], [{ ip: '198.18.0.51' }], 'infra'), slice('plain-1', 'plain', [{ port: 8080 }], [{ ip: '198.18.0.52' }], 'infra')],
  });
  put(m, obj('GatewayClass', 'portico', { controllerName: GA.controllerName }, undefined as never));
  put(m, obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] }));
  return m;
}

test('normalizer: CA bundles from ConfigMaps of the policy\'s namespace; bad references keep their ResolvedRefs reason; what Portico does not serve is named', () => {
  const ok = normalizeBackendTlsPolicy(policy('p', { name: 'tls' }, { caCertificateRefs: [caRef('ca')] }), readCm);
  assert.ok(ok.ok);
  assert.equal(ok.ok && ok.record.caPem?.includes('BEGIN CERTIFICATE'), true);
  assert.deepEqual(ok.ok && ok.record.refProblems, []);
  assert.deepEqual(policyReads(policy('p', { name: 'tls' }, { caCertificateRefs: [caRef('ca'), caRef('x', 'Secret'), caRef('gone')] })).configMaps, ['infra/ca', 'infra/gone']);
  const problems = (refs: unknown[]) => {
    const r = normalizeBackendTlsPolicy(policy('p', { name: 'tls' }, { caCertificateRefs: refs }), readCm);
    assert.ok(r.ok);
    return r.ok ? { reasons: r.record.refProblems.map((p) => p.reason), text: r.record.refProblems.map((p) => p.message).join('; '), ca: !!r.record.caPem } : null;
  };
  assert.deepEqual(problems([caRef('invalid-kind', 'InvalidKind', 'invalid.io')]), { reasons: ['InvalidKind'], text: 'spec.validation.caCertificateRefs.0: invalid.io/InvalidKind is not a kind Portico reads CA certificates from (core ConfigMap, certificates.k8s.io/ClusterTrustBundle)', ca: false });
  assert.match(problems([caRef('gone')])!.text, /ConfigMap infra\/gone not found/);
  assert.match(problems([caRef('empty')])!.text, /has no ca\.crt/);
  assert.match(problems([caRef('not-pem')])!.text, /no certificate|only PEM/);
  assert.match(problems([caRef('not-cert')])!.text, /does not parse/);
  assert.deepEqual(problems([caRef('gone'), caRef('ca')]), { reasons: ['InvalidCACertificateRef'], text: 'spec.validation.caCertificateRefs.0: ConfigMap infra/gone not found', ca: true });
  const sans = normalizeBackendTlsPolicy(policy('p', { name: 'tls' }, { caCertificateRefs: [caRef('ca')], subjectAltNames: [{ type: 'Hostname', hostname: 'x.example.com' }] }), readCm);
  assert.match(sans.ok ? sans.record.unsupported ?? '' : '', /subjectAltNames.*portico_upstream_ssl.*is not installed/, 'without the module: refused by name');
  assert.equal(sans.ok && sans.record.subjectAltNames, undefined);
  const both = normalizeBackendTlsPolicy(policy('p', { name: 'tls' }, { caCertificateRefs: [caRef('ca')], wellKnownCACertificates: 'System' }), readCm);
  assert.match(!both.ok ? both.reason : '', /exactly one of caCertificateRefs and wellKnownCACertificates/);
  const wildcard = normalizeBackendTlsPolicy(policy('p', { name: 'tls' }, { caCertificateRefs: [caRef('ca')], hostname: '*.example.com' }), readCm);
  assert.equal(wildcard.ok, false, 'hostname is a PreciseHostname: no wildcard');
});

test('which policy holds: a port\'s own over the Service\'s; among equals the oldest, the others Conflicted; conditions', () => {
  const m = base();
  put(m, policy('svc-wide', { name: 'tls' }, { caCertificateRefs: [caRef('ca')] }, {}, '2026-01-01T00:00:01Z'));
  put(m, policy('svc-wide-newer', { name: 'tls' }, { caCertificateRefs: [caRef('ca')], hostname: 'other.example.com' }, {}, '2026-01-01T00:00:02Z'));
  put(m, policy('port', { name: 'tls', sectionName: 'btls' }, { caCertificateRefs: [caRef('ca')], hostname: 'port.example.com' }, {}, '2026-01-01T00:00:03Z'));
  put(m, policy('bad-kind', { name: 'tls2' }, { caCertificateRefs: [caRef('x', 'InvalidKind', 'invalid.io')] }));
  const snap = m.snapshot();
  assert.equal(policyFor(snap, 'infra', 'tls', 443)?.name, 'port', 'the port named btls: its own policy');
  assert.equal(policyFor(snap, 'infra', 'tls', 444)?.name, 'svc-wide', 'another port: the Service\'s oldest policy');
  assert.equal(policyFor(snap, 'infra', 'plain', 8080), undefined);
  const st = backendTlsState(snap).policies;
  assert.deepEqual({ ...st.get('infra/svc-wide')!.accepted, message: '' }, { status: 'True', reason: 'Accepted', message: '' });
  assert.equal(st.get('infra/svc-wide-newer')!.accepted.reason, 'Conflicted');
  assert.match(st.get('infra/svc-wide-newer')!.accepted.message, /already has BackendTLSPolicy svc-wide/);
  assert.equal(st.get('infra/port')!.accepted.status, 'True', 'a port\'s policy does not conflict with the Service\'s');
  assert.deepEqual([st.get('infra/bad-kind')!.accepted.reason, st.get('infra/bad-kind')!.resolvedRefs.reason], ['NoValidCACertificate', 'InvalidKind']);
});

test('translation: an HTTPS profile with the policy\'s hostname and CA; GRPCRoute gets GRPCS; a policy that cannot apply answers 500; ancestors are the Gateways of the routes using a targeted port', () => {
  const m = base();
  put(m, policy('good', { name: 'tls', sectionName: 'btls' }, { caCertificateRefs: [caRef('ca')] }));
  put(m, policy('broken', { name: 'tls2' }, { caCertificateRefs: [caRef('gone')] }));
  put(m, obj('HTTPRoute', 'r', {
    parentRefs: [{ name: 'gw' }],
    rules: [
      { matches: [{ path: { type: 'Exact', value: '/good' } }], backendRefs: [{ name: 'tls', port: 443 }] },
      { matches: [{ path: { type: 'Exact', value: '/broken' } }], backendRefs: [{ name: 'tls2', port: 443 }] },
      { matches: [{ path: { type: 'Exact', value: '/mixed' } }], backendRefs: [{ name: 'tls', port: 443 }, { name: 'plain', port: 8080 }] },
      { matches: [{ path: { type: 'Exact', value: '/plain' } }], backendRefs: [{ name: 'plain', port: 8080 }] },
    ],
  }));
  put(m, obj('GRPCRoute', 'g', { parentRefs: [{ name: 'gw' }], hostnames: ['grpc.example.com'], rules: [{ backendRefs: [{ name: 'tls', port: 443 }] }] }));
  const snap = m.snapshot();
  const state = gatewayApiState(snap, GA);
  const port = state.gateways.get('infra/gw')!.listeners[0]!.podPort!;
  const r = translate(snap, O);
  const rules = r.config.data.routes[listenerHost(port, '_')]!.rules;
  const at = (p: string) => rules.find((x) => x.path === p)!.route;
  const profileOf = (route: { profile?: string }) => r.config.structure.profiles.find((p) => p.name === route.profile);
  const good = profileOf(at('/good'))!;
  assert.deepEqual([good.backendProtocol, good.sslServerName, good.trustedCa?.trim()], ['HTTPS', 'abc.example.com', CA.cert.trim()]);
  assert.equal(at('/broken').action, 'error', 'no usable CA: the backend fails closed (500), never plain HTTP');
  assert.deepEqual(at('/mixed').split?.map((s) => s.backendId), ['infra_tls_443', ''], 'the share of a backend with another TLS setting answers 500');
  assert.ok(r.events.some((e) => e.reason === 'MixedBackendTLS'));
  assert.equal(profileOf(at('/plain'))?.backendProtocol, undefined);
  const grpc = r.config.data.routes[listenerHost(port, 'grpc.example.com')]!.rules[0]!.route;
  assert.equal(profileOf(grpc)?.backendProtocol, 'GRPCS');
  const anc = policyAncestors(snap, state);
  assert.deepEqual(anc.get('infra/good'), ['infra/gw']);
  assert.deepEqual(anc.get('infra/broken'), ['infra/gw']);
});

test('Gateway spec.tls.backend.clientCertificateRef: presented to the backends Portico speaks TLS to; what cannot be used makes the Gateway\'s ResolvedRefs False', () => {
  const m = base();
  m.setSecret({ key: 'infra/client', ok: true, cert: 'CLIENT CERT', privateKey: 'CLIENT KEY', hosts: [], notAfter: '2099-01-01T00:00:00.000Z', fingerprint: 'f' });
  m.setSecret({ key: 'infra/broken', ok: false, error: 'tls.key is missing' });
  m.setSecret({ key: 'other/client', ok: true, cert: 'OTHER CERT', privateKey: 'OTHER KEY', hosts: [], notAfter: '2099-01-01T00:00:00.000Z', fingerprint: 'g' });
  const gw = (name: string, ref: Record<string, unknown>) => put(m, obj('Gateway', name, { gatewayClassName: 'portico', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }], tls: { backend: { clientCertificateRef: ref } } }));
  gw('with-cert', { name: 'client' });
  gw('missing', { name: 'nonexistent' });
  gw('bad-group', { group: 'wrong.example.com', kind: 'Secret', name: 'client' });
  gw('bad-kind', { group: '', kind: 'WrongKind', name: 'client' });
  gw('malformed', { name: 'broken' });
  gw('other-ns', { name: 'client', namespace: 'other' });
  put(m, policy('p', { name: 'tls' }, { caCertificateRefs: [caRef('ca')] }));
  put(m, obj('HTTPRoute', 'r', { parentRefs: [{ name: 'with-cert' }, { name: 'gw' }], rules: [{ backendRefs: [{ name: 'tls', port: 443 }] }] }));
  const snap = m.snapshot();
  const st = gatewayApiState(snap, GA);
  const refs = (name: string) => [st.gateways.get(`infra/${name}`)!.accepted.status, st.gateways.get(`infra/${name}`)!.resolvedRefs.status, st.gateways.get(`infra/${name}`)!.resolvedRefs.reason];
  assert.deepEqual(refs('with-cert'), ['True', 'True', 'ResolvedRefs']);
  assert.deepEqual(refs('gw'), ['True', 'True', 'ResolvedRefs'], 'no clientCertificateRef: nothing to resolve');
  for (const name of ['missing', 'bad-group', 'bad-kind', 'malformed']) assert.deepEqual(refs(name), ['True', 'False', 'InvalidClientCertificateRef'], name);
  assert.deepEqual(refs('other-ns'), ['True', 'False', 'RefNotPermitted']);
  assert.match(st.gateways.get('infra/malformed')!.resolvedRefs.message, /tls\.key is missing/);
  const r = translate(snap, O);
  const profileAt = (gwName: string) => {
    const port = st.gateways.get(`infra/${gwName}`)!.listeners[0]!.podPort!;
    const name = r.config.data.routes[listenerHost(port, '_')]!.rules[0]!.route.profile;
    return r.config.structure.profiles.find((p) => p.name === name)!;
  };
  assert.deepEqual(profileAt('with-cert').sslCertificate, { cert: 'CLIENT CERT', key: 'CLIENT KEY' }, 'the Gateway\'s certificate goes to the backend');
  assert.equal(profileAt('gw').sslCertificate, undefined, 'the same route on a Gateway without one presents none');
  assert.equal(profileAt('gw').backendProtocol, 'HTTPS');
});

const WITH_SANS = { subjectAltNames: true };

test('normalizer with Portico\'s module: subjectAltNames kept (Hostname, wildcard, URI); what cannot be served makes the policy not accepted, with the reason', () => {
  const norm = (sans: unknown[], hostname = 'abc.example.com') => {
    const r = normalizeBackendTlsPolicy(policy('p', { name: 'tls' }, { caCertificateRefs: [caRef('ca')], hostname, subjectAltNames: sans }), readCm, WITH_SANS);
    assert.ok(r.ok, r.ok ? '' : r.reason);
    return r.ok ? r.record : undefined;
  };
  const ok = norm([{ type: 'Hostname', hostname: 'abc.example.com' }, { type: 'Hostname', hostname: '*.wild.example.com' }, { type: 'URI', uri: 'spiffe://abc.example.com/test-identity' }]);
  assert.equal(ok?.unsupported, undefined);
  assert.deepEqual(ok?.subjectAltNames, [{ type: 'Hostname', value: 'abc.example.com' }, { type: 'Hostname', value: '*.wild.example.com' }, { type: 'URI', value: 'spiffe://abc.example.com/test-identity' }]);
  assert.equal(norm([])?.subjectAltNames, undefined, 'an empty list: the hostname is verified as without one');
  const refused: [unknown, RegExp][] = [
    [{ type: 'Hostname', hostname: 'ABC.example.com' }, /subjectAltNames\.0\.hostname: "ABC\.example\.com" is not a lower-case DNS name/],
    [{ type: 'Hostname', hostname: 'a.*.example.com' }, /is not a lower-case DNS name/],
    [{ type: 'Hostname' }, /subjectAltNames\.0\.hostname: "" is not/],
    [{ type: 'Hostname', hostname: 'a.example.com', uri: 'spiffe://x/y' }, /type Hostname takes no uri/],
    [{ type: 'URI', uri: 'spiffe:abc' }, /subjectAltNames\.0\.uri: "spiffe:abc" is not an absolute URI/],
    [{ type: 'URI', uri: 'spiffe://a b' }, /is not an absolute URI/],
    [{ type: 'URI', uri: 'spiffe://a/"b' }, /has a quote, a backslash or "\$"/],
    [{ type: 'URI', uri: 'spiffe://a/$host' }, /has a quote, a backslash or "\$"/],
    [{ type: 'URI', uri: `spiffe://a/${'x'.repeat(250)}` }, /at most 253 characters/],
    [{ type: 'URI', hostname: 'a.example.com', uri: 'spiffe://a/b' }, /type URI takes no hostname/],
    [{ type: 'IPAddress', ipAddress: '10.0.0.1' }, /subjectAltNames\.0\.type: "IPAddress" is not Hostname or URI/],
    ['abc.example.com', /subjectAltNames\.0/],
  ];
  for (const [san, why] of refused) {
    const r = norm([{ type: 'Hostname', hostname: 'ok.example.com' }, san].reverse());
    assert.match(r?.unsupported ?? '', why, JSON.stringify(san));
    assert.equal(r?.subjectAltNames, undefined, 'none kept: the policy is not applied');
  }
  const six = normalizeBackendTlsPolicy(policy('p', { name: 'tls' }, { caCertificateRefs: [caRef('ca')], subjectAltNames: Array.from({ length: 6 }, (_, i) => ({ type: 'Hostname', hostname: `h${i}.example.com` })) }), readCm, WITH_SANS);
  assert.equal(six.ok, false, 'at most 5 (the API\'s limit)');
});

test('translation with subjectAltNames: the HTTPS and GRPCS profiles carry the names (the hostname stays the SNI); without the module the policy is not accepted and its backends answer 500', () => {
  const m = base();
  const sans = [{ type: 'URI', uri: 'spiffe://abc.example.com/test-identity' }, { type: 'Hostname', hostname: 'abc.example.com' }];
  const o = policy('sans', { name: 'tls', sectionName: 'btls' }, { caCertificateRefs: [caRef('ca')], hostname: 'sni.example.com', subjectAltNames: sans });
  const n = normalizeBackendTlsPolicy(o, readCm, WITH_SANS);
  assert.ok(n.ok);
  m.setCrd('BackendTLSPolicy', n.record, policyReads(o));
  const o2 = policy('no-module', { name: 'tls2' }, { caCertificateRefs: [caRef('ca')], subjectAltNames: sans });
  const n2 = normalizeBackendTlsPolicy(o2, readCm);
  assert.ok(n2.ok);
  m.setCrd('BackendTLSPolicy', n2.record, policyReads(o2));
  put(m, obj('HTTPRoute', 'r', {
    parentRefs: [{ name: 'gw' }],
    rules: [
      { matches: [{ path: { type: 'Exact', value: '/sans' } }], backendRefs: [{ name: 'tls', port: 443 }] },
      { matches: [{ path: { type: 'Exact', value: '/no-module' } }], backendRefs: [{ name: 'tls2', port: 443 }] },
    ],
  }));
  put(m, obj('GRPCRoute', 'g', { parentRefs: [{ name: 'gw' }], hostnames: ['grpc.example.com'], rules: [{ backendRefs: [{ name: 'tls', port: 443 }] }] }));
  const snap = m.snapshot();
  const st = backendTlsState(snap).policies;
  assert.equal(st.get('infra/sans')!.accepted.status, 'True');
  assert.deepEqual([st.get('infra/no-module')!.accepted.status, st.get('infra/no-module')!.accepted.reason], ['False', 'Invalid']);
  const state = gatewayApiState(snap, GA);
  const port = state.gateways.get('infra/gw')!.listeners[0]!.podPort!;
  const r = translate(snap, O);
  const rules = r.config.data.routes[listenerHost(port, '_')]!.rules;
  const at = (p: string) => rules.find((x) => x.path === p)!.route;
  const profileOf = (route: { profile?: string }) => r.config.structure.profiles.find((p) => p.name === route.profile);
  const https = profileOf(at('/sans'))!;
  const names = ['URI:spiffe://abc.example.com/test-identity', 'DNS:abc.example.com'];
  assert.deepEqual([https.backendProtocol, https.sslServerName, https.sslVerifyNames, https.trustedCa?.trim()], ['HTTPS', 'sni.example.com', names, CA.cert.trim()]);
  assert.equal(at('/no-module').action, 'error', 'the module missing: 500, never proxied with the hostname alone checked');
  const grpc = profileOf(r.config.data.routes[listenerHost(port, 'grpc.example.com')]!.rules[0]!.route)!;
  assert.deepEqual([grpc.backendProtocol, grpc.sslServerName, grpc.sslVerifyNames], ['GRPCS', 'sni.example.com', names]);

  // Rendered: the module's directives in place of proxy_ssl_verify / grpc_ssl_verify, and nginx -t takes them
  // (the module's merge finds the proxy module's TLS context in one location, the gRPC module's in the other).
  const rt = runtimeDir();
  writeTrustedCas(r.config.structure, rt);
  const conf = renderNginxConf(r.config.structure, rt, 'c');
  const loc = (p: { name: string }) => new RegExp(`location @portico_${p.name} \\{[\\s\\S]*?\\n    \\}`).exec(conf)?.[0] ?? '';
  if (existsSync(UPSTREAM_SSL_MODULE)) {
    assert.ok(conf.includes(`load_module "${UPSTREAM_SSL_MODULE}";`));
    for (const p of [https, grpc]) {
      assert.match(loc(p), /portico_upstream_ssl_verify_names "URI:spiffe:\/\/abc\.example\.com\/test-identity" "DNS:abc\.example\.com";\n\s+portico_upstream_ssl_trusted_certificate "[^"]+";\n\s+portico_upstream_ssl_verify_depth 4;/);
      assert.doesNotMatch(loc(p), /_ssl_verify on|return 502/);
      assert.match(loc(p), /proxy_ssl_name sni\.example\.com;[\s\S]*grpc_ssl_name sni\.example\.com;/);
    }
    nginxTest(rt, conf, { withOutput: true });
  } else {
    // A machine without the module: the profile answers 502 (never proxied unverified), and nginx -t passes.
    assert.ok(!conf.includes('portico_upstream_ssl'));
    for (const p of [https, grpc]) assert.match(loc(p), /return 502;/);
  }
});

test('the renderer\'s helper for the names: DNS and URI forms quoted; anything else refused', () => {
  assert.equal(sslVerifyName('DNS:abc.example.com'), '"DNS:abc.example.com"');
  assert.equal(sslVerifyName('DNS:*.example.com'), '"DNS:*.example.com"');
  assert.equal(sslVerifyName('URI:spiffe://abc.example.com/ns/a;b{c}'), '"URI:spiffe://abc.example.com/ns/a;b{c}"');
  for (const bad of ['abc.example.com', 'DNS:ABC.example.com', 'DNS:a b', 'DNS:', 'URI:spiffe:x', 'URI:spiffe://a"b', 'URI:spiffe://a\\b', 'URI:spiffe://$host', 'URI:spiffe://a\nb', 'IP:10.0.0.1', 7]) {
    assert.throws(() => sslVerifyName(bad), UnsafeValueError, JSON.stringify(bad));
  }
});
