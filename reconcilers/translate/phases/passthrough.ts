// Phase: ssl-passthrough hosts (with --enable-ssl-passthrough).
import type { NormalizedIngress, NormalizedRoute } from '../../model/types.ts';
import { ANNOTATIONS, NGINX_PREFIX, type AnnotationName } from '../../annotations/table.ts';
import { ingressRef, type Owner } from '../objects.ts';
import { claimsOfRoute } from '../claims.ts';
import { passthroughTarget } from '../matching.ts';
import { type Draft, describe, isCanary } from '../draft.ts';

/**
 * TLS passthrough (ssl-passthrough, with --enable-ssl-passthrough).
 * The oldest object serving a host decides (as ingress-nginx's server for a host is made by its oldest Ingress): a
 * host an older Ingress or Route serves with TLS terminated, or that an older Ingress passes through, is refused to
 * a younger passthrough Ingress; a younger object on a passthrough host keeps its routes for plain HTTP only.
 * Rules without host cannot be passed through (the server name decides), nor can a canary (it has no host of its own).
 */
export function choosePassthrough(d: Draft): void {
  const { o, events, warn, served, owners, passthrough } = d;
  const passthroughOf = (i: NormalizedIngress) => i.annotations['ssl-passthrough'] === true;
  /** Access control of a passthrough Ingress applies to its plain-HTTP requests only: said once, in a Warning. */
  const accessNoted = new Set<string>();
  const noteAccess = (ref: string, ing: NormalizedIngress) => {
    if (accessNoted.has(ref)) return;
    accessNoted.add(ref);
    const names = (Object.keys(ing.annotations) as AnnotationName[]).filter((n) => ANNOTATIONS[n]?.access).map((n) => `${NGINX_PREFIX}${n}`);
    for (const a of ing.accessControl) for (const n of a.annotation.split(', ')) if (!names.includes(n)) names.push(n);
    if (names.length) warn(ref, 'PassthroughAccessControl', `ssl-passthrough: the access control of ${names.sort().join(', ')} does not apply to the TLS connections passed through (they are never decrypted; ingress-nginx ignores it there too), only to plain-HTTP requests`);
  };
  if (o.sslPassthrough) {
    const passedBy = new Map<string, Owner>();
    const terminatedBy = new Map<string, Owner>();
    for (const ow of owners) {
      const ing = ow.ing;
      if (ing && isCanary(ing)) {
        if (passthroughOf(ing)) warn(ow.ref, 'PassthroughIgnored', `annotation ${NGINX_PREFIX}ssl-passthrough is ignored on a canary Ingress (its traffic is the main Ingress's)`);
        continue;
      }
      const own = ing ? ing.rules.map((r) => r.host ?? '_') : claimsOfRoute(ow.rt as NormalizedRoute).map((c) => c.pc.host);
      for (const h of [...new Set(own)]) {
        const by = passedBy.get(h);
        if (ing && passthroughOf(ing)) {
          const term = terminatedBy.get(h);
          if (h === '_') warn(ow.ref, 'PassthroughIgnored', 'ssl-passthrough: rules without a host cannot be passed through (the server name of the TLS connection decides); they are served as usual');
          else if (by) warn(ow.ref, 'PassthroughConflict', `ssl-passthrough: host ${h} is already passed through by ${describe(by.ref)}, which is older; this Ingress's rules for ${h} are served over plain HTTP only`);
          else if (term) warn(ow.ref, 'PassthroughConflict', `ssl-passthrough: host ${h} is already served by ${describe(term.ref)}, which is older and does not pass TLS through; Portico terminates TLS for ${h} and the annotation is ignored for it`);
          else {
            const t = passthroughTarget(ing, h);
            if (!t) {
              warn(ow.ref, 'PassthroughIgnored', `ssl-passthrough: host ${h} has no path and the Ingress no defaultBackend: there is no Service to pass its TLS connections to`);
              continue;
            }
            passedBy.set(h, ow);
            const port = 'number' in t.ref.port ? t.ref.port.number : t.ref.port.name;
            passthrough.set(h, { host: h, source: ow.ref, namespace: ing.namespace, service: t.ref.service, servicePort: port });
            const rest = t.paths.length ? `; its other paths (${t.paths.slice(0, 5).join(', ')}${t.paths.length > 5 ? ', …' : ''}) are served over plain HTTP only` : '';
            events.push({ ref: ow.ref, type: 'Normal', reason: 'Passthrough', message: `TLS connections for ${h} go undecrypted to service ${ing.namespace}/${t.ref.service} port ${port} (${t.via})${rest}` });
            noteAccess(ow.ref, ing);
          }
        } else if (by) {
          if (h !== '_') warn(ow.ref, 'PassthroughHost', `host ${h} is passed through by ${describe(by.ref)} (ssl-passthrough, older): its TLS connections go undecrypted to that Ingress's backend, and the paths of ${describe(ow.ref)} on ${h} are served over plain HTTP only`);
        } else if (!terminatedBy.has(h)) terminatedBy.set(h, ow);
      }
    }
  } else {
    for (const ing of served) {
      if (passthroughOf(ing)) warn(ingressRef(ing.key), 'UnsupportedAnnotation', `annotation ${NGINX_PREFIX}ssl-passthrough needs the controller flag --enable-ssl-passthrough (off by default, as in ingress-nginx): it is ignored and Portico terminates TLS for this Ingress's hosts`);
    }
  }
}
