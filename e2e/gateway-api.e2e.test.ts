// Gateway API end to end: the release's CRDs in the real API server (RBAC on), Portico in-process as its
// ServiceAccount, real nginx, echo pods in network namespaces. A GatewayClass of this run's own controllerName, a
// Gateway and HTTPRoutes: statuses as the spec says them (GatewayClass Accepted, Gateway Accepted/Programmed with
// its Service's address and per-listener conditions, route parents), traffic through the Gateway's pod port (the
// targetPort of the Service Portico made for it), isolation from the Ingress ports, route edits without reloads,
// ReferenceGrant for cross-namespace backends (500 before it, 200 after), and the Service removed with the Gateway.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { admin, ensureCluster, kubectl, ROOT, uniqueNamespace } from './harness/cluster.ts';
import { addPod, deleteNamespace } from './harness/pods.ts';
import { request, tlsRequest, until } from './harness/http.ts';
import { Pki } from './harness/pki.ts';
import { grantedRules, isGatewayApiRule } from './harness/rbac.ts';
import { startPortico, type RunningPortico } from './harness/portico.ts';
import { isNotFound } from '../operator/kube/client.ts';

const RUN = Date.now().toString(36);
const CONTROLLER = `portico.dev/e2e-${RUN}`;
const CLASS = `portico-e2e-${RUN}`;
const GW = '/apis/gateway.networking.k8s.io/v1';
let p: RunningPortico;
let ns = '';
let other = '';

type Cond = { type: string; status: string; reason: string; observedGeneration?: number };
type GatewayObj = { metadata: { generation: number }; status?: { addresses?: { value: string }[]; conditions?: Cond[]; listeners?: { name: string; attachedRoutes: number; conditions: Cond[]; supportedKinds: { kind: string }[] }[] } };
type RouteObj = { metadata: { generation: number }; status?: { parents?: { controllerName: string; parentRef: { name: string }; conditions: Cond[] }[] } };
/** The echo pod that answered (undefined for anything but a 200 from one). */
const podOf = (r: { status: number; json: <T>() => T }) => (r.status === 200 ? r.json<{ pod?: string }>().pod : undefined);
const cond = (list: Cond[] | undefined, type: string) => list?.find((c) => c.type === type);
const get = <T>(p: string) => admin().request<T>('GET', p);

const route = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name }, spec: { parentRefs: [{ name: 'gw' }], ...spec } });
const routePath = (name = '') => `${GW}/namespaces/${ns}/httproutes${name ? `/${name}` : ''}`;
const backend = (name: string, extra: Record<string, unknown> = {}) => ({ name, port: 80, ...extra });

/**
 * A read-modify-write of an object, read again when it changed meanwhile (409 Conflict): Portico writes the
 * Gateway's and routes' status at any time, which moves their resourceVersion. Any other error fails at once.
 */
async function edit<T extends { metadata: { resourceVersion: string } }>(objPath: string, change: (cur: T) => unknown): Promise<void> {
  let failure: unknown;
  await until(`edit of ${objPath}`, async () => {
    const cur = await get<T>(objPath);
    try {
      await admin().request('PUT', objPath, { body: change(cur) });
      return true;
    } catch (e) {
      if ((e as { status?: number }).status === 409) return false;
      failure = e;
      return true;
    }
  });
  if (failure) throw failure;
}

/** The pod port nginx serves the Gateway's port (80 by default) on: the targetPort of the Service Portico made for it. */
async function gatewayPodPort(listenerPort = 80, gateway = 'gw'): Promise<number | undefined> {
  return (await gatewayServicePort(listenerPort, gateway))?.targetPort;
}

/** The Service port Portico made for a Gateway's listener port (its protocol and target). */
async function gatewayServicePort(listenerPort: number, gateway: string): Promise<{ port: number; targetPort: number; protocol: string } | undefined> {
  const list = await get<{ items: { metadata: { annotations?: Record<string, string> }; spec: { ports: { port: number; targetPort: number; protocol: string }[] } }[] }>(`/api/v1/namespaces/${ns}/services?labelSelector=portico.dev/gateway`);
  const svc = list.items.find((s) => s.metadata.annotations?.['portico.dev/gateway'] === `${ns}/${gateway}`);
  return svc?.spec.ports.find((x) => x.port === listenerPort);
}

