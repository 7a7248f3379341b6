// What the Service and EndpointSlice caches keep. At 10,000 Ingresses Portico caches as many Services and
// EndpointSlices; most of each object is never read (a slice's owner references, its endpoints' targetRef, nodeName
// and zone, a Service's IP families, session affinity, selector...). The informers keep only what
// normalizeService / normalizeEndpointSlice, the slice index, the status publisher (a Service's load balancer
// status, external IPs and cluster IP) and Events (name, namespace, uid, resourceVersion) read. Tests check that the
// normalized result and the published addresses are the same with and without the transform.
import type { KubeObject, ObjectMeta } from '../../../operator/kube/object.ts';

const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

function meta(m: ObjectMeta, labels?: Record<string, string>): ObjectMeta {
  const out: ObjectMeta = { name: m.name };
  if (m.namespace !== undefined) out.namespace = m.namespace;
  if (m.uid !== undefined) out.uid = m.uid;
  if (m.resourceVersion !== undefined) out.resourceVersion = m.resourceVersion;
  if (m.generation !== undefined) out.generation = m.generation;
  if (m.creationTimestamp !== undefined) out.creationTimestamp = m.creationTimestamp;
  if (m.deletionTimestamp !== undefined) out.deletionTimestamp = m.deletionTimestamp;
  if (labels) out.labels = labels;
  return out;
}

type Loose = Record<string, unknown>;
const pick = (o: unknown, keys: readonly string[]): Loose | undefined => {
  if (!o || typeof o !== 'object') return undefined;
  const out: Loose = {};
  for (const k of keys) if ((o as Loose)[k] !== undefined) out[k] = (o as Loose)[k];
  return out;
};

/** A Service as the cache keeps it: identity, type, externalName, cluster IP(s), external IPs, ports, load balancer status. */
export function serviceCacheTransform<T extends KubeObject>(s: T): T {
  const src = s as T & { spec?: Loose; status?: { loadBalancer?: { ingress?: unknown[] } } };
  const out: Loose = { apiVersion: s.apiVersion, kind: s.kind, metadata: meta(s.metadata) };
  const spec = pick(src.spec, ['type', 'externalName', 'clusterIP', 'clusterIPs', 'externalIPs', 'ports']);
  // clusterIPs repeats clusterIP except on dual-stack Services: kept only when it says more.
  if (spec && Array.isArray(spec.clusterIPs) && spec.clusterIPs.length <= 1) delete spec.clusterIPs;
  if (spec) out.spec = spec;
  const lb = src.status?.loadBalancer?.ingress;
  if (lb?.length) out.status = { loadBalancer: { ingress: lb } };
  return out as T;
}

/** An EndpointSlice as the cache keeps it: identity, its Service's label, address type, ports, endpoints' addresses and conditions. */
export function sliceCacheTransform<T extends KubeObject>(s: T): T {
  const src = s as T & { addressType?: unknown; ports?: unknown; endpoints?: unknown };
  const svc = s.metadata.labels?.[SERVICE_NAME_LABEL];
  const out: Loose = { apiVersion: s.apiVersion, kind: s.kind, metadata: meta(s.metadata, svc !== undefined ? { [SERVICE_NAME_LABEL]: svc } : undefined) };
  if (src.addressType !== undefined) out.addressType = src.addressType;
  if (src.ports !== undefined) out.ports = src.ports;
  if (Array.isArray(src.endpoints)) out.endpoints = src.endpoints.map((e) => pick(e, ['addresses', 'conditions']));
  else if (src.endpoints !== undefined) out.endpoints = src.endpoints;
  return out as T;
}
