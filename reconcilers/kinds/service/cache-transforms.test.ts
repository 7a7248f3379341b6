import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { serviceCacheTransform, sliceCacheTransform } from './cache-transforms.ts';
import { normalizeEndpointSlice, normalizeService, serviceKeyOfSlice } from '../../model/normalize.ts';
import { publishedAddresses } from '../ingress/status.ts';

// Objects as the apiserver returns them, with the fields Portico never reads.
const meta = (name: string, extra: Record<string, unknown> = {}) => ({
  name, namespace: 'shop', uid: `uid-${name}`, resourceVersion: '4711', generation: 3, creationTimestamp: '2026-11-23T08:00:00Z',
  annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"big":"copy"}' }, labels: { app: name },
  ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name, uid: 'u' }], ...extra,
});
const services: KubeObject[] = [
  { apiVersion: 'v1', kind: 'Service', metadata: meta('web'), spec: { type: 'ClusterIP', clusterIP: '198.19.0.10', clusterIPs: ['198.19.0.10'], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', sessionAffinity: 'None', internalTrafficPolicy: 'Cluster', selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }, { name: 'Bad_Name', port: 81 }] }, status: { loadBalancer: {} } } as KubeObject,
  { apiVersion: 'v1', kind: 'Service', metadata: meta('ext'), spec: { type: 'ExternalName', externalName: 'API.example.com', ports: [{ port: 443 }] } } as KubeObject,
  { apiVersion: 'v1', kind: 'Service', metadata: meta('lb'), spec: { type: 'LoadBalancer', clusterIP: '198.19.0.11', externalIPs: ['192.0.2.7'], ports: [{ port: 80, targetPort: 'http' }] }, status: { loadBalancer: { ingress: [{ ip: '192.0.2.1' }, { hostname: 'lb.example.com' }] } } } as KubeObject,
  { apiVersion: 'v1', kind: 'Service', metadata: meta('headless'), spec: { clusterIP: 'None', ports: [{ port: 80 }] } } as KubeObject,
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'bare', namespace: 'shop' } } as KubeObject,
];
const slices: KubeObject[] = [
  {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: meta('web-abcde', { generateName: 'web-', labels: { 'kubernetes.io/service-name': 'web', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' } }),
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: [
      { addresses: ['198.51.100.10'], conditions: { ready: true, serving: true, terminating: false }, nodeName: 'n1', zone: 'z', targetRef: { kind: 'Pod', namespace: 'shop', name: 'web-1', uid: 'p1' }, hints: { forZones: [{ name: 'z' }] } },
      { addresses: ['198.51.100.11'], conditions: { ready: false, serving: true, terminating: true }, nodeName: 'n1' },
      { addresses: ['198.51.100.12'] },
    ],
  } as KubeObject,
  { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: meta('v6-x', { labels: { 'kubernetes.io/service-name': 'web' } }), addressType: 'IPv6', endpoints: [{ addresses: ['2001:db8::1'], conditions: { ready: true } }], ports: null } as KubeObject,
  { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: meta('fqdn', { labels: { 'kubernetes.io/service-name': 'web' } }), addressType: 'FQDN', endpoints: [{ addresses: ['a.example.com'] }] } as KubeObject,
  { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: meta('orphan', { labels: {} }), addressType: 'IPv4', endpoints: [{ addresses: ['198.51.100.13'] }] } as KubeObject,
  { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: meta('empty', { labels: { 'kubernetes.io/service-name': 'web' } }), addressType: 'IPv4' } as KubeObject,
];

test('the Service cache keeps everything the normalizer, the status publisher and Events read', () => {
  for (const s of services) {
    const t = serviceCacheTransform(s);
    assert.deepEqual(normalizeService(t), normalizeService(s), s.metadata.name);
    assert.deepEqual(publishedAddresses(undefined, t as never), publishedAddresses(undefined, s as never), s.metadata.name);
    for (const k of ['name', 'namespace', 'uid', 'resourceVersion', 'generation'] as const) assert.equal(t.metadata[k], s.metadata[k]);
    assert.equal(t.kind, s.kind);
  }
});

test('the Service cache drops what Portico never reads', () => {
  const t = serviceCacheTransform(services[0]!) as KubeObject & { spec: Record<string, unknown>; status?: unknown };
  assert.deepEqual(Object.keys(t.spec).sort(), ['clusterIP', 'ports', 'type']);
  assert.equal(t.status, undefined, 'an empty load balancer status is not kept');
  assert.equal(t.metadata.annotations, undefined);
  assert.equal(t.metadata.labels, undefined);
  assert.equal(t.metadata.ownerReferences, undefined);
});

test('the EndpointSlice cache keeps what the normalizer and the by-Service index read, nothing else', () => {
  for (const s of slices) {
    const t = sliceCacheTransform(s);
    assert.deepEqual(normalizeEndpointSlice(t), normalizeEndpointSlice(s), s.metadata.name);
    assert.equal(serviceKeyOfSlice(t), serviceKeyOfSlice(s));
    assert.equal(t.metadata.uid, s.metadata.uid);
  }
  const t = sliceCacheTransform(slices[0]!) as KubeObject & { endpoints: Record<string, unknown>[] };
  assert.deepEqual(t.metadata.labels, { 'kubernetes.io/service-name': 'web' });
  assert.equal(t.metadata.annotations, undefined);
  assert.equal(t.metadata.ownerReferences, undefined);
  assert.deepEqual(t.endpoints.map((e) => Object.keys(e).sort()), [['addresses', 'conditions'], ['addresses', 'conditions'], ['addresses']]);
});
