// Gateway API listener filters (GatewayListenerFilters) through the normalizers, the attachment and the pure
// translation: what each filter becomes (a Plugin's id, an external-auth instance of the listener's own), in the
// order written; what is refused by name, and that a listener whose filters cannot be applied is closed (its chain
// is the id no instance can have), never served unfiltered. No cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { Model } from '../../model/model.ts';
import { normalizeGateway } from '../../kinds/gateway/normalize.ts';
import { normalizeGatewayClass } from '../../kinds/gatewayclass/index.ts';
import { normalizeHttpRoute } from '../../kinds/httproute/normalize.ts';
import { normalizeListenerSet } from '../../kinds/listenerset/normalize.ts';
import { normalizeReferenceGrant } from '../../kinds/referencegrant/index.ts';
import { normalizePlugin } from '../../crds/normalize.ts';
import { modelOf, OPTS, slice, svc } from '../fixtures.test-helpers.ts';
import { translate, type TranslateOptions } from '../translate.ts';
import { LISTENER_CLOSED_ID } from '../phases/listener-filters.ts';
import { gatewayApiState, type GatewayApiOptions, type ListenerState } from './attach.ts';

const GA: GatewayApiOptions = { controllerName: 'portico.dev/gateway-controller', reservedPorts: [8080, 8443, 10246] };
const O: TranslateOptions = { ...OPTS, gatewayApi: GA };

const meta = (name: string, ns?: string) => ({ name, ...(ns ? { namespace: ns } : {}), uid: `uid-${name}`, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' });
const obj = (kind: string, name: string, spec: unknown, ns: string | undefined = 'infra'): KubeObject => ({ apiVersion: 'gateway.networking.k8s.io/v1', kind, metadata: meta(name, ns), spec }) as KubeObject;

function put(m: Model, o: KubeObject): void {
  const kind = o.kind as 'GatewayClass' | 'Gateway' | 'ListenerSet' | 'HTTPRoute' | 'ReferenceGrant';
  const n = kind === 'GatewayClass' ? normalizeGatewayClass(o) : kind === 'Gateway' ? normalizeGateway(o) : kind === 'ListenerSet' ? normalizeListenerSet(o) : kind === 'HTTPRoute' ? normalizeHttpRoute(o) : normalizeReferenceGrant(o);
  assert.ok(n.ok, !n.ok ? `${kind} ${o.metadata.name}: ${n.reason}` : '');
  m.setCrd(kind, n.record as never);
}
function plugin(m: Model, name: string, ns: string, spec: Record<string, unknown>): void {
  const n = normalizePlugin({ apiVersion: 'portico.dev/v1alpha1', kind: 'Plugin', metadata: meta(name, ns), spec } as unknown as KubeObject, () => undefined);
  assert.ok(n.ok, JSON.stringify(n));
  m.setCrd('Plugin', n.record);
}

const ext = (name: string) => ({ type: 'ExtensionRef', extensionRef: { group: 'portico.dev', kind: 'Plugin', name } });
const auth = (backendRef: Record<string, unknown>, more: Record<string, unknown> = {}) => ({ type: 'ExternalAuth', externalAuth: { protocol: 'HTTP', backendRef, ...more } });
const listener = (name: string, hostname: string | undefined, requests: unknown[] | undefined, protocol = 'HTTP') => ({ name, port: 80, protocol, ...(hostname ? { hostname } : {}), allowedRoutes: { namespaces: { from: 'All' } }, ...(requests ? { filters: { requests } } : {}) });

function base(): Model {
  const m = modelOf({
    services: [svc('web', [{ port: 8080 }], 'infra'), svc('authz', [{ port: 9000 }], 'infra'), svc('authz', [{ port: 9000 }], 'other')],
    slices: [slice('web-1', 'web', [{ port: 8080 }], [{ ip: '198.18.0.10' }], 'infra'), slice('authz-1', 'authz', [{ port: 9000 }], [{ ip: '198.18.0.11' }], 'infra'), slice('authz-2', 'authz', [{ port: 9000 }], [{ ip: '198.18.0.12' }], 'other')],
  });
  put(m, obj('GatewayClass', 'portico', { controllerName: GA.controllerName }, undefined));
  plugin(m, 'deny', 'infra', { type: 'ip-restriction', config: { deny: ['0.0.0.0/0'] } });
  plugin(m, 'hdr', 'infra', { type: 'request-headers', config: { set: [{ name: 'x-a', value: '1' }] } });
  return m;
}
const listenerNamed = (m: Model, gw: string, name: string): ListenerState => gatewayApiState(m.snapshot(), GA).gateways.get(gw)!.listeners.find((l) => l.name === name)!;
const portOf = (m: Model, gw: string, name: string) => {
  const l = listenerNamed(m, gw, name);
  const r = translate(m.snapshot(), O);
  return { l, r, port: r.config.structure.global.gatewayPorts!.find((p) => p.port === l.podPort)! };
};

test('normalizer: filters.requests kept as written, references defaulted to the object\'s namespace; another phase refused by name', () => {
  const g = normalizeGateway(obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [listener('a', undefined, [ext('hdr'), auth({ name: 'authz', port: 9000 }, { http: { path: '/check', allowedHeaders: ['X-Tenant'] }, forwardBody: { maxSize: 0 } })])] }));
  assert.ok(g.ok);
  assert.deepEqual(g.record.listeners[0]!.filters, [
    { type: 'ExtensionRef', extensionRef: { group: 'portico.dev', kind: 'Plugin', name: 'hdr' } },
    { type: 'ExternalAuth', externalAuth: { protocol: 'HTTP', backendRef: { group: '', kind: 'Service', namespace: 'infra', name: 'authz', port: 9000 }, path: '/check', allowedHeaders: ['X-Tenant'], allowedResponseHeaders: [], forwardBodyMaxSize: 0 } },
  ]);
  const none = normalizeGateway(obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [{ ...listener('a', undefined, undefined), filters: {} }] }));
  assert.ok(none.ok && none.record.listeners[0]!.filters === undefined, 'an empty filters object asks nothing');
  const other = normalizeGateway(obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [{ ...listener('a', undefined, undefined), filters: { connection: [{ type: 'X' }] } }] }));
  assert.match(!other.ok ? other.reason : '', /spec\.listeners\.0\.filters: connection: only filters\.requests is served/);
});

