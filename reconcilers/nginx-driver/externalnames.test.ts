// The gateway's side of auth-url / mirror-target hosts (issue 19): what a host name resolves to is filtered like an
// ExternalName's, and — while the ConfigMap's allow-cross-namespace-auth is off — a Service's cluster IP is refused
// too (an alias, a short name through the search path, a custom cluster domain would otherwise reach another
// namespace's Service), with a Warning on each Ingress naming the host. Fake DNS; nothing is looked up for real.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../operator/log.ts';
import { ExternalNameResolver } from './resolver.ts';
import { resolveExternalNames } from './externalnames.ts';
import { translate } from '../translate/translate.ts';
import { forbiddenAddressReason } from '../values/addresses.ts';
import { ing, modelOf, OPTS, rule, slice, svc, svcRef } from '../translate/fixtures.test-helpers.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../model/global-config.ts';

const N = 'nginx.ingress.kubernetes.io/';
const app = (name: string, annotations: Record<string, string>) =>
  ing(name, { rules: [rule(`${name}.example`, [{ path: '/', backend: svcRef('web', 80) }])] }, { ns: 'team', annotations: Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${N}${k}`, v])) });

async function run(config: Record<string, string>, answers: Record<string, string[]>) {
  const m = modelOf({
    services: [svc('web', [{ name: 'http', port: 80 }], 'team'), svc('web', [{ name: 'http', port: 8080 }], 'victim', { clusterIP: '198.19.2.2' })],
    slices: [slice('web-1', 'web', [{ name: 'http', port: 8080 }], [{ ip: '10.0.0.1' }], 'team')],
    ingresses: [app('alias', { 'auth-url': 'http://web.victim:8080/verify' }), app('mixed', { 'mirror-target': 'http://mixed.example.net/copy' }), app('evil', { 'auth-url': 'http://evil.example.net/' })],
  });
  m.setGlobalConfig(parseGlobalConfig(config, defaultGlobalConfig()).values);
  const desired = translate(m.snapshot(), OPTS).config;
  const resolver = new ExternalNameResolver(() => {}, createLogger('error'), { refuse: (a) => forbiddenAddressReason(a), lookup: async (n) => answers[n] ?? [] });
  resolveExternalNames(desired, resolver, m); // starts the lookups
  await resolver.settle();
  const events = resolveExternalNames(desired, resolver, m);
  resolver.stop();
  return { backends: desired.data.backends, events };
}

const answers = { 'web.victim': ['198.19.2.2'], 'mixed.example.net': ['198.19.2.2', '192.0.2.50'], 'evil.example.net': ['169.254.169.254'] };

test("an auth-url host resolving to another Service's cluster IP is refused with a Warning naming the Service; other addresses stay", async () => {
  const { backends, events } = await run({}, answers);
  const alias = backends['extauth.web.victim.8080'];
  assert.deepEqual(alias?.endpoints, []);
  assert.match(alias?.unavailableReason ?? '', /198\.19\.2\.2: the cluster IP of Service victim\/web/);
  const w = events.find((e) => e.ref === 'Ingress/team/alias' && e.reason === 'ForbiddenEndpoint');
  assert.equal(w?.type, 'Warning');
  assert.match(w?.message ?? '', /auth-url \/ mirror-target host web\.victim resolves to 198\.19\.2\.2 \(the cluster IP of Service victim\/web .*\); Portico never proxies there, so the auth subrequest fails/);
  assert.deepEqual(backends['extauth.mixed.example.net.80']?.endpoints.map((e) => e.address), ['192.0.2.50'], 'the external address is kept');
  assert.ok(events.some((e) => e.ref === 'Ingress/team/mixed' && /198\.19\.2\.2/.test(e.message)));
  // Addresses no tenant may reach were refused before, silently for auth hosts; now the Ingress hears why.
  assert.match(events.find((e) => e.ref === 'Ingress/team/evil')?.message ?? '', /169\.254\.169\.254 \(a link-local address/);
});

test('with allow-cross-namespace-auth: "true" a host may resolve to a cluster IP (the loopback/link-local filter stays)', async () => {
  const { backends, events } = await run({ 'allow-cross-namespace-auth': 'true' }, answers);
  assert.deepEqual(backends['extauth.web.victim.8080']?.endpoints.map((e) => e.address), ['198.19.2.2']);
  assert.equal(events.some((e) => e.ref === 'Ingress/team/alias'), false);
  assert.deepEqual(backends['extauth.evil.example.net.80']?.endpoints, []);
});
