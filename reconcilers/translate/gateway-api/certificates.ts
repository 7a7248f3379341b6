// Phase: the certificates of Gateways' HTTPS listeners, in the certificate table under their pod port
// ("<pod port>/<host>", "<pod port>/*.<domain>", and "<pod port>/_" for a listener without a hostname), so they are
// only ever served on that Gateway port (certs.lua looks there first on a Gateway port) and never for an Ingress's
// host on Portico's own HTTPS port: one namespace's Gateway cannot change the certificate another's Ingress serves.
// A listener with a hostname serves its certificate for that name; one without, for any name on its port. Between
// listeners of one port claiming the same name, the most specific hostname's listener is the one that serves it (as
// for routes), and between Gateways — which never share a pod port — nothing is shared.
import type { Certificate } from '../../config/types.ts';
import type { TlsMaterial } from '../../model/types.ts';
import type { Draft } from '../draft.ts';
import { gatewayApiState } from './attach.ts';

export function loadGatewayCertificates(d: Draft): void {
  if (!d.o.gatewayApi) return;
  const state = gatewayApiState(d.snap, d.o.gatewayApi);
  for (const gw of state.gateways.values()) {
    for (const l of gw.listeners) {
      if (l.protocol !== 'HTTPS' || !l.usable || l.podPort === undefined || !l.certificates.length) continue;
      const m = d.snap.secrets.get(l.certificates[0]!);
      if (!m || !m.ok) continue;
      const key = `${l.podPort}/${l.hostname ?? '_'}`;
      d.certificates[key] ??= certOf(d, m);
    }
  }
}

function certOf(d: Draft, m: Extract<TlsMaterial, { ok: true }>): Certificate {
  let c = d.memo?.certificates.get(m);
  if (!c) {
    c = { cert: m.cert, key: m.privateKey, source: m.key, notAfter: m.notAfter };
    d.memo?.certificates.set(m, c);
  }
  return c;
}
