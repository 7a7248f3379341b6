// How hosts and paths match: ingress-nginx's path and rewrite semantics, rule order, wildcard and certificate names.
import type { RouteRule } from '../config/types.ts';
import type { IngressPath, NormalizedIngress, ServiceBackendRef } from '../model/types.ts';
import type { ParsedAnnotations } from '../annotations/table.ts';
import { regexPathProblem } from '../values/regex-path.ts';
import type { PathClaim } from './types.ts';

// ---- ingress-nginx's path and rewrite semantics (docs/user-guide/ingress-path-matching.md, annotations.md) -------

/**
 * The path a prefix claim stands for. A Prefix path is the element-wise prefix without its trailing slash, as the
 * Ingress spec says ("/foo/" matches "/foo", "/foo/" and "/foo/bar"). An ImplementationSpecific path written with
 * one trailing slash keeps it, as ingress-nginx's `location /foo/` does: "/foo/" matches "/foo/..." only, and nginx
 * answers "/foo" itself with a 301 to "/foo/" (slashRedirect).
 */
export function claimPathOf(p: IngressPath): string {
  return p.match === 'prefix' && p.slashQuirk === true && p.written === `${p.path}/` ? p.written : p.path;
}

/**
 * ingress-nginx's needsRewrite: an Ingress's path is rewritten when rewrite-target is set and differs from the path
 * as written. Such a path, like any path of an Ingress with use-regex, turns every path of its host into a regex.
 */
export function needsRewrite(a: ParsedAnnotations, written: string): boolean {
  return a['rewrite-target'] !== undefined && a['rewrite-target'] !== written;
}

/**
 * The regex ingress-nginx writes for a path on a host whose paths are all regexes (`~* "^<path>"`): a regex path
 * as it is; a literal path as written (a Prefix path's trailing slash kept: "/foo/" stays "/foo/", while "/foo" —
 * which ingress-nginx splits into "^/foo/" and "^/foo" — is "/foo"), read as a regex too ("." matches any
 * character there as well). A literal that is not a valid regex (an unbalanced "(") is escaped instead: in
 * ingress-nginx, nginx -t would refuse the whole configuration.
 */
export function regexSourceOf(pc: PathClaim): string {
  if (pc.match === 'regex') return pc.path;
  return regexPathProblem(pc.written) === null ? pc.written : pc.written.replace(/[.*+?()[\]{}|\\^$]/g, '\\$&');
}

/**
 * ingress-nginx's path order on a host: longest path first, ties in reverse alphabetical order (its two stable
 * sorts of the locations); nginx then takes the first regex that matches.
 */
export function ingressNginxOrder(a: string, b: string): number {
  return b.length - a.length || (a < b ? 1 : a > b ? -1 : 0);
}

/** Whether a certificate's DNS names cover a host (exact, or a "*." wildcard for exactly one label). */
export function certCovers(names: readonly string[], host: string): boolean {
  return names.some((n) => n === host || (n.startsWith('*.') && host.endsWith(n.slice(1)) && !host.slice(0, -n.length + 1).includes('.')));
}

export function ruleOrder(a: RouteRule, b: RouteRule): number {
  const rank = (l: RouteRule) => (l.match === 'exact' ? 0 : l.match === 'prefix' ? 1 : 2);
  if (a.match === 'regex' && b.match === 'regex') return ingressNginxOrder(a.path, b.path);
  return rank(a) - rank(b) || (a.match === 'exact' ? 0 : b.path.length - a.path.length) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}

/** Whether a one-label wildcard ("*.example.com") covers an exact host ("a.example.com", not "a.b.example.com"). */
export function wildcardCovers(wildcard: string, host: string): boolean {
  const suffix = wildcard.slice(1);
  return host.length > suffix.length && host.endsWith(suffix) && !host.slice(0, -suffix.length).includes('.');
}

/**
 * ssl-passthrough: the Service port a host's TLS connections go to, as ingress-nginx picks it (its server's root
 * location): the host's "/" path, else the Ingress's defaultBackend; Portico also takes the host's first path when
 * it has neither (ingress-nginx would send the connections to its default backend). `paths`: the host's other paths
 * (as written), served over plain HTTP only. null: the host has no backend at all.
 */
export function passthroughTarget(ing: NormalizedIngress, host: string): { ref: ServiceBackendRef; via: string; paths: string[] } | null {
  const paths = ing.rules.filter((r) => (r.host ?? '_') === host).flatMap((r) => r.paths);
  const written = (p: IngressPath) => p.written ?? p.path;
  const root = paths.find((p) => p.path === '/');
  if (root) return { ref: root.backend, via: 'its "/" path', paths: paths.filter((p) => p !== root).map(written) };
  if (ing.defaultBackend) return { ref: ing.defaultBackend, via: 'the Ingress\'s defaultBackend (no "/" path)', paths: paths.map(written) };
  const first = paths[0];
  if (!first) return null;
  return { ref: first.backend, via: `its first path ${written(first)} (no "/" path, no defaultBackend)`, paths: paths.slice(1).map(written) };
}
