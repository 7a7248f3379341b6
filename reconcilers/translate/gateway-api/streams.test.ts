// Gateway API's Layer-4 routes (TCPRoute, UDPRoute, TLSRoute), pure: normalizing, attaching to TCP/UDP/TLS
// listeners (kinds, oldest route wins, TLS server names), the weighted stream section with its failing share, and
// the rendered nginx.conf (checked by `nginx -t`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { Model } from '../../model/model.ts';
import { normalizeEndpointSlice, normalizeService } from '../../model/normalize.ts';
import { normalizeGateway } from '../../kinds/gateway/normalize.ts';
import { normalizeGatewayClass } from '../../kinds/gatewayclass/index.ts';
import { normalizeStreamRoute } from '../../kinds/tcproute/normalize.ts';
import type { StreamRouteKind } from '../../model/gateway-api.ts';
import { gatewayApiState } from './attach.ts';
import { gatewayStreams } from './streams.ts';
import { STREAM_MODULE, streamSection } from '../../nginx-driver/stream.ts';
import { translate } from '../translate.ts';
import { OPTS } from '../fixtures.test-helpers.ts';
import { renderNginxConf } from '../../nginx-driver/nginx/render.ts';
import { nginxTest, runtimeDir } from '../../nginx-driver/nginx/nginx-t.test-helpers.ts';
import { structureChecksum } from '../diff.ts';

const GA = { controllerName: 'portico.dev/gateway-controller', reservedPorts: [8080, 8443, 10246] };
let clock = 0;
const meta = (name: string, ns?: string) => ({ name, ...(ns ? { namespace: ns } : {}), uid: `${ns}/${name}`, generation: 1, creationTimestamp: `2026-01-01T00:00:${String(clock++).padStart(2, '0')}Z` });

function route(kind: StreamRouteKind, name: string, spec: Record<string, unknown>) {
  const r = normalizeStreamRoute(kind, { metadata: meta(name, 'apps'), spec } as unknown as KubeObject);
  assert.ok(r.ok, r.ok ? '' : r.reason);
  return r.record;
}

function setup(): Model {
  clock = 0;
  const m = new Model();
  const c = normalizeGatewayClass({ metadata: meta('portico'), spec: { controllerName: GA.controllerName } } as never);
  assert.ok(c.ok);
  m.setCrd('GatewayClass', c.record);
  const g = normalizeGateway({
    metadata: meta('gw', 'apps'),
    spec: {
      gatewayClassName: 'portico',
      listeners: [
        { name: 'tcp', port: 5000, protocol: 'TCP' },
        { name: 'udp', port: 5300, protocol: 'UDP' },
        { name: 'tls', port: 443, protocol: 'TLS', hostname: '*.example.com', tls: { mode: 'Passthrough' } },
        { name: 'tls-terminate', port: 8443, protocol: 'TLS', tls: { mode: 'Terminate', certificateRefs: [{ name: 'c' }] } },
        { name: 'http', port: 80, protocol: 'HTTP' },
      ],
    },
  } as never);
  assert.ok(g.ok, g.ok ? '' : g.reason);
  m.setCrd('Gateway', g.record);
  for (const [name, ports, ips] of [
    ['one', [{ name: 'tcp', port: 3000 }, { name: 'dns', port: 53, protocol: 'UDP' }], ['198.18.0.1', '198.18.0.2']],
    ['two', [{ name: 'tcp', port: 3000 }], ['198.18.0.3']],
    ['empty', [{ name: 'tcp', port: 3000 }], []],
  ] as const) {
    m.setService(normalizeService({ metadata: { name, namespace: 'apps' }, spec: { ports } } as unknown as KubeObject));
    const sl = normalizeEndpointSlice({
      metadata: { name: `${name}-1`, namespace: 'apps', labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      ports: ports.map((p) => ({ name: p.name, port: p.port + 10000, protocol: 'protocol' in p ? p.protocol : 'TCP' })),
      endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true, serving: true, terminating: false } })),
    } as unknown as KubeObject);
    if (sl) m.setEndpointSlices(`apps/${name}`, [sl]);
  }
  return m;
}

