// rate-limit (nginx-assets/lua/portico/plugins/rate_limit.lua): requests per second or minute, per client address,
// consumer or header (policy "local": counters in each nginx's shared memory); or, with policy "redis"
// (ingress-nginx's global-rate-limit annotations), `limit` requests per `window` counted in Redis, shared by every
// Portico replica, with ingress-nginx's sliding-window algorithm.
import { z } from 'zod';
import { headerName } from '../../../crds/schema/common.ts';
import { cidr, definePlugin, rule } from './plugin.ts';

export type Instance = LocalInstance | RedisInstance;

/** A key template's part: text, or an nginx variable of KEY_VARIABLES (`{ v: name }`), read per request. */
export type KeyPart = string | { v: string };

/** The Redis the counters of policy "redis" live in: the ConfigMap's global-rate-limit-redis-* keys. */
export interface RedisConnection {
  /** An IP address (nginx resolves no names). */
  host: string;
  port: number;
  /** Connect, send and read timeout. */
  timeoutMs: number;
  /** Connections each nginx worker keeps open to Redis. */
  poolSize: number;
  /** How long an idle pooled connection is kept. */
  idleMs: number;
}

export type RedisInstance = {
  type: 'rate-limit';
  policy: 'redis';
  /** Requests allowed per window (ingress-nginx's global-rate-limit). */
  limit: number;
  /** The window (global-rate-limit-window), whole seconds. */
  windowSeconds: number;
  /** What a counter is kept per; `key`: keyTemplate (global-rate-limit-key). */
  by: 'ip' | 'consumer' | 'header' | 'key';
  header?: string;
  keyTemplate?: KeyPart[];
  /** Answer when limited: the ConfigMap's global-rate-limit-status-code (429), with Retry-After. */
  status: number;
  /** Counter namespace (in Redis: "portico:rl:<key>:..."): the plugin id, so two plugins never share counters. */
  key: string;
  /** Client CIDRs never limited (global-rate-limit-ignored-cidrs). */
  exempt?: string[];
  /** Redis unreachable: let requests through (true, the default) or answer 503 (global-rate-limit-redis-fail-open). */
  failOpen: boolean;
  /** Absent: no Redis is configured (every request counts as a Redis failure). */
  redis?: RedisConnection;
};

