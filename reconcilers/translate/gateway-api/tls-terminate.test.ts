// TLSRoutes on Terminate listeners (TLSRouteModeTerminate), Passthrough and Terminate listeners on one port
// (TLSRouteModeMixed) and BackendTLSPolicy on terminated TLSRoutes, pure: the listeners' conditions, the stream
// targets (which names are terminated, with which certificate, and with which TLS to the backends), the stream
// section's terminating hops, the rendered nginx.conf (checked by `nginx -t` with the files written as the gateway
// writes them), and the refusals: a certificate nginx could not load and a policy that cannot apply close their
// server names with a reason, never breaking the configuration. The conformance tests tlsroute-terminate-*,
// tlsroute-mixed-termination-* and backendtlspolicy-tlsroute-terminate are the model for the objects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { Model } from '../../model/model.ts';
import { normalizeBackendTlsPolicy, policyReads } from '../../kinds/backendtlspolicy/normalize.ts';
import { normalizeGateway } from '../../kinds/gateway/normalize.ts';
import { normalizeGatewayClass } from '../../kinds/gatewayclass/index.ts';
import { normalizeStreamRoute } from '../../kinds/tcproute/normalize.ts';
import { modelOf, OPTS, slice, svc } from '../fixtures.test-helpers.ts';
import { issue, makeCa } from '../pki.test-helpers.ts';
import { translate } from '../translate.ts';
import { structureChecksum } from '../diff.ts';
import { STREAM_MODULE, streamSection } from '../../nginx-driver/stream.ts';
import { gatewayTlsFiles, renderNginxConf, writeGatewayTlsFiles } from '../../nginx-driver/nginx/render.ts';
import { nginxTest, runtimeDir } from '../../nginx-driver/nginx/nginx-t.test-helpers.ts';
import { gatewayApiState, type GatewayApiOptions } from './attach.ts';
import { policyAncestors } from './backend-tls.ts';
import { gatewayStreams } from './streams.ts';

const GA: GatewayApiOptions = { controllerName: 'portico.dev/gateway-controller', reservedPorts: [8080, 8443, 10246] };
const dir = mkdtempSync(path.join(tmpdir(), 'portico-tlsterm-'));
const SERVER = issue(dir, makeCa(dir, 'server-ca'), 'server', ['tls.example.com', '*.example.org']);
const OTHER = issue(dir, makeCa(dir, 'other-ca'), 'other', ['other.example.net']);
const BACKEND_CA = makeCa(dir, 'backend-ca');
const readCm = (k: string) => (k === 'infra/ca' ? { data: { 'ca.crt': BACKEND_CA.cert } } : undefined);

let clock = 0;
const obj = (kind: string, name: string, spec: unknown, ns = 'infra'): KubeObject =>
  ({ apiVersion: 'gateway.networking.k8s.io/v1', kind, metadata: { name, namespace: ns, uid: `uid-${name}`, generation: 1, creationTimestamp: `2026-01-01T00:00:${String(clock++ % 60).padStart(2, '0')}Z` }, spec }) as KubeObject;

function put(m: Model, o: KubeObject): void {
  const n = o.kind === 'GatewayClass' ? normalizeGatewayClass(o) : o.kind === 'Gateway' ? normalizeGateway(o, readCm) : o.kind === 'TLSRoute' ? normalizeStreamRoute('TLSRoute', o) : normalizeBackendTlsPolicy(o, readCm);
  assert.ok(n.ok, `${o.kind} ${o.metadata.name}: ${n.ok ? '' : n.reason}`);
  m.setCrd(o.kind as 'BackendTLSPolicy', n.record as never, o.kind === 'BackendTLSPolicy' ? policyReads(o) : undefined);
}

const tlsRoute = (name: string, parent: Record<string, unknown>, hostnames: string[], backendRefs: unknown[]) => obj('TLSRoute', name, { parentRefs: [{ name: 'gw', ...parent }], hostnames, rules: [{ backendRefs }] });
const cert = (name: string) => ({ tls: { mode: 'Terminate', certificateRefs: [{ name }] } });

