// ListenerSets through their normalizer, the attachment and the pure translation (the layouts of gateway-api
// v1.7.0's listenerset-* conformance tests, and what they leave open: ports, caps, tenant safety). No cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { Model } from '../../model/model.ts';
import { normalizeGateway } from '../../kinds/gateway/normalize.ts';
import { normalizeGatewayClass } from '../../kinds/gatewayclass/index.ts';
import { normalizeHttpRoute } from '../../kinds/httproute/normalize.ts';
import { normalizeListenerSet } from '../../kinds/listenerset/normalize.ts';
import { normalizeNamespace } from '../../kinds/namespace/index.ts';
import { normalizeReferenceGrant } from '../../kinds/referencegrant/index.ts';
import { normalizeStreamRoute } from '../../kinds/tcproute/normalize.ts';
import { modelOf, OPTS, slice, svc } from '../fixtures.test-helpers.ts';
import { translate, type TranslateOptions } from '../translate.ts';
import { gatewayApiState, gatewayApiStateAnew, routeHostKey, MAX_PORTS_PER_NAMESPACE, type GatewayApiOptions, type GatewayApiState } from './attach.ts';

const GA: GatewayApiOptions = { controllerName: 'portico.dev/gateway-controller', reservedPorts: [8080, 8443, 10246] };
const O: TranslateOptions = { ...OPTS, gatewayApi: GA };

let t0 = 0;
const obj = (kind: string, name: string, spec: unknown, ns: string | undefined = 'infra', extra: Record<string, unknown> = {}): KubeObject =>
  ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind,
    metadata: { name, ...(ns ? { namespace: ns } : {}), uid: `uid-${name}`, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z', ...extra },
    spec,
  }) as KubeObject;

function put(m: Model, o: KubeObject): void {
  const kind = o.kind as 'GatewayClass' | 'Gateway' | 'ListenerSet' | 'HTTPRoute' | 'ReferenceGrant' | 'Namespace' | 'TCPRoute';
  const n =
    kind === 'GatewayClass'
      ? normalizeGatewayClass(o)
      : kind === 'Gateway'
        ? normalizeGateway(o)
        : kind === 'ListenerSet'
          ? normalizeListenerSet(o)
          : kind === 'HTTPRoute'
            ? normalizeHttpRoute(o)
            : kind === 'ReferenceGrant'
              ? normalizeReferenceGrant(o)
              : kind === 'TCPRoute'
                ? normalizeStreamRoute('TCPRoute', o)
                : normalizeNamespace(o);
  assert.ok(n.ok, !n.ok ? `${kind} ${o.metadata.name}: ${n.reason}` : '');
  m.setCrd(kind, n.record as never);
}

const gwc = () => obj('GatewayClass', 'portico', { controllerName: GA.controllerName }, undefined);
const http = (name: string, port: number, hostname?: string, from = 'All', extra: Record<string, unknown> = {}) => ({ name, port, protocol: 'HTTP', ...(hostname ? { hostname } : {}), allowedRoutes: { namespaces: { from } }, ...extra });
const gateway = (name: string, listeners: unknown[], allowed?: Record<string, unknown>, ns = 'infra') => obj('Gateway', name, { gatewayClassName: 'portico', listeners, ...(allowed ? { allowedListeners: { namespaces: allowed } } : {}) }, ns);
const lset = (name: string, gw: string, listeners: unknown[], ns = 'infra', gwNs = 'infra', extra: Record<string, unknown> = {}) =>
  obj('ListenerSet', name, { parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: gw, namespace: gwNs }, listeners }, ns, extra);
const lsRef = (name: string, ns = 'infra', sectionName?: string) => ({ group: 'gateway.networking.k8s.io', kind: 'ListenerSet', name, namespace: ns, ...(sectionName ? { sectionName } : {}) });
const route = (name: string, parentRefs: unknown[], path: string, backend = 'web', ns = 'infra') =>
  obj('HTTPRoute', name, { parentRefs, rules: [{ matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs: [{ name: backend, namespace: 'infra', port: 8080 }] }] }, ns);

