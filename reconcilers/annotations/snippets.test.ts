// The snippet tokenizer and compiler (snippets.ts), the injection corpus every refusal must hold against, and the
// ConfigMap's switches (risk.ts) as the translation applies them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileSnippet, tokenize, MAX_SNIPPET } from './snippets.ts';
import { translate } from '../translate/translate.ts';
import { OPTS, ing, modelOf, rule, svc, svcRef } from '../translate/fixtures.test-helpers.ts';
import { parseGlobalConfig, defaultGlobalConfig } from '../model/global-config.ts';
import type { Model } from '../model/model.ts';
import type { PluginInstance } from '../config/types.ts';

const ok = (src: string, kind: 'location' | 'server' = 'location') => {
  const r = compileSnippet(src, kind);
  assert.ok(r.ok, `expected to compile: ${src}\n${r.ok ? '' : r.error}`);
  return r.statements;
};
const refused = (src: string, kind: 'location' | 'server' = 'location') => {
  const r = compileSnippet(src, kind);
  assert.ok(!r.ok, `expected a refusal: ${JSON.stringify(src.slice(0, 120))}`);
  return r.error;
};

// ---- tokenizer -------------------------------------------------------------------------------------------------

test('tokenizer: nginx lexical rules — quotes, escapes, comments, ${var}, ")" after a quote, line numbers', () => {
  const t = tokenize(`a "b c" 'd;e' f\\ g # comment ; { }\n"x\\"y\\n" \${host}z;\nif ($a ~ "^/x" ) {}`);
  const words = t.map((x) => (x.kind === 'word' ? `${x.quoted ? 'q' : 'w'}:${x.text}@${x.line}` : `${x.kind}@${x.line}`));
  assert.deepEqual(words, [
    'w:a@1', 'q:b c@1', 'q:d;e@1', 'w:f\\ g@1',
    'q:x"y\n@2', 'w:${host}z@2', ';@2',
    'w:if@3', 'w:($a@3', 'w:~@3', 'q:^/x@3', 'w:)@3', '{@3', '}@3',
  ]);
  // ")" right after a quoted string ends the condition (nginx accepts it too).
  assert.deepEqual(tokenize('if ($a = "b") {}').map((x) => (x.kind === 'word' ? x.text : x.kind)), ['if', '($a', '=', 'b', ')', '{', '}']);
  assert.throws(() => tokenize('a "b'), /line 1: unbalanced double quote/);
  assert.throws(() => tokenize("x;\n'open"), /line 2: unbalanced single quote/);
  assert.throws(() => tokenize('"a"b;'), /unexpected "b" after a quoted string/);
});

// ---- compiler: what is accepted --------------------------------------------------------------------------------