test('ExtensionRef and ExternalAuth become one chain in the order written; the auth Service is a backend; listeners without filters have none', () => {
  const m = base();
  put(m, obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [
    listener('a', 'a.example.com', [auth({ name: 'authz', port: 9000 }, { http: { path: '/check/', allowedHeaders: ['X-Tenant'], allowedResponseHeaders: ['X-User'] } }), ext('hdr'), ext('deny')]),
    listener('b', 'b.example.com', [auth({ name: 'authz', port: 9000 })]),
    listener('open', undefined, undefined),
  ] }));
  const { l, r, port } = portOf(m, 'infra/gw', 'a');
  assert.deepEqual([l.accepted.status, l.resolvedRefs.status, l.programmed.status], ['True', 'True', 'True']);
  assert.deepEqual(port.filters, { 'a.example.com': ['lf.gw.infra.gw.a.0', 'infra_hdr', 'infra_deny'], 'b.example.com': ['lf.gw.infra.gw.b.0'] }, 'the written order, never the engine\'s (deny before headers there)');
  const a = r.config.data.plugins['lf.gw.infra.gw.a.0']!;
  assert.equal(a.type, 'external-auth');
  assert.deepEqual(a.type === 'external-auth' ? [a.path, a.forwardHeaders, a.upstreamHeaders, a.gatewayApi] : [], ['/check', ['authorization', 'x-tenant'], ['x-user'], { allUpstreamHeaders: false }]);
  const b = r.config.data.plugins['lf.gw.infra.gw.b.0']!;
  assert.deepEqual(b.type === 'external-auth' ? [b.path, b.upstreamHeaders, b.gatewayApi] : [], ['', [], { allUpstreamHeaders: true }], 'no allowedResponseHeaders: all of them');
  assert.ok(r.config.data.backends[a.type === 'external-auth' ? a.backendId : '']?.endpoints.some((e) => e.address === '198.18.0.11'), 'the auth Service is a backend with its endpoints');
  assert.ok(r.config.data.plugins.infra_hdr && r.config.data.plugins.infra_deny, 'the Plugins are registered');
  assert.deepEqual(r.events.filter((e) => e.type === 'Warning'), []);
});

