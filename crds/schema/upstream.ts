// Upstream (portico.dev/v1alpha1): how Portico talks to the endpoints of one Service — load balancing, retries,
// timeouts, protocol, upstream TLS and passive health checks.
import { z } from 'zod';
import { AGE, conditionColumn, type CrdDefinition } from './definition.ts';
import { crossField, duration, headerName, objectName, port, queryParamName, retriesSchema, serviceName, setList, timeoutsSchema, TOKEN, dnsName, statusSchema } from './common.ts';

export const LB_ALGORITHMS = ['RoundRobin', 'EWMA', 'ConsistentHash', 'Cookie'] as const;
/** nginx variables a consistent hash may use: request data only, nothing that exposes server state. */
export const HASH_VARIABLES = ['remote_addr', 'request_uri', 'uri', 'host', 'args'] as const;
export const UPSTREAM_PROTOCOLS = ['HTTP', 'HTTPS', 'GRPC', 'GRPCS'] as const;

const hashKeys = ['header', 'cookie', 'query', 'variable'] as const;

export const hashOnSchema = crossField(
  z
    .strictObject({
      header: headerName().optional().describe('Hash on the value of this request header.'),
      cookie: z.string().min(1).max(128).regex(TOKEN, 'must be a cookie name (RFC 6265 token)').optional().describe('Hash on the value of this request cookie.'),
      query: queryParamName().optional().describe('Hash on the value of this query parameter.'),
      variable: z.enum(HASH_VARIABLES).optional().describe('Hash on a request property: remote_addr (client address), request_uri (path and query), uri (path), host, args (query string).'),
    })
    .describe('What the ConsistentHash algorithm hashes on: exactly one of header, cookie, query, variable.'),
  [
    {
      cel: `[${hashKeys.map((k) => `has(self.${k})`).join(', ')}].filter(x, x).size() == 1`,
      check: (h) => hashKeys.filter((k) => h[k] !== undefined).length === 1,
      message: 'set exactly one of header, cookie, query, variable',
    },
  ],
);

export const stickyCookieSchema = z
  .strictObject({
    name: z.string().min(1).max(128).regex(TOKEN, 'must be a cookie name (RFC 6265 token)').describe('Name of the affinity cookie Portico sets.'),
    maxAge: duration().optional().describe('Lifetime of the cookie (e.g. "30m"). Absent: a session cookie.'),
    mode: z
      .enum(['Balanced', 'Persistent'])
      .optional()
      .describe('Balanced: when endpoints are added, some sessions move to keep the load even. Persistent: a session stays on its endpoint while it exists. Absent: Balanced.'),
  })
  .describe('The session-affinity cookie of the Cookie algorithm.');

export const loadBalancerSchema = crossField(
  z
    .strictObject({
      algorithm: z
        .enum(LB_ALGORITHMS)
        .describe('RoundRobin (weighted by nothing, in turn), EWMA (least exponentially weighted latency), ConsistentHash (same hashOn value, same endpoint; needs hashOn), Cookie (session affinity through a cookie; see cookie).'),
      hashOn: hashOnSchema.optional(),
      cookie: stickyCookieSchema.optional(),
    })
    .describe('How requests are spread over the Service\'s endpoints.'),
  [
    {
      cel: "(self.algorithm == 'ConsistentHash') == has(self.hashOn)",
      check: (lb) => (lb.algorithm === 'ConsistentHash') === (lb.hashOn !== undefined),
      message: 'hashOn is required with algorithm ConsistentHash and only allowed with it',
      path: ['hashOn'],
    },
    {
      cel: "!has(self.cookie) || self.algorithm == 'Cookie'",
      check: (lb) => lb.cookie === undefined || lb.algorithm === 'Cookie',
      message: 'cookie is only allowed with algorithm Cookie',
      path: ['cookie'],
    },
  ],
);

