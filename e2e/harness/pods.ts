// Echo backends with real pod IPs: the pod host daemon (inside the netns) binds the listener, this module creates
// the Pod object bound to the harness Node and patches its status Running/Ready with that IP, so the real
// EndpointSlice controller publishes it.
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import type { EchoTls, SeenRequest } from '../podhost/echo.ts';
import { admin, DEV, uniqueNamespace } from './cluster.ts';
import { isNotFound } from '../../operator/kube/client.ts';

export const NODE_NAME = 'portico-node-0';
const SOCKET = path.join(DEV, 'podhost.sock');

function podhost<T>(method: string, p: string, body?: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      { socketPath: SOCKET, method, path: p, headers: data ? { 'Content-Type': 'application/json' } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if ((res.statusCode ?? 500) >= 300) reject(new Error(`podhost ${method} ${p}: ${res.statusCode} ${text}`));
          else resolve(JSON.parse(text) as T);
        });
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

export interface AddPodOptions {
  labels?: Record<string, string>;
  port?: number;
  portName?: string;
  ready?: boolean;
  /** Every answer of this pod is delayed (a slow replica). */
  delayMs?: number;
  /** Answer every request with this status (a failing pod). */
  status?: number;
  /** Also a raw TCP / UDP echo on these ports (e2e/podhost/echo.ts startStreamEcho). */
  tcpPort?: number;
  udpPort?: number;
  /** Serve HTTPS (and HTTP/2 by ALPN) with this certificate; optionally ask for client certificates. */
  tls?: EchoTls;
  /** Serve cleartext HTTP/2 (prior knowledge), e.g. a gRPC backend. */
  h2c?: boolean;
  /** The pod's address drops every packet: connections to it time out. */
  blackhole?: boolean;
}

const podPath = (ns: string, name?: string, sub?: string) =>
  `/api/v1/namespaces/${ns}/pods${name ? `/${name}` : ''}${sub ? `/${sub}` : ''}`;

function readyConditions(ready: boolean, now: string) {
  const s = ready ? 'True' : 'False';
  return [
    { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
    { type: 'Initialized', status: 'True', lastTransitionTime: now },
    { type: 'ContainersReady', status: s, lastTransitionTime: now },
    { type: 'Ready', status: s, lastTransitionTime: now },
  ];
}

/** Starts an echo backend and its Pod; resolves with the pod IP once the Pod is Running (and Ready). */
export async function addPod(namespace: string, name: string, o: AddPodOptions = {}): Promise<string> {
  const port = o.port ?? 8080;
  const { ip } = await podhost<{ ip: string }>('POST', '/pods', { namespace, name, port, delayMs: o.delayMs, status: o.status, tcpPort: o.tcpPort, udpPort: o.udpPort, tls: o.tls, h2c: o.h2c, blackhole: o.blackhole });
  await admin().request('POST', podPath(namespace), {
    body: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace, labels: o.labels ?? {} },
      spec: {
        nodeName: NODE_NAME,
        automountServiceAccountToken: false,
        terminationGracePeriodSeconds: 30,
        containers: [{
          name: 'echo',
          image: 'portico/echo:e2e',
          ports: [
            { name: o.portName ?? 'http', containerPort: port },
            ...(o.tcpPort ? [{ name: 'tcp-echo', containerPort: o.tcpPort }] : []),
            ...(o.udpPort ? [{ name: 'udp-echo', containerPort: o.udpPort, protocol: 'UDP' }] : []),
          ],
        }],
      },
    },
  });
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const ready = o.ready ?? true;
  await admin().request('PATCH', podPath(namespace, name, 'status'), {
    contentType: 'application/merge-patch+json',
    body: {
      status: {
        phase: 'Running',
        hostIP: '198.19.255.2',
        podIP: ip,
        podIPs: [{ ip }],
        startTime: now,
        conditions: readyConditions(ready, now),
        containerStatuses: [
          {
            name: 'echo',
            ready,
            started: true,
            restartCount: 0,
            image: 'portico/echo:e2e',
            imageID: '',
            state: { running: { startedAt: now } },
          },
        ],
      },
    },
  });
  return ip;
}

export async function setPodReady(namespace: string, name: string, ready: boolean): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await admin().request('PATCH', podPath(namespace, name, 'status'), {
    contentType: 'application/strategic-merge-patch+json',
    body: { status: { conditions: readyConditions(ready, now) } },
  });
}

async function stopListener(namespace: string, name: string): Promise<void> {
  try {
    await podhost('DELETE', `/pods/${namespace}/${name}`);
  } catch (e) {
    if (!/404/.test(String(e))) throw e;
  }
}

