// Phase: Warnings for auth-url on the request's own host ("https://$host/oauth2/auth"). The data plane sends such a
// subrequest to the backend of the route the host serves the auth path with (plugins/external_auth.lua) and fails
// closed (500) when there is none or when that route requires authentication itself; the same lookup here tells the
// Ingress's owner before a request does.
import type { HostRoutes, PluginInstance, RouteRule } from '../../config/types.ts';
import type { Draft } from '../draft.ts';

/** The rule the router picks for `path` on a host (exact, else the longest prefix); undefined: none, 'regex': unknown. */
function ruleFor(h: HostRoutes, path: string): RouteRule | undefined | 'regex' {
  const exact = h.rules.find((r) => r.match === 'exact' && r.path === path);
  if (exact) return exact;
  // (Regexes come before prefixes and are PCRE: the data plane decides.)
  if (h.rules.some((r) => r.match === 'regex')) return 'regex';
  let best: RouteRule | undefined;
  for (const r of h.rules) {
    if (r.match !== 'prefix') continue;
    const p = r.path;
    const hit = p === '/' || path === p || (path.startsWith(p) && (p.endsWith('/') || path[p.length] === '/'));
    if (hit && (!best || p.length > best.path.length)) best = r;
  }
  return best;
}

const isAuth = (p: PluginInstance | undefined) => !p || p.type === 'external-auth' || p.type === 'basic-auth' || p.type === 'digest-auth' || p.type === 'key-auth';

/** Why an own-host auth path cannot be served on `host`, or null (also when the data plane alone can tell). */
function problem(d: Draft, host: string, h: HostRoutes, path: string): string | null {
  const r = ruleFor(h, path);
  if (r === 'regex') return null;
  if (!r || (r.match === 'prefix' && r.path === '/')) return `host ${host} has no route for ${path} but its catch-all "/" (the application, never taken for the auth service)`;
  if ((r.route.plugins ?? []).some((id) => isAuth(d.plugins[id]))) return `the route of host ${host} for ${path} requires authentication itself (the subrequest would loop)`;
  if (!r.route.backendId) return `the route of host ${host} for ${path} has no backend`;
  const proto = r.route.profile ? d.profiles.get(r.route.profile)?.backendProtocol : undefined;
  if (proto) return `the route of host ${host} for ${path} speaks ${proto} to its backend, and the auth subrequest is plain HTTP`;
  return null;
}

/** One Warning per object and host whose own-host auth URL has no usable route on that host. */
export function warnOwnHostAuth(d: Draft): void {
  const seen = new Set<string>();
  for (const [host, h] of Object.entries(d.routes)) {
    for (const rule of h.rules) {
      for (const id of rule.route.plugins ?? []) {
        const p = d.plugins[id];
        if (p?.type !== 'external-auth' || !p.ingressNginx?.ownHost) continue;
        const path = p.path.split('?')[0] as string;
        const key = `${rule.route.source} ${host} ${path}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const why = problem(d, host, h, path);
        if (why) d.warn(rule.route.source, 'AuthRouteMissing', `auth-url on the request's own host: ${why}; requests needing it answer 500 until the host routes ${path} to the auth service without authentication (e.g. an Ingress for /oauth2, as in ingress-nginx's oauth2-proxy example)`);
      }
    }
  }
}
