import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { accessControlKind } from './access-control.ts';
import { annotationPlugins } from './plugins.ts';
import { ANNOTATIONS, CATALOGUE, NGINX_PREFIX, PORTICO_PREFIX, RISKS, STATUSES, annotationsMarkdown, statusCounts, type AnnotationName } from './table.ts';
import { parseAnnotations } from './parse.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Every `nginx.ingress.kubernetes.io/*` annotation ingress-nginx documents: the 136 of its annotations-risk.md (v1.15.1,
 * generated from its code) and the older names its annotations.md still lists — whitelist-source-range and
 * limit-whitelist (aliases), global-rate-limit*, opentracing and influxdb (since removed from ingress-nginx).
 */
const INGRESS_NGINX = [
  'affinity', 'affinity-canary-behavior', 'affinity-mode', 'allowlist-source-range', 'app-root',
  'auth-always-set-cookie', 'auth-cache-duration', 'auth-cache-key', 'auth-keepalive', 'auth-keepalive-requests',
  'auth-keepalive-share-vars', 'auth-keepalive-timeout', 'auth-method', 'auth-proxy-set-headers', 'auth-realm',
  'auth-request-redirect', 'auth-response-headers', 'auth-secret', 'auth-secret-type', 'auth-signin',
  'auth-signin-redirect-param', 'auth-snippet', 'auth-tls-error-page', 'auth-tls-match-cn',
  'auth-tls-pass-certificate-to-upstream', 'auth-tls-secret', 'auth-tls-verify-client', 'auth-tls-verify-depth',
  'auth-type', 'auth-url', 'backend-protocol', 'canary', 'canary-by-cookie', 'canary-by-header',
  'canary-by-header-pattern', 'canary-by-header-value', 'canary-weight', 'canary-weight-total',
  'client-body-buffer-size', 'configuration-snippet', 'connection-proxy-header', 'cors-allow-credentials',
  'cors-allow-headers', 'cors-allow-methods', 'cors-allow-origin', 'cors-expose-headers', 'cors-max-age',
  'custom-headers', 'custom-http-errors', 'default-backend', 'denylist-source-range',
  'disable-proxy-intercept-errors', 'enable-access-log', 'enable-cors', 'enable-global-auth', 'enable-influxdb',
  'enable-modsecurity', 'enable-opentelemetry', 'enable-opentracing', 'enable-owasp-core-rules',
  'enable-rewrite-log', 'fastcgi-index', 'fastcgi-params-configmap', 'force-ssl-redirect', 'from-to-www-redirect',
  'global-rate-limit', 'global-rate-limit-ignored-cidrs', 'global-rate-limit-key', 'global-rate-limit-window',
  'http2-push-preload', 'influxdb-host', 'influxdb-measurement', 'influxdb-port', 'influxdb-server-name',
  'limit-allowlist', 'limit-burst-multiplier', 'limit-connections', 'limit-rate', 'limit-rate-after', 'limit-rpm',
  'limit-rps', 'limit-whitelist', 'load-balance', 'mirror-host', 'mirror-request-body', 'mirror-target',
  'modsecurity-snippet', 'modsecurity-transaction-id', 'opentelemetry-operation-name',
  'opentelemetry-trust-incoming-span', 'opentracing-trust-incoming-span', 'permanent-redirect',
  'permanent-redirect-code', 'preserve-trailing-slash', 'proxy-body-size', 'proxy-buffer-size', 'proxy-buffering',
  'proxy-buffers-number', 'proxy-busy-buffers-size', 'proxy-connect-timeout', 'proxy-cookie-domain',
  'proxy-cookie-path', 'proxy-http-version', 'proxy-max-temp-file-size', 'proxy-next-upstream',
  'proxy-next-upstream-timeout', 'proxy-next-upstream-tries', 'proxy-read-timeout', 'proxy-redirect-from',
  'proxy-redirect-to', 'proxy-request-buffering', 'proxy-send-timeout', 'proxy-ssl-ciphers', 'proxy-ssl-name',
  'proxy-ssl-protocols', 'proxy-ssl-secret', 'proxy-ssl-server-name', 'proxy-ssl-verify', 'proxy-ssl-verify-depth',
  'relative-redirects', 'rewrite-target', 'satisfy', 'server-alias', 'server-snippet', 'service-upstream',
  'session-cookie-change-on-failure', 'session-cookie-conditional-samesite-none', 'session-cookie-domain',
  'session-cookie-expires', 'session-cookie-max-age', 'session-cookie-name', 'session-cookie-path',
  'session-cookie-samesite', 'session-cookie-secure', 'ssl-ciphers', 'ssl-passthrough', 'ssl-prefer-server-ciphers',
  'ssl-redirect', 'stream-snippet', 'temporal-redirect', 'temporal-redirect-code', 'upstream-hash-by',
  'upstream-hash-by-subset', 'upstream-hash-by-subset-size', 'upstream-vhost', 'use-port-in-redirects', 'use-regex',
  'whitelist-source-range', 'x-forwarded-prefix',
];

