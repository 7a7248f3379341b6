// The HTTPRoute kind (Gateway API): routes attached to the listeners of Portico's Gateways. Its claims:
// processor.ts; its parent statuses: gateway/status.ts.
import { GatewayResources, gatewayApiKind } from '../gateway-api.ts';
import { normalizeHttpRoute } from './normalize.ts';
import { httpRouteProcessor } from './processor.ts';

export const httpRoute = gatewayApiKind({
  kind: 'HTTPRoute',
  resource: GatewayResources.HTTPRoute,
  normalize: (o) => normalizeHttpRoute(o),
  status: true,
  why: 'Gateway API: the HTTPRoutes attached to Portico\'s Gateways...',
  processor: httpRouteProcessor,
});
