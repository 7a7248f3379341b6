// Phase: canary Ingresses onto their main Ingress's backends.
import { ingressRef } from '../objects.ts';
import { claimPathOf } from '../matching.ts';
import { type Draft, describe, isCanary } from '../draft.ts';

/** Canaries attach to the main Ingress's location (ingress-nginx semantics): one canary per main backend, same namespace. */
export function attachCanaries(d: Draft): void {
  const { status, warn, served, closedReason, hosts, canaryOf } = d;
  for (const ing of served) {
    if (!isCanary(ing)) continue;
    const iref = ingressRef(ing.key);
    let attached = false;
    for (const rule of ing.rules) {
      for (const p of rule.paths) {
        const host = rule.host ?? '_';
        const main = hosts.get(host)?.get(`${p.match} ${claimPathOf(p)}`);
        if (!main) {
          warn(iref, 'CanaryWithoutMain', `canary path ${p.path} on ${host === '_' ? '(any host)' : host} has no main Ingress serving it; ignored`);
          continue;
        }
        // A canary whose own access control cannot be applied gets no traffic; a main that fails closed
        // answers 503 for every request, so there is nothing to split.
        if (closedReason.has(ing.key)) continue;
        if (main.owner.ns !== ing.namespace) {
          warn(iref, 'CanaryWithoutMain', `canary path ${p.path} on ${host === '_' ? '(any host)' : host}: its main ${describe(main.owner.ref)} is in namespace ${main.owner.ns}, and a canary must be in its main Ingress's namespace (one namespace never takes another's traffic); ignored`);
          continue;
        }
        const mainId = main.backendId;
        if (!mainId) {
          warn(iref, 'CanaryWithoutMain', `canary path ${p.path} on ${host === '_' ? '(any host)' : host}: main ${describe(main.owner.ref)} fails closed (unsupported access control); canary not attached`);
          continue;
        }
        const prev = canaryOf.get(mainId);
        if (prev && prev.ing.key !== ing.key) {
          warn(iref, 'Conflict', `backend ${mainId} already has canary Ingress ${prev.ing.key} (older); this canary is ignored for it`);
          continue;
        }
        canaryOf.set(mainId, { ing, ref: p.backend });
        attached = true;
      }
    }
    if (attached) status.get(iref)!.programmed = true;
  }
}
