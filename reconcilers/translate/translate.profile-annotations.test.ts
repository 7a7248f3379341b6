// The directive-profile annotations of ingress-nginx (buffers, retries, cookie/redirect rewriting, access log, rate of
// responses, HTTP version, Connection header): their schemas, how routes pick a profile, and nginx -t of the result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { translate } from './translate.ts';
import { structureChecksum } from './diff.ts';
import { OPTS, ing, modelOf, rule, svc, svcRef } from './fixtures.test-helpers.ts';
import { NGINX_PREFIX, type AnnotationName } from '../annotations/table.ts';
import { parseAnnotations } from '../annotations/parse.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../model/global-config.ts';
import { renderNginxConf, runtimePaths } from '../nginx-driver/nginx/render.ts';
import { nginxTest, runtimeDir } from '../nginx-driver/nginx/nginx-t.test-helpers.ts';
import { UnsafeValueError, words } from '../nginx-driver/nginx/escape.ts';
import type { Profile } from '../config/types.ts';

/** What anything that reaches nginx.conf must never carry through: directive, block, comment, variable and line breaks. */
const INJECTIONS = [
  'x; return 200', 'x }', 'x {', 'x\ny', 'x\r\ny', 'x #', '$host', '"x"', "'x'", 'x\u0000', 'x\u2028y', 'x\u2029y', 'x\u0085y',
  'content_by_lua_block { os.execute("id") }', 'access_by_lua return', '',
];

const CASES: Record<string, { valid: [string, unknown][]; invalid: string[] }> = {
  'proxy-buffering': { valid: [['on', true], ['off', false], ['True', true]], invalid: ['yes', '1', 'on;'] },
  'proxy-request-buffering': { valid: [['off', false], ['on', true]], invalid: ['stream', 'off off'] },
  'proxy-buffer-size': { valid: [['8k', '8k'], ['16K', '16k'], ['4096', '4096']], invalid: ['512', '32m', '8 k', '8kb', '1g'] },
  'proxy-buffers-number': { valid: [['8', 8], ['4', 4]], invalid: ['2', '1025', '8.5', '-4'] },
  'proxy-max-temp-file-size': { valid: [['1024m', '1024m'], ['0', '0'], ['200k', '200k']], invalid: ['1g', '1t', '-1', '100000000m'] },
  'client-body-buffer-size': { valid: [['1000', '1000'], ['1K', '1k'], ['1m', '1m']], invalid: ['100', '65m', '1g'] },
  'proxy-http-version': { valid: [['1.0', '1.0'], ['1.1', '1.1']], invalid: ['2', '2.0', '1', 'HTTP/1.0'] },
  'proxy-cookie-domain': { valid: [['localhost example.org', 'localhost example.org'], ['off', 'off'], ['.internal  .example.com', '.internal .example.com']], invalid: ['localhost', 'a b c', '~^(.*)$ $1', 'a.example $host'] },
  'proxy-cookie-path': { valid: [['/ /app', '/ /app'], ['/two/ /one/', '/two/ /one/']], invalid: ['/', '~*^/one/(.*)$ /$1', '/ /app%20'] },
  'proxy-redirect-from': { valid: [['http://internal.local/', 'http://internal.local/'], ['off', 'off'], ['default', 'default']], invalid: ['http://a/ http://b/', '~^http://(.*)$'] },
  'proxy-redirect-to': { valid: [['https://public.example.com/app/', 'https://public.example.com/app/'], ['/', '/']], invalid: ['$scheme://$host/', 'a b'] },
  'proxy-next-upstream': { valid: [['error timeout http_502', 'error timeout http_502'], ['off', 'off'], ['error  error http_503', 'error http_503']], invalid: ['http_418', 'off error', 'error,timeout'] },
  'proxy-next-upstream-timeout': { valid: [['10', 10], ['0', 0], ['5s', 5]], invalid: ['ten', '1m', '-1'] },
  'proxy-next-upstream-tries': { valid: [['5', 5], ['0', 0]], invalid: ['101', 'many', '-1'] },
  'connection-proxy-header': { valid: [['keep-alive', 'keep-alive'], ['close', 'close']], invalid: ['keep alive', 'keep-alive, upgrade', '-x', 'content_by_lua'] },
  'enable-access-log': { valid: [['false', false], ['true', true]], invalid: ['off', 'no'] },
  'limit-rate': { valid: [['100', 100], ['0', 0]], invalid: ['100k', '10000001', '-1'] },
  'limit-rate-after': { valid: [['1024', 1024], ['0', 0]], invalid: ['1m', '-1', '100000001'] },
};