export type LocalInstance = {
  type: 'rate-limit';
  policy?: undefined;
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

// ---- key templates (ingress-nginx's global-rate-limit-key) ----

/**
 * nginx variables a key template may read: request data only — nothing that reads the body, changes by itself per
 * request ($request_id) or is not known yet in the access phase ($upstream_*) — plus any request header ($http_*),
 * cookie ($cookie_*) or query argument ($arg_*). The Lua check (rate_limit.lua key_variable) has the same list.
 */
export const KEY_VARIABLES = [
  'remote_addr', 'binary_remote_addr', 'realip_remote_addr', 'remote_user', 'host', 'server_name', 'server_port', 'scheme',
  'request_method', 'uri', 'request_uri', 'args', 'ssl_client_s_dn', 'ssl_client_fingerprint',
] as const;
const VARIABLE_PREFIXES = /^(http_[a-z0-9_]+|cookie_[A-Za-z0-9_]+|arg_[A-Za-z0-9_]+)$/;
/**
 * Text and $name / ${name}; text of letters, digits and . _ : / @ , ; = + - (at most 256 characters). Read token by
 * token (sticky: each token starts where the last ended), never with one backtracking pattern over the whole value.
 */
const TOKEN = /\$\{([A-Za-z0-9_]+)\}|\$([A-Za-z0-9_]+)|([A-Za-z0-9._:/@,;=+-]+)/y;

export const isKeyVariable = (name: string): boolean => name.length <= 64 && ((KEY_VARIABLES as readonly string[]).includes(name) || VARIABLE_PREFIXES.test(name));

/** A key template's parts (text runs of at most 64 characters), or why it cannot be used. */
export function keyTemplateParts(t: string): { parts: KeyPart[] } | { error: string } {
  const syntax = { error: 'expected text (letters, digits and . _ : / @ , ; = + -) and nginx variables such as $remote_addr or ${http_x_api_client}, at most 256 characters' };
  if (t.length === 0 || t.length > 256) return syntax;
  const parts: KeyPart[] = [];
  const re = new RegExp(TOKEN);
  for (let at = 0; at < t.length; at = re.lastIndex) {
    re.lastIndex = at;
    const m = re.exec(t);
    if (!m) return syntax;
    const name = m[1] ?? m[2];
    if (name !== undefined) {
      // nginx reads $http_X_Api as $http_x_api: header variables are compared in lower case.
      const v = name.startsWith('http_') ? name.toLowerCase() : name;
      if (!isKeyVariable(v)) return { error: `$${name} is not a variable a key may use: ${KEY_VARIABLES.map((n) => `$${n}`).join(', ')}, $http_<header>, $cookie_<name>, $arg_<name>` };
      parts.push({ v });
    } else for (let i = 0; i < m[3]!.length; i += 64) parts.push(m[3]!.slice(i, i + 64));
  }
  if (parts.length > 16) return { error: 'at most 16 variables and text runs' };
  return { parts };
}

/** A key template as a Plugin's `key` (and the annotation's value): checked as keyTemplateParts checks it. */
export const keyTemplate = () =>
  z.string().superRefine((t, ctx) => {
    const r = keyTemplateParts(t);
    if ('error' in r) ctx.addIssue({ code: 'custom', message: r.error });
  });

// ---- windows (ingress-nginx's global-rate-limit-window: a Go duration, whole seconds) ----

const GO_DURATION = /^(?:[0-9]+(?:\.[0-9]+)?(?:ns|us|µs|ms|s|m|h))+$/;
const UNIT_SECONDS: Record<string, number> = { ns: 1e-9, us: 1e-6, µs: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };
/** The longest window: a week (a counter lives two windows in Redis). */
export const MAX_WINDOW_SECONDS = 604_800;

/** A Go duration ("1m", "90s", "1h30m") in whole seconds, cut as ingress-nginx does (int(d.Seconds())), or why not. */
export function windowSeconds(d: string): { seconds: number } | { error: string } {
  const t = d.trim();
  if (t.length > 32 || !GO_DURATION.test(t)) return { error: 'expected a duration such as "1m", "30s" or "1h30m"' };
  let s = 0;
  for (const m of t.matchAll(/([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)/g)) s += Number(m[1]) * UNIT_SECONDS[m[2]!]!;
  const seconds = Math.floor(s + 1e-9);
  if (seconds < 1) return { error: 'the window must be at least 1s (ingress-nginx counts it in whole seconds; a shorter one limits nothing)' };
  if (seconds > MAX_WINDOW_SECONDS) return { error: `the window may be at most ${MAX_WINDOW_SECONDS / 86_400} days (168h)` };
  return { seconds };
}
export const windowDuration = () =>
  z.string().superRefine((d, ctx) => {
    const r = windowSeconds(d);
    if ('error' in r) ctx.addIssue({ code: 'custom', message: r.error });
  });

const local = (c: { policy: string }) => c.policy === 'local';

export const rateLimitConfigSchema = rule(
  rule(
    rule(
      rule(
        z.strictObject({
          type: z.literal('rate-limit'),
          /** local: this nginx's shared memory; redis: Redis, shared by every replica (the ConfigMap's global-rate-limit-redis-*). */
          policy: z.enum(['local', 'redis']).default('local'),
          requestsPerSecond: z.int().min(1).max(1_000_000).optional(),
          requestsPerMinute: z.int().min(1).max(100_000_000).optional(),
          burst: z.int().min(0).max(1_000_000).default(0),
          /** policy redis: requests per window. */
          limit: z.int().min(1).max(1_000_000_000).optional(),
          window: windowDuration().optional(),
          by: z.enum(['ip', 'consumer', 'header', 'key']).default('ip'),
          header: headerName().optional(),
          /** by: key — text and nginx variables, e.g. "${remote_addr}-${http_x_api_client}" (policy redis). */
          key: keyTemplate().optional(),
          status: z.int().min(400).max(599).default(429),
          exempt: z.array(cidr()).max(1024).optional(),
        }),
        (c) => !local(c) || (c.requestsPerSecond === undefined) !== (c.requestsPerMinute === undefined),
        'set exactly one of requestsPerSecond and requestsPerMinute',
        ['requestsPerSecond'],
      ),
      (c) => local(c) ? c.limit === undefined && c.window === undefined && c.by !== 'key' : c.limit !== undefined && c.window !== undefined && c.requestsPerSecond === undefined && c.requestsPerMinute === undefined && c.burst === 0,
      'policy redis takes limit and window (and no requestsPerSecond, requestsPerMinute or burst); limit, window and by: key only go with policy redis',
      ['policy'],
    ),
    (c) => (c.by === 'key') === (c.key !== undefined),
    'key is required with by: key and only allowed with it',
    ['key'],
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
    toInstance: (c, { key }): Instance =>
      c.policy === 'redis'
        ? {
            type: 'rate-limit',
            policy: 'redis',
            limit: c.limit as number,
            windowSeconds: (windowSeconds(c.window as string) as { seconds: number }).seconds,
            by: c.by,
            status: c.status,
            key,
            // The ConfigMap's (the translation sets both: redisSettingsOf).
            failOpen: true,
            ...(c.header ? { header: c.header.toLowerCase() } : {}),
            ...(c.key !== undefined ? { keyTemplate: (keyTemplateParts(c.key) as { parts: KeyPart[] }).parts } : {}),
            ...(c.exempt?.length ? { exempt: [...c.exempt] } : {}),
          }
        : {
      type: 'rate-limit',
      rate: (c.requestsPerSecond ?? c.requestsPerMinute) as number,
      periodSeconds: c.requestsPerSecond !== undefined ? 1 : 60,
      burst: c.burst,
      by: c.by as 'ip' | 'consumer' | 'header',
      status: c.status,
      key,
      ...(c.header ? { header: c.header.toLowerCase() } : {}),
      ...(c.exempt?.length ? { exempt: [...c.exempt] } : {}),
    },
  },
});
