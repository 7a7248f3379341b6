// cors (nginx-assets/lua/portico/plugins/cors.lua): CORS headers, and the answer to preflight requests.
import { z } from 'zod';
import { HTTP_METHODS, httpMethod } from '../../../crds/schema/common.ts';
import { definePlugin, headerList, lowerAll, rule } from './plugin.ts';

export type Instance = {
  type: 'cors';
  /** Exact origins ("https://a.example"), "*" (any), or subdomain wildcards ("https://*.example.com": one or more labels, never the apex). */
  allowOrigins: string[];
  allowMethods: string[];
  allowHeaders: string[];
  exposeHeaders: string[];
  allowCredentials: boolean;
  maxAgeSeconds: number;
  /** Preflights from an origin not allowed are answered too (no CORS headers), never proxied (Gateway API's CORS). */
  answerPreflights?: true;
};

const ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/(\*\.)?[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*(:[0-9]{1,5})?$/;
function isOrigin(o: string): boolean {
  if (o === '*') return true;
  if (!ORIGIN.test(o)) return false;
  const port = /:([0-9]+)$/.exec(o)?.[1];
  return port === undefined || (Number(port) >= 1 && Number(port) <= 65535);
}
const origin = () => z.string().max(300).refine(isOrigin, 'must be "*", "scheme://host[:port]" or "scheme://*.domain" (lower-case)');

export const corsConfigSchema = rule(
  z.strictObject({
    type: z.literal('cors'),
    allowOrigins: z.array(origin()).min(1).max(256),
    allowMethods: z.array(httpMethod()).min(1).max(HTTP_METHODS.length).default(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']),
    allowHeaders: headerList(64).optional(),
    exposeHeaders: headerList(64).optional(),
    allowCredentials: z.boolean().default(false),
    maxAge: z.int().min(0).max(86400 * 30).default(86400),
  }),
  (c) => !(c.allowCredentials && c.allowOrigins.includes('*')),
  'allowCredentials cannot be used with the "*" origin (browsers refuse it); list the origins',
  ['allowCredentials'],
);

export const plugin = definePlugin<Instance>()({
  name: 'cors',
  crd: {
    rank: 4,
    schema: corsConfigSchema,
    toInstance: (c) => ({
      type: 'cors',
      allowOrigins: [...c.allowOrigins],
      allowMethods: [...c.allowMethods],
      allowHeaders: lowerAll(c.allowHeaders),
      exposeHeaders: lowerAll(c.exposeHeaders),
      allowCredentials: c.allowCredentials,
      maxAgeSeconds: c.maxAge,
    }),
  },
});