async function forceDelete(namespace: string, name: string): Promise<void> {
  try {
    await admin().request('DELETE', podPath(namespace, name), { query: { gracePeriodSeconds: 0 } });
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}

/**
 * Removes a pod. graceSeconds 0: listener stopped and Pod deleted at once. graceSeconds > 0: the Pod is deleted
 * gracefully (it gets a deletionTimestamp; its endpoint turns terminating), the listener keeps answering for the
 * grace period, then it stops and the Pod is force-deleted. `terminated` resolves when all of that is done.
 */
export async function removePod(
  namespace: string,
  name: string,
  graceSeconds = 0,
): Promise<{ terminated: Promise<void> }> {
  if (graceSeconds <= 0) {
    await stopListener(namespace, name);
    await forceDelete(namespace, name);
    return { terminated: Promise.resolve() };
  }
  await admin().request('DELETE', podPath(namespace, name), { query: { gracePeriodSeconds: graceSeconds } });
  const terminated = new Promise<void>((resolve, reject) => {
    setTimeout(() => {
      stopListener(namespace, name)
        .then(() => forceDelete(namespace, name))
        .then(resolve, reject);
    }, graceSeconds * 1000);
  });
  return { terminated };
}

export function listPods(): Promise<{ namespace: string; name: string; ip: string; port: number }[]> {
  return podhost('GET', '/pods');
}

/**
 * Deletes a test namespace. There is no kubelet to confirm pod deletion, so the namespace controller would wait
 * forever on graceful deletes: the pods' listeners are stopped and the Pods force-deleted first.
 */
/**
 * Deletes a namespace and waits until it is gone. `forget`: the pod host also forgets its pods' addresses (a suite
 * with a fixed namespace and fixed pod names creates the same pods again on its next run on this cluster).
 */
export async function deleteNamespace(namespace: string, o: { forget?: boolean } = {}): Promise<void> {
  for (const p of await listPods()) if (p.namespace === namespace) await (o.forget ? stopListener(namespace, p.name) : stopListenerOnly(namespace, p.name));
  const pods = await admin().request<{ items: { metadata: { name: string } }[] }>('GET', podPath(namespace));
  for (const p of pods.items) await forceDelete(namespace, p.metadata.name);
  try {
    await admin().request('DELETE', `/api/v1/namespaces/${namespace}`);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  // Wait until the namespace controller has removed everything in it: a suite's Ingresses (a defaultBackend of the
  // shared class, say) must not outlive it into the next suite, whatever order the files run in.
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      await admin().request('GET', `/api/v1/namespaces/${namespace}`);
    } catch (e) {
      if (isNotFound(e)) return;
      throw e;
    }
    if (Date.now() > deadline) throw new Error(`namespace ${namespace} still exists 120 s after its deletion`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Stops a pod's listener but leaves the Pod Ready (a crashed process the cluster has not noticed yet). */
export async function stopListenerOnly(namespace: string, name: string): Promise<void> {
  await podhost('DELETE', `/pods/${namespace}/${name}?keepAddress=1`);
}

/** The requests a pod received (oldest first; the pod host keeps the last 500). */
export function podRequests(namespace: string, name: string): Promise<SeenRequest[]> {
  return podhost('GET', `/pods/${namespace}/${name}/requests`);
}

const NS_ADDR = '198.19.255.2'; // the pod network namespace's end of the veth (controlplane/env.sh)

/**
 * Makes a Service's cluster IP answer on one port, as kube-proxy would: the address in the pod namespace with a
 * TCP forwarder to one pod, and a host route to it. Resolves with a function that removes both.
 */
export async function addServiceVip(clusterIP: string, port: number, targetIp: string, targetPort: number): Promise<() => Promise<void>> {
  await podhost('POST', '/vips', { ip: clusterIP, port, targetIp, targetPort });
  execFileSync('ip', ['route', 'replace', `${clusterIP}/32`, 'via', NS_ADDR]);
  return async () => {
    execFileSync('ip', ['route', 'del', `${clusterIP}/32`, 'via', NS_ADDR], { stdio: 'ignore' });
    await podhost('DELETE', `/vips/${clusterIP}:${port}`);
  };
}

/**
 * After an apiserver restart, kube-controller-manager's informers reconnect with backoff (up to ~30 s), and until
 * they have, no EndpointSlice is published: a suite that restarts the apiserver waits here, so the next suite's pods
 * get their slices as usual. Returns once a fresh Service's EndpointSlice lists its ready pod (deadline 120 s).
 */
export async function waitForEndpointSliceController(): Promise<void> {
  const ns = await uniqueNamespace('slice-probe');
  try {
    await admin().request('POST', `/api/v1/namespaces/${ns}/services`, {
      body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'probe' }, spec: { selector: { app: 'probe' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } },
    });
    const ip = await addPod(ns, 'probe-1', { labels: { app: 'probe' } });
    const deadline = Date.now() + 120_000;
    for (;;) {
      const l = await admin().request<{ items: { endpoints?: { addresses: string[] }[] | null }[] }>('GET', `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?labelSelector=${encodeURIComponent('kubernetes.io/service-name=probe')}`);
      if (l.items.some((sl) => (sl.endpoints ?? []).some((e) => e.addresses.includes(ip)))) return;
      if (Date.now() > deadline) throw new Error('kube-controller-manager published no EndpointSlice within 120 s');
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await deleteNamespace(ns);
  }
}
