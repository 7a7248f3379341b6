// Builders for table tests: Kubernetes objects in, model snapshot out.
import type { KubeObject } from '../../operator/kube/object.ts';
import { Model } from '../model/model.ts';
import { normalizeEndpointSlice, normalizeIngress, normalizeIngressClass, normalizeService } from '../model/normalize.ts';
import type { TranslateOptions } from './translate.ts';

export const OPTS: TranslateOptions = {
  controllerClass: 'portico.dev/ingress-controller',
  ingressClassName: 'portico',
  watchWithoutClass: false,
  listen: { httpPort: 8080, httpsPort: 8443, statusPort: 10246, address: '127.0.0.1' },
};

type Backend = { service: { name: string; port: { number?: number; name?: string } } };
export const svcRef = (name: string, port: number | string): Backend => ({
  service: { name, port: typeof port === 'number' ? { number: port } : { name: port } },
});

export function ing(
  name: string,
  spec: Record<string, unknown>,
  o: { ns?: string; created?: string; annotations?: Record<string, string> } = {},
): KubeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace: o.ns ?? 'default', uid: `uid-${name}`, generation: 1, creationTimestamp: o.created ?? '2026-01-01T00:00:00Z', annotations: o.annotations },
    spec: { ingressClassName: 'portico', ...spec },
  } as KubeObject;
}

export const rule = (host: string | undefined, paths: { path: string; pathType?: string; backend: Backend }[]) => ({
  ...(host ? { host } : {}),
  http: { paths: paths.map((p) => ({ pathType: 'Prefix', ...p })) },
});

export function svc(name: string, ports: { name?: string; port: number; targetPort?: number | string }[], ns = 'default', extra: Record<string, unknown> = {}): KubeObject {
  return { metadata: { name, namespace: ns }, spec: { ports, ...extra } } as KubeObject;
}

export function slice(name: string, service: string, ports: { name?: string; port: number }[], endpoints: { ip: string; ready?: boolean; serving?: boolean; terminating?: boolean }[], ns = 'default'): KubeObject {
  return {
    metadata: { name, namespace: ns, labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    ports: ports.map((p) => ({ protocol: 'TCP', ...p })),
    endpoints: endpoints.map((e) => ({ addresses: [e.ip], conditions: { ready: e.ready ?? true, serving: e.serving ?? e.ready ?? true, terminating: e.terminating ?? false } })),
  } as KubeObject;
}

export const portico = (isDefault = true): KubeObject =>
  ({
    metadata: { name: 'portico', annotations: isDefault ? { 'ingressclass.kubernetes.io/is-default-class': 'true' } : {} },
    spec: { controller: 'portico.dev/ingress-controller' },
  }) as KubeObject;

/** Builds a model from objects, the way the reconcilers would. */
export function modelOf(objs: { classes?: KubeObject[]; ingresses?: KubeObject[]; services?: KubeObject[]; slices?: KubeObject[] }): Model {
  const m = new Model();
  for (const c of objs.classes ?? [portico()]) m.setIngressClass(normalizeIngressClass(c));
  for (const s of objs.services ?? []) m.setService(normalizeService(s));
  const bySvc = new Map<string, ReturnType<typeof normalizeEndpointSlice>[]>();
  for (const s of objs.slices ?? []) {
    const n = normalizeEndpointSlice(s);
    if (!n) continue;
    bySvc.set(n.serviceKey, [...(bySvc.get(n.serviceKey) ?? []), n]);
  }
  for (const [k, v] of bySvc) m.setEndpointSlices(k, v.filter((x) => x !== null));
  for (const i of objs.ingresses ?? []) {
    const r = normalizeIngress(i);
    if (r.ok) m.setIngress(r.ingress);
    else m.rejectIngress({ key: r.key, reason: r.reason });
  }
  return m;
}

/** A small deterministic PRNG (mulberry32), so a failure of a randomized test can be replayed from its seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
