// Snippets: configuration-snippet, server-snippet and auth-snippet are compiled here (snippets.ts: nginx's lexical
// rules, an allowlist of directives) once per Ingress record, but applied only when the ConfigMap allows them, which
// the translation decides (translate/risk.ts): so their refusals are carried in the plugin, not reported yet.
// auth-snippet is compiled for the auth subrequest of auth-url (the external-auth instance runs it, see
// translate/risk.ts); without auth-url it has no effect and is reported. stream-snippet is not supported.
import { z } from 'zod';
import type { PluginInstance, SnippetStatement } from '../../config/types.ts';
import { NGINX_PREFIX, refused, row, type Values } from '../group.ts';
import { compileSnippet, MAX_SNIPPET } from '../snippets.ts';

// Snippets are compiled by snippetPlugin, once the ConfigMap allows them; here only their size.
const snippetSchema = z.string().max(MAX_SNIPPET * 4, `longer than ${MAX_SNIPPET * 4} characters`);

export const rows = {
  'configuration-snippet': row(snippetSchema, 'location', 'critical', 'Only with the ConfigMap\'s allow-snippet-annotations: "true" and annotations-risk-level: Critical (else refused with a Warning). Parsed with nginx\'s lexical rules and compiled to data for the snippet plugin (it runs after every other plugin) for every path of this Ingress; allowed: more_set_headers (-s, -t), more_clear_headers, more_set_input_headers (-r, -t), more_clear_input_headers, add_header [always], proxy_set_header, set, return, rewrite (last = break: the route is not chosen again), break, if (($v), =, !=, ~, ~*, !~, !~*); values may read $host, $uri, $request_uri, $args, $scheme, $remote_addr, $request_method, $server_name (= $host), $http_*, $arg_*, $cookie_*, $1-$9 and variables set before. Anything else (Lua, include, file paths, proxy_pass, access directives, other variables) refuses the whole snippet with the line; one refused for access rules makes the Ingress fail closed. Differences: rewrite-module directives run after auth and rate limits (nginx runs them before), and headers of an if block add to the others (nginx replaces them)', { difference: 'compiled from an allowlist of directives, never pasted into nginx.conf: anything else refuses the whole snippet' }),
  'server-snippet': row(snippetSchema, 'ingress', 'critical', 'As configuration-snippet, but runs first; difference: in ingress-nginx it is the host\'s server block (every Ingress on the host, 404s included) — in Portico it applies to every path of that host served by this Ingress. location blocks are refused', { difference: 'applies to the paths of this Ingress on the host, not to the whole server block; location blocks are refused' }),
  'auth-snippet': row(snippetSchema, 'location', 'critical', 'With auth-url, and gated as configuration-snippet (allow-snippet-annotations: "true" and annotations-risk-level: Critical; refused, the Ingress fails closed): compiled to data for the auth subrequest, applied to its headers after auth-proxy-set-headers; allowed: proxy_set_header (not Host), more_set_input_headers (-r, -t), more_clear_input_headers, set, if (with set / more_*_input_headers inside); values may read the variables configuration-snippet may, except $uri, $document_uri, $args, $query_string, $is_args and $arg_* (in ingress-nginx\'s auth location those are the subrequest\'s own). return, rewrite, break, add_header, more_set_headers, more_clear_headers and anything off the list refuse the snippet with a Warning naming the directive and line, and the Ingress fails closed. Without auth-url it has no effect (reported)', { access: 'external authentication', difference: 'compiled from an allowlist for the auth subrequest (headers sent to the auth service, set, if); return, rewrite and response headers there are refused and fail the Ingress closed' }),
  'stream-snippet': refused('ingress', 'critical', 'not supported: the stream section serving TCP/UDP services (--tcp/udp-services-configmap) takes no snippets; snippets are compiled from an allowlist of HTTP directives'),
};

/** The snippet annotations (auth-snippet compiles into the auth subrequest of auth-url: see translate/risk.ts). */
export const SNIPPET_ANNOTATIONS = ['server-snippet', 'configuration-snippet', 'auth-snippet'] as const;
export type SnippetAnnotation = (typeof SNIPPET_ANNOTATIONS)[number];

