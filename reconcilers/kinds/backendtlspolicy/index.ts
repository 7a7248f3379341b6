// The BackendTLSPolicy kind (Gateway API): TLS from Portico to a Service's ports, verified against a CA bundle under
// a hostname (also the SNI), or under subjectAltNames (the hostname then only the SNI) when Portico's nginx module
// portico_upstream_ssl is installed. Applied to HTTPRoute and GRPCRoute backends (translate/gateway-api/backend-tls.ts
// decides which policy holds for a Service port; the HTTPRoute processor turns it into an HTTPS or GRPCS directive
// profile). Its status (one ancestor entry per Gateway whose routes use a targeted Service) is written by the
// Gateway API status controller (gateway/status.ts).
import { existsSync } from 'node:fs';
import { GatewayResources, gatewayApiKind } from '../gateway-api.ts';
import type { BackendTlsPolicyRecord } from '../../model/gateway-api.ts';
import { normalizeBackendTlsPolicy, policyReads } from './normalize.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { UPSTREAM_SSL_MODULE } from '../../nginx-driver/nginx/runtime.ts';

/** What a record read is recorded from the object (the ConfigMaps and ClusterTrustBundles it names, found or not). */
const readsOf = new WeakMap<BackendTlsPolicyRecord, ReturnType<typeof policyReads>>();

export const backendTlsPolicy = gatewayApiKind({
  kind: 'BackendTLSPolicy',
  resource: GatewayResources.BackendTLSPolicy,
  normalize: (o: KubeObject, _secrets, configMaps, trustBundles) => {
    const r = normalizeBackendTlsPolicy(o, configMaps, { subjectAltNames: existsSync(UPSTREAM_SSL_MODULE) }, trustBundles);
    if (r.ok) readsOf.set(r.record, policyReads(o));
    return r;
  },
  reads: (rec) => readsOf.get(rec as BackendTlsPolicyRecord) ?? { secrets: [] },
  status: true,
  why: 'Gateway API: the BackendTLSPolicies of the Services that routes of Portico\'s Gateways use...',
});
