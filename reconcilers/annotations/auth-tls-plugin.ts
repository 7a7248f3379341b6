// auth-tls-secret and its companions (schemas and semantics: auth-tls.ts) → the client-cert plugin's settings.
import { NGINX_PREFIX, type ParsedAnnotations } from './table.ts';
import type { AnnotationPlugin, SecretReader } from './plugins.ts';
import { ownNamespaceRef } from './own-namespace.ts';
import { COMPANIONS, caCertificates, clientCaId, type ClientCertSpec } from './auth-tls.ts';

const KIND = 'client-certificate authentication';

/**
 * auth-tls-secret and its companions → the client-cert plugin's settings. Anything that keeps the authentication
 * from being applied as written fails the Ingress closed (`closed`); only a Secret of the Ingress's namespace is
 * read. `secretKey` is returned whenever a Secret is named (the model indexes it, so a change requeues the Ingress).
 */
export function authTlsPlugin(
  v: ParsedAnnotations,
  namespace: string,
  secrets: SecretReader,
): { plugin?: AnnotationPlugin; secretKey?: string; problems: string[]; closed: { annotation: string; kind: string }[] } {
  const problems: string[] = [];
  const closed: { annotation: string; kind: string }[] = [];
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

