// The TCPRoute kind (Gateway API): the connections of a TCP listener of Portico's Gateways go to its backends
// (weighted). Attachment and statuses: translate/gateway-api/attach.ts and gateway/status.ts; the listener itself is
// a server of nginx's stream section (nginx-driver/stream.ts), so a change reloads nginx.
import { GatewayResources, gatewayApiKind } from '../gateway-api.ts';
import { normalizeStreamRoute } from './normalize.ts';

export const tcpRoute = gatewayApiKind({
  kind: 'TCPRoute',
  resource: GatewayResources.TCPRoute,
  normalize: (o) => normalizeStreamRoute('TCPRoute', o),
  status: true,
  why: "Gateway API: the TCPRoutes attached to Portico's Gateways...",
});
