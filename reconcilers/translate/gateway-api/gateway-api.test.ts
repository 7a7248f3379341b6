// Table tests: Gateway API objects (GatewayClass, Gateway, HTTPRoute, ReferenceGrant, Namespace) through their
// normalizers, the attachment and the pure translation. No cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { Model } from '../../model/model.ts';
import { normalizeService } from '../../model/normalize.ts';
import { normalizeGateway } from '../../kinds/gateway/normalize.ts';
import { normalizeGatewayClass } from '../../kinds/gatewayclass/index.ts';
import { normalizeHttpRoute } from '../../kinds/httproute/normalize.ts';
import { normalizeNamespace } from '../../kinds/namespace/index.ts';
import { normalizeReferenceGrant } from '../../kinds/referencegrant/index.ts';
import { normalizeUpstream } from '../../crds/normalize.ts';
import { modelOf, OPTS, rng, slice, svc } from '../fixtures.test-helpers.ts';
import { translate, type TranslateOptions } from '../translate.ts';
import { covers, gatewayApiState, gatewayApiStateAnew, intersectHosts, listenerHost, MAX_PORTS_PER_NAMESPACE, routeHostKey, type GatewayApiOptions } from './attach.ts';

const GA: GatewayApiOptions = { controllerName: 'portico.dev/gateway-controller', reservedPorts: [8080, 8443, 10246] };
const O: TranslateOptions = { ...OPTS, gatewayApi: GA };

let t0 = 0;
const obj = (kind: string, name: string, spec: unknown, ns: string | undefined = 'infra', extra: Record<string, unknown> = {}): KubeObject =>
  ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind,
    metadata: { name, ...(ns ? { namespace: ns } : {}), uid: `uid-${name}`, generation: 1, creationTimestamp: `2026-01-01T00:00:${String(t0++ % 60).padStart(2, '0')}Z`, ...extra },
    spec,
  }) as KubeObject;

function put(m: Model, o: KubeObject): void {
  const kind = o.kind as 'GatewayClass' | 'Gateway' | 'HTTPRoute' | 'ReferenceGrant' | 'Namespace';
  const n =
    kind === 'GatewayClass' ? normalizeGatewayClass(o) : kind === 'Gateway' ? normalizeGateway(o) : kind === 'HTTPRoute' ? normalizeHttpRoute(o) : kind === 'ReferenceGrant' ? normalizeReferenceGrant(o) : normalizeNamespace(o);
  if (!n.ok) {
    m.rejectCrd(kind, { key: o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name, generation: 1, reason: n.reason });
    return;
  }
  m.setCrd(kind, n.record as never);
}

const gwc = (name = 'portico', controllerName = GA.controllerName) => obj('GatewayClass', name, { controllerName }, undefined);
const httpListener = (name: string, port: number, extra: Record<string, unknown> = {}) => ({ name, port, protocol: 'HTTP', ...extra });
const route = (name: string, spec: Record<string, unknown>, ns = 'infra') => obj('HTTPRoute', name, spec, ns);
const backend = (name: string, port = 8080, extra: Record<string, unknown> = {}) => ({ name, port, ...extra });

function base(): Model {
  return modelOf({
    services: [svc('web', [{ port: 8080 }], 'infra'), svc('api', [{ port: 8080 }], 'infra'), svc('other', [{ port: 8080 }], 'apps')],
    slices: [
      slice('web-1', 'web', [{ port: 8080 }], [{ ip: '198.18.0.10' }], 'infra'),
      slice('api-1', 'api', [{ port: 8080 }], [{ ip: '198.18.0.20' }], 'infra'),
      slice('other-1', 'other', [{ port: 8080 }], [{ ip: '198.18.0.30' }], 'apps'),
    ],
  });
}

test('hostname intersection and Gateway API wildcards (one label or more, never the parent itself)', () => {
  assert.equal(covers('*.example.com', 'foo.example.com'), true);
  assert.equal(covers('*.example.com', 'a.b.example.com'), true);
  assert.equal(covers('*.example.com', 'example.com'), false);
  assert.deepEqual(intersectHosts(undefined, []), ['_']);
  assert.deepEqual(intersectHosts('*.example.com', []), ['*.example.com']);
  assert.deepEqual(intersectHosts(undefined, ['a.example.com']), ['a.example.com']);
  assert.deepEqual(intersectHosts('*.example.com', ['a.example.com', 'other.org']), ['a.example.com']);
  assert.deepEqual(intersectHosts('a.example.com', ['*.example.com']), ['a.example.com']);
  assert.equal(intersectHosts('a.example.com', ['b.example.com']), null);
});

test('a GatewayClass of another controller is not Portico\'s; its Gateways get no state, their routes no claims', () => {
  const m = base();
  put(m, gwc('other', 'example.com/other'));
  put(m, obj('Gateway', 'gw', { gatewayClassName: 'other', listeners: [httpListener('http', 80)] }));
  put(m, route('r', { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [backend('web')] }] }));
  const s = gatewayApiState(m.snapshot(), GA);
  assert.equal(s.classes.size, 0);
  assert.equal(s.gateways.size, 0);
  const r = translate(m.snapshot(), O);
  assert.deepEqual(Object.keys(r.config.data.routes), []);
  assert.equal(r.config.structure.global.gatewayPorts, undefined);
});

