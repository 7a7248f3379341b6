// Per-Ingress annotations: one row for every annotation ingress-nginx documents (and Portico's own), with its scope,
// risk, status (supported / difference / refused, with the difference or why in one line) and, for those Portico
// parses, its schema and meaning. docs/reference/annotations.md and `portico migrate` are generated from this table.
// `nginx.ingress.kubernetes.io/<name>` and `portico.dev/<name>` are equivalent; the portico.dev form wins when both
// are set.
// The rows are declared by the annotation groups (groups/<group>.ts, each with how its annotations apply): this
// file only puts them together.
import type { z } from 'zod';
import { NGINX_PREFIX, PORTICO_PREFIX, STATUSES, type CatalogueRow, type Row, type Status } from './group.ts';
import * as authTls from './groups/auth-tls.ts';
import * as backendProtocol from './groups/backend-protocol.ts';
import * as basicAuth from './groups/basic-auth.ts';
import * as canary from './groups/canary.ts';
import * as cors from './groups/cors.ts';
import * as customHeaders from './groups/custom-headers.ts';
import * as errorsMirror from './groups/errors-mirror.ts';
import * as externalAuth from './groups/external-auth.ts';
import * as fastcgi from './groups/fastcgi.ts';
import * as ipLists from './groups/ip-lists.ts';
import * as loadBalancing from './groups/load-balancing.ts';
import * as modsecurity from './groups/modsecurity.ts';
import * as observability from './groups/observability.ts';
import * as porticoPlugins from './groups/portico-plugins.ts';
import * as proxy from './groups/proxy.ts';
import * as rateLimit from './groups/rate-limit.ts';
import * as redirect from './groups/redirect.ts';
import * as rewrite from './groups/rewrite.ts';
import * as server from './groups/server.ts';
import * as snippets from './groups/snippets.ts';

export { NGINX_PREFIX, PORTICO_PREFIX, RISKS, STATUSES, riskLabel, riskRank, type CatalogueRow, type RefusedRow, type Risk, type Scope, type Status } from './group.ts';
export { PROXY_SSL_ANNOTATIONS } from './groups/backend-protocol.ts';

const ROWS = {
  ...rewrite.rows,
  ...redirect.rows,
  ...server.rows,
  ...proxy.rows,
  ...backendProtocol.rows,
  ...fastcgi.rows,
  ...loadBalancing.rows,
  ...canary.rows,
  ...ipLists.rows,
  ...cors.rows,
  ...rateLimit.rows,
  ...basicAuth.rows,
  ...externalAuth.rows,
  ...authTls.rows,
  ...snippets.rows,
  ...modsecurity.rows,
  ...errorsMirror.rows,
  ...customHeaders.rows,
  ...observability.rows,
  ...porticoPlugins.rows,
};

/**
 * The order of the reference (docs/reference/annotations.md, per status) and of parsing (the order of Warnings), as
 * it was before the rows moved to their groups. A row not listed here follows these, in the order of ROWS.
 */