test('compiler: the allowlisted directives become data', () => {
  assert.deepEqual(ok('more_set_headers "X-Frame-Options: DENY" "X-Host: $host";'), [
    { op: 'response', action: 'set', name: 'X-Frame-Options', value: ['DENY'] },
    { op: 'response', action: 'set', name: 'X-Host', value: [{ v: 'host' }] },
  ]);
  assert.deepEqual(ok("more_set_headers -s '404 500' -t text/html 'X-E: 1';"), [{ op: 'response', action: 'set', name: 'X-E', value: ['1'], statuses: [404, 500], types: ['text/html'] }]);
  assert.deepEqual(ok('more_clear_headers Server "X-Internal-*";'), [
    { op: 'response', action: 'clear', name: 'Server' },
    { op: 'response', action: 'clear', name: 'X-Internal-*' },
  ]);
  assert.deepEqual(ok('more_set_input_headers -r "X-Real: ${remote_addr}:$http_x_port";'), [
    { op: 'request', action: 'set', name: 'X-Real', value: [{ v: 'remote_addr' }, ':', { v: 'http_x_port' }], replaceOnly: true },
  ]);
  assert.deepEqual(ok('more_clear_input_headers X-Debug;'), [{ op: 'request', action: 'clear', name: 'X-Debug' }]);
  assert.deepEqual(ok('add_header Cache-Control "no-store" always;\nadd_header X-Y $cookie_sid;'), [
    { op: 'response', action: 'add', name: 'Cache-Control', value: ['no-store'], always: true },
    { op: 'response', action: 'add', name: 'X-Y', value: [{ v: 'cookie_sid' }] },
  ]);
  assert.deepEqual(ok('proxy_set_header X-Tenant $arg_tenant;\nproxy_set_header Host api.internal;'), [
    { op: 'request', action: 'set', name: 'X-Tenant', value: [{ v: 'arg_tenant' }] },
    { op: 'request', action: 'set', name: 'host', value: ['api.internal'] },
  ]);
  assert.deepEqual(ok('set $who "$http_x_user@$host"; add_header X-Who $who;'), [
    { op: 'set', name: 'who', value: [{ v: 'http_x_user' }, '@', { v: 'host' }] },
    { op: 'response', action: 'add', name: 'X-Who', value: [{ s: 'who' }] },
  ]);
  assert.deepEqual(ok('return 200 "ok\\n";'), [{ op: 'return', status: 200, text: ['ok\n'] }]);
  assert.deepEqual(ok('return 301 https://new.example.com$request_uri;'), [{ op: 'return', status: 301, location: ['https://new.example.com', { v: 'request_uri' }] }]);
  assert.deepEqual(ok('return https://$host/x;'), [{ op: 'return', status: 302, location: ['https://', { v: 'host' }, '/x'] }]);
  assert.deepEqual(ok('rewrite ^/api/(.*)$ /v2/$1 break;'), [{ op: 'rewrite', regex: '^/api/(.*)$', path: ['/v2/', { c: 1 }], keepArgs: true, stop: true }]);
  assert.deepEqual(ok('rewrite ^/q/(.*)$ /search?term=$1? last;'), [{ op: 'rewrite', regex: '^/q/(.*)$', path: ['/search'], args: ['term=', { c: 1 }], keepArgs: false, stop: true }]);
  assert.deepEqual(ok('rewrite ^/old$ /new? permanent;'), [{ op: 'rewrite', regex: '^/old$', path: ['/new'], keepArgs: false, redirect: 301, stop: false }]);
  assert.deepEqual(ok('rewrite ^/go/(.*) https://docs.example.com/$1;'), [{ op: 'rewrite', regex: '^/go/(.*)', path: ['https://docs.example.com/', { c: 1 }], keepArgs: true, redirect: 302, stop: false }]);
  assert.deepEqual(ok('if ($request_method = OPTIONS) {\n  add_header Allow "GET, POST";\n  return 204;\n}'), [
    { op: 'if', cond: { test: 'eq', left: [{ v: 'request_method' }], right: ['OPTIONS'] }, body: [
      { op: 'response', action: 'add', name: 'Allow', value: ['GET, POST'] },
      { op: 'return', status: 204 },
    ] },
  ]);
  assert.deepEqual(ok('if ($uri ~* "^/u/([a-z]+)$" ) { more_set_headers "X-User: $1"; }'), [
    { op: 'if', cond: { test: 'match', left: [{ v: 'uri' }], regex: '^/u/([a-z]+)$', caseless: true, negate: false }, body: [{ op: 'response', action: 'set', name: 'X-User', value: [{ c: 1 }] }] },
  ]);
  assert.deepEqual(ok('if ($http_x_debug) { break; }\nif ($host !~ ^www\\.) { return 404; }'), [
    { op: 'if', cond: { test: 'nonempty', value: [{ v: 'http_x_debug' }] }, body: [{ op: 'break' }] },
    { op: 'if', cond: { test: 'match', left: [{ v: 'host' }], regex: '^www\\.', caseless: false, negate: true }, body: [{ op: 'return', status: 404 }] },
  ]);
  assert.deepEqual(ok('# only a comment\n'), []);
  assert.deepEqual(ok('set $a 1; if ($a != 1) { return 500; }', 'server'), [
    { op: 'set', name: 'a', value: ['1'] },
    { op: 'if', cond: { test: 'ne', left: [{ s: 'a' }], right: ['1'] }, body: [{ op: 'return', status: 500 }] },
  ]);
});