/** ingress-nginx's risk level per annotation (annotations-risk.md). */
const RISK_TABLE: Record<string, string> = {
  Low: `
    affinity affinity-canary-behavior auth-always-set-cookie auth-keepalive auth-keepalive-requests
    auth-keepalive-share-vars auth-keepalive-timeout auth-method auth-secret-type
    auth-tls-pass-certificate-to-upstream auth-tls-verify-depth auth-type backend-protocol canary canary-weight
    canary-weight-total client-body-buffer-size connection-proxy-header cors-allow-credentials cors-max-age
    custom-http-errors default-backend disable-proxy-intercept-errors enable-access-log enable-cors
    enable-global-auth enable-modsecurity enable-opentelemetry enable-owasp-core-rules enable-rewrite-log
    from-to-www-redirect http2-push-preload limit-allowlist limit-burst-multiplier limit-connections limit-rate
    limit-rate-after limit-rpm limit-rps load-balance mirror-request-body opentelemetry-trust-incoming-span
    permanent-redirect-code proxy-buffer-size proxy-buffering proxy-buffers-number proxy-busy-buffers-size
    proxy-connect-timeout
    proxy-http-version proxy-max-temp-file-size proxy-next-upstream-timeout proxy-next-upstream-tries
    proxy-read-timeout proxy-request-buffering proxy-send-timeout relative-redirects proxy-ssl-protocols
    proxy-ssl-server-name
    proxy-ssl-verify proxy-ssl-verify-depth satisfy service-upstream session-cookie-change-on-failure
    session-cookie-conditional-samesite-none session-cookie-samesite
    session-cookie-secure ssl-ciphers ssl-passthrough ssl-prefer-server-ciphers ssl-redirect temporal-redirect-code
    upstream-hash-by-subset upstream-hash-by-subset-size upstream-vhost use-port-in-redirects use-regex`,
  Medium: `
    affinity-mode allowlist-source-range app-root auth-cache-duration auth-cache-key auth-proxy-set-headers
    auth-realm auth-request-redirect auth-response-headers auth-secret auth-signin-redirect-param auth-tls-secret
    auth-tls-verify-client canary-by-cookie canary-by-header canary-by-header-pattern canary-by-header-value
    cors-allow-headers cors-allow-methods cors-allow-origin cors-expose-headers custom-headers
    denylist-source-range fastcgi-index fastcgi-params-configmap force-ssl-redirect opentelemetry-operation-name
    permanent-redirect preserve-trailing-slash proxy-body-size proxy-cookie-domain proxy-cookie-path
    proxy-next-upstream proxy-redirect-from proxy-redirect-to proxy-ssl-ciphers proxy-ssl-secret rewrite-target
    session-cookie-domain session-cookie-expires session-cookie-max-age session-cookie-name session-cookie-path
    temporal-redirect x-forwarded-prefix`,
  High: `
    auth-signin auth-tls-error-page auth-tls-match-cn auth-url mirror-host mirror-target modsecurity-transaction-id
    proxy-ssl-name server-alias upstream-hash-by`,
  Critical: `
    auth-snippet configuration-snippet modsecurity-snippet server-snippet stream-snippet`,
};
const riskOf = new Map(Object.entries(RISK_TABLE).flatMap(([level, names]) => names.split(/\s+/).filter(Boolean).map((n) => [n, level.toLowerCase()] as const)));

