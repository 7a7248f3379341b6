// Phase: the backends of default-backend, mirror-target and --default-backend-service.
import type { Route } from '../../config/types.ts';
import type { GlobalConfigValues } from '../../model/global-config.ts';
import type { NormalizedIngress, ServiceBackendRef } from '../../model/types.ts';
import type { TranslateOptions } from '../types.ts';
import { ingressRef } from '../objects.ts';
import { backendIdOf } from '../claims.ts';
import { authBackendId } from '../plugin-instances.ts';
import { type Draft, type SideBackends, isCanary } from '../draft.ts';
import { useAuthTarget } from '../auth-targets.ts';
import { resolveBackend } from '../backend.ts';

/**
 * The default-backend Service (its first port, as ingress-nginx) and the mirror-target of an Ingress, registered
 * as backends; what cannot be used is reported and left out (neither is access control: nothing fails closed).
 */
export function sideBackends(d: Draft, ing: NormalizedIngress, iref: string): SideBackends {
  const { snap, warn, unresolved } = d;
  const a = ing.annotations;
  const out: SideBackends = {};
  if (usesErrorBackend(ing, snap.global, d.o)) {
    const id = errorBackend(d, iref, d.o.defaultBackendService as string);
    if (id) out.errorBackendId = id;
  }
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
 * With --default-backend-service, an Ingress without its own default-backend whose paths catch errors
 * (custom-http-errors, its own or the ConfigMap's) sends them to that Service, as ingress-nginx does.
 */
export function usesErrorBackend(ing: NormalizedIngress | undefined, g: Pick<GlobalConfigValues, 'customHttpErrors'>, o: Pick<TranslateOptions, 'defaultBackendService'>): boolean {
  if (!ing || !o.defaultBackendService || ing.annotations['default-backend'] !== undefined) return false;
  return (ing.annotations['custom-http-errors'] ?? g.customHttpErrors ?? []).length > 0;
}

/** The reference of --default-backend-service's backend in what the translation reports: not an object, no Event. */
const FLAG_REF = 'Flag/--default-backend-service';

/** The backend of --default-backend-service ("namespace/name", its first port as ingress-nginx), or why not. */
function errorBackend(d: Draft, iref: string, key: string): string | undefined {
  const [ns, name] = key.split('/') as [string, string];
  const port = d.snap.services.get(key)?.ports[0]?.port;
  if (port === undefined) {
    if (iref !== FLAG_REF) d.warn(iref, 'DefaultBackendNotFound', `--default-backend-service: Service ${key} ${d.snap.services.has(key) ? 'has no port' : 'does not exist'}; the errors listed in custom-http-errors get nginx's own page`);
    return undefined;
  }
  const ref: ServiceBackendRef = { service: name, port: { number: port } };
  const id = backendIdOf(ns, ref);
  resolveBackend(d, iref, undefined, ns, ref, id, key);
  return id;
}

/**
 * ingress-nginx's default-backend and mirror-target (and --default-backend-service for the errors): backends the
 * routes of an Ingress name besides their own.
 * Resolved here, after every path's own backend (whose owner's balancing settings win), before the auth
 * backends (a mirror target that is not a Service is one of those: resolved by the gateway, same address filter).
 */
export function resolveSideBackends(d: Draft): void {
  const { served, closedReason, sideOf } = d;
  for (const ing of served) {
    const a = ing.annotations;
    if ((a['default-backend'] === undefined && a['mirror-target'] === undefined && !usesErrorBackend(ing, d.snap.global, d.o)) || isCanary(ing) || closedReason.has(ing.key)) continue;
    sideOf.set(ing.key, sideBackends(d, ing, ingressRef(ing.key)));
  }
  // ingress-nginx's catch-all: with --default-backend-service, what no path of any host matches goes there.
  if (d.o.defaultBackendService) d.unmatchedBackendId = errorBackend(d, FLAG_REF, d.o.defaultBackendService);
}