function base(): Model {
  const m = modelOf({
    services: [svc('web', [{ port: 8080 }], 'infra'), svc('api', [{ port: 8080 }], 'infra')],
    slices: [slice('web-1', 'web', [{ port: 8080 }], [{ ip: '198.18.0.10' }], 'infra'), slice('api-1', 'api', [{ port: 8080 }], [{ ip: '198.18.0.20' }], 'infra')],
  });
  put(m, gwc());
  return m;
}

const conds = (s: GatewayApiState, key: string) => {
  const ls = s.listenerSets.get(key)!;
  return [ls.accepted.status, ls.accepted.reason];
};
const listenerOf = (s: GatewayApiState, key: string, name: string) => s.listenerSets.get(key)!.listeners.find((l) => l.name === name)!;

test('normalizer: parentRef defaults (namespace the ListenerSet\'s), listeners as a Gateway\'s; a filter phase other than requests, tls.options and more than 64 listeners refused by name', () => {
  const ok = normalizeListenerSet(obj('ListenerSet', 'ls', { parentRef: { name: 'gw' }, listeners: [http('a', 80, 'a.example.com'), { name: 's', port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'c' }] } }] }, 'apps'));
  assert.ok(ok.ok);
  assert.deepEqual(ok.record.parent, { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'apps', name: 'gw' });
  assert.deepEqual(ok.record.listeners[1]!.tls!.certificateRefs, [{ group: '', kind: 'Secret', name: 'c', namespace: 'apps' }], 'certificateRefs default to the ListenerSet\'s namespace');
  const filters = normalizeListenerSet(obj('ListenerSet', 'ls', { parentRef: { name: 'gw' }, listeners: [http('a', 80, undefined, 'All', { filters: { connection: [{ type: 'X' }] } })] }));
  assert.ok(!filters.ok && /spec\.listeners\.0\.filters: connection/.test(filters.reason), !filters.ok ? filters.reason : '');
  const served = normalizeListenerSet(obj('ListenerSet', 'ls', { parentRef: { name: 'gw' }, listeners: [http('a', 80, undefined, 'All', { filters: { requests: [{ type: 'ExtensionRef', extensionRef: { group: 'portico.dev', kind: 'Plugin', name: 'p' } }] } })] }, 'apps'));
  assert.ok(served.ok);
  assert.deepEqual(served.record.listeners[0]!.filters, [{ type: 'ExtensionRef', extensionRef: { group: 'portico.dev', kind: 'Plugin', name: 'p' } }], 'listener filters are served (judged by the attachment)');
  const opts = normalizeListenerSet(obj('ListenerSet', 'ls', { parentRef: { name: 'gw' }, listeners: [{ name: 's', port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'c' }], options: { a: 'b' } } }] }));
  assert.ok(!opts.ok && /spec\.listeners\.0\.tls\.options/.test(opts.reason));
  const many = normalizeListenerSet(obj('ListenerSet', 'ls', { parentRef: { name: 'gw' }, listeners: Array.from({ length: 65 }, (_, i) => http(`l${i}`, 80, `h${i}.example.com`)) }));
  assert.ok(!many.ok && /spec\.listeners/.test(many.reason));
  const dup = normalizeListenerSet(obj('ListenerSet', 'ls', { parentRef: { name: 'gw' }, listeners: [http('a', 80, 'a.example.com'), http('a', 80, 'b.example.com')] }));
  assert.ok(!dup.ok && /unique/.test(dup.reason));
  // The Gateway's allowedListeners: None unless written.
  const g = normalizeGateway(gateway('gw', [http('a', 80)]));
  assert.ok(g.ok);
  assert.deepEqual(g.record.allowedListeners, { from: 'None' });
});