const REFERENCE_ORDER = [
  'use-regex', 'ssl-redirect', 'force-ssl-redirect', 'proxy-body-size', 'proxy-connect-timeout',
  'proxy-read-timeout', 'proxy-send-timeout', 'load-balance', 'upstream-hash-by', 'affinity', 'affinity-mode',
  'session-cookie-name', 'session-cookie-max-age', 'canary', 'canary-weight', 'canary-weight-total',
  'canary-by-header', 'canary-by-header-value', 'canary-by-header-pattern', 'whitelist-source-range',
  'allowlist-source-range', 'denylist-source-range', 'enable-cors', 'cors-allow-origin', 'cors-allow-methods',
  'cors-allow-headers', 'cors-expose-headers', 'cors-allow-credentials', 'cors-max-age', 'limit-rps', 'limit-rpm',
  'limit-burst-multiplier', 'limit-whitelist', 'limit-allowlist', 'auth-type', 'auth-secret', 'auth-secret-type',
  'auth-realm', 'permanent-redirect', 'permanent-redirect-code', 'temporal-redirect', 'temporal-redirect-code',
  'x-forwarded-prefix', 'upstream-vhost', 'backend-protocol', 'plugins', 'canary-by-cookie', 'configuration-snippet',
  'server-snippet', 'auth-snippet', 'rewrite-target', 'app-root', 'preserve-trailing-slash', 'from-to-www-redirect',
  'use-port-in-redirects', 'server-alias', 'default-backend', 'custom-http-errors', 'disable-proxy-intercept-errors',
  'custom-headers', 'client-body-buffer-size', 'connection-proxy-header', 'proxy-buffering', 'proxy-buffer-size',
  'proxy-buffers-number', 'proxy-max-temp-file-size', 'proxy-request-buffering', 'proxy-http-version',
  'proxy-cookie-domain', 'proxy-cookie-path', 'proxy-redirect-from', 'proxy-redirect-to', 'proxy-next-upstream',
  'proxy-next-upstream-timeout', 'proxy-next-upstream-tries', 'proxy-ssl-secret', 'proxy-ssl-verify',
  'proxy-ssl-verify-depth', 'proxy-ssl-name', 'proxy-ssl-server-name', 'proxy-ssl-ciphers', 'proxy-ssl-protocols',
  'ssl-ciphers', 'ssl-prefer-server-ciphers', 'ssl-passthrough', 'service-upstream', 'affinity-canary-behavior',
  'session-cookie-path', 'session-cookie-domain', 'session-cookie-samesite',
  'session-cookie-conditional-samesite-none', 'session-cookie-secure', 'session-cookie-expires',
  'session-cookie-change-on-failure', 'session-cookie-partitioned', 'upstream-hash-by-subset',
  'upstream-hash-by-subset-size', 'limit-connections', 'limit-rate', 'limit-rate-after', 'mirror-target',
  'mirror-host', 'mirror-request-body', 'enable-access-log', 'enable-rewrite-log', 'enable-opentelemetry',
  'opentelemetry-operation-name', 'opentelemetry-trust-incoming-span', 'enable-modsecurity',
  'enable-owasp-core-rules', 'modsecurity-transaction-id', 'modsecurity-snippet', 'stream-snippet',
  'http2-push-preload', 'fastcgi-index', 'fastcgi-params-configmap', 'satisfy', 'auth-url', 'auth-method',
  'auth-signin', 'auth-signin-redirect-param', 'auth-response-headers', 'auth-proxy-set-headers',
  'auth-request-redirect', 'auth-cache-key', 'auth-cache-duration', 'auth-always-set-cookie', 'auth-keepalive',
  'auth-keepalive-requests', 'auth-keepalive-share-vars', 'enable-global-auth', 'auth-keepalive-timeout',
  'auth-tls-secret', 'auth-tls-verify-client', 'auth-tls-verify-depth', 'auth-tls-error-page', 'auth-tls-match-cn',
  'auth-tls-pass-certificate-to-upstream', 'global-rate-limit', 'global-rate-limit-window', 'global-rate-limit-key',
  'global-rate-limit-ignored-cidrs', 'enable-opentracing', 'opentracing-trust-incoming-span', 'enable-influxdb',
  'influxdb-measurement', 'influxdb-port', 'influxdb-host', 'influxdb-server-name',
];

/** Annotations refused together by translate/risk.ts (their group's `refusedTogether`): in part they mean something else. */
export const REFUSED_TOGETHER: readonly (readonly AnnotationName[])[] = [
  ...cors.refusedTogether,
  ...canary.refusedTogether,
  ...redirect.refusedTogether,
  ...basicAuth.refusedTogether,
  ...loadBalancing.refusedTogether,
  ...authTls.refusedTogether,
];

const rank = (n: string) => {
  const i = REFERENCE_ORDER.indexOf(n);
  return i < 0 ? REFERENCE_ORDER.length : i;
};

