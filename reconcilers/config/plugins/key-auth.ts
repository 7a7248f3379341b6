// key-auth (nginx-assets/lua/portico/plugins/key_auth.lua): identifies the client by an API key of a Consumer.
import { z } from 'zod';
import { headerName, queryParamName } from '../../../crds/schema/common.ts';
import { definePlugin } from './plugin.ts';

export type Instance = {
  type: 'key-auth';
  /** Consumers of this namespace are searched (DataPlane.consumers[namespace]). */
  namespace: string;
  /** Request header carrying the key (lower-case), default "apikey". */
  header: string;
  /** Also accept the key from this query parameter. */
  query?: string;
  /** Remove the key header/parameter before proxying (default true). */
  hideCredentials: boolean;
};

export const keyAuthConfigSchema = z.strictObject({
  type: z.literal('key-auth'),
  header: headerName().default('apikey'),
  query: queryParamName().optional(),
  hideCredentials: z.boolean().default(true),
});

export const plugin = definePlugin<Instance>()({
  name: 'key-auth',
  crd: {
    rank: 1,
    schema: keyAuthConfigSchema,
    toInstance: (c, { namespace }) => ({ type: 'key-auth', namespace, header: c.header.toLowerCase(), hideCredentials: c.hideCredentials, ...(c.query ? { query: c.query } : {}) }),
  },
});