before(async () => {
  await ensureCluster();
  // The release's CRDs (standard channel), unless the cluster has them already (`make conformance` installs the
  // experimental channel of the same release, a superset: left as it is).
  const have = kubectl(['get', 'crd', '-o', 'name']).split('\n');
  if (!['gatewayclasses', 'gateways', 'httproutes', 'referencegrants'].every((r) => have.includes(`customresourcedefinition.apiextensions.k8s.io/${r}.gateway.networking.k8s.io`))) {
    const crds = execFileSync('bash', [path.join(ROOT, 'e2e/gateway-api/crds.sh'), 'standard'], { encoding: 'utf8' }).trim();
    kubectl(['apply', '--server-side', '--force-conflicts', '-f', crds]);
  }
  await until('Gateway API served', async () => {
    try {
      await get(`${GW}/gatewayclasses`);
      await get(`${GW}/httproutes`);
      return true;
    } catch {
      return false;
    }
  });
  ns = await uniqueNamespace('gwapi');
  other = await uniqueNamespace('gwapi-b');
  // Portico's own Service (--publish-service): the Gateways' Services copy its selector.
  await admin().request('POST', `/api/v1/namespaces/${ns}/services`, {
    body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'portico' }, spec: { selector: { app: `portico-${RUN}` }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } },
  });
  for (const [n, svc, pod] of [[ns, 'echo', 'echo-1'], [ns, 'api', 'api-1'], [other, 'far', 'far-1']] as const) {
    await admin().request('POST', `/api/v1/namespaces/${n}/services`, {
      body: { apiVersion: 'v1', kind: 'Service', metadata: { name: svc }, spec: { selector: { app: svc }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } },
    });
    await addPod(n, pod, { labels: { app: svc } });
  }
  p = await startPortico(54680, ['--enable-gateway-api', 'true', '--gateway-controller-name', CONTROLLER, '--publish-service', `${ns}/portico`, '--controller-class', `portico.dev/e2e-ingress-${RUN}`, '--ingress-class', `none-${RUN}`]);
  await until('portico ready', async () => (await request(p.healthPort, 'x', '/readyz')).status === 200);
});

