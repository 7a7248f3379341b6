// Client certificates (auth-tls-*) in the translation: the host's handshake data (clientAuth) and the per-path
// client-cert plugin; one CA per host (the older Ingress wins, the younger one's paths fail closed); "ask for
// nothing" under a wildcard or "_" that asks; the ConfigMap's risk level; no reload; the wire form; incremental runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KubeObject } from '../../operator/kube/object.ts';
import { normalizeIngress } from '../model/normalize.ts';
import { clientCaId } from '../annotations/auth-tls.ts';
import { certificateBody } from '../nginx-driver/nginx/dynamic.ts';
import { diffConfig } from './diff.ts';
import { IncrementalTranslator } from './incremental.ts';
import { translate } from './translate.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from './fixtures.test-helpers.ts';

const N = 'nginx.ingress.kubernetes.io/';
const dir = mkdtempSync(path.join(tmpdir(), 'portico-authtls-tr-'));
function makeCa(name: string): string {
  const cert = path.join(dir, `${name}.crt`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', `/CN=${name}`, '-keyout', path.join(dir, `${name}.key`), '-out', cert], { stdio: 'ignore' });
  return readFileSync(cert, 'utf8');
}
const CA_A = makeCa('ca-a');
const CA_B = makeCa('ca-b');
const SECRETS: Record<string, string> = { 'default/ca-a': CA_A, 'default/ca-b': CA_B, 'default/ca-a-copy': CA_A };
const secrets = (k: string) => (SECRETS[k] ? { data: { 'ca.crt': Buffer.from(SECRETS[k] as string).toString('base64') } } : undefined);

const services = ['web', 'admin', 'api'].map((s) => svc(s, [{ name: 'http', port: 80 }]));
const slices = ['web', 'admin', 'api'].map((s, i) => slice(`${s}-1`, s, [{ name: 'http', port: 8080 }], [{ ip: `10.0.0.${i + 1}` }]));

/** A model of these Ingresses (their Secrets read as the reconciler would). */
function model(ingresses: KubeObject[]) {
  const m = modelOf({ services, slices });
  for (const i of ingresses) {
    const n = normalizeIngress(i, secrets);
    assert.ok(n.ok, n.ok ? '' : n.reason);
    m.setIngress(n.ingress);
  }
  return m;
}
const mtls = (secret: string, more: Record<string, string> = {}) => ({ [`${N}auth-tls-secret`]: secret, ...more });
const at = (host: string | undefined, p: string, service = 'web') => rule(host, [{ path: p, backend: svcRef(service, 80) }]);

test('auth-tls on an Ingress: its paths run the client-cert plugin, the host asks for certificates with the CA — no reload', () => {
  const open = translate(model([ing('api', { rules: [at('a.example', '/api', 'api')] })]).snapshot(), OPTS);
  const r = translate(model([ing('api', { rules: [at('a.example', '/api', 'api')] }, { annotations: mtls('ca-a', { [`${N}auth-tls-verify-depth`]: '2', [`${N}auth-tls-match-cn`]: 'CN=client1', [`${N}auth-tls-error-page`]: 'https://errors.example/cert', [`${N}auth-tls-pass-certificate-to-upstream`]: 'true' }) })]).snapshot(), OPTS);
  const rules = r.config.data.routes['a.example']?.rules ?? [];
  assert.deepEqual(rules.map((x) => [x.path, x.route.backendId, x.route.plugins]), [['/api', 'default_api_80', ['ing.default.api.mtls']]]);
  const ca = r.config.data.clientAuth?.['a.example'];
  assert.ok(ca && !('off' in ca));
  assert.equal(ca.depth, 2);
  assert.equal(ca.id, clientCaId(ca.ca, 2));
  assert.match(ca.source, /^default\/ca-a \(Ingress default\/api\)$/);
  assert.deepEqual(r.config.data.plugins['ing.default.api.mtls'], {
    name: 'default/api (annotations)', type: 'client-cert', verify: 'on', caId: ca.id, errorPage: 'https://errors.example/cert', passCertificate: true, matchCn: 'CN=client1',
  });
  assert.equal(r.events.filter((e) => e.type === 'Warning').length, 0, JSON.stringify(r.events));
  assert.equal(r.status.get('Ingress/default/api')?.programmed, true);
  // Data only: the same nginx.conf; the delta carries the host's CA and its routes.
  const d = diffConfig(open.config, r.config);
  assert.equal(d.reload, false);
  assert.deepEqual(Object.keys(d.delta.clientAuth.upsert), ['a.example']);
  assert.deepEqual(Object.keys(d.delta.routes.upsert), ['a.example']);
  // Back to no auth-tls: the host stops asking.
  assert.deepEqual(diffConfig(r.config, open.config).delta.clientAuth, { upsert: {}, remove: ['a.example'] });
  assert.equal(open.config.data.clientAuth, undefined);
});

test('scope: the handshake is per host, enforcement per path of the Ingress that sets it', () => {
  const r = translate(model([
    ing('public', { rules: [at('a.example', '/')] }, { created: '2026-01-01T00:00:00Z' }),
    ing('partners', { rules: [at('a.example', '/partners', 'api')] }, { created: '2026-02-01T00:00:00Z', annotations: mtls('ca-a') }),
  ]).snapshot(), OPTS);
  const byPath = Object.fromEntries((r.config.data.routes['a.example']?.rules ?? []).map((x) => [x.path, x.route.plugins ?? []]));
  assert.deepEqual(byPath, { '/partners': ['ing.default.partners.mtls'], '/': [] });
  assert.ok(r.config.data.clientAuth?.['a.example'], 'the host asks for certificates');
});

test('one CA per host: the older Ingress wins, the younger one\'s paths on that host fail closed with a Warning; the same CA is no conflict', () => {
  const r = translate(model([
    ing('first', { rules: [at('a.example', '/one', 'api')] }, { created: '2026-01-01T00:00:00Z', annotations: mtls('ca-a') }),
    ing('second', { rules: [at('a.example', '/two', 'admin'), at('b.example', '/two', 'admin')] }, { created: '2026-02-01T00:00:00Z', annotations: mtls('ca-b') }),
    ing('third', { rules: [at('a.example', '/three', 'web')] }, { created: '2026-03-01T00:00:00Z', annotations: mtls('ca-a-copy', { [`${N}auth-tls-verify-client`]: 'optional' }) }),
    ing('deeper', { rules: [at('a.example', '/four', 'web')] }, { created: '2026-04-01T00:00:00Z', annotations: mtls('ca-a', { [`${N}auth-tls-verify-depth`]: '3' }) }),
  ]).snapshot(), OPTS);
  const a = Object.fromEntries((r.config.data.routes['a.example']?.rules ?? []).map((x) => [x.path, x.route]));
  assert.equal(a['/one']?.backendId, 'default_api_80');
  assert.equal(a['/two']?.action, 'unavailable');
  assert.equal(a['/two']?.backendId, null);
  assert.equal(a['/two']?.plugins, undefined);
  assert.equal(a['/three']?.backendId, 'default_web_80', 'another Secret with the same CA, another mode: same handshake');
  assert.equal(a['/four']?.action, 'unavailable', 'the same CA with another depth is another handshake');
  const caA = r.config.data.clientAuth?.['a.example'];
  assert.ok(caA && !('off' in caA) && caA.source.startsWith('default/ca-a '));
  // On its own host the younger Ingress is alone: served, with its own CA.
  const b = r.config.data.routes['b.example']?.rules[0]?.route;
  assert.equal(b?.backendId, 'default_admin_80');
  const caB = r.config.data.clientAuth?.['b.example'];
  assert.ok(caB && !('off' in caB) && caB.source.startsWith('default/ca-b '));
  const w = r.events.filter((e) => e.reason === 'ClientCertificateConflict');
  assert.deepEqual(w.map((e) => e.ref).sort(), ['Ingress/default/deeper', 'Ingress/default/second']);
  assert.match(w.find((e) => e.ref === 'Ingress/default/second')?.message ?? '', /host a\.example asks for client certificates of the CA in Secret default\/ca-a .*Ingress default\/first, which is older.*names Secret default\/ca-b.*answer 503/);
  assert.match(w.find((e) => e.ref === 'Ingress/default/deeper')?.message ?? '', /depth 3 instead of 1/);
  assert.equal(r.events.filter((e) => e.reason === 'PluginUnavailable').length, 0, 'reported once');
  assert.match(r.status.get('Ingress/default/second')?.problems.join() ?? '', /one CA/);
});

test('verify-client off asks for nothing: no handshake CA, the plugin only sets ssl-client-verify NONE', () => {
  const r = translate(model([ing('a', { rules: [at('a.example', '/')] }, { annotations: mtls('ca-a', { [`${N}auth-tls-verify-client`]: 'off' }) })]).snapshot(), OPTS);
  assert.equal(r.config.data.clientAuth, undefined);
  assert.deepEqual(r.config.data.plugins['ing.default.a.mtls'], { name: 'default/a (annotations)', type: 'client-cert', verify: 'off', passCertificate: false });
});

test('a wildcard or "_" that asks: the hosts with routes of their own below it ask for nothing', () => {
  const r = translate(model([
    ing('wild', { rules: [at('*.w.example', '/')] }, { annotations: mtls('ca-a') }),
    ing('own', { rules: [at('own.w.example', '/'), at('x.example', '/')] }),
  ]).snapshot(), OPTS);
  assert.deepEqual(r.config.data.clientAuth?.['own.w.example'], { off: true });
  assert.equal(r.config.data.clientAuth?.['x.example'], undefined, 'not below anything that asks');
  const any = translate(model([
    ing('catchall', { rules: [at(undefined, '/')] }, { annotations: mtls('ca-a') }),
    ing('own', { rules: [at('own.example', '/'), at('*.w.example', '/'), at('y.w.example', '/')] }),
  ]).snapshot(), OPTS);
  const ca = any.config.data.clientAuth;
  assert.ok(ca?._ && !('off' in ca._));
  assert.deepEqual([ca['own.example'], ca['*.w.example'], ca['y.w.example']], [{ off: true }, { off: true }, undefined], 'below an "off" wildcard nothing more is needed');
});

test('the ConfigMap\'s annotations-risk-level refuses auth-tls-error-page / -match-cn (High): the whole group is refused and the Ingress fails closed', () => {
  const snap = model([ing('a', { rules: [at('a.example', '/')] }, { annotations: mtls('ca-a', { [`${N}auth-tls-match-cn`]: 'CN=x' }) })]).snapshot();
  const r = translate({ ...snap, global: { ...snap.global, annotationsRiskLevel: 'medium' } }, OPTS);
  const route = r.config.data.routes['a.example']?.rules[0]?.route;
  assert.equal(route?.action, 'unavailable');
  assert.equal(r.config.data.clientAuth, undefined);
  assert.equal(r.config.data.plugins['ing.default.a.mtls'], undefined);
  assert.ok(r.events.some((e) => e.reason === 'RiskyAnnotation' && e.message.includes('auth-tls-secret') && e.message.includes('belongs with')));
  assert.ok(r.events.some((e) => e.reason === 'UnsupportedAccessControl'));
});

test('the wire form: each CA once by id, hosts point at it, "-" asks for nothing, removals', () => {
  const r = translate(model([
    ing('wild', { rules: [at('*.w.example', '/'), at('a.example', '/')] }, { annotations: mtls('ca-a') }),
    ing('own', { rules: [at('own.w.example', '/')] }),
  ]).snapshot(), OPTS);
  const d = diffConfig(null, r.config).delta;
  const body = certificateBody(d.certificates, d.clientAuth);
  const ca = r.config.data.clientAuth?.['a.example'];
  assert.ok(ca && !('off' in ca));
  assert.deepEqual(body.clientHosts, { 'a.example': ca.id, '*.w.example': ca.id, 'own.w.example': '-' });
  assert.deepEqual(Object.keys(body.clientCas ?? {}), [ca.id]);
  assert.equal(body.clientCas?.[ca.id]?.depth, 1);
  assert.equal(body.clientCas?.[ca.id]?.ca, ca.ca);
  assert.deepEqual(body.clientRemove, []);
  assert.equal(certificateBody(d.certificates).clientHosts, undefined, 'nothing to send: no client part');
});

test('incremental: an unrelated change keeps the hosts\' CAs; with a wildcard that asks, the full translation runs', () => {
  const base = [
    ing('m', { rules: [at('a.example', '/')] }, { annotations: mtls('ca-a') }),
    ing('plain', { rules: [at('b.example', '/', 'admin')] }),
  ];
  const t = new IncrementalTranslator({ maxClosureShare: 1 });
  t.translate(model(base).snapshot(), OPTS, null);
  const changed = [base[0] as KubeObject, ing('plain', { rules: [at('b.example', '/', 'admin'), at('b.example', '/more', 'admin')] })];
  const snap = model(changed).snapshot();
  const inc = t.translate(snap, OPTS, new Set(['default/plain']));
  assert.equal(t.stats.scoped, 1, 'translated in part');
  assert.deepStrictEqual(inc.config.data.clientAuth, translate(snap, OPTS).config.data.clientAuth);
  assert.ok(inc.config.data.clientAuth?.['a.example']);

  const wild = [ing('w', { rules: [at('*.w.example', '/')] }, { annotations: mtls('ca-a') }), ing('plain', { rules: [at('b.example', '/', 'admin')] })];
  const t2 = new IncrementalTranslator({ maxClosureShare: 1 });
  t2.translate(model(wild).snapshot(), OPTS, null);
  const snap2 = model([wild[0] as KubeObject, ing('plain', { rules: [at('b.example', '/', 'admin'), at('own.w.example', '/', 'admin')] })]).snapshot();
  const inc2 = t2.translate(snap2, OPTS, new Set(['default/plain']));
  assert.equal(t2.stats.scoped, 0, 'full translation');
  assert.deepEqual(inc2.config.data.clientAuth?.['own.w.example'], { off: true });
});

test('tenant isolation: a conflict Event in one namespace never names a Secret of another (auth-tls CA, TLS section)', () => {
  const other = { 'team-a/ca-a': CA_A, 'team-b/ca-b': CA_B };
  const read = (k: string) => (other[k as keyof typeof other] ? { data: { 'ca.crt': Buffer.from(other[k as keyof typeof other]).toString('base64') } } : undefined);
  const m = modelOf({ services: [...services, ...services.map((s) => ({ ...s, metadata: { ...s.metadata, namespace: 'team-b' } }))], slices });
  for (const i of [
    ing('first', { rules: [at('a.example', '/one')], tls: [{ hosts: ['a.example'], secretName: 'a-private-cert' }] }, { ns: 'team-a', created: '2026-01-01T00:00:00Z', annotations: mtls('ca-a') }),
    ing('second', { rules: [at('a.example', '/two')], tls: [{ hosts: ['a.example'], secretName: 'b-cert' }] }, { ns: 'team-b', created: '2026-02-01T00:00:00Z', annotations: mtls('ca-b') }),
  ]) {
    const n = normalizeIngress(i, read);
    assert.ok(n.ok, n.ok ? '' : n.reason);
    m.setIngress(n.ingress);
  }
  const r = translate(m.snapshot(), OPTS);
  const toB = r.events.filter((e) => e.ref === 'Ingress/team-b/second');
  assert.ok(toB.some((e) => e.reason === 'ClientCertificateConflict'), JSON.stringify(toB));
  assert.ok(toB.some((e) => e.reason === 'TLSConflict'), JSON.stringify(toB));
  for (const e of toB) {
    assert.doesNotMatch(e.message, /team-a\/ca-a|ca-a\b|a-private-cert/, `${e.reason} names team-a's Secret: ${e.message}`);
  }
  assert.match(toB.find((e) => e.reason === 'ClientCertificateConflict')!.message, /Ingress team-a\/first/, 'the winner is still named');
});
