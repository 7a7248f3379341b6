// The translation of ingress-nginx's proxy-ssl-* annotations: the directive-profile settings a route gets (client
// certificate, verification, SNI, protocols, ciphers) and when it gets none (no proxy-ssl-secret, a plain-HTTP
// backend, an Upstream with tls settings, a canary); paths that fail closed (503) with a Warning when what is asked
// cannot be applied; an Upstream's tls winning with a Normal UpstreamOverrides event.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KubeObject } from '../../operator/kube/object.ts';
import type { Profile } from '../config/types.ts';
import { normalizeUpstream } from '../crds/normalize.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../model/global-config.ts';
import type { Model } from '../model/model.ts';
import { normalizeIngress } from '../model/normalize.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from './fixtures.test-helpers.ts';
import { issue, makeCa, proxySslData } from './pki.test-helpers.ts';
import { translate, type TranslateResult } from './translate.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'portico-pssl-tr-'));
const ca = makeCa(dir, 'test-ca');
const client = issue(dir, ca, 'client');
const SECRETS: Record<string, Record<string, string>> = { 'default/backend-tls': proxySslData({ client, ca }), 'default/client-only': proxySslData({ client }) };

const A = 'nginx.ingress.kubernetes.io/';
const HTTPS = { [`${A}backend-protocol`]: 'HTTPS', [`${A}proxy-ssl-secret`]: 'default/backend-tls' };

function model(): Model {
  return modelOf({
    services: [svc('api', [{ name: 'https', port: 443, targetPort: 8443 }])],
    slices: [slice('api-1', 'api', [{ name: 'https', port: 8443 }], [{ ip: '10.0.0.5' }])],
  });
}
function addIngress(m: Model, annotations: Record<string, string>, o: { name?: string; host?: string; created?: string; secrets?: Record<string, Record<string, string>> } = {}): void {
  const secrets = o.secrets ?? SECRETS;
  const r = normalizeIngress(ing(o.name ?? 'app', { rules: [rule(o.host ?? 'a.example.com', [{ path: '/', backend: svcRef('api', 443) }])] }, { annotations, ...(o.created ? { created: o.created } : {}) }), (k) => (secrets[k] ? { data: secrets[k] } : undefined));
  assert.ok(r.ok);
  m.setIngress(r.ingress);
}
const routeOf = (r: TranslateResult, host = 'a.example.com') => r.config.data.routes[host]?.rules[0]?.route;
const profileOf = (r: TranslateResult, host = 'a.example.com'): Profile | undefined => r.config.structure.profiles.find((p) => p.name === routeOf(r, host)?.profile);
const eventsOf = (r: TranslateResult, reason: string) => r.events.filter((e) => e.reason === reason);

test('defaults: the client certificate, TLSv1.2 TLSv1.3, DEFAULT ciphers, no verification and no SNI', () => {
  const m = model();
  addIngress(m, HTTPS);
  const r = translate(m.snapshot(), OPTS);
  const p = profileOf(r);
  assert.ok(p);
  assert.equal(p.backendProtocol, 'HTTPS');
  assert.deepEqual(p.sslCertificate, { cert: client.cert, key: m.ingress('default/app')?.proxySsl?.certificate?.key });
  assert.equal(p.sslProtocols, 'TLSv1.2 TLSv1.3');
  assert.equal(p.sslCiphers, 'DEFAULT');
  // ca.crt is there, but ingress-nginx verifies only with proxy-ssl-verify on (default off).
  assert.deepEqual([p.trustedCa, p.sslVerifyDepth, p.sslServerName, p.sslSni], [undefined, undefined, undefined, undefined]);
  assert.equal(routeOf(r)?.backendId, 'default_api_443');
  assert.deepEqual(r.events.filter((e) => e.type === 'Warning'), []);
  assert.equal(r.status.get('Ingress/default/app')?.programmed, true);
});