test('the table has a row for every ingress-nginx annotation, and no other ingress-nginx row', () => {
  assert.ok(INGRESS_NGINX.length >= 131);
  assert.equal(new Set(INGRESS_NGINX).size, INGRESS_NGINX.length);
  const ours = Object.entries(CATALOGUE).filter(([, r]) => r.origin === 'ingress-nginx').map(([n]) => n).sort();
  assert.deepEqual(ours, [...INGRESS_NGINX].sort());
  assert.equal(riskOf.size, 136);
  for (const n of riskOf.keys()) assert.ok(INGRESS_NGINX.includes(n), n);
});

/** Removed annotations Portico supports: their level in the last ingress-nginx table that had them (1.11's annotations-risk.md). */
const REMOVED_RISK: Record<string, string> = {
  'global-rate-limit': 'low',
  'global-rate-limit-window': 'low',
  'global-rate-limit-key': 'high',
  'global-rate-limit-ignored-cidrs': 'medium',
};

test('every row has a status, a risk (ingress-nginx\'s level) and a scope; texts are one line', () => {
  for (const [n, r] of Object.entries(CATALOGUE)) {
    assert.ok(STATUSES.includes(r.status), `${n}: status`);
    assert.ok(RISKS.includes(r.risk), `${n}: risk`);
    assert.ok(['location', 'server', 'backend', 'ingress'].includes(r.scope), `${n}: scope`);
    const expected = riskOf.get(n) ?? (n === 'whitelist-source-range' ? riskOf.get('allowlist-source-range') : n === 'limit-whitelist' ? riskOf.get('limit-allowlist') : undefined);
    if (expected) assert.equal(r.risk, expected, `${n}: ingress-nginx's risk`);
    else if (r.origin === 'ingress-nginx') assert.ok(r.removed && r.risk === (REMOVED_RISK[n] ?? 'low'), `${n}: only removed annotations lack ingress-nginx's level`);
    if (r.status === 'refused') assert.match(r.refusedWhy ?? '', /^[^\n]{10,200}$/, `${n}: why, in one line`);
    else {
      assert.ok(r.schema, `${n}: a supported row has a schema`);
      assert.equal(r.refusedWhy, undefined, n);
    }
    if (r.status === 'difference') assert.match(r.difference ?? '', /^[^\n]{10,200}$/, `${n}: the difference, in one line`);
    else assert.equal(r.difference, undefined, n);
  }
  const c = statusCounts();
  assert.equal(c.supported + c.difference + c.refused, INGRESS_NGINX.length);
  assert.ok(c.supported + c.difference >= 48, 'nothing that worked before was dropped');
});