test('normalizing: the API server\'s rules (one rule, 1-16 backendRefs with a port, TLSRoute hostnames); defaults applied', () => {
  const ok = route('TCPRoute', 'r', { parentRefs: [{ name: 'gw', sectionName: 'tcp' }], rules: [{ name: 'main', backendRefs: [{ name: 'one', port: 3000, weight: 3 }] }] });
  assert.deepEqual(ok.parents, [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'apps', name: 'gw', sectionName: 'tcp' }]);
  assert.deepEqual(ok.backends, [{ group: '', kind: 'Service', namespace: 'apps', name: 'one', port: 3000, weight: 3 }]);
  assert.equal(ok.ruleName, 'main');
  const bad = (kind: StreamRouteKind, spec: unknown) => normalizeStreamRoute(kind, { metadata: meta('x', 'apps'), spec } as never);
  assert.equal(bad('TCPRoute', { rules: [] }).ok, false, 'exactly one rule');
  assert.equal(bad('TCPRoute', { rules: [{ backendRefs: [{ name: 'one', port: 1 }] }, { backendRefs: [{ name: 'one', port: 1 }] }] }).ok, false);
  const noPort = bad('UDPRoute', { rules: [{ backendRefs: [{ name: 'one' }] }] });
  assert.ok(!noPort.ok && /port/.test(noPort.reason), 'a Service backendRef needs a port');
  assert.equal(bad('TLSRoute', { rules: [{ backendRefs: [{ name: 'one', port: 1 }] }] }).ok, false, 'TLSRoute needs hostnames');
  assert.equal(bad('TCPRoute', { hostnames: ['a.example.com'], rules: [{ backendRefs: [{ name: 'one', port: 1 }] }] }).ok, false, 'TCPRoute has no hostnames');
  assert.equal(bad('TLSRoute', { hostnames: ['A.example.com'], rules: [{ backendRefs: [{ name: 'one', port: 1 }] }] }).ok, false, 'hostnames are lower-case DNS names');
});

test('attachment: kinds per protocol, the oldest TCP route wins (both counted), TLS names to their oldest route, Terminate TLS without its Secret not served', () => {
  const m = setup();
  m.setCrd('TCPRoute', route('TCPRoute', 'older', { parentRefs: [{ name: 'gw', sectionName: 'tcp' }], rules: [{ backendRefs: [{ name: 'one', port: 3000 }] }] }));
  m.setCrd('TCPRoute', route('TCPRoute', 'newer', { parentRefs: [{ name: 'gw', sectionName: 'tcp' }], rules: [{ backendRefs: [{ name: 'two', port: 3000 }] }] }));
  m.setCrd('TCPRoute', route('TCPRoute', 'to-http', { parentRefs: [{ name: 'gw', sectionName: 'http' }], rules: [{ backendRefs: [{ name: 'two', port: 3000 }] }] }));
  m.setCrd('UDPRoute', route('UDPRoute', 'dns', { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'one', port: 53 }, { name: 'missing', port: 53 }] }] }));
  m.setCrd('TLSRoute', route('TLSRoute', 'tls-a', { parentRefs: [{ name: 'gw', sectionName: 'tls' }], hostnames: ['a.example.com'], rules: [{ backendRefs: [{ name: 'one', port: 3000 }] }] }));
  m.setCrd('TLSRoute', route('TLSRoute', 'tls-a2', { parentRefs: [{ name: 'gw', sectionName: 'tls' }], hostnames: ['a.example.com', 'b.example.com'], rules: [{ backendRefs: [{ name: 'two', port: 3000 }] }] }));
  m.setCrd('TLSRoute', route('TLSRoute', 'tls-other', { parentRefs: [{ name: 'gw', sectionName: 'tls' }], hostnames: ['other.test'], rules: [{ backendRefs: [{ name: 'two', port: 3000 }] }] }));
  const st = gatewayApiState(m.snapshot(), GA);
  const gw = st.gateways.get('apps/gw')!;
  const l = (name: string) => gw.listeners.find((x) => x.name === name)!;
  assert.equal(l('tcp').attachedRoutes, 2, 'both TCPRoutes are counted');
  assert.deepEqual(l('tcp').supportedKinds, [{ group: 'gateway.networking.k8s.io', kind: 'TCPRoute' }]);
  assert.equal(l('tls').attachedRoutes, 2, 'other.test does not intersect *.example.com');
  assert.equal(l('tls-terminate').accepted.status, 'True', 'Terminate is served (TLSRouteModeTerminate)');
  assert.equal(l('tls-terminate').resolvedRefs.reason, 'InvalidCertificateRef', 'its Secret apps/c does not exist');
  assert.equal(l('tls-terminate').podPort, undefined, 'not served without its certificate');
  assert.deepEqual(l('tls-terminate').supportedKinds, [{ group: 'gateway.networking.k8s.io', kind: 'TLSRoute' }]);
  const parent = (k: string) => st.streamRoutes.get(k)![0]!;
  assert.equal(parent('TCPRoute/apps/newer').accepted.status, 'True');
  assert.equal(parent('TCPRoute/apps/to-http').accepted.reason, 'NotAllowedByListeners');
  assert.equal(parent('UDPRoute/apps/dns').resolvedRefs.reason, 'BackendNotFound');
  assert.equal(parent('UDPRoute/apps/dns').accepted.status, 'True', 'a missing backend does not stop the route attaching');
  assert.equal(parent('TLSRoute/apps/tls-other').accepted.reason, 'NoMatchingListenerHostname');
  assert.equal(l('http').attachedRoutes, 0);
  assert.ok(!st.ports.some((p) => p.port === l('tcp').podPort), 'a TCP listener is no HTTP server port');

  const streams = gatewayStreams(st);
  const byPort = (name: string) => streams.find((s) => s.port === l(name).podPort)!;
  assert.deepEqual(byPort('tcp').targets.map((t) => t.route), ['TCPRoute/apps/older'], 'only the oldest TCPRoute is served');
  assert.deepEqual(byPort('tls').targets.map((t) => [t.host, t.route]), [['a.example.com', 'TLSRoute/apps/tls-a'], ['b.example.com', 'TLSRoute/apps/tls-a2']]);
  assert.deepEqual(byPort('udp').targets[0]!.backends.map((b) => [b.service, b.ok]), [['one', true], ['missing', false]]);
});