test('a Gateway port becomes a pod port nginx listens on; its routes are keyed by it; other Gateways and Ingresses never see them', () => {
  const m = base();
  put(m, gwc());
  put(m, obj('Gateway', 'a', { gatewayClassName: 'portico', listeners: [httpListener('http', 80)] }));
  put(m, obj('Gateway', 'b', { gatewayClassName: 'portico', listeners: [httpListener('http', 80)] }));
  put(m, route('ra', { parentRefs: [{ name: 'a' }], hostnames: ['foo.example.com'], rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/app/' } }], backendRefs: [backend('web')] }] }));
  put(m, route('rb', { parentRefs: [{ name: 'b' }], rules: [{ backendRefs: [backend('api')] }] }));
  const s = gatewayApiState(m.snapshot(), GA);
  const pa = s.gateways.get('infra/a')!.listeners[0]!.podPort!;
  const pb = s.gateways.get('infra/b')!.listeners[0]!.podPort!;
  assert.ok(pa >= 20000 && pa < 30000 && pb >= 20000 && pb < 30000 && pa !== pb, `${pa} ${pb}`);
  const r = translate(m.snapshot(), O);
  assert.deepEqual(r.config.structure.global.gatewayPorts, [{ port: Math.min(pa, pb), ssl: false, hostnames: [''] }, { port: Math.max(pa, pb), ssl: false, hostnames: [''] }]);
  const ra = r.config.data.routes[listenerHost(pa, 'foo.example.com')];
  assert.ok(ra, Object.keys(r.config.data.routes).join(' '));
  assert.deepEqual(ra.rules.map((x) => [x.match, x.path, x.route.backendId]), [['prefix', '/app', 'infra_web_8080']]);
  const rb = r.config.data.routes[listenerHost(pb, '_')];
  assert.deepEqual(rb?.rules.map((x) => [x.match, x.path, x.route.backendId]), [['prefix', '/', 'infra_api_8080']]);
  assert.equal(r.config.data.routes['foo.example.com'], undefined);
  assert.equal(r.config.data.routes['_'], undefined);
  assert.equal(r.config.data.backends['infra_web_8080']?.endpoints.length, 1);
  // The same Gateways always get the same ports (derived from the objects, not from arrival order).
  const m2 = base();
  put(m2, gwc());
  put(m2, obj('Gateway', 'b', { gatewayClassName: 'portico', listeners: [httpListener('http', 80)] }, 'infra', { creationTimestamp: '2026-01-01T00:00:01Z' }));
  assert.equal(gatewayApiState(m2.snapshot(), GA).gateways.get('infra/b')!.listeners[0]!.podPort, pb);
});

test('listener validation: unsupported protocol, invalid route kinds, conflicts; Gateway Accepted with ListenersNotValid', () => {
  const m = base();
  put(m, gwc());
  put(m, obj('Gateway', 'mixed', { gatewayClassName: 'portico', listeners: [httpListener('http', 80), { name: 'bad', port: 81, protocol: 'INVALID' }] }));
  put(m, obj('Gateway', 'none', { gatewayClassName: 'portico', listeners: [{ name: 'bad', port: 81, protocol: 'INVALID' }] }));
  put(m, obj('Gateway', 'kinds', { gatewayClassName: 'portico', listeners: [httpListener('http', 80, { allowedRoutes: { kinds: [{ kind: 'TCPRoute' }, { kind: 'HTTPRoute' }] } })] }));
  put(m, obj('Gateway', 'conflict', { gatewayClassName: 'portico', listeners: [httpListener('a', 80), httpListener('b', 80), { name: 'c', port: 90, protocol: 'HTTP' }, { name: 'd', port: 90, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'x' }] } }] }));
  const s = gatewayApiState(m.snapshot(), GA);
  const mixed = s.gateways.get('infra/mixed')!;
  assert.deepEqual([mixed.accepted.status, mixed.accepted.reason], ['True', 'ListenersNotValid']);
  assert.deepEqual(mixed.listeners.map((l) => [l.name, l.accepted.reason, l.supportedKinds.length]), [['http', 'Accepted', 2], ['bad', 'UnsupportedProtocol', 0]]);
  const none = s.gateways.get('infra/none')!;
  assert.deepEqual([none.accepted.status, none.accepted.reason], ['False', 'ListenersNotValid']);
  const kinds = s.gateways.get('infra/kinds')!.listeners[0]!;
  assert.deepEqual([kinds.resolvedRefs.status, kinds.resolvedRefs.reason, kinds.supportedKinds.map((k) => k.kind), kinds.usable], ['False', 'InvalidRouteKinds', ['HTTPRoute'], true]);
  const c = s.gateways.get('infra/conflict')!.listeners;
  assert.deepEqual(c.map((l) => [l.name, l.conflicted.status, l.conflicted.reason]), [['a', 'True', 'HostnameConflict'], ['b', 'True', 'HostnameConflict'], ['c', 'True', 'ProtocolConflict'], ['d', 'True', 'ProtocolConflict']]);
  assert.equal(c.some((l) => l.podPort !== undefined), false);
});

test('HTTPS listeners: certificateRefs need a ReferenceGrant across namespaces and a valid TLS Secret', () => {
  const m = base();
  put(m, gwc());
  put(m, obj('Gateway', 'tls', { gatewayClassName: 'portico', listeners: [{ name: 'https', port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'cert', namespace: 'certs' }] } }] }));
  let l = gatewayApiState(m.snapshot(), GA).gateways.get('infra/tls')!.listeners[0]!;
  assert.deepEqual([l.resolvedRefs.reason, l.programmed.status, l.usable], ['RefNotPermitted', 'False', false]);
  put(m, obj('ReferenceGrant', 'g', { from: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra' }], to: [{ group: '', kind: 'Secret' }] }, 'certs'));
  l = gatewayApiState(m.snapshot(), GA).gateways.get('infra/tls')!.listeners[0]!;
  assert.deepEqual([l.resolvedRefs.reason, l.resolvedRefs.message.includes('not found')], ['InvalidCertificateRef', true]);
});

test('route attachment: sectionName, allowedRoutes namespaces (Same, All, Selector), hostnames; attachedRoutes counts', () => {
  const m = base();
  put(m, gwc());
  put(m, obj('Namespace', 'apps', {}, undefined, { labels: { team: 'a' } }));
  put(m, obj('Namespace', 'infra', {}, undefined, {}));
  put(m, obj('Gateway', 'gw', {
    gatewayClassName: 'portico',
    listeners: [
      httpListener('same', 80, { hostname: '*.example.com' }),
      httpListener('sel', 81, { allowedRoutes: { namespaces: { from: 'Selector', selector: { matchLabels: { team: 'a' } } } } }),
      httpListener('all', 82, { hostname: 'only.example.org', allowedRoutes: { namespaces: { from: 'All' } } }),
    ],
  }));
  put(m, route('nosection', { parentRefs: [{ name: 'gw', sectionName: 'nope' }], rules: [{ backendRefs: [backend('web')] }] }));
  put(m, route('notallowed', { parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'same' }], rules: [{ backendRefs: [backend('other')] }] }, 'apps'));
  put(m, route('selected', { parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'sel' }], rules: [{ backendRefs: [backend('other')] }] }, 'apps'));
  put(m, route('nohost', { parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'all' }], hostnames: ['x.example.com'], rules: [{ backendRefs: [backend('other')] }] }, 'apps'));
  const s = gatewayApiState(m.snapshot(), GA);
  const reason = (k: string) => s.routes.get(k)!.map((p) => p.accepted.reason);
  assert.deepEqual(reason('infra/nosection'), ['NoMatchingParent']);
  assert.deepEqual(reason('apps/notallowed'), ['NotAllowedByListeners']);
  assert.deepEqual(reason('apps/selected'), ['Accepted']);
  assert.deepEqual(reason('apps/nohost'), ['NoMatchingListenerHostname']);
  // Counted where allowed and the hostnames intersect (nohost's do not).
  assert.deepEqual(s.gateways.get('infra/gw')!.listeners.map((l) => [l.name, l.attachedRoutes]), [['same', 0], ['sel', 1], ['all', 0]]);
});

