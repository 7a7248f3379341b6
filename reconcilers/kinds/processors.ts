// Generated from the kind registry (reconcilers/kinds/registry.ts: the kinds that declare a claim processor) by
// reconcilers/kinds/processors-gen.ts: do not edit, run `make processors`.
//
// The claim processors of the kinds whose objects claim paths, in the order their objects are admitted into a
// translation (registry order; translate/translate.ts runs them, translate/draft.ts ClaimProcessor says what one is).
// Part of the pure translation (tools/imports.ts), so it cannot import the kind registry, which wires informers and
// controllers: it is generated from it instead.
import type { ClaimProcessor } from '../translate/draft.ts';
import { ingressProcessor } from './ingress/processor.ts';
import { routeProcessor } from './route/processor.ts';
import { httpRouteProcessor } from './httproute/processor.ts';
import { grpcRouteProcessor } from './grpcroute/processor.ts';

export const PROCESSORS: readonly ClaimProcessor[] = [ingressProcessor, routeProcessor, httpRouteProcessor, grpcRouteProcessor];
