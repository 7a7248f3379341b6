// TCP and UDP services (--tcp-services-configmap / --udp-services-configmap, ingress-nginx's format) end to end:
// real API server (RBAC on), Portico in-process as its ServiceAccount, real nginx with the stream module, echo pods
// of the pod host with a raw TCP and UDP echo each (e2e/podhost/echo.ts startStreamEcho). Bytes round-trip
// through Portico's TCP and UDP listeners; a new pod reaches new connections (one debounced reload); a bad entry
// gets a Warning Event on the ConfigMap naming its key while the others keep working.
// Ports: Portico 53480-53483 (HTTP, HTTPS, status, health), TCP listener 53484, UDP listener 53485, a TCP listener
// whose Service does not exist 53486.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, ensureCluster, uniqueNamespace } from './harness/cluster.ts';
import { addPod, deleteNamespace, removePod } from './harness/pods.ts';
import { request, until } from './harness/http.ts';
import { startPortico, type RunningPortico } from './harness/portico.ts';
import { tcp, udp } from '../reconcilers/nginx-driver/nginx/stream-client.test-helpers.ts';

const BASE = 53480;
const TCP_PORT = 53484;
const UDP_PORT = 53485;
const MISSING_PORT = 53486;
let p: RunningPortico;
let ns: string;

const reloads = () => p.metric('portico_nginx_reloads_total', { result: 'success' });


/** The pod a fresh TCP connection reaches (its greeting line), or null. */
const tcpPod = async () => (await tcp(TCP_PORT, '', (s) => s.includes('\n'), 1_000).catch(() => null))?.data.trim() ?? null;

async function configMap(name: string, data: Record<string, string>): Promise<void> {
  const path = `/api/v1/namespaces/${ns}/configmaps`;
  try {
    await admin().request('PUT', `${path}/${name}`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data } });
  } catch {
    await admin().request('POST', path, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data } });
  }
}

async function warnings(): Promise<{ reason: string; note: string; name: string }[]> {
  const list = (await admin().request('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`)) as {
    items: { type?: string; reason?: string; note?: string; regarding?: { kind?: string; name?: string } }[];
  };
  return list.items
    .filter((e) => e.type === 'Warning' && e.regarding?.kind === 'ConfigMap')
    .map((e) => ({ reason: e.reason ?? '', note: e.note ?? '', name: e.regarding?.name ?? '' }));
}

before(async () => {
  await ensureCluster();
  ns = await uniqueNamespace('tcpudp');
  await admin().request('POST', `/api/v1/namespaces/${ns}/services`, {
    body: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'echo' },
      spec: {
        selector: { app: 'echo' },
        ports: [
          { name: 'tcp', port: 9000, targetPort: 'tcp-echo', protocol: 'TCP' },
          { name: 'dns', port: 53, targetPort: 'udp-echo', protocol: 'UDP' },
        ],
      },
    },
  });
  await addPod(ns, 'echo-1', { labels: { app: 'echo' }, tcpPort: 9000, udpPort: 9053 });
  await configMap('tcp-services', {
    [TCP_PORT]: `${ns}/echo:tcp`,
    [MISSING_PORT]: `${ns}/nothing-here:80`,
    [BASE]: `${ns}/echo:9000`, // Portico's own HTTP port: refused
    '53487': `${ns}/echo:9000;}`, // injection attempt: refused
  });
  await configMap('udp-services', { [UDP_PORT]: `${ns}/echo:53` });
  p = await startPortico(BASE, ['--configmap', `${ns}/portico`, '--tcp-services-configmap', `${ns}/tcp-services`, '--udp-services-configmap', `${ns}/udp-services`]);
  await until('portico ready', async () => (await request(p.healthPort, 'x', '/readyz')).status === 200);
});

after(async () => {
  await p?.stop();
  if (ns) await deleteNamespace(ns);
});

describe('TCP and UDP services', () => {
  test('TCP: bytes round-trip through the listener to the pod', async () => {
    await until('TCP served', async () => (await tcpPod()) === 'echo-1');
    const r = await tcp(TCP_PORT, 'hello tcp', (s) => s.includes('hello tcp'));
    assert.equal(r.data, 'echo-1\nhello tcp');
  });

  test('UDP: a datagram round-trips through the listener to the pod', async () => {
    assert.equal(await until('UDP answer', () => udp(UDP_PORT, 'ping').catch(() => false)), 'echo-1:ping');
  });

  test('bad entries: a Warning Event on the ConfigMap names each key; a missing Service keeps a listener that closes', async () => {
    await until('warnings for both bad keys', async () => {
      const w = (await warnings()).filter((e) => e.name === 'tcp-services' && e.reason === 'InvalidServiceEntry');
      return w.some((e) => e.note.includes(`"${BASE}"`)) && w.some((e) => e.note.includes('"53487"'));
    });
    await until('ServiceNotFound warning', async () => (await warnings()).some((e) => e.reason === 'ServiceNotFound' && e.note.includes(String(MISSING_PORT))));
    const r = await tcp(MISSING_PORT, 'x', () => false);
    assert.deepEqual(r, { data: '', closed: true });
    // The refused entries took nothing: the HTTP port still answers HTTP.
    assert.ok((await request(p.httpPort, 'unknown.example', '/')).status > 0);
  });

  test('endpoint change: a new pod replaces the old one for new connections, with one reload; propagation measured', async () => {
    await until('settled', () => p.gateway.structural.state === 'idle' && !p.gateway.structural.dirty);
    const r0 = await reloads();
    const t0 = performance.now();
    await addPod(ns, 'echo-2', { labels: { app: 'echo' }, tcpPort: 9000, udpPort: 9053 });
    await removePod(ns, 'echo-1');
    await until('only echo-2 reached', async () => {
      const seen = new Set<string | null>();
      for (let i = 0; i < 6; i++) seen.add(await tcpPod());
      return seen.size === 1 && seen.has('echo-2');
    }, 30_000, 20);
    const ms = performance.now() - t0;
    await until('settled again', () => p.gateway.structural.state === 'idle' && !p.gateway.structural.dirty);
    const n = (await reloads()) - r0;
    console.log(`# pod replaced (add + remove) → only the new pod reached: ${ms.toFixed(0)} ms, ${n} reload(s)`);
    assert.ok(n >= 1 && n <= 4, `reloads for two endpoint changes: ${n}`);
    assert.equal(await until('UDP on echo-2', () => udp(UDP_PORT, 'x').catch(() => false)), 'echo-2:x');
  });
});
