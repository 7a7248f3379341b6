// ingress-nginx's external authentication annotations (auth-url.ts, plugins.ts): every schema with valid values and
// with the injection payloads that were dangerous in ingress-nginx's template — refused, never repaired.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { authHeaderListSchema, authMethodSchema, authUrlSchema, cacheDurationSchema, cacheKeySchema, nginxSeconds, parseAuthUrl, redirectParamSchema, requestRedirectSchema, signinLocation, signinSchema } from './auth-url.ts';
import { annotationPlugins, externalAuthPlugin, globalAuthSpec, noAuthLocation, type GlobalAuthKeys } from './plugins.ts';
import { NGINX_PREFIX } from './table.ts';
import { parseAnnotations } from './parse.ts';

/** Payloads that would have broken out of a directive, a quoted string or a header in ingress-nginx. */
const INJECTIONS = [
  ';',
  '}',
  '\n',
  '\r\n',
  '#',
  '"',
  "'",
  '\\',
  ' ',
  '\0',
  '\u2028',
  '\u2029',
  '\u0085',
  '{',
  '`',
  '<',
];

test('auth-url: http(s) URLs; a Service DNS name is a Service target, any other host a host, an IP literal an address', () => {
  const ok = (s: string) => {
    const r = parseAuthUrl(s);
    assert.ok(r.ok, `${s}: ${r.ok ? '' : r.error}`);
    return r.url;
  };
  assert.deepEqual(ok('http://oauth2-proxy.auth.svc.cluster.local:4180/oauth2/auth'), {
    url: 'http://oauth2-proxy.auth.svc.cluster.local:4180/oauth2/auth',
    scheme: 'http',
    host: 'oauth2-proxy.auth.svc.cluster.local',
    port: 4180,
    uri: '/oauth2/auth',
    target: { kind: 'service', service: 'oauth2-proxy', namespace: 'auth', port: 4180 },
  });
  assert.deepEqual(ok('https://authz.team.svc/check?scope=read').target, { kind: 'service', service: 'authz', namespace: 'team', port: 443 });
  assert.deepEqual(ok('HTTPS://Auth.Example.COM').target, { kind: 'host', host: 'auth.example.com', port: 443 });
  assert.equal(ok('https://auth.example.com').uri, '/');
  assert.equal(ok('http://auth.example.com?x=1').uri, '/?x=1');
  assert.deepEqual(ok('http://10.1.2.3:9000/v').target, { kind: 'ip', address: '10.1.2.3', port: 9000 });
  assert.deepEqual(ok('http://[2001:db8::1]:81/v').target, { kind: 'ip', address: '2001:db8::1', port: 81 });
  assert.equal(ok('http://a.example/p%20q/~x').uri, '/p%20q/~x');
});

