// Where an auth subrequest or a mirror may go: a Service of the object's namespace (unless the ConfigMap allows others),
// another host or an IP address no tenant is refused; registered as a backend.
import { forbiddenAddressReason } from '../values/addresses.ts';
import { namesService } from './self.ts';
import { clusterIpIndex, serviceOfAddress } from './cluster-ips.ts';
import type { AnnotationInstance } from './plugin-instances.ts';
import type { Draft } from './draft.ts';
import type { PluginInstance } from '../config/types.ts';

const crossNote = 'only Services of the Ingress\'s own namespace may be named (the ConfigMap\'s allow-cross-namespace-auth: "true" allows others)';

/**
 * Registers the backend of an auth subrequest or mirror; why the paths using it must fail closed (or nothing is
 * mirrored), or null. `ns`: the namespace of the Ingress that names it, whose Services alone it may reach
 * (unless the ConfigMap allows others); null for the ConfigMap's global-auth-url, which is the administrator's.
 */
export function useAuthTarget(d: Draft, ref: string, a: NonNullable<AnnotationInstance['auth']>, what: string, ns: string | null): string | null {
  const { snap, o, own, authBackends, extAuthBackends } = d;
  const g0 = snap.global;
  const t = a.target;
  const self = o.selfService;
  if (self && ((t.kind === 'service' && `${t.namespace}/${t.service}` === self) || (t.kind === 'host' && namesService(t.host, self)))) {
    return `${what} ${a.url} names Portico's own Service ${self}, which Portico never proxies to (a request would loop)`;
  }
  const sameNamespaceOnly = ns !== null && !g0.allowCrossNamespaceAuth;
  // The request's own host: no backend of its own (the route the host serves the auth path with, found per request;
  // the instance carries the namespace its backend must be of, see ownHostScoped).
  if (t.kind === 'own-host') return null;
  if (t.kind === 'service') {
    const key = `${t.namespace}/${t.service}`;
    if (sameNamespaceOnly && t.namespace !== ns) return `${what} ${a.url} names Service ${key} of another namespace: ${crossNote}`;
    const svc = snap.services.get(key);
    if (!svc) return `${what} ${a.url} names Service ${key}, which does not exist`;
    if (!svc.ports.some((p) => p.port === t.port)) return `${what} ${a.url} names port ${t.port} of Service ${key}, which it does not have`;
    if (!authBackends.has(a.backendId)) authBackends.set(a.backendId, { ref, ns: t.namespace, service: t.service, port: t.port });
    return null;
  }
  if (t.kind === 'ip') {
    const why = forbiddenAddressReason(t.address, own);
    if (why) return `${what} ${a.url} points at ${t.address}, ${why}, which Portico never proxies to`;
    if (sameNamespaceOnly) {
      d.vips ??= clusterIpIndex(snap.services.values());
      const owner = serviceOfAddress(d.vips, t.address);
      if (owner && !owner.startsWith(`${ns}/`)) return `${what} ${a.url} points at ${t.address}, the cluster IP of Service ${owner} of another namespace: ${crossNote}`;
    }
    extAuthBackends.set(a.backendId, { address: t.address, port: t.port });
    return null;
  }
  // A host name: resolved by the gateway, which refuses cluster IPs for it too when one Ingress naming it may
  // reach its own namespace only (the stricter caller wins: the backend is shared by host).
  const prev = extAuthBackends.get(a.backendId);
  extAuthBackends.set(a.backendId, { host: t.host, port: t.port, ...(sameNamespaceOnly || prev?.noClusterIPs ? { noClusterIPs: true as const } : {}) });
  return null;
}

/**
 * An auth-url on the request's own host ($host) of an Ingress of `namespace`: its subrequest may only reach a route
 * whose backend is of that namespace (the ConfigMap's allow-cross-namespace-auth lifts it; global-auth-url is not
 * scoped).
 */
export function ownHostScoped(inst: PluginInstance, namespace: string): PluginInstance {
  if (inst.type !== 'external-auth' || !inst.ingressNginx) return inst;
  return { ...inst, ingressNginx: { ...inst.ingressNginx, namespace } };
}
