// Phase: the backends of default-backend and mirror-target.
import type { Route } from '../../config/types.ts';
import type { NormalizedIngress, ServiceBackendRef } from '../../model/types.ts';
import { ingressRef } from '../objects.ts';
import { backendIdOf } from '../claims.ts';
import { authBackendId } from '../plugin-instances.ts';
import { type Draft, isCanary } from '../draft.ts';
import { useAuthTarget } from '../auth-targets.ts';
import { resolveBackend } from '../backend.ts';

/**
 * The default-backend Service (its first port, as ingress-nginx) and the mirror-target of an Ingress, registered
 * as backends; what cannot be used is reported and left out (neither is access control: nothing fails closed).
 */
export function sideBackends(d: Draft, ing: NormalizedIngress, iref: string): { defaultBackendId?: string; mirror?: NonNullable<Route['mirror']> } {
  const { snap, warn, unresolved } = d;
  const a = ing.annotations;
  const out: { defaultBackendId?: string; mirror?: NonNullable<Route['mirror']> } = {};
  const name = a['default-backend'];
  if (name !== undefined) {
    const key = `${ing.namespace}/${name}`;
    const port = snap.services.get(key)?.ports[0]?.port;
    if (port === undefined) {
      warn(iref, 'DefaultBackendNotFound', `default-backend: Service ${key} ${snap.services.has(key) ? 'has no port' : 'does not exist'}; requests are not sent to it (without endpoints the paths answer 503, errors get nginx's own page)`);
      unresolved(iref, `Service ${key}`);
    } else {
      const ref: ServiceBackendRef = { service: name, port: { number: port } };
      out.defaultBackendId = backendIdOf(ing.namespace, ref);
      resolveBackend(d, iref, undefined, ing.namespace, ref, out.defaultBackendId, key);
    }
  }
  const t = a['mirror-target'];
  if (t !== undefined) {
    const backendId = authBackendId(t.target);
    const why = useAuthTarget(d, iref, { target: t.target, backendId, url: t.url }, 'mirror-target', ing.namespace);
    if (why) warn(iref, 'MirrorUnavailable', `${why}; requests are not mirrored`);
    else {
      // The Host header: mirror-host, else the target's host (an IPv6 literal in brackets, as in a URL).
      const host = a['mirror-host'] ?? (t.host.includes(':') ? `[${t.host}]` : t.host);
      out.mirror = { backendId, scheme: t.scheme, host, serverName: t.host, ...('requestUri' in t.uri ? { requestUri: true as const } : { path: t.uri.path }) };
    }
  }
  return out;
}

/**
 * ingress-nginx's default-backend and mirror-target: backends the routes of an Ingress name besides their own.
 * Resolved here, after every path's own backend (whose owner's balancing settings win), before the auth
 * backends (a mirror target that is not a Service is one of those: resolved by the gateway, same address filter).
 */
export function resolveSideBackends(d: Draft): void {
  const { served, closedReason, sideOf } = d;
  for (const ing of served) {
    const a = ing.annotations;
    if ((a['default-backend'] === undefined && a['mirror-target'] === undefined) || isCanary(ing) || closedReason.has(ing.key)) continue;
    sideOf.set(ing.key, sideBackends(d, ing, ingressRef(ing.key)));
  }
}
