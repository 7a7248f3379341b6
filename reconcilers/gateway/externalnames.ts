// ExternalName Services: the translation (pure, no DNS) names them; the gateway's resolver turns them into
// endpoints before each push. Addresses no tenant may reach are dropped with a Warning on every Ingress that uses
// the Service.
import type { Model } from '../model/model.ts';
import { ingressRef, type TranslateEvent } from '../translate/translate.ts';
import type { Backend, GatewayConfig } from '../config/types.ts';
import { serviceOfBackend } from './endpoint-updates.ts';
import type { ExternalNameResolver } from './resolver.ts';

/**
 * ExternalName backends: endpoints from DNS (resolved outside the pure translation), refused addresses dropped
 * with a Warning on every Ingress that uses the Service.
 */
export function resolveExternalNames(desired: GatewayConfig, resolver: ExternalNameResolver, model: Model, touched?: Set<string>): TranslateEvent[] {
  const events: TranslateEvent[] = [];
  const names = new Set<string>();
  const external: string[] = [];
  for (const id in desired.data.backends) {
    const b = desired.data.backends[id] as Backend;
    if (b.externalName && b.externalPort) {
      names.add(b.externalName);
      external.push(id);
    }
  }
  resolver.use(names);
  let copied = false;
  for (const id of external) {
    const original = desired.data.backends[id] as Backend;
    // Results of the translation are shared with the next one: change copies only.
    if (!copied) desired.data.backends = { ...desired.data.backends };
    copied = true;
    const b: Backend = { ...original };
    desired.data.backends[id] = b;
    touched?.add(id); // a new object every sync: the diff must look at it
    const e = resolver.get(b.externalName as string);
    if (!e) b.unavailableReason = `resolving ExternalName ${b.externalName}`;
    else if (e.error) b.unavailableReason = `ExternalName ${b.externalName} does not resolve: ${e.error}`;
    else if (!e.addresses.length && e.refused.length)
      b.unavailableReason = `ExternalName ${b.externalName} resolves only to addresses Portico refuses to proxy to (${e.refused.map((r) => `${r.address}: ${r.reason}`).join(', ')})`;
    else if (!e.addresses.length) b.unavailableReason = `ExternalName ${b.externalName} has no addresses`;
    else b.endpoints = e.addresses.map((address) => ({ address, port: b.externalPort as number, weight: 1 }));
    if (e?.refused.length) {
      const svc = serviceOfBackend(b.id)?.serviceKey;
      const msg = `Service ${svc} (ExternalName ${b.externalName}) resolves to ${e.refused.map((r) => `${r.address} (${r.reason})`).join(', ')}; Portico never proxies there${e.addresses.length ? '' : ', so paths using it answer 503'}`;
      for (const ingKey of svc ? model.ingressesUsingService(svc) : []) events.push({ ref: ingressRef(ingKey), type: 'Warning', reason: 'ForbiddenEndpoint', message: msg });
    }
  }
  return events;
}