/** A valid and an invalid value for every annotation Portico parses. */
const VALUES: Record<AnnotationName, [valid: string, invalid: string]> = {
  'use-regex': ['true', 'yes'],
  'rewrite-target': ['/$2', '/$host$1'],
  'app-root': ['/app1', 'https://example.com/app'],
  'preserve-trailing-slash': ['true', 'keep'],
  'from-to-www-redirect': ['true', 'www'],
  'ssl-redirect': ['false', 'no'],
  'ssl-passthrough': ['true', 'on'],
  'force-ssl-redirect': ['true', '1'],
  'proxy-body-size': ['8m', '8 MB'],
  'proxy-connect-timeout': ['5', '5m'],
  'proxy-read-timeout': ['60s', 'sixty'],
  'proxy-send-timeout': ['60', '-1'],
  'load-balance': ['ewma', 'least_conn'],
  'upstream-hash-by': ['$host$request_uri', '$host $request_uri'],
  affinity: ['cookie', 'ip'],
  'affinity-mode': ['persistent', 'sticky'],
  'session-cookie-name': ['route', 'bad name'],
  'session-cookie-max-age': ['3600', '-5'],
  'session-cookie-path': ['/app', '/app;Secure'],
  'session-cookie-domain': ['.example.com', 'example.com;x=1'],
  'session-cookie-samesite': ['Lax', 'lax'],
  'session-cookie-conditional-samesite-none': ['true', 'yes'],
  'session-cookie-secure': ['true', 'on'],
  'session-cookie-partitioned': ['true', 'yes'],
  satisfy: ['any', 'some'],
  'limit-connections': ['5', '0'],
  'custom-headers': ['team/security-headers', 'team/x;y'],
  'auth-proxy-set-headers': ['auth-headers', 'auth headers'],
  'use-port-in-redirects': ['true', 'yes'],
  'upstream-hash-by-subset': ['true', 'subset'],
  'upstream-hash-by-subset-size': ['5', '0'],
  'server-alias': ['b.example.com, *.c.example.com', 'b.example.com;evil'],
  'ssl-ciphers': ['ECDHE-RSA-AES128-GCM-SHA256:!aNULL:@STRENGTH', 'HIGH; ssl_protocols SSLv3'],
  'session-cookie-expires': ['172800', '2 days'],
  'session-cookie-change-on-failure': ['false', 'maybe'],
  'service-upstream': ['true', 'clusterip'],
  canary: ['true', 'maybe'],
  'canary-weight': ['10', '10.5'],
  'canary-weight-total': ['1000', '0'],
  'canary-by-header': ['X-Canary', 'X Canary'],
  'canary-by-header-value': ['always-on', 'caf\u00e9'],
  'canary-by-header-pattern': ['^v[0-9]+$', '('],
  'whitelist-source-range': ['10.0.0.0/8', ' , '],
  'allowlist-source-range': ['10.0.0.0/8, 192.168.0.0/16', ','],
  'denylist-source-range': ['192.0.2.0/24', ''],
  'enable-cors': ['true', 'on'],
  'cors-allow-origin': ['https://a.example', ','],
  'cors-allow-methods': ['GET, POST', ''],
  'cors-allow-headers': ['X-Token', ','],
  'cors-expose-headers': ['X-Total', ','],
  'cors-allow-credentials': ['false', 'nope'],
  'cors-max-age': ['600', '99999999'],
  'limit-rps': ['10', '0'],
  'global-rate-limit': ['100', '0'],
  'global-rate-limit-window': ['1m', '500ms'],
  'global-rate-limit-key': ['${remote_addr}-${http_x_api_client}', '$request_body'],
  'global-rate-limit-ignored-cidrs': ['10.0.0.0/8, 192.168.0.1', ''],
  'limit-rpm': ['600', 'many'],
  'limit-burst-multiplier': ['3', '0'],
  'limit-whitelist': ['10.0.0.0/8', ','],
  'limit-allowlist': ['10.0.0.0/8', ''],
  'auth-type': ['digest', 'ntlm'],
  'auth-secret': ['basic-auth', 'Bad_Name'],
  'auth-secret-type': ['auth-map', 'htpasswd'],
  'auth-realm': ['Restricted', 'say "hi"'],
  'permanent-redirect': ['https://new.example.com/', `https://x.example/${'a'.repeat(2048)}`],
  'permanent-redirect-code': ['308', '200'],
  'temporal-redirect': ['https://new.example.com/maintenance', `https://x.example/${'a'.repeat(2048)}`],
  'temporal-redirect-code': ['307', '400'],
  'x-forwarded-prefix': ['/app', 'x'.repeat(1025)],
  'upstream-vhost': ['internal.example.com', 'x'.repeat(254)],
  'backend-protocol': ['FCGI', 'UWSGI'],
  'fastcgi-index': ['index.php', 'index.php;'],
  'fastcgi-params-configmap': ['php-params', 'Bad_Name'],
  plugins: ['auth,limit', 'Bad_Plugin'],
  'canary-by-cookie': ['canary', 'bad cookie'],
  'configuration-snippet': ['more_set_headers "X-A: b";', 'x'.repeat(70_000)],
  'server-snippet': ['set $tenant "a";', 'x'.repeat(70_000)],
  'auth-snippet': ['proxy_set_header X-A b;', 'x'.repeat(70_000)],
  'auth-url': ['http://oauth2-proxy.auth.svc.cluster.local:4180/oauth2/auth', 'http://auth.example.com/check;\nproxy_pass http://evil'],
  'auth-method': ['POST', 'get'],
  'auth-signin': ['https://$host/oauth2/start?rd=$escaped_request_uri', 'https://$http_x_target/start'],
  'auth-signin-redirect-param': ['redirect_to', 'rd=x'],
  'auth-response-headers': ['X-Auth-Request-User, X-Auth-Request-Email', 'X-User; X-Bad'],
  'auth-request-redirect': ['$scheme://$host$request_uri', '$http_referer'],
  'auth-cache-key': ['$remote_user$http_authorization', 'static-key'],
  'auth-cache-duration': ['200 202 10m, 401 5m', '200 forever'],
  'auth-always-set-cookie': ['true', 'always'],
  'auth-keepalive': ['10', '-1'],
  'auth-keepalive-requests': ['100', 'many'],
  'auth-keepalive-share-vars': ['false', 'no'],
  'auth-keepalive-timeout': ['60', '1m'],
  'enable-global-auth': ['false', 'off'],
  'client-body-buffer-size': ['1000', '1k;'],
  'connection-proxy-header': ['keep-alive', 'close; proxy_pass http://evil'],
  'proxy-buffering': ['on', 'yes'],
  'proxy-buffer-size': ['8k', '8k buffers'],
  'proxy-buffers-number': ['8', '2'],
  'proxy-max-temp-file-size': ['1024m', '1t'],
  'proxy-request-buffering': ['off', 'stream'],
  'proxy-http-version': ['1.0', '2'],
  'proxy-cookie-domain': ['localhost example.org', '~^(.*)$ $1'],
  'proxy-cookie-path': ['/ /app', '/ /app;'],
  'proxy-redirect-from': ['http://internal.local/', 'http://a/ http://b/'],
  'proxy-redirect-to': ['https://public.example.com/', '$scheme://$host/'],
  'proxy-next-upstream': ['error timeout http_502', 'error; return 200'],
  'proxy-next-upstream-timeout': ['10', 'ten'],
  'proxy-next-upstream-tries': ['5', '101'],
  'proxy-ssl-secret': ['default/backend-client', 'other/ns/name'],
  'proxy-ssl-verify': ['on', 'yes'],
  'proxy-ssl-verify-depth': ['2', '101'],
  'proxy-ssl-name': ['backend.internal', '$host'],
  'proxy-ssl-server-name': ['off', 'enable'],
  'proxy-ssl-ciphers': ['HIGH:!aNULL:!MD5', 'HIGH;'],
  'proxy-ssl-protocols': ['TLSv1.2 TLSv1.3', 'SSLv3'],
  'limit-rate': ['100', '100k'],
  'limit-rate-after': ['1024', '-1'],
  'enable-access-log': ['false', 'off'],
  'enable-opentelemetry': ['true', 'on'],
  'opentelemetry-trust-incoming-span': ['false', 'no'],
  'opentelemetry-operation-name': ['checkout-api', 'HTTP $request_method'],
  'custom-http-errors': ['404,503', '404;return 200'],
  'default-backend': ['error-pages', 'other/error-pages'],
  'disable-proxy-intercept-errors': ['true', 'on'],
  'mirror-target': ['https://shadow.example.com$request_uri', 'https://shadow.example.com$host'],
  'mirror-host': ['shadow.example.com', 'shadow.example.com;'],
  'mirror-request-body': ['off', 'none'],
  'auth-tls-secret': ['ca-secret', 'Bad_Name'],
  'auth-tls-verify-client': ['optional_no_ca', 'required'],
  'auth-tls-verify-depth': ['2', '11'],
  'auth-tls-error-page': ['https://example.com/cert-error', 'https://example.com/$host'],
  'auth-tls-match-cn': ['CN=client1', 'CN=a;b'],
  'auth-tls-pass-certificate-to-upstream': ['true', 'yes'],
  'enable-modsecurity': ['true', 'yes'],
  'enable-owasp-core-rules': ['false', 'on'],
  'modsecurity-transaction-id': ['web-$request_id', '$request_id"; pwn'],
  'modsecurity-snippet': ['SecRuleEngine On', 'x'.repeat(70_000)],
};

