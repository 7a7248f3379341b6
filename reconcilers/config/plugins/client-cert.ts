// client-cert (nginx-assets/lua/portico/plugins/client_cert.lua): made from ingress-nginx's auth-tls-* annotations
// only (reconcilers/annotations/groups/auth-tls.ts); no Plugin object configures it.
import { definePlugin } from './plugin.ts';

/**
 * ingress-nginx's auth-tls-* for the paths of one Ingress. The handshake asked for a certificate with the
 * host's CA (DataPlane.clientAuth); this checks its outcome ($ssl_client_verify) per request: `on` needs
 * SUCCESS, `optional` also lets NONE through, `optional_no_ca` also a chain nginx's optional_no_ca accepts
 * (unknown or self-signed issuer); otherwise 400, or a 302 to `errorPage`. Over HTTPS, the TLS server name must
 * be the Host (else 421), and a certificate must have been verified against the CA `caId` names (the TLS
 * session carries the id the handshake used; else 421). `matchCn`: PCRE on the subject DN ($ssl_client_s_dn),
 * else 403. The ssl-client-verify / -subject-dn / -issuer-dn headers (and ssl-client-cert, the escaped PEM,
 * with `passCertificate`) are set for the backend, the client's own always removed. `off`: nothing is
 * checked; ssl-client-verify NONE.
 */
export type Instance = {
  type: 'client-cert';
  verify: 'on' | 'off' | 'optional' | 'optional_no_ca';
  /** ClientAuth id of the CA this path verifies against; absent only with verify off. */
  caId?: string;
  errorPage?: string;
  passCertificate: boolean;
  matchCn?: string;
};

export const plugin = definePlugin<Instance>()({ name: 'client-cert' });
