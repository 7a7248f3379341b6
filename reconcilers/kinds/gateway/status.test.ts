// The Gateway status writer: Service names, condition merging, and which orphaned Gateway Services it removes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { GatewayStatusReconciler, gatewayServiceName, mergeApiConditions, SUPPORTED_FEATURES, supportedFeatures } from './status.ts';
import { Model } from '../../model/model.ts';
import { ApiError } from '../../../operator/kube/client.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { modelOf, slice, svc } from '../../translate/fixtures.test-helpers.ts';
import { normalizeGatewayClass } from '../gatewayclass/index.ts';
import { normalizeGateway } from './normalize.ts';
import { normalizeListenerSet } from '../listenerset/normalize.ts';
import { HTTP_KINDS } from '../../translate/gateway-api/attach.ts';
import { normalizeHttpRoute } from '../httproute/normalize.ts';

test('a Gateway\'s Service name: "<gateway>-portico", or a readable head and a hash when that is no DNS label', () => {
  assert.equal(gatewayServiceName('same-namespace'), 'same-namespace-portico');
  const long = gatewayServiceName('a'.repeat(70));
  assert.ok(long.length <= 63 && /^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(long), long);
  const dotted = gatewayServiceName('gw.example.com');
  assert.ok(/^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(dotted) && dotted.length <= 63, dotted);
  assert.notEqual(gatewayServiceName('gw.example.com'), gatewayServiceName('gw.example.org'));
  assert.ok(/^gw-[0-9a-f]{10}-portico$/.test(gatewayServiceName('1.2')), gatewayServiceName('1.2'));
});

test('conditions: others\' kept, lastTransitionTime kept while the status does not flip, observedGeneration ours', () => {
  const cur = [
    { type: 'Accepted', status: 'True', observedGeneration: 1, lastTransitionTime: 't0', reason: 'Accepted', message: 'm' },
    { type: 'example.com/Foo', status: 'True', observedGeneration: 1, lastTransitionTime: 't0', reason: 'Foo', message: 'theirs' },
  ];
  const out = mergeApiConditions(cur, [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: 'm2' }, { type: 'Programmed', status: 'False', reason: 'Pending', message: '' }], 2, 't1');
  assert.deepEqual(out.map((c) => [c.type, c.lastTransitionTime, c.observedGeneration ?? null, c.message]), [
    ['example.com/Foo', 't0', 1, 'theirs'],
    ['Accepted', 't0', 2, 'm2'],
    ['Programmed', 't1', 2, 'Pending'],
  ]);
});

