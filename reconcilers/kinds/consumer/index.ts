// The Consumer kind (portico.dev): a client and its credentials (key-auth, basic-auth) read from Secrets.
import { consumerCrd } from '../../../crds/schema/consumer.ts';
import type { NormalizedConsumer } from '../../model/types.ts';
import { crdKind } from '../crd.ts';
import { normalizeConsumer } from './normalize.ts';
import { consumerConditions } from './status.ts';

export const consumer = crdKind({
  kind: 'Consumer',
  crd: consumerCrd,
  normalize: (o, s) => normalizeConsumer(o, s),
  problem: (r) => {
    const c = r as NormalizedConsumer;
    return c.problems.length ? { reason: 'InvalidCredentials', message: `${c.problems.join('; ')}; the other credentials work` } : null;
  },
  conditions: consumerConditions,
  // The Secrets of its credentials.
  reads: (r) => ({ secrets: (r as NormalizedConsumer).secretKeys }),
});
