// Tenant isolation against Portico itself (issue 19), end to end: real apiserver (RBAC on), Portico as its
// ServiceAccount, real nginx, echo pods, Service cluster IPs forwarded as kube-proxy would.
//
// Portico runs here as a process, listening on the host's end of the pod network's veth (so pods and cluster IPs
// can reach it, as they reach a Portico pod). Its published Service (--publish-service) is a Service of a
// namespace standing for portico-system; its EndpointSlice lists "another replica": a cluster IP forwarded to
// this Portico's listener, i.e. Portico by an address it does not hold itself. A second forwarded address that no
// Service of Portico's lists stands for a NodePort or load balancer in front of Portico: only the hop header can
// end a loop through it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { admin, ensureCluster, ownIngressClass, uniqueNamespace } from './harness/cluster.ts';
import { addPod, addServiceVip, deleteNamespace, podRequests } from './harness/pods.ts';
import { request, until, type Reply } from './harness/http.ts';
import { REPO_ROOT, startPortico, type RunningPortico } from './harness/portico.ts';
import { createIngress, createService, eventsAbout } from './harness/objects.ts';

const BASE = 54380;
/** The root namespace's end of the pod network's veth (e2e/controlplane/env.sh HOST_ADDR). */
const HOST_ADDR = '198.19.255.1';
const RUN = Date.now().toString(36);
const H = (name: string) => `${name}.self${RUN}.test`;
const N = 'nginx.ingress.kubernetes.io/';
let p: RunningPortico;
let ns: string;
let selfNs: string;
let CLASS = '';
let removeClass: (() => Promise<void>) | undefined;
const cleanups: (() => Promise<void>)[] = [];
/** Cluster IP of Portico's own Service; the "other replica" listed in its EndpointSlice; a forwarder no Portico Service lists. */
let selfClusterIP = '';
let replicaAddr = '';
let relayAddr = '';

const get = (host: string, p0: string, headers: Record<string, string> = {}, timeoutMs = 10_000): Promise<Reply> =>
  request(BASE, host, p0, { headers, address: HOST_ADDR, timeoutMs });
const ingress = (name: string, annotations: Record<string, string> = {}, svc = 'web') => createIngress(ns, CLASS, name, H(name), annotations, { svc });
const eventsFor = (name: string) => eventsAbout(ns, 'Ingress', name);
const settled = () => until('no structural sync pending', () => p.gateway.structural.state === 'idle' && !p.gateway.structural.dirty);

async function selectorless(namespace: string, name: string, addresses: string[], o: { type?: string; externalName?: string } = {}): Promise<string> {
  const svc = await admin().request<{ spec: { clusterIP?: string } }>('POST', `/api/v1/namespaces/${namespace}/services`, {
    body: { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ...(o.type ? { type: o.type } : {}), ...(o.externalName ? { externalName: o.externalName } : {}), ports: [{ name: 'http', port: 80 }] } },
  });
  if (addresses.length) {
    await admin().request('POST', `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`, {
      body: {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: `${name}-1`, labels: { 'kubernetes.io/service-name': name } },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
        endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready: true } })),
      },
    });
  }
  return svc.spec.clusterIP ?? '';
}

/** Lines of this Portico's access log (one nginx worker: see the ConfigMap below) that contain `marker`. */
function logLines(marker: string): string[] {
  try {
    return readFileSync(path.join(REPO_ROOT, '.dev', `nginx-${BASE}`, 'access.log'), 'utf8').split('\n').filter((l) => l.includes(marker));
  } catch {
    return [];
  }
}