test('auth-url: refused — other schemes, user info, fragments, variables, bad hosts and ports, and every injection payload', () => {
  const bad = [
    '',
    'auth.example.com/check',
    'ftp://auth.example.com/',
    'file:///etc/passwd',
    'javascript:alert(1)',
    '//auth.example.com/',
    'http://user:pw@auth.example.com/',
    'http://auth.example.com/#frag',
    'http://$host:8080/auth',
    'http://$remote_addr/auth',
    'http://x$host/auth',
    'http://$host.evil.example/auth',
    'http://user@$host/auth',
    'http://$host/../admin',
    'http://$host/oauth2/./auth',
    'http://$host//oauth2/auth',
    'http://$host/oauth2%2fauth',
    'http://$host/auth$uri',
    'http://$host/auth#x',
    'http://auth.example.com/$document_root',
    'http://auth.example.com/?u=$request_body',
    'http://auth.example.com/?u=$upstream_http_x',
    'http://auth.example.com/?u=$',
    'http://auth.example.com/?u=${request_uri',
    'http://auth.example.com:0/',
    'http://auth.example.com:65536/',
    'http://-bad-.example/',
    'http://auth_example.com/',
    'http://[::1/',
    'http://auth.example.com/%zz',
    `http://auth.example.com/${'a'.repeat(2100)}`,
    'http://auth.example.com/check;\nproxy_pass http://evil',
    'http://auth.example.com/x content_by_lua_block { os.exit() }',
    'http://auth.example.com/x;access_by_lua "x"',
  ];
  for (const s of bad) assert.equal(authUrlSchema.safeParse(s).success, false, JSON.stringify(s));
  for (const p of INJECTIONS) {
    assert.equal(authUrlSchema.safeParse(`http://auth.example.com/a${p}b`).success, false, `path with ${JSON.stringify(p)}`);
    assert.equal(authUrlSchema.safeParse(`http://auth.exa${p}mple.com/`).success, false, `host with ${JSON.stringify(p)}`);
  }
  for (const p of INJECTIONS) {
    assert.equal(authUrlSchema.safeParse(`https://$host/oauth2/auth?rd=$escaped_request_uri${p}x`).success, false, `own-host query with ${JSON.stringify(p)}`);
    assert.equal(authUrlSchema.safeParse(`https://$host${p}/oauth2/auth`).success, false, `own-host authority with ${JSON.stringify(p)}`);
  }
  const err = (s: string) => { const r = parseAuthUrl(s); return r.ok ? '' : r.error; };
  assert.match(err('http://$remote_addr/auth'), /only nginx variables the auth URL's host may be are \$host, \$http_host and \$best_http_host/);
  assert.match(err('http://$host/auth$uri'), /path must be literal \(variables only in the query\)/);
});

test('auth-url: the request\'s own host ($host, $http_host, $best_http_host) and variables in the path and query, as ingress-nginx\'s oauth2-proxy example', () => {
  const ok = (s: string) => {
    const r = parseAuthUrl(s);
    assert.ok(r.ok, `${s}: ${r.ok ? '' : r.error}`);
    return r.url;
  };
  assert.deepEqual(ok('https://$host/oauth2/auth'), { url: 'https://$host/oauth2/auth', scheme: 'https', host: '', port: 443, uri: '/oauth2/auth', target: { kind: 'own-host' } });
  for (const h of ['$http_host', '${host}', '$best_http_host', '${best_http_host}']) assert.deepEqual(ok(`http://${h}/oauth2/auth`).target, { kind: 'own-host' });
  assert.deepEqual(ok('https://$host/oauth2/auth?rd=$escaped_request_uri&m=${request_method}'), {
    url: 'https://$host/oauth2/auth?rd=$escaped_request_uri&m=${request_method}',
    scheme: 'https',
    host: '',
    port: 443,
    uri: '/oauth2/auth?rd=$escaped_request_uri&m=$request_method',
    uriParts: ['/oauth2/auth?rd=', { v: 'escaped_request_uri' }, '&m=', { v: 'request_method' }],
    target: { kind: 'own-host' },
  });
  // A literal host keeps its target; variables may then sit in the path too (filled in and percent-encoded by Lua).
  const lit = ok('http://authz.team.svc:8080/check$request_uri?h=$server_name&a=$arg_token&c=$cookie_s&x=$http_x_team&s=$pass_access_scheme');
  assert.deepEqual(lit.target, { kind: 'service', service: 'authz', namespace: 'team', port: 8080 });
  assert.deepEqual(lit.uriParts, ['/check', { v: 'request_uri' }, '?h=', { v: 'host' }, '&a=', { v: 'arg_token' }, '&c=', { v: 'cookie_s' }, '&x=', { v: 'http_x_team' }, '&s=', { v: 'scheme' }]);
  assert.equal(ok('http://auth.example.com/v').uriParts, undefined, 'no variables: no template');
});

test('auth-method: ingress-nginx\'s methods, exactly', () => {
  for (const m of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE']) assert.ok(authMethodSchema.safeParse(m).success, m);
  for (const m of ['get', 'PROPFIND', '', 'GET;', 'GET\nX', 'GET POST', ...INJECTIONS.map((p) => `G${p}ET`)]) assert.equal(authMethodSchema.safeParse(m).success, false, JSON.stringify(m));
});

test('auth-response-headers: header names ([A-Za-z0-9_-]), lower-cased, de-duplicated; framing headers and Host refused', () => {
  assert.deepEqual(authHeaderListSchema.parse('X-Auth-Request-User, X-Auth-Request-Email,x-auth-request-user, , X_Legacy'), ['x-auth-request-user', 'x-auth-request-email', 'x_legacy']);
  for (const v of ['Content-Length', 'Host', 'Transfer-Encoding', 'Connection', 'X-A:b', 'X A', ...INJECTIONS.map((p) => `X-A${p}B`)]) {
    assert.equal(authHeaderListSchema.safeParse(v).success, false, JSON.stringify(v));
  }
  assert.equal(authHeaderListSchema.safeParse(Array.from({ length: 65 }, (_, i) => `X-H${i}`).join(',')).success, false, 'at most 64');
});

test('auth-signin: a literal host or the request\'s own ($host, $http_host), variables from the allowlist after it; never an open redirect', () => {
  assert.deepEqual(signinSchema.parse('https://auth.example.com/oauth2/start?rd=$escaped_request_uri'), {
    parts: ['https://auth.example.com', '/oauth2/start?rd=', { v: 'escaped_request_uri' }],
    query: 'rd=$escaped_request_uri',
  });
  assert.deepEqual(signinSchema.parse('https://$host/oauth2/start').parts, ['https://', { v: 'host' }, '/oauth2/start']);
  assert.deepEqual(signinSchema.parse('https://${best_http_host}/start?x=${request_uri}').parts, ['https://', { v: 'http_host' }, '/start?x=', { v: 'request_uri' }]);
  assert.deepEqual(signinSchema.parse('/oauth2/start').parts, ['/oauth2/start']);
  assert.deepEqual(signinSchema.parse('https://login.example:8443').parts, ['https://login.example:8443', '/']);
  const bad = [
    'https://$http_x_forwarded_host/start',
    'https://$host.evil.example/start',
    'https://evil.example$request_uri',
    'https://$arg_next/',
    'https://auth.example.com/start?rd=$http_referer',
    'https://auth.example.com/start?rd=$arg_next',
    'https://user@auth.example.com/',
    'https://auth.example.com/start#x',
    '//evil.example/start',
    'javascript:alert(1)',
    'ftp://auth.example.com/',
    'https://auth.example.com/$',
    'https://auth.example.com/${host',
    'https://auth.example.com/%g1',
    'start',
  ];
  for (const s of bad) assert.equal(signinSchema.safeParse(s).success, false, s);
  for (const p of INJECTIONS) assert.equal(signinSchema.safeParse(`https://auth.example.com/start${p}x`).success, false, JSON.stringify(p));
});

test('auth-signin + redirect param: rd=<the request\'s URL> appended as ingress-nginx does (kept when the query sets it)', () => {
  const loc = (s: string, p = 'rd') => signinLocation(signinSchema.parse(s), p);
  assert.deepEqual(loc('https://a.example/start'), ['https://a.example', '/start', '?rd=', { v: 'rd' }]);
  assert.deepEqual(loc('https://a.example/start?x=1'), ['https://a.example', '/start?x=1', '&rd=', { v: 'rd' }]);
  assert.deepEqual(loc('https://a.example/start?rd=https://$host$escaped_request_uri'), ['https://a.example', '/start?rd=https://', { v: 'host' }, { v: 'escaped_request_uri' }]);
  assert.deepEqual(loc('https://a.example/start?x=1', 'redirect_to'), ['https://a.example', '/start?x=1', '&redirect_to=', { v: 'rd' }]);
  assert.deepEqual(loc('https://a.example/start?rd=', 'rd'), ['https://a.example', '/start?rd=', '&rd=', { v: 'rd' }], 'an empty rd is not a value');
  for (const p of ['rd=x', 'a b', '', 'r&d', ...INJECTIONS.map((x) => `r${x}d`)]) assert.equal(redirectParamSchema.safeParse(p).success, false, JSON.stringify(p));
  assert.ok(redirectParamSchema.safeParse('redirect_uri').success);
});

test('auth-request-redirect: URL text and the sign-in variables only', () => {
  assert.deepEqual(requestRedirectSchema.parse('$scheme://$host$request_uri'), [{ v: 'scheme' }, '://', { v: 'host' }, { v: 'request_uri' }]);
  assert.deepEqual(requestRedirectSchema.parse('https://app.example/after'), ['https://app.example/after']);
  for (const v of ['$http_referer', '$remote_addr', '$cookie_x', ...INJECTIONS.map((p) => `/a${p}b`)]) assert.equal(requestRedirectSchema.safeParse(v).success, false, JSON.stringify(v));
});

test('auth-cache-key: credentials variables, at least one; literal text from a small alphabet', () => {
  assert.deepEqual(cacheKeySchema.parse('$remote_user$http_authorization'), [{ v: 'remote_user' }, { v: 'http_authorization' }]);
  assert.deepEqual(cacheKeySchema.parse('tenant-a:$cookie__oauth2_proxy'), ['tenant-a:', { v: 'cookie__oauth2_proxy' }]);
  assert.deepEqual(cacheKeySchema.parse('${arg_token}/$host'), [{ v: 'arg_token' }, '/', { v: 'host' }]);
  const bad = ['static', '', '$host', '$scheme$host$uri', '$document_root', '$request_body', '$http_', '$upstream_http_x', '$realpath_root', '$ssl_client_cert', ...INJECTIONS.map((p) => `$http_authorization${p}x`), '$http_authorization${', '$http_authorization$'];
  for (const v of bad) assert.equal(cacheKeySchema.safeParse(v).success, false, JSON.stringify(v));
  assert.match(cacheKeySchema.safeParse('fixed').error?.issues[0]?.message ?? '', /at least one variable of the client's request/);
});

test('auth-cache-duration: proxy_cache_valid\'s syntax → seconds per status', () => {
  assert.deepEqual(cacheDurationSchema.parse('200 202 401 5m'), { '200': 300, '202': 300, '401': 300 });
  assert.deepEqual(cacheDurationSchema.parse('200 202 10m, 401 30s'), { '200': 600, '202': 600, '401': 30 });
  assert.deepEqual(cacheDurationSchema.parse('1h'), { '200': 3600, '301': 3600, '302': 3600 });
  assert.deepEqual(cacheDurationSchema.parse('200 1h30m, any 500ms'), { '200': 5400, any: 0.5 });
  assert.equal(nginxSeconds('1d'), 86400);
  assert.equal(nginxSeconds('5 m'), null);
  for (const v of ['', '200', '200 forever', '200 5m 401', '600 5m', '20 5m', '200 0s', '200 2y', '200 5m; 401 1m', '200 5x', ...INJECTIONS.map((p) => `200 5${p}m`)]) {
    assert.equal(cacheDurationSchema.safeParse(v).success, false, JSON.stringify(v));
  }
});

test('parseAnnotations: an invalid auth-* value fails the Ingress closed (access control), never ignored', () => {
  for (const [n, v] of [
    ['auth-url', 'http://auth.example.com/a;b'],
    ['auth-signin', 'https://$http_x_evil/'],
    ['auth-response-headers', 'X-User\nX-Evil: 1'],
    ['auth-cache-key', '$request_body'],
    ['auth-cache-duration', 'forever'],
    ['auth-method', 'GET\r\nX: y'],
    ['auth-keepalive', '-1'],
  ]) {
    const r = parseAnnotations({ [`${NGINX_PREFIX}auth-url`]: 'http://auth.example.com/', [`${NGINX_PREFIX}${n}`]: v as string });
    assert.equal(r.accessControl.length, 1, `${n}=${JSON.stringify(v)}`);
    assert.match(r.accessControl[0]?.kind ?? '', /external authentication with an invalid value/, n as string);
  }
  const p = parseAnnotations({ [`${NGINX_PREFIX}auth-proxy-set-headers`]: 'default/headers' });
  assert.equal(p.values['auth-proxy-set-headers'], 'default/headers', 'a ConfigMap reference, read with the Ingress (authProxyHeaders)');
  assert.deepEqual(p.accessControl, []);
});

test('externalAuthPlugin: the spec from the annotations; companions without auth-url are reported; auth-snippet is compiled for the subrequest', () => {
  const v = (a: Record<string, string>) => parseAnnotations(Object.fromEntries(Object.entries(a).map(([k, x]) => [`${NGINX_PREFIX}${k}`, x]))).values;
  const r = externalAuthPlugin(
    v({
      'auth-url': 'https://auth.example.com/verify',
      'auth-method': 'POST',
      'auth-signin': 'https://login.example/start',
      'auth-signin-redirect-param': 'next',
      'auth-response-headers': 'X-User, X-Email',
      'auth-request-redirect': '$scheme://$host$request_uri',
      'auth-cache-key': '$http_authorization',
      'auth-always-set-cookie': 'true',
      'auth-keepalive': '10',
    }),
  );
  assert.deepEqual(r.closed, []);
  assert.deepEqual(r.problems, []);
  assert.ok(r.plugin && 'externalAuth' in r.plugin);
  const spec = r.plugin.externalAuth;
  assert.equal(spec.method, 'POST');
  assert.deepEqual(spec.responseHeaders, ['x-user', 'x-email']);
  assert.deepEqual(spec.signin, ['https://login.example', '/start', '?next=', { v: 'rd' }]);
  assert.deepEqual(spec.cache, { key: [{ v: 'http_authorization' }], ttl: { '200': 300, '202': 300, '401': 300 } }, 'the default duration');
  assert.equal(spec.alwaysSetCookie, true);
  assert.deepEqual(spec.requestRedirect, [{ v: 'scheme' }, '://', { v: 'host' }, { v: 'request_uri' }]);

  const stray = externalAuthPlugin(v({ 'auth-signin': 'https://login.example/', 'auth-method': 'GET' }));
  assert.equal(stray.plugin, undefined);
  assert.deepEqual(stray.closed, []);
  assert.match(stray.problems.join(), /auth-method, .*auth-signin: has no effect without .*auth-url/);

  // auth-snippet is compiled for the subrequest (the snippet plugin carries it until the ConfigMap's gate hands it to
  // the external-auth spec: translate/risk.ts); it no longer fails the Ingress closed by itself.
  const snip = annotationPlugins(v({ 'auth-url': 'http://auth.example.com/', 'auth-snippet': 'proxy_set_header X-A b;' }));
  assert.deepEqual(snip.closed, []);
  const compiled = snip.plugins.find((p) => 'snippets' in p);
  assert.ok(compiled && 'snippets' in compiled);
  assert.deepEqual(compiled.snippets.auth, [{ op: 'request', action: 'set', name: 'X-A', value: ['b'] }]);
  assert.deepEqual(compiled.snippets.refused, []);
});

const NO_GLOBAL: GlobalAuthKeys = { url: '', method: '', signin: '', signinRedirectParam: '', responseHeaders: '', requestRedirect: '', cacheKey: '', cacheDuration: '', alwaysSetCookie: '', snippet: '' };

test('globalAuthSpec: empty URL = none; valid keys = a spec; any invalid key (or a snippet) = an error, never a silent default', () => {
  assert.equal(globalAuthSpec(NO_GLOBAL), null);
  const ok = globalAuthSpec({ ...NO_GLOBAL, url: 'http://auth.auth.svc.cluster.local/check', responseHeaders: 'X-User', cacheKey: '$http_authorization', cacheDuration: '200 1m', alwaysSetCookie: 'true', signin: 'https://login.example/', signinRedirectParam: 'next' });
  assert.ok(ok && 'spec' in ok);
  assert.deepEqual(ok.spec.url.target, { kind: 'service', service: 'auth', namespace: 'auth', port: 80 });
  assert.deepEqual(ok.spec.cache?.ttl, { '200': 60 });
  assert.deepEqual(ok.spec.signin, ['https://login.example', '/', '?next=', { v: 'rd' }]);
  assert.equal(ok.spec.alwaysSetCookie, true);
  for (const [k, v] of [
    ['url', 'not a url'],
    ['url', 'http://auth.example.com/;'],
    ['method', 'FETCH'],
    ['signin', 'https://$http_x_host/'],
    ['responseHeaders', 'Content-Length'],
    ['cacheKey', 'constant'],
    ['cacheDuration', '5 minutes'],
    ['alwaysSetCookie', 'yes'],
    ['snippet', 'proxy_set_header X-A b;'],
    ['signinRedirectParam', 'r d'],
  ] as [keyof GlobalAuthKeys, string][]) {
    const r = globalAuthSpec({ ...NO_GLOBAL, url: 'http://auth.example.com/', [k]: v });
    assert.ok(r && 'error' in r, `${k}=${v}`);
  }
});

test('no-auth-locations: the start of the path as written in the Ingress', () => {
  const list = ['/.well-known/acme-challenge', '/public'];
  assert.ok(noAuthLocation('/.well-known/acme-challenge/abc', list));
  assert.ok(noAuthLocation('/publicity', list), 'a string prefix, as ingress-nginx compares');
  assert.equal(noAuthLocation('/', list), false);
  assert.equal(noAuthLocation('/api', []), false);
});
