// Per-type Plugin settings (crds/schema/plugin-config.ts): defaults, refusals, and the one-line error the
// controller puts in the Plugin's status.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isCidr, parsePluginConfig, pluginConfigSchema, type PluginConfig } from './schema/plugin-config.ts';
import { PLUGIN_TYPES } from './schema/plugin.ts';

const ok = (type: string, config: unknown): PluginConfig => {
  const r = parsePluginConfig(type, config);
  assert.ok(r.ok, `${type} ${JSON.stringify(config)}: ${r.ok ? '' : r.error}`);
  return r.config;
};
const err = (type: string, config: unknown): string => {
  const r = parsePluginConfig(type, config);
  assert.ok(!r.ok, `${type} ${JSON.stringify(config)} should be refused`);
  assert.doesNotMatch(r.error, /\n/, 'one line');
  return r.error;
};

test('every plugin type has a config schema', () => {
  const covered = pluginConfigSchema.options.map((o) => o.shape.type.value);
  assert.deepEqual([...covered].sort(), [...PLUGIN_TYPES].sort());
});

test('defaults are applied', () => {
  assert.deepEqual(ok('rate-limit', { requestsPerSecond: 10 }), { type: 'rate-limit', policy: 'local', requestsPerSecond: 10, burst: 0, by: 'ip', status: 429 });
  assert.deepEqual(ok('key-auth', undefined), { type: 'key-auth', header: 'apikey', hideCredentials: true });
  assert.deepEqual(ok('basic-auth', {}), { type: 'basic-auth', realm: 'portico', hideCredentials: true });
  assert.deepEqual(ok('ip-restriction', { deny: ['192.0.2.0/24'] }), { type: 'ip-restriction', deny: ['192.0.2.0/24'], status: 403 });
  assert.deepEqual(ok('cors', { allowOrigins: ['https://app.example.com'] }), {
    type: 'cors',
    allowOrigins: ['https://app.example.com'],
    allowMethods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'],
    allowCredentials: false,
    maxAge: 86400,
  });
  assert.deepEqual(ok('external-auth', { service: { name: 'auth', port: 8080 } }), {
    type: 'external-auth',
    service: { name: 'auth', port: 8080 },
    path: '/',
    method: 'GET',
    timeout: '5s',
  });
  assert.deepEqual(ok('redirect', { scheme: 'https' }), { type: 'redirect', statusCode: 302, scheme: 'https', keepQuery: true });
  assert.deepEqual(ok('rewrite', { prefix: { from: '/old', to: '/new' } }), { type: 'rewrite', prefix: { from: '/old', to: '/new' } });
});

test('valid configs of every type', () => {
  ok('rate-limit', { requestsPerMinute: 600, burst: 10, by: 'header', header: 'X-Api-Key', status: 503 });
  ok('rate-limit', { requestsPerSecond: 1, by: 'consumer' });
  ok('key-auth', { header: 'X-Api-Key', query: 'api_key', hideCredentials: false });
  ok('basic-auth', { realm: "Ops' area (staff only)" });
  ok('ip-restriction', { allow: ['10.0.0.0/8', '192.0.2.7', '2001:db8::/32', '::1', '0.0.0.0/0', '::/0'], status: 404 });
  ok('cors', { allowOrigins: ['*'], allowHeaders: ['Authorization', 'X-Requested-With'], exposeHeaders: ['X-Total'], maxAge: 0 });
  ok('cors', { allowOrigins: ['https://*.example.com', 'http://localhost:3000'], allowCredentials: true, allowMethods: ['GET'] });
  ok('request-headers', { set: [{ name: 'X-Env', value: 'prod "eu" $1' }], add: [{ name: 'Via', value: '' }], remove: ['X-Debug'] });
  ok('response-headers', { remove: ['Server'] });
  ok('external-auth', { service: { name: 'auth', port: 80 }, path: '/verify', method: 'POST', forwardHeaders: ['Authorization'], upstreamHeaders: ['X-User'], clientHeaders: ['WWW-Authenticate'], timeout: '500ms' });
  ok('redirect', { statusCode: 308, hostname: 'www.example.com', port: 8443, prefix: { from: '/a', to: '/b' }, keepQuery: false });
  ok('rewrite', { regex: { pattern: '^/api/(.*)', replacement: '/$1' }, host: 'internal.example.com' });
});