test('compiler: the query part of a rewrite replacement, and "?" at the end dropping the client\'s query', () => {
  const [s] = ok('rewrite ^/q/(.*)$ /search?term=$1 last;');
  assert.deepEqual(s, { op: 'rewrite', regex: '^/q/(.*)$', path: ['/search'], args: ['term=', { c: 1 }], keepArgs: true, stop: true });
  const [t] = ok('rewrite ^/(.*)$ /x/$1? break;');
  assert.deepEqual(t, { op: 'rewrite', regex: '^/(.*)$', path: ['/x/', { c: 1 }], keepArgs: false, stop: true });
});

// ---- compiler: what is refused, with a message naming it ------------------------------------------------------

test('injection corpus: every payload class is refused with a specific message and nothing is compiled', () => {
  const corpus: [string, RegExp][] = [
    // statement breaks: a ";" or "}" smuggled into a value must not end the directive and open another
    ['more_set_headers "X: a"; } location /x { root /;', /line 1: unbalanced "\}": nothing to close/],
    ['add_header X a; proxy_pass http://169.254.169.254;', /directive "proxy_pass" changes how or where requests are proxied/],
    ['add_header X "a";}\nserver { listen 81; }', /unbalanced "\}"/],
    ['add_header X a;\n}\n', /line 2: unbalanced "\}"/],
    ['if ($uri) { add_header X a;', /line 1: unbalanced "\{": the block is never closed/],
    ['add_header X a', /directive "add_header" is not terminated by ";"/],
    // newlines and comments: a second line is a second directive, and is checked like the first
    ['add_header X a;\ninclude /etc/nginx/secrets.conf;', /line 2: directive "include" reads files and is never accepted/],
    ['add_header X a; # harmless\nload_module /tmp/evil.so;', /line 2: directive "load_module" reads files/],
    ['add_header X "a\\r\\nSet-Cookie: s=1";', /the value of X contains a control character/],
    ['add_header X "a\nb";', /the value of X contains a control character/],
    // variables: only the allowlist
    ['add_header X $ssl_client_raw_cert;', /variable \$ssl_client_raw_cert is not allowed/],
    ['add_header X ${upstream_addr};', /variable \$upstream_addr is not allowed/],
    ['add_header X "$";', /a "\$" that does not start a variable name/],
    ['add_header X $1;', /capture \$1 is read before any regex/],
    ['set $http_host evil;', /set: \$http_host is a variable of nginx or Portico and cannot be set/],
    ['set $host evil;', /set: \$host is a variable of nginx or Portico/],
    // quotes
    ['add_header X "unterminated;', /unbalanced double quote/],
    ["add_header X 'a';'", /unbalanced single quote/],
    ['add_header "X" "a"b;', /unexpected "b" after a quoted string/],
    // Lua, files, modules, proxying, access control, blocks
    ['content_by_lua_block { ngx.say(io.open("/etc/passwd"):read("*a")) }', /directive "content_by_lua_block" runs Lua code and is never accepted/],
    ['access_by_lua_file /tmp/x.lua;', /runs Lua code/],
    ['set_by_lua $x "return os.getenv(\'HOME\')";', /directive "set_by_lua" runs Lua code/],
    ['lua_need_request_body on;', /runs Lua code/],
    ['include /var/run/secrets/kubernetes.io/serviceaccount/token;', /directive "include" reads files/],
    ['root /var/run/secrets;', /directive "root" names files on the controller/],
    ['alias /etc/;', /directive "alias" names files/],
    ['auth_basic_user_file /etc/shadow;', /is access control|names files/],
    ['ssl_certificate_key /etc/ssl/private/key.pem;', /names files on the controller/],
    ['error_log /dev/stdout debug;', /names files on the controller/],
    ['proxy_pass http://10.0.0.1;', /changes how or where requests are proxied/],
    ['deny all;', /directive "deny" is access control/],
    ['location /admin { return 200; }', /"location" blocks are not supported/],
    ['if (-f /etc/passwd) { return 200; }', /file tests \(-f\) are never accepted/],
    ['if (!-e $request_filename) { return 404; }', /file tests \(!-e\) are never accepted/],
    ['if ($uri) { proxy_set_header X a; }', /directive "proxy_set_header" is not allowed inside an if block/],
    ['if ($uri) { if ($host) { return 200; } }', /directive "if" is not allowed inside an if block/],
    ['if ($uri) { add_header X a; }', /not allowed inside an if block of a server-snippet/, ],
    ['mirror /m;', /changes how or where requests are proxied/],
    ['return 444;', /return 444 \(close the connection\) is not supported/],
    ['return 200 "a" "b";', /return takes 1 to 2 arguments, got 3/],
    ['more_set_headers -a "X: y";', /option "-a" is not supported/],
    ['more_set_headers "Content-Length: 0";', /header Content-Length frames the message/],
    ['more_set_headers "Transfer-Encoding: chunked";', /frames the message/],
    ['more_clear_headers "Content-*";', /would match content-length/],
    ['more_set_input_headers "Host: evil.example";', /request header Host cannot be changed with this directive/],
    ['add_header "X Y" a;', /invalid header name/],
    // regexes: PCRE verbs, back-references, recursion, broken ones
    ['rewrite "(*LIMIT_MATCH=1000000000)a" /b;', /PCRE verbs/],
    ['rewrite "^(a+)\\1$" /b;', /back-references and recursion/],
    ['rewrite "^(?R)$" /b;', /the group "\(\?R\)\$" is not accepted/],
    ['rewrite "^(a$" /b;', /unbalanced "\("/],
    ['if ($uri ~ "[a-") { return 403; }', /unterminated "\["/],
    ['rewrite "^a{2,1}$" /b;', /does not compile/],
  ];
  for (const [src, re] of corpus) {
    const kind = src === 'if ($uri) { add_header X a; }' ? 'server' : 'location';
    const err = refused(src, kind);
    assert.match(err, re, `${JSON.stringify(src)} → ${err}`);
  }
});