test('every parsed row: a valid value is read (under both prefixes), an invalid one is reported, never applied', () => {
  assert.deepEqual(Object.keys(VALUES).sort(), Object.keys(ANNOTATIONS).sort());
  for (const [n, [valid, invalid]] of Object.entries(VALUES) as [AnnotationName, [string, string]][]) {
    for (const prefix of [NGINX_PREFIX, PORTICO_PREFIX]) {
      const ok = parseAnnotations({ [`${prefix}${n}`]: valid });
      assert.notEqual(ok.values[n], undefined, `${prefix}${n}=${valid}`);
      assert.deepEqual([ok.errors, ok.unsupported, ok.accessControl], [[], [], []], `${prefix}${n}=${valid}`);
    }
    const bad = parseAnnotations({ [`${NGINX_PREFIX}${n}`]: invalid });
    assert.equal(bad.values[n], undefined, `${n}=${invalid.slice(0, 30)} must not be applied`);
    if (CATALOGUE[n]?.access) assert.equal(bad.accessControl.length, 1, `${n}: invalid access control fails closed`);
    else assert.equal(bad.errors.length, 1, `${n}: an invalid value is reported`);
  }
});

test('refused rows are never parsed: an UnsupportedAnnotation each; access control fails closed', () => {
  for (const [n, r] of Object.entries(CATALOGUE)) {
    if (r.schema) continue;
    assert.equal(r.status, 'refused', n);
    const p = parseAnnotations({ [`${NGINX_PREFIX}${n}`]: 'x' });
    assert.deepEqual(p.unsupported, [`${NGINX_PREFIX}${n}`], n);
    assert.deepEqual(p.values, {}, n);
    assert.equal(p.accessControl.length, r.access ? 1 : 0, `${n}: fails closed iff access control`);
  }
});