test('listener isolation: a host goes to the most specific listener of its port only', () => {
  const m = base();
  put(m, gwc());
  put(m, obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [httpListener('empty', 80), httpListener('wild', 80, { hostname: '*.example.com' }), httpListener('foo', 80, { hostname: 'foo.example.com' })] }));
  put(m, route('all', { parentRefs: [{ name: 'gw', sectionName: 'empty' }], hostnames: ['foo.example.com', 'bar.example.com', 'other.org'], rules: [{ backendRefs: [backend('web')] }] }));
  put(m, route('wild', { parentRefs: [{ name: 'gw', sectionName: 'wild' }], rules: [{ backendRefs: [backend('api')] }] }));
  const s = gatewayApiState(m.snapshot(), GA);
  const hosts = (k: string) => s.routes.get(k)![0]!.attached.flatMap((a) => a.hosts);
  assert.deepEqual(hosts('infra/all'), ['other.org']);
  assert.deepEqual(hosts('infra/wild'), ['*.example.com']);
});

test('backendRefs: cross-namespace needs a ReferenceGrant; unusable ones answer 500 for their share; none at all is 500', () => {
  const m = base();
  put(m, gwc());
  put(m, obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [httpListener('http', 80)] }));
  put(m, route('split', { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [backend('web', 8080, { weight: 3 }), backend('other', 8080, { namespace: 'apps', weight: 1 })] }] }));
  put(m, route('bad', { parentRefs: [{ name: 'gw' }], hostnames: ['bad.example.com'], rules: [{ backendRefs: [backend('missing')] }] }));
  put(m, route('kind', { parentRefs: [{ name: 'gw' }], hostnames: ['kind.example.com'], rules: [{ backendRefs: [{ group: 'example.com', kind: 'Thing', name: 'x' }] }] }));
  let s = gatewayApiState(m.snapshot(), GA);
  assert.equal(s.routes.get('infra/split')![0]!.resolvedRefs.reason, 'RefNotPermitted');
  assert.equal(s.routes.get('infra/bad')![0]!.resolvedRefs.reason, 'BackendNotFound');
  assert.equal(s.routes.get('infra/kind')![0]!.resolvedRefs.reason, 'InvalidKind');
  const port = s.gateways.get('infra/gw')!.listeners[0]!.podPort!;
  let r = translate(m.snapshot(), O);
  const rule0 = (h: string) => r.config.data.routes[listenerHost(port, h)]!.rules[0]!.route;
  assert.deepEqual(rule0('_').split, [{ backendId: 'infra_web_8080', weight: 3 }, { backendId: '', weight: 1 }]);
  assert.equal(rule0('bad.example.com').action, 'error');
  assert.equal(rule0('kind.example.com').action, 'error');
  put(m, obj('ReferenceGrant', 'g', { from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'infra' }], to: [{ group: '', kind: 'Service', name: 'other' }] }, 'apps'));
  s = gatewayApiState(m.snapshot(), GA);
  assert.equal(s.routes.get('infra/split')![0]!.resolvedRefs.status, 'True');
  r = translate(m.snapshot(), O);
  assert.deepEqual(rule0('_').split, [{ backendId: 'infra_web_8080', weight: 3 }, { backendId: 'apps_other_8080', weight: 1 }]);
  assert.equal(r.config.data.backends['apps_other_8080']?.endpoints.length, 1);
});

