// Phase: the client-certificate CA of each host (auth-tls-*).
import type { ClientCertSpec } from '../../annotations/auth-tls.ts';
import { byOwnerAge, secretNs } from '../objects.ts';
import { type Draft, describe, type Claim, type Owner } from '../draft.ts';

/**
 * Client certificates (auth-tls-*): one CA per host.
 * The TLS handshake is per server name, so a host asks for client certificates with one CA (and depth): that of the
 * oldest Ingress whose path on the host is served and sets auth-tls (verify-client other than off). A younger
 * Ingress naming another CA cannot have its clients verified against it there: its paths on that host fail closed.
 */
export function chooseClientCertificates(d: Draft): void {
  const { warn, hosts, hostList, hostCa } = d;
  for (const host of hostList) {
    const locs = hosts.get(host) as Map<string, Claim>;
    let win: { owner: Owner; spec: ClientCertSpec } | undefined;
    for (const c of locs.values()) {
      const spec = c.owner.proc.clientCert?.(c.owner);
      if (spec && !c.closed && (!win || byOwnerAge(c.owner, win.owner) < 0)) win = { owner: c.owner, spec };
    }
    if (!win) continue;
    hostCa.set(host, win);
    const told = new Set<string>();
    for (const c of locs.values()) {
      const spec = c.owner.proc.clientCert?.(c.owner);
      if (!spec || c.closed || spec.caId === win.spec.caId) continue;
      const what = spec.secret === win.spec.secret ? `depth ${spec.depth} instead of ${win.spec.depth}` : `Secret ${spec.secret}`;
      // The winner's Secret is named only to an Ingress of its own namespace: Events are read by the namespace's
      // users, and a Secret of another namespace is none of theirs.
      const theirs = secretNs(win.spec.secret) === c.owner.ns ? `Secret ${win.spec.secret}` : 'its auth-tls-secret';
      c.closed = `host ${host} asks for client certificates of the CA in ${theirs} (depth ${win.spec.depth}, auth-tls-secret of ${describe(win.owner.ref)}, which is older); this Ingress names ${what}, and a host has one CA`;
      c.backendId = null;
      c.reported = true;
      if (!told.has(c.owner.ref)) {
        told.add(c.owner.ref);
        warn(c.owner.ref, 'ClientCertificateConflict', `${c.closed}: its paths on ${host} answer 503`);
      }
    }
  }
}
