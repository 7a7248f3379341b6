// ExternalName Services: the translation (pure, no DNS) names them; the gateway's resolver turns them into
// endpoints before each push. Addresses no tenant may reach are dropped with a Warning on every Ingress that uses
// the Service.
import type { Model } from '../model/model.ts';
import { ingressRef, type TranslateEvent } from '../translate/translate.ts';
import type { Backend, GatewayConfig } from '../config/types.ts';
import { serviceOfBackend } from './endpoint-updates.ts';
import type { ExternalNameResolver } from './resolver.ts';
import { collectorIsName } from '../model/tracing-config.ts';
import { clusterIpIndex, serviceOfAddress } from '../translate/cluster-ips.ts';

/** Ingresses whose auth-url or mirror-target is this host and port (to report a refusal on; rare, so a scan). */
function callersOf(model: Model, host: string, port: number): string[] {
  const out: string[] = [];
  for (const ing of model.snapshot().ingresses.values()) {
    for (const t of [ing.annotations['auth-url']?.target, ing.annotations['mirror-target']?.target]) {
      if (t?.kind === 'host' && t.host === host && t.port === port) {
        out.push(ing.key);
        break;
      }
    }
  }
  return out;
}

/**
 * ExternalName backends: endpoints from DNS (resolved outside the pure translation), refused addresses dropped
 * with a Warning on every Ingress that uses the Service.
 */
export function resolveExternalNames(desired: GatewayConfig, resolver: ExternalNameResolver, model: Model, touched?: Set<string>, extraNames: Iterable<string> = []): TranslateEvent[] {
  const events: TranslateEvent[] = [];
  // Other names resolved with the same resolver (enable-ocsp's responders, ocsp-responders.ts).
  const names = new Set<string>(extraNames);
  const external: string[] = [];
  for (const id in desired.data.backends) {
    const b = desired.data.backends[id] as Backend;
    if (b.externalName && b.externalPort) {
      names.add(b.externalName);
      external.push(id);
    }
  }
  // The OpenTelemetry collector, when the ConfigMap names it by DNS name (tracing-config.ts).
  const tracing = desired.structure.global.tracing;
  const collector = tracing && collectorIsName(tracing.host) ? tracing.host : undefined;
  if (collector) names.add(collector);
  resolver.use(names);
  if (tracing && collector) {
    const e = resolver.get(collector);
    const address = e && !e.error ? e.addresses[0] : undefined;
    // Results of the translation are shared with the next one: change copies only. Unresolved (or only refused
    // addresses): no tracing until it resolves (the resolver's refresh triggers a new sync).
    const global = { ...desired.structure.global };
    if (address) global.tracing = { ...tracing, host: address };
    else delete global.tracing;
    desired.structure = { ...desired.structure, global };
  }
  let vips: Map<string, string> | undefined;
  let copied = false;
  for (const id of external) {
    const original = desired.data.backends[id] as Backend;
    // Results of the translation are shared with the next one: change copies only.
    if (!copied) desired.data.backends = { ...desired.data.backends };
    copied = true;
    const b: Backend = { ...original };
    desired.data.backends[id] = b;
    touched?.add(id); // a new object every sync: the diff must look at it
    let e = resolver.get(b.externalName as string);
    // An Ingress's auth-url / mirror-target host: a Service's cluster IP is reached by the Service's name, which the
    // translation checks for the namespace; by another name it is refused (allow-cross-namespace-auth off).
    if (e && b.noClusterIPs && e.addresses.length) {
      vips ??= clusterIpIndex(model.snapshot().services.values());
      const table = vips;
      const vip = e.addresses.filter((a) => serviceOfAddress(table, a));
      if (vip.length) {
        const refused = vip.map((address) => ({ address, reason: `the cluster IP of Service ${serviceOfAddress(table, address)} (name a Service of the Ingress's own namespace as <service>.<namespace>.svc instead)` }));
        e = { ...e, addresses: e.addresses.filter((a) => !vip.includes(a)), refused: [...e.refused, ...refused] };
      }
    }
    if (!e) b.unavailableReason = `resolving ExternalName ${b.externalName}`;
    else if (e.error) b.unavailableReason = `ExternalName ${b.externalName} does not resolve: ${e.error}`;
    else if (!e.addresses.length && e.refused.length)
      b.unavailableReason = `ExternalName ${b.externalName} resolves only to addresses Portico refuses to proxy to (${e.refused.map((r) => `${r.address}: ${r.reason}`).join(', ')})`;
    else if (!e.addresses.length) b.unavailableReason = `ExternalName ${b.externalName} has no addresses`;
    else b.endpoints = e.addresses.map((address) => ({ address, port: b.externalPort as number, weight: 1 }));
    if (e?.refused.length) {
      const svc = serviceOfBackend(b.id)?.serviceKey;
      const list = e.refused.map((r) => `${r.address} (${r.reason})`).join(', ');
      if (svc) {
        const msg = `Service ${svc} (ExternalName ${b.externalName}) resolves to ${list}; Portico never proxies there${e.addresses.length ? '' : ', so paths using it answer 503'}`;
        for (const ingKey of model.ingressesUsingService(svc)) events.push({ ref: ingressRef(ingKey), type: 'Warning', reason: 'ForbiddenEndpoint', message: msg });
      } else {
        // An auth-url / mirror-target host: reported on the Ingresses that name it.
        const msg = `auth-url / mirror-target host ${b.externalName} resolves to ${list}; Portico never proxies there${e.addresses.length ? '' : ', so the auth subrequest fails (the request is refused) and nothing is mirrored'}`;
        for (const ingKey of callersOf(model, b.externalName as string, b.externalPort as number)) events.push({ ref: ingressRef(ingKey), type: 'Warning', reason: 'ForbiddenEndpoint', message: msg });
      }
    }
  }
  return events;
}
