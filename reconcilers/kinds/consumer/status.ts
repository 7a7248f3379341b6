// Consumer: Accepted, ResolvedRefs (its credential Secrets).
// The conditions of one object from what the model (and the gateway) know; the leader writes them through the
// shared CRD status controller (../crd-status.ts).
import type { ConditionsOf } from '../kind.ts';
import { clip } from '../crd-status.ts';

export const consumerConditions: ConditionsOf = (key, model) => {
  const c = model.crd('Consumer', key);
  if (!c) return null;
  const creds = `${c.keys.length} key-auth and ${c.basic.length} basic-auth credential${c.keys.length + c.basic.length === 1 ? '' : 's'}`;
  return [
    { type: 'Accepted', status: 'True', reason: 'Accepted', message: `consumer ${c.username}: ${creds}` },
    c.problems.length
      ? { type: 'ResolvedRefs', status: 'False', reason: 'InvalidCredentials', message: clip(`${c.problems.join('; ')}; the other credentials work`) }
      : { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs', message: 'every credential Secret was read' },
  ];
};
