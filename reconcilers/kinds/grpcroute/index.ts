// The GRPCRoute kind (Gateway API): gRPC calls on the HTTP and HTTPS listeners of Portico's Gateways. Normalized to
// the HTTPRoute's record shape (normalize.ts), so the HTTPRoute claim processor serves it (its backends get gRPC:
// nginx's grpc_pass) and route changes are route data, no reload. Plain HTTP listeners take HTTP/2 with prior
// knowledge next to HTTP/1.x on the same port (nginx-assets/modules/portico_h2c).
import { GatewayResources, gatewayApiKind } from '../gateway-api.ts';
import { normalizeGrpcRoute } from './normalize.ts';
import { grpcRouteProcessor } from './processor.ts';

export const grpcRoute = gatewayApiKind({
  kind: 'GRPCRoute',
  resource: GatewayResources.GRPCRoute,
  normalize: (o) => normalizeGrpcRoute(o),
  status: true,
  why: "Gateway API: the GRPCRoutes attached to Portico's Gateways...",
  processor: grpcRouteProcessor,
});
