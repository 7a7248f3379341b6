// Phases: the backends of the winning paths and of canaries.
import type { Backend } from '../../config/types.ts';
import { sameInputs } from '../memo.ts';
import { ingressRef } from '../objects.ts';
import { backendIdOf } from '../claims.ts';
import type { Draft } from '../draft.ts';
import { resolveBackend } from '../backend.ts';

/** The backends of the winning paths, oldest owner first: a backend's balancing settings are its oldest user's. */
export function resolvePathBackends(d: Draft): void {
  const { memo, owners, hosts, backendOwner } = d;
  for (const ow of owners) {
    const proc = ow.proc;
    const ann = proc.annotations?.(ow);
    for (const list of [proc.claims(ow), proc.fallbacks?.(ow) ?? []]) {
      for (const kc of list) {
        const won = hosts.get(kc.pc.host)?.get(kc.pc.id);
        if (!won || won.owner !== ow || won.pc !== kc.pc || !won.backendId) continue;
        for (const ref of kc.backends ?? [kc.pc.ref]) resolveBackend(d, ow.ref, ann, ref.namespace ?? ow.ns, ref, backendIdOf(ow.ns, ref));
      }
    }
  }
  // The incremental translation follows backends to the object whose settings they have.
  if (memo) for (const [id, ow] of backendOwner) memo.owners.set(id, ow.ref);
}

/** Canaries: their backends, and the split on the main backend (a new object: the main may be a memoized one). */
export function resolveCanaryBackends(d: Draft): void {
  const { memo, canaryOf, backends } = d;
  for (const [mainId, c] of [...canaryOf].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const cid = backendIdOf(c.ing.namespace, c.ref);
    resolveBackend(d, ingressRef(c.ing.key), c.ing.annotations, c.ing.namespace, c.ref, cid);
    const a = c.ing.annotations;
    const main = backends[mainId];
    if (!main || cid === mainId) continue;
    // A new object (the main backend may be a memoized one, shared with the previous configuration).
    const inputs: unknown[] = [main, a, cid];
    const cached = memo?.backends.get(`canary ${mainId}`);
    if (cached && sameInputs(cached.inputs, inputs)) {
      backends[mainId] = cached.result;
      continue;
    }
    const canary: NonNullable<Backend['canary']> = { backendId: cid, weight: a['canary-weight'] ?? 0, weightTotal: a['canary-weight-total'] ?? 100 };
    if (a['canary-by-header']) canary.header = a['canary-by-header'];
    if (a['canary-by-header-value'] !== undefined) canary.headerValue = a['canary-by-header-value'];
    if (a['canary-by-header-pattern'] !== undefined) canary.headerPattern = a['canary-by-header-pattern'];
    if (a['canary-by-cookie']) canary.cookie = a['canary-by-cookie'];
    backends[mainId] = { ...main, canary };
    memo?.backends.set(`canary ${mainId}`, { inputs, result: backends[mainId], forbidden: undefined, kind: 'BackendNotFound' });
  }
}