test('matches: Gateway API precedence as priority (method, then headers, then query); filters become plugins', () => {
  const m = base();
  put(m, gwc());
  put(m, obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [httpListener('http', 8080 + 1)] }));
  put(m, route('r', {
    parentRefs: [{ name: 'gw' }],
    rules: [
      { matches: [{ path: { type: 'Exact', value: '/x' }, headers: [{ name: 'X-A', value: '1' }, { name: 'X-B', value: '2' }] }], backendRefs: [backend('web')] },
      { matches: [{ path: { type: 'Exact', value: '/x' }, method: 'POST' }], backendRefs: [backend('api')] },
      {
        matches: [{ path: { type: 'PathPrefix', value: '/old' } }],
        filters: [{ type: 'RequestRedirect', requestRedirect: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/new' }, statusCode: 301 } }],
      },
      { matches: [{ path: { type: 'PathPrefix', value: '/h' } }], filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-Set', value: 'v' }], remove: ['X-Drop'] } }], backendRefs: [backend('web')] },
    ],
  }));
  const s = gatewayApiState(m.snapshot(), GA);
  const port = s.gateways.get('infra/gw')!.listeners[0]!.podPort!;
  const r = translate(m.snapshot(), O);
  const rules = r.config.data.routes[listenerHost(port, '_')]!.rules;
  const x = rules.filter((u) => u.path === '/x');
  assert.deepEqual(x.map((u) => u.route.backendId), ['infra_api_8080', 'infra_web_8080'], 'the method match goes first');
  const old = rules.find((u) => u.path === '/old')!;
  const redirect = r.config.data.plugins[old.route.plugins![0]!];
  // No scheme or port asked: the listener's (8081 is not HTTP's well-known port, so it is in the Location).
  assert.deepEqual({ ...redirect, name: undefined }, { name: undefined, type: 'redirect', status: 301, keepQuery: true, scheme: 'http', port: 8081, prefix: { from: '/old', to: '/new' } });
  const h = rules.find((u) => u.path === '/h')!;
  const hm = r.config.data.plugins[h.route.plugins![0]!];
  assert.deepEqual({ ...hm, name: undefined }, { name: undefined, type: 'request-headers', set: [{ name: 'x-set', value: 'v' }], add: [], remove: ['x-drop'] });
});

test('backendRef filters: a split share runs the rule\'s plugins and its own; one backend takes its filters as the route\'s; mirrors and ExtensionRef on a backendRef are refused by name', () => {
  const m = base();
  put(m, gwc());
  put(m, obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [httpListener('http', 80)] }));
  const setBackend = (v: string) => [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'Backend', value: v }] } }];
  put(m, route('weights', {
    parentRefs: [{ name: 'gw' }],
    hostnames: ['w.example.com'],
    rules: [{
      filters: [{ type: 'ResponseHeaderModifier', responseHeaderModifier: { add: [{ name: 'X-Rule', value: '1' }] } }],
      backendRefs: [backend('web', 8080, { weight: 10, filters: setBackend('web') }), backend('api', 8080, { weight: 10 })],
    }],
  }));
  put(m, route('one', {
    parentRefs: [{ name: 'gw' }],
    hostnames: ['one.example.com'],
    rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/prefix' } }], backendRefs: [backend('web', 8080, { filters: [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/rewritten' } } }] })] }],
  }));
  const s = gatewayApiState(m.snapshot(), GA);
  const port = s.gateways.get('infra/gw')!.listeners[0]!.podPort!;
  const r = translate(m.snapshot(), O);
  const w = r.config.data.routes[listenerHost(port, 'w.example.com')]!.rules[0]!.route;
  const typeOf = (id: string) => r.config.data.plugins[id]?.type;
  assert.equal(w.plugins?.length, 1, 'the rule\'s own filter is the route\'s');
  assert.equal(typeOf(w.plugins![0]!), 'response-headers');
  assert.equal(w.split?.length, 2);
  const [web, api] = w.split!;
  assert.equal(web!.backendId, 'infra_web_8080');
  assert.deepEqual(web!.plugins!.map(typeOf).sort(), ['request-headers', 'response-headers'], 'web\'s share: the rule\'s filter and its own');
  const own = r.config.data.plugins[web!.plugins!.find((id) => typeOf(id) === 'request-headers')!]!;
  assert.deepEqual((own as { set: unknown }).set, [{ name: 'backend', value: 'web' }]);
  assert.deepEqual(api!.plugins, w.plugins, 'api\'s share: the rule\'s filter only');
  const one = r.config.data.routes[listenerHost(port, 'one.example.com')]!.rules[0]!.route;
  assert.equal(one.split, undefined);
  assert.deepEqual(one.plugins!.map(typeOf), ['rewrite']);
  assert.deepEqual({ ...r.config.data.plugins[one.plugins![0]!], name: undefined }, { name: undefined, type: 'rewrite', prefix: { from: '/prefix', to: '/rewritten' } });
  // What a backendRef cannot have in Portico is refused by name (the route is not served half-way).
  for (const f of [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'api', port: 8080 } } }, { type: 'ExtensionRef', extensionRef: { group: 'portico.dev', kind: 'Plugin', name: 'p' } }]) {
    const bad = normalizeHttpRoute(route('bad', { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [backend('web', 8080, { filters: [f] })] }] }));
    assert.match(!bad.ok ? bad.reason : '', new RegExp(`spec\\.rules\\.0\\.backendRefs\\.0\\.filters\\.0: ${f.type} on a backendRef is not served`));
  }
});

test('appProtocol kubernetes.io/h2c: an HTTPRoute to such a Service port is proxied over HTTP/2 without TLS (grpc_pass); a rule mixing protocols stays HTTP/1.1 with a Warning', () => {
  const m = modelOf({
    services: [svc('h2', [{ port: 8081, targetPort: 3001, appProtocol: 'kubernetes.io/h2c' } as never, { port: 8080 }], 'infra'), svc('web', [{ port: 8080 }], 'infra')],
    slices: [slice('h2-1', 'h2', [{ port: 3001 }, { port: 8080 }], [{ ip: '198.18.0.40' }], 'infra'), slice('web-1', 'web', [{ port: 8080 }], [{ ip: '198.18.0.10' }], 'infra')],
  });
  put(m, gwc());
  put(m, obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [httpListener('http', 80)] }));
  put(m, route('h2c', { parentRefs: [{ name: 'gw' }], hostnames: ['h2c.example.com'], rules: [{ backendRefs: [backend('h2', 8081)] }] }));
  put(m, route('plain', { parentRefs: [{ name: 'gw' }], hostnames: ['plain.example.com'], rules: [{ backendRefs: [backend('h2', 8080)] }] }));
  put(m, route('mixed', { parentRefs: [{ name: 'gw' }], hostnames: ['mixed.example.com'], rules: [{ backendRefs: [backend('h2', 8081), backend('web', 8080)] }] }));
  const port = gatewayApiState(m.snapshot(), GA).gateways.get('infra/gw')!.listeners[0]!.podPort!;
  const r = translate(m.snapshot(), O);
  const protocolOf = (h: string) => {
    const name = r.config.data.routes[listenerHost(port, h)]!.rules[0]!.route.profile;
    return r.config.structure.profiles.find((p) => p.name === name)?.backendProtocol;
  };
  assert.equal(protocolOf('h2c.example.com'), 'GRPC', 'h2c port: grpc_pass');
  assert.equal(protocolOf('plain.example.com'), undefined, 'the same Service\'s other port stays HTTP/1.1');
  assert.equal(protocolOf('mixed.example.com'), undefined);
  assert.ok(r.events.some((e) => e.reason === 'MixedBackendProtocols' && /kubernetes\.io\/h2c/.test(e.message)), JSON.stringify(r.events.map((e) => e.reason)));
});

