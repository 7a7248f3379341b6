// ip-restriction (nginx-assets/lua/portico/plugins/ip_restriction.lua): who may enter, by client address.
import { z } from 'zod';
import { cidr, definePlugin, rule } from './plugin.ts';

export type Instance = {
  type: 'ip-restriction';
  /** CIDRs (IPv4/IPv6, a bare address = /32 or /128). A client in `deny` is refused; with `allow`, only those pass. */
  allow?: string[];
  deny?: string[];
  /** Answer for refused clients (default 403). */
  status: number;
};

export const ipRestrictionConfigSchema = rule(
  z.strictObject({
    type: z.literal('ip-restriction'),
    allow: z.array(cidr()).max(1024).optional(),
    deny: z.array(cidr()).max(1024).optional(),
    status: z.int().min(400).max(599).default(403),
  }),
  (c) => (c.allow?.length ?? 0) + (c.deny?.length ?? 0) > 0,
  'set allow or deny (a non-empty list of addresses)',
  ['allow'],
);

export const plugin = definePlugin<Instance>()({
  name: 'ip-restriction',
  crd: {
    rank: 3,
    schema: ipRestrictionConfigSchema,
    toInstance: (c) => ({ type: 'ip-restriction', status: c.status, ...(c.allow ? { allow: [...c.allow] } : {}), ...(c.deny ? { deny: [...c.deny] } : {}) }),
  },
});
