import { test } from 'node:test';
import assert from 'node:assert/strict';
import { accessControlKind } from './access-control.ts';
import { parseAnnotations } from './parse.ts';

test('access-control annotations: each group of ingress-nginx access control is recognised', () => {
  const table: [string, string, RegExp][] = [
    ['allowlist-source-range', '10.0.0.0/8', /IP allowlist/],
    ['whitelist-source-range', '10.0.0.0/8', /IP allowlist/],
    ['denylist-source-range', '192.0.2.0/24', /IP denylist/],
    ['auth-type', 'basic', /basic\/digest/],
    ['auth-secret', 'htpasswd', /basic\/digest/],
    ['auth-secret-type', 'auth-map', /basic\/digest/],
    ['auth-realm', 'Restricted', /basic\/digest/],
    ['auth-url', 'http://auth.example.com/verify', /external authentication/],
    ['auth-signin', 'https://auth.example.com/start', /external authentication/],
    ['auth-snippet', 'proxy_set_header X 1;', /external authentication/],
    ['auth-method', 'GET', /^external authentication$/],
    ['auth-response-headers', 'X-User', /^external authentication$/],
    ['auth-cache-key', '$remote_user', /^external authentication$/],
    ['auth-tls-secret', 'ns/ca', /client-certificate/],
    ['auth-tls-verify-client', 'on', /client-certificate/],
    ['auth-tls-verify-depth', '1', /client-certificate/],
    ['auth-tls-match-cn', 'CN=client', /client-certificate/],
    ['auth-tls-error-page', 'https://x', /client-certificate/],
    ['auth-tls-pass-certificate-to-upstream', 'true', /client-certificate/],
    ['configuration-snippet', 'allow 10.0.0.0/8;\ndeny all;', /snippet \("allow"\)/],
    ['configuration-snippet', 'more_set_headers "X: y"; deny all;', /snippet \("deny"\)/],
    ['server-snippet', 'location /x { auth_basic "x"; }', /snippet \("auth_basic"\)/],
    ['configuration-snippet', 'auth_request /auth;', /snippet \("auth_request"\)/],
    ['configuration-snippet', 'satisfy any;', /snippet \("satisfy"\)/],
    ['server-snippet', 'ssl_verify_client on;', /snippet \("ssl_verify_client"\)/],
    ['configuration-snippet', 'access_by_lua_block { ngx.exit(403) }', /snippet \("access_by_lua_block"\)/],
    ['configuration-snippet', 'if ($http_x_key != "s3cret") { return 403; }', /snippet \("return 403"\)/],
    ['configuration-snippet', 'if ($arg_t = "") {\n  return   401;\n}', /snippet \("return 401"\)/],
  ];
  for (const [name, value, kind] of table) assert.match(accessControlKind(name, value) ?? 'NOT ACCESS CONTROL', kind, `${name}: ${value}`);
});

test('not access control (still reported as unsupported): satisfy, global auth opt-out, rate limits, WAF, harmless snippets', () => {
  const table: [string, string][] = [
    ['satisfy', 'any'],
    ['enable-global-auth', 'false'],
    ['limit-rps', '10'],
    ['limit-allowlist', '10.0.0.0/8'],
    ['enable-modsecurity', 'true'],
    ['enable-owasp-core-rules', 'true'],
    ['modsecurity-snippet', 'SecRuleEngine On'],
    ['rewrite-target', '/$2'],
    ['cors-allow-origin', '*'],
    ['configuration-snippet', 'more_set_headers "Access-Control-Allow-Origin: *";'],
    ['configuration-snippet', 'add_header Allow "GET, POST";'],
    ['configuration-snippet', 'return 200 "ok";'],
    ['configuration-snippet', 'proxy_set_header X-Deny-List "none";'],
    ['server-snippet', '# deny all would go here'],
  ];
  for (const [name, value] of table) assert.equal(accessControlKind(name, value), null, `${name}: ${value}`);
});

test('parseAnnotations: every unknown key under either prefix is unsupported; access-control ones are flagged', () => {
  const r = parseAnnotations({
    'portico.dev/whitelist-source-range': '10.0.0.0/8',
    'nginx.ingress.kubernetes.io/denylist-source-range': '',
    'nginx.ingress.kubernetes.io/stream-snippet': 'listen 9000;',
    'portico.dev/frobnicate': 'yes',
    'nginx.ingress.kubernetes.io/constructor': 'x',
    'nginx.ingress.kubernetes.io/proxy-read-timeout': '30',
    'portico.dev/test-invalid-directive': 'true',
    'example.com/other': 'ignored: not ours',
  });
  assert.deepEqual(r.unsupported, [
    'nginx.ingress.kubernetes.io/constructor',
    'nginx.ingress.kubernetes.io/stream-snippet',
    'portico.dev/frobnicate',
  ]);
  // The IP lists are supported (ip-restriction plugin): a readable one is a value; an unreadable one is not
  // ignored but fails the Ingress closed.
  assert.deepEqual(r.values['whitelist-source-range'], ['10.0.0.0/8']);
  assert.deepEqual(r.accessControl, [
    { annotation: 'nginx.ingress.kubernetes.io/denylist-source-range', kind: 'a client IP denylist with an invalid value: the list is empty' },
  ]);
  assert.equal(r.values['proxy-read-timeout'], 30);
});
