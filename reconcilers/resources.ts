// The API resources Portico reads and writes: the framework's own (Lease, Events) and the built-in kinds it watches or
// writes (its CRDs' come from their definitions: kinds/crd.ts crdResource). setup, the reconcilers and the webhook
// pass these descriptors to operator/.
import { FrameworkResources, type ResourceType } from '../operator/kube/resources.ts';

export const Resources = {
  ...FrameworkResources,
  Service: { group: '', version: 'v1', plural: 'services', kind: 'Service', namespaced: true },
  Secret: { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true },
  ConfigMap: { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true },
  Pod: { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true },
  EndpointSlice: { group: 'discovery.k8s.io', version: 'v1', plural: 'endpointslices', kind: 'EndpointSlice', namespaced: true },
  Ingress: { group: 'networking.k8s.io', version: 'v1', plural: 'ingresses', kind: 'Ingress', namespaced: true },
  IngressClass: { group: 'networking.k8s.io', version: 'v1', plural: 'ingressclasses', kind: 'IngressClass', namespaced: false },
} as const satisfies Record<string, ResourceType>;
