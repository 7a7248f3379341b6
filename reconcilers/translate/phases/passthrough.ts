// Phase: ssl-passthrough hosts (with --enable-ssl-passthrough).
import { type Draft, describe, type Owner } from '../draft.ts';

/**
 * TLS passthrough (ssl-passthrough, with --enable-ssl-passthrough).
 * The oldest object serving a host decides (as ingress-nginx's server for a host is made by its oldest Ingress): a
 * host an older Ingress or Route serves with TLS terminated, or that an older Ingress passes through, is refused to
 * a younger passthrough Ingress; a younger object on a passthrough host keeps its routes for plain HTTP only.
 * Rules without host cannot be passed through (the server name decides), nor can a canary (it has no host of its own).
 * Each object's processor says what it asks (without the flag, it only warns about what it asked for in vain).
 */
export function choosePassthrough(d: Draft): void {
  const { o, events, warn, owners, passthrough } = d;
  const passedBy = new Map<string, Owner>();
  const terminatedBy = new Map<string, Owner>();
  for (const ow of owners) {
    const ask = ow.proc.passthrough?.(d, ow);
    if (!o.sslPassthrough || ask === 'ignored') continue;
    const hosts = ask ? ask.hosts : ow.proc.claims(ow).map((c) => c.pc.host);
    for (const h of [...new Set(hosts)]) {
      const by = passedBy.get(h);
      if (ask?.target) {
        const term = terminatedBy.get(h);
        if (h === '_') warn(ow.ref, 'PassthroughIgnored', 'ssl-passthrough: rules without a host cannot be passed through (the server name of the TLS connection decides); they are served as usual');
        else if (by) warn(ow.ref, 'PassthroughConflict', `ssl-passthrough: host ${h} is already passed through by ${describe(by.ref)}, which is older; this Ingress's rules for ${h} are served over plain HTTP only`);
        else if (term) warn(ow.ref, 'PassthroughConflict', `ssl-passthrough: host ${h} is already served by ${describe(term.ref)}, which is older and does not pass TLS through; Portico terminates TLS for ${h} and the annotation is ignored for it`);
        else {
          const t = ask.target(h);
          if (!t) {
            warn(ow.ref, 'PassthroughIgnored', `ssl-passthrough: host ${h} has no path and the Ingress no defaultBackend: there is no Service to pass its TLS connections to`);
            continue;
          }
          passedBy.set(h, ow);
          const port = 'number' in t.ref.port ? t.ref.port.number : t.ref.port.name;
          passthrough.set(h, { host: h, source: ow.ref, namespace: ow.ns, service: t.ref.service, servicePort: port });
          const rest = t.paths.length ? `; its other paths (${t.paths.slice(0, 5).join(', ')}${t.paths.length > 5 ? ', …' : ''}) are served over plain HTTP only` : '';
          events.push({ ref: ow.ref, type: 'Normal', reason: 'Passthrough', message: `TLS connections for ${h} go undecrypted to service ${ow.ns}/${t.ref.service} port ${port} (${t.via})${rest}` });
          ask.passed?.();
        }
      } else if (by) {
        if (h !== '_') warn(ow.ref, 'PassthroughHost', `host ${h} is passed through by ${describe(by.ref)} (ssl-passthrough, older): its TLS connections go undecrypted to that Ingress's backend, and the paths of ${describe(ow.ref)} on ${h} are served over plain HTTP only`);
      } else if (!terminatedBy.has(h)) terminatedBy.set(h, ow);
    }
  }
}
