// What nginx runs and what its Lua side holds, as both lanes see it: the structure of the last confirmed reload,
// the data of the last successful push, and whether nginx (re)started since, losing its shared memory.
import type { DataPlane, GatewayConfig, Structure } from '../config/types.ts';
import type { PushResult } from './nginx/dynamic.ts';

/** Nothing held (a fresh object each time: `held` is updated in place by endpoint pushes). */
export const emptyData = (): DataPlane => ({ routes: {}, backends: {}, certificates: {}, defaultCertificate: null, plugins: {}, consumers: {} });

/**
 * What the Lua side holds after a push it partly refused: `desired`, except that the hosts whose certificate (or
 * client CA) could not be stored keep what they had before (`base`), so the next diff sends those again.
 */
export function heldWithout(desired: DataPlane, base: DataPlane, notStored: NonNullable<PushResult['notStored']>): DataPlane {
  const certificates = { ...desired.certificates };
  let defaultCertificate = desired.defaultCertificate;
  for (const h of notStored.hosts) {
    if (h === '__default__') defaultCertificate = base.defaultCertificate;
    else if (base.certificates[h]) certificates[h] = base.certificates[h];
    else delete certificates[h];
  }
  const out: DataPlane = { ...desired, certificates, defaultCertificate };
  if (notStored.clientHosts.length && desired.clientAuth) {
    const clientAuth = { ...desired.clientAuth };
    for (const h of notStored.clientHosts) {
      const was = base.clientAuth?.[h];
      if (was) clientAuth[h] = was;
      else delete clientAuth[h];
    }
    out.clientAuth = clientAuth;
  }
  return out;
}

export class NginxState {
  /** What nginx.conf holds (after the last confirmed reload). */
  structure: Structure | null = null;
  /** Its checksum (what nginx reports once the generation is live). */
  checksum = '';
  /** What the Lua side holds (after the last successful push). */
  held: DataPlane = emptyData();
  /** nginx (re)started since the last push: its shared memory is empty, the next push must send everything. */
  dataLost = true;

  /** The running configuration, for the diff (null before the first confirmed start). */
  running(): GatewayConfig | null {
    return this.structure ? { structure: this.structure, data: this.held } : null;
  }
}