test('allowedListeners: None (default and written) and Same refuse other namespaces (NotAllowed), Selector picks by labels, All takes any; the Gateway counts the accepted ones', () => {
  const m = base();
  put(m, obj('Namespace', 'picked', {}, undefined, { labels: { allowed: 'ns' } }));
  put(m, obj('Namespace', 'other', {}, undefined, {}));
  put(m, gateway('default', [http('gw', 80, 'gw.example.com')]));
  put(m, gateway('none', [http('gw', 80, 'gw.example.com')], { from: 'None' }));
  put(m, gateway('same', [http('gw', 80, 'gw.example.com')], { from: 'Same' }));
  put(m, gateway('sel', [http('gw', 80, 'gw.example.com')], { from: 'Selector', selector: { matchLabels: { allowed: 'ns' } } }));
  put(m, gateway('all', [http('gw', 80, 'gw.example.com')], { from: 'All' }));
  put(m, lset('ls', 'default', [http('l', 80, 'ls.example.com')]));
  put(m, lset('ls', 'none', [http('l', 80, 'ls.example.com')], 'infra2'));
  put(m, lset('ls-same', 'same', [http('l', 80, 'ls.example.com')]));
  put(m, lset('ls-other', 'same', [http('l', 80, 'ls2.example.com')], 'other'));
  put(m, lset('ls-picked', 'sel', [http('l', 80, 'ls.example.com')], 'picked'));
  put(m, lset('ls-other', 'sel', [http('l', 80, 'ls2.example.com')], 'other2'));
  put(m, lset('ls-any', 'all', [http('l', 80, 'ls.example.com')], 'other'));
  const s = gatewayApiState(m.snapshot(), GA);
  assert.deepEqual(conds(s, 'infra/ls'), ['False', 'NotAllowed']);
  assert.deepEqual(conds(s, 'infra2/ls'), ['False', 'NotAllowed']);
  assert.deepEqual(conds(s, 'infra/ls-same'), ['True', 'Accepted']);
  assert.deepEqual(conds(s, 'other/ls-other'), ['False', 'NotAllowed']);
  assert.deepEqual(conds(s, 'picked/ls-picked'), ['True', 'Accepted']);
  assert.deepEqual(conds(s, 'other2/ls-other'), ['False', 'NotAllowed'], 'a namespace unknown to Portico has no labels: not selected');
  assert.deepEqual(conds(s, 'other/ls-any'), ['True', 'Accepted']);
  assert.deepEqual(['default', 'none', 'same', 'sel', 'all'].map((g) => s.gateways.get(`infra/${g}`)!.attachedListenerSets), [0, 0, 1, 1, 1]);
  // A refused set's listeners are not the Gateway's: not served, not on its port.
  const refused = listenerOf(s, 'infra/ls', 'l');
  assert.deepEqual([refused.accepted.reason, refused.programmed.status, refused.usable, refused.podPort], ['NotAllowed', 'False', false, undefined]);
  assert.deepEqual(s.gateways.get('infra/default')!.listeners.map((l) => l.name), ['gw']);
  assert.deepEqual(s.gateways.get('infra/same')!.listeners.map((l) => [l.name, l.set ?? null]), [['gw', null], ['l', 'infra/ls-same']]);
  // The accepted set's listener shares the Gateway's port 80: one pod port, both hostnames.
  const same = s.gateways.get('infra/same')!;
  assert.equal(same.listeners[1]!.podPort, same.listeners[0]!.podPort);
  assert.deepEqual(s.ports.find((p) => p.port === same.listeners[0]!.podPort)?.hostnames, ['gw.example.com', 'ls.example.com']);
  // A set naming a Gateway that is not Portico's (or not there) is not Portico's to report.
  put(m, lset('stray', 'absent', [http('l', 80)]));
  assert.equal(gatewayApiState(m.snapshot(), GA).listenerSets.has('infra/stray'), false);
});