test('rule retry: connection errors and the listed statuses, attempts + 1 tries (the Upstream\'s retries otherwise); a status nginx cannot retry on, and sessionPersistence, refuse the route by name; backoff is a Warning', () => {
  const m = base();
  put(m, gwc());
  put(m, obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [httpListener('http', 80)] }));
  put(m, route('retry', { parentRefs: [{ name: 'gw' }], hostnames: ['retry.example.com'], rules: [{ backendRefs: [backend('web')], retry: { codes: [500, 503], attempts: 3, backoff: '100ms' } }] }));
  put(m, route('none', { parentRefs: [{ name: 'gw' }], hostnames: ['none.example.com'], rules: [{ backendRefs: [backend('web')], retry: { attempts: 0 } }] }));
  const port = gatewayApiState(m.snapshot(), GA).gateways.get('infra/gw')!.listeners[0]!.podPort!;
  const r = translate(m.snapshot(), O);
  const profileOf = (h: string) => {
    const name = r.config.data.routes[listenerHost(port, h)]!.rules[0]!.route.profile;
    return r.config.structure.profiles.find((p) => p.name === name);
  };
  assert.deepEqual([profileOf('retry.example.com')?.nextUpstream, profileOf('retry.example.com')?.nextUpstreamTries], ['error http_500 http_503', 4]);
  assert.equal(r.config.data.routes[listenerHost(port, 'retry.example.com')]!.rules[0]!.route.retryAttempts, 3, 'the balancer arranges the attempts (route data)');
  assert.equal(r.config.data.routes[listenerHost(port, 'none.example.com')]!.rules[0]!.route.retryAttempts, undefined);
  assert.deepEqual([profileOf('none.example.com')?.nextUpstream, profileOf('none.example.com')?.nextUpstreamTries], ['off', 1], 'attempts 0: no retry at all');
  assert.ok(r.events.some((e) => e.reason === 'RetryBackoffNotServed' && /100ms/.test(e.message)));
  const bad = normalizeHttpRoute(route('bad', { parentRefs: [{ name: 'gw' }], rules: [{ retry: { codes: [500, 501] } }] }));
  assert.match(!bad.ok ? bad.reason : '', /spec\.rules\.0\.retry\.codes: 501 is not a status nginx can retry on/);
  const sp = normalizeHttpRoute(route('sp', { parentRefs: [{ name: 'gw' }], rules: [{ sessionPersistence: { sessionName: 'x', type: 'Cookie' } }] }));
  assert.match(!sp.ok ? sp.reason : '', /spec\.rules\.0\.sessionPersistence: session persistence is not served/);
});

