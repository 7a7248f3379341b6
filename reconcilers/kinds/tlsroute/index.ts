// The TLSRoute kind (Gateway API): TLS connections to a TLS listener of Portico's Gateways, chosen by the server name
// of the ClientHello (its hostnames), go to its backends: undecrypted on a Passthrough listener, as plaintext (or TLS
// again, under a BackendTLSPolicy) on a Terminate listener, which ends TLS with its certificate. Normalizer shared
// with TCPRoute (tcproute/normalize.ts); served by nginx's stream section with ssl_preread (streams.ts, stream.ts).
import { GatewayResources, gatewayApiKind } from '../gateway-api.ts';
import { normalizeStreamRoute } from '../tcproute/normalize.ts';

export const tlsRoute = gatewayApiKind({
  kind: 'TLSRoute',
  resource: GatewayResources.TLSRoute,
  normalize: (o) => normalizeStreamRoute('TLSRoute', o),
  status: true,
  why: "Gateway API: the TLSRoutes attached to Portico's Gateways...",
});
