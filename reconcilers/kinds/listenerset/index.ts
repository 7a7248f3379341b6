// The ListenerSet kind (Gateway API): listeners added to a Gateway of Portico's from another object, possibly of
// another namespace — only when the Gateway's spec.allowedListeners admits that namespace. Its listeners join the
// Gateway's ports (translate/gateway-api/attach.ts: precedence, conflicts, pod ports); routes attach to them with a
// parentRef of kind ListenerSet. Its status (conditions, per listener) is written by the Gateway API status
// controller (gateway/status.ts), which also counts a Gateway's attached ListenerSets.
import { GatewayResources, gatewayApiKind } from '../gateway-api.ts';
import type { ListenerSetRecord } from '../../model/gateway-api.ts';
import { listenerSetReads, normalizeListenerSet } from './normalize.ts';

export const listenerSet = gatewayApiKind({
  kind: 'ListenerSet',
  resource: GatewayResources.ListenerSet,
  normalize: (o) => normalizeListenerSet(o),
  reads: (r) => listenerSetReads(r as ListenerSetRecord),
  tlsSecrets: true,
  status: true,
  why: 'Gateway API: ListenerSets adding listeners to Portico\'s Gateways (when their allowedListeners admit them)...',
});
