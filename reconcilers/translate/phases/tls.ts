// Phases: who configures TLS for each host, and the certificates.
import { secretNs } from '../objects.ts';
import { hostOrder } from '../claims.ts';
import { type Draft, describe } from '../draft.ts';
import { ingressRef } from '../objects.ts';

/** Who configures TLS for each host: the oldest object naming it (a younger one with another Secret gets TLSConflict). */
export function chooseTlsOwners(d: Draft): void {
  const { warn, exclusiveHosts, owners, hostNamespace, tlsHosts } = d;
  for (const ow of owners) {
    for (const t of ow.proc.tls(ow)) {
      const secretKey = t.secretName ? `${ow.ns}/${t.secretName}` : null;
      for (const h of t.hosts) {
        const first = exclusiveHosts ? hostNamespace.get(h) : undefined;
        if (first && first.ns !== ow.ns) {
          warn(ow.ref, 'HostOwnedByNamespace', `TLS for host ${h}: the host belongs to namespace ${first.ns} (${describe(first.ref)} named it first) and the ConfigMap's namespace-exclusive-hosts is on; this TLS section is ignored for ${h}`);
          continue;
        }
        const prev = tlsHosts.get(h);
        if (!prev) tlsHosts.set(h, { ref: ow.ref, secretKey });
        else if (prev.ref !== ow.ref && prev.secretKey !== secretKey) {
          // The older owner's Secret is named only within its own namespace (see ClientCertificateConflict).
          const theirs = prev.secretKey === null ? 'the default certificate' : secretNs(prev.secretKey) === ow.ns ? `secret ${prev.secretKey}` : 'a secret of its own namespace';
          warn(ow.ref, 'TLSConflict', `TLS for host ${h} is already configured by ${describe(prev.ref)} (older, ${theirs}); this TLS section of ${describe(ow.ref)} is ignored for ${h}`);
        }
      }
    }
  }
}

/** The certificate of each TLS host with paths (from its Secret; reused from the memo while the Secret is unchanged). */
export function loadCertificates(d: Draft): void {
  const { snap, memo, events, warn, unresolved, hosts, tlsHosts, certificates } = d;
  for (const [h, t] of [...tlsHosts].sort(([a], [b]) => hostOrder(a, b))) {
    if (!hosts.has(h)) continue;
    if (!t.secretKey) continue; // default certificate
    const m = snap.secrets.get(t.secretKey);
    if (!m) {
      warn(t.ref, 'TLSSecretNotFound', `TLS secret ${t.secretKey} for host ${h} was not found (or is not a kubernetes.io/tls Secret); serving the default certificate`);
      unresolved(t.ref, `Secret ${t.secretKey}`);
    } else if (!m.ok) {
      warn(t.ref, 'TLSSecretInvalid', `TLS secret ${t.secretKey} for host ${h} is invalid: ${m.error}; serving ${certificates[h] ? 'the previous' : 'the default'} certificate`);
      unresolved(t.ref, `Secret ${t.secretKey}`);
    } else {
      if (m.hosts.length && !m.hosts.some((n) => n === h || (n.startsWith('*.') && h.endsWith(n.slice(1)) && !h.slice(0, -n.length + 1).includes('.')))) {
        events.push({ ref: t.ref, type: 'Warning', reason: 'TLSHostMismatch', message: `certificate in ${t.secretKey} does not cover host ${h} (SANs: ${m.hosts.slice(0, 5).join(', ')})` });
      }
      let c = memo?.certificates.get(m);
      if (!c) {
        c = { cert: m.cert, key: m.privateKey, source: m.key, notAfter: m.notAfter };
        memo?.certificates.set(m, c);
      }
      certificates[h] = c;
    }
  }
}

/**
 * ssl-ciphers (ingress-nginx: ssl_ciphers in the server block of each host of the Ingress's rules): the cipher list
 * goes with the host's certificate, which the handshake sets per connection (certs.lua). On a host several Ingresses
 * set it for, the oldest one's applies, as ingress-nginx keeps the first; the others get SSLCiphersConflict. Only an
 * Ingress of the namespace whose Ingress configures the host's TLS changes its handshake (one namespace never changes
 * another's traffic); a host without a certificate of its own is served the default certificate with the ConfigMap's
 * list. Both are said in an SSLCiphersIgnored Warning. Runs before the server-alias and from-to-www phases, which give
 * their names the host's certificate (and so its list).
 */
export function applySslCiphers(d: Draft): void {
  const { served, warn, certificates, passthrough, tlsHosts } = d;
  const chosen = new Map<string, { ref: string; ciphers: string }>();
  for (const ing of served) {
    const ciphers = ing.annotations['ssl-ciphers'];
    if (ciphers === undefined) continue;
    const iref = ingressRef(ing.key);
    const hosts = [...new Set(ing.rules.map((r) => r.host).filter((h): h is string => !!h))];
    if (!hosts.length) {
      warn(iref, 'SSLCiphersIgnored', 'ssl-ciphers: the Ingress has no rule with a host (a TLS handshake picks its cipher list by server name); the ConfigMap\'s ssl-ciphers apply');
      continue;
    }
    for (const h of hosts) {
      if (passthrough.has(h)) {
        warn(iref, 'SSLCiphersIgnored', `ssl-ciphers for host ${h}: its TLS is passed through to the backend (ssl-passthrough), which chooses the ciphers`);
        continue;
      }
      const tlsOwner = tlsHosts.get(h);
      const c = certificates[h];
      if (!c || !tlsOwner?.secretKey) {
        warn(iref, 'SSLCiphersIgnored', `ssl-ciphers for host ${h}: the host has no certificate of its own (no TLS section with a usable Secret), so its handshake is the default certificate's, with the ConfigMap's ssl-ciphers`);
        continue;
      }
      if (tlsOwner.ref.split('/')[1] !== ing.namespace) {
        warn(iref, 'SSLCiphersIgnored', `ssl-ciphers for host ${h}: its TLS is configured by an Ingress of another namespace, whose handshake namespace ${ing.namespace} does not change`);
        continue;
      }
      const prev = chosen.get(h);
      if (prev) {
        if (prev.ciphers !== ciphers) warn(iref, 'SSLCiphersConflict', `ssl-ciphers for host ${h}: ${describe(prev.ref)} (older) sets another list for it; that one applies`);
        continue;
      }
      chosen.set(h, { ref: iref, ciphers });
      certificates[h] = { ...c, ciphers };
    }
  }
}
