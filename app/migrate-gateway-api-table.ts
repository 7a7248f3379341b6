// What `portico migrate --to gateway-api` makes of each annotation Portico applies (the supported and difference rows
// of reconcilers/annotations/table.ts): a standard HTTPRoute field or filter, a Portico Plugin (ExtensionRef), nothing
// (it changes nothing an HTTPRoute would not do anyway), or nothing it can write — with why. app/migrate-gateway-api.ts
// does the conversion; a row says what it does in the usual case and when it cannot (the report says it per
// Ingress). app/migrate-gateway-api.test.ts checks that every applied annotation has a row and that each convertible
// row converts as it says; docs/ingress-nginx.md's table is generated from here (tools/readme-reference.ts).
import { CATALOGUE, NGINX_PREFIX, PORTICO_PREFIX } from '../reconcilers/annotations/table.ts';

/** standard / plugin / unneeded: converted (at least in the usual case); none: never written, `detail` says why. */
export type ConversionKind = 'standard' | 'plugin' | 'unneeded' | 'none';

export interface ConversionRow {
  kind: ConversionKind;
  /** What it becomes and when it cannot (converted kinds), or why it is not converted (none). */
  detail: string;
}

const std = (detail: string): ConversionRow => ({ kind: 'standard', detail });
const plug = (detail: string): ConversionRow => ({ kind: 'plugin', detail });
const unneeded = (detail: string): ConversionRow => ({ kind: 'unneeded', detail });
const none = (detail: string): ConversionRow => ({ kind: 'none', detail });

const PROFILE = 'an nginx directive of the route\'s directive profile: HTTPRoute has no field for it and no Plugin sets it';
const BALANCING = 'balancing belongs to the Service\'s backend: HTTPRoute has no field for it; an Upstream object (portico.dev/v1alpha1) for the Service sets it, for every route of the Service (the Ingress\'s too), so it is not written';
const BACKEND_TLS = 'TLS to the backend: BackendTLSPolicy is not served by Portico yet; an Upstream object\'s protocol and tls set it for every route of the Service, so it is not written';
const CLIENT_CERTS = 'client certificates are a listener setting (frontend TLS validation), which Portico\'s Gateways do not serve yet: the rules fail closed (503) with a Plugin that is not written';
const AUTH_ONLY = (what: string) => `the external-auth Plugin has no ${what}: auth-url is then not converted and the rules fail closed (503) with a Plugin that is not written`;
const MODSEC = 'ModSecurity is a directive-profile setting of Ingress routes; no Plugin runs it';
const ERRORS = 'error pages and the default-backend Service are Ingress route settings; HTTPRoute has none';
const TRACING = 'per-route tracing and access-log settings are Ingress route data; HTTPRoutes get the ConfigMap\'s';
const CANARY = 'rules added to the main Ingress\'s HTTPRoute for the backend of its main path';