test('what cannot be applied is named on the listener and closes it (503 for every request), never served unfiltered', () => {
  const cases: [unknown[], string, RegExp][] = [
    [[ext('missing')], 'InvalidListenerFilter', /Plugin infra\/missing not found/],
    [[{ type: 'ExtensionRef', extensionRef: { group: 'example.com', kind: 'Thing', name: 'x' } }], 'InvalidListenerFilter', /example\.com\/Thing is not an extension Portico knows/],
    [[auth({ name: 'authz', port: 9000 }, { protocol: 'GRPC' })], 'InvalidListenerFilter', /protocol: GRPC is not served by Portico/],
    [[auth({ name: 'authz', port: 9000 }, { forwardBody: { maxSize: 1024 } })], 'InvalidListenerFilter', /forwardBody: .* not served/],
    [[auth({ name: 'nope', port: 9000 })], 'InvalidListenerFilter', /Service infra\/nope not found/],
    [[auth({ name: 'authz', port: 1 })], 'InvalidListenerFilter', /has no port 1/],
    [[auth({ name: 'authz', namespace: 'other', port: 9000 })], 'RefNotPermitted', /no ReferenceGrant in other lets Gateways of infra use Service other\/authz/],
    [[{ type: 'RequestHeaderModifier' }], 'InvalidListenerFilter', /type RequestHeaderModifier is not a listener filter Portico serves/],
    [[ext('hdr'), ext('missing')], 'InvalidListenerFilter', /Plugin infra\/missing not found/],
  ];
  for (const [requests, reason, message] of cases) {
    const m = base();
    put(m, obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [listener('bad', 'bad.example.com', requests), listener('open', undefined, undefined)] }));
    const { l, port } = portOf(m, 'infra/gw', 'bad');
    const what = JSON.stringify(requests);
    assert.deepEqual([l.accepted.status, l.resolvedRefs.status, l.resolvedRefs.reason, l.programmed.status], ['True', 'False', reason, 'False'], what);
    assert.match(l.resolvedRefs.message, message, what);
    assert.match(l.programmed.message, /every request on it is refused \(503\)/, what);
    assert.ok(l.usable && l.podPort !== undefined, `${what}: its names stay its own on the port`);
    assert.deepEqual(port.filters, { 'bad.example.com': [LISTENER_CLOSED_ID] }, what);
    assert.deepEqual(port.hostnames, ['', 'bad.example.com'], `${what}: another listener of the port never takes its names`);
  }
  // A ReferenceGrant to Gateways of infra lets it use the other namespace's Service.
  const m = base();
  put(m, obj('ReferenceGrant', 'g', { from: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra' }], to: [{ group: '', kind: 'Service' }] }, 'other'));
  put(m, obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [listener('a', undefined, [auth({ name: 'authz', namespace: 'other', port: 9000 })])] }));
  const { l, port, r } = portOf(m, 'infra/gw', 'a');
  assert.equal(l.resolvedRefs.status, 'True', l.resolvedRefs.message);
  assert.deepEqual(port.filters, { '': ['lf.gw.infra.gw.a.0'] });
  const inst = r.config.data.plugins['lf.gw.infra.gw.a.0']!;
  assert.ok(r.config.data.backends[inst.type === 'external-auth' ? inst.backendId : '']?.endpoints.some((e) => e.address === '198.18.0.12'));
});

test('filters on a listener that is not HTTP or HTTPS: not accepted (UnsupportedValue), not served', () => {
  const m = base();
  put(m, obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [listener('tcp', undefined, [ext('deny')], 'TCP')] }));
  const l = listenerNamed(m, 'infra/gw', 'tcp');
  assert.deepEqual([l.accepted.status, l.accepted.reason, l.usable], ['False', 'UnsupportedValue', false]);
});

test('the auth backend is never Portico\'s own Service: the listener is closed, with a Warning', () => {
  const m = base();
  put(m, obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [listener('a', undefined, [auth({ name: 'authz', port: 9000 })])] }));
  const l = listenerNamed(m, 'infra/gw', 'a');
  const r = translate(m.snapshot(), { ...O, selfService: 'infra/authz' });
  assert.deepEqual(r.config.structure.global.gatewayPorts!.find((p) => p.port === l.podPort)!.filters, { '': [LISTENER_CLOSED_ID] });
  assert.ok(r.events.some((e) => e.type === 'Warning' && e.reason === 'ListenerFilterUnavailable' && /Portico's own Service/.test(e.message)), JSON.stringify(r.events));
  assert.equal(Object.keys(r.config.data.plugins).some((id) => id.startsWith('lf.')), false, 'no instance reaches the data plane');
});

test('a ListenerSet\'s filters name its own namespace\'s Plugins; a Plugin appearing later opens the listener (the state follows it)', () => {
  const m = base();
  put(m, obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [listener('own', 'own.example.com', undefined)], allowedListeners: { namespaces: { from: 'All' } } }));
  put(m, obj('ListenerSet', 'ls', { parentRef: { name: 'gw', namespace: 'infra' }, listeners: [listener('t', 't.example.com', [ext('deny')])] }, 'apps'));
  const set = () => gatewayApiState(m.snapshot(), GA).listenerSets.get('apps/ls')!.listeners[0]!;
  assert.match(set().resolvedRefs.message, /Plugin apps\/deny not found/, 'the set\'s namespace, not the Gateway\'s');
  plugin(m, 'deny', 'apps', { type: 'ip-restriction', config: { deny: ['0.0.0.0/0'] } });
  assert.equal(set().resolvedRefs.status, 'True', set().resolvedRefs.message);
  const r = translate(m.snapshot(), O);
  assert.deepEqual(r.config.structure.global.gatewayPorts!.find((p) => p.port === set().podPort)!.filters, { 't.example.com': ['apps_deny'] });
});

test('routes attach to a listener with filters as to any other', () => {
  const m = base();
  put(m, obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [listener('a', 'a.example.com', [ext('deny')])] }));
  put(m, obj('HTTPRoute', 'r', { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] }));
  const s = gatewayApiState(m.snapshot(), GA);
  assert.equal(s.routes.get('infra/r')![0]!.accepted.status, 'True');
  assert.equal(s.gateways.get('infra/gw')!.listeners[0]!.attachedRoutes, 1);
});
