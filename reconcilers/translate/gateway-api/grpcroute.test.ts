// GRPCRoute, pure: method matches as paths (exact, service prefix, method regex, regular expressions), header
// matches, filters, gRPC backends (a GRPC directive profile: grpc_pass), its own ReferenceGrant kind, attachment to
// HTTP and HTTPS listeners next to HTTPRoutes, and what the normalizer refuses by name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { normalizeGateway } from '../../kinds/gateway/normalize.ts';
import { normalizeGatewayClass } from '../../kinds/gatewayclass/index.ts';
import { normalizeGrpcRoute } from '../../kinds/grpcroute/normalize.ts';
import { normalizeHttpRoute } from '../../kinds/httproute/normalize.ts';
import { normalizeReferenceGrant } from '../../kinds/referencegrant/index.ts';
import { modelOf, OPTS, slice, svc } from '../fixtures.test-helpers.ts';
import { translate } from '../translate.ts';
import { gatewayApiState, listenerHost } from './attach.ts';

const GA = { controllerName: 'portico.dev/gateway-controller', reservedPorts: [8080, 8443, 10246] };
let t0 = 0;
const obj = (kind: string, name: string, spec: unknown, ns = 'infra'): KubeObject =>
  ({ apiVersion: 'gateway.networking.k8s.io/v1', kind, metadata: { name, namespace: ns, uid: `uid-${kind}-${name}`, generation: 1, creationTimestamp: `2026-01-01T00:00:${String(t0++ % 60).padStart(2, '0')}Z` }, spec }) as KubeObject;
const ok = <T>(r: { ok: true; record: T } | { ok: false; reason: string }): T => {
  if (!r.ok) throw new Error(r.reason);
  return r.record;
};
const SVC = 'gateway_api_conformance.echo_basic.grpcecho.GrpcEcho';

function setup() {
  t0 = 0;
  const m = modelOf({
    services: [svc('grpc-v1', [{ port: 8080 }], 'infra'), svc('grpc-v2', [{ port: 8080 }], 'infra'), svc('theirs', [{ port: 8080 }], 'apps')],
    slices: [slice('v1', 'grpc-v1', [{ port: 3000 }], [{ ip: '198.18.0.10' }], 'infra'), slice('v2', 'grpc-v2', [{ port: 3000 }], [{ ip: '198.18.0.11' }], 'infra'), slice('t', 'theirs', [{ port: 3000 }], [{ ip: '198.18.0.12' }], 'apps')],
  });
  m.setCrd('GatewayClass', ok(normalizeGatewayClass({ metadata: { name: 'portico', uid: 'c', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { controllerName: GA.controllerName } } as unknown as KubeObject)));
  m.setCrd('Gateway', ok(normalizeGateway(obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] }))));
  return m;
}

test('method matches become paths: exact call, every method of a service, a method of any service, regular expressions', () => {
  const r = ok(
    normalizeGrpcRoute(
      obj('GRPCRoute', 'g', {
        rules: [
          { matches: [{ method: { service: SVC, method: 'Echo' } }, { method: { service: SVC } }, { method: { method: 'EchoTwo' } }, { method: { type: 'RegularExpression', service: 'grpc\\.[a-z]+', method: 'Echo.*' } }, {}] },
        ],
      }),
    ),
  );
  assert.equal(r.grpc, true);
  assert.deepEqual(
    r.rules[0]!.matches.map((m) => m.path),
    [
      { type: 'Exact', value: `/${SVC}/Echo` },
      { type: 'PathPrefix', value: `/${SVC}/` },
      { type: 'RegularExpression', value: '^/[^/]+/EchoTwo$' },
      { type: 'RegularExpression', value: '^/(?:grpc\\.[a-z]+)/(?:Echo.*)$' },
      { type: 'PathPrefix', value: '/' },
    ],
  );
  const bad = (spec: unknown) => normalizeGrpcRoute(obj('GRPCRoute', 'b', spec));
  const reason = (x: ReturnType<typeof bad>) => (x.ok ? '' : x.reason);
  assert.match(reason(bad({ rules: [{ matches: [{ method: { service: 'has space' } }] }] })), /not a gRPC service name/);
  assert.match(reason(bad({ rules: [{ matches: [{ method: { method: 'a/b' } }] }] })), /not a gRPC method name/);
  assert.match(reason(bad({ rules: [{ matches: [{ method: { type: 'Exact' } }] }] })), /one or both of service and method/);
  assert.match(reason(bad({ rules: [{ matches: [{ method: { type: 'RegularExpression', method: '(?{code})' } }] }] })), /regular expression/);
  assert.match(reason(bad({ rules: [{ filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'x', port: 1 } } }] }] })), /RequestMirror on a GRPCRoute is not served/);
  assert.match(reason(bad({ rules: [{ filters: [{ type: 'URLRewrite' }] }] })), /type/, 'a filter the API does not have for GRPCRoute');
  assert.match(reason(bad({ rules: [{ backendRefs: [{ name: 'x' }] }] })), /needs a port/);
});