test('verify on: the CA, the depth (default 1) and the name (default <service>.<namespace>.svc) verified; SNI only with server-name on', () => {
  const cases: [Record<string, string>, Partial<Profile>][] = [
    [{ [`${A}proxy-ssl-verify`]: 'on' }, { trustedCa: ca.cert, sslVerifyDepth: 1, sslServerName: 'api.default.svc', sslSni: false }],
    [{ [`${A}proxy-ssl-verify`]: 'on', [`${A}proxy-ssl-verify-depth`]: '0' }, { trustedCa: ca.cert, sslVerifyDepth: 1, sslServerName: 'api.default.svc', sslSni: false }],
    [{ [`${A}proxy-ssl-verify`]: 'on', [`${A}proxy-ssl-verify-depth`]: '3', [`${A}proxy-ssl-name`]: 'Backend.Internal', [`${A}proxy-ssl-server-name`]: 'on' }, { trustedCa: ca.cert, sslVerifyDepth: 3, sslServerName: 'backend.internal', sslSni: undefined }],
    [{ [`${A}proxy-ssl-server-name`]: 'on' }, { trustedCa: undefined, sslVerifyDepth: undefined, sslServerName: 'api.default.svc', sslSni: undefined }],
    [{ [`${A}proxy-ssl-server-name`]: 'on', [`${A}proxy-ssl-name`]: 'backend.internal' }, { trustedCa: undefined, sslServerName: 'backend.internal', sslSni: undefined }],
    // The name alone (verify off, SNI off) is used for nothing: not in the profile.
    [{ [`${A}proxy-ssl-name`]: 'backend.internal' }, { trustedCa: undefined, sslServerName: undefined, sslSni: undefined }],
    [{ [`${A}proxy-ssl-protocols`]: 'TLSv1.3', [`${A}proxy-ssl-ciphers`]: 'HIGH:!aNULL' }, { sslProtocols: 'TLSv1.3', sslCiphers: 'HIGH:!aNULL' }],
  ];
  for (const [extra, want] of cases) {
    const m = model();
    addIngress(m, { ...HTTPS, ...extra });
    const p = profileOf(translate(m.snapshot(), OPTS));
    assert.ok(p, JSON.stringify(extra));
    for (const [k, v] of Object.entries(want)) assert.deepEqual(p[k as keyof Profile], v, `${JSON.stringify(extra)}: ${k}`);
  }
});

test('GRPCS gets the same settings; plain HTTP or GRPC backends and Ingresses without proxy-ssl-secret get none', () => {
  let m = model();
  addIngress(m, { ...HTTPS, [`${A}backend-protocol`]: 'GRPCS' });
  const grpcs = profileOf(translate(m.snapshot(), OPTS));
  assert.equal(grpcs?.backendProtocol, 'GRPCS');
  assert.ok(grpcs?.sslCertificate);
  for (const proto of ['HTTP', 'GRPC', 'AUTO_HTTP']) {
    m = model();
    addIngress(m, { ...HTTPS, [`${A}backend-protocol`]: proto });
    const p = profileOf(translate(m.snapshot(), OPTS));
    assert.equal(p?.sslCertificate, undefined, proto);
    assert.equal(p?.sslProtocols, undefined, proto);
  }
  // Without proxy-ssl-secret the others have no effect (as in ingress-nginx), and a Warning says so.
  m = model();
  addIngress(m, { [`${A}backend-protocol`]: 'HTTPS', [`${A}proxy-ssl-verify`]: 'on', [`${A}proxy-ssl-name`]: 'backend.internal' });
  const r = translate(m.snapshot(), OPTS);
  assert.deepEqual(profileOf(r), { name: profileOf(r)?.name, backendProtocol: 'HTTPS' });
  const w = eventsOf(r, 'InvalidConfiguration');
  assert.equal(w.length, 1);
  assert.match(w[0]?.message ?? '', /nginx\.ingress\.kubernetes\.io\/proxy-ssl-verify, nginx\.ingress\.kubernetes\.io\/proxy-ssl-name have no effect without nginx\.ingress\.kubernetes\.io\/proxy-ssl-secret/);
  assert.ok(routeOf(r)?.backendId, 'served as ingress-nginx serves it');
});

