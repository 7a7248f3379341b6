// Route: Accepted, ResolvedRefs, Programmed (live in nginx).
// The conditions of one object from what the model (and the gateway) know; the leader writes them through the
// shared CRD status controller (../crd-status.ts).
import type { ConditionsOf, DesiredCondition } from '../kind.ts';
import { clip } from '../crd-status.ts';

export const routeConditions: ConditionsOf = (key, model, route) => {
  if (!model.crd('Route', key)) return null;
  const st = route.status;
  if (!st || !route.synced) return [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: 'accepted; waiting for the gateway to program it' }, { type: 'Programmed', status: 'Unknown', reason: 'Pending', message: 'not synced yet' }];
  const problems = st.problems.filter((p) => p);
  const out: DesiredCondition[] = [
    { type: 'Accepted', status: 'True', reason: 'Accepted', message: clip(problems.length ? `accepted with problems: ${problems.join('; ')}` : 'accepted') },
    st.unresolved?.length
      ? { type: 'ResolvedRefs', status: 'False', reason: 'RefNotFound', message: clip(`cannot resolve ${st.unresolved.join(', ')}; the rules using them answer 503 (fail closed)`) }
      : { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs', message: 'every Service, Secret and Plugin it names was found' },
    route.programmed
      ? { type: 'Programmed', status: 'True', reason: 'Programmed', message: 'served by nginx' }
      : { type: 'Programmed', status: 'False', reason: 'NotProgrammed', message: clip(problems.length ? `no rule is served: ${problems.join('; ')}` : 'no rule is served') },
  ];
  return out;
};