test('access-control.ts follows the table\'s access column', () => {
  for (const [n, r] of Object.entries(CATALOGUE)) {
    if (n.endsWith('-snippet') && n !== 'auth-snippet') continue; // snippets: by their content
    assert.equal(accessControlKind(n, 'x'), r.access ?? null, n);
  }
  // Every auth-* annotation is access control (basic, external or client-certificate authentication).
  for (const n of Object.keys(CATALOGUE).filter((x) => x.startsWith('auth-'))) assert.ok(CATALOGUE[n]?.access, n);
  // An auth-* name ingress-nginx may add later still fails closed.
  assert.equal(accessControlKind('auth-future-option', 'x'), 'authentication');
});

test('affinity cookie attributes refuse anything that could end an attribute or the header', () => {
  const bad: Record<string, string[]> = {
    'session-cookie-path': ['/a;b', '/a\nb', '/a\r\nSet-Cookie: x=1', '/a"b', "/a'b", '/a\u0000b', '/a b', '/a,b', 'app', '/a\\b', `/${'x'.repeat(256)}`],
    'session-cookie-domain': ['a.example;b', 'a\nexample', '"example.com"', "'example.com'", 'exa\u0000mple.com', 'a b.com', '-a.example', 'a..example', '*.example.com'],
    'session-cookie-samesite': ['Lax;', 'None\n', 'Strict; Secure', '"Lax"', 'Lax\u0000', 'none'],
    'session-cookie-expires': ['1;', '1\n2', '"60"', '60\u0000', '315360001', '-1'],
  };
  for (const [n, values] of Object.entries(bad)) {
    for (const v of values) {
      const r = parseAnnotations({ [`nginx.ingress.kubernetes.io/${n}`]: v });
      assert.equal(r.errors.length, 1, `${n}: ${JSON.stringify(v)} refused`);
      assert.equal((r.values as Record<string, unknown>)[n], undefined, `${n}: ${JSON.stringify(v)} not applied`);
    }
  }
  const ok = parseAnnotations({
    'nginx.ingress.kubernetes.io/session-cookie-path': '/shop/cart-1_%7E',
    'nginx.ingress.kubernetes.io/session-cookie-domain': 'Shop.Example.com',
    'nginx.ingress.kubernetes.io/session-cookie-samesite': 'None',
    'nginx.ingress.kubernetes.io/session-cookie-expires': '0',
  });
  assert.deepEqual(ok.errors, []);
  assert.deepEqual(ok.values, { 'session-cookie-path': '/shop/cart-1_%7E', 'session-cookie-domain': 'shop.example.com', 'session-cookie-samesite': 'None', 'session-cookie-expires': 0 });
});