test('injection corpus: NUL, control characters, Unicode separators, non-ASCII and very long input are refused before parsing', () => {
  assert.match(refused('add_header X a\u0000b;'), /line 1: a NUL character is never accepted/);
  assert.match(refused('add_header X a;\nadd_header Y b\r;'), /line 2: control character U\+000D is not accepted/);
  assert.match(refused('add_header X a\u001bb;'), /control character U\+001B/);
  assert.match(refused('add_header X a\u007fb;'), /control character U\+007F/);
  assert.match(refused('add_header X a\u0085b;'), /control character U\+0085/);
  assert.match(refused('add_header X a;\u2028include /etc/passwd;'), /Unicode line\/paragraph separator \(U\+2028\)/);
  assert.match(refused('add_header X a;\u2029'), /U\+2029/);
  assert.match(refused('add_header X "café";'), /non-ASCII character U\+00E9 outside a comment/);
  ok('# commentaire: café\nadd_header X a;');
  assert.match(refused(`add_header X "${'a'.repeat(MAX_SNIPPET)}";`), new RegExp(`at most ${MAX_SNIPPET} are accepted`));
  assert.match(refused(`add_header X ${'a'.repeat(5000)};`), /a value is longer than 4096 characters/);
  assert.match(refused(Array.from({ length: 300 }, () => 'add_header X a;').join('\n')), /more than 256 directives/);
});

// ---- the ConfigMap's switches, through the translation ----------------------------------------------------------

