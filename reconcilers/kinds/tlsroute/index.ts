// The TLSRoute kind (Gateway API): TLS connections to a Passthrough listener of Portico's Gateways go, undecrypted,
// to its backends, chosen by the server name of the ClientHello (its hostnames). Normalizer shared with TCPRoute
// (tcproute/normalize.ts); served by nginx's stream section with ssl_preread.
import { GatewayResources, gatewayApiKind } from '../gateway-api.ts';
import { normalizeStreamRoute } from '../tcproute/normalize.ts';

export const tlsRoute = gatewayApiKind({
  kind: 'TLSRoute',
  resource: GatewayResources.TLSRoute,
  normalize: (o) => normalizeStreamRoute('TLSRoute', o),
  status: true,
  why: "Gateway API: the TLSRoutes attached to Portico's Gateways...",
});
