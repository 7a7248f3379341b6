// Endpoint updates for the data lane: which backends' endpoints differ from what the model says now. Shared by
// the data lane (only the Services whose slices changed) and the structural lane's push (every backend, so a
// push never sends endpoints older than one the data lane already sent). Pure: reads the model only.
import type { Model } from '../model/model.ts';
import { endpointsOf } from '../translate/translate.ts';
import type { Backend } from '../config/types.ts';

/** "<ns>_<service>_<port>" → its Service key and port label (names and port names never contain "_"). */
export function serviceOfBackend(id: string): { serviceKey: string; port: string } | null {
  const parts = id.split('_');
  if (parts.length !== 3) return null;
  const [ns, name, port] = parts as [string, string, string];
  return { serviceKey: `${ns}/${name}`, port };
}

/**
 * Fresh endpoints, from the model as it is now, for the backends in `backends` (only those of `services` when
 * given: the EndpointSlices of those changed; a change of the Service itself runs the structural lane anyway). Returns the backends whose endpoints differ, and whether something needs the structural lane instead
 * (the Service or its port is gone, it became ExternalName, the backend was unavailable, an endpoint address was
 * refused and must be reported). Pure: reads the model.
 */
export function endpointUpdates(
  model: Model,
  backends: Record<string, Backend>,
  services: ReadonlySet<string> | null,
  own: ReadonlySet<string>,
): { upsert: Record<string, Backend>; needsStructure: boolean } {
  const upsert: Record<string, Backend> = {};
  let needsStructure = false;
  const check = (id: string, b: Backend) => {
    if (b.externalName) return;
    const ref = serviceOfBackend(id);
    if (!ref || (services && !services.has(ref.serviceKey))) return;
    const svc = model.service(ref.serviceKey);
    const sp = svc?.ports.find((p) => String(p.port) === ref.port || p.name === ref.port);
    if (!svc || !sp || svc.type === 'ExternalName' || b.unavailableReason) {
      needsStructure = true;
      return;
    }
    const { endpoints, forbidden } = endpointsOf(model.slicesOf(ref.serviceKey), sp.name, own);
    // Allowed endpoints are pushed now; refused ones need the full translation, which raises the Warning.
    if (forbidden.length) needsStructure = true;
    if (JSON.stringify(endpoints) !== JSON.stringify(b.endpoints)) upsert[id] = { ...b, endpoints };
  };
  if (services) {
    // A backend id names its Service and port ("<ns>_<service>_<port number or name>"): look those up directly
    // instead of scanning every backend (10k of them at scale).
    for (const key of services) {
      const [ns, name] = key.split('/') as [string, string];
      const svc = model.service(key);
      const labels = new Set<string>();
      for (const p of svc?.ports ?? []) {
        labels.add(String(p.port));
        if (p.name) labels.add(p.name);
      }
      for (const label of labels) {
        const id = `${ns}_${name}_${label}`;
        const b = backends[id];
        if (b) check(id, b);
      }
      // The Service (or a port) may be gone while a backend still names it: the structural lane reports that.
      if (!svc) needsStructure = true;
    }
  } else {
    for (const [id, b] of Object.entries(backends)) check(id, b);
  }
  return { upsert, needsStructure };
}
