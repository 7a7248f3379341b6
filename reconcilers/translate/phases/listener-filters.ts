// Phase: Gateway API listener filters (GatewayListenerFilters). Per Gateway pod port, per listener hostname ("" for a
// listener without one): the plugin ids the router runs on every request that listener accepts, before route
// matching, in the order the filters are written. ExtensionRef filters are Portico Plugin objects (their ids, the
// same instances routes use); an ExternalAuth filter becomes an external-auth instance of its own, in the Gateway API
// mode (the client's method and path, behind http.path, to a Service reached through the balancer like any backend).
// A listener whose filters cannot be applied gets the one id no instance can have (LISTENER_CLOSED_ID): the router
// answers every request on it 503 — never served without its filters.
import type { PluginInstance } from '../../config/types.ts';
import { backendIdOf } from '../claims.ts';
import type { Draft } from '../draft.ts';
import { gatewayApiState, type ListenerFilterStep, type ListenerState } from '../gateway-api/attach.ts';
import { usePlugin } from '../plugin-refs.ts';

/** Not a plugin id the configuration API takes (check.lua PLUGIN_ID: no leading "_"): the chain always fails closed. */
export const LISTENER_CLOSED_ID = '_listener_closed';

/** Timeout of a listener's auth request (the API sets none). */
const AUTH_TIMEOUT_MS = 5000;

export function applyListenerFilters(d: Draft): void {
  const state = gatewayApiState(d.snap, d.o.gatewayApi);
  for (const gw of state.gateways.values()) {
    for (const l of gw.listeners) {
      if (!l.usable || l.podPort === undefined || !l.filterPlan) continue;
      const ref = l.set ? `ListenerSet/${l.set}` : `Gateway/${gw.key}`;
      let chains = d.listenerChains.get(l.podPort);
      if (!chains) d.listenerChains.set(l.podPort, (chains = {}));
      chains[l.hostname ?? ''] = chainOf(d, ref, l);
    }
  }
}

/** The plugin ids of one listener's filters, in their order; [LISTENER_CLOSED_ID] when one cannot be applied. */
function chainOf(d: Draft, ref: string, l: ListenerState): string[] {
  const plan = l.filterPlan!;
  if (plan.closed) return [LISTENER_CLOSED_ID];
  const ids: string[] = [];
  for (const [i, step] of plan.steps.entries()) {
    const r = 'plugin' in step ? usePlugin(d, step.plugin.namespace, step.plugin.name) : authStep(d, ref, l, i, step.auth);
    if ('missing' in r) {
      d.warn(ref, 'ListenerFilterUnavailable', `listener ${l.name}: ${r.missing}; every request on it is answered 503`);
      return [LISTENER_CLOSED_ID];
    }
    ids.push(r.id);
  }
  return ids;
}

/** An ExternalAuth filter's instance (registered once), or why it cannot be used. */
function authStep(d: Draft, ref: string, l: ListenerState, i: number, a: Extract<ListenerFilterStep, { auth: unknown }>['auth']): { id: string } | { missing: string } {
  const key = `${a.namespace}/${a.service}`;
  // Portico never proxies to itself (a request would loop); the Service was checked to exist by the attachment.
  if (d.o.selfService === key) return { missing: `filters.requests[${i}]: Service ${key} is Portico's own Service, which Portico never proxies to` };
  const [kind, ns, name] = ref.split('/') as [string, string, string];
  const id = `lf.${kind === 'Gateway' ? 'gw' : 'ls'}.${ns}.${name}.${l.name}.${i}`;
  const backendId = backendIdOf(a.namespace, { service: a.service, port: { number: a.port } });
  const inst: PluginInstance = {
    type: 'external-auth',
    name: `${ref} listener ${l.name} filter ${i}`,
    backendId,
    path: a.path,
    method: 'GET',
    forwardHeaders: a.forwardHeaders,
    upstreamHeaders: a.upstreamHeaders ?? [],
    clientHeaders: ['www-authenticate', 'location', 'set-cookie'],
    timeoutMs: AUTH_TIMEOUT_MS,
    gatewayApi: { allUpstreamHeaders: a.upstreamHeaders === null },
  };
  d.plugins[id] = inst;
  if (!d.authBackends.has(backendId)) d.authBackends.set(backendId, { ref, ns: a.namespace, service: a.service, port: a.port });
  return { id };
}