/** A Gateway with a Terminate port (8443), a Mixed port (8883) and a Terminate listener whose Secret is missing (9443). */
function base(): Model {
  clock = 0;
  const m = modelOf({
    services: [svc('tcp-backend', [{ name: 'plain', port: 3000 }, { name: 'tls', port: 8443 }], 'infra'), svc('btls-backend', [{ name: 'btls', port: 8443 }], 'infra'), svc('plain2', [{ name: 'plain', port: 3000 }], 'infra')],
    slices: [
      slice('tcp-1', 'tcp-backend', [{ name: 'plain', port: 3000 }, { name: 'tls', port: 8443 }], [{ ip: '198.18.0.60' }], 'infra'),
      slice('btls-1', 'btls-backend', [{ name: 'btls', port: 8443 }], [{ ip: '198.18.0.61' }], 'infra'),
      slice('plain2-1', 'plain2', [{ name: 'plain', port: 3000 }], [{ ip: '198.18.0.62' }], 'infra'),
    ],
  });
  put(m, obj('GatewayClass', 'portico', { controllerName: GA.controllerName }, undefined as never));
  put(
    m,
    obj('Gateway', 'gw', {
      gatewayClassName: 'portico',
      listeners: [
        { name: 'terminate', port: 8443, protocol: 'TLS', hostname: '*.example.org', ...cert('server') },
        { name: 'mixed-terminate', port: 8883, protocol: 'TLS', hostname: 'tls.example.com', ...cert('server') },
        { name: 'mixed-passthrough', port: 8883, protocol: 'TLS', hostname: 'abc.example.com', tls: { mode: 'Passthrough' } },
        { name: 'no-secret', port: 9443, protocol: 'TLS', hostname: 'x.example.com', ...cert('missing') },
      ],
    }),
  );
  m.setSecret({ key: 'infra/server', ok: true, cert: SERVER.cert, privateKey: SERVER.key, hosts: ['tls.example.com', '*.example.org'], notAfter: '2099-01-01T00:00:00.000Z', fingerprint: 'server' });
  return m;
}

const listeners = (m: Model) => gatewayApiState(m.snapshot(), GA).gateways.get('infra/gw')!.listeners;
const streamsOf = (m: Model) => translate(m.snapshot(), { ...OPTS, gatewayApi: GA }).config.structure.gatewayStreams ?? [];

test('listeners: Terminate is accepted with TLSRoute as its kind; Terminate and Passthrough share a port (Mixed, no conflict); a missing Secret is InvalidCertificateRef', () => {
  const m = base();
  const l = (name: string) => listeners(m).find((x) => x.name === name)!;
  for (const name of ['terminate', 'mixed-terminate', 'mixed-passthrough']) {
    assert.deepEqual([l(name).accepted.status, l(name).accepted.reason, l(name).resolvedRefs.status, l(name).conflicted.status, l(name).programmed.status], ['True', 'Accepted', 'True', 'False', 'True'], name);
    assert.deepEqual(l(name).supportedKinds, [{ group: 'gateway.networking.k8s.io', kind: 'TLSRoute' }], name);
  }
  assert.equal(l('mixed-terminate').podPort, l('mixed-passthrough').podPort, 'one pod port for both modes');
  assert.deepEqual(l('mixed-terminate').certificates, ['infra/server']);
  assert.deepEqual([l('no-secret').accepted.status, l('no-secret').resolvedRefs.reason, l('no-secret').programmed.status, l('no-secret').podPort], ['True', 'InvalidCertificateRef', 'False', undefined]);
  assert.match(l('no-secret').resolvedRefs.message, /infra\/missing: not found/);
});