test('what cannot be applied as asked fails the Ingress\'s paths closed (503), with a Warning saying why', () => {
  const cases: [string, Record<string, string>, Record<string, Record<string, string>>, RegExp][] = [
    ['missing Secret', HTTPS, {}, /Secret default\/backend-tls \(proxy-ssl-secret\) not found/],
    ['bad PEM', HTTPS, { 'default/backend-tls': { 'tls.crt': Buffer.from('junk').toString('base64'), 'tls.key': Buffer.from(client.key).toString('base64') } }, /tls\.crt of Secret default\/backend-tls must hold only PEM certificates/],
    ['verify without ca.crt', { ...HTTPS, [`${A}proxy-ssl-secret`]: 'client-only', [`${A}proxy-ssl-verify`]: 'on' }, SECRETS, /proxy-ssl-verify is on but Secret default\/client-only has no ca\.crt/],
    ['another namespace', { ...HTTPS, [`${A}proxy-ssl-secret`]: 'other/backend-tls' }, SECRETS, /in another namespace/],
    ['an invalid value', { ...HTTPS, [`${A}proxy-ssl-protocols`]: 'SSLv3' }, SECRETS, /invalid nginx\.ingress\.kubernetes\.io\/proxy-ssl-protocols="SSLv3"/],
  ];
  for (const [what, annotations, secrets, why] of cases) {
    const m = model();
    addIngress(m, annotations, { secrets });
    const r = translate(m.snapshot(), OPTS);
    const route = routeOf(r);
    assert.equal(route?.action, 'unavailable', `${what}: 503`);
    assert.equal(route?.backendId, null, `${what}: never proxied`);
    assert.match(route?.closedReason ?? '', why, what);
    const w = eventsOf(r, 'BackendTLSUnavailable');
    assert.equal(w.length, 1, what);
    assert.equal(w[0]?.type, 'Warning');
    assert.match(w[0]?.message ?? '', why, what);
    assert.match(w[0]?.message ?? '', /failing closed: every path of this Ingress answers 503/, what);
    assert.equal(eventsOf(r, 'PluginUnavailable').length, 0, `${what}: one Warning, not two`);
    assert.equal(r.status.get('Ingress/default/app')?.programmed, false, what);
    assert.ok(!r.config.structure.profiles.some((p) => p.sslCertificate), `${what}: no client certificate anywhere`);
  }
  // Even with a plain-HTTP backend: ingress-nginx denies the location (503) when the Secret cannot be read.
  let m = model();
  addIngress(m, { [`${A}proxy-ssl-secret`]: 'default/backend-tls' }, { secrets: {} });
  assert.equal(routeOf(translate(m.snapshot(), OPTS))?.action, 'unavailable');
  // With access control that cannot be applied too: each reason has its own Warning, no third one.
  m = model();
  addIngress(m, { ...HTTPS, [`${A}auth-type`]: 'digest' }, { secrets: {} });
  const r = translate(m.snapshot(), OPTS);
  assert.deepEqual(r.events.filter((e) => e.type === 'Warning').map((e) => e.reason).sort(), ['BackendTLSUnavailable', 'UnsupportedAccessControl']);
});

