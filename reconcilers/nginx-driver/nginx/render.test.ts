import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { checkTemplate, connectionLimits, renderNginxConf, runtimePaths } from './render.ts';
import { nginxTest, runtimeDir } from './nginx-t.test-helpers.ts';
import { cidr, host, luaPeer, quote, quoteFormat, quoteRegex, serverName, size, unixListen, upstreamName, UnsafeValueError } from './escape.ts';
import type { Structure } from '../../config/types.ts';
import { translate } from '../../translate/translate.ts';
import { structureChecksum } from '../../translate/diff.ts';
import { OPTS, ing, modelOf, rule, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';

test('quote: refuses what could break out of an nginx string, escapes the rest', () => {
  for (const bad of ['a\nb', 'x\r', '$host', '${x}', 'a\u0000', 123, null]) assert.throws(() => quote(bad), UnsafeValueError);
  assert.equal(quote('/a"b\\c'), '"/a\\"b\\\\c"');
  assert.equal(quote('/plain/path'), '"/plain/path"');
});

test('regex, log format, size and host helpers', () => {
  assert.equal(quoteRegex('^/v[0-9]+/x$'), '"^/v[0-9]+/x$"');
  assert.throws(() => quoteRegex('/a$b'), UnsafeValueError);
  assert.throws(() => quoteRegex('/a"; deny all; #'), UnsafeValueError);
  assert.equal(quoteFormat('$remote_addr $status'), "'$remote_addr $status'");
  assert.equal(quoteFormat('{"status": $status, "ua": "$http_user_agent"}'), `'{"status": $status, "ua": "$http_user_agent"}'`);
  for (const bad of ["x' ; access_log off", 'a;b', 'a\\b', 'a\nb', 'a\tb', 'x ${status}', 'caf\u00e9']) assert.throws(() => quoteFormat(bad), UnsafeValueError, bad);
  assert.equal(size('10m'), '10m');
  assert.throws(() => size('10m; evil'), UnsafeValueError);
  assert.throws(() => host('a.example.com;'), UnsafeValueError);
  assert.throws(() => host('A.example.com'), UnsafeValueError);
  assert.equal(serverName('*.example.com'), '"~^[^.]+\\.example\\.com$"');
  assert.equal(serverName('a.example.com'), 'a.example.com');
  assert.equal(upstreamName('portico_be_p_0a1b'), 'portico_be_p_0a1b');
  for (const bad of ['portico_x; evil', 'other', 'portico_', 'portico_A', 1]) assert.throws(() => upstreamName(bad), UnsafeValueError);
});

test('template guard: a value emitted without an escaping helper fails at load', () => {
  assert.throws(() => checkTemplate('t', 'server_name {{server.host}};'), /without an escaping helper/);
  assert.throws(() => checkTemplate('t', 'x {{{raw}}}'), /without an escaping helper/);
  assert.doesNotThrow(() => checkTemplate('t', 'server_name {{host server.host}};{{#if a}}x{{/if}}'));
});

test('nginx.conf holds no host or path: one router server, a named location per directive profile; passes nginx -t', () => {
  const m = modelOf({
    services: [svc('web', [{ port: 80 }])],
    ingresses: [
      ing('a', {
        tls: [{ hosts: ['a.example.com'] }],
        rules: [
          rule('a.example.com', [{ path: '/api', backend: svcRef('web', 80) }, { path: '/e', pathType: 'Exact', backend: svcRef('web', 80) }]),
          rule('*.w.example.com', [{ path: '/', backend: svcRef('web', 80) }]),
          rule(undefined, [{ path: '/n', backend: svcRef('nope', 80) }]),
        ],
      }),
      ing('big', { rules: [rule('b.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { 'nginx.ingress.kubernetes.io/proxy-body-size': '64m' } }),
    ],
  });
  const s = translate(m.snapshot(), OPTS).config.structure;
  const rt = runtimeDir();
  const conf = renderNginxConf(s, rt, structureChecksum(s));
  for (const h of ['a.example.com', 'w.example.com', '"/api"', '"/e"']) assert.ok(!conf.includes(h), `${h} is data, not configuration`);
  assert.match(conf, /set_by_lua \$portico_jump 'return require\("portico.router"\).route_set\(\)';/);
  assert.match(conf, /error_page 418 = \$portico_jump;/);
  assert.equal(s.profiles.length, 1);
  const name = s.profiles[0]?.name ?? '';
  assert.match(conf, new RegExp(`location @portico_${name} \\{\\n      client_max_body_size 64m;\\n[^}]*access_by_lua_block[\\s\\S]*?\\n      proxy_pass http://portico_upstream;\\n    \\}`));
  assert.match(conf, new RegExp(`profiles = \\{ "${name}", +\\}`), 'the router is told which profiles exist');
  nginxTest(rt, conf);
});

test('nginx.conf does not change with the number of Ingresses that share its profiles', () => {
  const conf = (n: number) => {
    const m = modelOf({
      services: [svc('web', [{ port: 80 }])],
      ingresses: Array.from({ length: n }, (_, i) => ing(`i${i}`, { rules: [rule(`h${i}.example.com`, [{ path: '/', backend: svcRef('web', 80) }, { path: `/p${i}`, pathType: 'Exact', backend: svcRef('web', 80) }])] })),
    });
    const s = translate(m.snapshot(), OPTS).config.structure;
    return renderNginxConf(s, runtimePaths('/run/p'), structureChecksum(s));
  };
  assert.equal(conf(1), conf(200));
});

function structureWith(hosts: string[], global: Partial<Structure['global']> = {}): Structure {
  const m = modelOf({
    services: [svc('web', [{ port: 80 }])],
    ingresses: [ing('a', { rules: hosts.map((h) => rule(h, [{ path: '/', backend: svcRef('web', 80) }])) })],
  });
  const s = translate(m.snapshot(), OPTS).config.structure;
  return { ...s, global: { ...s.global, ...global } };
}

test('lua-nginx-module never trims the heap: no malloc_trim() stall every 1000 requests', () => {
  const conf = renderNginxConf(structureWith(['a.example.com']), runtimeDir(), 'c');
  // Its default (1000) walks the worker's heap from the log phase and gives pages back that the next requests fault
  // in again (bench-dataplane-cpu: ~50 page faults per trim with 10,001 hosts, none without).
  assert.match(conf, /^http \{[^]*?\n  lua_malloc_trim 0;\n/m);
});

test('worker_rlimit_nofile is twice worker_connections and stays within the inherited hard limit', () => {
  assert.deepEqual(connectionLimits(null), { workerConnections: 16384, workerRlimitNofile: 32768 });
  assert.deepEqual(connectionLimits(1_048_576), { workerConnections: 16384, workerRlimitNofile: 32768 });
  assert.deepEqual(connectionLimits(20_000), { workerConnections: 10000, workerRlimitNofile: 20000 });
  const rt = runtimeDir({ maxOpenFiles: 20_000 });
  const conf = renderNginxConf(structureWith(['a.example.com']), rt, 'c');
  assert.match(conf, /worker_rlimit_nofile 20000;/);
  assert.match(conf, /worker_connections 10000;/);
  nginxTest(rt, conf);
});

test('the configuration API is only on a unix socket; the TCP status port serves /healthz and nothing that reaches Lua', () => {
  const rt = runtimeDir();
  const conf = renderNginxConf(structureWith(['a.example.com']), rt, 'c');
  assert.ok(conf.includes(`listen unix:${rt.apiSocket};`));
  assert.ok(rt.apiSocket.startsWith(`${rt.apiDir}/`));
  const status = /server \{\n\s+listen 127\.0\.0\.1:10246;[\s\S]*?\n  \}\n/.exec(conf)?.[0] ?? '';
  assert.match(status, /location = \/healthz/);
  assert.doesNotMatch(status, /lua|portico\/|api/);
  // The API handler appears exactly once, inside the unix-socket server.
  assert.equal(conf.split('require("portico.api")').length, 2);
  const api = conf.slice(conf.indexOf(`listen unix:${rt.apiSocket};`));
  assert.ok(api.indexOf('require("portico.api")') < api.indexOf('\n  }\n'), 'the API location belongs to the unix-socket server');
  // The plugin engine runs only in named locations the router sends plugin routes to; `location /` (every
  // plugin-free route) has no access-phase handler.
  const root = /\n    location \/ \{[\s\S]*?\n    \}/.exec(conf)?.[0] ?? '';
  assert.match(root, /proxy_pass/);
  assert.doesNotMatch(root, /_by_lua/, 'no Lua phase handler for plugin-free routes');
  assert.match(conf, /location @portico_lua \{\n      access_by_lua_block \{ require\("portico.plugins"\).access\(\) \}/);
  assert.match(conf, /location = \/_portico_internal\/auth \{\n      internal;/);
  nginxTest(rt, conf);
});

test('WebSockets: Upgrade passed, Connection "upgrade" only when asked, else empty (upstream keep-alive); HTTP/2 on TLS', () => {
  const rt = runtimeDir();
  const conf = renderNginxConf(structureWith(['a.example.com']), rt, 'c');
  assert.match(conf, /portico_if \$portico_connection_upgrade \$http_upgrade upgrade;/);
  // Written by the variables module (an empty value: no line); the proxy module's own defaults suppressed.
  assert.match(conf, /\n  proxy_set_header Upgrade "";\n  portico_proxy_header Upgrade \$http_upgrade;/);
  assert.match(conf, /\n  proxy_set_header Connection "";\n  portico_proxy_header Connection \$portico_connection_upgrade;/);
  // Only the internal locations (external-auth and mirror subrequests, error pages: never upgraded, kept alive)
  // clear Connection.
  const internal = [...conf.matchAll(/location (?:= \/_portico_internal\/(?:auth|mirror|mirror_nobody)|\^~ \/_portico_internal\/(?:mirror|mirror_nobody)\/|@portico_errors) \{[\s\S]*?\n    \}/g)].map((m) => m[0]);
  assert.equal(internal.length, 6);
  for (const loc of internal) assert.match(loc, /proxy_set_header Connection "";/);
  // Elsewhere only the http level's suppression, next to the module's line.
  assert.doesNotMatch(internal.reduce((c, loc) => c.replace(loc, ''), conf).replace('\n  proxy_set_header Connection "";\n  portico_proxy_header Connection', ''), /proxy_set_header Connection "";/);
  const tlsListens = conf.match(/listen [^;]*:8443[^;]*;/g) ?? [];
  assert.equal(tlsListens.length, 1, 'one server for every host');
  for (const l of tlsListens) assert.match(l, / ssl http2/);
  nginxTest(rt, conf);
});

test('forwarded headers, untrusted (default): the client\'s X-Forwarded-For is replaced, X-Forwarded-Port is the published port', () => {
  const rt = runtimeDir();
  const s = structureWith(['a.example.com']);
  const conf = renderNginxConf({ ...s, global: { ...s.global, listen: { ...s.global.listen, publishedHttpPort: 8000 } } }, rt, 'c');
  assert.match(conf, /proxy_set_header X-Forwarded-For \"\";\n  portico_proxy_header X-Forwarded-For \$remote_addr;/);
  assert.doesNotMatch(conf, /proxy_add_x_forwarded_for|set_real_ip_from|real_ip_header/);
  assert.match(conf, /portico_if \$portico_forwarded_port_published \$https 443 8000;/);
  assert.match(conf, /portico_proxy_header X-Forwarded-Port \$portico_forwarded_port_published;/);
  nginxTest(rt, conf);
});

test('forwarded headers, trusted: realip from proxy-real-ip-cidr only (recursive), X-Forwarded-* taken from trusted peers only', () => {
  const rt = runtimeDir();
  const conf = renderNginxConf(structureWith(['a.example.com'], { useForwardedHeaders: true, proxyRealIpCidr: ['192.0.2.0/24', '2001:db8::/32'] }), rt, 'c');
  assert.match(conf, /set_real_ip_from 192\.0\.2\.0\/24;\n\s+set_real_ip_from 2001:db8::\/32;/);
  assert.match(conf, /real_ip_header X-Forwarded-For;/);
  assert.match(conf, /real_ip_recursive on;/);
  assert.match(conf, /geo \$realip_remote_addr \$portico_trusted_peer \{\n\s+default 0;\n\s+192\.0\.2\.0\/24 1;/);
  assert.match(conf, /proxy_set_header X-Forwarded-For \"\";\n  portico_proxy_header X-Forwarded-For \$remote_addr;/);
  assert.match(conf, /portico_proxy_header X-Forwarded-Proto \$portico_forwarded_proto;/);
  nginxTest(rt, conf);
  // The ConfigMap's default: every IPv4 peer (ingress-nginx's 0.0.0.0/0).
  const dflt = renderNginxConf(structureWith(['a.example.com'], { useForwardedHeaders: true }), rt, 'c');
  assert.match(dflt, /\n  set_real_ip_from 0\.0\.0\.0\/0;\n  real_ip_header X-Forwarded-For;/);
  assert.match(dflt, /geo \$realip_remote_addr \$portico_trusted_peer \{\n\s+default 0;\n\s+0\.0\.0\.0\/0 1;\n\s+\}/);
  nginxTest(rt, dflt);
  // An empty list: nobody is trusted (no set_real_ip_from at all), and the configuration is still valid.
  const none = renderNginxConf(structureWith(['a.example.com'], { useForwardedHeaders: true, proxyRealIpCidr: [] }), rt, 'c');
  assert.doesNotMatch(none, /set_real_ip_from/);
  nginxTest(rt, none);
});

test('lua-shared-dicts sizes are rendered; the access log goes to stdout unbuffered (one write per line) or a buffered file', () => {
  const rt = runtimeDir();
  const conf = renderNginxConf(structureWith(['a.example.com'], { luaSharedDicts: { dataKb: 65536, certsKb: 512 } }), rt, 'c');
  assert.match(conf, /lua_shared_dict portico_data 65536k;/);
  assert.match(conf, /lua_shared_dict portico_certs 512k;/);
  assert.match(conf, /access_log "[^"]+access\.log" portico_upstream buffer=64k flush=1s;/);
  nginxTest(rt, conf);
  const stdout = renderNginxConf(structureWith(['a.example.com']), { ...rt, accessLog: '/dev/stdout' }, 'c');
  assert.match(stdout, /lua_shared_dict portico_data 131072k;/);
  assert.match(stdout, /access_log "\/dev\/stdout" portico_upstream;/);
});

test('socket, CIDR and Lua peer helpers refuse what could break out of their token', () => {
  assert.equal(unixListen('/run/portico/api/config.sock'), 'unix:/run/portico/api/config.sock');
  for (const bad of ['relative.sock', '/a b', '/a;b', '/a"b', `/${'x'.repeat(120)}`]) assert.throws(() => unixListen(bad), UnsafeValueError);
  assert.equal(luaPeer('unix:/run/p/unavailable.sock'), '"unix:/run/p/unavailable.sock"');
  assert.throws(() => luaPeer('unix:/a") os.exit() ("'), UnsafeValueError);
  assert.throws(() => luaPeer('127.0.0.1'), UnsafeValueError);
  assert.equal(cidr('10.0.0.0/8'), '10.0.0.0/8');
  assert.equal(cidr('2001:db8::/32'), '2001:db8::/32');
  assert.equal(cidr('192.0.2.1'), '192.0.2.1');
  for (const bad of ['10.0.0.0/33', '::/129', '10.0.0/8', '0.0.0.0/0; include /etc/passwd', 'all', '']) assert.throws(() => cidr(bad), UnsafeValueError);
});

test('backend protocols render and pass nginx -t: https, grpc and grpcs profiles (with SNI and a CA file)', async () => {
  const { writeTrustedCas } = await import('./render.ts');
  const { execFileSync } = await import('node:child_process');
  const { mkdtempSync: mk, readFileSync: rf } = await import('node:fs');
  const { tmpdir: td } = await import('node:os');
  const d = mk(path.join(td(), 'portico-ca-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=ca', '-keyout', path.join(d, 'k'), '-out', path.join(d, 'c')], { stdio: 'ignore' });
  const base = structureWith(['a.example.com']);
  const s = {
    ...base,
    profiles: [
      { name: 'p_aaaa', backendProtocol: 'HTTPS' as const },
      { name: 'p_bbbb', backendProtocol: 'GRPC' as const },
      { name: 'p_cccc', backendProtocol: 'GRPCS' as const, sslServerName: 'api.default.svc', trustedCa: rf(path.join(d, 'c'), 'utf8') },
    ],
  };
  const rt = runtimeDir();
  writeTrustedCas(s, rt);
  const conf = renderNginxConf(s, rt, 'c');
  assert.match(conf, /location @portico_p_aaaa \{[\s\S]*?proxy_pass https:\/\/portico_be_p_aaaa;/);
  assert.match(conf, /location @portico_p_bbbb \{[\s\S]*?grpc_pass grpc:\/\/portico_be_p_bbbb;/);
  assert.match(conf, /location @portico_p_cccc \{[\s\S]*?grpc_ssl_verify on;[\s\S]*?grpc_pass grpcs:\/\/portico_be_p_cccc;/);
  // nginx keeps idle upstream connections per upstream block and peer address: each of these profiles has a block
  // of its own (balanced by the same Lua, with keep-alive), so none rides another's TLS or HTTP/2 connections, nor
  // a plain HTTP one; auth subrequests have theirs too. The peer wrapper (+handoff: the forwarded headers, and the
  // router's hand-off where `location /` proxies) on the blocks proxy_pass sends requests to, between the Lua balancer
  // it wraps and keepalive; never on a gRPC one (its requests are not HTTP/1 text).
  const blocks = [...conf.matchAll(/\n  upstream (\S+) \{\n    server 0\.0\.0\.1:1234;\n    balancer_by_lua_block \{\n      require\("portico\.balancer"\)\.(\w+)\(\)\n    \}((?:\n    #[^\n]*)*\n    portico_peer_handoff;)?\n    keepalive \d+;/g)].map((m) => `${m[1]}:${m[2]}${m[3] ? '+handoff' : ''}`);
  assert.deepEqual(blocks, ['portico_upstream:balance+handoff', 'portico_auth_upstream:balance', 'portico_mirror_upstream:balance_mirror', 'portico_be_p_aaaa:balance+handoff', 'portico_be_p_bbbb:balance', 'portico_be_p_cccc:balance']);
  assert.match(conf, /proxy_pass \$portico_auth_scheme:\/\/portico_auth_upstream\$portico_auth_uri;/);
  // The forwarded headers (portico_proxy_header) are written by the wrapper: every proxy_pass goes to a wrapped block,
  // or its location lists its own headers and says so (a block without the wrapper would send none of them).
  const wrapped = new Set(blocks.filter((b) => b.endsWith('+handoff')).map((b) => b.split(':')[0]));
  for (const m of conf.matchAll(/proxy_pass [^:;]*:\/\/(\w+)[^;]*;/g)) {
    const location = conf.slice(conf.lastIndexOf('\n    location ', m.index), m.index);
    assert.ok(wrapped.has(m[1] as string) || /\n      portico_proxy_header off;/.test(location), `${m[0]} in ${location.split('\n')[1]}`);
  }
  // A location with proxy_set_header lines of its own drops the http level's, among them the empty ones that keep a
  // client's X-Forwarded-For & co. from being passed: the module's lines must be off there too (else both would go).
  const own = conf.split('\n    location ').slice(1).filter((loc) => /\n      proxy_set_header /.test(loc));
  assert.equal(own.length, 6, 'auth, four mirror locations, error pages');
  for (const loc of own) assert.match(loc, /\n      portico_proxy_header off;/, loc.split('\n')[0]);
  nginxTest(rt, conf);
});