test('stream targets: terminated names carry their listener\'s certificate, passthrough names none; a route on the Secret-less listener is counted but not served', () => {
  const m = base();
  put(m, tlsRoute('term', { sectionName: 'terminate' }, ['a.example.org'], [{ name: 'tcp-backend', port: 3000 }]));
  put(m, tlsRoute('mixed-term', {}, ['tls.example.com'], [{ name: 'tcp-backend', port: 3000 }]));
  put(m, tlsRoute('mixed-pass', {}, ['abc.example.com'], [{ name: 'tcp-backend', port: 8443 }]));
  put(m, tlsRoute('nowhere', { sectionName: 'no-secret' }, ['x.example.com'], [{ name: 'tcp-backend', port: 3000 }]));
  const ls = listeners(m);
  const port = (name: string) => ls.find((x) => x.name === name)!.podPort!;
  assert.equal(ls.find((x) => x.name === 'no-secret')!.attachedRoutes, 1);
  const streams = streamsOf(m);
  const mixed = streams.find((s) => s.port === port('mixed-terminate'))!;
  assert.deepEqual(mixed.targets.map((t) => [t.host, t.route, t.terminate]), [['abc.example.com', 'TLSRoute/infra/mixed-pass', undefined], ['tls.example.com', 'TLSRoute/infra/mixed-term', 0]]);
  assert.deepEqual(mixed.certificates, [{ source: 'infra/server', cert: SERVER.cert, key: SERVER.key }]);
  const term = streams.find((s) => s.port === port('terminate'))!;
  assert.deepEqual(term.targets.map((t) => [t.host, t.terminate, t.backendTls]), [['a.example.org', 0, undefined]]);
  assert.equal(streams.length, 2, 'the listener without its Secret has no pod port');
});

test('BackendTLSPolicy on a terminated TLSRoute: TLS again with the policy\'s hostname and CA; the policy\'s ancestor is the Gateway; passthrough names are left alone', () => {
  const m = base();
  put(m, obj('BackendTLSPolicy', 'btls', { targetRefs: [{ group: '', kind: 'Service', name: 'btls-backend', sectionName: 'btls' }], validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }], hostname: 'abc.example.com' } }));
  put(m, obj('BackendTLSPolicy', 'on-passthrough', { targetRefs: [{ group: '', kind: 'Service', name: 'tcp-backend', sectionName: 'tls' }], validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }], hostname: 'abc.example.com' } }));
  put(m, tlsRoute('term', { sectionName: 'terminate' }, ['a.example.org'], [{ name: 'btls-backend', port: 8443 }]));
  put(m, tlsRoute('mixed-pass', {}, ['abc.example.com'], [{ name: 'tcp-backend', port: 8443 }]));
  const streams = streamsOf(m);
  const t = streams.flatMap((s) => s.targets).find((x) => x.host === 'a.example.org')!;
  assert.deepEqual(t.backendTls, { policy: 'infra/btls', hostname: 'abc.example.com', ca: BACKEND_CA.cert });
  assert.deepEqual(t.backends.map((b) => b.ok), [true]);
  const pass = streams.flatMap((s) => s.targets).find((x) => x.host === 'abc.example.com')!;
  assert.equal(pass.backendTls, undefined, 'a passthrough name carries the client\'s own TLS');
  const anc = policyAncestors(m.snapshot(), gatewayApiState(m.snapshot(), GA));
  assert.deepEqual(anc.get('infra/btls'), ['infra/gw']);
  assert.equal(anc.get('infra/on-passthrough'), undefined, 'no terminated route uses it');
});

