// The API resources Portico reads and writes: the framework's own (Lease, Events), the built-in kinds it watches or
// writes, and its CRDs. setup, the reconcilers and the webhook pass these descriptors to operator/.
import { FrameworkResources, type ResourceType } from '../operator/kube/resources.ts';
import { GROUP, VERSION } from '../crds/schema/index.ts';

export const Resources = {
  ...FrameworkResources,
  Service: { group: '', version: 'v1', plural: 'services', kind: 'Service', namespaced: true },
  Secret: { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true },
  ConfigMap: { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true },
  Pod: { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true },
  EndpointSlice: { group: 'discovery.k8s.io', version: 'v1', plural: 'endpointslices', kind: 'EndpointSlice', namespaced: true },
  Ingress: { group: 'networking.k8s.io', version: 'v1', plural: 'ingresses', kind: 'Ingress', namespaced: true },
  IngressClass: { group: 'networking.k8s.io', version: 'v1', plural: 'ingressclasses', kind: 'IngressClass', namespaced: false },
  Route: { group: GROUP, version: VERSION, plural: 'routes', kind: 'Route', namespaced: true },
  Upstream: { group: GROUP, version: VERSION, plural: 'upstreams', kind: 'Upstream', namespaced: true },
  Plugin: { group: GROUP, version: VERSION, plural: 'plugins', kind: 'Plugin', namespaced: true },
  Consumer: { group: GROUP, version: VERSION, plural: 'consumers', kind: 'Consumer', namespaced: true },
} as const satisfies Record<string, ResourceType>;
