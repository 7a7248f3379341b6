// rate-limit (nginx-assets/lua/portico/plugins/rate_limit.lua): requests per second or minute, per client address,
// consumer or header.
import { z } from 'zod';
import { headerName } from '../../../crds/schema/common.ts';
import { cidr, definePlugin, rule } from './plugin.ts';

export type Instance = {
  type: 'rate-limit';
  /** Requests allowed per `periodSeconds` (1 or 60), sustained. */
  rate: number;
  periodSeconds: number;
  /** Extra requests allowed in a burst above the sustained rate. */
  burst: number;
  /** What a counter is kept per. `consumer` falls back to the client IP when no consumer was identified. */
  by: 'ip' | 'consumer' | 'header';
  /** With by=header: the header (lower-case); a request without it is counted by client IP. */
  header?: string;
  /** Answer when limited (default 429, with Retry-After). */
  status: number;
  /** Counter namespace in shared memory (the plugin id), so two plugins never share counters. */
  key: string;
  /** Client CIDRs never limited (ingress-nginx's limit-whitelist). */
  exempt?: string[];
};

export const rateLimitConfigSchema = rule(
  rule(
    z.strictObject({
      type: z.literal('rate-limit'),
      requestsPerSecond: z.int().min(1).max(1_000_000).optional(),
      requestsPerMinute: z.int().min(1).max(100_000_000).optional(),
      burst: z.int().min(0).max(1_000_000).default(0),
      by: z.enum(['ip', 'consumer', 'header']).default('ip'),
      header: headerName().optional(),
      status: z.int().min(400).max(599).default(429),
      exempt: z.array(cidr()).max(1024).optional(),
    }),
    (c) => (c.requestsPerSecond === undefined) !== (c.requestsPerMinute === undefined),
    'set exactly one of requestsPerSecond and requestsPerMinute',
    ['requestsPerSecond'],
  ),
  (c) => (c.by === 'header') === (c.header !== undefined),
  'header is required with by: header and only allowed with it',
  ['header'],
);

export const plugin = definePlugin<Instance>()({
  name: 'rate-limit',
  crd: {
    rank: 0,
    schema: rateLimitConfigSchema,
    toInstance: (c, { key }) => ({
      type: 'rate-limit',
      rate: (c.requestsPerSecond ?? c.requestsPerMinute) as number,
      periodSeconds: c.requestsPerSecond !== undefined ? 1 : 60,
      burst: c.burst,
      by: c.by,
      status: c.status,
      key,
      ...(c.header ? { header: c.header.toLowerCase() } : {}),
      ...(c.exempt?.length ? { exempt: [...c.exempt] } : {}),
    }),
  },
});