test('normalizers refuse what Portico does not serve by name, and what the API server would refuse', () => {
  const bad = normalizeHttpRoute(route('r', { parentRefs: [{ name: 'gw' }], rules: [{ filters: [{ type: 'ExtensionRef', extensionRef: { group: 'example.com', kind: 'Thing', name: 'x' } }] }] }));
  assert.equal(bad.ok, false);
  assert.match(!bad.ok ? bad.reason : '', /spec\.rules\.0\.filters\.0\.extensionRef: example\.com\/Thing is not an extension Portico knows/);
  const other = normalizeHttpRoute(route('r', { parentRefs: [{ name: 'gw' }], rules: [{ filters: [{ type: 'RequestMirror2' }] }] }));
  assert.match(!other.ok ? other.reason : '', /filter type RequestMirror2 is not served/);
  const path = normalizeHttpRoute(route('r', { rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/a//b' } }] }] }));
  assert.match(!path.ok ? path.reason : '', /must not contain "\/\/"/);
  const host = normalizeHttpRoute(route('r', { hostnames: ['Foo.example.com'] }));
  assert.equal(host.ok, false);
  const cls = normalizeGatewayClass(obj('GatewayClass', 'c', { controllerName: 'x/y', parametersRef: { group: 'g', kind: 'K', name: 'n' } }, undefined));
  assert.match(!cls.ok ? cls.reason : '', /parametersRef/);
  const gw = normalizeGateway(obj('Gateway', 'g', { gatewayClassName: 'portico', listeners: [httpListener('http', 80)], addresses: [{ type: 'IPAddress', value: '198.51.100.1' }, { value: 'not-an-ip' }] }));
  assert.match(!gw.ok ? gw.reason : '', /spec\.addresses\.1\.value: "not-an-ip" is not an IP address/);
});

test('Gateway addresses: IPAddress ones (with a value or without) are recorded; other types are kept for the attachment to refuse', () => {
  const addresses = [{ type: 'IPAddress', value: '198.19.100.7' }, { type: 'IPAddress' }, { value: '2001:db8::1' }, { type: 'Hostname', value: 'gw.example.com' }];
  const gw = normalizeGateway(obj('Gateway', 'g', { gatewayClassName: 'portico', listeners: [httpListener('http', 80)], addresses }));
  assert.ok(gw.ok, !gw.ok ? gw.reason : '');
  assert.deepEqual(gw.record.addresses, [{ type: 'IPAddress', value: '198.19.100.7' }, { type: 'IPAddress' }, { type: 'IPAddress', value: '2001:db8::1' }, { type: 'Hostname', value: 'gw.example.com' }]);
});

test('a Gateway with an address Portico cannot serve (not IPAddress, or another routability) is not accepted (UnsupportedAddress) and serves nothing', () => {
  const m = base();
  put(m, gwc());
  const listeners = [httpListener('http', 80)];
  put(m, obj('Gateway', 'fake', { gatewayClassName: 'portico', listeners, addresses: [{ type: 'test/fake-invalid-type', value: 'fake address teehee!' }, { type: 'IPAddress', value: '198.19.100.7' }] }));
  put(m, obj('Gateway', 'named', { gatewayClassName: 'portico', listeners, addresses: [{ type: 'NamedAddress', value: 'pool-a' }, { type: 'Hostname', value: 'gw.example.com' }] }));
  put(m, obj('Gateway', 'routable', { gatewayClassName: 'portico', listeners, addresses: [{ type: 'IPAddress', value: '198.19.100.8', routability: 'example.com/Internet' }] }));
  put(m, obj('Gateway', 'ok', { gatewayClassName: 'portico', listeners: [httpListener('http', 81)], addresses: [{ type: 'IPAddress' }, { type: 'IPAddress', value: '198.19.100.9', routability: 'Cluster' }] }));
  put(m, route('r', { parentRefs: [{ name: 'fake' }, { name: 'named' }, { name: 'routable' }], hostnames: ['a.example.com'], rules: [{ backendRefs: [backend('web')] }] }));
  const s = gatewayApiState(m.snapshot(), GA);
  const fake = s.gateways.get('infra/fake')!;
  assert.deepEqual([fake.accepted.status, fake.accepted.reason], ['False', 'UnsupportedAddress']);
  assert.match(fake.accepted.message, /^spec\.addresses\.0 \(type test\/fake-invalid-type, value "fake address teehee!"\): Portico serves addresses of type IPAddress only/);
  assert.doesNotMatch(fake.accepted.message, /198\.19\.100\.7/, 'the servable address is not named');
  const named = s.gateways.get('infra/named')!;
  assert.match(named.accepted.message, /spec\.addresses\.0 \(type NamedAddress, value "pool-a"\), spec\.addresses\.1 \(type Hostname, value "gw\.example\.com"\): .*remove these addresses/);
  assert.match(s.gateways.get('infra/routable')!.accepted.message, /routability example\.com\/Internet/);
  for (const k of ['infra/fake', 'infra/named', 'infra/routable']) {
    const g = s.gateways.get(k)!;
    assert.equal(g.accepted.reason, 'UnsupportedAddress', k);
    assert.deepEqual(g.listeners.map((l) => [l.podPort, l.usable, l.programmed.status]), [[undefined, false, 'False']], k);
  }
  assert.deepEqual([s.gateways.get('infra/ok')!.accepted.status, s.gateways.get('infra/ok')!.listeners[0]!.usable], ['True', true]);
  assert.deepEqual(s.ports.map((p) => p.hostnames), [['']], 'only the accepted Gateway has a pod port');
  assert.deepEqual(Object.keys(translate(m.snapshot(), O).config.data.routes), [], 'the route is served nowhere');
});

test('Gateway fields Portico does not serve are refused by name, never dropped: a listener filter phase other than requests, defaultScope', () => {
  const f = normalizeGateway(obj('Gateway', 'g', { gatewayClassName: 'portico', listeners: [httpListener('http', 80, { filters: { request: [{ type: 'RequestHeaderModifier' }] } })] }));
  assert.match(!f.ok ? f.reason : '', /spec\.listeners\.0\.filters: request: only filters\.requests is served/);
  const d = normalizeGateway(obj('Gateway', 'g', { gatewayClassName: 'portico', listeners: [httpListener('http', 80)], defaultScope: 'All' }));
  assert.match(!d.ok ? d.reason : '', /spec\.defaultScope: default Gateways are not served/);
  assert.equal(normalizeGateway(obj('Gateway', 'g', { gatewayClassName: 'portico', listeners: [httpListener('http', 80, { filters: {} })] })).ok, true, 'an empty filters object asks nothing');
});

test('header and query regexes are values, not paths: no leading "/" needed, spaces allowed; what PCRE2 refuses is still refused', () => {
  const hdr = (value: string) => normalizeHttpRoute(route('r', { rules: [{ matches: [{ headers: [{ type: 'RegularExpression', name: 'cookie', value }], queryParams: [{ type: 'RegularExpression', name: 'q', value }] }] }] }));
  for (const ok of ['(^|\\W)canary=always(\\W|$)', '^(1|true)$', 'Mozilla .*']) assert.equal(hdr(ok).ok, true, ok);
  const bad = hdr('a(?i)b');
  assert.match(!bad.ok ? bad.reason : '', /spec\.rules\.0\.matches\.0\.headers\.0\.value: regular expression/);
});

test('HTTPS listeners: certificates under the pod port (the hostname\'s, or "_" for a listener without one), never in the Ingress table', () => {
  const m = base();
  const mat = (key: string) => ({ key, ok: true as const, cert: `C ${key}`, privateKey: 'K', hosts: [], notAfter: '2099-01-01T00:00:00.000Z', fingerprint: key });
  m.setSecret(mat('infra/named'));
  m.setSecret(mat('infra/any'));
  put(m, gwc());
  const https = (name: string, cert: string, hostname?: string) => ({ name, port: 443, protocol: 'HTTPS', ...(hostname ? { hostname } : {}), tls: { certificateRefs: [{ name: cert }] } });
  put(m, obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [https('named', 'named', 'secure.example.com'), https('any', 'any')] }));
  put(m, route('r', { parentRefs: [{ name: 'gw' }], hostnames: ['secure.example.com', 'app.example.com'], rules: [{ backendRefs: [backend('web')] }] }));
  const s = gatewayApiState(m.snapshot(), GA);
  assert.deepEqual(s.ports.map((p) => p.ssl), [true]);
  const port = s.ports[0]!.port;
  const r = translate(m.snapshot(), O);
  assert.equal(r.config.data.certificates[`${port}/secure.example.com`]?.source, 'infra/named');
  assert.equal(r.config.data.certificates[`${port}/_`]?.source, 'infra/any');
  assert.deepEqual(Object.keys(r.config.data.certificates).filter((k) => !k.startsWith(`${port}/`)), [], 'nothing in the table Ingress ports use');
});

test('listener isolation (the conformance layout): four listeners of one port, routes without hostnames', () => {
  const m = base();
  put(m, gwc());
  put(m, obj('Gateway', 'iso', { gatewayClassName: 'portico', listeners: [httpListener('empty', 80), httpListener('wild', 80, { hostname: '*.example.com' }), httpListener('wildfoo', 80, { hostname: '*.foo.example.com' }), httpListener('abc', 80, { hostname: 'abc.foo.example.com' })] }));
  for (const l of ['empty', 'wild', 'wildfoo', 'abc']) {
    put(m, route(`to-${l}`, { parentRefs: [{ name: 'iso', sectionName: l }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: `/${l}` } }], backendRefs: [backend('web')] }] }));
  }
  const s = gatewayApiState(m.snapshot(), GA);
  const port = s.gateways.get('infra/iso')!.listeners[0]!.podPort!;
  assert.deepEqual(s.gateways.get('infra/iso')!.listeners.map((l) => [l.name, l.usable, l.attachedRoutes]), [['empty', true, 1], ['wild', true, 1], ['wildfoo', true, 1], ['abc', true, 1]]);
  const r = translate(m.snapshot(), O);
  // Routes without hostnames: under their listener's host, in the tier of routes without hostnames ("#").
  const paths = (h: string) => r.config.data.routes[routeHostKey(port, h, [])]?.rules.map((x) => x.path);
  assert.equal(routeHostKey(port, '*.example.com', []), `${port}/*.example.com#`);
  assert.deepEqual(paths('_'), ['/empty']);
  assert.deepEqual(paths('*.example.com'), ['/wild']);
  assert.deepEqual(paths('*.foo.example.com'), ['/wildfoo']);
  assert.deepEqual(paths('abc.foo.example.com'), ['/abc']);
});

