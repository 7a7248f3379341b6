// The ConfigMap keys of global rate limits (ingress-nginx's global-rate-limit annotations, and Plugins with
// `policy: redis`), as rows of the controller ConfigMap table (global-config.ts spreads them into CONFIG_KEYS), and
// what the translation makes of them (rateLimitStoreOf). ingress-nginx kept these counters in memcached
// (global-rate-limit-memcached-*); Portico keeps them in Redis, so its own global-rate-limit-redis-* keys name the
// server and the memcached keys are refused by name (REFUSED_CONFIG_KEYS) with a Warning pointing here.
import { isIP } from 'node:net';
import { z } from 'zod';
import type { RedisConnection } from '../config/plugins/rate-limit.ts';
import { boolSchema, intSchema } from '../values/safe.ts';

export interface GlobalRateLimitValues {
  globalRateLimitStatusCode: number;
  globalRateLimitRedisHost: string;
  globalRateLimitRedisPort: number;
  globalRateLimitRedisTimeoutMs: number;
  globalRateLimitRedisPoolSize: number;
  globalRateLimitRedisMaxIdleTimeoutMs: number;
  globalRateLimitRedisFailOpen: boolean;
}

/** global-rate-limit-redis-host: "" (none) or an IP address (nginx resolves no names); never unspecified. */
export const redisHostSchema = z
  .string()
  .trim()
  .superRefine((v, ctx) => {
    if (v === '') return;
    if (isIP(v) === 0) ctx.addIssue({ code: 'custom', message: 'expected an IP address (e.g. the Redis Service\'s cluster IP): nginx resolves no names' });
    else if (v === '0.0.0.0' || v === '::') ctx.addIssue({ code: 'custom', message: 'the unspecified address is not a Redis server' });
  });

type Row<F extends keyof GlobalRateLimitValues> = { field: F; schema: z.ZodType<GlobalRateLimitValues[F], string>; default: GlobalRateLimitValues[F]; description: string };
const row = <F extends keyof GlobalRateLimitValues>(field: F, schema: z.ZodType<GlobalRateLimitValues[F], string>, dflt: GlobalRateLimitValues[F], description: string): Row<F> => ({ field, schema, default: dflt, description });

export const GLOBAL_RATE_LIMIT_KEYS = {
  'global-rate-limit-status-code': row('globalRateLimitStatusCode', intSchema(400, 599), 429, 'Status for requests over a global-rate-limit annotation\'s limit (as ingress-nginx), with Retry-After'),
  'global-rate-limit-redis-host': row('globalRateLimitRedisHost', redisHostSchema, '', 'Portico\'s own (ingress-nginx used memcached): the Redis server that holds the counters of the global-rate-limit annotations and of Plugins with policy: redis, shared by every replica — an IP address (e.g. the Redis Service\'s cluster IP; nginx resolves no names). Empty: none, and every such limit counts as Redis unreachable (see global-rate-limit-redis-fail-open; an Ingress asking for one gets a Warning). Plain RESP without AUTH or TLS: keep Redis on a network only Portico reaches'),
  'global-rate-limit-redis-port': row('globalRateLimitRedisPort', intSchema(1, 65535), 6379, 'The Redis server\'s port'),
  'global-rate-limit-redis-timeout': row('globalRateLimitRedisTimeoutMs', intSchema(1, 60_000), 50, 'Milliseconds to connect to Redis, send to it and wait for its answer (each); past it the request counts as Redis unreachable (ingress-nginx\'s memcached connect timeout: 50)'),
  'global-rate-limit-redis-pool-size': row('globalRateLimitRedisPoolSize', intSchema(1, 10_000), 50, 'Idle connections to Redis each nginx worker keeps (Redis sees up to pool size × workers × replicas)'),
  'global-rate-limit-redis-max-idle-timeout': row('globalRateLimitRedisMaxIdleTimeoutMs', intSchema(1, 3_600_000), 10_000, 'Milliseconds an idle pooled connection to Redis is kept'),
  'global-rate-limit-redis-fail-open': row('globalRateLimitRedisFailOpen', boolSchema, true, 'Redis unreachable, too slow or answering an error: "true" lets the request through (as ingress-nginx), "false" answers 503. Either way the request is counted in portico_global_rate_limit_store_failures{outcome="open"|"closed"} and logged (at most every 10 s per limit)'),
} as const;

/** What every global rate limit instance gets from the ConfigMap: its status, fail-open, and the Redis (if any). */
export interface RateLimitStore {
  status: number;
  failOpen: boolean;
  redis?: RedisConnection;
}

export function rateLimitStoreOf(g: Partial<GlobalRateLimitValues>): RateLimitStore {
  const host = g.globalRateLimitRedisHost ?? '';
  return {
    status: g.globalRateLimitStatusCode ?? 429,
    failOpen: g.globalRateLimitRedisFailOpen ?? true,
    ...(host
      ? {
          redis: {
            host,
            port: g.globalRateLimitRedisPort ?? 6379,
            timeoutMs: g.globalRateLimitRedisTimeoutMs ?? 50,
            poolSize: g.globalRateLimitRedisPoolSize ?? 50,
            idleMs: g.globalRateLimitRedisMaxIdleTimeoutMs ?? 10_000,
          },
        }
      : {}),
  };
}

/** Why the ConfigMap refuses ingress-nginx's memcached keys (REFUSED_CONFIG_KEYS). */
export const MEMCACHED_KEYS_WHY =
  'Portico keeps global rate limit counters in Redis, not memcached: set global-rate-limit-redis-host (an IP address), global-rate-limit-redis-port, -timeout, -pool-size and -max-idle-timeout instead';
