// The Route kind (portico.dev): an Ingress with more matching, weighted backends, retries and plugins.
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { NormalizedRoute } from '../../model/types.ts';
import { routeCrd } from '../../../crds/schema/route.ts';
import { crdKind } from '../crd.ts';
import { reviewRoute } from './admission.ts';
import { normalizeRoute } from './normalize.ts';
import { routeProcessor } from './processor.ts';
import { routeConditions } from './status.ts';

/** The class a Route asks for (spec.ingressClassName), read before any validation. */
export function routeClass(obj: KubeObject): string | null {
  const c = (obj as { spec?: { ingressClassName?: unknown } }).spec?.ingressClassName;
  return typeof c === 'string' && c ? c : null;
}

export const route = crdKind({
  kind: 'Route',
  crd: routeCrd,
  normalize: (o) => normalizeRoute(o),
  classOf: routeClass,
  conditions: routeConditions,
  programmed: true,
  tlsSecrets: true,
  // Its TLS Secrets (key material, like an Ingress's).
  reads: (r) => {
    const rt = r as NormalizedRoute;
    return { secrets: [...new Set(rt.tls.map((t) => `${rt.namespace}/${t.secretName}`))].sort() };
  },
  review: reviewRoute,
  processor: routeProcessor,
});