test('a Gateway with infrastructure.parametersRef is not accepted (InvalidParameters) and serves nothing', () => {
  const m = base();
  put(m, gwc());
  put(m, obj('Gateway', 'p', { gatewayClassName: 'portico', listeners: [httpListener('http', 80)], infrastructure: { parametersRef: { group: 'invalid.io', kind: 'InvalidParameters', name: 'x' } } }));
  put(m, route('r', { parentRefs: [{ name: 'p' }], rules: [{ backendRefs: [backend('web')] }] }));
  const s = gatewayApiState(m.snapshot(), GA);
  const gw = s.gateways.get('infra/p')!;
  assert.deepEqual([gw.accepted.status, gw.accepted.reason], ['False', 'InvalidParameters']);
  assert.equal(gw.listeners[0]!.podPort, undefined);
  assert.deepEqual(s.ports, []);
  assert.deepEqual(Object.keys(translate(m.snapshot(), O).config.data.routes), []);
});

test('CORS filter: the cors plugin with wildcard origins; "*" methods and headers echo the preflight; what it cannot serve refuses the route', () => {
  const m = base();
  put(m, gwc());
  put(m, obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [httpListener('http', 80)] }));
  put(m, route('c', {
    parentRefs: [{ name: 'gw' }],
    rules: [{ filters: [{ type: 'CORS', cors: { allowOrigins: ['https://www.foo.com', 'https://*.bar.com'], allowMethods: ['*'], allowHeaders: ['X-Header-1'], exposeHeaders: ['x-header-3'], allowCredentials: true, maxAge: 3600 } }], backendRefs: [backend('web')] }],
  }));
  const port = gatewayApiState(m.snapshot(), GA).gateways.get('infra/gw')!.listeners[0]!.podPort!;
  const r = translate(m.snapshot(), O);
  const rule = r.config.data.routes[listenerHost(port, '_')]!.rules[0]!;
  const inst = r.config.data.plugins[rule.route.plugins![0]!];
  assert.deepEqual({ ...inst, name: undefined }, { name: undefined, type: 'cors', allowOrigins: ['https://www.foo.com', 'https://*.bar.com'], allowMethods: [], allowHeaders: ['x-header-1'], exposeHeaders: ['x-header-3'], allowCredentials: true, maxAgeSeconds: 3600, answerPreflights: true });
  // Gateway API defines "*" with credentials (the origin is echoed with credentials allowed): served as written.
  const any = normalizeHttpRoute(route('b', { rules: [{ filters: [{ type: 'CORS', cors: { allowOrigins: ['*'], allowCredentials: true } }] }] }));
  assert.equal(any.ok, true);
  const expose = normalizeHttpRoute(route('b', { rules: [{ filters: [{ type: 'CORS', cors: { allowOrigins: ['https://a.example'], exposeHeaders: ['*'] } }] }] }));
  assert.match(!expose.ok ? expose.reason : '', /exposeHeaders: "\*" is not served/);
});

test('Gateway ports are bounded per namespace (oldest Gateways first); other namespaces keep theirs', () => {
  const m = base();
  put(m, gwc());
  for (let i = 0; i < MAX_PORTS_PER_NAMESPACE + 2; i++) put(m, obj('Gateway', `g${String(i).padStart(3, '0')}`, { gatewayClassName: 'portico', listeners: [httpListener('http', 80)] }, 'greedy', { creationTimestamp: `2026-01-01T00:${String(Math.floor(i / 60)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z` }));
  put(m, obj('Gateway', 'mine', { gatewayClassName: 'portico', listeners: [httpListener('http', 80)] }, 'other', { creationTimestamp: '2026-01-02T00:00:00Z' }));
  const s = gatewayApiState(m.snapshot(), GA);
  const greedy = [...s.gateways.values()].filter((g) => g.key.startsWith('greedy/'));
  assert.equal(greedy.filter((g) => g.listeners[0]!.podPort !== undefined).length, MAX_PORTS_PER_NAMESPACE);
  const last = s.gateways.get(`greedy/g${String(MAX_PORTS_PER_NAMESPACE + 1).padStart(3, '0')}`)!.listeners[0]!;
  assert.deepEqual([last.podPort, last.programmed.status], [undefined, 'False']);
  assert.match(last.programmed.message, /limit per namespace/);
  assert.notEqual(s.gateways.get('other/mine')!.listeners[0]!.podPort, undefined);
});

test('RequestMirror: a directive profile with nginx\'s mirror, the copy to the mirror\'s backend with the request\'s Host; a share of the requests takes a slot', () => {
  const m = base();
  put(m, gwc());
  put(m, obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [httpListener('http', 80)] }));
  put(m, route('mir', { parentRefs: [{ name: 'gw' }], rules: [{ filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'api', port: 8080 } } }], backendRefs: [backend('web')] }] }));
  const port = gatewayApiState(m.snapshot(), GA).gateways.get('infra/gw')!.listeners[0]!.podPort!;
  const r = translate(m.snapshot(), O);
  const route0 = r.config.data.routes[listenerHost(port, '_')]!.rules[0]!.route;
  assert.equal(route0.backendId, 'infra_web_8080');
  assert.equal(route0.split, undefined, 'the mirror is not part of the split');
  assert.deepEqual(route0.mirrors, [{ backendId: 'infra_api_8080', scheme: 'http', host: '', serverName: 'api.infra.svc', requestUri: true }]);
  const profile = r.config.structure.profiles.find((p) => p.name === route0.profile);
  assert.deepEqual(profile?.mirror, { body: true });
  assert.equal(r.config.data.backends['infra_api_8080']?.endpoints.length, 1, 'the mirror\'s backend is resolved');
  const share = normalizeHttpRoute(route('s', { rules: [{ filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'api', port: 8080 }, percent: 50 } }] }] }));
  assert.deepEqual(share.ok && share.record.rules[0]!.filters, [{ type: 'RequestMirror', backend: { group: '', kind: 'Service', name: 'api', namespace: 'infra', port: 8080, weight: 1 }, share: { numerator: 50, denominator: 100 } }]);
});

