// Objects the ingress-nginx e2e suites create through the API server (as admin): an echo Service and a one-rule
// Ingress of the suite's class, with the options those suites vary.
import { admin } from './cluster.ts';

/** A Service selecting pods labelled app=<app>, port 80 → the echo pods' 8080. */
export function createService(ns: string, name: string, app: string): Promise<unknown> {
  return admin().request('POST', `/api/v1/namespaces/${ns}/services`, {
    body: { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { selector: { app }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } },
  });
}

/** An Ingress of `className` with one rule: host, a Prefix path (default "/") to a Service (default "echo") port 80; TLS optional. */
export function createIngress(
  ns: string,
  className: string,
  name: string,
  host: string,
  annotations: Record<string, string>,
  o: { svc?: string; tls?: string; path?: string; pathType?: 'Prefix' | 'Exact' | 'ImplementationSpecific' } = {},
): Promise<unknown> {
  return admin().request('POST', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, {
    body: {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name, annotations },
      spec: {
        ingressClassName: className,
        ...(o.tls ? { tls: [{ hosts: [host], secretName: o.tls }] } : {}),
        rules: [{ host, http: { paths: [{ path: o.path ?? '/', pathType: o.pathType ?? 'Prefix', backend: { service: { name: o.svc ?? 'echo', port: { number: 80 } } } }] } }],
      },
    },
  });
}

export interface EventRecord { type: string; reason: string; note: string; series?: { count: number } }

/** The events.k8s.io Events of `ns` about one object (by kind and name). */
export async function eventsAbout(ns: string, kind: string, name: string): Promise<EventRecord[]> {
  const l = await admin().request<{ items: (EventRecord & { regarding: { kind: string; name: string } })[] }>('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`);
  return l.items.filter((e) => e.regarding.kind === kind && e.regarding.name === name);
}
