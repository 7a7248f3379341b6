// The Upstream kind (portico.dev): how a Service is balanced, retried, health-checked and reached over TLS.
import { upstreamCrd } from '../../../crds/schema/upstream.ts';
import type { NormalizedUpstream } from '../../model/types.ts';
import { crdKind } from '../crd.ts';
import { normalizeUpstream } from './normalize.ts';
import { upstreamConditions } from './status.ts';

export const upstream = crdKind({
  kind: 'Upstream',
  crd: upstreamCrd,
  normalize: (o, s) => normalizeUpstream(o, s),
  problem: (r) => {
    const u = r as NormalizedUpstream;
    return u.tls?.caError ? { reason: 'RefNotFound', message: `${u.tls.caError}; requests to this Service answer 503 until the CA can be read (never unverified)` } : null;
  },
  conditions: upstreamConditions,
  // Its CA bundle, when it verifies the backend's certificate.
  reads: (r) => {
    const u = r as NormalizedUpstream;
    const ca = u.tls?.caSecret;
    return { secrets: ca && u.tls?.verify ? [`${u.namespace}/${ca}`] : [] };
  },
  // An Upstream's ResolvedRefs follows its Service.
  statusFollows: (c, model) => {
    if (c.kind !== 'Service') return [];
    const out: string[] = [];
    for (const u of model.records('Upstream').values()) if (u.serviceKey === c.key) out.push(`Upstream/${u.key}`);
    return out;
  },
});