test('the GatewayClass status names exactly the features the conformance run claims (e2e/gateway-api/supported-features)', () => {
  const file = readFileSync(new URL('../../../e2e/gateway-api/supported-features', import.meta.url), 'utf8');
  const claimed = file.split('\n').map((l) => l.replace(/#.*/, '').trim()).filter(Boolean).sort();
  assert.deepEqual(claimed, [...SUPPORTED_FEATURES]);
});

test('ClusterTrustBundle is claimed only while the API server serves ClusterTrustBundles', () => {
  assert.ok(supportedFeatures(true).includes('ClusterTrustBundle'));
  assert.deepEqual(supportedFeatures(false), SUPPORTED_FEATURES.filter((f) => f !== 'ClusterTrustBundle'));
});

test('orphans: only Gateway Services and EndpointSlices this Portico (or an older one) wrote are removed, never another Portico\'s', async () => {
  const deleted: string[] = [];
  const item = (name: string, controller?: string) => ({ metadata: { name, namespace: 'apps', annotations: { 'portico.dev/gateway': `apps/${name}`, ...(controller ? { 'portico.dev/gateway-controller': controller } : {}) } } });
  const client = {
    request: async (method: string, path: string) => {
      if (method === 'GET') return { items: [item('mine', 'portico.dev/gateway-controller'), item('legacy'), item('theirs', 'example.org/other-portico')] };
      if (method === 'DELETE') deleted.push(path);
      return {};
    },
  };
  const r = new GatewayStatusReconciler({
    model: new Model(),
    client: client as never,
    o: { controllerName: 'portico.dev/gateway-controller', reservedPorts: [], namespace: 'portico-system' },
    informers: {} as never,
    isLeader: () => true,
    programmed: () => true,
  });
  await r.removeOrphans();
  assert.deepEqual(deleted.map((p) => p.replace(/^.*\//, '')).sort(), ['legacy', 'legacy', 'mine', 'mine'], 'Services and EndpointSlices of gone Gateways: ours and pre-annotation ones, not the other controller\'s');
});

// ---- requested addresses (spec.addresses): the Gateway's Service against a fake API server ------------------------
// The fake keeps Services and EndpointSlices by path and checks a requested clusterIP the way the API server (1.36,
// IPAddress allocator) does: inside its Service range (198.19.0.0/17) and held by no other Service, or a 422 naming
// spec.clusterIPs — a dry run checks the range only; a Service's clusterIP cannot change in place. Every request is
// logged, so the tests see what Portico asked for.
const SVC = '/api/v1/namespaces/infra/services';
const OWN = `${SVC}/gw-portico`;
const CONTROLLER = 'portico.dev/gateway-controller';

function fakeApi(held: Record<string, string> = { '/api/v1/namespaces/portico-system/services/portico': '198.19.0.10' }) {
  const objects = new Map<string, Record<string, any>>();
  for (const [path, ip] of Object.entries(held)) objects.set(path, { metadata: { name: path.replace(/^.*\//, ''), uid: `uid-${path}` }, spec: { clusterIP: ip } });
  const log: { method: string; path: string; body?: any; query?: any }[] = [];
  let next = 100;
  let version = 1;
  const refuse = (path: string, name: string, detail: string) => {
    throw new ApiError('PATCH', path, 422, 'Invalid', `Service "${name}" is invalid: spec.clusterIPs: Invalid value: ${detail}`);
  };
  const check = (path: string, name: string, ip: string, dryRun = false) => {
    const [a, b, c] = ip.split('.').map(Number);
    if (!(a === 198 && b === 19 && c! < 128)) refuse(path, name, `["${ip}"]: failed to allocate IP ${ip}: the provided IP (${ip}) is not in the valid range. The range of valid IPs is 198.19.0.0/17`);
    if (dryRun) return;
    for (const [p, o] of objects) if (p !== path && o.spec?.clusterIP === ip) refuse(path, name, `["${ip}"]: failed to allocate IP ${ip}: provided IP is already allocated`);
  };
  const request = async (method: string, path: string, opts: { body?: any; query?: any } = {}) => {
    log.push({ method, path, body: opts.body, query: opts.query });
    const cur = objects.get(path);
    if (method === 'GET') {
      if (!cur) throw new ApiError(method, path, 404, 'NotFound', 'not found');
      return structuredClone(cur);
    }
    if (method === 'DELETE') {
      if (!cur) throw new ApiError(method, path, 404, 'NotFound', 'not found');
      const pre = opts.body?.preconditions;
      if (pre && (pre.uid !== cur.metadata.uid || pre.resourceVersion !== cur.metadata.resourceVersion)) throw new ApiError(method, path, 409, 'Conflict', 'precondition failed');
      objects.delete(path);
      return {};
    }
    if (method === 'POST') {
      assert.equal(opts.query?.dryRun, 'All', 'Portico creates Services only by server-side apply; a POST is a dry-run check');
      check(path, `${opts.body.metadata.generateName}x7k2p`, opts.body.spec.clusterIP, true);
      return opts.body;
    }
    if (path.endsWith('/status')) return {};
    // Server-side apply.
    const body = structuredClone(opts.body);
    if (path.includes('/services/')) {
      const want = body.spec.clusterIP as string | undefined;
      if (cur && want && want !== cur.spec.clusterIP) refuse(path, body.metadata.name, `["${want}"]: may not change once set`);
      if (!cur && want) check(path, body.metadata.name, want);
      body.spec.clusterIP = cur?.spec.clusterIP ?? want ?? `198.19.1.${next++}`;
    }
    body.metadata.uid = cur?.metadata.uid ?? `uid-${version}`;
    body.metadata.resourceVersion = String(version++);
    objects.set(path, body);
    return structuredClone(body);
  };
  return { objects, log, request };
}

/** A Gateway "infra/gw" of class portico with one HTTP listener, its status reconciler and what it wrote. */
function gatewaySetup(api: ReturnType<typeof fakeApi>) {
  // The Services Portico watches: its own (198.19.0.10); the fake API server may hold more.
  const model = modelOf({
    services: [svc('portico', [{ port: 80 }], 'portico-system', { clusterIP: '198.19.0.10' })],
    slices: [slice('portico-1', 'portico', [{ port: 80 }], [{ ip: '198.18.0.5' }], 'portico-system')],
  });
  const cls = normalizeGatewayClass({ metadata: { name: 'portico', uid: 'c', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { controllerName: CONTROLLER } } as KubeObject);
  assert.ok(cls.ok);
  model.setCrd('GatewayClass', cls.record);
  const gw: KubeObject & { spec: Record<string, unknown>; status?: Record<string, unknown> } = {
    metadata: { name: 'gw', namespace: 'infra', uid: 'uid-gw', generation: 0, creationTimestamp: '2026-01-01T00:00:01Z', resourceVersion: '1' },
    spec: {},
  } as never;
  const events: { reason: string; note: string }[] = [];
  const r = new GatewayStatusReconciler({
    model,
    client: api as never,
    o: { controllerName: CONTROLLER, reservedPorts: [], namespace: 'portico-system', publishService: 'portico-system/portico' },
    informers: { Gateway: { store: new Map([['infra/gw', gw]]) } } as never,
    isLeader: () => true,
    programmed: () => true,
    events: { event: (_o, _type, reason, _action, note) => events.push({ reason, note }) },
  });
  /** Writes the spec (a new generation), reconciles, and returns the status written (kept on the Gateway, as the informer would). */
  const reconcile = async (addresses?: unknown[]) => {
    if (addresses !== undefined || !gw.metadata.generation) {
      gw.spec = { gatewayClassName: 'portico', listeners: [{ name: 'http', port: 8080, protocol: 'HTTP' }], ...(addresses ? { addresses } : {}) };
      gw.metadata.generation = (gw.metadata.generation ?? 0) + 1;
      const n = normalizeGateway(gw);
      assert.ok(n.ok, !n.ok ? n.reason : '');
      model.setCrd('Gateway', n.record);
    }
    const before = api.log.length;
    await r.reconcile({} as never, 'Gateway/infra/gw');
    const patch = api.log.slice(before).filter((c) => c.path.endsWith('/gateways/gw/status')).at(-1);
    if (patch) gw.status = patch.body.status;
    const st = gw.status as { addresses: { type: string; value: string }[]; conditions: { type: string; status: string; reason: string; message: string }[] };
    const cond = (type: string) => st.conditions.find((c) => c.type === type)!;
    return { status: st, accepted: cond('Accepted'), programmed: cond('Programmed'), calls: api.log.slice(before).map((c) => `${c.method} ${c.path}${c.query?.dryRun ? ' (dry run)' : ''}`) };
  };
  return { reconcile, events };
}

test('GatewayAddressEmpty: an IPAddress without a value gets the address the API server picks', async () => {
  const api = fakeApi();
  const { reconcile } = gatewaySetup(api);
  const s = await reconcile([{ type: 'IPAddress' }]);
  assert.deepEqual([s.programmed.status, s.programmed.reason], ['True', 'Programmed'], s.programmed.message);
  assert.deepEqual(s.status.addresses, [{ type: 'IPAddress', value: '198.19.1.100' }]);
  assert.equal(api.objects.get(OWN)!.spec.clusterIP, '198.19.1.100');
  assert.ok(!s.calls.some((c) => c.includes('dry run')), 'nothing to check');
});

test('GatewayStaticAddresses: an unsupported type is refused by name, an unusable address in the API server\'s words, the usable one served', async () => {
  const api = fakeApi();
  const { reconcile, events } = gatewaySetup(api);
  const invalid = { type: 'test/fake-invalid-type', value: 'fake address teehee!' };
  const unusable = { type: 'IPAddress', value: '192.0.2.77' };
  const usable = { type: 'IPAddress', value: '198.19.100.7' };

  const s1 = await reconcile([invalid, unusable, usable]);
  assert.deepEqual([s1.accepted.status, s1.accepted.reason], ['False', 'UnsupportedAddress']);
  assert.match(s1.accepted.message, /spec\.addresses\.0 \(type test\/fake-invalid-type, value "fake address teehee!"\)/);
  assert.equal(s1.programmed.status, 'False');
  assert.deepEqual(s1.status.addresses, []);
  assert.ok(!api.objects.has(OWN), 'nothing is served for a Gateway that is not accepted');

  const s2 = await reconcile([unusable, usable]);
  assert.deepEqual([s2.accepted.status, s2.accepted.reason], ['True', 'Accepted']);
  assert.deepEqual([s2.programmed.status, s2.programmed.reason], ['False', 'AddressNotUsable']);
  assert.match(s2.programmed.message, /192\.0\.2\.77: .*the provided IP \(192\.0\.2\.77\) is not in the valid range/);
  assert.doesNotMatch(s2.programmed.message, /portico-address-check/, 'the probe\'s generated name is not the user\'s business');
  assert.deepEqual(s2.status.addresses, [{ type: 'IPAddress', value: '198.19.100.7' }], 'the usable one is served meanwhile');
  assert.deepEqual(events.map((e) => e.reason), ['AddressNotUsable']);
  await reconcile();
  assert.equal(events.length, 1, 'one Warning per generation and message, not one per reconcile');

  const s3 = await reconcile([usable]);
  assert.deepEqual([s3.accepted.status, s3.programmed.status, s3.programmed.reason], ['True', 'True', 'Programmed']);
  assert.deepEqual(s3.status.addresses, [{ type: 'IPAddress', value: '198.19.100.7' }]);
  assert.ok(!s3.calls.some((c) => c.startsWith('DELETE') || c.includes('dry run')), `the Service already has it: ${s3.calls.join(', ')}`);
});

test('routability: an address asked for with routability Cluster is reported with it (a cluster IP); without, none is said', async () => {
  const api = fakeApi();
  const { reconcile } = gatewaySetup(api);
  const s1 = await reconcile([{ type: 'IPAddress', routability: 'Cluster' }]);
  assert.deepEqual(s1.status.addresses, [{ type: 'IPAddress', value: '198.19.1.100', routability: 'Cluster' }]);
  const s2 = await reconcile([{ type: 'IPAddress' }]);
  assert.deepEqual(s2.status.addresses, [{ type: 'IPAddress', value: '198.19.1.100' }]);
  const s3 = await reconcile([{ type: 'IPAddress', routability: 'example.com/Public' }]);
  assert.deepEqual([s3.accepted.status, s3.accepted.reason], ['False', 'UnsupportedAddress']);
});

test('a served Gateway that stops being accepted loses its Service and EndpointSlice (their pod ports may go to another Gateway)', async () => {
  const api = fakeApi();
  const { reconcile } = gatewaySetup(api);
  const s1 = await reconcile([{ type: 'IPAddress' }]);
  assert.equal(s1.programmed.status, 'True');
  assert.ok(api.objects.has(OWN));
  assert.ok([...api.objects.keys()].some((k) => k.includes('/endpointslices/')), 'its EndpointSlice was written');
  const s2 = await reconcile([{ type: 'Hostname', value: 'gw.example.com' }]);
  assert.deepEqual([s2.accepted.status, s2.accepted.reason], ['False', 'UnsupportedAddress']);
  assert.ok(!api.objects.has(OWN), 'its Service is gone');
  assert.ok(![...api.objects.keys()].some((k) => k.includes('/endpointslices/')), 'its EndpointSlice is gone');
  const s3 = await reconcile([{ type: 'IPAddress' }]);
  assert.equal(s3.programmed.status, 'True', 'accepted again: served again');
  assert.ok(api.objects.has(OWN));
});

test('a changed address recreates Portico\'s Service (only that object, as read); the steady state asks nothing more', async () => {
  const api = fakeApi();
  const { reconcile } = gatewaySetup(api);
  await reconcile();
  const before = api.objects.get(OWN)!;
  assert.equal(before.spec.clusterIP, '198.19.1.100');
  const s = await reconcile([{ type: 'IPAddress', value: '198.19.100.8' }]);
  const del = api.log.find((c) => c.method === 'DELETE')!;
  assert.equal(del.path, OWN);
  assert.deepEqual(del.body.preconditions, { uid: before.metadata.uid, resourceVersion: before.metadata.resourceVersion });
  assert.deepEqual(s.status.addresses, [{ type: 'IPAddress', value: '198.19.100.8' }]);
  assert.equal(s.programmed.status, 'True', s.programmed.message);
  const again = await reconcile();
  assert.deepEqual(again.calls.filter((c) => !c.startsWith('GET') && !c.startsWith('PATCH')), []);
  // Back to no address: the Service keeps the one it has (no recreation for nothing).
  const none = await reconcile([]);
  assert.deepEqual(none.status.addresses, [{ type: 'IPAddress', value: '198.19.100.8' }]);
  assert.ok(!none.calls.some((c) => c.startsWith('DELETE')));
});

test('an address another Service holds (Portico\'s own, another Gateway\'s) is never taken: no Service, or the current one kept', async () => {
  const api = fakeApi();
  const { reconcile, events } = gatewaySetup(api);
  const s = await reconcile([{ type: 'IPAddress', value: '198.19.0.10' }]);
  assert.deepEqual([s.programmed.status, s.programmed.reason], ['False', 'AddressNotUsable']);
  assert.match(s.programmed.message, /198\.19\.0\.10: another Service holds this cluster IP; the Gateway has no address until/);
  assert.deepEqual(s.status.addresses, []);
  assert.ok(!api.objects.has(OWN), 'no Service with an address nobody asked for');
  assert.equal(api.objects.get('/api/v1/namespaces/portico-system/services/portico')!.spec.clusterIP, '198.19.0.10');
  assert.equal(events.length, 1);

  const api2 = fakeApi();
  const g2 = gatewaySetup(api2);
  await g2.reconcile();
  const kept = await g2.reconcile([{ type: 'IPAddress', value: '198.19.0.10' }]);
  assert.deepEqual([kept.programmed.status, kept.programmed.reason], ['False', 'AddressNotUsable']);
  assert.match(kept.programmed.message, /keeps its current address 198\.19\.1\.100/);
  assert.deepEqual(kept.status.addresses, [{ type: 'IPAddress', value: '198.19.1.100' }]);
  assert.ok(!kept.calls.some((c) => c.startsWith('DELETE')), 'a working Service is not removed for an address it cannot have');
});

test('several addresses: the first usable one in the order written is served, the others are said not to be; IPv6 is refused without asking', async () => {
  const api = fakeApi();
  const { reconcile } = gatewaySetup(api);
  const s = await reconcile([{ type: 'IPAddress', value: '2001:db8::7' }, { type: 'IPAddress', value: '198.19.100.9' }, { type: 'IPAddress' }, { type: 'IPAddress', value: '198.19.100.10' }]);
  assert.deepEqual(s.status.addresses, [{ type: 'IPAddress', value: '198.19.100.9' }]);
  assert.deepEqual([s.programmed.status, s.programmed.reason], ['False', 'AddressNotUsable']);
  assert.match(s.programmed.message, /2001:db8::7: Portico's pods are reached over IPv4/);
  assert.match(s.programmed.message, /198\.19\.100\.10 not served: a Gateway has one address, the cluster IP of its Service \(198\.19\.100\.9\)/);
  assert.equal(s.calls.filter((c) => c.includes('dry run')).length, 1, 'only the IPv4 address is checked with the API server');
  const listener = (s.status as unknown as { listeners: { conditions: { type: string; status: string }[] }[] }).listeners[0]!;
  assert.equal(listener.conditions.find((c) => c.type === 'Programmed')!.status, 'True', 'traffic is served on the address it has');
});

test('a Service of the Gateway\'s name that is not Portico\'s is neither deleted nor rewritten, whatever address is asked for', async () => {
  const api = fakeApi({ [OWN]: '198.19.5.5' });
  const { reconcile } = gatewaySetup(api);
  const s = await reconcile([{ type: 'IPAddress', value: '198.19.100.11' }]);
  assert.deepEqual([s.programmed.status, s.programmed.reason], ['False', 'AddressNotAssigned']);
  assert.match(s.programmed.message, /exists and is not Portico's/);
  assert.deepEqual(s.calls.filter((c) => !c.startsWith('GET') && !c.endsWith('/status')), []);
  assert.equal(api.objects.get(OWN)!.spec.clusterIP, '198.19.5.5');
});

test('an address held by a Service Portico does not watch: refused by the API server after the recreation, and the previous address comes back', async () => {
  const api = fakeApi({ '/api/v1/namespaces/portico-system/services/portico': '198.19.0.10', '/api/v1/namespaces/unwatched/services/db': '198.19.100.20' });
  const { reconcile } = gatewaySetup(api);
  await reconcile();
  assert.equal(api.objects.get(OWN)!.spec.clusterIP, '198.19.1.100');
  const s = await reconcile([{ type: 'IPAddress', value: '198.19.100.20' }]);
  assert.deepEqual([s.programmed.status, s.programmed.reason], ['False', 'AddressNotUsable']);
  assert.match(s.programmed.message, /198\.19\.100\.20: .*provided IP is already allocated; the Gateway keeps its current address 198\.19\.1\.100/);
  assert.deepEqual(s.status.addresses, [{ type: 'IPAddress', value: '198.19.1.100' }]);
  assert.equal(api.objects.get(OWN)!.spec.clusterIP, '198.19.1.100');
  assert.equal(api.objects.get('/api/v1/namespaces/unwatched/services/db')!.spec.clusterIP, '198.19.100.20', 'the other Service is untouched');
});

// ---- ListenerSets -------------------------------------------------------------------------------------------------
test('ListenerSet status: Accepted/Programmed (NotAllowed mirrored, Programmed after the Gateway\'s), per-listener conditions and attachedRoutes; the Gateway lists its own listeners and counts attachedListenerSets; route parents of kind ListenerSet', async () => {
  const api = fakeApi();
  const model = modelOf({
    services: [svc('portico', [{ port: 80 }], 'portico-system', { clusterIP: '198.19.0.10' }), svc('web', [{ port: 8080 }], 'infra')],
    slices: [slice('portico-1', 'portico', [{ port: 80 }], [{ ip: '198.18.0.5' }], 'portico-system')],
  });
  const meta = (name: string, ns: string | undefined, extra: Record<string, unknown> = {}) => ({ name, ...(ns ? { namespace: ns } : {}), uid: `uid-${name}`, generation: 1, creationTimestamp: '2026-01-01T00:00:01Z', resourceVersion: '1', ...extra });
  const cls = normalizeGatewayClass({ metadata: meta('portico', undefined), spec: { controllerName: CONTROLLER } } as KubeObject);
  assert.ok(cls.ok);
  model.setCrd('GatewayClass', cls.record);
  const gw = { metadata: meta('gw', 'infra'), spec: { gatewayClassName: 'portico', listeners: [{ name: 'own', port: 80, protocol: 'HTTP', hostname: 'own.example.com' }], allowedListeners: { namespaces: { from: 'Same' } } } } as KubeObject & { status?: any };
  const n = normalizeGateway(gw);
  assert.ok(n.ok);
  model.setCrd('Gateway', n.record);
  const set = (name: string, ns: string, listeners: unknown[]) => ({ metadata: meta(name, ns), spec: { parentRef: { name: 'gw', namespace: 'infra' }, listeners } }) as KubeObject & { status?: any };
  const ls = set('ls', 'infra', [{ name: 'a', port: 80, protocol: 'HTTP', hostname: 'a.example.com' }, { name: 'dup', port: 80, protocol: 'HTTP', hostname: 'own.example.com' }]);
  const foreign = set('ls', 'tenant', [{ name: 'b', port: 80, protocol: 'HTTP', hostname: 'b.example.com' }]);
  for (const o of [ls, foreign]) {
    const r = normalizeListenerSet(o);
    assert.ok(r.ok);
    model.setCrd('ListenerSet', r.record);
  }
  const rt = { metadata: meta('r', 'infra'), spec: { parentRefs: [{ group: 'gateway.networking.k8s.io', kind: 'ListenerSet', name: 'ls', sectionName: 'a' }], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] } } as KubeObject & { status?: any };
  const nr = normalizeHttpRoute(rt);
  assert.ok(nr.ok);
  model.setCrd('HTTPRoute', nr.record);
  const r = new GatewayStatusReconciler({
    model,
    client: api as never,
    o: { controllerName: CONTROLLER, reservedPorts: [], namespace: 'portico-system', publishService: 'portico-system/portico' },
    informers: { Gateway: { store: new Map([['infra/gw', gw]]) }, ListenerSet: { store: new Map([['infra/ls', ls], ['tenant/ls', foreign]]) }, HTTPRoute: { store: new Map([['infra/r', rt]]) } } as never,
    isLeader: () => true,
    programmed: () => true,
  });
  const written = (path: string) => api.log.filter((c) => c.method === 'PATCH' && c.path.endsWith(path)).at(-1)?.body.status;
  const cond = (st: any, type: string) => { const c = st.conditions.find((x: any) => x.type === type); return [c.status, c.reason]; };

  // Before the Gateway is programmed, the accepted set is not either (ParentNotProgrammed).
  await r.reconcile({} as never, 'ListenerSet/infra/ls');
  let st = written('/namespaces/infra/listenersets/ls/status');
  assert.deepEqual([cond(st, 'Accepted'), cond(st, 'Programmed')], [['True', 'ListenersNotValid'], ['False', 'ParentNotProgrammed']]);
  assert.equal(st.conditions.every((c: any) => c.observedGeneration === 1), true);

  await r.reconcile({} as never, 'Gateway/infra/gw');
  const g = written('/namespaces/infra/gateways/gw/status');
  gw.status = g;
  assert.equal(g.attachedListenerSets, 1);
  assert.deepEqual(g.listeners.map((l: any) => l.name), ['own'], 'a set\'s listeners are reported on the set, not the Gateway');
  assert.deepEqual(cond(g, 'Programmed'), ['True', 'Programmed']);

  await r.reconcile({} as never, 'ListenerSet/infra/ls');
  st = written('/namespaces/infra/listenersets/ls/status');
  assert.deepEqual([cond(st, 'Accepted'), cond(st, 'Programmed')], [['True', 'ListenersNotValid'], ['True', 'Programmed']]);
  const byName = Object.fromEntries(st.listeners.map((l: any) => [l.name, l]));
  assert.deepEqual(['Accepted', 'ResolvedRefs', 'Programmed', 'Conflicted'].map((t) => cond(byName.a, t)), [['True', 'Accepted'], ['True', 'ResolvedRefs'], ['True', 'Programmed'], ['False', 'NoConflicts']]);
  assert.equal(byName.a.attachedRoutes, 1);
  assert.deepEqual(byName.a.supportedKinds, HTTP_KINDS.map((k) => ({ group: k.group, kind: k.kind })));
  assert.deepEqual(['Accepted', 'Programmed', 'Conflicted'].map((t) => cond(byName.dup, t)), [['False', 'HostnameConflict'], ['False', 'HostnameConflict'], ['True', 'HostnameConflict']]);

  await r.reconcile({} as never, 'ListenerSet/tenant/ls');
  st = written('/namespaces/tenant/listenersets/ls/status');
  assert.deepEqual([cond(st, 'Accepted'), cond(st, 'Programmed')], [['False', 'NotAllowed'], ['False', 'NotAllowed']]);

  await r.reconcile({} as never, 'HTTPRoute/infra/r');
  const rs = written('/namespaces/infra/httproutes/r/status');
  assert.deepEqual(rs.parents.map((p: any) => [p.parentRef.kind, p.parentRef.name, p.parentRef.namespace, p.parentRef.sectionName, cond(p, 'Accepted')]), [['ListenerSet', 'ls', 'infra', 'a', ['True', 'Accepted']]]);

  // The steady state patches nothing more.
  ls.status = written('/namespaces/infra/listenersets/ls/status');
  const before = api.log.length;
  await r.reconcile({} as never, 'ListenerSet/infra/ls');
  assert.equal(api.log.slice(before).filter((c) => c.method === 'PATCH').length, 0);
});