before(async () => {
  await ensureCluster();
  selfNs = await uniqueNamespace('portico-self');
  ns = await uniqueNamespace('tenant');
  const cls = await ownIngressClass('self');
  CLASS = cls.name;
  removeClass = cls.remove;
  // Two addresses that are Portico without being its listener: kube-proxy-style forwarders to it.
  replicaAddr = await selectorless(selfNs, 'replica-address', []);
  relayAddr = await selectorless(ns, 'relay-address', []);
  cleanups.push(await addServiceVip(replicaAddr, 80, HOST_ADDR, BASE));
  cleanups.push(await addServiceVip(relayAddr, 80, HOST_ADDR, BASE));
  // Portico's own Service: its EndpointSlice lists the "other replica".
  selfClusterIP = await selectorless(selfNs, 'portico', [replicaAddr]);
  // Its own ConfigMap: one nginx worker (the access log is then in order), and the switch of the tenant tests.
  await admin().request('POST', `/api/v1/namespaces/${selfNs}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'portico' }, data: { 'worker-processes': '1' } } });
  p = await startPortico(BASE, [...cls.flags, '--listen-address', HOST_ADDR, '--publish-service', `${selfNs}/portico`, '--update-status', 'false', '--configmap', `${selfNs}/portico`]);
  await until('portico ready', async () => (await request(p.healthPort, 'x', '/readyz')).status === 200);
  await createService(ns, 'web', 'web');
  await createService(ns, 'errors', 'errors');
  await createService(ns, 'shadow', 'shadow');
  await createService(ns, 'flaky', 'flaky');
  await addPod(ns, 'web-1', { labels: { app: 'web' } });
  await addPod(ns, 'errors-1', { labels: { app: 'errors' } });
  await addPod(ns, 'shadow-1', { labels: { app: 'shadow' } });
  await addPod(ns, 'flaky-1', { labels: { app: 'flaky' }, status: 503 });
  await ingress('ok');
  await until('the valid Ingress served', async () => (await get(H('ok'), '/')).status === 200);
});

after(async () => {
  await p?.stop();
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  if (ns) await deleteNamespace(ns);
  if (selfNs) await deleteNamespace(selfNs);
  await removeClass?.();
});

describe("Portico never proxies to itself (its Service, its pods)", () => {
  test('a selector-less Service whose EndpointSlice lists a Portico replica is refused with a Warning; 503 there, the valid Ingress keeps being served', async () => {
    await selectorless(ns, 'evil', [replicaAddr]);
    await ingress('evil', {}, 'evil');
    const ev = await until('ForbiddenEndpoint on evil', async () => (await eventsFor('evil')).find((e) => e.reason === 'ForbiddenEndpoint'));
    assert.equal(ev.type, 'Warning');
    assert.match(ev.note, new RegExp(`service ${ns}/evil: .*${replicaAddr.replace(/\./g, '\\.')} \\(one of Portico's own`));
    await settled();
    const r = await get(H('evil'), '/', {}, 5_000);
    assert.equal(r.status, 503, `never proxied to a Portico replica (got ${r.status} ${r.error ?? ''})`);
    assert.equal((await get(H('ok'), '/')).json().pod, 'web-1');
  });

  test("an ExternalName to Portico's Service DNS name, or to its cluster IP, is refused with a Warning", async () => {
    await selectorless(ns, 'ext-dns', [], { type: 'ExternalName', externalName: `portico.${selfNs}.svc.cluster.local` });
    await selectorless(ns, 'ext-ip', [], { type: 'ExternalName', externalName: selfClusterIP });
    await ingress('ext-dns', {}, 'ext-dns');
    await ingress('ext-ip', {}, 'ext-ip');
    const dns = await until('ForbiddenEndpoint on ext-dns', async () => (await eventsFor('ext-dns')).find((e) => e.reason === 'ForbiddenEndpoint'));
    assert.match(dns.note, new RegExp(`Portico's own Service ${selfNs}/portico`));
    const ip = await until('ForbiddenEndpoint on ext-ip', async () => (await eventsFor('ext-ip')).find((e) => e.reason === 'ForbiddenEndpoint'));
    assert.match(ip.note, new RegExp(`${selfClusterIP.replace(/\./g, '\\.')}, one of Portico's own`));
    await settled();
    for (const h of ['ext-dns', 'ext-ip']) assert.equal((await get(H(h), '/', {}, 5_000)).status, 503, h);
    assert.equal((await get(H('ok'), '/')).status, 200);
  });
});

describe('loop detection (X-Portico-Hop)', () => {
  test('a loop through an address Portico cannot know (a forwarder to its listener) ends with 508 after one hop', async () => {
    await selectorless(ns, 'looper', [relayAddr]);
    await ingress('loop', {}, 'looper');
    const marker = `/loop-${RUN}`;
    await until('the looping route is live', async () => (await get(H('loop'), `${marker}-probe`, {}, 5_000)).status === 508, 20_000, 100);
    const t0 = performance.now();
    const r = await get(H('loop'), marker, {}, 5_000);
    const ms = performance.now() - t0;
    assert.equal(r.status, 508, `the second arrival is answered 508 (got ${r.status} ${r.error ?? ''})`);
    assert.ok(ms < 2_000, `at once, not when worker_connections run out (${Math.round(ms)} ms)`);
    // One worker writes the log in order: once a later request's line is there, every line of the loop is too.
    const sentinel = `/sentinel-${RUN}`;
    await until('the log is flushed past the loop', async () => {
      await get(H('ok'), sentinel);
      return logLines(sentinel).length > 0;
    }, 20_000, 250);
    const lines = logLines(`${marker} `);
    assert.equal(lines.length, 2, `the client's request and its one looped copy, nothing more:\n${lines.join('\n')}`);
    assert.equal(lines.filter((l) => / 508 /.test(l)).length, 2, 'both answered 508');
    assert.equal((await get(H('ok'), '/')).status, 200, 'other tenants are unaffected');
  });

  test("another installation's id in front passes (and is kept); a client sending this installation's id only gets 508 itself", async () => {
    const chained = await get(H('ok'), '/', { 'X-Portico-Hop': 'feedfacefeedface' });
    assert.equal(chained.status, 200);
    const hop = chained.json().headers['x-portico-hop'] ?? '';
    const m = /^feedfacefeedface, ([0-9a-f]{16})$/.exec(hop);
    assert.ok(m, `the backend sees the chain with this installation's id appended: ${JSON.stringify(hop)}`);
    const id = m[1] as string;
    const plain = await get(H('ok'), '/');
    assert.equal(plain.json().headers['x-portico-hop'], id, 'a request from a client carries only the id');
    assert.equal((await get(H('ok'), '/', { 'X-Portico-Hop': `feedfacefeedface, ${id}` })).status, 508);
    assert.equal((await get(H('ok'), '/', { 'X-Portico-Hop': `${id}0` })).status, 200, 'only the exact id counts');
    assert.equal((await get(H('ok'), '/')).status, 200, 'the next client is served');
  });
});

