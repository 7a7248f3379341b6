// Phases: the backends of the winning paths and of canaries.
import type { Backend } from '../../config/types.ts';
import type { ServiceBackendRef } from '../../model/types.ts';
import { sameInputs } from '../memo.ts';
import { ingressRef } from '../objects.ts';
import { backendIdOf, claimsOfIngress, claimsOfRoute } from '../claims.ts';
import { type Draft, isCanary } from '../draft.ts';
import { resolveBackend } from '../backend.ts';

/** The backends of the winning paths, oldest owner first: a backend's balancing settings are its oldest user's. */
export function resolvePathBackends(d: Draft): void {
  const { memo, owners, hosts, backendOwner } = d;
  for (const ow of owners) {
    if (ow.ing) {
      const ing = ow.ing;
      if (isCanary(ing)) continue;
      const c = claimsOfIngress(ing);
      for (const list of [c.paths, c.defaults]) {
        for (const pc of list) {
          const won = hosts.get(pc.host)?.get(pc.id);
          if (won && won.owner === ow && won.pc === pc && won.backendId) resolveBackend(d, ow.ref, ing.annotations, ing.namespace, pc.ref, won.backendId, pc.serviceKey);
        }
      }
    } else if (ow.rt) {
      for (const rc of claimsOfRoute(ow.rt)) {
        const won = hosts.get(rc.pc.host)?.get(rc.pc.id);
        if (!won || won.owner !== ow || won.pc !== rc.pc || !won.backendId) continue;
        for (const be of rc.rule.backends) {
          const ref: ServiceBackendRef = { service: be.service, port: { number: be.port } };
          resolveBackend(d, ow.ref, undefined, ow.ns, ref, backendIdOf(ow.ns, ref));
        }
      }
    }
  }
  if (memo) for (const [id, ow] of backendOwner) if (ow.ref.startsWith('Ingress/')) memo.owners.set(id, ow.ref.slice('Ingress/'.length));
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