export const CONVERSIONS: Readonly<Record<string, ConversionRow>> = {
  'use-regex': std('RegularExpression path matches "^<path>" (every path of the host in the namespace, as ingress-nginx\'s host-wide regex mode; Portico matches them case-insensitively, anchored at the start)'),
  'rewrite-target': std('URLRewrite ReplaceFullPath with the target (ingress-nginx replaces the whole path); a target with captures ($1..$9): a rewrite Plugin per path (regex mode, the path\'s regular expression made case-insensitive); a target with a query ("?"), or a path regex with a top-level "|", is not convertible (the path is not written)'),
  'app-root': std('a rule with an Exact "/" match and a RequestRedirect (ReplaceFullPath, 302); difference: the client\'s query is kept in the Location'),
  'x-forwarded-prefix': std('RequestHeaderModifier sets X-Forwarded-Prefix'),
  'upstream-vhost': std('URLRewrite hostname; $http_host / $best_http_host: a rewrite Plugin (hostHeader); $host: nothing needed'),
  'ssl-redirect': std('the host\'s rules go on the Gateway\'s HTTPS listener, and on its HTTP listener each path answers a RequestRedirect to https (status: the ConfigMap\'s http-redirect-code); difference: a final "/" is kept unless preserve-trailing-slash is "true" in the Ingress too; not with --section-name'),
  'force-ssl-redirect': std('as ssl-redirect, for hosts without TLS too (their HTTPS listener, https-default, needs a certificate)'),
  'preserve-trailing-slash': std('RequestRedirect keeps the path as it is'),
  'from-to-www-redirect': std('an HTTPRoute for the other name with a RequestRedirect (hostname, 308), unless that name has rules of its own; difference: a final "/" is kept'),
  'use-port-in-redirects': std('the "/foo" → "/foo/" redirect is a RequestRedirect, whose Location has the listener\'s port unless it is 80 or 443'),
  'permanent-redirect': plug('a redirect Plugin: every request answered with the URL, without the request\'s path or query (RequestRedirect would keep the query)'),
  'permanent-redirect-code': plug('the status of the redirect Plugin'),
  'temporal-redirect': plug('a redirect Plugin, as permanent-redirect'),
  'temporal-redirect-code': plug('the status of the redirect Plugin'),
  'server-alias': std('more hostnames of the host\'s HTTPRoutes (HTTPS for an alias needs a listener whose certificate covers it)'),
  'ssl-passthrough': none('a TLSRoute needs a TLS listener in Passthrough mode, which Portico\'s Gateways cannot have on the port of their HTTPS listeners (ProtocolConflict): write it for a Gateway or port of its own'),
  'ssl-ciphers': none('a listener\'s cipher list: Portico\'s Gateways take no TLS options'),
  'proxy-body-size': none(`${PROFILE}; HTTPRoutes get the ConfigMap's proxy-body-size (the same value: nothing needed)`),
  'proxy-connect-timeout': unneeded('HTTPRoutes get the ConfigMap\'s connect timeout (at most the rule\'s timeout): converted when the value is that, else not convertible (no field sets it)'),
  'proxy-read-timeout': std('the rules\' timeouts.backendRequest, which Portico applies to each read and send, when proxy-read-timeout and proxy-send-timeout are the same (else not convertible); the ConfigMap\'s value: nothing needed'),
  'proxy-send-timeout': std('with proxy-read-timeout: timeouts.backendRequest'),
  'proxy-next-upstream': none('retries: HTTPRoute\'s retry field is not served by Portico; an Upstream object\'s retries apply to every route of the Service'),
  'proxy-next-upstream-timeout': none('retries: see proxy-next-upstream'),
  'proxy-next-upstream-tries': none('retries: see proxy-next-upstream'),
  'client-body-buffer-size': none(PROFILE),
  'connection-proxy-header': none(PROFILE),
  'proxy-buffering': none(PROFILE),
  'proxy-buffer-size': none(PROFILE),
  'proxy-buffers-number': none(PROFILE),
  'proxy-max-temp-file-size': none(PROFILE),
  'proxy-request-buffering': none(PROFILE),
  'proxy-http-version': none(PROFILE),
  'proxy-cookie-domain': none(PROFILE),
  'proxy-cookie-path': none(PROFILE),
  'proxy-redirect-from': none(PROFILE),
  'proxy-redirect-to': none(PROFILE),
  'limit-rate': none(PROFILE),
  'limit-rate-after': none(PROFILE),
  'backend-protocol': unneeded('HTTP and AUTO_HTTP: what HTTPRoute backends speak; HTTPS, GRPCS (BackendTLSPolicy is not served yet), GRPC (a GRPCRoute, not an HTTPRoute) and FCGI are not convertible'),
  'proxy-ssl-secret': none(BACKEND_TLS),
  'proxy-ssl-verify': none(BACKEND_TLS),
  'proxy-ssl-verify-depth': none(BACKEND_TLS),
  'proxy-ssl-name': none(BACKEND_TLS),
  'proxy-ssl-server-name': none(BACKEND_TLS),
  'proxy-ssl-ciphers': none(BACKEND_TLS),
  'proxy-ssl-protocols': none(BACKEND_TLS),
  'fastcgi-index': none('FastCGI backends: HTTPRoute backends speak HTTP'),
  'fastcgi-params-configmap': none('FastCGI backends: HTTPRoute backends speak HTTP'),
  'load-balance': none(BALANCING),
  'upstream-hash-by': none(BALANCING),
  'upstream-hash-by-subset': none(BALANCING),
  'upstream-hash-by-subset-size': none(BALANCING),
  affinity: none(BALANCING),
  'affinity-mode': none(BALANCING),
  'session-cookie-name': none(BALANCING),
  'session-cookie-max-age': none(BALANCING),
  'session-cookie-path': none(BALANCING),
  'session-cookie-domain': none(BALANCING),
  'session-cookie-samesite': none(BALANCING),
  'session-cookie-conditional-samesite-none': none(BALANCING),
  'session-cookie-secure': none(BALANCING),
  'session-cookie-expires': none(BALANCING),
  'session-cookie-change-on-failure': none(BALANCING),
  'session-cookie-partitioned': none(BALANCING),
  'service-upstream': none(BALANCING),
  canary: std(CANARY),
  'canary-weight': std(`${CANARY}: weighted backendRefs (main: canary-weight-total − canary-weight, canary: canary-weight)`),
  'canary-weight-total': std('the total of the weighted backendRefs'),
  'canary-by-header': std(`${CANARY}: header matches ("always" → the canary, "never" → the main Service) ahead of the weighted rule`),
  'canary-by-header-value': std('an Exact header match → the canary'),
  'canary-by-header-pattern': std('a RegularExpression header match → the canary'),
  'canary-by-cookie': std('RegularExpression matches on the Cookie header (the cookie first or after "; "), after the header rules'),
  'whitelist-source-range': plug('an ip-restriction Plugin (403); HTTPRoutes also get the ConfigMap\'s lists, which the Ingress\'s own list replaced'),
  'allowlist-source-range': plug('an ip-restriction Plugin (403)'),
  'denylist-source-range': plug('an ip-restriction Plugin (403)'),
  satisfy: unneeded('"all" is what a rule\'s Plugins do; "any" is not convertible (Plugins are never alternatives of each other: each access check must pass, which is stricter)'),
  'enable-cors': std('the CORS filter with ingress-nginx\'s defaults (a cors Plugin when the filter cannot say it: max age 0); difference: a preflight from an origin not allowed is answered, not proxied'),
  'cors-allow-origin': std('CORS allowOrigins'),
  'cors-allow-methods': std('CORS allowMethods'),
  'cors-allow-headers': std('CORS allowHeaders'),
  'cors-expose-headers': std('CORS exposeHeaders'),
  'cors-allow-credentials': std('CORS allowCredentials (never with the "*" origin, as Portico serves the annotation)'),
  'cors-max-age': std('CORS maxAge'),
  'limit-rps': plug('a rate-limit Plugin per client address, with the burst (limit-burst-multiplier), exempt clients (limit-allowlist) and the ConfigMap\'s limit-req-status-code'),
  'limit-rpm': plug('a rate-limit Plugin, as limit-rps'),
  'limit-burst-multiplier': plug('the burst of the rate-limit Plugin'),
  'limit-whitelist': plug('the exempt clients of the rate-limit Plugin'),
  'limit-allowlist': plug('the exempt clients of the rate-limit Plugin'),
  'limit-connections': none('conn-limit is not a Plugin type: Plugin objects cannot limit the requests in progress'),
  'global-rate-limit': plug('a rate-limit Plugin with policy redis (the ConfigMap\'s Redis and global-rate-limit-status-code)'),
  'global-rate-limit-window': plug('the window of the rate-limit Plugin'),
  'global-rate-limit-key': plug('the key of the rate-limit Plugin'),
  'global-rate-limit-ignored-cidrs': plug('the exempt clients of the rate-limit Plugin'),
  'auth-type': plug('basic: a basic-auth Plugin and a Consumer (with a Secret) per user of auth-secret — users whose hash a Consumer keeps (bcrypt, {SHA}); others are reported (re-hash them); two different auth-secrets in one namespace are not convertible (the Plugin accepts every Consumer of its namespace). digest: not convertible (no Plugin object configures digest-auth and Consumers hold no HA1): the rules fail closed (503) with a Plugin that is not written'),
  'auth-secret': plug('the users of the basic-auth Plugin\'s Consumers'),
  'auth-secret-type': plug('how the users are read (auth-file or auth-map)'),
  'auth-realm': plug('the realm of the basic-auth Plugin'),
  'auth-url': plug('an external-auth Plugin, when the auth service is a Service of the Ingress\'s namespace over HTTP; difference: it receives X-Forwarded-Method/-Uri/-Host/-Proto instead of X-Original-URL and the others, and other answers than 2xx/401/403 are 503; else not convertible and the rules fail closed'),
  'auth-method': plug('the method of the external-auth Plugin (GET, POST or HEAD)'),
  'auth-response-headers': plug('the external-auth Plugin\'s upstreamHeaders'),
  'auth-signin': none(AUTH_ONLY('sign-in redirect')),
  'auth-signin-redirect-param': none(AUTH_ONLY('sign-in redirect')),
  'auth-request-redirect': none(AUTH_ONLY('X-Auth-Request-Redirect')),
  'auth-cache-key': none(AUTH_ONLY('cache')),
  'auth-cache-duration': none(AUTH_ONLY('cache')),
  'auth-always-set-cookie': none(AUTH_ONLY('Set-Cookie pass-through')),
  'auth-proxy-set-headers': none(AUTH_ONLY('headers set on the auth request')),
  'auth-snippet': none(AUTH_ONLY('snippet for the auth request')),
  'auth-keepalive': unneeded('the Plugin\'s auth requests reuse connections as Portico\'s do'),
  'auth-keepalive-requests': unneeded('see auth-keepalive'),
  'auth-keepalive-share-vars': unneeded('see auth-keepalive'),
  'auth-keepalive-timeout': unneeded('see auth-keepalive'),
  'enable-global-auth': unneeded('HTTPRoutes never get the ConfigMap\'s global-auth-url; an Ingress under it gets an external-auth Plugin of its own (or fails closed)'),
  'auth-tls-secret': none(CLIENT_CERTS),
  'auth-tls-verify-client': none(CLIENT_CERTS),
  'auth-tls-verify-depth': none(CLIENT_CERTS),
  'auth-tls-error-page': none(CLIENT_CERTS),
  'auth-tls-match-cn': none(CLIENT_CERTS),
  'auth-tls-pass-certificate-to-upstream': none(CLIENT_CERTS),
  'configuration-snippet': std('header changes with literal values (more_set_headers, add_header always, more_clear_headers, proxy_set_header, more_set_input_headers, more_clear_input_headers) become Request/ResponseHeaderModifier; anything else is not convertible'),
  'server-snippet': std('as configuration-snippet'),
  'enable-modsecurity': none(MODSEC),
  'enable-owasp-core-rules': none(MODSEC),
  'modsecurity-snippet': none(MODSEC),
  'modsecurity-transaction-id': none(MODSEC),
  'custom-http-errors': none(ERRORS),
  'default-backend': none(ERRORS),
  'disable-proxy-intercept-errors': none(ERRORS),
  'custom-headers': std('ResponseHeaderModifier sets the ConfigMap\'s headers as they are now (a later change is not followed); more than 16: a response-headers Plugin'),
  'mirror-target': std('RequestMirror to the Service (a ReferenceGrant in its namespace when another); a host outside the cluster, https, or a path of its own is not convertible; difference: the copy keeps the client\'s Host'),
  'mirror-host': unneeded('RequestMirror sets no Host: only the target\'s own host converts'),
  'mirror-request-body': unneeded('"on": RequestMirror copies the body; "off" is not convertible'),
  'enable-access-log': none(TRACING),
  'enable-opentelemetry': none(TRACING),
  'opentelemetry-operation-name': none(TRACING),
  'opentelemetry-trust-incoming-span': none(TRACING),
  plugins: plug('ExtensionRef filters to the named Plugin objects (they exist already: not written)'),
};