const web = svc('web', [{ port: 80 }]);
function scenario(annotations: Record<string, string>, config: Record<string, string> = {}) {
  const m: Model = modelOf({ services: [web], ingresses: [ing('app', { rules: [rule('app.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations })] });
  const g = parseGlobalConfig(config, defaultGlobalConfig());
  assert.deepEqual(g.errors, []);
  m.setGlobalConfig(g.values);
  const r = translate(m.snapshot(), OPTS);
  const route = r.config.data.routes['app.example.com']?.rules[0]?.route;
  const snippets = Object.entries(r.config.data.plugins).filter(([, p]) => p.type === 'snippet') as [string, Extract<PluginInstance, { type: 'snippet' }>][];
  const warnings = (reason: string) => r.events.filter((e) => e.ref === 'Ingress/default/app' && e.reason === reason).map((e) => e.message);
  return { r, route, snippets, warnings };
}
const ON = { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' };
const SNIPPET = 'nginx.ingress.kubernetes.io/configuration-snippet';

test('risk: with ingress-nginx\'s defaults (allow-snippet-annotations false, annotations-risk-level High) a snippet is refused with a Warning and not applied', () => {
  const { route, snippets, warnings } = scenario({ [SNIPPET]: 'more_set_headers "X-A: b";' });
  assert.equal(snippets.length, 0);
  assert.equal(route?.plugins, undefined);
  assert.equal(route?.backendId, 'default_web_80', 'the rest of the Ingress is served');
  assert.deepEqual(warnings('RiskyAnnotation'), [
    `annotation ${SNIPPET} (risk Critical) is refused and not applied: the ConfigMap does not set allow-snippet-annotations: "true" (and its annotations-risk-level is High); snippets also need annotations-risk-level: Critical`,
  ]);
  // allow-snippet-annotations alone is not enough (ingress-nginx ≥ 1.12 needs the level too).
  const half = scenario({ [SNIPPET]: 'more_set_headers "X-A: b";' }, { 'allow-snippet-annotations': 'true' });
  assert.equal(half.snippets.length, 0);
  assert.match(half.warnings('RiskyAnnotation')[0] ?? '', /\(risk Critical\) is refused and not applied: the ConfigMap's annotations-risk-level is High/);
  // and the level alone neither.
  const other = scenario({ [SNIPPET]: 'more_set_headers "X-A: b";' }, { 'annotations-risk-level': 'critical' });
  assert.equal(other.snippets.length, 0);
  assert.match(other.warnings('RiskyAnnotation')[0] ?? '', /does not set allow-snippet-annotations: "true"; snippets also need/);
});

test('risk: with both switches on, the snippets are compiled into one snippet plugin on every path of the Ingress', () => {
  const { route, snippets, warnings, r } = scenario(
    { [SNIPPET]: 'more_set_headers "X-A: b";', 'nginx.ingress.kubernetes.io/server-snippet': 'set $x 1;' },
    ON,
  );
  assert.equal(snippets.length, 1);
  const [id, inst] = snippets[0]!;
  assert.equal(id, 'ing.default.app.snippet');
  assert.deepEqual(inst.location, [{ op: 'response', action: 'set', name: 'X-A', value: ['b'] }]);
  assert.deepEqual(inst.server, [{ op: 'set', name: 'x', value: ['1'] }]);
  assert.deepEqual(route?.plugins, [id]);
  assert.deepEqual(warnings('RiskyAnnotation'), []);
  assert.deepEqual(warnings('InvalidSnippet'), []);
  assert.equal(r.events.filter((e) => e.reason === 'UnsupportedAnnotation').length, 0);
});

test('risk: a snippet off the allowlist is refused whole (InvalidSnippet naming the line); one holding access rules fails the Ingress closed', () => {
  const bad = scenario({ [SNIPPET]: 'add_header X a;\ninclude /etc/passwd;' }, ON);
  assert.equal(bad.snippets.length, 0);
  assert.deepEqual(bad.warnings('InvalidSnippet'), [`annotation ${SNIPPET} is refused: line 2: directive "include" reads files and is never accepted; nothing of this snippet is applied`]);
  assert.equal(bad.route?.backendId, 'default_web_80');
  const access = scenario({ [SNIPPET]: 'allow 10.0.0.0/8;\ndeny all;' }, ON);
  assert.equal(access.route?.backendId, null, 'fails closed');
  assert.equal(access.route?.action, 'unavailable');
  assert.match(access.warnings('UnsupportedAccessControl')[0] ?? '', /configuration-snippet \(access rules in a snippet \("allow"\) in a snippet Portico refused\)/);
  // Refused by the switches, access rules fail closed as well.
  const off = scenario({ [SNIPPET]: 'if ($http_x_key != s3cret) { return 403; }' });
  assert.equal(off.route?.action, 'unavailable');
  // Applied, the same rules are the snippet's own: served, with the plugin.
  const on = scenario({ [SNIPPET]: 'if ($http_x_key != s3cret) { return 403; }' }, ON);
  assert.equal(on.route?.backendId, 'default_web_80');
  assert.deepEqual(on.route?.plugins, ['ing.default.app.snippet']);
});

test('risk: auth-snippet without auth-url has no effect: reported, the Ingress served', () => {
  const r = scenario({ 'nginx.ingress.kubernetes.io/auth-snippet': 'proxy_set_header X-A b;' }, ON);
  assert.deepEqual(r.warnings('InvalidSnippet'), ['annotation nginx.ingress.kubernetes.io/auth-snippet is refused: it has no effect without nginx.ingress.kubernetes.io/auth-url (as in ingress-nginx)']);
  assert.equal(r.route?.backendId, 'default_web_80');
  assert.equal(r.snippets.length, 0);
});

// ---- auth-snippet: compiled for the auth subrequest of auth-url ------------------------------------------------

test('auth-snippet compiles the subset that shapes the auth subrequest: request headers, set, if', () => {
  const ok = compileSnippet('set $team platform;\nif ($http_x_legacy = 1) { set $team legacy; more_set_input_headers "X-Legacy: yes"; }\nproxy_set_header X-Team $team;\nproxy_set_header Authorization "Bearer $http_x_token";\nmore_set_input_headers -r "X-Trace: $request_id_x";\nmore_clear_input_headers "X-Debug-*";', 'auth');
  assert.equal(ok.ok, false, '$request_id_x is no allowed variable');
  const r = compileSnippet('set $team platform;\nif ($http_x_legacy = 1) { set $team legacy; more_set_input_headers "X-Legacy: yes"; }\nproxy_set_header X-Team $team;\nproxy_set_header Authorization "Bearer $http_x_token";\nmore_clear_input_headers "X-Debug-*";\nproxy_set_header X-Original $request_uri;', 'auth');
  assert.ok(r.ok, r.ok ? '' : r.error);
  assert.deepEqual(r.statements, [
    { op: 'set', name: 'team', value: ['platform'] },
    { op: 'if', cond: { test: 'eq', left: [{ v: 'http_x_legacy' }], right: ['1'] }, body: [{ op: 'set', name: 'team', value: ['legacy'] }, { op: 'request', action: 'set', name: 'X-Legacy', value: ['yes'] }] },
    { op: 'request', action: 'set', name: 'X-Team', value: [{ s: 'team' }] },
    { op: 'request', action: 'set', name: 'Authorization', value: ['Bearer ', { v: 'http_x_token' }] },
    { op: 'request', action: 'clear', name: 'X-Debug-*' },
    { op: 'request', action: 'set', name: 'X-Original', value: [{ v: 'request_uri' }] },
  ]);
});

test('auth-snippet refuses, by name, what does not apply to the auth subrequest', () => {
  const cases: [string, RegExp][] = [
    ['return 401;', /line 1: directive "return" would answer the auth subrequest in place of the auth service/],
    ['if ($http_x = "") { return 403; }', /directive "return" would answer the auth subrequest/],
    ['rewrite ^ /other;', /directive "rewrite" would change the auth location's own URI/],
    ['break;', /directive "break" would change the auth location's own URI or stop its rewrite phase/],
    ['add_header X-A b;', /directive "add_header" would change the auth service's response/],
    ['more_set_headers "X-A: b";', /directive "more_set_headers" would change the auth service's response/],
    ['more_clear_headers X-A;', /directive "more_clear_headers" would change the auth service's response/],
    ['if ($http_x) { proxy_set_header X-A b; }', /directive "proxy_set_header" is not allowed inside an if block/],
    ['proxy_set_header Host auth.example;', /proxy_set_header Host: the auth subrequest's Host is the auth URL's host/],
    ['proxy_set_header Proxy-Connection x;', /proxy_set_header Proxy-Connection: this header frames the auth subrequest/],
    ['proxy_set_header Content-Length 0;', /header Content-Length frames the message/],
    ['more_set_input_headers "Host: x";', /request header Host cannot be changed/],
    ['proxy_set_header X-U $uri;', /variable \$uri is not allowed in an auth-snippet: in ingress-nginx's auth location it is the auth subrequest's own/],
    ['proxy_set_header X-U $arg_page;', /variable \$arg_page is not allowed in an auth-snippet/],
    ['if ($args ~ x) { set $a 1; }', /variable \$args is not allowed in an auth-snippet/],
    ['proxy_pass http://elsewhere;', /directive "proxy_pass" changes how or where requests are proxied/],
    ['auth_request /x;', /directive "auth_request" is access control/],
    ['access_by_lua_block { ngx.exit(200) }', /is not supported|runs Lua code/],
    ['proxy_set_header X-A $portico_backend;', /variable \$portico_backend is not allowed/],
    ['gzip on;', /directive "gzip" is not on the allowlist of an auth-snippet \(proxy_set_header, more_set_input_headers, more_clear_input_headers, set, if\)/],
  ];
  for (const [src, why] of cases) {
    const r = compileSnippet(src, 'auth');
    assert.equal(r.ok, false, src);
    assert.match(r.ok ? '' : r.error, why, src);
  }
});

const AUTH_URL = 'nginx.ingress.kubernetes.io/auth-url';
const AUTH_SNIPPET = 'nginx.ingress.kubernetes.io/auth-snippet';
const OWN_AUTH = 'http://web.default.svc.cluster.local/check';
const authInstances = (r: ReturnType<typeof scenario>) => Object.values(r.r.config.data.plugins).filter((p): p is Extract<PluginInstance, { type: 'external-auth' }> => p.type === 'external-auth');

test('auth-snippet with auth-url and both switches on: compiled into the external-auth instance (no snippet plugin)', () => {
  const r = scenario({ [AUTH_URL]: OWN_AUTH, [AUTH_SNIPPET]: 'proxy_set_header X-Team platform;' }, ON);
  assert.deepEqual(r.warnings('InvalidSnippet'), []);
  assert.deepEqual(r.warnings('RiskyAnnotation'), []);
  assert.equal(r.route?.backendId, 'default_web_80', 'served');
  assert.equal(r.snippets.length, 0, 'nothing for the location: the snippet is the auth subrequest\'s');
  const [ea] = authInstances(r);
  assert.deepEqual(ea?.ingressNginx?.snippet, [{ op: 'request', action: 'set', name: 'X-Team', value: ['platform'] }]);
  assert.deepEqual(r.route?.plugins, ['ing.default.app.extauth']);
  // With a configuration-snippet too, each goes its own way.
  const both = scenario({ [AUTH_URL]: OWN_AUTH, [AUTH_SNIPPET]: 'set $a 1; proxy_set_header X-A $a;', [SNIPPET]: 'more_set_headers "X-B: c";' }, ON);
  assert.equal(both.snippets.length, 1);
  assert.equal(both.snippets[0]![1].location?.length, 1);
  assert.deepEqual(authInstances(both)[0]?.ingressNginx?.snippet, [{ op: 'set', name: 'a', value: ['1'] }, { op: 'request', action: 'set', name: 'X-A', value: [{ s: 'a' }] }]);
});

test('auth-snippet refused by the ConfigMap\'s switches, or off its allowlist, fails the Ingress closed with a Warning naming why', () => {
  // ingress-nginx's defaults: refused (RiskyAnnotation), and auth-url's Ingress fails closed.
  const off = scenario({ [AUTH_URL]: OWN_AUTH, [AUTH_SNIPPET]: 'proxy_set_header X-Team platform;' });
  assert.equal(off.route?.action, 'unavailable');
  assert.equal(off.route?.backendId, null);
  assert.match(off.warnings('RiskyAnnotation')[0] ?? '', /annotation nginx\.ingress\.kubernetes\.io\/auth-snippet \(risk Critical\) is refused and not applied: the ConfigMap does not set allow-snippet-annotations/);
  assert.match(off.warnings('UnsupportedAccessControl').join('\n'), /auth-snippet \(external authentication, refused by the ConfigMap \(risk Critical\)\)/);
  // allow-snippet-annotations without the Critical level: refused the same way.
  const half = scenario({ [AUTH_URL]: OWN_AUTH, [AUTH_SNIPPET]: 'proxy_set_header X-Team platform;' }, { 'allow-snippet-annotations': 'true' });
  assert.equal(half.route?.action, 'unavailable');
  assert.match(half.warnings('RiskyAnnotation').join('\n'), /auth-snippet \(risk Critical\) is refused and not applied: the ConfigMap's annotations-risk-level is High/);
  // Allowed, but a directive that cannot apply to the auth subrequest: InvalidSnippet naming it, fails closed.
  const bad = scenario({ [AUTH_URL]: OWN_AUTH, [AUTH_SNIPPET]: 'proxy_set_header X-Team platform;\nreturn 401;' }, ON);
  assert.equal(bad.route?.action, 'unavailable');
  assert.deepEqual(bad.warnings('InvalidSnippet'), [
    'annotation nginx.ingress.kubernetes.io/auth-snippet is refused: line 2: directive "return" would answer the auth subrequest in place of the auth service; Portico does not run it there (an auth-snippet may only shape the subrequest: proxy_set_header, more_set_input_headers, more_clear_input_headers, set, if); nothing of this snippet is applied and the Ingress fails closed (its auth service would decide without what the snippet sets)',
  ]);
  assert.match(bad.warnings('UnsupportedAccessControl').join('\n'), /auth-snippet \(external authentication in a snippet Portico refused\)/);
  assert.equal(bad.route?.plugins, undefined, 'no route runs the auth without its snippet');
  assert.equal(authInstances(bad)[0]?.ingressNginx?.snippet, undefined);
});

test('risk: annotations-risk-level Low refuses Medium annotations; groups are refused together; refused access control fails closed', () => {
  const cors = scenario({ 'nginx.ingress.kubernetes.io/enable-cors': 'true', 'nginx.ingress.kubernetes.io/cors-allow-origin': 'https://a.example' }, { 'annotations-risk-level': 'Low' });
  // cors-allow-origin (Medium) refused must not leave CORS for any origin: the whole group goes.
  assert.equal(Object.values(cors.r.config.data.plugins).filter((p) => p.type === 'cors').length, 0);
  assert.deepEqual(cors.warnings('RiskyAnnotation'), [
    'annotation nginx.ingress.kubernetes.io/cors-allow-origin (risk Medium) is refused and not applied: the ConfigMap\'s annotations-risk-level is Low',
    'annotation nginx.ingress.kubernetes.io/enable-cors (risk Low) is refused and not applied: it belongs with nginx.ingress.kubernetes.io/cors-allow-origin, which is refused (the ConfigMap\'s annotations-risk-level is Low)',
  ]);
  const allow = scenario({ 'nginx.ingress.kubernetes.io/allowlist-source-range': '10.0.0.0/8' }, { 'annotations-risk-level': 'low' });
  assert.equal(allow.route?.action, 'unavailable', 'an allowlist that is refused fails closed, never open');
  assert.match(allow.warnings('UnsupportedAccessControl')[0] ?? '', /allowlist-source-range \(a client IP allowlist, refused by the ConfigMap \(risk Medium\)\)/);
  // At Medium the same Ingress is served with its allowlist.
  const medium = scenario({ 'nginx.ingress.kubernetes.io/allowlist-source-range': '10.0.0.0/8' }, { 'annotations-risk-level': 'Medium' });
  assert.equal(medium.route?.backendId, 'default_web_80');
  assert.equal(Object.values(medium.r.config.data.plugins).filter((p) => p.type === 'ip-restriction').length, 1);
  // upstream-hash-by is High in ingress-nginx: refused at Medium, the backend keeps round robin.
  const hash = scenario({ 'nginx.ingress.kubernetes.io/upstream-hash-by': '$request_uri' }, { 'annotations-risk-level': 'Medium' });
  assert.equal(hash.r.config.data.backends.default_web_80?.balance, 'round_robin');
  assert.match(hash.warnings('RiskyAnnotation')[0] ?? '', /upstream-hash-by \(risk High\) is refused/);
  const high = scenario({ 'nginx.ingress.kubernetes.io/upstream-hash-by': '$request_uri' });
  assert.equal(high.r.config.data.backends.default_web_80?.balance, 'chash');
});

test('ConfigMap: annotations-risk-level takes Low/Medium/High/Critical in any case; anything else keeps the previous value', () => {
  assert.equal(defaultGlobalConfig().annotationsRiskLevel, 'high');
  assert.equal(defaultGlobalConfig().allowSnippetAnnotations, false);
  assert.equal(parseGlobalConfig({ 'annotations-risk-level': 'CRITICAL' }, defaultGlobalConfig()).values.annotationsRiskLevel, 'critical');
  const r = parseGlobalConfig({ 'annotations-risk-level': 'extreme' }, { ...defaultGlobalConfig(), annotationsRiskLevel: 'medium' });
  assert.equal(r.values.annotationsRiskLevel, 'medium');
  assert.match(r.errors[0]?.message ?? '', /annotations-risk-level="extreme": expected Low, Medium, High or Critical; keeping "medium"/);
});