/**
 * THE annotation table: every annotation ingress-nginx documents (its annotations.md and annotations-risk.md) and
 * Portico's own, with what Portico does with it. Rows with a schema are parsed (`ANNOTATIONS`); the others are
 * reported as unsupported by parseAnnotations (parse.ts).
 */
export const ANNOTATION_TABLE: typeof ROWS = Object.fromEntries(
  Object.entries(ROWS)
    .map(([n, r], i) => ({ n, r, i }))
    .sort((a, b) => rank(a.n) - rank(b.n) || a.i - b.i)
    .map(({ n, r }) => [n, r]),
) as typeof ROWS;

type Table = typeof ANNOTATION_TABLE;
/** Annotations Portico parses (a schema): the supported and difference rows, and auth-snippet (refused by its group). */
export type AnnotationName = { [K in keyof Table]: Table[K] extends { schema: z.ZodType } ? K : never }[keyof Table];
export const ANNOTATIONS = Object.fromEntries(Object.entries(ANNOTATION_TABLE).filter(([, r]) => r.schema !== undefined)) as {
  [K in AnnotationName]: Table[K];
};
/** Every row, as the common shape (for the reference, `portico migrate` and the tests). */
export const CATALOGUE: Readonly<Record<string, CatalogueRow>> = ANNOTATION_TABLE;

export type ParsedAnnotations = { [K in AnnotationName]?: z.output<(typeof ANNOTATIONS)[K]['schema']> };

/** Rows per status. */
export function statusCounts(origin: CatalogueRow['origin'] = 'ingress-nginx'): Record<Status, number> {
  const out: Record<Status, number> = { supported: 0, difference: 0, refused: 0 };
  for (const r of Object.values(CATALOGUE)) if (r.origin === origin) out[r.status]++;
  return out;
}

const cell = (s: string) => s.replace(/\|/g, '\\|');

export function annotationsMarkdown(): string {
  const c = statusCounts();
  const total = c.supported + c.difference + c.refused;
  const order = (r: CatalogueRow) => STATUSES.indexOf(r.status);
  const rows = Object.entries(CATALOGUE)
    .map(([n, r], i) => ({ n, r, i }))
    .sort((a, b) => order(a.r) - order(b.r) || a.i - b.i)
    .map(({ n, r }) => {
      const name = r.origin === 'portico' ? `\`${PORTICO_PREFIX}${n}\` (Portico's own)` : `\`${NGINX_PREFIX}${n}\``;
      const text =
        r.status === 'refused'
          ? `${r.refusedWhy}${r.removed ? ' (risk: not in ingress-nginx\'s table, Low assumed)' : ''}`
          : r.status === 'difference'
            ? `${r.schema ? (r as Row<unknown>).description : ''} **Difference:** ${r.difference}`
            : (r as Row<unknown>).description;
      return `| ${name} | ${r.status} | ${r.scope} | ${r.risk} | ${cell(text)} |`;
    });
  const traefik = 86;
  const ours = c.supported + c.difference;
  return [
    `Of the ${total} \`${NGINX_PREFIX}*\` annotations ingress-nginx documents (including ${Object.values(CATALOGUE).filter((r) => r.removed).length} it has since removed), Portico applies ${ours}: **${c.supported} supported** as ingress-nginx does, **${c.difference} with a difference** (stated below), and **${c.refused} refused** (an \`UnsupportedAnnotation\` Warning, or for access control the Ingress fails closed). The \`${PORTICO_PREFIX}\` form of each supported name works too.`,
    '',
    `For comparison, Traefik's kubernetesIngressNGINX provider documents support for ${traefik} of the 131 ingress-nginx annotations its documentation lists; Portico applies ${ours} of ${total} (${ours - traefik >= 0 ? `${ours - traefik} more` : `${traefik - ours} fewer`} in absolute terms; the two lists differ slightly in which legacy names they include). Run \`portico migrate\` to see what this means for your Ingresses.`,
    '',
    '| annotation | status | scope | risk | meaning / difference / why refused |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