test('stream section: weights shared by endpoints, a failing share kept (no retry then), TLS by server name; nginx -t passes', () => {
  const m = setup();
  m.setCrd('TCPRoute', route('TCPRoute', 'weighted', { parentRefs: [{ name: 'gw', sectionName: 'tcp' }], rules: [{ backendRefs: [{ name: 'one', port: 3000, weight: 1 }, { name: 'two', port: 3000, weight: 2 }, { name: 'off', port: 3000, weight: 0 }] }] }));
  m.setCrd('UDPRoute', route('UDPRoute', 'dns', { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'one', port: 53 }, { name: 'empty', port: 3000 }] }] }));
  m.setCrd('TLSRoute', route('TLSRoute', 'tls', { parentRefs: [{ name: 'gw', sectionName: 'tls' }], hostnames: ['*.example.com'], rules: [{ backendRefs: [{ name: 'two', port: 3000 }] }] }));
  const structure = translate(m.snapshot(), { ...OPTS, gatewayApi: GA }).config.structure;
  assert.equal(structure.gatewayStreams?.length, 3, 'the translation carries the three Layer-4 listeners');
  const { section, problems } = streamSection(m, { own: new Set(), address: '127.0.0.1', modulePath: STREAM_MODULE }, undefined, structure.gatewayStreams);
  const gs = section!.gateway!;
  const tcpPort = gatewayApiState(m.snapshot(), GA).gateways.get('apps/gw')!.listeners.find((x) => x.name === 'tcp')!.podPort!;
  const tcp = gs.servers.find((s) => s.port === tcpPort)!;
  const up = gs.upstreams[tcp.targets[0]!.upstream!]!;
  // one: weight 1 over 2 endpoints, two: weight 2 over 1 endpoint → 1:1 per endpoint of one, 4 for two's.
  assert.deepEqual(up.servers, [{ address: '198.18.0.1', port: 13000, weight: 1 }, { address: '198.18.0.2', port: 13000, weight: 1 }, { address: '198.18.0.3', port: 13000, weight: 4 }]);
  assert.equal(up.failWeight, 0);
  assert.equal(tcp.retry, true);
  const udp = gs.servers.find((s) => s.udp)!;
  const uup = gs.upstreams[udp.targets[0]!.upstream!]!;
  assert.deepEqual(uup.servers.map((s) => [s.port, s.weight]), [[10053, 1], [10053, 1]]);
  assert.equal(uup.failWeight, 2, 'the backend without a UDP port keeps its half, which fails');
  assert.equal(udp.retry, false);
  assert.deepEqual(problems.map((p) => [p.route, p.reason]), [['UDPRoute/apps/dns', 'ServicePortNotFound']], 'reported as a Warning on the route');
  const rt = runtimeDir();
  const s = { ...structure, stream: section! };
  const conf = renderNginxConf(s, rt, structureChecksum(s));
  assert.match(conf, new RegExp(`listen 127\\.0\\.0\\.1:${udp.port} udp;\\n\\s+proxy_pass portico_gw_\\d+;`));
  assert.match(conf, new RegExp(`server unix:${rt.closedSocket.replace(/[.]/g, '\\.')} weight=2;`));
  assert.match(conf, /map \$ssl_preread_server_name \$portico_gw_\d+ \{\n\s+hostnames;\n\s+\*\.example\.com portico_gw_\d+;\n\s+default portico_gw_closed;/);
  assert.match(conf, /ssl_preread on;\n\s+proxy_pass \$portico_gw_\d+;/);
  nginxTest(rt, conf);
});

test('TLS precedence: a newer route naming the server name wins over an older wildcard route (and a more specific wildcard over a broader one)', () => {
  const m = setup();
  m.setCrd('TLSRoute', route('TLSRoute', 'wild-older', { parentRefs: [{ name: 'gw', sectionName: 'tls' }], hostnames: ['*.example.com'], rules: [{ backendRefs: [{ name: 'one', port: 3000 }] }] }));
  m.setCrd('TLSRoute', route('TLSRoute', 'exact-newer', { parentRefs: [{ name: 'gw', sectionName: 'tls' }], hostnames: ['abc.example.com'], rules: [{ backendRefs: [{ name: 'two', port: 3000 }] }] }));
  const st = gatewayApiState(m.snapshot(), GA);
  const port = st.gateways.get('apps/gw')!.listeners.find((x) => x.name === 'tls')!.podPort!;
  const targets = gatewayStreams(st).find((s) => s.port === port)!.targets.map((t) => [t.host, t.route]);
  assert.deepEqual(targets, [['*.example.com', 'TLSRoute/apps/wild-older'], ['abc.example.com', 'TLSRoute/apps/exact-newer']]);
});
