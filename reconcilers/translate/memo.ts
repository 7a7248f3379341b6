// What one translation may reuse from the previous one (see TranslateMemo).
import type { Backend, Certificate, GatewayConfig, HostRoutes, Profile } from '../config/types.ts';

/**
 * What one translation may reuse from the previous one, so that a change at 10,000 Ingresses costs about what it
 * touches: a host's routes and a backend are rebuilt only when something they are made from is a different
 * object in the model (the model replaces a record when it changes, and keeps it otherwise). Reused results are
 * the previous objects themselves, which also lets the diff skip them by identity. The output is the same with
 * or without a memo (translate.memo.test.ts); nothing may mutate a result that came from it.
 */
export class TranslateMemo {
  readonly hosts = new Map<string, { inputs: unknown[]; result: HostRoutes; programmed: string[]; profiles: Profile[] }>();
  /** Certificates by the model's Secret record: one object per Secret, reused while the Secret is unchanged. */
  readonly certificates = new WeakMap<object, Certificate>();
  /** Backend id → kind-qualified ref of the object whose settings it has (the oldest one whose path to it is served). */
  readonly owners = new Map<string, string>();
  readonly backends = new Map<string, { inputs: unknown[]; result: Backend; forbidden: string | undefined; kind: 'BackendNotFound' | 'ForbiddenEndpoint' }>();
}

/** Forgets what the configuration no longer has (the memo must not grow with objects that were deleted). */
export function retainMemo(memo: TranslateMemo, config: GatewayConfig): void {
  const { routes, backends } = config.data;
  for (const h of memo.hosts.keys()) if (!(h in routes)) memo.hosts.delete(h);
  for (const id of memo.backends.keys()) if (!(id in backends) && !(id.startsWith('canary ') && id.slice(7) in backends)) memo.backends.delete(id);
  for (const id of memo.owners.keys()) if (!(id in backends)) memo.owners.delete(id);
}

export function sameInputs(a: readonly unknown[] | undefined, b: readonly unknown[]): boolean {
  if (!a || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