/** The compiled snippets of an Ingress, and the ones refused (annotation name without prefix, why). */
export interface CompiledSnippets {
  server?: SnippetStatement[];
  location?: SnippetStatement[];
  /** auth-snippet (only with auth-url): run by the external-auth instance on its subrequest. */
  auth?: SnippetStatement[];
  refused: { annotation: SnippetAnnotation; message: string }[];
}

/** `allowed`: set only by the translation's gate (translate/risk.ts) once the ConfigMap allows snippets; only then run. */
export interface SnippetPlugin {
  suffix: 'snippet';
  snippets: CompiledSnippets;
  allowed?: true;
}

/**
 * Compiles the snippet annotations present (undefined when there is none). auth-snippet is compiled for the auth
 * subrequest when auth-url is set (snippets.ts, kind "auth"); without it, it is reported as having no effect.
 */
export function snippetPlugin(v: Values<typeof rows> & { 'auth-url'?: unknown }): SnippetPlugin | undefined {
  if (SNIPPET_ANNOTATIONS.every((n) => v[n] === undefined)) return undefined;
  const out: CompiledSnippets = { refused: [] };
  // The server snippet first: the variables it sets are known to the configuration snippet (it runs first).
  let vars: ReadonlySet<string> = new Set();
  for (const [name, kind] of [['server-snippet', 'server'], ['configuration-snippet', 'location']] as const) {
    const src = v[name];
    if (src === undefined) continue;
    const r = compileSnippet(src, kind, vars);
    if (r.ok) {
      vars = r.vars;
      if (r.statements.length) out[kind] = r.statements;
    } else out.refused.push({ annotation: name, message: `${r.error}; nothing of this snippet is applied` });
  }
  const auth = v['auth-snippet'];
  if (auth !== undefined) {
    if (v['auth-url'] === undefined) {
      out.refused.push({ annotation: 'auth-snippet', message: `it has no effect without ${NGINX_PREFIX}auth-url (as in ingress-nginx)` });
    } else {
      // Its own scope: the auth subrequest is a location of its own in ingress-nginx (no variables of the others).
      const r = compileSnippet(auth, 'auth');
      if (!r.ok) out.refused.push({ annotation: 'auth-snippet', message: `${r.error}; nothing of this snippet is applied and the Ingress fails closed (its auth service would decide without what the snippet sets)` });
      else out.auth = r.statements;
    }
  }
  return { suffix: 'snippet', snippets: out };
}

/** The compiled snippets the gate allowed (translate/risk.ts) as a snippet instance (it runs after every other plugin). */
export function snippetInstance(c: CompiledSnippets, name: string): PluginInstance {
  const { server, location } = c;
  return { name, type: 'snippet', ...(server ? { server } : {}), ...(location ? { location } : {}) };
}

/**
 * The compiled snippets as the ConfigMap's switches let them run (translate/risk.ts): without those of the refused
 * annotations, marked `allowed` (undefined when nothing is left for the snippet plugin), the auth-snippet's
 * statements for the external-auth instance, and the compiler's refusals of the others, which are reported only now
 * that the snippets are allowed.
 */
export function allowedSnippets(c: CompiledSnippets, isRefused: (annotation: string) => boolean): { plugin?: SnippetPlugin; auth?: SnippetStatement[]; refusals: CompiledSnippets['refused'] } {
  const gated: CompiledSnippets = { refused: [] };
  if (c.server && !isRefused('server-snippet')) gated.server = c.server;
  if (c.location && !isRefused('configuration-snippet')) gated.location = c.location;
  const refusals = c.refused.filter((r) => !isRefused(r.annotation));
  return {
    ...(gated.server || gated.location ? { plugin: { suffix: 'snippet', snippets: gated, allowed: true } } : {}),
    ...(c.auth && !isRefused('auth-snippet') ? { auth: c.auth } : {}),
    refusals,
  };
}