test('hostname and protocol conflicts (the conformance layouts): the Gateway\'s own listeners first, then sets by age and name; a set with no valid listener is ListenersNotValid', () => {
  for (const kind of ['hostname', 'protocol'] as const) {
    const m = base();
    const clash = (name: string) => (kind === 'hostname' ? http(name, 80, `${name}.com`) : { name, port: 80, protocol: 'TCP', allowedRoutes: { namespaces: { from: 'All' } } });
    put(m, gateway('gw', [http('gateway-listener', 80, 'gateway-listener.com'), http('conflict-with-gateway-listener', 80, 'conflict-with-gateway-listener.com')], { from: 'Same' }));
    put(m, lset('ls-with-gateway-1', 'gw', [http('listener-set-1-listener', 80, 'listener-set-1-listener.com'), clash('conflict-with-gateway-listener'), http('conflict-with-listener-set-listener', 80, 'conflict-with-listener-set-listener.com')]));
    put(m, lset('ls-with-gateway-2', 'gw', [clash('conflict-with-gateway-listener')]));
    put(m, lset('ls-with-listener-set-1', 'gw', [http('listener-set-2-listener', 80, 'listener-set-2-listener.com'), kind === 'hostname' ? http('conflict-with-listener-set-listener', 80, 'conflict-with-listener-set-listener.com') : clash('conflict-with-listener-set-listener')]));
    put(m, lset('ls-with-listener-set-2', 'gw', [kind === 'hostname' ? http('conflict-with-listener-set-listener', 80, 'conflict-with-listener-set-listener.com') : clash('conflict-with-listener-set-listener')]));
    const s = gatewayApiState(m.snapshot(), GA);
    const reason = kind === 'hostname' ? 'HostnameConflict' : 'ProtocolConflict';
    const gw = s.gateways.get('infra/gw')!;
    assert.deepEqual(gw.listeners.filter((l) => !l.set).map((l) => [l.name, l.accepted.status, l.conflicted.status, l.usable]), [
      ['gateway-listener', 'True', 'False', true],
      ['conflict-with-gateway-listener', 'True', 'False', true],
    ], `${kind}: the Gateway's own listeners are never conflicted by a set`);
    assert.equal(gw.attachedListenerSets, 2, kind);
    assert.deepEqual(conds(s, 'infra/ls-with-gateway-1'), ['True', 'ListenersNotValid']);
    assert.deepEqual(conds(s, 'infra/ls-with-gateway-2'), ['False', 'ListenersNotValid']);
    assert.deepEqual(conds(s, 'infra/ls-with-listener-set-1'), ['True', 'ListenersNotValid']);
    assert.deepEqual(conds(s, 'infra/ls-with-listener-set-2'), ['False', 'ListenersNotValid']);
    const c = listenerOf(s, 'infra/ls-with-gateway-1', 'conflict-with-gateway-listener');
    assert.deepEqual([c.accepted.status, c.accepted.reason, c.programmed.reason, c.conflicted.status, c.conflicted.reason, c.podPort], ['False', reason, reason, 'True', reason, undefined]);
    // The older (alphabetically first) set's listener wins the name; the later one is conflicted.
    const winner = listenerOf(s, 'infra/ls-with-gateway-1', 'conflict-with-listener-set-listener');
    assert.deepEqual([winner.accepted.status, winner.conflicted.status, winner.usable], ['True', 'False', true]);
    const loser = listenerOf(s, 'infra/ls-with-listener-set-1', 'conflict-with-listener-set-listener');
    assert.deepEqual([loser.accepted.reason, loser.conflicted.reason], [reason, reason]);
    assert.deepEqual(listenerOf(s, 'infra/ls-with-listener-set-2', 'conflict-with-listener-set-listener').conflicted.reason, reason);
    // A conflicted message does not name the other listener's object (it may be another tenant's).
    assert.doesNotMatch(c.conflicted.message, /ls-with|infra\//);
  }
  // Age goes before the name: an older set wins even when its name sorts later.
  const m = base();
  put(m, gateway('gw', [http('g', 80, 'g.example.com')], { from: 'Same' }));
  put(m, lset('zzz-old', 'gw', [http('x', 80, 'x.example.com')], 'infra', 'infra', { creationTimestamp: '2025-01-01T00:00:00Z' }));
  put(m, lset('aaa-new', 'gw', [http('x', 80, 'x.example.com')], 'infra', 'infra', { creationTimestamp: '2026-06-01T00:00:00Z' }));
  const s = gatewayApiState(m.snapshot(), GA);
  assert.deepEqual([conds(s, 'infra/zzz-old'), conds(s, 'infra/aaa-new')], [['True', 'Accepted'], ['False', 'ListenersNotValid']]);
});

test('routes attach to a ListenerSet by parentRef (sectionName = its listener), with its listeners\' allowedRoutes (Same = the set\'s namespace); a Gateway parentRef never reaches a set\'s listeners', () => {
  const m = base();
  put(m, obj('Namespace', 'allowed', {}, undefined, { labels: { allowed: 'ns' } }));
  put(m, obj('Namespace', 'notallowed', {}, undefined, {}));
  put(m, obj('Namespace', 'lsns', {}, undefined, {}));
  put(m, gateway('gw', [http('gateway-listener-1', 80, 'gw1.com'), http('gateway-listener-2', 80, 'gw2.com')], { from: 'All' }));
  put(m, lset('ls1', 'gw', [
    http('all', 80, 'all.com'),
    http('same', 80, 'same.com', 'Same'),
    { ...http('sel', 80, 'sel.com'), allowedRoutes: { namespaces: { from: 'Selector', selector: { matchLabels: { allowed: 'ns' } } } } },
  ]));
  put(m, lset('lsx', 'gw', [http('cross-same', 80, 'cross.com', 'Same')], 'lsns'));
  put(m, obj('ReferenceGrant', 'g', { from: ['allowed', 'notallowed', 'lsns'].map((namespace) => ({ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace })), to: [{ group: '', kind: 'Service' }] }, 'infra'));
  put(m, route('to-all', [{ name: 'gw' }, lsRef('ls1')], '/route'));
  put(m, route('gw-only', [{ name: 'gw' }], '/gateway-route', 'api'));
  put(m, route('gw-section', [{ name: 'gw', sectionName: 'gateway-listener-1' }], '/gateway-section-route'));
  put(m, route('via-gateway', [{ name: 'gw', sectionName: 'all' }], '/badsection'));
  put(m, route('in-same', [lsRef('ls1')], '/in-same'));
  put(m, route('in-selected', [lsRef('ls1')], '/in-selected', 'web', 'allowed'));
  put(m, route('in-other', [lsRef('ls1')], '/in-other', 'web', 'notallowed'));
  put(m, route('ls-section', [lsRef('ls1', 'infra', 'same')], '/ls-section'));
  put(m, route('in-lsns', [lsRef('lsx', 'lsns')], '/in-lsns', 'web', 'lsns'));
  put(m, route('in-gwns', [lsRef('lsx', 'lsns')], '/in-gwns'));
  const s = gatewayApiState(m.snapshot(), GA);
  const parents = (k: string) => s.routes.get(k)!.map((p) => [p.ref.kind, p.accepted.reason]);
  assert.deepEqual(parents('infra/to-all'), [['Gateway', 'Accepted'], ['ListenerSet', 'Accepted']]);
  assert.deepEqual(parents('infra/via-gateway'), [['Gateway', 'NoMatchingParent']], 'a set\'s listener is not a section of the Gateway');
  assert.deepEqual(parents('notallowed/in-other'), [['ListenerSet', 'Accepted']], 'attached to the listener that allows All');
  assert.deepEqual(parents('lsns/in-lsns'), [['ListenerSet', 'Accepted']]);
  assert.deepEqual(parents('infra/in-gwns'), [['ListenerSet', 'NotAllowedByListeners']], 'Same is the ListenerSet\'s namespace, not the Gateway\'s');
  const counts = (key: string) => s.listenerSets.get(key)!.listeners.map((l) => [l.name, l.attachedRoutes]);
  assert.deepEqual(counts('infra/ls1'), [['all', 4], ['same', 3], ['sel', 1]]);
  assert.deepEqual(counts('lsns/lsx'), [['cross-same', 1]]);
  assert.deepEqual(s.gateways.get('infra/gw')!.listeners.filter((l) => !l.set).map((l) => [l.name, l.attachedRoutes]), [['gateway-listener-1', 3], ['gateway-listener-2', 2]]);
  // Traffic: one pod port; each route only under the hosts of the listeners it attached to.
  const port = s.gateways.get('infra/gw')!.listeners[0]!.podPort!;
  assert.ok(s.gateways.get('infra/gw')!.listeners.every((l) => l.podPort === port));
  const r = translate(m.snapshot(), O);
  const paths = (host: string) => (r.config.data.routes[routeHostKey(port, host, [])]?.rules.map((x) => x.path) ?? []).sort();
  assert.deepEqual(paths('gw1.com'), ['/gateway-route', '/gateway-section-route', '/route']);
  assert.deepEqual(paths('gw2.com'), ['/gateway-route', '/route']);
  assert.deepEqual(paths('all.com'), ['/in-other', '/in-same', '/in-selected', '/route']);
  assert.deepEqual(paths('same.com'), ['/in-same', '/ls-section', '/route']);
  assert.deepEqual(paths('sel.com'), ['/in-selected']);
  assert.deepEqual(paths('cross.com'), ['/in-lsns']);
});

test('a ListenerSet\'s certificateRefs need a ReferenceGrant to ListenerSets of its namespace (a grant to Gateways is not one); without a valid listener it is ListenersNotValid', () => {
  const m = base();
  const mat = (key: string) => ({ key, ok: true as const, cert: `C ${key}`, privateKey: 'K', hosts: [], notAfter: '2099-01-01T00:00:00.000Z', fingerprint: key });
  m.setSecret(mat('certs/certificate'));
  const https = (name: string, hostname: string) => ({ name, port: 443, protocol: 'HTTPS', hostname, allowedRoutes: { namespaces: { from: 'All' } }, tls: { certificateRefs: [{ name: 'certificate', namespace: 'certs' }] } });
  put(m, gateway('gw', [https('gateway-listener', 'gw.example.com')], { from: 'All' }));
  put(m, obj('ReferenceGrant', 'for-gateway', { from: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra' }], to: [{ group: '', kind: 'Secret' }] }, 'certs'));
  put(m, obj('ReferenceGrant', 'for-set', { from: [{ group: 'gateway.networking.k8s.io', kind: 'ListenerSet', namespace: 'infra' }], to: [{ group: '', kind: 'Secret' }] }, 'certs'));
  put(m, lset('with-grant', 'gw', [https('with', 'with.example.com')]));
  put(m, lset('without-grant', 'gw', [https('without', 'without.example.com')], 'tenant'));
  const s = gatewayApiState(m.snapshot(), GA);
  assert.deepEqual(conds(s, 'infra/with-grant'), ['True', 'Accepted']);
  assert.equal(listenerOf(s, 'infra/with-grant', 'with').resolvedRefs.status, 'True');
  assert.deepEqual(conds(s, 'tenant/without-grant'), ['False', 'ListenersNotValid']);
  const l = listenerOf(s, 'tenant/without-grant', 'without');
  assert.deepEqual([l.resolvedRefs.status, l.resolvedRefs.reason, l.programmed.status], ['False', 'RefNotPermitted', 'False']);
  // The accepted set's certificate is served on the Gateway's HTTPS pod port under its hostname; the refused one's not.
  const port = s.gateways.get('infra/gw')!.listeners[0]!.podPort!;
  const r = translate(m.snapshot(), O);
  assert.equal(r.config.data.certificates[`${port}/with.example.com`]?.source, 'certs/certificate');
  assert.equal(r.config.data.certificates[`${port}/without.example.com`], undefined);
  assert.equal(r.config.data.certificates[`${port}/gw.example.com`]?.source, 'certs/certificate');
});

test('ports: a set\'s new port is a pod port of the Gateway\'s Service, counted for the set\'s namespace after every Gateway\'s own ports; a TLS listener with only HTTPRoute allowed is InvalidRouteKinds', () => {
  const m = base();
  put(m, gateway('gw', [http('g', 80, 'g.example.com')], { from: 'All' }));
  put(m, lset('tcp', 'gw', [{ name: 'tcp', port: 5000, protocol: 'TCP', allowedRoutes: { namespaces: { from: 'Same' } } }], 'tenant'));
  put(m, obj('TCPRoute', 'tr', { parentRefs: [lsRef('tcp', 'tenant', 'tcp')], rules: [{ backendRefs: [{ name: 'web', namespace: 'infra', port: 8080 }] }] }, 'tenant'));
  put(m, lset('kinds', 'gw', [{ name: 'tls-only', port: 443, protocol: 'TLS', hostname: 'tls.example.com', tls: { mode: 'Passthrough' }, allowedRoutes: { namespaces: { from: 'All' }, kinds: [{ kind: 'HTTPRoute' }] } }]));
  let s = gatewayApiState(m.snapshot(), GA);
  const tcp = listenerOf(s, 'tenant/tcp', 'tcp');
  assert.ok(tcp.podPort !== undefined && tcp.podPort !== s.gateways.get('infra/gw')!.listeners[0]!.podPort);
  assert.deepEqual(s.streams.map((x) => [x.port, x.protocol, x.gateway, x.routes.map((r) => r.route)]), [[tcp.podPort, 'TCP', 'infra/gw', ['TCPRoute/tenant/tr']]]);
  assert.deepEqual(s.streamRoutes.get('TCPRoute/tenant/tr')!.map((p) => p.accepted.reason), ['Accepted']);
  const k = listenerOf(s, 'infra/kinds', 'tls-only');
  assert.deepEqual([k.resolvedRefs.status, k.resolvedRefs.reason, k.supportedKinds.length], ['False', 'InvalidRouteKinds', 0]);
  // A namespace at its cap: its set's new port is not served; the Gateway's own port (another namespace's) is untouched.
  for (let i = 0; i < MAX_PORTS_PER_NAMESPACE; i++) put(m, gateway(`t${String(i).padStart(2, '0')}`, [http('h', 80)], undefined, 'tenant'));
  s = gatewayApiState(m.snapshot(), GA);
  const capped = listenerOf(s, 'tenant/tcp', 'tcp');
  assert.deepEqual([capped.podPort, capped.programmed.status], [undefined, 'False']);
  assert.match(capped.programmed.message, /namespace tenant already has/);
  assert.notEqual(s.gateways.get('infra/gw')!.listeners[0]!.podPort, undefined);
  assert.equal([...s.gateways.values()].filter((g) => g.key.startsWith('tenant/')).every((g) => g.listeners[0]!.podPort !== undefined), true, 'the tenant\'s own Gateways come first');
});

test('tenant safety: a set cannot take a Gateway listener\'s hostname or port protocol; a Gateway that is not accepted takes no set (ParentNotAccepted)', () => {
  const m = base();
  put(m, gateway('gw', [http('owner', 80, 'shop.example.com'), { name: 'tcp', port: 5000, protocol: 'TCP' }], { from: 'All' }));
  put(m, lset('evil', 'gw', [http('steal', 80, 'shop.example.com'), http('udp', 5000), http('ok', 80, 'tenant.example.com')], 'tenant'));
  put(m, route('owner-route', [{ name: 'gw', sectionName: 'owner' }], '/'));
  put(m, route('tenant-route', [lsRef('evil', 'tenant')], '/', 'api', 'tenant'));
  put(m, obj('ReferenceGrant', 'g', { from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'tenant' }], to: [{ group: '', kind: 'Service' }] }));
  const s = gatewayApiState(m.snapshot(), GA);
  assert.deepEqual(s.listenerSets.get('tenant/evil')!.listeners.map((l) => [l.name, l.conflicted.reason]), [['steal', 'HostnameConflict'], ['udp', 'ProtocolConflict'], ['ok', 'NoConflicts']]);
  const port = s.gateways.get('infra/gw')!.listeners[0]!.podPort!;
  const r = translate(m.snapshot(), O);
  assert.deepEqual(r.config.data.routes[routeHostKey(port, 'shop.example.com', [])]?.rules.map((x) => x.route.backendId), ['infra_web_8080'], 'the owner\'s host serves the owner\'s route only');
  assert.deepEqual(r.config.data.routes[routeHostKey(port, 'tenant.example.com', [])]?.rules.map((x) => x.route.backendId), ['infra_api_8080']);
  // Not accepted: the Gateway serves nothing, the set is ParentNotAccepted (after NotAllowed: a set not admitted learns nothing of the Gateway).
  put(m, obj('Gateway', 'bad', { gatewayClassName: 'portico', listeners: [http('h', 80)], allowedListeners: { namespaces: { from: 'Same' } }, infrastructure: { parametersRef: { group: 'x', kind: 'Y', name: 'z' } } }));
  put(m, lset('child', 'bad', [http('c', 80, 'c.example.com')]));
  put(m, lset('child', 'bad', [http('c', 80, 'c.example.com')], 'elsewhere'));
  const s2 = gatewayApiState(m.snapshot(), GA);
  assert.deepEqual(conds(s2, 'infra/child'), ['False', 'ParentNotAccepted']);
  assert.deepEqual(conds(s2, 'elsewhere/child'), ['False', 'NotAllowed']);
  assert.equal(s2.gateways.get('infra/bad')!.attachedListenerSets, 0);
  assert.deepEqual(s2.routes.get('infra/owner-route')!.map((p) => p.accepted.reason), ['Accepted']);
});

test('the state with ListenerSets follows route changes in place and equals the state computed anew; a set\'s change recomputes it', () => {
  const m = base();
  put(m, gateway('gw', [http('g', 80, 'g.example.com')], { from: 'Same' }));
  put(m, lset('ls', 'gw', [http('a', 80, 'a.example.com'), http('b', 80, 'b.example.com')]));
  const strip = (s: GatewayApiState) => JSON.stringify({ gw: [...s.gateways.values()], sets: [...s.listenerSets.values()], routes: [...s.routes.entries()], ports: s.ports });
  gatewayApiState(m.snapshot(), GA);
  put(m, route('r1', [lsRef('ls', 'infra', 'a')], '/a'));
  put(m, route('r2', [lsRef('ls'), { name: 'gw' }], '/b'));
  let s = gatewayApiState(m.snapshot(), GA);
  assert.equal(strip(s), strip(gatewayApiStateAnew(m.snapshot(), GA)));
  assert.deepEqual(s.listenerSets.get('infra/ls')!.listeners.map((l) => l.attachedRoutes), [2, 1]);
  m.deleteCrd('HTTPRoute', 'infra/r1');
  s = gatewayApiState(m.snapshot(), GA);
  assert.equal(strip(s), strip(gatewayApiStateAnew(m.snapshot(), GA)));
  assert.deepEqual(s.listenerSets.get('infra/ls')!.listeners.map((l) => l.attachedRoutes), [1, 1]);
  put(m, lset('ls', 'gw', [http('a', 80, 'a.example.com')]));
  s = gatewayApiState(m.snapshot(), GA);
  assert.deepEqual(s.listenerSets.get('infra/ls')!.listeners.map((l) => [l.name, l.attachedRoutes]), [['a', 1]]);
  assert.equal(strip(s), strip(gatewayApiStateAnew(m.snapshot(), GA)));
});