test('refusals name the field', () => {
  const cases: [string, unknown, RegExp][] = [
    ['rate-limit', { requestsPerSecond: 10, requestsPerMinute: 600 }, /^config\.requestsPerSecond: set exactly one of requestsPerSecond and requestsPerMinute$/],
    ['rate-limit', {}, /^config\.requestsPerSecond: set exactly one/],
    ['rate-limit', { requestsPerSecond: 0 }, /^config\.requestsPerSecond: Too small/],
    ['rate-limit', { requestsPerSecond: 1.5 }, /^config\.requestsPerSecond: /],
    ['rate-limit', { requestsPerSecond: 10, by: 'header' }, /^config\.header: header is required with by: header/],
    ['rate-limit', { requestsPerSecond: 10, header: 'X-Key' }, /^config\.header: /],
    ['rate-limit', { requestsPerSecond: 10, status: 200 }, /^config\.status: Too small/],
    ['rate-limit', { requestsPerSecond: 10, burts: 5 }, /^config\.burts: unknown field$/],
    ['key-auth', { header: 'api key' }, /^config\.header: must be an HTTP token/],
    ['basic-auth', { realm: 'say "hi"' }, /^config\.realm: must be printable ASCII without quotes or backslashes/],
    ['basic-auth', { realm: 'a\\b' }, /^config\.realm: /],
    ['ip-restriction', {}, /^config\.allow: set allow or deny/],
    ['ip-restriction', { allow: [] }, /^config\.allow: set allow or deny/],
    ['ip-restriction', { allow: ['10.0.0.0/33'] }, /^config\.allow\[0\]: must be an IPv4 or IPv6 address/],
    ['ip-restriction', { deny: ['192.0.2.1', '256.1.1.1'] }, /^config\.deny\[1\]: must be an IPv4 or IPv6 address/],
    ['cors', { allowOrigins: [] }, /^config\.allowOrigins: Too small/],
    ['cors', { allowOrigins: ['*'], allowCredentials: true }, /^config\.allowCredentials: allowCredentials cannot be used with the "\*" origin/],
    ['cors', { allowOrigins: ['example.com'] }, /^config\.allowOrigins\[0\]: must be "\*", "scheme:\/\/host\[:port\]"/],
    ['cors', { allowOrigins: ['https://Example.com'] }, /^config\.allowOrigins\[0\]:/],
    ['cors', { allowOrigins: ['https://a.example.com:0'] }, /^config\.allowOrigins\[0\]:/],
    ['cors', { allowOrigins: ['https://a.example.com/path'] }, /^config\.allowOrigins\[0\]:/],
    ['cors', { allowOrigins: ['*'], maxAge: 86400 * 31 }, /^config\.maxAge: Too big/],
    ['request-headers', {}, /^config\.set: set at least one of set, add, remove/],
    ['request-headers', { set: [], remove: [] }, /^config\.set: set at least one/],
    ['request-headers', { set: [{ name: 'X-A', value: 'a\r\nX-Injected: 1' }] }, /^config\.set\[0\]\.value: must be printable ASCII/],
    ['response-headers', { add: [{ name: 'X-A', value: 'x'.repeat(4097) }] }, /^config\.add\[0\]\.value: Too big/],
    ['response-headers', { remove: ['Bad Header'] }, /^config\.remove\[0\]: must be an HTTP token/],
    ['external-auth', {}, /^config\.service: /],
    ['external-auth', { service: { name: 'auth', port: 80 }, path: 'verify' }, /^config\.path: must start with "\/"/],
    ['external-auth', { service: { name: 'auth', port: 80 }, method: 'PUT' }, /^config\.method: Invalid option/],
    ['external-auth', { service: { name: 'auth', port: 80 }, timeout: '5' }, /^config\.timeout: must be a duration/],
    ['redirect', {}, /^config: set at least one of scheme, hostname, port, path, prefix$/],
    ['redirect', { path: '/a', prefix: { from: '/b', to: '/c' } }, /^config\.prefix: set path or prefix, not both$/],
    ['redirect', { statusCode: 304, scheme: 'https' }, /^config\.statusCode: must be one of 301, 302, 303, 307, 308$/],
    ['redirect', { hostname: '*.example.com' }, /^config\.hostname: must be a lower-case DNS name/],
    ['redirect', { prefix: { from: '/a', to: 'b' } }, /^config\.prefix\.to: must start with "\/"/],
    ['rewrite', {}, /^config: set at least one of path, prefix, regex, host, hostHeader$/],
    ['rewrite', { path: '/a', regex: { pattern: 'x', replacement: 'y' } }, /^config\.path: set at most one of path, prefix, regex$/],
    ['rewrite', { regex: { pattern: 'x' } }, /^config\.regex\.replacement: /],
  ];
  for (const [type, config, expected] of cases) assert.match(err(type, config), expected, `${type} ${JSON.stringify(config)}`);
});

test('the envelope: unknown type, non-object config, type inside config', () => {
  assert.match(err('lua', {}), /^type: unknown plugin type "lua"/);
  assert.match(err('cors', ['*']), /^config: must be an object$/);
  assert.match(err('cors', 'x'), /^config: must be an object$/);
  assert.match(err('cors', { type: 'key-auth' }), /^config\.type: not a setting/);
  // Several problems: all of them, on one line.
  assert.match(err('rate-limit', { requestsPerSecond: 0, by: 'moon' }), /^config\.requestsPerSecond: .*; config\.by: /);
});

test('isCidr: addresses and prefix lengths, IPv4 and IPv6', () => {
  const good = ['10.0.0.0/8', '10.1.2.3', '0.0.0.0/0', '255.255.255.255/32', '2001:db8::/32', '::1', '::/0', 'fe80::1/128', '::ffff:192.0.2.1/128', '10.0.0.1/8'];
  const bad = ['', '10.0.0.0/', '10.0.0.0/33', '10.0.0.0/-1', '10.0.0.0/08', '10.0.0/8', '256.0.0.0', '2001:db8::/129', 'fe80::1%eth0', 'example.com', '10.0.0.0/8/8', ' 10.0.0.0/8', '1.2.3.4/ 8'];
  for (const c of good) assert.ok(isCidr(c), c);
  for (const c of bad) assert.ok(!isCidr(c), c);
});