test('BackendTLSPolicy that cannot apply fails its share closed; backends of one name with different policies: the others\' share fails (MixedBackendTLS)', () => {
  const m = base();
  // subjectAltNames are not served: the policy holds but is not accepted.
  put(m, obj('BackendTLSPolicy', 'unusable', { targetRefs: [{ group: '', kind: 'Service', name: 'btls-backend' }], validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }], hostname: 'abc.example.com', subjectAltNames: [{ type: 'Hostname', hostname: 'y.example.com' }] } }));
  put(m, obj('BackendTLSPolicy', 'good', { targetRefs: [{ group: '', kind: 'Service', name: 'tcp-backend', sectionName: 'tls' }], validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }], hostname: 'abc.example.com' } }));
  put(m, tlsRoute('unusable', { sectionName: 'terminate' }, ['u.example.org'], [{ name: 'btls-backend', port: 8443 }]));
  put(m, tlsRoute('mixed', { sectionName: 'terminate' }, ['m.example.org'], [{ name: 'tcp-backend', port: 8443, weight: 3 }, { name: 'plain2', port: 3000, weight: 1 }]));
  const targets = streamsOf(m).flatMap((s) => s.targets);
  const u = targets.find((x) => x.host === 'u.example.org')!;
  assert.equal(u.backendTls, undefined);
  assert.deepEqual(u.backends.map((b) => [b.ok, b.problem?.reason]), [[false, 'BackendTLSPolicyNotUsable']]);
  const mx = targets.find((x) => x.host === 'm.example.org')!;
  assert.equal(mx.backendTls?.policy, 'infra/good');
  assert.deepEqual(mx.backends.map((b) => [b.service, b.ok, b.problem?.reason]), [['tcp-backend', true, undefined], ['plain2', false, 'MixedBackendTLS']]);

  // In the stream section: the unusable name's upstream only fails; the mixed one keeps a failing quarter, no retry.
  const structure = translate(m.snapshot(), { ...OPTS, gatewayApi: GA }).config.structure;
  const { section, problems } = streamSection(m, { own: new Set(), address: '127.0.0.1', modulePath: STREAM_MODULE }, undefined, structure.gatewayStreams);
  const gs = section!.gateway!;
  const hopOf = (host: string) => gs.hops![gs.servers.flatMap((s) => s.targets).find((x) => x.host === host)!.hop!]!;
  assert.deepEqual(gs.upstreams[hopOf('u.example.org').upstream!], { servers: [], failWeight: 1 });
  assert.deepEqual(gs.upstreams[hopOf('m.example.org').upstream!], { servers: [{ address: '198.18.0.60', port: 8443, weight: 3 }], failWeight: 1 });
  assert.equal(hopOf('m.example.org').retry, false);
  assert.deepEqual(hopOf('m.example.org').backendTls, { hostname: 'abc.example.com', ca: BACKEND_CA.cert });
  assert.deepEqual(problems.map((p) => [p.route, p.reason]).sort(), [['TLSRoute/infra/mixed', 'MixedBackendTLS'], ['TLSRoute/infra/unusable', 'BackendTLSPolicyNotUsable']]);
});

