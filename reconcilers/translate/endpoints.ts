// The endpoints of a Service port that may receive requests (shared by the translation and the gateway's fast path).
import { forbiddenAddressReason } from '../values/addresses.ts';
import type { Endpoint } from '../config/types.ts';
import type { NormalizedSlice } from '../model/types.ts';

/** An endpoint address refused because no tenant may make Portico proxy to it. */
export interface ForbiddenEndpoint {
  address: string;
  reason: string;
}

/**
 * Endpoints of one Service port that may receive new requests: ready and not terminating, from every slice whose
 * port of that name is TCP, de-duplicated and sorted — minus addresses no tenant may reach (loopback, link-local,
 * unspecified, multicast, Portico's own `own` addresses), which are returned in `forbidden`. Shared by the full
 * translation and the gateway's endpoint-only fast path, so both give identical results.
 */
export function endpointsOf(
  slices: readonly NormalizedSlice[],
  servicePortName: string,
  own?: ReadonlySet<string>,
): { endpoints: Endpoint[]; forbidden: ForbiddenEndpoint[] } {
  const seen = new Set<string>();
  const eps: Endpoint[] = [];
  const forbidden: ForbiddenEndpoint[] = [];
  const refused = new Set<string>();
  for (const slice of slices) {
    const port = slice.ports.find((p) => p.name === servicePortName && p.protocol === 'TCP');
    if (!port) continue;
    for (const e of slice.endpoints) {
      if (!e.ready || e.terminating) continue;
      const k = `${e.address}:${port.port}`;
      if (seen.has(k)) continue;
      seen.add(k);
      const why = forbiddenAddressReason(e.address, own);
      if (why) {
        if (!refused.has(e.address)) forbidden.push({ address: e.address, reason: why });
        refused.add(e.address);
        continue;
      }
      eps.push({ address: e.address, port: port.port, weight: 1 });
    }
  }
  eps.sort((x, y) => (x.address < y.address ? -1 : x.address > y.address ? 1 : x.port - y.port));
  forbidden.sort((x, y) => (x.address < y.address ? -1 : x.address > y.address ? 1 : 0));
  return { endpoints: eps, forbidden };
}

/** The endpoints part of endpointsOf (forbidden addresses left out). */
export function endpointsFor(slices: readonly NormalizedSlice[], servicePortName: string, own?: ReadonlySet<string>): Endpoint[] {
  return endpointsOf(slices, servicePortName, own).endpoints;
}