test('the ConfigMap\'s annotations-risk-level refusing a proxy-ssl-* annotation fails the paths closed, never weaker TLS', () => {
  const m = model();
  m.setGlobalConfig(parseGlobalConfig({ 'annotations-risk-level': 'Medium' }, defaultGlobalConfig()).values);
  addIngress(m, { ...HTTPS, [`${A}proxy-ssl-verify`]: 'on', [`${A}proxy-ssl-name`]: 'backend.internal' });
  let r = translate(m.snapshot(), OPTS);
  assert.equal(routeOf(r)?.action, 'unavailable');
  assert.match(eventsOf(r, 'BackendTLSUnavailable')[0]?.message ?? '', /nginx\.ingress\.kubernetes\.io\/proxy-ssl-name is refused by the ConfigMap's annotations-risk-level/);
  assert.match(eventsOf(r, 'RiskyAnnotation')[0]?.message ?? '', /proxy-ssl-name \(risk High\)/);
  // At High (the default) it applies.
  m.setGlobalConfig(defaultGlobalConfig());
  r = translate(m.snapshot(), OPTS);
  assert.equal(profileOf(r)?.sslServerName, 'backend.internal');
});

const cr = (kind: string, name: string, spec: unknown): KubeObject =>
  ({ apiVersion: 'portico.dev/v1alpha1', kind, metadata: { name, namespace: 'default', uid: `u-${name}`, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' }, spec }) as KubeObject;

test('an Upstream with tls settings for the Service wins over proxy-ssl-* (a Normal UpstreamOverrides event); without tls it does not', () => {
  const m = model();
  const up = normalizeUpstream(cr('Upstream', 'api', { service: { name: 'api' }, protocol: 'HTTPS', tls: { serverName: 'api.internal' } }));
  assert.ok(up.ok);
  m.setCrd('Upstream', up.record);
  addIngress(m, { ...HTTPS, [`${A}proxy-ssl-verify`]: 'on', [`${A}proxy-ssl-server-name`]: 'on', [`${A}proxy-ssl-name`]: 'backend.internal' });
  let r = translate(m.snapshot(), OPTS);
  let p = profileOf(r);
  assert.equal(p?.sslServerName, 'api.internal', 'the Upstream\'s name');
  assert.deepEqual([p?.sslCertificate, p?.trustedCa, p?.sslProtocols, p?.sslSni], [undefined, undefined, undefined, undefined]);
  const over = eventsOf(r, 'UpstreamOverrides');
  assert.equal(over.length, 1);
  assert.equal(over[0]?.type, 'Normal');
  assert.match(over[0]?.message ?? '', /Upstream default\/api sets the TLS to service backend default_api_443; this Ingress's proxy-ssl-\* annotations do not apply to it/);
  // A second Ingress on the same backend is told too.
  addIngress(m, HTTPS, { name: 'app2', host: 'b.example.com', created: '2026-02-01T00:00:00Z' });
  r = translate(m.snapshot(), OPTS);
  assert.deepEqual(eventsOf(r, 'UpstreamOverrides').map((e) => e.ref).sort(), ['Ingress/default/app', 'Ingress/default/app2']);
  // An Upstream speaking HTTPS without tls settings leaves backend TLS to the annotations.
  const plain = normalizeUpstream(cr('Upstream', 'api', { service: { name: 'api' }, protocol: 'HTTPS' }));
  assert.ok(plain.ok);
  m.setCrd('Upstream', plain.record);
  r = translate(m.snapshot(), OPTS);
  p = profileOf(r);
  assert.equal(p?.sslServerName, 'backend.internal');
  assert.equal(p?.trustedCa, ca.cert);
  assert.ok(p?.sslCertificate);
  assert.equal(eventsOf(r, 'UpstreamOverrides').length, 0);
  // An Upstream that speaks plain HTTP to the Service: nothing to apply TLS to.
  const http = normalizeUpstream(cr('Upstream', 'api', { service: { name: 'api' } }));
  assert.ok(http.ok);
  m.setCrd('Upstream', http.record);
  p = profileOf(translate(m.snapshot(), OPTS));
  assert.equal(p?.sslCertificate, undefined);
});

test('Ingresses with the same proxy-ssl settings share one profile; another certificate is another profile', () => {
  const other = issue(dir, ca, 'client-2');
  const m = model();
  addIngress(m, HTTPS, { name: 'a', host: 'a.example.com' });
  addIngress(m, HTTPS, { name: 'b', host: 'b.example.com' });
  addIngress(m, { ...HTTPS, [`${A}proxy-ssl-secret`]: 'c-tls' }, { name: 'c', host: 'c.example.com', secrets: { 'default/c-tls': proxySslData({ client: other }) } });
  const r = translate(m.snapshot(), OPTS);
  assert.equal(routeOf(r, 'a.example.com')?.profile, routeOf(r, 'b.example.com')?.profile);
  assert.notEqual(routeOf(r, 'a.example.com')?.profile, routeOf(r, 'c.example.com')?.profile);
  assert.equal(r.config.structure.profiles.length, 2);
});