describe("Portico's own addresses follow its Service", () => {
  test('a replica added to the published Service later: an Ingress already using its address is refused from then on (until then the hop header ended the loop)', async () => {
    const late = await selectorless(selfNs, 'late-replica-address', []);
    cleanups.push(await addServiceVip(late, 80, HOST_ADDR, BASE));
    await selectorless(ns, 'late', [late]);
    await ingress('late', {}, 'late');
    await until('served to the (not yet known) replica: the loop ends with 508', async () => (await get(H('late'), '/', {}, 5_000)).status === 508, 20_000, 100);
    // The new replica joins Portico's Service (as a new pod would join its EndpointSlice).
    await admin().request('PATCH', `/apis/discovery.k8s.io/v1/namespaces/${selfNs}/endpointslices/portico-1`, {
      contentType: 'application/merge-patch+json',
      body: { endpoints: [replicaAddr, late].map((a) => ({ addresses: [a], conditions: { ready: true } })) },
    });
    const ev = await until('ForbiddenEndpoint on late', async () => (await eventsFor('late')).find((e) => e.reason === 'ForbiddenEndpoint'));
    assert.match(ev.note, new RegExp(`${late.replace(/\./g, '\\.')} \\(one of Portico's own`));
    await until('503 now, never proxied to the replica', async () => (await get(H('late'), '/', {}, 5_000)).status === 503);
    assert.equal((await get(H('ok'), '/')).status, 200);
  });
});

describe("auth-url and mirror-target stay in the Ingress's namespace (ConfigMap allow-cross-namespace-auth)", () => {
  test("another namespace's Service, by name or cluster IP: auth fails closed, nothing mirrored, Warnings say why; the switch allows it", async () => {
    const victimNs = await uniqueNamespace('victim');
    cleanups.push(() => deleteNamespace(victimNs));
    await createService(victimNs, 'secret', 'secret');
    await addPod(victimNs, 'secret-1', { labels: { app: 'secret' } });
    const victimIP = (await admin().request<{ spec: { clusterIP: string } }>('GET', `/api/v1/namespaces/${victimNs}/services/secret`)).spec.clusterIP;
    const target = `http://secret.${victimNs}.svc.cluster.local`;
    await ingress('xauth', { [`${N}auth-url`]: `${target}/verify` });
    await ingress('xauthip', { [`${N}auth-url`]: `http://${victimIP}/verify` });
    await ingress('xmirror', { [`${N}mirror-target`]: `${target}$request_uri` });
    const warned = async (name: string, re: RegExp) =>
      until(`a Warning on ${name}`, async () => (await eventsFor(name)).find((e) => e.type === 'Warning' && re.test(e.note)));
    await warned('xauth', new RegExp(`names Service ${victimNs}/secret of another namespace: only Services of the Ingress's own namespace may be named`));
    await warned('xauthip', new RegExp(`points at ${victimIP.replace(/\./g, '\\.')}, the cluster IP of Service ${victimNs}/secret of another namespace`));
    const mw = await warned('xmirror', /of another namespace/);
    assert.equal((await eventsFor('xmirror')).find((e) => e.note === mw.note)?.reason, 'MirrorUnavailable');
    await settled();
    const marker = `x-${RUN}`;
    assert.equal((await get(H('xauth'), `/?m=${marker}`)).status, 503, 'fails closed, never served without its auth');
    assert.equal((await get(H('xauthip'), `/?m=${marker}`)).status, 503);
    const mirrored = await get(H('xmirror'), `/?m=${marker}`);
    assert.equal(mirrored.json().pod, 'web-1', 'the Ingress itself is served');
    // The copy would be sent while the client's request is proxied: once that answered, nothing reached the victim.
    assert.deepEqual((await podRequests(victimNs, 'secret-1')).filter((x) => x.path.includes(marker)), [], 'the other namespace received nothing');

    // The switch (the administrator's): the same objects now reach the other namespace.
    await admin().request('PUT', `/api/v1/namespaces/${selfNs}/configmaps/portico`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'portico' }, data: { 'worker-processes': '1', 'allow-cross-namespace-auth': 'true' } } });
    try {
      const ok = await until('auth-url to the other namespace applies', async () => { const r = await get(H('xauth'), `/?m=${marker}-on`); return r.status === 200 && r; });
      assert.equal(ok.json().pod, 'web-1');
      await until('the mirror copy arrives', async () => {
        await get(H('xmirror'), `/?m=${marker}-copy`);
        return (await podRequests(victimNs, 'secret-1')).some((x) => x.path.includes(`${marker}-copy`));
      });
      assert.ok((await podRequests(victimNs, 'secret-1')).some((x) => x.path === '/verify'), 'the auth subrequest reached the other namespace');
    } finally {
      await admin().request('PUT', `/api/v1/namespaces/${selfNs}/configmaps/portico`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'portico' }, data: { 'worker-processes': '1' } } });
    }
    await until('refused again without the switch', async () => (await get(H('xauth'), '/')).status === 503);
  });
});

