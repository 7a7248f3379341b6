// ingress-nginx annotations that are plugins in disguise: each group's applier (groups/<group>.ts) turns its parsed
// values into plugin specs — plugin configurations validated by the very same zod schemas as Portico's own Plugin
// objects (crds/schema/plugin-config.ts, from reconcilers/config/plugins/) and run by the same Lua plugins, or, where the instance needs more than a
// configuration (a Secret's users, compiled snippets, a ConfigMap's status codes...), the group's own spec with its
// instance builder. This file runs the appliers in order and dispatches the builders.
//   allowlist-source-range / whitelist-source-range / denylist-source-range → ip-restriction (403);  ip-lists.ts
//   enable-cors + cors-*                                                     → cors;                 cors.ts
//   limit-rps / limit-rpm / limit-connections (+ limit-allowlist...)         → rate-limit, conn-limit; rate-limit.ts
//   x-forwarded-prefix, upstream-vhost                                       → request-headers, rewrite; rewrite.ts
//   permanent-redirect / temporal-redirect                                   → redirect;             redirect.ts
//   auth-url + auth-*                                                        → external-auth;        external-auth.ts
//   configuration-snippet / server-snippet                                   → snippet;              snippets.ts
//   and, read with their Secret or ConfigMap by model/normalize.ts: auth-type basic or digest (basic-auth.ts,
//   digest-auth.ts), auth-tls-*
//   (auth-tls.ts), custom-headers (custom-headers.ts), auth-proxy-set-headers (external-auth.ts).
// An allow- or denylist that cannot be applied (an invalid CIDR) makes the Ingress fail closed; an invalid CORS or
// rate-limit setting is reported and that plugin is left out (as ingress-nginx ignores an invalid annotation).
import type { PluginConfig } from '../../crds/schema/index.ts';
import type { PluginInstance } from '../config/types.ts';
import type { Applied, ConfigPlugin } from './group.ts';
import type { ParsedAnnotations } from './table.ts';
import { basicAuthInstance, type BasicAuthPlugin } from './groups/basic-auth.ts';
import { digestAuthInstance, type DigestAuthPlugin } from './groups/digest-auth.ts';
import { clientCertInstance, type ClientCertPlugin } from './groups/auth-tls.ts';
import { corsPlugins } from './groups/cors.ts';
import type { CustomHeadersPlugin } from './groups/custom-headers.ts';
import { externalAuthPlugin, type ExternalAuthPlugin } from './groups/external-auth.ts';
import { ipListPlugins } from './groups/ip-lists.ts';
import { loadBalancingProblems } from './groups/load-balancing.ts';
import { connLimitInstance, rateLimitConfig, rateLimitPlugins, type ConnLimitPlugin } from './groups/rate-limit.ts';
import { redirectPlugins } from './groups/redirect.ts';
import { rewritePlugins } from './groups/rewrite.ts';
import { snippetInstance, snippetPlugin, type SnippetPlugin } from './groups/snippets.ts';

export type { ConfigMapReader, SecretReader } from './group.ts';
export { basicAuthPlugin } from './groups/basic-auth.ts';
export { authTlsPlugin } from './groups/auth-tls.ts';
export { customHeadersPlugin } from './groups/custom-headers.ts';
export { authProxyHeaders, externalAuthPlugin, globalAuthSpec, noAuthLocation, type ExternalAuthSpec, type GlobalAuthKeys } from './groups/external-auth.ts';
export { SNIPPET_ANNOTATIONS, type CompiledSnippets } from './groups/snippets.ts';

/**
 * A plugin an Ingress's annotations ask for: `suffix` is that of its data-plane id ("ip", "cors", "rps", "auth"...),
 * and the rest either a plugin configuration (the Plugin schemas validated it) or a group's own spec.
 */
export type AnnotationPlugin = ConfigPlugin | BasicAuthPlugin | DigestAuthPlugin | SnippetPlugin | ConnLimitPlugin | CustomHeadersPlugin | ExternalAuthPlugin | ClientCertPlugin;

/** The plugins of the annotations read without a Secret or ConfigMap, in the order the data plane ids are made. */
export function annotationPlugins(v: ParsedAnnotations): Applied<AnnotationPlugin> {
  const out: Applied<AnnotationPlugin> = { plugins: [], problems: [], closed: [] };
  const parts: Applied<AnnotationPlugin>[] = [ipListPlugins(v), corsPlugins(v), rateLimitPlugins(v), loadBalancingProblems(v), rewritePlugins(v), redirectPlugins(v)];
  for (const p of parts) {
    out.plugins.push(...p.plugins);
    out.problems.push(...p.problems);
    out.closed.push(...p.closed);
  }
  const ea = externalAuthPlugin(v);
  if (ea.plugin) out.plugins.push(ea.plugin);
  out.problems.push(...ea.problems);
  out.closed.push(...ea.closed);
  const snippet = snippetPlugin(v);
  if (snippet) out.plugins.push(snippet);
  return out;
}

/** What the translation knows when it builds an instance: its name and id, and the ConfigMap's settings. */
export interface InstanceContext {
  /** "<namespace>/<name> (annotations)". */
  name: string;
  /** Its data-plane id (also the key of its counters). */
  id: string;
  namespace: string;
  /** ConfigMap limit-req-status-code. */
  limitStatus: number;
  /** ConfigMap limit-conn-status-code. */
  connStatus: number;
  /** ConfigMap global-rate-limit-status-code (429). */
  globalLimitStatus?: number;
}

/**
 * The instance of an annotation plugin (its group's builder), or the plugin configuration to build it from as a
 * Plugin object's. External authentication and custom headers need the translation's backends and ConfigMap: it
 * builds those with their groups' builders (externalAuthInstanceOf, customHeadersConfig).
 */
export function annotationInstance(ap: Exclude<AnnotationPlugin, ExternalAuthPlugin | CustomHeadersPlugin>, ctx: InstanceContext): { inst: PluginInstance } | { config: PluginConfig } {
  if ('snippets' in ap) return { inst: snippetInstance(ap.snippets, ctx.name) };
  if ('basicAuth' in ap) return { inst: basicAuthInstance(ap.basicAuth, ctx.name, ctx.namespace) };
  if ('digestAuth' in ap) return { inst: digestAuthInstance(ap.digestAuth, ctx.name) };
  if ('connLimit' in ap) return { inst: connLimitInstance(ap.connLimit, ctx.name, ctx.id, ctx.connStatus) };
  if ('clientCert' in ap) return { inst: clientCertInstance(ap.clientCert, ctx.name) };
  return { config: rateLimitConfig(ap.config, ctx.limitStatus, ctx.globalLimitStatus) };
}