test('a GRPCRoute attaches to HTTP listeners next to HTTPRoutes; its backends speak gRPC (a GRPC profile); headers and filters work as for HTTPRoute', () => {
  const m = setup();
  m.setCrd('HTTPRoute', ok(normalizeHttpRoute(obj('HTTPRoute', 'web', { parentRefs: [{ name: 'gw' }], hostnames: ['web.example.com'], rules: [{ backendRefs: [{ name: 'grpc-v2', port: 8080 }] }] }))));
  m.setCrd(
    'GRPCRoute',
    ok(
      normalizeGrpcRoute(
        obj('GRPCRoute', 'echo', {
          parentRefs: [{ name: 'gw' }],
          hostnames: ['grpc.example.com'],
          rules: [
            { matches: [{ method: { service: SVC, method: 'Echo' } }], backendRefs: [{ name: 'grpc-v1', port: 8080 }] },
            { matches: [{ method: { service: SVC, method: 'Echo' }, headers: [{ name: 'Version', value: 'two' }] }], filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-Who', value: 'gw' }] } }], backendRefs: [{ name: 'grpc-v2', port: 8080 }] },
            { matches: [{ method: { service: SVC, method: 'EchoTwo' } }], backendRefs: [{ name: 'theirs', namespace: 'apps', port: 8080 }] },
          ],
        }),
      ),
    ),
  );
  const st = gatewayApiState(m.snapshot(), GA);
  const l = st.gateways.get('infra/gw')!.listeners[0]!;
  assert.equal(l.supportedKinds.map((k) => k.kind).join(' '), 'HTTPRoute GRPCRoute');
  assert.equal(l.attachedRoutes, 2);
  const parent = st.routes.get('GRPCRoute/infra/echo')![0]!;
  assert.equal(parent.accepted.status, 'True');
  assert.equal(parent.resolvedRefs.reason, 'RefNotPermitted', 'a backend in another namespace needs a ReferenceGrant from GRPCRoutes');
  const r = translate(m.snapshot(), { ...OPTS, gatewayApi: GA });
  const host = r.config.data.routes[listenerHost(l.podPort!, 'grpc.example.com')]!;
  const exact = host.rules.filter((x) => x.match === 'exact' && x.path === `/${SVC}/Echo`);
  assert.equal(exact.length, 2);
  const withHeader = exact.find((x) => x.conditions?.headers)!;
  assert.deepEqual(withHeader.conditions?.headers, [{ name: 'version', type: 'exact', value: 'two' }]);
  assert.equal(exact.indexOf(withHeader), 0, 'the header match is tried first (the router goes in array order)');
  assert.equal(withHeader.route.backendId, 'infra_grpc-v2_8080');
  assert.ok(withHeader.route.plugins?.length, 'the header filter runs');
  const profile = (name: string | undefined) => r.config.structure.profiles.find((p) => p.name === name);
  assert.equal(profile(withHeader.route.profile)?.backendProtocol, 'GRPC', 'grpc_pass to the backend');
  const two = host.rules.find((x) => x.path === `/${SVC}/EchoTwo`)!;
  assert.equal(two.route.action, 'error', 'a backend it may not use: 500 (no ReferenceGrant)');
  const web = r.config.data.routes[listenerHost(l.podPort!, 'web.example.com')]!.rules[0]!;
  assert.notEqual(profile(web.route.profile)?.backendProtocol, 'GRPC', "the HTTPRoute's backend stays HTTP");

  m.setCrd('ReferenceGrant', ok(normalizeReferenceGrant(obj('ReferenceGrant', 'g', { from: [{ group: 'gateway.networking.k8s.io', kind: 'GRPCRoute', namespace: 'infra' }], to: [{ group: '', kind: 'Service' }] }, 'apps'))));
  const r2 = translate(m.snapshot(), { ...OPTS, gatewayApi: GA });
  const two2 = r2.config.data.routes[listenerHost(l.podPort!, 'grpc.example.com')]!.rules.find((x) => x.path === `/${SVC}/EchoTwo`)!;
  assert.equal(two2.route.backendId, 'apps_theirs_8080', 'granted to GRPCRoutes: served');
});
