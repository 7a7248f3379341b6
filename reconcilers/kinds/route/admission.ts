// Admission of a Route beyond its schema: conflicts with older Ingresses and Routes on its hosts, as warnings
// (see ../admission.ts for why nothing about a Secret is said).
import type { ModelSnapshot } from '../../model/model.ts';
import type { CrdMeta, NormalizedRoute } from '../../model/types.ts';
import { routeRef, type TranslateOptions } from '../../translate/translate.ts';
import { claimsOfRoute } from './processor.ts';
import { around, translationWarnings, type Verdict } from '../admission.ts';

export function reviewRoute(record: CrdMeta, snap: ModelSnapshot, o: TranslateOptions): Verdict {
  // Consumers' credentials and an Upstream's CA come from Secrets only: nothing to say about them here.
  const rt = record as NormalizedRoute;
  const hosts = new Set(claimsOfRoute(rt).map((c) => c.pc.host));
  const secretKeys = new Set<string>();
  for (const t of rt.tls) {
    for (const h of t.hosts) hosts.add(h);
    if (t.secretName) secretKeys.add(`${rt.namespace}/${t.secretName}`);
  }
  return { allowed: true, warnings: translationWarnings(around(snap, hosts, { route: rt, dropKey: rt.key }), o, routeRef(rt.key), secretKeys) };
}
