// Gateway API's ClusterTrustBundle feature: caCertificateRefs of a BackendTLSPolicy and of a Gateway's frontend
// validation naming a ClusterTrustBundle (certificates.k8s.io, cluster-scoped). The normalizers read the bundle
// through a fake reader (found, missing, empty, not certificates; no reader at all: the API server does not serve
// them), the records say what they read (so a bundle change reaches them), and the attachment and translation use the
// bundle's certificates: from any namespace without a ReferenceGrant; a missing one fails closed. No cluster, no nginx.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { Model } from '../../model/model.ts';
import { normalizeBackendTlsPolicy, policyReads } from '../../kinds/backendtlspolicy/normalize.ts';
import { gatewayReads, normalizeGateway } from '../../kinds/gateway/normalize.ts';
import { normalizeGatewayClass } from '../../kinds/gatewayclass/index.ts';
import { normalizeHttpRoute } from '../../kinds/httproute/normalize.ts';
import type { ClusterTrustBundleReader, GatewayRecord } from '../../model/gateway-api.ts';
import { modelOf, OPTS, slice, svc } from '../fixtures.test-helpers.ts';
import { makeCa } from '../pki.test-helpers.ts';
import { translate } from '../translate.ts';
import { gatewayApiStateAnew, listenerHost, type GatewayApiOptions, type ListenerState } from './attach.ts';
import { backendTlsState } from './backend-tls.ts';

const GA: GatewayApiOptions = { controllerName: 'portico.dev/gateway-controller', reservedPorts: [8080, 8443, 10246] };
const dir = mkdtempSync(path.join(tmpdir(), 'portico-ctb-'));
const CA_A = makeCa(dir, 'ca-a');
const CA_B = makeCa(dir, 'ca-b');

// The fake reader: bundles by name (a signer's bundle is named "<signer with / as :>:<name>").
const BUNDLES: Record<string, string> = {
  'corp-roots': CA_A.cert,
  'example.com:internal:v1': `${CA_A.cert}${CA_B.cert}`,
  empty: '  \n',
  'not-cert': '-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n',
};
const readBundle: ClusterTrustBundleReader = (name) => (BUNDLES[name] !== undefined ? { trustBundle: BUNDLES[name] } : undefined);
const noConfigMaps = () => undefined;

