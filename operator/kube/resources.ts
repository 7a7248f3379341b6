// Descriptors for the API resources Portico reads and writes, and the REST paths built from them.

export interface ResourceType {
  /** "" for the core group. */
  group: string;
  version: string;
  /** Lower-case plural, as in the REST path and in RBAC rules. */
  plural: string;
  kind: string;
  namespaced: boolean;
}

export const apiVersionOf = (r: ResourceType): string => (r.group ? `${r.group}/${r.version}` : r.version);

export const Resources = {
  Namespace: { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false },
  Service: { group: '', version: 'v1', plural: 'services', kind: 'Service', namespaced: true },
  Secret: { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true },
  ConfigMap: { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true },
  Pod: { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true },
  EndpointSlice: {
    group: 'discovery.k8s.io',
    version: 'v1',
    plural: 'endpointslices',
    kind: 'EndpointSlice',
    namespaced: true,
  },
  Ingress: { group: 'networking.k8s.io', version: 'v1', plural: 'ingresses', kind: 'Ingress', namespaced: true },
  IngressClass: {
    group: 'networking.k8s.io',
    version: 'v1',
    plural: 'ingressclasses',
    kind: 'IngressClass',
    namespaced: false,
  },
  Lease: { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', namespaced: true },
  Event: { group: 'events.k8s.io', version: 'v1', plural: 'events', kind: 'Event', namespaced: true },
  Route: { group: 'portico.dev', version: 'v1alpha1', plural: 'routes', kind: 'Route', namespaced: true },
  Upstream: { group: 'portico.dev', version: 'v1alpha1', plural: 'upstreams', kind: 'Upstream', namespaced: true },
  Plugin: { group: 'portico.dev', version: 'v1alpha1', plural: 'plugins', kind: 'Plugin', namespaced: true },
  Consumer: { group: 'portico.dev', version: 'v1alpha1', plural: 'consumers', kind: 'Consumer', namespaced: true },
} as const satisfies Record<string, ResourceType>;

/**
 * REST path of a collection (name undefined) or of one object. Namespaced resources with no namespace give the
 * all-namespaces collection path.
 */
export function resourcePath(r: ResourceType, namespace?: string, name?: string, subresource?: string): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  let p = base;
  if (r.namespaced && namespace) p += `/namespaces/${encodeURIComponent(namespace)}`;
  p += `/${r.plural}`;
  if (name !== undefined) p += `/${encodeURIComponent(name)}`;
  if (subresource) p += `/${subresource}`;
  return p;
}
