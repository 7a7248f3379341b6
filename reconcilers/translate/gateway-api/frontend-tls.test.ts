// Gateway spec.tls.frontend (client certificates of HTTPS listeners): the normalizer reading the CA ConfigMaps, the
// attachment's listener conditions (per-port validation replacing the default; bad references, their kind, a missing
// ReferenceGrant), the Gateway's InsecureFrontendValidationMode, and the translation's "<pod port>/_" clientAuth
// entries. The conformance tests GatewayFrontendClientCertificateValidation{,InsecureFallback},
// GatewayInvalidFrontendClientCertificateValidation and GatewayFrontendInvalidDefaultClientCertificateValidation are
// the model for the objects. No cluster, no nginx (gateway-client-cert.nginx.test.ts serves them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { Model } from '../../model/model.ts';
import { gatewayReads, normalizeGateway } from '../../kinds/gateway/normalize.ts';
import { normalizeGatewayClass } from '../../kinds/gatewayclass/index.ts';
import { normalizeReferenceGrant } from '../../kinds/referencegrant/index.ts';
import type { GatewayRecord } from '../../model/gateway-api.ts';
import { modelOf, OPTS } from '../fixtures.test-helpers.ts';
import { makeCa } from '../pki.test-helpers.ts';
import { translate } from '../translate.ts';
import { gatewayApiStateAnew, type GatewayApiOptions, type ListenerState } from './attach.ts';
import { GATEWAY_CLIENT_VERIFY_DEPTH, gatewayClientCaId } from './certificates.ts';

const GA: GatewayApiOptions = { controllerName: 'portico.dev/gateway-controller', reservedPorts: [8080, 8443, 10246] };
const dir = mkdtempSync(path.join(tmpdir(), 'portico-fcv-'));
const CA_A = makeCa(dir, 'ca-a');
const CA_B = makeCa(dir, 'ca-b');

