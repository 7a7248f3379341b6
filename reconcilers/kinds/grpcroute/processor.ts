// The GRPCRoute's claim processor: the HTTPRoute's (httproute/processor.ts), made for this kind — a GRPCRoute's
// record has the HTTPRoute's shape (normalize.ts), and its backends speak gRPC.
export { grpcRouteProcessor } from '../httproute/processor.ts';
