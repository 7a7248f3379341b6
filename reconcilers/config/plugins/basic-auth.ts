// basic-auth (nginx-assets/lua/portico/plugins/basic_auth.lua): identifies the client by a user name and password
// (of a Consumer, or of the plugin's own users: ingress-nginx's auth-secret).
import { z } from 'zod';
import { definePlugin } from './plugin.ts';

export type Instance = {
  type: 'basic-auth';
  namespace: string;
  realm: string;
  hideCredentials: boolean;
  /** Users of the plugin itself (an ingress-nginx auth-secret); absent = the Consumers of `namespace`. */
  users?: { username: string; hash: string }[];
};

export const basicAuthConfigSchema = z.strictObject({
  type: z.literal('basic-auth'),
  realm: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[ !#-[\]-~]+$/, 'must be printable ASCII without quotes or backslashes')
    .default('portico'),
  hideCredentials: z.boolean().default(true),
});

export const plugin = definePlugin<Instance>()({
  name: 'basic-auth',
  crd: {
    rank: 2,
    schema: basicAuthConfigSchema,
    toInstance: (c, { namespace }) => ({ type: 'basic-auth', namespace, realm: c.realm, hideCredentials: c.hideCredentials }),
  },
});
