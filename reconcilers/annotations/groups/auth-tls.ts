// Client-certificate authentication (auth-tls-*; schemas and semantics: auth-tls.ts) → the CA for the TLS handshake
// of the Ingress's hosts and the client-cert plugin's per-path check. Access control: a value or Secret Portico
// cannot use fails the Ingress closed.
import type { PluginInstance } from '../../config/types.ts';
import { NGINX_PREFIX, row, type Closed, type SecretReader, type Values } from '../group.ts';
import { ownNamespaceRef } from '../own-namespace.ts';
import { AUTH_TLS_ANNOTATIONS, COMPANIONS, caCertificates, clientCaId, errorPageSchema, matchCnSchema, verifyClientSchema, verifyDepthSchema, type ClientCertSpec } from '../auth-tls.ts';
import { authSecretSchema, boolSchema } from '../../values/safe.ts';

export const rows = {
  'auth-tls-secret': row(authSecretSchema, 'location', 'medium', 'mTLS: a Secret of the Ingress\'s namespace ("namespace/name" or its name) whose ca.crt holds the CA certificates client certificates are verified against. The TLS handshake of the Ingress\'s hosts asks for a certificate (changed without reload); each of its paths then needs one (see auth-tls-verify-client): 400 without a valid one. The backend gets ssl-client-verify, ssl-client-subject-dn and ssl-client-issuer-dn (a client cannot send its own). Over HTTPS the server name (SNI) must be the Host, else 421. A missing Secret, no or a bad ca.crt fails the Ingress closed (503)', { access: 'client-certificate authentication', difference: 'applies to this Ingress\'s paths only, also over plain HTTP (no certificate: 400); a Secret of its own namespace; a ca.crl fails closed (CRLs are not applied)' }),
  'auth-tls-verify-client': row(verifyClientSchema, 'location', 'medium', 'on (default): a certificate verified against the CA is required; optional: also without one; optional_no_ca: also one whose issuer is unknown or self-signed (the backend decides); off: none asked for (ssl-client-verify: NONE)', { access: 'client-certificate authentication', difference: 'on a host whose other Ingress asks with another CA, the paths of the younger one fail closed (one CA per host)' }),
  'auth-tls-verify-depth': row(verifyDepthSchema, 'location', 'low', 'How many intermediate CAs may stand between the client\'s certificate and a CA of ca.crt (ssl_verify_depth, as OpenSSL counts; default 1; 0 means 1; at most 10)', { access: 'client-certificate authentication' }),
  'auth-tls-error-page': row(errorPageSchema, 'location', 'high', 'Instead of the 400, redirect (302) a request without a valid client certificate to this absolute http(s) URL (a literal host; no variables)', { access: 'client-certificate authentication' }),
  'auth-tls-match-cn': row(matchCnSchema, 'location', 'high', 'A regex (PCRE, unanchored, case-sensitive) the certificate\'s subject DN ("CN=client1,O=Acme") must match, e.g. "CN=client1", else 403; at most 256 characters, no braces or nested quantifiers', { access: 'client-certificate authentication', difference: 'the regex alphabet is restricted (no braces, quotes, ";", "#", nested quantifiers)' }),
  'auth-tls-pass-certificate-to-upstream': row(boolSchema, 'location', 'low', '"true": the client certificate (PEM, URL-encoded) goes to the backend in ssl-client-cert', { access: 'client-certificate authentication' }),
};

/** Refused together (translate/risk.ts): client-certificate checks are applied as written or not at all. */
export const refusedTogether = [[...AUTH_TLS_ANNOTATIONS]] as const;

/** auth-tls-* (client certificates): a client-cert instance, and the CA for the host's handshake. */
export interface ClientCertPlugin {
  suffix: 'mtls';
  clientCert: ClientCertSpec;
}

const KIND = 'client-certificate authentication';

/**
 * auth-tls-secret and its companions → the client-cert plugin's settings. Anything that keeps the authentication
 * from being applied as written fails the Ingress closed (`closed`); only a Secret of the Ingress's namespace is
 * read. `secretKey` is returned whenever a Secret is named (the model indexes it, so a change requeues the Ingress).
 */
export function authTlsPlugin(
  v: Values<typeof rows>,
  namespace: string,
  secrets: SecretReader,
): { plugin?: ClientCertPlugin; secretKey?: string; problems: string[]; closed: Closed[] } {
  const problems: string[] = [];
  const closed: Closed[] = [];
  const secretName = v['auth-tls-secret'];
  const present = COMPANIONS.filter((n) => v[n] !== undefined);
  if (secretName === undefined) {
    if (!present.length) return { problems, closed };
    const names = present.map((n) => `${NGINX_PREFIX}${n}`).join(', ');
    if (v['auth-tls-verify-client'] === 'off') problems.push(`annotation ignored: ${names}: has no effect without ${NGINX_PREFIX}auth-tls-secret`);
    else closed.push({ annotation: names, kind: `${KIND} that cannot be applied (${NGINX_PREFIX}auth-tls-secret is missing)` });
    return { problems, closed };
  }
  const fail = (why: string, secretKey?: string) => {
    closed.push({ annotation: `${NGINX_PREFIX}auth-tls-secret`, kind: `${KIND} that cannot be applied (${why})` });
    return { problems, closed, ...(secretKey ? { secretKey } : {}) };
  };
  const { key: secretKey, elsewhere, found: sec } = ownNamespaceRef(secretName, namespace, secrets);
  if (elsewhere) return fail(`auth-tls-secret ${secretName} is in another namespace; only the Ingress's own namespace is read`);
  if (!sec?.data) return fail(`Secret ${secretKey} not found`, secretKey);
  if (sec.data['ca.crl'] !== undefined) return fail(`Secret ${secretKey} holds ca.crl: Portico does not apply certificate revocation lists`, secretKey);
  const raw = sec.data['ca.crt'];
  if (raw === undefined) return fail(`Secret ${secretKey} has no ca.crt`, secretKey);
  const parsed = caCertificates(Buffer.from(raw, 'base64').toString('utf8'));
  if ('error' in parsed) return fail(`Secret ${secretKey}: ${parsed.error}`, secretKey);
  const depth = v['auth-tls-verify-depth'] || 1;
  const spec: ClientCertSpec = {
    secret: secretKey,
    ca: parsed.ca,
    depth,
    caId: clientCaId(parsed.ca, depth),
    verify: v['auth-tls-verify-client'] ?? 'on',
    passCertificate: v['auth-tls-pass-certificate-to-upstream'] === true,
  };
  if (v['auth-tls-error-page'] !== undefined) spec.errorPage = v['auth-tls-error-page'];
  if (v['auth-tls-match-cn'] !== undefined) spec.matchCn = v['auth-tls-match-cn'];
  return { plugin: { suffix: 'mtls', clientCert: spec }, secretKey, problems, closed };
}


/** ingress-nginx's auth-tls-* as a client-cert instance (the CA itself goes to the host's handshake: clientAuth). */
export function clientCertInstance(s: ClientCertSpec, name: string): PluginInstance {
  return {
    name,
    type: 'client-cert',
    verify: s.verify,
    ...(s.verify !== 'off' ? { caId: s.caId } : {}),
    ...(s.errorPage !== undefined ? { errorPage: s.errorPage } : {}),
    passCertificate: s.passCertificate,
    ...(s.matchCn !== undefined ? { matchCn: s.matchCn } : {}),
  };
}
