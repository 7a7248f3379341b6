// TCP/UDP services moved to reconcilers/kinds/configmap/tcpudp.ts (a kind is a folder); this re-export keeps the
// older path for the gateway's stream tests.
export { parseStreamServices, reservedPorts, streamKeySchema, streamValueSchema, TcpUdpReconciler, type StreamParseResult } from './kinds/configmap/tcpudp.ts';