const obj = (kind: string, name: string, spec: unknown, ns = 'apps'): KubeObject =>
  ({ apiVersion: 'gateway.networking.k8s.io/v1', kind, metadata: { name, namespace: ns, uid: `uid-${name}`, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' }, spec }) as KubeObject;
const ctbRef = (name: string, extra: Record<string, unknown> = {}) => ({ group: 'certificates.k8s.io', kind: 'ClusterTrustBundle', name, ...extra });
const policy = (name: string, service: string, refs: unknown[], ns = 'apps') =>
  obj('BackendTLSPolicy', name, { targetRefs: [{ group: '', kind: 'Service', name: service }], validation: { hostname: 'abc.example.com', caCertificateRefs: refs } }, ns);

/** `read` null: no reader (the API server does not serve ClusterTrustBundles). */
const btls = (refs: unknown[], read: ClusterTrustBundleReader | null = readBundle) => {
  const r = normalizeBackendTlsPolicy(policy('p', 'tls', refs), noConfigMaps, undefined, read ?? undefined);
  assert.ok(r.ok, r.ok ? '' : r.reason);
  return { reasons: r.record.refProblems.map((p) => p.reason), text: r.record.refProblems.map((p) => p.message).join('; '), ca: r.record.caPem };
};

test('BackendTLSPolicy normalizer: a ClusterTrustBundle ref is read by name (any namespace), or says why it cannot be used; no reader (API not served) is InvalidKind', () => {
  const ok = btls([ctbRef('corp-roots')]);
  assert.deepEqual(ok.reasons, []);
  assert.equal(ok.ca?.trim(), CA_A.cert.trim());
  const signer = btls([ctbRef('example.com:internal:v1')]);
  assert.equal(signer.ca?.match(/BEGIN CERTIFICATE/g)?.length, 2, 'a signer\'s bundle (colons in its name) with two CAs');
  assert.deepEqual(btls([ctbRef('gone')]), { reasons: ['InvalidCACertificateRef'], text: 'spec.validation.caCertificateRefs.0: ClusterTrustBundle gone not found', ca: undefined });
  assert.match(btls([ctbRef('empty')]).text, /ClusterTrustBundle empty has no certificates \(spec\.trustBundle is empty\)/);
  assert.deepEqual(btls([ctbRef('not-cert')]).reasons, ['InvalidCACertificateRef']);
  assert.match(btls([ctbRef('not-cert')]).text, /ClusterTrustBundle not-cert: a certificate in the bundle does not parse/);
  const unserved = btls([ctbRef('corp-roots')], null);
  assert.deepEqual(unserved.reasons, ['InvalidKind']);
  assert.match(unserved.text, /the API server does not serve certificates\.k8s\.io\/ClusterTrustBundle/);
  assert.equal(unserved.ca, undefined);
  // Another group with the same kind is not a ClusterTrustBundle.
  assert.deepEqual(btls([{ group: 'example.com', kind: 'ClusterTrustBundle', name: 'corp-roots' }]).reasons, ['InvalidKind']);
  // Colons are a ClusterTrustBundle's only: a ConfigMap named so is refused by the schema.
  assert.equal(normalizeBackendTlsPolicy(policy('p', 'tls', [{ group: '', kind: 'ConfigMap', name: 'a:b' }]), noConfigMaps, undefined, readBundle).ok, false);
  // What it reads: the bundles by name (cluster-scoped), next to its ConfigMaps.
  assert.deepEqual(policyReads(policy('p', 'tls', [ctbRef('corp-roots'), ctbRef('gone'), { group: '', kind: 'ConfigMap', name: 'ca' }])), { secrets: [], configMaps: ['apps/ca'], clusterTrustBundles: ['corp-roots', 'gone'] });
  assert.equal(policyReads(policy('p', 'tls', [{ group: '', kind: 'ConfigMap', name: 'ca' }])).clusterTrustBundles, undefined);
});

test('BackendTLSPolicy translation: a policy with a bundle gets the bundle as trusted CA; a missing bundle: NoValidCACertificate, the backend answers 500', () => {
  const m = modelOf({
    services: [svc('tls', [{ port: 443, targetPort: 8443 }], 'apps'), svc('tls2', [{ port: 443, targetPort: 8443 }], 'apps')],
    slices: [slice('tls-1', 'tls', [{ port: 8443 }], [{ ip: '198.18.0.50' }], 'apps'), slice('tls2-1', 'tls2', [{ port: 8443 }], [{ ip: '198.18.0.51' }], 'apps')],
  });
  const c = normalizeGatewayClass({ metadata: { name: 'portico', uid: 'c', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { controllerName: GA.controllerName } } as never);
  assert.ok(c.ok);
  m.setCrd('GatewayClass', c.record);
  const gw = normalizeGateway(obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] }));
  assert.ok(gw.ok);
  m.setCrd('Gateway', gw.record);
  for (const [name, service, bundle] of [['good', 'tls', 'corp-roots'], ['broken', 'tls2', 'gone']] as const) {
    const o = policy(name, service, [ctbRef(bundle)]);
    const n = normalizeBackendTlsPolicy(o, noConfigMaps, undefined, readBundle);
    assert.ok(n.ok);
    m.setCrd('BackendTLSPolicy', n.record, policyReads(o));
  }
  const route = normalizeHttpRoute(obj('HTTPRoute', 'r', {
    parentRefs: [{ name: 'gw' }],
    rules: [
      { matches: [{ path: { type: 'Exact', value: '/good' } }], backendRefs: [{ name: 'tls', port: 443 }] },
      { matches: [{ path: { type: 'Exact', value: '/broken' } }], backendRefs: [{ name: 'tls2', port: 443 }] },
    ],
  }));
  assert.ok(route.ok);
  m.setCrd('HTTPRoute', route.record);
  assert.deepEqual(m.crdsUsingClusterTrustBundle('corp-roots'), ['BackendTLSPolicy/apps/good']);
  assert.deepEqual(m.crdsUsingClusterTrustBundle('gone'), ['BackendTLSPolicy/apps/broken'], 'a missing bundle is read too: its creation normalizes the policy again');
  const snap = m.snapshot();
  const st = backendTlsState(snap).policies;
  assert.deepEqual([st.get('apps/good')!.accepted.status, st.get('apps/good')!.resolvedRefs.status], ['True', 'True']);
  assert.deepEqual([st.get('apps/broken')!.accepted.reason, st.get('apps/broken')!.resolvedRefs.reason], ['NoValidCACertificate', 'InvalidCACertificateRef']);
  const port = gatewayApiStateAnew(snap, GA).gateways.get('apps/gw')!.listeners[0]!.podPort!;
  const r = translate(snap, { ...OPTS, gatewayApi: GA });
  const rules = r.config.data.routes[listenerHost(port, '_')]!.rules;
  const at = (p: string) => rules.find((x) => x.path === p)!.route;
  const profile = r.config.structure.profiles.find((p) => p.name === at('/good').profile)!;
  assert.deepEqual([profile.backendProtocol, profile.trustedCa?.trim()], ['HTTPS', CA_A.cert.trim()]);
  assert.equal(at('/broken').action, 'error', 'no usable CA: fails closed (500), never plain HTTP nor unverified');
});

const cert = { name: 'cert' };
const https = (name: string, port: number, hostname: string) => ({ name, port, protocol: 'HTTPS', hostname, tls: { certificateRefs: [cert] } });
/** `read` null: no reader (the API server does not serve ClusterTrustBundles). */
function gateway(spec: Record<string, unknown>, read: ClusterTrustBundleReader | null = readBundle, name = 'gw'): GatewayRecord {
  const r = normalizeGateway(obj('Gateway', name, { gatewayClassName: 'portico', ...spec }), noConfigMaps, read ?? undefined);
  assert.ok(r.ok, JSON.stringify(r));
  return r.record;
}
function modelWith(g: GatewayRecord): Model {
  const m = modelOf({});
  const c = normalizeGatewayClass({ metadata: { name: 'portico', uid: 'c', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { controllerName: GA.controllerName } } as never);
  assert.ok(c.ok);
  m.setCrd('GatewayClass', c.record);
  m.setSecret({ key: 'apps/cert', ok: true, cert: 'C', privateKey: 'K', hosts: [], notAfter: '2099-01-01T00:00:00.000Z', fingerprint: 'f' });
  m.setCrd('Gateway', g, gatewayReads(g));
  return m;
}
const listener = (m: Model, name: string): ListenerState => {
  const l = gatewayApiStateAnew(m.snapshot(), GA).gateways.get('apps/gw')?.listeners.find((x) => x.name === name);
  assert.ok(l, name);
  return l;
};
const conds = (l: ListenerState) => ({ accepted: [l.accepted.status, l.accepted.reason], resolvedRefs: [l.resolvedRefs.status, l.resolvedRefs.reason], programmed: l.programmed.status });

test('Gateway normalizer: a ClusterTrustBundle caCertificateRef is cluster-scoped (no namespace), read by name; the record reads it', () => {
  const g = gateway({
    tls: {
      frontend: {
        default: { validation: { caCertificateRefs: [ctbRef('corp-roots')] } },
        perPort: [
          { port: 7443, tls: { validation: { caCertificateRefs: [ctbRef('gone'), ctbRef('empty'), ctbRef('not-cert')] } } },
          { port: 8443, tls: { validation: { caCertificateRefs: [ctbRef('corp-roots', { namespace: 'apps' })] } } },
        ],
      },
    },
    listeners: [https('a', 443, 'a.example.com')],
  });
  const def = g.frontendTls!.default!.caCertificateRefs[0]!;
  assert.deepEqual([def.namespace, def.name, def.problem, def.kindProblem], ['', 'corp-roots', undefined, undefined]);
  assert.equal(def.ca?.trim(), CA_A.cert.trim());
  assert.deepEqual(
    g.frontendTls!.perPort[0]!.validation!.caCertificateRefs.slice(0, 2).map((r) => [r.name, r.ca === undefined, r.problem]),
    [
      ['gone', true, 'ClusterTrustBundle not found'],
      ['empty', true, 'the ClusterTrustBundle has no certificates (spec.trustBundle is empty)'],
    ],
  );
  const notCert = g.frontendTls!.perPort[0]!.validation!.caCertificateRefs[2]!;
  assert.equal(notCert.ca, undefined);
  assert.match(notCert.problem ?? '', /^spec\.trustBundle holds a certificate that cannot be read/, 'worded for a bundle, not a ConfigMap\'s ca.crt');
  assert.match(g.frontendTls!.perPort[1]!.validation!.caCertificateRefs[0]!.problem!, /cluster-scoped: the reference must not set a namespace/);
  assert.deepEqual(gatewayReads(g), { secrets: ['apps/cert'], clusterTrustBundles: ['corp-roots', 'empty', 'gone', 'not-cert'] });
  // No reader: the API server does not serve ClusterTrustBundles; nothing is read, the kind is the problem.
  const unserved = gateway({ tls: { frontend: { default: { validation: { caCertificateRefs: [ctbRef('corp-roots')] } } } }, listeners: [https('a', 443, 'a.example.com')] }, null);
  const u = unserved.frontendTls!.default!.caCertificateRefs[0]!;
  assert.deepEqual([u.ca, u.problem], [undefined, undefined]);
  assert.match(u.kindProblem ?? '', /does not serve certificates\.k8s\.io\/ClusterTrustBundle/);
});

test('Gateway attachment and translation: a bundle validates client certificates with no ReferenceGrant; a missing one refuses the listener (NoValidCACertificate); unserved: InvalidCACertificateKind', () => {
  const g = gateway({
    tls: {
      frontend: {
        default: { validation: { caCertificateRefs: [ctbRef('corp-roots')] } },
        perPort: [
          { port: 7443, tls: { validation: { caCertificateRefs: [ctbRef('gone')] } } },
          { port: 6443, tls: { validation: { caCertificateRefs: [ctbRef('gone'), ctbRef('example.com:internal:v1')] } } },
        ],
      },
    },
    listeners: [https('bundle', 443, 'a.example.com'), https('missing', 7443, 'b.example.com'), https('partial', 6443, 'c.example.com')],
  });
  const m = modelWith(g);
  const ok = listener(m, 'bundle');
  assert.deepEqual(conds(ok), { accepted: ['True', 'Accepted'], resolvedRefs: ['True', 'ResolvedRefs'], programmed: 'True' }, 'cluster-scoped: no ReferenceGrant asked');
  assert.deepEqual(ok.clientValidation?.sources, ['ClusterTrustBundle corp-roots']);
  assert.equal(ok.clientValidation?.ca.trim(), CA_A.cert.trim());
  const missing = listener(m, 'missing');
  assert.deepEqual(conds(missing), { accepted: ['False', 'NoValidCACertificate'], resolvedRefs: ['False', 'InvalidCACertificateRef'], programmed: 'False' });
  assert.match(missing.resolvedRefs.message, /caCertificateRef certificates\.k8s\.io\/ClusterTrustBundle gone: ClusterTrustBundle not found/);
  assert.equal(missing.usable, false, 'not served rather than served without the check');
  const partial = listener(m, 'partial');
  assert.deepEqual(conds(partial), { accepted: ['True', 'Accepted'], resolvedRefs: ['False', 'InvalidCACertificateRef'], programmed: 'True' });
  assert.match(partial.resolvedRefs.message, /the other CA certificates \(ClusterTrustBundle example\.com:internal:v1\) are used/);
  const clientAuth = translate(m.snapshot(), { ...OPTS, gatewayApi: GA }).config.data.clientAuth ?? {};
  assert.deepEqual(Object.keys(clientAuth).sort(), [`${ok.podPort}/_`, `${partial.podPort}/_`].sort(), 'the missing bundle\'s listener gets no entry: nginx does not serve it');
  const entry = clientAuth[`${ok.podPort}/_`]!;
  assert.ok(!('off' in entry), 'client certificates are checked');
  assert.equal('ca' in entry && entry.ca.trim(), CA_A.cert.trim());
  assert.match('source' in entry ? entry.source : '', /ClusterTrustBundle corp-roots/);

  const unserved = modelWith(gateway({ tls: { frontend: { default: { validation: { caCertificateRefs: [ctbRef('corp-roots')] } } } }, listeners: [https('bundle', 443, 'a.example.com')] }, null));
  const u = listener(unserved, 'bundle');
  assert.deepEqual(conds(u), { accepted: ['False', 'NoValidCACertificate'], resolvedRefs: ['False', 'InvalidCACertificateKind'], programmed: 'False' });
  assert.match(u.resolvedRefs.message, /does not serve certificates\.k8s\.io\/ClusterTrustBundle/);
  const ns = modelWith(gateway({ tls: { frontend: { default: { validation: { caCertificateRefs: [ctbRef('corp-roots', { namespace: 'apps' })] } } } }, listeners: [https('bundle', 443, 'a.example.com')] }));
  assert.deepEqual(conds(listener(ns, 'bundle')).resolvedRefs, ['False', 'InvalidCACertificateRef'], 'a namespace on a cluster-scoped reference is refused, not ignored');
});

test('the model indexes the bundles a record reads, and forgets them with the record', () => {
  const m = new Model();
  const g = gateway({ tls: { frontend: { default: { validation: { caCertificateRefs: [ctbRef('corp-roots')] } } } }, listeners: [https('a', 443, 'a.example.com')] });
  m.setCrd('Gateway', g, gatewayReads(g));
  assert.deepEqual(m.crdsUsingClusterTrustBundle('corp-roots'), ['Gateway/apps/gw']);
  const plain = gateway({ listeners: [https('a', 443, 'a.example.com')] });
  m.setCrd('Gateway', plain, gatewayReads(plain));
  assert.deepEqual(m.crdsUsingClusterTrustBundle('corp-roots'), [], 'no longer named');
  m.setCrd('Gateway', g, gatewayReads(g));
  m.deleteCrd('Gateway', g.key);
  assert.deepEqual(m.crdsUsingClusterTrustBundle('corp-roots'), []);
});
