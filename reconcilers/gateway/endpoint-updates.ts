// Endpoint updates for the data lane: which backends' endpoints differ from what the model says now. Shared by
// the data lane (only the Services whose slices changed) and the structural lane's push (every backend, so a
// push never sends endpoints older than one the data lane already sent). Pure: reads the model only.
import type { Model } from '../model/model.ts';
import { endpointsOf } from '../translate/translate.ts';
import type { Backend } from './config-types.ts';

/** "<ns>_<service>_<port>" → its Service key and port label (names and port names never contain "_"). */
export function serviceOfBackend(id: string): { serviceKey: string; port: string } | null {
  const parts = id.split('_');
  if (parts.length !== 3) return null;
  const [ns, name, port] = parts as [string, string, string];
  return { serviceKey: `${ns}/${name}`, port };
}

/**
 * Fresh endpoints, from the model as it is now, for the backends in `backends` (only those of `services` when
 * given). Returns the backends whose endpoints differ, and whether something needs the structural lane instead
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
  for (const [id, b] of Object.entries(backends)) {
    if (b.externalName) continue;
    const ref = serviceOfBackend(id);
    if (!ref || (services && !services.has(ref.serviceKey))) continue;
    const svc = model.service(ref.serviceKey);
    const sp = svc?.ports.find((p) => String(p.port) === ref.port || p.name === ref.port);
    if (!svc || !sp || svc.type === 'ExternalName' || b.unavailableReason) {
      needsStructure = true;
      continue;
    }
    const { endpoints, forbidden } = endpointsOf(model.slicesOf(ref.serviceKey), sp.name, own);
    // Allowed endpoints are pushed now; refused ones need the full translation, which raises the Warning.
    if (forbidden.length) needsStructure = true;
    if (JSON.stringify(endpoints) !== JSON.stringify(b.endpoints)) upsert[id] = { ...b, endpoints };
  }
  return { upsert, needsStructure };
}