const obj = (kind: string, name: string, spec: unknown, ns = 'infra'): KubeObject =>
  ({ apiVersion: 'gateway.networking.k8s.io/v1', kind, metadata: { name, namespace: ns, uid: `uid-${name}`, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' }, spec }) as KubeObject;

const CONFIGMAPS: Record<string, Record<string, string>> = {
  'infra/ca-a': { 'ca.crt': CA_A.cert },
  'infra/ca-b': { 'ca.crt': CA_B.cert },
  'infra/no-key': { 'other.crt': CA_A.cert },
  'infra/not-pem': { 'ca.crt': 'hello' },
  'web/ca-web': { 'ca.crt': CA_B.cert },
};
const readCm = (k: string) => (CONFIGMAPS[k] ? { data: CONFIGMAPS[k] } : undefined);

const cmRef = (name: string, extra: Record<string, unknown> = {}) => ({ group: '', kind: 'ConfigMap', name, ...extra });
const https = (name: string, port: number, hostname?: string) => ({ name, port, protocol: 'HTTPS', ...(hostname ? { hostname } : {}), tls: { certificateRefs: [{ name: 'cert' }] } });

function gateway(name: string, spec: Record<string, unknown>): GatewayRecord {
  const r = normalizeGateway(obj('Gateway', name, { gatewayClassName: 'portico', ...spec }), readCm);
  assert.ok(r.ok, JSON.stringify(r));
  return r.record;
}

function modelWith(...gws: GatewayRecord[]): Model {
  const m = modelOf({});
  const c = normalizeGatewayClass({ metadata: { name: 'portico', uid: 'c', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { controllerName: GA.controllerName } } as never);
  assert.ok(c.ok);
  m.setCrd('GatewayClass', c.record);
  m.setSecret({ key: 'infra/cert', ok: true, cert: 'C', privateKey: 'K', hosts: [], notAfter: '2099-01-01T00:00:00.000Z', fingerprint: 'f' });
  for (const g of gws) m.setCrd('Gateway', g, gatewayReads(g));
  return m;
}

const listener = (m: Model, gw: string, name: string): ListenerState => {
  const l = gatewayApiStateAnew(m.snapshot(), GA).gateways.get(`infra/${gw}`)?.listeners.find((x) => x.name === name);
  assert.ok(l, `listener ${gw}/${name}`);
  return l;
};
const conds = (l: ListenerState) => ({ accepted: [l.accepted.status, l.accepted.reason], resolvedRefs: [l.resolvedRefs.status, l.resolvedRefs.reason], programmed: l.programmed.status });

test('normalize: each ConfigMap caCertificateRef is read (ca.crt, re-encoded) or says why not; other kinds are left to the attachment; the record reads the ConfigMaps', () => {
  const g = gateway('gw', {
    tls: {
      frontend: {
        default: { validation: { caCertificateRefs: [cmRef('ca-a')] } },
        perPort: [
          { port: 7443, tls: { validation: { caCertificateRefs: [cmRef('missing'), cmRef('no-key'), cmRef('not-pem')] } } },
          { port: 8443, tls: { validation: { mode: 'AllowInsecureFallback', caCertificateRefs: [{ group: '', kind: 'Service', name: 'svc' }, cmRef('ca-web', { namespace: 'web' })] } } },
          { port: 9443, tls: {} },
        ],
      },
    },
    listeners: [https('https', 443)],
  });
  const ft = g.frontendTls!;
  assert.equal(ft.default?.mode, 'AllowValidOnly', 'the mode defaults to AllowValidOnly');
  assert.match(ft.default!.caCertificateRefs[0]!.ca!, /^-----BEGIN CERTIFICATE-----\n/);
  assert.deepEqual(
    ft.perPort[0]!.validation!.caCertificateRefs.map((r) => [r.name, r.ca === undefined, r.problem]),
    [
      ['missing', true, 'ConfigMap not found'],
      ['no-key', true, 'the ConfigMap has no key ca.crt'],
      ['not-pem', true, 'ca.crt must hold only PEM certificates'],
    ],
  );
  const p8443 = ft.perPort[1]!.validation!;
  assert.equal(p8443.mode, 'AllowInsecureFallback');
  assert.deepEqual([p8443.caCertificateRefs[0]!.ca, p8443.caCertificateRefs[0]!.problem], [undefined, undefined], 'a Service is not read: the attachment refuses its kind');
  assert.equal(p8443.caCertificateRefs[1]!.namespace, 'web');
  assert.deepEqual(ft.perPort[2], { port: 9443 }, 'a port without validation: none there, the default does not apply');
  assert.deepEqual(gatewayReads(g).configMaps, ['infra/ca-a', 'infra/missing', 'infra/no-key', 'infra/not-pem', 'web/ca-web']);
  // A mode the API does not know, and a port given twice, are refused.
  assert.equal(normalizeGateway(obj('Gateway', 'bad', { gatewayClassName: 'portico', listeners: [https('h', 443)], tls: { frontend: { default: { validation: { mode: 'Sometimes', caCertificateRefs: [cmRef('ca-a')] } } } } }), readCm).ok, false);
  const twice = { port: 443, tls: { validation: { caCertificateRefs: [cmRef('ca-a')] } } };
  assert.equal(normalizeGateway(obj('Gateway', 'bad', { gatewayClassName: 'portico', listeners: [https('h', 443)], tls: { frontend: { default: {}, perPort: [twice, twice] } } }), readCm).ok, false);
});

test('per-port validation replaces the default; HTTP listeners are untouched; the translation asks on each HTTPS pod port, strict for AllowValidOnly', () => {
  const g = gateway('client-validation-default', {
    tls: { frontend: { default: { validation: { caCertificateRefs: [cmRef('ca-a')] } }, perPort: [{ port: 8443, tls: { validation: { caCertificateRefs: [cmRef('ca-b')] } } }, { port: 80, tls: { validation: { caCertificateRefs: [cmRef('missing')] } } }] } },
    listeners: [https('https', 443), https('https-with-hostname', 8443, 'second-example.org'), { name: 'http', port: 80, protocol: 'HTTP' }],
  });
  const m = modelWith(g);
  const l443 = listener(m, g.name, 'https');
  const l8443 = listener(m, g.name, 'https-with-hostname');
  const l80 = listener(m, g.name, 'http');
  for (const l of [l443, l8443, l80]) assert.deepEqual(conds(l), { accepted: ['True', 'Accepted'], resolvedRefs: ['True', 'ResolvedRefs'], programmed: 'True' }, l.name);
  assert.equal(l443.clientValidation?.ca, CONFIGMAPS['infra/ca-a']!['ca.crt']!.trim() + '\n');
  assert.equal(l8443.clientValidation?.ca, CONFIGMAPS['infra/ca-b']!['ca.crt']!.trim() + '\n');
  assert.equal(l80.clientValidation, undefined, 'HTTP listeners validate nothing (their port\'s entry is ignored)');
  assert.equal(gatewayApiStateAnew(m.snapshot(), GA).gateways.get(`infra/${g.name}`)?.insecureFrontend, undefined);

  const ca = translate(m.snapshot(), { ...OPTS, gatewayApi: GA }).config.data.clientAuth ?? {};
  assert.deepEqual(Object.keys(ca).sort(), [`${l443.podPort}/_`, `${l8443.podPort}/_`].sort(), 'one entry per HTTPS pod port, none for the HTTP one');
  const e443 = ca[`${l443.podPort}/_`];
  assert.ok(e443 && 'id' in e443);
  assert.deepEqual({ ...e443, ca: e443.ca.length > 0 }, { id: gatewayClientCaId(l443.clientValidation!.ca, true), ca: true, depth: GATEWAY_CLIENT_VERIFY_DEPTH, source: `Gateway infra/${g.name} port 443: infra/ca-a`, strict: true });
  const e8443 = ca[`${l8443.podPort}/_`];
  assert.ok(e8443 && 'id' in e8443 && e8443.ca === l8443.clientValidation!.ca && e8443.strict === true);
});

test('AllowInsecureFallback: asked for, not required (no strict), another id than AllowValidOnly with the same CA; the Gateway says InsecureFrontendValidationMode', () => {
  const g = gateway('client-validation-insecure-fallback', {
    tls: { frontend: { default: { validation: { mode: 'AllowInsecureFallback', caCertificateRefs: [cmRef('ca-a')] } }, perPort: [{ port: 8443, tls: { validation: { mode: 'AllowInsecureFallback', caCertificateRefs: [cmRef('ca-b')] } } }] } },
    listeners: [https('https', 443), https('https-with-hostname', 8443, 'second-example.org')],
  });
  const m = modelWith(g);
  const st = gatewayApiStateAnew(m.snapshot(), GA).gateways.get(`infra/${g.name}`)!;
  assert.deepEqual([st.insecureFrontend?.status, st.insecureFrontend?.reason], ['True', 'ConfigurationChanged']);
  assert.match(st.insecureFrontend!.message, /the default and port 8443/);
  const l443 = listener(m, g.name, 'https');
  const e = translate(m.snapshot(), { ...OPTS, gatewayApi: GA }).config.data.clientAuth?.[`${l443.podPort}/_`];
  assert.ok(e && 'id' in e);
  assert.equal(e.strict, undefined);
  assert.equal(e.id, gatewayClientCaId(e.ca, false));
  assert.notEqual(gatewayClientCaId(e.ca, false), gatewayClientCaId(e.ca, true), 'a session made without a certificate is never resumed where one is required');
});

test('bad caCertificateRefs affect only the listeners of their port: InvalidCACertificateRef, InvalidCACertificateKind, RefNotPermitted; none usable → NoValidCACertificate, not served', () => {
  const g = gateway('gateway-with-invalid-client-cert-validation', {
    tls: {
      frontend: {
        default: { validation: { caCertificateRefs: [cmRef('ca-a')] } },
        perPort: [
          { port: 7443, tls: { validation: { caCertificateRefs: [cmRef('non-exisitng-cm')] } } },
          { port: 8443, tls: { validation: { caCertificateRefs: [{ group: '', kind: 'Service', name: 'infra-backend-v2' }] } } },
          { port: 6443, tls: { validation: { caCertificateRefs: [cmRef('ca-web', { namespace: 'web' })] } } },
        ],
      },
    },
    listeners: [https('https', 443), https('https-unresolved', 7443, 'first-example.org'), https('https-invalid-kind', 8443, 'second-example.org'), https('https-grant-missing', 6443, 'fourth-example.org')],
  });
  const m = modelWith(g);
  assert.deepEqual(conds(listener(m, g.name, 'https')), { accepted: ['True', 'Accepted'], resolvedRefs: ['True', 'ResolvedRefs'], programmed: 'True' });
  const bad = { programmed: 'False' };
  assert.deepEqual(conds(listener(m, g.name, 'https-unresolved')), { accepted: ['False', 'NoValidCACertificate'], resolvedRefs: ['False', 'InvalidCACertificateRef'], ...bad });
  assert.match(listener(m, g.name, 'https-unresolved').resolvedRefs.message, /caCertificateRef core\/ConfigMap infra\/non-exisitng-cm: ConfigMap not found/);
  assert.deepEqual(conds(listener(m, g.name, 'https-invalid-kind')), { accepted: ['False', 'NoValidCACertificate'], resolvedRefs: ['False', 'InvalidCACertificateKind'], ...bad });
  assert.match(listener(m, g.name, 'https-invalid-kind').resolvedRefs.message, /core\/Service infra\/infra-backend-v2: only core ConfigMaps/);
  assert.deepEqual(conds(listener(m, g.name, 'https-grant-missing')), { accepted: ['False', 'NoValidCACertificate'], resolvedRefs: ['False', 'RefNotPermitted'], ...bad });
  for (const n of ['https-unresolved', 'https-invalid-kind', 'https-grant-missing']) {
    const l = listener(m, g.name, n);
    assert.equal(l.usable, false, `${n} is not served`);
    assert.equal(l.podPort, undefined, `${n}: no pod port, nginx does not listen for it`);
  }
  const st = gatewayApiStateAnew(m.snapshot(), GA).gateways.get(`infra/${g.name}`)!;
  assert.deepEqual([st.accepted.status, st.accepted.reason], ['True', 'ListenersNotValid'], 'the Gateway still serves its valid listener');
  const ca = translate(m.snapshot(), { ...OPTS, gatewayApi: GA }).config.data.clientAuth ?? {};
  assert.deepEqual(Object.keys(ca), [`${listener(m, g.name, 'https').podPort}/_`]);

  // A ReferenceGrant in "web" for Gateways of "infra" to ConfigMaps lets the cross-namespace CA in.
  const grant = normalizeReferenceGrant(obj('ReferenceGrant', 'cas', { from: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra' }], to: [{ group: '', kind: 'ConfigMap' }] }, 'web'));
  assert.ok(grant.ok);
  m.setCrd('ReferenceGrant', grant.record);
  const granted = listener(m, g.name, 'https-grant-missing');
  assert.deepEqual(conds(granted), { accepted: ['True', 'Accepted'], resolvedRefs: ['True', 'ResolvedRefs'], programmed: 'True' });
  assert.equal(granted.clientValidation?.sources.join(), 'web/ca-web');
});

test('an invalid default refuses the HTTPS listener only; one bad ref among good ones: ResolvedRefs False, served with the good CA', () => {
  const g = gateway('invalid-default-client-validation-config', {
    tls: { frontend: { default: { validation: { caCertificateRefs: [cmRef('does-not-exist')] } }, perPort: [{ port: 80, tls: { validation: { caCertificateRefs: [cmRef('ca-b')] } } }] } },
    listeners: [https('https', 443), { name: 'http', port: 80, protocol: 'HTTP' }],
  });
  const partial = gateway('partial', { tls: { frontend: { default: { validation: { caCertificateRefs: [cmRef('does-not-exist'), cmRef('ca-a')] } } } }, listeners: [https('https', 443)] });
  const m = modelWith(g, partial);
  assert.deepEqual(conds(listener(m, g.name, 'http')), { accepted: ['True', 'Accepted'], resolvedRefs: ['True', 'ResolvedRefs'], programmed: 'True' });
  assert.deepEqual(conds(listener(m, g.name, 'https')), { accepted: ['False', 'NoValidCACertificate'], resolvedRefs: ['False', 'InvalidCACertificateRef'], programmed: 'False' });
  const p = listener(m, partial.name, 'https');
  assert.deepEqual(conds(p), { accepted: ['True', 'Accepted'], resolvedRefs: ['False', 'InvalidCACertificateRef'], programmed: 'True' });
  assert.equal(p.usable, true);
  assert.deepEqual(p.clientValidation?.sources, ['infra/ca-a']);
  assert.match(p.resolvedRefs.message, /the other CA certificates \(infra\/ca-a\) are used/);
  const e = translate(m.snapshot(), { ...OPTS, gatewayApi: GA }).config.data.clientAuth?.[`${p.podPort}/_`];
  assert.ok(e && 'id' in e && e.strict === true && e.ca === p.clientValidation?.ca);
});