describe('client-sent X-Real-IP / X-Forwarded-* never reach error-page and mirror backends', () => {
  const spoofed = { 'X-Real-IP': '192.0.2.66', 'X-Forwarded-For': '192.0.2.66', 'X-Forwarded-Proto': 'gopher', 'X-Forwarded-Host': 'evil.example', 'X-Forwarded-Port': '1' };
  const expectClean = (h: Record<string, string | string[] | undefined>, host: string, what: string) => {
    assert.equal(h['x-real-ip'], HOST_ADDR, `${what}: X-Real-IP is the client's address`);
    assert.equal(h['x-forwarded-for'], HOST_ADDR, `${what}: X-Forwarded-For is replaced`);
    assert.equal(h['x-forwarded-proto'], 'http', `${what}: X-Forwarded-Proto`);
    assert.equal(h['x-forwarded-host'], host, `${what}: X-Forwarded-Host`);
    assert.equal(h['x-forwarded-port'], '80', `${what}: X-Forwarded-Port is the published port`);
  };

  test('custom-http-errors: the default backend gets the same forwarded headers as the proxied request', async () => {
    await ingress('errpage', { [`${N}custom-http-errors`]: '503', [`${N}default-backend`]: 'errors' }, 'flaky');
    const marker = `err-${RUN}`;
    await until('the error page is served', async () => (await get(H('errpage'), `/?m=${marker}`)).json<{ pod: string }>().pod === 'errors-1', 20_000, 100);
    const r = await get(H('errpage'), `/?m=${marker}-spoof`, spoofed);
    assert.equal(r.json().pod, 'errors-1');
    const flaky = (await podRequests(ns, 'flaky-1')).filter((x) => x.path.includes(`${marker}-spoof`));
    assert.equal(flaky.length, 1);
    expectClean(flaky[0]!.headers, H('errpage'), 'the backend');
    const seen = (await podRequests(ns, 'errors-1')).filter((x) => x.path.includes(`${marker}-spoof`));
    assert.equal(seen.length, 1);
    expectClean(seen[0]!.headers, H('errpage'), 'the error-page backend');
    assert.equal(seen[0]!.headers['x-code'], '503');
  });

  test('mirror-target: the copy carries the same forwarded headers as the proxied request', async () => {
    await ingress('mirror', { [`${N}mirror-target`]: `http://shadow.${ns}.svc.cluster.local$request_uri` });
    const copies = async (marker: string) => (await podRequests(ns, 'shadow-1')).filter((x) => x.path.includes(marker));
    await until('the mirror applied', async () => {
      await get(H('mirror'), `/probe?m=probe-${Date.now()}`);
      return (await podRequests(ns, 'shadow-1')).some((x) => x.path.includes('m=probe-'));
    }, 30_000, 200);
    const marker = `mirror-${RUN}`;
    const r = await get(H('mirror'), `/x?m=${marker}`, spoofed);
    expectClean(r.json().headers, H('mirror'), 'the main backend');
    const [copy] = await until('the copy', async () => { const c = await copies(marker); return c.length === 1 && c; });
    expectClean(copy!.headers, H('mirror'), 'the mirror backend');
  });
});