test('profile annotations: each valid value is read as expected; invalid values and injection payloads are refused', () => {
  for (const [name, c] of Object.entries(CASES)) {
    for (const [raw, want] of c.valid) {
      const p = parseAnnotations({ [`${NGINX_PREFIX}${name}`]: raw });
      assert.deepEqual(p.errors, [], `${name}=${raw}`);
      assert.deepEqual(p.values[name as AnnotationName], want, `${name}=${raw}`);
    }
    for (const raw of [...c.invalid, ...INJECTIONS, ...c.valid.map(([v]) => `${v};`), ...c.valid.map(([v]) => `${v}\nproxy_pass http://evil;`), ...c.valid.map(([v]) => `${v} #`)]) {
      const p = parseAnnotations({ [`${NGINX_PREFIX}${name}`]: raw });
      assert.equal(p.values[name as AnnotationName], undefined, `${name}=${JSON.stringify(raw)} must be refused`);
      assert.equal(p.errors.length, 1, `${name}=${JSON.stringify(raw)} is reported`);
    }
  }
});

const web = svc('web', [{ port: 80 }]);
function structureOf(ingresses: { name: string; host: string; annotations: Record<string, string> }[], config: Record<string, string> = {}) {
  const m = modelOf({ services: [web], ingresses: ingresses.map((i) => ing(i.name, { rules: [rule(i.host, [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: Object.fromEntries(Object.entries(i.annotations).map(([k, v]) => [`${NGINX_PREFIX}${k}`, v])) })) });
  if (Object.keys(config).length) m.setGlobalConfig(parseGlobalConfig(config, defaultGlobalConfig()).values);
  const r = translate(m.snapshot(), OPTS).config;
  const profileOfHost = (h: string): Profile | undefined => r.structure.profiles.find((p) => p.name === r.data.routes[h]?.rules[0]?.route.profile);
  return { r, profileOfHost };
}

test('translation: an annotation that differs from the ConfigMap picks a profile with exactly that setting', () => {
  const cases: [Record<string, string>, Omit<Profile, 'name'>][] = [
    [{ 'proxy-buffering': 'on' }, { proxyBuffering: true }],
    [{ 'proxy-request-buffering': 'off' }, { proxyRequestBuffering: false }],
    [{ 'proxy-buffer-size': '16k' }, { proxyBufferSize: '16k', proxyBuffersNumber: 4 }],
    [{ 'proxy-buffers-number': '8' }, { proxyBufferSize: '4k', proxyBuffersNumber: 8 }],
    [{ 'proxy-max-temp-file-size': '0' }, { proxyMaxTempFileSize: '0' }],
    [{ 'client-body-buffer-size': '1m' }, { clientBodyBufferSize: '1m' }],
    [{ 'client-body-buffer-size': '1000' }, { clientBodyBufferSize: '1000' }],
    [{ 'proxy-buffer-size': '16384' }, { proxyBufferSize: '16k', proxyBuffersNumber: 4 }],
    [{ 'proxy-max-temp-file-size': '2048k' }, { proxyMaxTempFileSize: '2m' }],
    // Below the buffer size nginx would refuse the location: raised to it.
    [{ 'proxy-max-temp-file-size': '1k', 'proxy-buffer-size': '8k' }, { proxyMaxTempFileSize: '8k', proxyBufferSize: '8k', proxyBuffersNumber: 4 }],
    [{ 'proxy-http-version': '1.0' }, { proxyHttpVersion: '1.0' }],
    [{ 'proxy-cookie-domain': 'internal.local example.com' }, { proxyCookieDomain: 'internal.local example.com' }],
    [{ 'proxy-cookie-path': '/ /app' }, { proxyCookiePath: '/ /app' }],
    [{ 'proxy-redirect-from': 'http://in.local/', 'proxy-redirect-to': 'https://out.example/' }, { proxyRedirect: { from: 'http://in.local/', to: 'https://out.example/' } }],
    [{ 'proxy-next-upstream': 'error timeout http_503' }, { nextUpstream: 'error timeout http_503', nextUpstreamTries: 3, nextUpstreamTimeoutSeconds: 0 }],
    [{ 'proxy-next-upstream-tries': '1' }, { nextUpstream: 'error timeout', nextUpstreamTries: 1, nextUpstreamTimeoutSeconds: 0 }],
    [{ 'proxy-next-upstream-timeout': '7' }, { nextUpstream: 'error timeout', nextUpstreamTries: 3, nextUpstreamTimeoutSeconds: 7 }],
    [{ 'connection-proxy-header': 'keep-alive' }, { connectionHeader: 'keep-alive' }],
    [{ 'enable-access-log': 'false' }, { accessLog: false }],
    [{ 'limit-rate': '100', 'limit-rate-after': '512' }, { limitRateKb: 100, limitRateAfterKb: 512, proxyBuffering: true }],
    [{ 'limit-rate': '100', 'proxy-buffering': 'on' }, { limitRateKb: 100, proxyBuffering: true }],
  ];
  for (const [a, want] of cases) {
    const { r, profileOfHost } = structureOf([{ name: 'a', host: 'a.example.com', annotations: a }]);
    const p = profileOfHost('a.example.com');
    assert.ok(p, JSON.stringify(a));
    const { name, ...rest } = p;
    assert.deepEqual(rest, want, JSON.stringify(a));
    assert.deepEqual(r.structure.profiles.map((x) => x.name), [name]);
  }
});

test('translation: values equal to the ConfigMap (or to nginx\'s default) need no profile', () => {
  const none: Record<string, string>[] = [
    { 'proxy-buffering': 'off', 'proxy-request-buffering': 'on', 'proxy-buffer-size': '4k', 'proxy-buffers-number': '4' },
    { 'proxy-max-temp-file-size': '1024m', 'client-body-buffer-size': '8k', 'proxy-http-version': '1.1' },
    { 'proxy-cookie-domain': 'off', 'proxy-cookie-path': 'off', 'proxy-redirect-from': 'off', 'proxy-redirect-to': '/x' },
    { 'proxy-redirect-from': 'http://a/' }, // without proxy-redirect-to: nothing to replace it with
    { 'proxy-next-upstream': 'error timeout', 'proxy-next-upstream-tries': '3', 'proxy-next-upstream-timeout': '0' },
    { 'enable-access-log': 'true', 'limit-rate': '0', 'limit-rate-after': '100' },
  ];
  for (const a of none) {
    const { r } = structureOf([{ name: 'a', host: 'a.example.com', annotations: a }]);
    assert.deepEqual(r.structure.profiles, [], JSON.stringify(a));
    assert.equal(r.data.routes['a.example.com']?.rules[0]?.route.profile, undefined);
  }
  // The ConfigMap moves the baseline: an annotation equal to the new global value needs no profile either.
  const cfg = { 'proxy-buffering': 'on', 'proxy-buffer-size': '16k', 'proxy-buffers-number': '8', 'proxy-next-upstream': 'error timeout http_502', 'proxy-next-upstream-tries': '5', 'client-body-buffer-size': '1m' };
  const same = { 'proxy-buffering': 'on', 'proxy-buffer-size': '16k', 'proxy-buffers-number': '8', 'proxy-next-upstream': 'error timeout http_502', 'proxy-next-upstream-tries': '5', 'client-body-buffer-size': '1024k' };
  assert.deepEqual(structureOf([{ name: 'a', host: 'a.example.com', annotations: same }], cfg).r.structure.profiles, []);
  // ... and an annotation with nginx's old default now differs from it.
  const { profileOfHost } = structureOf([{ name: 'a', host: 'a.example.com', annotations: { 'proxy-buffering': 'off' } }], cfg);
  assert.equal(profileOfHost('a.example.com')?.proxyBuffering, false);
});

test('translation: equal settings share one profile across Ingresses; different ones do not', () => {
  const a = { 'proxy-cookie-path': '/ /app', 'proxy-buffering': 'on' };
  const { r } = structureOf([
    { name: 'a', host: 'a.example.com', annotations: a },
    { name: 'b', host: 'b.example.com', annotations: { 'proxy-buffering': 'on', 'proxy-cookie-path': '/  /app' } },
    { name: 'c', host: 'c.example.com', annotations: { ...a, 'proxy-http-version': '1.0' } },
    { name: 'd', host: 'd.example.com', annotations: {} },
  ]);
  const pa = r.data.routes['a.example.com']?.rules[0]?.route.profile;
  assert.ok(pa);
  assert.equal(r.data.routes['b.example.com']?.rules[0]?.route.profile, pa);
  assert.notEqual(r.data.routes['c.example.com']?.rules[0]?.route.profile, pa);
  assert.equal(r.data.routes['d.example.com']?.rules[0]?.route.profile, undefined);
  assert.equal(r.structure.profiles.length, 2);
  // Routes that share settings share one location however many Ingresses there are: nginx.conf does not grow.
  const many = structureOf(Array.from({ length: 50 }, (_, i) => ({ name: `i${i}`, host: `h${i}.example.com`, annotations: a })));
  assert.equal(many.r.structure.profiles.length, 1);
});

test('render: every setting becomes its directive in the profile\'s location, and nginx -t accepts it', () => {
  const all = {
    'proxy-buffering': 'on', 'proxy-request-buffering': 'off', 'proxy-buffer-size': '16k', 'proxy-buffers-number': '8', 'proxy-max-temp-file-size': '0',
    'client-body-buffer-size': '1m', 'proxy-http-version': '1.0', 'proxy-cookie-domain': 'internal.local example.com', 'proxy-cookie-path': '/ /app',
    'proxy-redirect-from': 'http://in.local/', 'proxy-redirect-to': 'https://out.example/', 'proxy-next-upstream': 'error http_502', 'proxy-next-upstream-tries': '2',
    'proxy-next-upstream-timeout': '9', 'connection-proxy-header': 'keep-alive', 'enable-access-log': 'false', 'limit-rate': '64', 'limit-rate-after': '128',
  };
  const { r } = structureOf([
    { name: 'a', host: 'a.example.com', annotations: all },
    { name: 'g', host: 'g.example.com', annotations: { 'backend-protocol': 'GRPC', 'proxy-next-upstream-timeout': '3', 'proxy-buffering': 'on' } },
  ]);
  const rt = runtimeDir();
  const conf = renderNginxConf(r.structure, rt, structureChecksum(r.structure));
  const name = r.data.routes['a.example.com']?.rules[0]?.route.profile ?? '';
  const loc = new RegExp(`location @portico_${name} \\{[\\s\\S]*?\\n    \\}`).exec(conf)?.[0] ?? '';
  for (const d of [
    'proxy_buffering on;', 'proxy_request_buffering off;', 'proxy_buffer_size 16k;', 'proxy_buffers 8 16k;', 'proxy_max_temp_file_size 0;',
    'client_body_buffer_size 1m;', 'proxy_http_version 1.0;', 'proxy_cookie_domain internal.local example.com;', 'proxy_cookie_path / /app;',
    'proxy_redirect http://in.local/ https://out.example/;', 'proxy_next_upstream error http_502;', 'proxy_next_upstream_tries 2;', 'proxy_next_upstream_timeout 9s;',
    'set $portico_connection_upgrade keep-alive;', 'access_log off;', 'limit_rate 64k;', 'limit_rate_after 128k;',
  ]) assert.ok(loc.includes(`\n      ${d}\n`), `${d} in\n${loc}`);
  assert.ok(loc.endsWith('proxy_pass http://portico_upstream;\n    }'));
  nginxTest(rt, conf);
});

test('render: a value that slipped past the schemas is refused by the escaping helpers, not written', () => {
  const { r } = structureOf([{ name: 'a', host: 'a.example.com', annotations: { 'proxy-cookie-path': '/ /app' } }]);
  const p = r.structure.profiles[0] as Profile;
  const bad: Partial<Profile>[] = [
    { proxyCookiePath: '/ /app; return 200' }, { proxyCookieDomain: 'a $host' }, { proxyRedirect: { from: '/a', to: '/b;}' } }, { proxyHttpVersion: '1.0;' as '1.0' },
    { connectionHeader: 'close;' }, { proxyBufferSize: '4k;', proxyBuffersNumber: 4 }, { limitRateKb: -1 }, { proxyBuffering: 'on' as unknown as boolean }, { nextUpstreamTimeoutSeconds: 1.5 },
  ];
  for (const b of bad) assert.throws(() => renderNginxConf({ ...r.structure, profiles: [{ ...p, ...b }] }, runtimePaths('/run/p'), 'c'), /unsafe|invalid|expected/i, JSON.stringify(b));
});

test('escape: words (cookie/redirect rewriting, HTTP version) refuses directive syntax and Lua directive names', () => {
  assert.equal(words('/ /app'), '/ /app');
  for (const bad of ['/ /app;', 'a  b', 'a\nb', '$host /', 'a {', 'a}', '#x', '"a"', 'access_by_lua_block', 'x content_by_lua', 'a\u2028b', '']) assert.throws(() => words(bad), UnsafeValueError, JSON.stringify(bad));
});
