// The claim processors of the kinds whose objects claim paths, in the order their objects are admitted into a
// translation (translate/translate.ts runs them; translate/draft.ts ClaimProcessor says what one is). Part of the
// pure translation (tools/imports.ts), so it cannot be derived from the kind registry (which wires informers and
// controllers): registry.test.ts checks that it lists exactly the registered kinds that declare a processor, in
// registry order.
import type { ClaimProcessor } from '../translate/draft.ts';
import { ingressProcessor } from './ingress/processor.ts';
import { routeProcessor } from './route/processor.ts';

export const PROCESSORS: readonly ClaimProcessor[] = [ingressProcessor, routeProcessor];
