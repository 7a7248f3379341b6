// What the claims of every kind share: backend ids, the router's host order, how specific a claim's conditions are.
// (The claims themselves are each kind's: kinds/<kind>/processor.ts.)
import type { RouteConditions } from '../config/types.ts';
import type { ServiceBackendRef } from '../model/types.ts';

export function backendIdOf(namespace: string, ref: ServiceBackendRef): string {
  const port = 'number' in ref.port ? String(ref.port.number) : ref.port.name;
  return `${ref.namespace ?? namespace}_${ref.service}_${port}`;
}

export function hostOrder(a: string, b: string): number {
  const rank = (h: string) => (h === '_' ? 2 : h.startsWith('*.') ? 1 : 0);
  return rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0);
}

export type { PathClaim } from './types.ts';

export function condCount(c: RouteConditions | undefined): number {
  return c ? (c.methods?.length ? 1 : 0) + (c.headers?.length ?? 0) + (c.query?.length ?? 0) : 0;
}