test('rendering: the front reads the server name and sends terminated names to their hop; hops end TLS from files (0600, named by digest, no key in nginx.conf) and re-encrypt under a policy; nginx -t passes', () => {
  const m = base();
  put(m, obj('BackendTLSPolicy', 'btls', { targetRefs: [{ group: '', kind: 'Service', name: 'btls-backend' }], validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }], hostname: 'abc.example.com' } }));
  put(m, tlsRoute('term', { sectionName: 'terminate' }, ['a.example.org', 'b.example.org'], [{ name: 'tcp-backend', port: 3000 }]));
  put(m, tlsRoute('reencrypt', { sectionName: 'terminate' }, ['r.example.org'], [{ name: 'btls-backend', port: 8443 }]));
  put(m, tlsRoute('mixed-term', {}, ['tls.example.com'], [{ name: 'tcp-backend', port: 3000 }]));
  put(m, tlsRoute('mixed-pass', {}, ['abc.example.com'], [{ name: 'tcp-backend', port: 8443 }]));
  const structure = translate(m.snapshot(), { ...OPTS, gatewayApi: GA }).config.structure;
  const { section, problems } = streamSection(m, { own: new Set(), address: '127.0.0.1', modulePath: STREAM_MODULE }, undefined, structure.gatewayStreams);
  assert.deepEqual(problems, []);
  const gs = section!.gateway!;
  // a/b.example.org share one hop (same certificate, upstream, no backend TLS); r.example.org and tls.example.com have their own.
  assert.equal(gs.hops!.length, 3);
  const targets = gs.servers.flatMap((s) => s.targets);
  assert.equal(targets.find((t) => t.host === 'a.example.org')!.hop, targets.find((t) => t.host === 'b.example.org')!.hop);
  assert.equal(targets.find((t) => t.host === 'abc.example.com')!.hop, undefined, 'passthrough: no hop');
  const rt = runtimeDir();
  const s = { ...structure, stream: section! };
  writeGatewayTlsFiles(s, rt);
  const conf = renderNginxConf(s, rt, structureChecksum(s));
  const files = gatewayTlsFiles(rt, { cert: SERVER.cert, key: SERVER.key });
  assert.equal(readFileSync(files.key, 'utf8'), SERVER.key);
  assert.equal(statSync(files.key).mode & 0o777, 0o600);
  assert.equal(statSync(files.cert).mode & 0o777, 0o600);
  assert.equal(statSync(path.dirname(files.key)).mode & 0o777, 0o700);
  assert.ok(!conf.includes('PRIVATE KEY') && !conf.includes('BEGIN CERTIFICATE'), 'no key material in nginx.conf');
  const mixedPort = listeners(m).find((x) => x.name === 'mixed-terminate')!.podPort!;
  const mixedMap = new RegExp(`map \\$ssl_preread_server_name \\$portico_gw_${mixedPort} \\{\\n\\s+hostnames;\\n\\s+abc\\.example\\.com portico_gw_\\d+;\\n\\s+tls\\.example\\.com portico_gwt_\\d+;\\n\\s+default portico_gw_closed;`);
  assert.match(conf, mixedMap);
  assert.match(conf, new RegExp(`listen unix:${rt.gatewayTlsSocketPrefix.replace(/[.]/g, '\\.')}-\\d\\.sock ssl;\\n\\s+access_log off;\\n\\s+ssl_certificate "${files.cert.replace(/[.]/g, '\\.')}";\\n\\s+ssl_certificate_key "${files.key.replace(/[.]/g, '\\.')}";`));
  assert.match(conf, /proxy_ssl on;\n\s+proxy_ssl_server_name on;\n\s+proxy_ssl_name abc\.example\.com;\n\s+proxy_ssl_verify on;\n\s+proxy_ssl_verify_depth 4;\n\s+proxy_ssl_trusted_certificate "[^"]+\/ca\/[0-9a-f]{32}\.pem";/);
  assert.equal(conf.match(/proxy_ssl on;/g)?.length, 1, 'only the re-encrypting hop');
  nginxTest(rt, conf, { withOutput: true });
});

test('a certificate nginx could not serve (key of another certificate) is left out with InvalidCertificate: its names are closed, the others served, nginx -t passes', () => {
  const m = base();
  m.setSecret({ key: 'infra/server', ok: true, cert: SERVER.cert, privateKey: OTHER.key, hosts: ['tls.example.com'], notAfter: '2099-01-01T00:00:00.000Z', fingerprint: 'mismatch' });
  put(m, tlsRoute('mixed-term', {}, ['tls.example.com'], [{ name: 'tcp-backend', port: 3000 }]));
  put(m, tlsRoute('mixed-pass', {}, ['abc.example.com'], [{ name: 'tcp-backend', port: 8443 }]));
  const structure = translate(m.snapshot(), { ...OPTS, gatewayApi: GA }).config.structure;
  const { section, problems } = streamSection(m, { own: new Set(), address: '127.0.0.1', modulePath: STREAM_MODULE }, undefined, structure.gatewayStreams);
  assert.deepEqual(problems.map((p) => [p.route, p.reason]), [['TLSRoute/infra/mixed-term', 'InvalidCertificate']]);
  assert.match(problems[0]!.message, /Secret infra\/server cannot be served \(OpenSSL cannot serve/);
  const gs = section!.gateway!;
  assert.equal(gs.hops, undefined, 'no hop for the bad certificate');
  const targets = gs.servers.flatMap((s) => s.targets);
  assert.deepEqual(targets.find((t) => t.host === 'tls.example.com'), { host: 'tls.example.com', upstream: null });
  assert.notEqual(targets.find((t) => t.host === 'abc.example.com')!.upstream, null, 'the passthrough name is still served');
  const rt = runtimeDir();
  const s = { ...structure, stream: section! };
  writeGatewayTlsFiles(s, rt);
  nginxTest(rt, renderNginxConf(s, rt, structureChecksum(s)), { withOutput: true });
});
