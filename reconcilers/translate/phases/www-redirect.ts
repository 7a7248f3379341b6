// Phase: from-to-www-redirect servers.
import { createHash } from 'node:crypto';
import { hostSchema } from '../../values/safe.ts';
import { certCovers } from '../matching.ts';
import type { Draft, Claim, Owner, PluginNaming } from '../draft.ts';

/**
 * from-to-www-redirect (ingress-nginx's redirect servers).
 * For a host whose object asks for it (an Ingress's annotation), the other name (www.<host>, or <host> without
 * "www.") gets a server that answers every request 308 to <scheme>://<host><request URI without its last "/">,
 * unless that name has rules of its own (then ingress-nginx skips the redirect). HTTPS for the other name uses the host's certificate only when it
 * covers that name; otherwise the default certificate answers (ingress-nginx logs a warning; Portico says it in a
 * Warning event).
 */
export function redirectWww(d: Draft): void {
  const { snap, events, warn, plugins, hosts, hostList, tlsHosts, certificates, routes } = d;
  for (const h of hostList) {
    if (h === '_' || h.startsWith('*.')) continue;
    let owner: Owner | undefined;
    let naming: PluginNaming | undefined;
    for (const c of (hosts.get(h) as Map<string, Claim>).values()) {
      naming = c.owner.proc.wwwRedirect?.(c.owner);
      if (naming) {
        owner = c.owner;
        break;
      }
    }
    if (!owner || !naming) continue;
    const from = h.startsWith('www.') ? h.slice(4) : `www.${h}`;
    if (hosts.has(from)) {
      events.push({ ref: owner.ref, type: 'Normal', reason: 'RedirectSkipped', message: `from-to-www-redirect: ${from} has rules of its own, so it is not redirected to ${h} (as in ingress-nginx)` });
      continue;
    }
    if (routes[from] || !hostSchema.safeParse(from).success) continue;
    const id = `${naming.base}.www-${createHash('sha256').update(h).digest('hex').slice(0, 12)}`;
    plugins[id] ??= { name: naming.name, type: 'redirect', status: 308, host: h, keepQuery: true, requestUri: true, stripTrailingSlash: true };
    routes[from] = { tls: false, rules: [{ path: '/', match: 'prefix', route: { source: owner.ref, backendId: null, sslRedirect: false, plugins: [id] } }] };
    const t = tlsHosts.get(h);
    const cert = certificates[h];
    if (t?.secretKey && cert) {
      const m = snap.secrets.get(t.secretKey);
      if (m?.ok && certCovers(m.hosts, from)) certificates[from] = cert;
      else warn(owner.ref, 'TLSHostMismatch', `from-to-www-redirect: the certificate in ${t.secretKey} does not cover ${from}; HTTPS requests for ${from} get the default certificate (as in ingress-nginx, the certificate must name both hosts)`);
    }
  }
}