test('ExtensionRef to a Portico Plugin: the rule runs it; a missing Plugin fails the rule closed (503), as for Routes', () => {
  const m = base();
  put(m, gwc());
  put(m, obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [httpListener('http', 80)] }));
  put(m, route('p', { parentRefs: [{ name: 'gw' }], rules: [{ filters: [{ type: 'ExtensionRef', extensionRef: { group: 'portico.dev', kind: 'Plugin', name: 'missing' } }], backendRefs: [backend('web')] }] }));
  const port = gatewayApiState(m.snapshot(), GA).gateways.get('infra/gw')!.listeners[0]!.podPort!;
  const r = translate(m.snapshot(), O);
  const route0 = r.config.data.routes[listenerHost(port, '_')]!.rules[0]!.route;
  assert.equal(route0.action, 'unavailable');
  assert.match(route0.closedReason ?? '', /missing/);
});

test('the state follows HTTPRoute changes in place and always equals the state computed anew; other changes recompute it', () => {
  const m = base();
  put(m, gwc());
  put(m, obj('Namespace', 'apps', {}, undefined, { labels: { team: 'a' } }));
  put(m, obj('Namespace', 'infra', {}, undefined, {}));
  put(m, obj('Gateway', 'gw', {
    gatewayClassName: 'portico',
    listeners: [
      httpListener('any', 80, { allowedRoutes: { namespaces: { from: 'All' } } }),
      httpListener('wild', 80, { hostname: '*.example.com', allowedRoutes: { namespaces: { from: 'All' } } }),
      httpListener('sel', 81, { allowedRoutes: { namespaces: { from: 'Selector', selector: { matchLabels: { team: 'a' } } } } }),
    ],
  }));
  put(m, obj('ReferenceGrant', 'g', { from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'infra' }], to: [{ group: '', kind: 'Service' }] }, 'apps'));
  const first = gatewayApiState(m.snapshot(), GA);
  const sections = [undefined, 'any', 'wild', 'sel', 'none'];
  const hostnames = [[], ['a.example.com'], ['*.example.com'], ['x.example.org'], ['a.example.com', 'x.example.org']];
  const backends = [backend('web'), backend('other', 8080, { namespace: 'apps' }), backend('gone'), backend('api')];
  const r = rng(7);
  const next = (n: number) => Math.floor(r() * n);
  for (let step = 0; step < 60; step++) {
    const name = `r${next(8)}`;
    const ns = next(2) ? 'infra' : 'apps';
    const key = `${ns}/${name}`;
    if (next(4) === 0) m.deleteCrd('HTTPRoute', key);
    else {
      const section = sections[next(sections.length)];
      const parentRefs = [{ name: 'gw', namespace: 'infra', ...(section ? { sectionName: section } : {}) }, ...(next(3) === 0 ? [{ name: 'absent', namespace: 'infra' }] : [])];
      put(m, route(name, { parentRefs, hostnames: hostnames[next(hostnames.length)], rules: [{ backendRefs: [backends[next(backends.length)]] }] }, ns));
    }
    const s = gatewayApiState(m.snapshot(), GA);
    assert.equal(s, first, `step ${step}: updated in place`);
    assert.deepStrictEqual(s, gatewayApiStateAnew(m.snapshot(), GA), `step ${step}`);
  }
  assert.ok([...first.gateways.get('infra/gw')!.listeners].some((l) => l.attachedRoutes > 0));
  // A Service a route names appears: computed anew (a route's ResolvedRefs may change), and equal again.
  m.setService(normalizeService(svc('gone', [{ port: 8080 }], 'infra')));
  const after = gatewayApiState(m.snapshot(), GA);
  assert.notEqual(after, first);
  assert.deepStrictEqual(after, gatewayApiStateAnew(m.snapshot(), GA));
  // A Namespace's labels change: computed anew.
  put(m, obj('Namespace', 'apps', {}, undefined, { labels: {} }));
  const relabelled = gatewayApiState(m.snapshot(), GA);
  assert.notEqual(relabelled, after);
  assert.deepStrictEqual(relabelled, gatewayApiStateAnew(m.snapshot(), GA));
});

test('an Upstream is the policy of its Service for HTTPRoute backends too (balancing, passive health, timeouts), as for Ingresses', () => {
  const m = base();
  put(m, gwc());
  put(m, obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [httpListener('http', 80)] }));
  put(m, route('r', { parentRefs: [{ name: 'gw' }], hostnames: ['u.example.com'], rules: [{ backendRefs: [backend('web')] }] }));
  const u = normalizeUpstream({ apiVersion: 'portico.dev/v1alpha1', kind: 'Upstream', metadata: { name: 'web', namespace: 'infra', uid: 'u', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { service: { name: 'web' }, loadBalancer: { algorithm: 'ConsistentHash', hashOn: { header: 'X-User' } }, healthCheck: { passive: { failures: 2, ejectDuration: '10s' } }, timeouts: { read: '90s' }, retries: { attempts: 2, on: ['error', 'http_502'] } } } as KubeObject);
  assert.ok(u.ok);
  m.setCrd('Upstream', u.record);
  const port = gatewayApiState(m.snapshot(), GA).gateways.get('infra/gw')!.listeners[0]!.podPort!;
  const r = translate(m.snapshot(), O);
  const b = r.config.data.backends['infra_web_8080'];
  assert.equal(b?.balance, 'chash');
  assert.equal(b?.hashBy, '$http_x_user');
  assert.deepEqual(b?.passiveHealth, { failures: 2, statuses: [502, 503, 504], ejectSeconds: 10 });
  const rt = r.config.data.routes[listenerHost(port, 'u.example.com')]?.rules[0]?.route;
  assert.equal(rt?.timeouts?.read, 90, "the Upstream's read timeout");
  const prof = r.config.structure.profiles.find((p) => p.name === rt?.profile);
  assert.deepEqual([prof?.nextUpstream, prof?.nextUpstreamTries], ['error http_502', 3], "the Upstream's retries");
});
