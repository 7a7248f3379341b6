// Phase: the certificates of Gateways' HTTPS listeners, in the certificate table under their pod port
// ("<pod port>/<host>", "<pod port>/*.<domain>", and "<pod port>/_" for a listener without a hostname), so they are
// only ever served on that Gateway port (certs.lua looks there first on a Gateway port) and never for an Ingress's
// host on Portico's own HTTPS port: one namespace's Gateway cannot change the certificate another's Ingress serves.
// A listener with a hostname serves its certificate for that name; one without, for any name on its port. Between
// listeners of one port claiming the same name, the most specific hostname's listener is the one that serves it (as
// for routes), and between Gateways — which never share a pod port — nothing is shared.
// Also the client certificates each HTTPS Gateway port asks for (spec.tls.frontend): askGatewayClientCertificates.
import { createHash } from 'node:crypto';
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

/**
 * How many CA certificates a client's chain may need above its own (OpenSSL's verify depth): the client certificate,
 * up to two intermediates it sends, and the CA of the ConfigMap.
 */
export const GATEWAY_CLIENT_VERIFY_DEPTH = 3;

/**
 * The ClientAuth id of a Gateway port's validation: a digest of the mode, depth and CA bundle (30 hex digits, as
 * auth-tls's). The mode is part of it, so a TLS session made under AllowInsecureFallback (perhaps without a
 * certificate) is never resumed on a port that requires one (tlsctx.lua ties sessions to the id).
 */
export function gatewayClientCaId(ca: string, strict: boolean): string {
  return createHash('sha256').update(`gateway ${strict ? 'AllowValidOnly' : 'AllowInsecureFallback'}\n${GATEWAY_CLIENT_VERIFY_DEPTH}\n${ca}`).digest('hex').slice(0, 30);
}

/**
 * Phase (after askClientCertificates, whose entries it replaces on Gateway ports): the client certificates each
 * HTTPS Gateway port asks for (spec.tls.frontend), keyed "<pod port>/_" — certs.lua asks with that entry for every
 * handshake on the port. AllowValidOnly makes the handshake refuse a client without a valid certificate
 * (`strict`); AllowInsecureFallback asks and lets every client in. A port's listeners share one validation (it is
 * per port); a listener whose validation has no usable CA is not served at all (attach.ts), so no port is ever
 * served without the check it asks for.
 */
export function askGatewayClientCertificates(d: Draft): void {
  if (!d.o.gatewayApi) return;
  const state = gatewayApiState(d.snap, d.o.gatewayApi);
  for (const gw of state.gateways.values()) {
    for (const l of gw.listeners) {
      const v = l.clientValidation;
      if (l.protocol !== 'HTTPS' || !l.usable || l.podPort === undefined || !v) continue;
      const key = `${l.podPort}/_`;
      const strict = v.mode === 'AllowValidOnly';
      const id = gatewayClientCaId(v.ca, strict);
      if (d.clientAuth[key] && 'id' in d.clientAuth[key] && d.clientAuth[key].id === id) continue;
      d.clientAuth[key] = { id, ca: v.ca, depth: GATEWAY_CLIENT_VERIFY_DEPTH, source: `Gateway ${gw.key} port ${l.port}: ${v.sources.join(', ')}`.slice(0, 500), ...(strict ? { strict: true as const } : {}) };
    }
  }
}
