// Rewrites: regex paths (use-regex), rewrite-target (applied per path by the translation: translate/plugin-instances.ts
// rewriteInstance, on the path's regex), app-root, and what is changed on the request sent upstream:
// x-forwarded-prefix → X-Forwarded-Prefix (request-headers plugin), upstream-vhost → the Host (rewrite plugin).
import { z } from 'zod';
import type { PluginInstance } from '../../config/types.ts';
import { addConfigPlugin, emptyApplied, row, type Applied, type ConfigPlugin, type Values } from '../group.ts';
import { appRootSchema, boolSchema, rewriteTargetSchema } from '../../values/safe.ts';

export const rows = {
  'use-regex': row(boolSchema, 'ingress', 'low', 'ImplementationSpecific paths of this Ingress are PCRE regexes, matched case-insensitively and anchored at the start only (ingress-nginx\'s `~* "^<path>"`: prefix-like, "/blog(/|$)(.*)" matches "/blog/2024"). Quirk kept from ingress-nginx, without a Warning: on ONE Ingress it makes every path of that host, of every Ingress (rewrite-target does the same), a case-insensitive start-anchored regex — Exact and Prefix paths included, so an Exact "/foo" then also answers "/FOO/bar" and a Prefix "/foo" answers "/foobar" — tried longest path first (ties: reverse alphabetical), the first match wins'),
  'rewrite-target': row(rewriteTargetSchema, 'ingress', 'medium', 'Path sent to the backend instead of the client\'s, e.g. "/$2" with path "/something(/|$)(.*)": as ingress-nginx\'s `rewrite "(?i)<path>" <target> break`, the path regex (case-insensitive, first match anywhere) is applied to the normalized URI and the whole URI becomes the target with $1..$9 replaced by its captures; a "?query" in the target comes before the client\'s query. Implies use-regex for the Ingress\'s ImplementationSpecific paths and, as in ingress-nginx, makes every path of the host a regex (see use-regex); runs after the access plugins, before configuration-snippet', { difference: 'captures $1..$9 only: a target with nginx variables ($host...) or an absolute URL (nginx would redirect) is ignored with a Warning' }),
  'app-root': row(appRootSchema, 'location', 'medium', 'Requests for "/" on the Ingress\'s hosts (any query) are answered 302 with Location <scheme>://<Host header><app-root>, before HTTPS redirects and access control (ingress-nginx\'s server-level `if ($uri = /)`); with several Ingresses setting it on one host, that of the path first in ingress-nginx\'s order (longest first) applies', { difference: 'a path only: a value with a query string is ignored with a Warning' }),
  'x-forwarded-prefix': row(z.string().max(1024, 'longer than 1024 characters'), 'ingress', 'medium', 'Send X-Forwarded-Prefix with this value to the backend (request-headers plugin; printable ASCII, sent literally)'),
  'upstream-vhost': row(z.string().max(253, 'longer than 253 characters'), 'ingress', 'low', 'Host header sent to the backend instead of the client\'s: a DNS name (rewrite plugin), or $host (the request\'s host: what is sent anyway), $http_host / $best_http_host (the client\'s Host header as sent, port included)', { difference: 'a DNS name or one of the variables $host, $http_host, $best_http_host alone; ingress-nginx accepts any text with nginx variables' }),
};

/** x-forwarded-prefix → X-Forwarded-Prefix on the proxied request; upstream-vhost → the Host sent upstream. */
export function rewritePlugins(v: Values<typeof rows>): Applied<ConfigPlugin> {
  const out = emptyApplied<ConfigPlugin>();
  const prefix = v['x-forwarded-prefix'];
  if (prefix !== undefined) addConfigPlugin(out, 'fwdprefix', 'request-headers', { set: [{ name: 'X-Forwarded-Prefix', value: prefix }] }, ['x-forwarded-prefix'], null);
  const vhost = v['upstream-vhost'];
  // "$host" is the Host Portico sends anyway; the client's Host header as sent (with its port) needs the plugin.
  if (vhost === '$http_host' || vhost === '$best_http_host') addConfigPlugin(out, 'vhost', 'rewrite', { hostHeader: true }, ['upstream-vhost'], null);
  else if (vhost !== undefined && vhost !== '$host') addConfigPlugin(out, 'vhost', 'rewrite', { host: vhost }, ['upstream-vhost'], null);
  return out;
}

/**
 * rewrite-target for one path, as a rewrite instance: nginx's rewrite semantics (the `nginx` flag of the rewrite
 * plugin) of `pattern`, the path's regex (the translation gives it: the regex path itself, or a literal path as
 * written read as a regex, as ingress-nginx does).
 */
export function rewriteTargetInstance(target: string, pattern: string, name: string): PluginInstance {
  return { name, type: 'rewrite', regex: { pattern, replacement: target, nginx: true } };
}