after(async () => {
  await p?.stop();
  try {
    await admin().request('DELETE', `${GW}/gatewayclasses/${CLASS}`);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  if (ns) await deleteNamespace(ns);
  if (other) await deleteNamespace(other);
});

describe('Gateway API', () => {
  test('GatewayClass, Gateway and HTTPRoute: statuses, traffic on the Gateway\'s own port, isolation, edits without reloads', async () => {
    await admin().request('POST', `${GW}/gatewayclasses`, { body: { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: CLASS }, spec: { controllerName: CONTROLLER } } });
    await until('GatewayClass Accepted with its features', async () => {
      const c = await get<{ status?: { conditions?: Cond[]; supportedFeatures?: { name: string }[] } }>(`${GW}/gatewayclasses/${CLASS}`);
      return cond(c.status?.conditions, 'Accepted')?.status === 'True' && c.status?.supportedFeatures?.some((f) => f.name === 'HTTPRoute');
    });
    await admin().request('POST', `${GW}/namespaces/${ns}/gateways`, {
      body: {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        metadata: { name: 'gw' },
        spec: { gatewayClassName: CLASS, listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }, { name: 'bad', port: 81, protocol: 'INVALID' }] },
      },
    });
    await admin().request('POST', routePath(), { body: route('web', { hostnames: ['web.example.com'], rules: [{ backendRefs: [backend('echo')] }] }) });

    const gw = await until('Gateway Programmed, with an address and the listeners\' conditions', async () => {
      const g = await get<GatewayObj>(`${GW}/namespaces/${ns}/gateways/gw`);
      const http = g.status?.listeners?.find((l) => l.name === 'http');
      return cond(g.status?.conditions, 'Programmed')?.status === 'True' && g.status?.addresses?.length && http?.attachedRoutes === 1 ? g : undefined;
    });
    assert.deepEqual([cond(gw.status?.conditions, 'Accepted')?.status, cond(gw.status?.conditions, 'Accepted')?.reason], ['True', 'ListenersNotValid']);
    assert.equal(cond(gw.status?.conditions, 'Accepted')?.observedGeneration, gw.metadata.generation);
    const bad = gw.status!.listeners!.find((l) => l.name === 'bad')!;
    assert.deepEqual([cond(bad.conditions, 'Accepted')?.reason, bad.supportedKinds.length], ['UnsupportedProtocol', 0]);
    const http = gw.status!.listeners!.find((l) => l.name === 'http')!;
    assert.deepEqual(['Accepted', 'ResolvedRefs', 'Programmed'].map((t) => cond(http.conditions, t)?.status), ['True', 'True', 'True']);
    const svc = await get<{ spec: { clusterIP: string } }>(`/api/v1/namespaces/${ns}/services?labelSelector=portico.dev/gateway`);
    assert.equal(gw.status!.addresses![0]!.value, (svc as unknown as { items: { spec: { clusterIP: string } }[] }).items[0]!.spec.clusterIP, 'the address is the Gateway Service\'s cluster IP');

    const rt = await until('HTTPRoute Accepted and ResolvedRefs', async () => {
      const r = await get<RouteObj>(routePath('web'));
      const mine = r.status?.parents?.find((x) => x.controllerName === CONTROLLER);
      return cond(mine?.conditions, 'Accepted')?.status === 'True' && cond(mine?.conditions, 'ResolvedRefs')?.status === 'True' ? r : undefined;
    });
    assert.equal(rt.status!.parents!.length, 1);

    const port = await until('the Gateway\'s Service', gatewayPodPort);
    assert.ok(port >= 20000 && port < 30000, String(port));
    const served = await until('served on the Gateway port', async () => {
      const r = await request(port, 'web.example.com', '/anything');
      return r.status === 200 ? r : undefined;
    });
    assert.equal(served.json().pod, 'echo-1');
    assert.equal((await request(port, 'other.example.com', '/')).status, 404, 'a host no route has');
    assert.equal((await request(p.httpPort, 'web.example.com', '/')).status, 404, 'the Ingress port never serves Gateway routes');

    // Edits are route data: a header match to another backend, and a redirect — no reload.
    const reloads0 = await p.metric('portico_nginx_reloads_total', { result: 'success' });
    await edit<{ metadata: { resourceVersion: string } }>(routePath('web'), (cur) => ({
        ...route('web', {
          hostnames: ['web.example.com'],
          rules: [
            { backendRefs: [backend('echo')] },
            { matches: [{ path: { type: 'PathPrefix', value: '/' }, headers: [{ name: 'x-to', value: 'api' }] }], backendRefs: [backend('api')] },
            { matches: [{ path: { type: 'Exact', value: '/old' } }], filters: [{ type: 'RequestRedirect', requestRedirect: { path: { type: 'ReplaceFullPath', replaceFullPath: '/new' }, statusCode: 301 } }] },
          ],
        }),
        metadata: { name: 'web', resourceVersion: cur.metadata.resourceVersion },
    }));
    await until('header match served', async () => podOf(await request(port, 'web.example.com', '/', { headers: { 'x-to': 'api' } })) === 'api-1');
    assert.equal(podOf(await request(port, 'web.example.com', '/')), 'echo-1', 'without the header: the first rule');
    const moved = await request(port, 'web.example.com', '/old?q=1');
    assert.deepEqual([moved.status, moved.headers.location], [301, 'http://web.example.com/new?q=1']);
    assert.equal(await p.metric('portico_nginx_reloads_total', { result: 'success' }), reloads0, 'route edits never reload nginx');

    // A backend in another namespace: refused without a ReferenceGrant (500, ResolvedRefs RefNotPermitted).
    await admin().request('POST', routePath(), { body: route('far', { hostnames: ['far.example.com'], rules: [{ backendRefs: [backend('far', { namespace: other })] }] }) });
    await until('RefNotPermitted', async () => {
      const r = await get<RouteObj>(routePath('far'));
      return cond(r.status?.parents?.[0]?.conditions, 'ResolvedRefs')?.reason === 'RefNotPermitted';
    });
    await until('500 without the grant', async () => (await request(port, 'far.example.com', '/')).status === 500);
    await admin().request('POST', `/apis/gateway.networking.k8s.io/v1beta1/namespaces/${other}/referencegrants`, {
      body: {
        apiVersion: 'gateway.networking.k8s.io/v1beta1',
        kind: 'ReferenceGrant',
        metadata: { name: 'from-gwapi' },
        spec: { from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: ns }], to: [{ group: '', kind: 'Service', name: 'far' }] },
      },
    });
    await until('served once granted', async () => podOf(await request(port, 'far.example.com', '/')) === 'far-1');

    // An HTTPS listener without a hostname: its certificate for any name on its port; then removed again, after
    // which route edits still apply (the certificate table's removal of that port is accepted by the data plane).
    const pki = new Pki().ca('ca').server('gw', 'ca', 'web.example.com');
    await admin().request('POST', `/api/v1/namespaces/${ns}/secrets`, {
      body: { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name: 'gw-tls' }, data: { 'tls.crt': Buffer.from(pki.read('gw.crt')).toString('base64'), 'tls.key': Buffer.from(pki.read('gw.key')).toString('base64') } },
    });
    const gwPath = `${GW}/namespaces/${ns}/gateways/gw`;
    await edit<{ metadata: { resourceVersion: string }; spec: { listeners: unknown[] } }>(gwPath, (withHttps) => ({
      ...withHttps,
      spec: { ...withHttps.spec, listeners: [...withHttps.spec.listeners, { name: 'https', port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'gw-tls' }] } }] },
    }));
    const tlsPort = await until('the HTTPS listener\'s port', () => gatewayPodPort(443));
    const secure = await until('served over TLS with the listener\'s certificate', async () => {
      const r = await tlsRequest(tlsPort, 'any-name.example.org', { host: 'web.example.com', path: '/' });
      return r.status === 200 ? r : undefined;
    });
    assert.equal(secure.peerCN, 'web.example.com');
    assert.equal(secure.body.includes('echo-1'), true);
    await edit<{ metadata: { resourceVersion: string }; spec: { listeners: { name: string }[] } }>(gwPath, (without) => ({ ...without, spec: { ...without.spec, listeners: without.spec.listeners.filter((l) => l.name !== 'https') } }));
    await until('the HTTPS listener removed', async () => (await gatewayPodPort(443)) === undefined);
    await edit<{ metadata: { resourceVersion: string } }>(routePath('web'), (cur2) => ({ ...route('web', { hostnames: ['web.example.com'], rules: [{ backendRefs: [backend('api')] }] }), metadata: { name: 'web', resourceVersion: cur2.metadata.resourceVersion } }));
    await until('a route edit after the removal applies', async () => podOf(await request(port, 'web.example.com', '/')) === 'api-1');

    // The Gateway moves to a class that is not Portico's: Portico removes its Service (and EndpointSlice) itself.
    await edit<{ metadata: { resourceVersion: string }; spec: Record<string, unknown> }>(gwPath, (toOther) => ({ ...toOther, spec: { ...toOther.spec, gatewayClassName: `not-portico-${RUN}` } }));
    await until('the Gateway\'s Service removed', async () => (await gatewayPodPort()) === undefined);
    await until('its EndpointSlice removed', async () => {
      const l = await get<{ items: { metadata: { annotations?: Record<string, string> } }[] }>(`/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?labelSelector=portico.dev/gateway`);
      return !l.items.some((x) => x.metadata.annotations?.['portico.dev/gateway'] === `${ns}/gw`);
    });
    await admin().request('DELETE', gwPath);
  });

  test('TCPRoute, UDPRoute, TLSRoute and GRPCRoute: parent statuses, listener kinds and counts; a TCP listener carries connections to the oldest route\'s backend', async () => {
    const gwPath = `${GW}/namespaces/${ns}/gateways/l4`;
    await admin().request('POST', `${GW}/namespaces/${ns}/gateways`, {
      body: {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        metadata: { name: 'l4' },
        spec: {
          gatewayClassName: CLASS,
          listeners: [
            { name: 'tcp', port: 7000, protocol: 'TCP' },
            { name: 'udp', port: 7053, protocol: 'UDP' },
            { name: 'tls', port: 7443, protocol: 'TLS', hostname: '*.example.com', tls: { mode: 'Passthrough' } },
            { name: 'grpc', port: 7080, protocol: 'HTTP' },
          ],
        },
      },
    });
    const l4 = (kind: string, plural: string, name: string, spec: Record<string, unknown>) =>
      admin().request('POST', `${GW}/namespaces/${ns}/${plural}`, { body: { apiVersion: 'gateway.networking.k8s.io/v1', kind, metadata: { name }, spec: { parentRefs: [{ name: 'l4', sectionName: spec.section }], ...spec, section: undefined } } });
    // The older route is named to sort last: only its age (creationTimestamp, whole seconds) can make it win; a tie
    // of timestamps would go to the name that sorts first, so the newer one is created in a later second.
    await l4('TCPRoute', 'tcproutes', 'z-older', { section: 'tcp', rules: [{ backendRefs: [backend('echo')] }] });
    const created = (await get<{ metadata: { creationTimestamp: string } }>(`${GW}/namespaces/${ns}/tcproutes/z-older`)).metadata.creationTimestamp;
    await until('a later second than the older route\'s creation', () => new Date().toISOString().slice(0, 19) > created.slice(0, 19));
    await l4('TCPRoute', 'tcproutes', 'a-newer', { section: 'tcp', rules: [{ backendRefs: [backend('api')] }] });
    await l4('UDPRoute', 'udproutes', 'dns', { section: 'udp', rules: [{ backendRefs: [backend('missing')] }] });
    await l4('TLSRoute', 'tlsroutes', 'pass', { section: 'tls', hostnames: ['secure.example.com'], rules: [{ backendRefs: [backend('echo')] }] });
    await l4('GRPCRoute', 'grpcroutes', 'rpc', { section: 'grpc', rules: [{ matches: [{ method: { service: 'echo.Echo', method: 'Ping' } }], backendRefs: [backend('echo')] }] });
    await l4('TCPRoute', 'tcproutes', 'wrong-listener', { section: 'grpc', rules: [{ backendRefs: [backend('echo')] }] });
    const parent = async (plural: string, name: string) => (await get<RouteObj>(`${GW}/namespaces/${ns}/${plural}/${name}`)).status?.parents?.find((x) => x.controllerName === CONTROLLER);
    await until('every route\'s parent status written', async () => {
      const all = await Promise.all([['tcproutes', 'a-newer'], ['udproutes', 'dns'], ['tlsroutes', 'pass'], ['grpcroutes', 'rpc'], ['tcproutes', 'wrong-listener']].map(([pl, n]) => parent(pl!, n!)));
      return all.every((x) => x?.conditions?.length);
    });
    assert.equal(cond((await parent('tcproutes', 'a-newer'))?.conditions, 'Accepted')?.status, 'True', 'a second TCPRoute is accepted (and not served)');
    const dns = await parent('udproutes', 'dns');
    assert.deepEqual([cond(dns?.conditions, 'Accepted')?.status, cond(dns?.conditions, 'ResolvedRefs')?.reason], ['True', 'BackendNotFound']);
    assert.equal(cond((await parent('tlsroutes', 'pass'))?.conditions, 'Accepted')?.status, 'True');
    assert.equal(cond((await parent('grpcroutes', 'rpc'))?.conditions, 'Accepted')?.status, 'True');
    assert.equal(cond((await parent('tcproutes', 'wrong-listener'))?.conditions, 'Accepted')?.reason, 'NotAllowedByListeners');
    const gw = await until('the listeners\' kinds and counts', async () => {
      const g = await get<GatewayObj>(gwPath);
      const count = (n: string) => g.status?.listeners?.find((l) => l.name === n)?.attachedRoutes;
      return count('tcp') === 2 && count('udp') === 1 && count('tls') === 1 && count('grpc') === 1 ? g : undefined;
    });
    const kinds = (n: string) => gw.status!.listeners!.find((l) => l.name === n)!.supportedKinds.map((k) => k.kind).join(' ');
    assert.deepEqual(['tcp', 'udp', 'tls', 'grpc'].map(kinds), ['TCPRoute', 'UDPRoute', 'TLSRoute', 'HTTPRoute GRPCRoute']);
    const udp = await until('the UDP listener\'s Service port', () => gatewayServicePort(7053, 'l4'));
    assert.equal(udp.protocol, 'UDP', 'a UDP listener is a UDP Service port');
    const tcpPort = await until('the TCP listener\'s pod port', () => gatewayPodPort(7000, 'l4'));
    const first = await until('a connection to the TCP listener reaches the oldest route\'s backend', async () => {
      const r = await request(tcpPort, 'any.example.com', '/over-tcp');
      return r.status === 200 ? r : undefined;
    });
    assert.equal(first.json<{ pod: string }>().pod, 'echo-1');
    for (let i = 0; i < 5; i++) assert.equal(podOf(await request(tcpPort, 'any.example.com', '/')), 'echo-1', 'never the newer route\'s backend');
    await admin().request('DELETE', gwPath);
  });

  test('ListenerSet and BackendTLSPolicy: a set the Gateway admits adds a listener that serves its routes; a policy without a usable CA is reported on its Gateway and its backend answers 500, never plain HTTP', async () => {
    const gwPath = `${GW}/namespaces/${ns}/gateways/lsgw`;
    const post = (plural: string, body: Record<string, unknown>) => admin().request('POST', `${GW}/namespaces/${ns}/${plural}`, { body: { apiVersion: 'gateway.networking.k8s.io/v1', ...body } });
    await post('gateways', { kind: 'Gateway', metadata: { name: 'lsgw' }, spec: { gatewayClassName: CLASS, allowedListeners: { namespaces: { from: 'Same' } }, listeners: [{ name: 'http', port: 7100, protocol: 'HTTP' }] } });
    await post('listenersets', { kind: 'ListenerSet', metadata: { name: 'extra' }, spec: { parentRef: { name: 'lsgw' }, listeners: [{ name: 'more', port: 7101, protocol: 'HTTP' }] } });
    await until('the ListenerSet accepted', async () => {
      const o = await get<{ status?: { conditions?: Cond[] } }>(`${GW}/namespaces/${ns}/listenersets/extra`);
      return cond(o.status?.conditions, 'Accepted')?.status === 'True' || undefined;
    });
    await admin().request('POST', routePath(), { body: route('via-set', { parentRefs: [{ group: 'gateway.networking.k8s.io', kind: 'ListenerSet', name: 'extra', sectionName: 'more' }], rules: [{ backendRefs: [backend('echo')] }] }) });
    const setPort = await until('the set\'s listener port', () => gatewayPodPort(7101, 'lsgw'));
    await until('the set\'s listener serves its route', async () => podOf(await request(setPort, 'x.example.com', '/')) === 'echo-1' || undefined);
    await admin().request('POST', routePath(), { body: route('to-api', { parentRefs: [{ name: 'lsgw', sectionName: 'http' }], rules: [{ backendRefs: [backend('api')] }] }) });
    const ownPort = await until('the Gateway\'s own listener port', () => gatewayPodPort(7100, 'lsgw'));
    await until('api answers before any policy', async () => podOf(await request(ownPort, 'y.example.com', '/')) === 'api-1' || undefined);
    await post('backendtlspolicies', { kind: 'BackendTLSPolicy', metadata: { name: 'api-tls' }, spec: { targetRefs: [{ group: '', kind: 'Service', name: 'api' }], validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'missing-ca' }], hostname: 'api.example.com' } } });
    type PolicyObj = { status?: { ancestors?: { ancestorRef: { kind?: string; name: string }; controllerName: string; conditions: Cond[] }[] } };
    const anc = await until('the policy reported on its Gateway', async () => {
      const o = await get<PolicyObj>(`${GW}/namespaces/${ns}/backendtlspolicies/api-tls`);
      return o.status?.ancestors?.find((a) => a.controllerName === CONTROLLER && a.ancestorRef.name === 'lsgw');
    });
    assert.deepEqual([anc.ancestorRef.kind, cond(anc.conditions, 'Accepted')?.reason, cond(anc.conditions, 'ResolvedRefs')?.reason], ['Gateway', 'NoValidCACertificate', 'InvalidCACertificateRef']);
    await until('the backend of a policy without a usable CA answers 500', async () => (await request(ownPort, 'y.example.com', '/')).status === 500 || undefined);
    await admin().request('DELETE', gwPath);
  });

  test('the ClusterRole\'s Gateway API rules are exactly what Portico used (least privilege, nothing missing)', () => {
    const used = new Set(p.client.calls);
    const granted = grantedRules();
    const ungranted = [...used].filter((u) => !granted.has(u)).sort();
    // Portico writes its Gateways' Services and EndpointSlices with server-side apply: a PATCH, which the API server
    // also authorizes as `create` when the object does not exist yet.
    const applied = (g: string) => g.startsWith('create ') && used.has(g.replace(/^create /, 'patch '));
    const unused = [...granted].filter((g) => isGatewayApiRule(g) && !used.has(g) && !applied(g)).sort();
    assert.deepEqual(ungranted, [], 'calls the role does not grant (would be 403 in a real cluster)');
    assert.deepEqual(unused, [], 'Gateway API rules the code never used');
  });
});
