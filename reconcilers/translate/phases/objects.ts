// Phases: the objects served (class, age order) and those whose every path fails closed.
import { gateAnnotations } from '../risk.ts';
import { byAge, byOwnerAge, ingressRef, isIngressServed, routeRef } from '../objects.ts';
import { modsecurityClosedReason, proxySslClosedReason } from '../profiles.ts';
import type { Draft } from '../draft.ts';

/** Which Ingresses and Routes are served (their status either way), oldest first; rejected objects' Events. */
export function admitObjects(d: Draft): void {
  const { snap, o, events, status, served, routesServed, owners, ownerOf } = d;
  for (const [key, r] of snap.rejected) {
    status.set(ingressRef(key), { served: false, programmed: false, problems: [r.reason] });
  }
  // Classes are few; resolve "is it served" against them once instead of per Ingress.
  const mine = [...snap.classes.values()].filter((c) => c.controller === o.controllerClass);
  const classes = new Map(mine.map((c) => [c.name, c]));
  // The ConfigMap's annotations-risk-level / allow-snippet-annotations decide which annotations apply (risk.ts).
  const risk = { allowSnippetAnnotations: snap.global.allowSnippetAnnotations, annotationsRiskLevel: snap.global.annotationsRiskLevel };
  for (const raw of snap.ingresses.values()) {
    const ing = gateAnnotations(raw, risk);
    const s = isIngressServed(ing, classes, o);
    const ref = ingressRef(ing.key);
    status.set(ref, { served: s, programmed: false, problems: [] });
    if (s) {
      served.push(ing);
      owners.push({ ref, created: ing.creationTimestamp, ns: ing.namespace, ing });
    }
  }
  for (const rt of snap.routes.values()) {
    const s = isIngressServed({ className: rt.className, classFromAnnotation: false }, classes, o);
    const ref = routeRef(rt.key);
    status.set(ref, { served: s, programmed: false, problems: [] });
    if (s) {
      routesServed.push(rt);
      owners.push({ ref, created: rt.creationTimestamp, ns: rt.namespace, rt });
    }
  }
  served.sort(byAge);
  owners.sort(byOwnerAge);
  for (const [key, r] of snap.rejected) {
    events.push({ ref: ingressRef(key), type: 'Warning', reason: 'Rejected', message: r.reason });
  }
  for (const ow of owners) if (ow.ing) ownerOf.set(ow.ing.key, ow);
}

/** Ingresses whose every path fails closed (503): access control, proxy-ssl-* or ModSecurity Portico cannot apply. */
export function failClosedObjects(d: Draft): void {
  const { snap, o, served, closedReason, sslClosed, wafClosed } = d;
  // Access control Portico cannot apply: the Ingress fails closed (its locations get no backend → 503).
  for (const ing of served) {
    if (!ing.accessControl.length) continue;
    const what = ing.accessControl.map((a) => `${a.annotation} (${a.kind})`).join(', ');
    closedReason.set(ing.key, `access control requested by ${what} cannot be applied by Portico`);
  }
  // proxy-ssl-*: a backend is never proxied without the client certificate or verification an Ingress asks for; when
  // that cannot be done its paths fail closed (503) too. A canary's own proxy-ssl-* do not apply (its traffic goes
  // through the main Ingress's location, as in ingress-nginx).
  for (const ing of served) {
    const why = ing.annotations.canary === true ? undefined : proxySslClosedReason(snap.ingresses.get(ing.key) ?? ing, ing);
    if (why) sslClosed.set(ing.key, why);
  }
  // ModSecurity: paths it is on for are never served without it (module or CRS missing, snippet refused). A canary's
  // own ModSecurity annotations do not apply (its traffic goes through the main Ingress's profile).
  for (const ing of served) {
    const why = ing.annotations.canary === true ? undefined : modsecurityClosedReason(snap.ingresses.get(ing.key) ?? ing, ing, snap.global, o.modsecurity);
    if (why) wafClosed.set(ing.key, why);
  }
}
