// rewrite (nginx-assets/lua/portico/plugins/rewrite.lua): changes the path (and the Host) sent to the backend.
import { z } from 'zod';
import { dnsName, PRINTABLE, urlPath } from '../../../crds/schema/common.ts';
import { regexPathProblem } from '../../values/regex-path.ts';
import { definePlugin, prefixChange, rule } from './plugin.ts';

export type Instance = {
  type: 'rewrite';
  path?: string;
  prefix?: { from: string; to: string };
  /**
   * PCRE on the path with $1..$9 in the replacement (no nginx variables). `nginx`: nginx's `rewrite` semantics
   * (ingress-nginx's rewrite-target): case-insensitive, the first match anywhere in the path, and the WHOLE path
   * replaced by the expanded replacement, whose "?query" (if any) comes before the client's query.
   */
  regex?: { pattern: string; replacement: string; nginx?: true };
  /** Host header sent to the backend. */
  host?: string;
  /** The Host sent to the backend is the client's Host header as sent, port included (ingress-nginx's $http_host). */
  hostHeader?: true;
};

export const rewriteConfigSchema = rule(
  rule(
    rule(
    z.strictObject({
      type: z.literal('rewrite'),
      path: urlPath().optional(),
      prefix: prefixChange().optional(),
      regex: z
        .strictObject({
          pattern: z.string().min(1).max(1024).regex(PRINTABLE, 'must be printable ASCII'),
          replacement: z.string().max(1024).regex(PRINTABLE, 'must be printable ASCII'),
        })
        .optional(),
      host: dnsName().optional(),
      hostHeader: z.literal(true).optional(),
    }),
    (c) => [c.path, c.prefix, c.regex].filter((v) => v !== undefined).length <= 1,
    'set at most one of path, prefix, regex',
    ['path'],
    ),
    (c) => !(c.host !== undefined && c.hostHeader),
    'set host or hostHeader, not both',
    ['hostHeader'],
  ),
  (c) => [c.path, c.prefix, c.regex, c.host, c.hostHeader].some((v) => v !== undefined),
  'set at least one of path, prefix, regex, host, hostHeader',
);

export const plugin = definePlugin<Instance>()({
  name: 'rewrite',
  crd: {
    rank: 9,
    schema: rewriteConfigSchema,
    toInstance: (c) => ({
      type: 'rewrite',
      ...(c.path ? { path: c.path } : {}),
      ...(c.prefix ? { prefix: { ...c.prefix } } : {}),
      ...(c.regex ? { regex: { ...c.regex } } : {}),
      ...(c.host ? { host: c.host } : {}),
      ...(c.hostHeader ? { hostHeader: true as const } : {}),
    }),
    problem: (c) => {
      const p = c.regex && regexPathProblem(c.regex.pattern);
      return p ? `regex.pattern: regular expression ${p}` : undefined;
    },
  },
});
