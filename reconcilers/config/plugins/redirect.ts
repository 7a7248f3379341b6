// redirect (nginx-assets/lua/portico/plugins/redirect.lua): answers with a redirect instead of proxying.
import { z } from 'zod';
import { dnsName, port, urlPath } from '../../../crds/schema/common.ts';
import { definePlugin, prefixChange, rule } from './plugin.ts';

export type Instance = {
  type: 'redirect';
  /** 301, 302, 303, 307 or 308. */
  status: number;
  scheme?: 'http' | 'https';
  host?: string;
  port?: number;
  /** Replace the whole path... */
  path?: string;
  /** ...or only a leading prefix (matched element-wise). */
  prefix?: { from: string; to: string };
  /** Keep the query string (default true). */
  keepQuery: boolean;
  /** A query of its own (as written in a URL, percent-encoded), before the client's when keepQuery. */
  query?: string;
  /**
   * The path and query are the client's request URI as sent ($request_uri, not normalized) instead of `path`,
   * `prefix` and `keepQuery` (ingress-nginx's from-to-www-redirect).
   */
  requestUri?: true;
  /** With requestUri: a final "/" of the request URI is dropped (ingress-nginx's from-to-www-redirect). */
  stripTrailingSlash?: true;
  /**
   * Without `host`: the Location is absolute, <scheme>://<the client's Host header><path> (ingress-nginx's
   * app-root: `$scheme://$http_host<app-root>`).
   */
  hostFromRequest?: true;
};

export const redirectConfigSchema = rule(
  rule(
    z.strictObject({
      type: z.literal('redirect'),
      statusCode: z.union([z.literal(301), z.literal(302), z.literal(303), z.literal(307), z.literal(308)], { error: 'must be one of 301, 302, 303, 307, 308' }).default(302),
      scheme: z.enum(['http', 'https']).optional(),
      hostname: dnsName().optional(),
      port: port().optional(),
      path: urlPath().optional(),
      prefix: prefixChange().optional(),
      keepQuery: z.boolean().default(true),
      query: z
        .string()
        .max(2048, 'at most 2048 characters')
        .regex(/^[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]+$/, 'a query as written in a URL: letters, digits, percent-escapes and - . _ ~ ! $ & \' ( ) * + , ; = : @ / ?')
        .optional(),
    }),
    (c) => !(c.path !== undefined && c.prefix !== undefined),
    'set path or prefix, not both',
    ['prefix'],
  ),
  (c) => [c.scheme, c.hostname, c.port, c.path, c.prefix].some((v) => v !== undefined),
  'set at least one of scheme, hostname, port, path, prefix',
);

export const plugin = definePlugin<Instance>()({
  name: 'redirect',
  crd: {
    rank: 8,
    schema: redirectConfigSchema,
    toInstance: (c) => ({
      type: 'redirect',
      status: c.statusCode,
      keepQuery: c.keepQuery,
      ...(c.scheme ? { scheme: c.scheme } : {}),
      ...(c.hostname ? { host: c.hostname } : {}),
      ...(c.port ? { port: c.port } : {}),
      ...(c.path ? { path: c.path } : {}),
      ...(c.prefix ? { prefix: { ...c.prefix } } : {}),
      ...(c.query ? { query: c.query } : {}),
    }),
  },
});