test('every supported or difference row is consumed by the code that applies it', () => {
  // The translation is split over reconcilers/translate/ (translate.ts, draft.ts, phases/...) and the kinds' claim
  // processors (reconcilers/kinds/<kind>/processor.ts): every module of it.
  const translation = readdirSync(path.join(root, 'reconcilers/translate'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.includes('test-helpers'))
    .sort()
    .map((f) => `reconcilers/translate/${f}`);
  const processors = readdirSync(path.join(root, 'reconcilers/kinds'), { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(path.join(root, 'reconcilers/kinds', e.name, 'processor.ts')))
    .map((e) => `reconcilers/kinds/${e.name}/processor.ts`)
    .sort();
  // The group modules (annotations/groups/) apply their annotations: read without their rows, which name them all.
  const groups = readdirSync(path.join(root, 'reconcilers/annotations/groups'))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .sort()
    .map((f) => `reconcilers/annotations/groups/${f}`);
  const withoutRows = (src: string) => src.replace(/^export const rows = \{\n[\s\S]*?\n\};\n/m, '');
  const consumers = [
    ...translation,
    ...processors,
    ...groups,
    'reconcilers/annotations/plugins.ts',
    'reconcilers/annotations/auth-tls.ts',
    'reconcilers/translate/risk.ts',
    'reconcilers/model/normalize.ts',
  ].map((f) => withoutRows(readFileSync(path.join(root, f), 'utf8'))).join('\n');
  for (const [n, r] of Object.entries(CATALOGUE)) {
    if (r.status === 'refused') continue;
    assert.ok(consumers.includes(`'${n}'`) || consumers.includes(`.${n} `) || consumers.includes(`.${n}?`) || consumers.includes(`.${n})`), `${n} is read by no consumer`);
  }
});

test('every applied ingress-nginx annotation is set by some end-to-end test (e2e/*.e2e.test.ts)', () => {
  // A name counts when an e2e file writes it as an annotation key: after the prefix (or a \`\${N}\`-style prefix
  // variable), ending the string or followed by ":" in inline YAML.
  const dir = path.join(root, 'e2e');
  const e2e = readdirSync(dir).filter((f) => f.endsWith('.e2e.test.ts')).map((f) => readFileSync(path.join(dir, f), 'utf8')).join('\n');
  const missing = Object.entries(CATALOGUE)
    .filter(([, r]) => r.status !== 'refused' && r.origin === 'ingress-nginx')
    .map(([n]) => n)
    .filter((n) => !new RegExp(`(nginx\\.ingress\\.kubernetes\\.io/|\\})${n.replace(/[-.]/g, '\\$&')}[\`'":]`).test(e2e));
  // Not yet in an e2e test — the test node has no FastCGI server image — but set against a real php-fpm behind a real
  // nginx by the file named (which must name them).
  // auth-snippet and ssl-ciphers: against a real auth service / real TLS clients behind a real nginx (the e2e suite
  // does not set them yet).
  const realNginxOnly: Record<string, string> = { 'auth-snippet': 'reconcilers/nginx-driver/nginx/auth-snippet.nginx.test.ts', 'ssl-ciphers': 'reconcilers/nginx-driver/nginx/ssl-ciphers.nginx.test.ts', 'fastcgi-index': 'reconcilers/nginx-driver/nginx/fastcgi.nginx.test.ts', 'fastcgi-params-configmap': 'reconcilers/nginx-driver/nginx/fastcgi.nginx.test.ts' };
  for (const [n, f] of Object.entries(realNginxOnly)) assert.match(readFileSync(path.join(root, f), 'utf8'), new RegExp(`\\}${n}\``), `${f} sets ${n}`);
  assert.deepEqual(missing.filter((n) => !(n in realNginxOnly)), []);
});

test('limit-allowlist (ingress-nginx\'s current name) exempts clients, and wins over limit-whitelist', () => {
  const plugins = (a: Record<string, string>) => annotationPlugins(parseAnnotations(a).values).plugins;
  const exempt = (a: Record<string, string>) => plugins(a).map((p) => ('config' in p ? (p.config as { exempt?: string[] }).exempt : undefined));
  assert.deepEqual(exempt({ [`${NGINX_PREFIX}limit-rps`]: '5', [`${NGINX_PREFIX}limit-allowlist`]: '10.0.0.0/8' }), [['10.0.0.0/8']]);
  assert.deepEqual(exempt({ [`${NGINX_PREFIX}limit-rps`]: '5', [`${NGINX_PREFIX}limit-allowlist`]: '10.0.0.0/8', [`${NGINX_PREFIX}limit-whitelist`]: '192.0.2.0/24' }), [['10.0.0.0/8']]);
  assert.deepEqual(exempt({ [`${NGINX_PREFIX}limit-rps`]: '5', [`${NGINX_PREFIX}limit-whitelist`]: '192.0.2.0/24' }), [['192.0.2.0/24']]);
  assert.match(annotationPlugins(parseAnnotations({ [`${NGINX_PREFIX}limit-allowlist`]: '10.0.0.0/8' }).values).problems.join(), /limit-allowlist: has no effect without/);
});

test('the generated reference has a status column and the counts per status, and docs/reference/annotations.md shows them', () => {
  const md = annotationsMarkdown();
  const c = statusCounts();
  assert.match(md, /\| annotation \| status \| scope \| risk \|/);
  for (const s of STATUSES) assert.ok(md.includes(`**${c[s]} ${s === 'difference' ? 'with a difference' : s}**`), s);
  for (const n of INGRESS_NGINX) assert.ok(md.includes(`\`${NGINX_PREFIX}${n}\` |`), n);
  assert.match(md, /Traefik's kubernetesIngressNGINX provider/);
  const doc = readFileSync(path.join(root, 'docs/reference/annotations.md'), 'utf8');
  assert.ok(doc.includes(md), 'docs/reference/annotations.md is regenerated (node tools/readme-reference.ts)');
});
