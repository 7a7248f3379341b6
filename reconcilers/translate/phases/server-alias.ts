// Phase: server-alias names.
import type { HostRoutes } from '../../config/types.ts';
import { ingressRef } from '../objects.ts';
import { certCovers } from '../matching.ts';
import type { Draft } from '../draft.ts';

/**
 * server-alias (ingress-nginx): more names for a host's server.
 * In ingress-nginx an alias joins the server_name of each host of the Ingress's rules, so it serves everything the
 * host serves (every Ingress on it). Here the alias name gets the host's routes (the same data) and, for HTTPS, the
 * host's certificate when it covers the name. A name with rules of its own, a from-to-www redirect or an earlier
 * alias keeps what it has (ingress-nginx skips such an alias too), said in an AliasSkipped Event.
 */
export function addServerAliases(d: Draft): void {
  const { snap, events, warn, served, hosts, tlsHosts, certificates, routes } = d;
  for (const ing of served) {
    const aliases = ing.annotations['server-alias'];
    if (!aliases) continue;
    const iref = ingressRef(ing.key);
    const own = [...new Set(ing.rules.map((r) => r.host).filter((h): h is string => !!h && !!routes[h]))];
    for (const h of own) {
      for (const alias of aliases) {
        if (alias === h) continue;
        if (routes[alias]) {
          events.push({ ref: iref, type: 'Warning', reason: 'AliasSkipped', message: `server-alias ${alias} for ${h}: ${hosts.has(alias) ? 'it is a host with rules of its own' : 'the name is already an alias or a redirect of another host'}; it keeps what it serves` });
          continue;
        }
        // An alias is not passed through (only the host is a passthrough server name, as in ingress-nginx).
        const hr = routes[h] as HostRoutes;
        routes[alias] = hr.passthrough ? { tls: hr.tls, rules: hr.rules } : hr;
        const cert = certificates[h];
        const t = tlsHosts.get(h);
        if (t?.secretKey && cert) {
          const m = snap.secrets.get(t.secretKey);
          if (m?.ok && certCovers(m.hosts, alias)) certificates[alias] = cert;
          else warn(iref, 'TLSHostMismatch', `server-alias ${alias}: the certificate in ${t.secretKey} does not cover it; HTTPS requests for ${alias} get the default certificate`);
        }
      }
    }
  }
}
