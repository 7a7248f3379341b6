// Phase: Upstream objects by Service.
import { recordsOf } from '../../model/model.ts';
import type { Draft } from '../draft.ts';

/** Upstreams by Service, oldest first: an Upstream for a Service (and port) wins over Ingress balancing annotations. */
export function indexUpstreams(d: Draft): void {
  const { snap, upstreamsBySvc } = d;
  for (const u of [...recordsOf(snap, 'Upstream').values()].sort((a, b) => (a.creationTimestamp < b.creationTimestamp ? -1 : a.creationTimestamp > b.creationTimestamp ? 1 : a.key < b.key ? -1 : 1))) {
    const l = upstreamsBySvc.get(u.serviceKey);
    if (l) l.push(u);
    else upstreamsBySvc.set(u.serviceKey, [u]);
  }
}
