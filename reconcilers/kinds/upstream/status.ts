// Upstream: Accepted, ResolvedRefs (its Service and CA bundle).
// The conditions of one object from what the model (and the gateway) know; the leader writes them through the
// shared CRD status controller (../crd-status.ts).
import type { ConditionsOf } from '../kind.ts';
import { clip } from '../crd-status.ts';

export const upstreamConditions: ConditionsOf = (key, model) => {
  const u = model.crd('Upstream', key);
  if (!u) return null;
  const svc = model.service(u.serviceKey);
  if (u.tls?.caError) {
    return [
      { type: 'Accepted', status: 'True', reason: 'Accepted', message: `applies to service ${u.serviceKey}` },
      { type: 'ResolvedRefs', status: 'False', reason: 'RefNotFound', message: clip(`${u.tls.caError}; requests to this Service answer 503 until the CA can be read (never unverified)`) },
    ];
  }
  return [
    { type: 'Accepted', status: 'True', reason: 'Accepted', message: `applies to service ${u.serviceKey}${u.ports ? ` ports ${u.ports.join(', ')}` : ''}` },
    svc
      ? { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs', message: `service ${u.serviceKey} found` }
      : { type: 'ResolvedRefs', status: 'False', reason: 'ServiceNotFound', message: `service ${u.serviceKey} not found` },
  ];
};