export const upstreamTlsSchema = z
  .strictObject({
    caSecret: objectName().optional().describe('Secret in the same namespace whose ca.crt holds the CA bundle used to verify the backend\'s certificate.'),
    serverName: dnsName().optional().describe('SNI name sent to the backend and checked against its certificate. Absent: the Service\'s cluster DNS name.'),
    verify: z.boolean().optional().describe('Verify the backend\'s certificate against caSecret (true needs caSecret). Absent: false.'),
  })
  .describe('TLS towards the backend (protocol HTTPS or GRPCS).');

export const passiveHealthCheckSchema = z
  .strictObject({
    failures: z.int().min(1).max(100).default(3).describe('Consecutive failed attempts after which an endpoint is ejected.'),
    httpStatuses: setList(z.int().min(500).max(599), 100)
      .default([502, 503, 504])
      .describe('Response statuses counted as failures (500-599); connection errors and timeouts always count.'),
    ejectDuration: duration().default('30s').describe('How long an ejected endpoint gets no traffic before it is tried again.'),
  })
  .describe('Ejects endpoints that fail real requests (no probe traffic).');

export const upstreamSpecSchema = crossField(
  z
    .strictObject({
      service: z
        .strictObject({ name: serviceName().describe('Name of a Service in the same namespace.') })
        .describe('The Service whose endpoints this Upstream configures; applies wherever a Route or Ingress in this namespace sends traffic to it.'),
      ports: setList(port(), 16)
        .min(1)
        .optional()
        .describe('Service ports (spec.ports[].port) this Upstream applies to. Absent: every port of the Service.'),
      loadBalancer: loadBalancerSchema.optional(),
      retries: retriesSchema.optional(),
      timeouts: timeoutsSchema.optional(),
      protocol: z
        .enum(UPSTREAM_PROTOCOLS)
        .default('HTTP')
        .describe('Protocol spoken to the backend: HTTP, HTTPS (TLS), GRPC (HTTP/2 cleartext), GRPCS (gRPC over TLS).'),
      tls: upstreamTlsSchema.optional(),
      healthCheck: z
        .strictObject({ passive: passiveHealthCheckSchema.optional() })
        .optional()
        .describe('Health checking of the Service\'s endpoints.'),
    })
    .describe('How Portico connects to the endpoints of one Service.'),
  [
    {
      cel: "!has(self.tls) || self.protocol in ['HTTPS', 'GRPCS']",
      check: (s) => s.tls === undefined || s.protocol === 'HTTPS' || s.protocol === 'GRPCS',
      message: 'tls is only allowed with protocol HTTPS or GRPCS',
      path: ['tls'],
    },
    {
      cel: '!has(self.tls) || !has(self.tls.verify) || !self.tls.verify || has(self.tls.caSecret)',
      check: (s) => !s.tls?.verify || s.tls.caSecret !== undefined,
      message: 'tls.verify needs tls.caSecret (the CA bundle to verify against)',
      path: ['tls', 'verify'],
    },
  ],
);
export type UpstreamSpec = z.output<typeof upstreamSpecSchema>;
export type UpstreamSpecInput = z.input<typeof upstreamSpecSchema>;
export type LoadBalancer = z.output<typeof loadBalancerSchema>;
export type HashOn = z.output<typeof hashOnSchema>;

/** The Upstream CRD (crds/upstreams.yaml). */
export const upstreamCrd: CrdDefinition = {
  kind: 'Upstream',
  plural: 'upstreams',
  singular: 'upstream',
  shortNames: ['pupstream'],
  description: 'Upstream tunes how Portico talks to one Service: load-balancing algorithm, retries, timeouts, protocol, TLS to the backend and passive health checks.',
  spec: upstreamSpecSchema,
  status: statusSchema,
  printerColumns: [
    { name: 'Service', type: 'string', jsonPath: '.spec.service.name', description: 'The Service configured' },
    { name: 'Algorithm', type: 'string', jsonPath: '.spec.loadBalancer.algorithm', description: 'Load-balancing algorithm (empty: RoundRobin)' },
    conditionColumn('Accepted'),
    AGE,
  ],
};
