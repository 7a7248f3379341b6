// The UDPRoute kind (Gateway API): the datagrams of a UDP listener of Portico's Gateways go to its backends
// (weighted). Same shape and normalizer as TCPRoute (tcproute/normalize.ts); served by nginx's stream section.
import { GatewayResources, gatewayApiKind } from '../gateway-api.ts';
import { normalizeStreamRoute } from '../tcproute/normalize.ts';

export const udpRoute = gatewayApiKind({
  kind: 'UDPRoute',
  resource: GatewayResources.UDPRoute,
  normalize: (o) => normalizeStreamRoute('UDPRoute', o),
  status: true,
  why: "Gateway API: the UDPRoutes attached to Portico's Gateways...",
});