/** The annotations Portico applies: the catalogue's supported and difference rows. */
export const appliedAnnotations = (): string[] => Object.entries(CATALOGUE).filter(([, r]) => r.status !== 'refused').map(([n]) => n);

/** How many applied annotations convert (at least in the usual case), of how many, and of them ingress-nginx's. */
export function conversionCounts(): { applied: number; converted: number; standard: number; plugin: number; unneeded: number; none: number } {
  const names = appliedAnnotations();
  const kinds = names.map((n) => CONVERSIONS[n]?.kind ?? 'none');
  const count = (k: ConversionKind) => kinds.filter((x) => x === k).length;
  return { applied: names.length, converted: names.length - count('none'), standard: count('standard'), plugin: count('plugin'), unneeded: count('unneeded'), none: count('none') };
}

const cell = (s: string) => s.replace(/\|/g, '\\|');
const KIND_TEXT: Record<ConversionKind, string> = { standard: 'standard', plugin: 'Plugin', unneeded: 'nothing needed', none: '**not convertible**' };

/** The mapping table of docs/ingress-nginx.md (tools/readme-reference.ts keeps it current). */
export function conversionsMarkdown(): string {
  const c = conversionCounts();
  const rows = appliedAnnotations().map((n) => {
    const r = CONVERSIONS[n] as ConversionRow;
    const name = CATALOGUE[n]?.origin === 'portico' ? `\`${PORTICO_PREFIX}${n}\`` : `\`${NGINX_PREFIX}${n}\``;
    return `| ${name} | ${KIND_TEXT[r.kind]} | ${cell(r.detail)} |`;
  });
  return [
    `Of the ${c.applied} annotations Portico applies, \`--to gateway-api\` converts **${c.converted}**: ${c.standard} to standard HTTPRoute fields or filters, ${c.plugin} to Portico Plugins (ExtensionRef), ${c.unneeded} need nothing in the usual case; **${c.none}** are not convertible (why below). Refused annotations (not applied by Portico) are never converted.`,
    '',
    '| annotation | becomes | how, and when not |',
    '|---|---|---|',
    ...rows,
  ].join('\n');
}
