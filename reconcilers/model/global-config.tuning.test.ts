// The ingress-nginx ConfigMap keys that tune nginx (reconcilers/config/nginx-tuning.ts): defaults as ingress-nginx's,
// valid values parsed, and every value that could break out of its directive refused (the previous value is kept).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONFIG_KEYS, defaultGlobalConfig, parseGlobalConfig, refusedConfigWhy } from './global-config.ts';
import { DEFAULT_NGINX_TUNING } from '../config/nginx-tuning.ts';

/** Characters and words that must never reach nginx.conf from a ConfigMap value. */
import { mapSource, quoteFormat, quoteRegex } from '../nginx-driver/nginx/escape.ts';

const PAYLOADS = [';', '}', '{', '\n', '\r', '#', '$', '"', "'", '\\', ' ', '\u0000', '\u2028', '\t', ' *_by_lua_block { os.exit() }', '; include /etc/passwd', '`'];

/** key → [valid value, parsed value][] and plain-invalid values. */
const CASES: Record<string, { ok: [string, unknown][]; bad: string[] }> = {
  'enable-real-ip': { ok: [['true', true], ['False', false]], bad: ['yes', '1', ''] },
  'forwarded-for-header': { ok: [['X-Real-Client', 'X-Real-Client'], [' CF-Connecting-IP ', 'CF-Connecting-IP']], bad: ['', 'X_Forwarded', '1x', 'x'.repeat(65), 'X-A:b'] },
  'compute-full-forwarded-for': { ok: [['true', true]], bad: ['on'] },
  'use-proxy-protocol': { ok: [['true', true]], bad: ['enabled'] },
  'proxy-add-original-uri-header': { ok: [['true', true], ['false', false]], bad: ['yes please'] },
  'ssl-protocols': { ok: [['TLSv1.3', 'TLSv1.3'], ['TLSv1.3  TLSv1.2', 'TLSv1.2 TLSv1.3'], ['TLSv1 TLSv1.1 TLSv1.2', 'TLSv1 TLSv1.1 TLSv1.2']], bad: ['SSLv3', 'TLSv1.2 SSLv2', '', 'tlsv1.2', 'TLSv1.2,TLSv1.3'] },
  'ssl-ciphers': { ok: [['HIGH:!aNULL:!MD5', 'HIGH:!aNULL:!MD5'], ['ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES128-GCM-SHA256'], ['@STRENGTH:HIGH', '@STRENGTH:HIGH']], bad: ['', 'NOSUCHCIPHER', 'HIGH MEDIUM', 'a'.repeat(2049)] },
  'ssl-prefer-server-ciphers': { ok: [['false', false]], bad: ['off'] },
  'ssl-session-cache': { ok: [['false', false]], bad: ['none'] },
  'ssl-session-cache-size': { ok: [['20m', '20m'], ['1024k', '1024k']], bad: ['0', '512k', '2g', '10 m', '-1m'] },
  'ssl-session-timeout': { ok: [['1h', '1h'], ['600', '600'], ['1d', '1d']], bad: ['10 m', '1w', 'forever', '1h30m'] },
  'ssl-session-tickets': { ok: [['true', true]], bad: ['on'] },
  'ssl-buffer-size': { ok: [['16k', '16k']], bad: ['512', '1m', '4x'] },
  'use-http2': { ok: [['false', false]], bad: ['h2'] },
  'client-header-buffer-size': { ok: [['2k', '2k'], ['512', '512']], bad: ['100', '2m', 'big'] },
  'large-client-header-buffers': { ok: [['8 16k', '8 16k'], [' 4   8k ', '4 8k']], bad: ['4', '0 8k', '65 8k', '4 512', '4 2m', '4,8k', '4 8k 2'] },
  'client-body-buffer-size': { ok: [['1m', '1m'], ['16k', '16k']], bad: ['512', '65m', '1g'] },
  'client-header-timeout': { ok: [['30', 30], ['30s', 30]], bad: ['30m', '-1', 'x'] },
  'client-body-timeout': { ok: [['120', 120]], bad: ['1.5'] },
  'enable-underscores-in-headers': { ok: [['true', true]], bad: ['on'] },
  'ignore-invalid-headers': { ok: [['false', false]], bad: ['off'] },
  'proxy-buffer-size': { ok: [['16k', '16k'], ['8192', '8192']], bad: ['512', '17m', '8 k'] },
  'proxy-buffers-number': { ok: [['8', 8], ['4', 4]], bad: ['2', '3', '1025', 'many'] },
  'proxy-buffering': { ok: [['on', true], ['off', false], ['ON', true], ['true', true]], bad: ['yes', ''] },
  'proxy-request-buffering': { ok: [['off', false], ['on', true]], bad: ['stream'] },
  'proxy-next-upstream': { ok: [['error timeout http_502', 'error timeout http_502'], ['off', 'off'], ['error  error', 'error'], ['non_idempotent error', 'non_idempotent error']], bad: ['', 'off error', 'http_418', 'error,timeout'] },
  'proxy-next-upstream-tries': { ok: [['0', 0], ['5', 5]], bad: ['101', '-1'] },
  'proxy-next-upstream-timeout': { ok: [['10', 10], ['10s', 10]], bad: ['1m'] },
  'upstream-keepalive-connections': { ok: [['0', 0], ['64', 64]], bad: ['100001'] },
  'upstream-keepalive-timeout': { ok: [['30', 30]], bad: ['forever'] },
  'upstream-keepalive-requests': { ok: [['100', 100]], bad: ['0'] },
  'server-tokens': { ok: [['true', true]], bad: ['on'] },
  'use-gzip': { ok: [['true', true]], bad: ['gzip'] },
  'gzip-level': { ok: [['9', 9], ['1', 1]], bad: ['0', '10'] },
  'gzip-min-length': { ok: [['0', 0], ['1024', 1024]], bad: ['1k'] },
  'gzip-types': { ok: [['text/css application/json', 'text/css application/json'], ['*', '*'], ['application/vnd.api+json', 'application/vnd.api+json']], bad: ['', 'text', 'text/css,application/json', 'text/*', '/css'] },
  'log-format-escape-json': { ok: [['true', true]], bad: ['json'] },
  'log-format-escape-none': { ok: [['true', true]], bad: ['none'] },
  'disable-access-log': { ok: [['true', true]], bad: ['off'] },
  'max-worker-connections': { ok: [['0', 0], ['65536', 65536]], bad: ['100', '2000000'] },
  'server-name-hash-bucket-size': { ok: [['128', 128]], bad: ['16', '8192'] },
  'server-name-hash-max-size': { ok: [['4096', 4096]], bad: ['100'] },
  'variables-hash-bucket-size': { ok: [['256', 256]], bad: ['32'] },
  'variables-hash-max-size': { ok: [['4096', 4096]], bad: ['512'] },
  'map-hash-bucket-size': { ok: [['128', 128]], bad: ['16'] },
  'log-format-stream': { ok: [['[$remote_addr] $protocol $status', '[$remote_addr] $protocol $status'], ['{"up": "$upstream_addr"}', '{"up": "$upstream_addr"}']], bad: ['$request_uri', "'x'", '$status;'] },
  'skip-access-log-urls': { ok: [['/healthz, ~^/metrics', [{ match: 'exact', value: '/healthz' }, { match: 'regex', value: '^/metrics' }]]], bad: ['/a;b', '/x$y'] },
  'access-log-params': { ok: [['buffer=32k flush=5s', 'buffer=32k flush=5s'], ['gzip', 'gzip']], bad: ['flush=5s', 'if=$x', 'buffer=16k buffer=16k'] },
  'error-log-level': { ok: [['warn', 'warn'], ['DEBUG', 'debug']], bad: ['verbose', 'info;'] },
  'generate-request-id': { ok: [['false', false]], bad: ['no'] },
  // One directive each (reconcilers/config/directive-tuning.ts).
  'allow-backend-server-header': { ok: [['true', true]], bad: ['on'] },
  'hide-headers': { ok: [['X-Powered-By, Server', ['x-powered-by', 'server']], ['', []]], bad: ['X_Powered', '1x', 'a b'] },
  'default-type': { ok: [['application/octet-stream', 'application/octet-stream'], ['text/html', 'text/html']], bad: ['', 'text', 'text/html; charset=utf-8'] },
  'gzip-disable': { ok: [['msie6', 'msie6'], ['', ''], ['MSIE [4-6]\\.', 'MSIE [4-6]\\.']], bad: ['(a', 'a"b', 'x$y', '(?R)'] },
  'limit-rate': { ok: [['0', 0], ['1048576', 1048576]], bad: ['1m', '-1'] },
  'limit-rate-after': { ok: [['10240', 10240]], bad: ['10k'] },
  'proxy-busy-buffers-size': { ok: [['16k', '16k'], ['', '']], bad: ['16 k', 'big'] },
  'proxy-headers-hash-bucket-size': { ok: [['128', 128]], bad: ['16', '4096'] },
  'proxy-headers-hash-max-size': { ok: [['1024', 1024]], bad: ['10', '100000'] },
  'retry-non-idempotent': { ok: [['true', true]], bad: ['yes'] },
  'upstream-keepalive-time': { ok: [['1h', '1h'], ['3600s', '3600s']], bad: ['1 h', 'forever', '1h30m'] },
  'enable-multi-accept': { ok: [['false', false]], bad: ['off'] },
  'worker-cpu-affinity': { ok: [['auto', 'auto'], ['0001 0010', '0001 0010'], ['auto 1100', 'auto 1100'], ['', '']], bad: ['all', '0002', 'auto auto'] },
  'max-worker-open-files': { ok: [['0', 0], ['65536', 65536]], bad: ['100', '-1'] },
  'grpc-buffer-size-kb': { ok: [['0', 0], ['64', 64]], bad: ['64k'] },
  'relative-redirects': { ok: [['true', true]], bad: ['on'] },
  'proxy-http-version': { ok: [['1.0', '1.0'], ['1.1', '1.1']], bad: ['2', '2.0', 'HTTP/1.1'] },
  'debug-connections': { ok: [['127.0.0.1, 192.0.2.0/24', ['127.0.0.1', '192.0.2.0/24']], ['', []]], bad: ['localhost', '300.1.1.1'] },
  'enable-aio-write': { ok: [['false', false]], bad: ['off'] },
  'disable-http-access-log': { ok: [['true', true]], bad: ['on'] },
  'disable-stream-access-log': { ok: [['true', true]], bad: ['on'] },
  'proxy-stream-timeout': { ok: [['600s', '600s'], ['10m', '10m']], bad: ['10 m', 'forever'] },
  'proxy-stream-next-upstream': { ok: [['false', false]], bad: ['off'] },
  'proxy-stream-next-upstream-timeout': { ok: [['0', '0'], ['30s', '30s']], bad: ['soon'] },
  'proxy-stream-next-upstream-tries': { ok: [['0', 0], ['5', 5]], bad: ['101'] },
  'proxy-stream-responses': { ok: [['0', 0], ['2', 2]], bad: ['-1'] },
  'proxy-cookie-domain': { ok: [['off', 'off'], ['internal.example .example.com', 'internal.example .example.com']], bad: ['one', 'a b c', '~x y'] },
  'proxy-cookie-path': { ok: [['/app /', '/app /']], bad: ['/a'] },
  'proxy-redirect-from': { ok: [['off', 'off'], ['default', 'default'], ['http://internal/', 'http://internal/']], bad: ['a b', ''] },
  'proxy-redirect-to': { ok: [['off', 'off'], ['https://www.example.com/', 'https://www.example.com/']], bad: ['a b'] },
  'proxy-max-temp-file-size': { ok: [['0', '0'], ['2048m', '2048m'], ['', '']], bad: ['big', '1 m'] },
  'enable-access-log-for-default-backend': { ok: [['true', true]], bad: ['on'] },
  'enable-auth-access-log': { ok: [['true', true]], bad: ['on'] },
  'proxy-protocol-header-timeout': { ok: [['5s', '5s'], ['500ms', '500ms'], ['1m', '1m']], bad: ['5', '1m30s', 'soon'] },
  'forwarded-host-header': { ok: [['X-Forwarded-Host', 'X-Forwarded-Host'], ['X-Original-Host', 'X-Original-Host']], bad: ['', 'X_Host', '1x'] },
  'http-redirect-code': { ok: [['301', 301], ['308', 308]], bad: ['300', '200', 'permanent'] },
  'enable-syslog': { ok: [['false', false]], bad: ['on'] },
  'syslog-host': { ok: [['192.0.2.10', '192.0.2.10'], ['Syslog.Logging.svc.cluster.local.', 'syslog.logging.svc.cluster.local'], ['', '']], bad: ['2001:db8::1', 'a_b', 'host:514', '300.1.1.1'] },
  'syslog-port': { ok: [['514', 514], ['5140', 5140]], bad: ['0', '70000', 'udp'] },
  'preserve-trailing-slash': { ok: [['true', true]], bad: ['on'] },
  'use-port-in-redirects': { ok: [['true', true]], bad: ['on'] },
  'service-upstream': { ok: [['true', true]], bad: ['yes'] },
  'ssl-reject-handshake': { ok: [['true', true], ['false', false]], bad: ['on', 'reject'] },
  'enable-ocsp': { ok: [['true', true], ['false', false]], bad: ['on', 'yes'] },
  // ConfigMap references (global-headers.ts; their headers are checked in global-headers.test.ts).
  'add-headers': { ok: [['ingress/custom-headers', 'ingress/custom-headers'], ['', '']], bad: ['custom-headers', 'Ingress/x', 'a/b/c', 'ns/x y'] },
  'proxy-set-headers': { ok: [['ingress/proxy-headers', 'ingress/proxy-headers'], [' ns/h.v1 ', 'ns/h.v1']], bad: ['proxy-headers', 'ns/-x', 'ns/x;'] },
  'disable-proxy-intercept-errors': { ok: [['true', true]], bad: ['yes'] },
  // Optional modules (brotli, GeoIP2).
  'enable-brotli': { ok: [['true', true], ['false', false]], bad: ['on', 'br'] },
  'brotli-level': { ok: [['0', 0], ['11', 11], ['4', 4]], bad: ['12', '-1', 'max'] },
  'brotli-min-length': { ok: [['0', 0], ['256', 256]], bad: ['1k', '-5'] },
  'brotli-types': { ok: [['application/json text/css', 'application/json text/css'], ['*', '*']], bad: ['', 'text', 'text/css,application/json', 'text/*'] },
  'use-geoip2': { ok: [['true', true]], bad: ['on', 'yes'] },
  'geoip2-autoreload-in-minutes': { ok: [['0', 0], ['60', 60]], bad: ['1h', '-1', '10081'] },
  'geoip2-database-directory': { ok: [['/var/lib/geoip', '/var/lib/geoip'], [' /etc/ingress-controller/geoip ', '/etc/ingress-controller/geoip']], bad: ['', 'geoip', '/a/../etc', '/a b', '/a//b', '/a/'] },
};

test('the tuning keys are in the ConfigMap table with ingress-nginx\'s defaults', () => {
  const d = defaultGlobalConfig();
  for (const [name, k] of Object.entries(CONFIG_KEYS)) {
    if (!(k.field in DEFAULT_NGINX_TUNING)) continue;
    assert.ok(name in CASES, `${name} has test cases`);
    assert.deepEqual(d[k.field], DEFAULT_NGINX_TUNING[k.field as keyof typeof DEFAULT_NGINX_TUNING], name);
  }
  for (const name of Object.keys(CASES)) assert.ok(name in CONFIG_KEYS, name);
  assert.ok(Object.keys(CONFIG_KEYS).length >= 70, 'at least 40 keys beyond the global-auth family');
  assert.equal(d.proxyBuffering, false, 'ingress-nginx does not buffer responses by default');
  assert.equal(d.sslProtocols, 'TLSv1.2 TLSv1.3');
  assert.equal(d.largeClientHeaderBuffers, '4 8k');
});

test('each tuning key: valid values parse, invalid ones keep the previous value with a message', () => {
  for (const [name, c] of Object.entries(CASES)) {
    const field = CONFIG_KEYS[name as keyof typeof CONFIG_KEYS].field;
    for (const [raw, want] of c.ok) {
      const r = parseGlobalConfig({ [name]: raw }, defaultGlobalConfig());
      assert.deepEqual(r.errors, [], `${name}=${JSON.stringify(raw)}`);
      assert.deepEqual(r.values[field], want, `${name}=${JSON.stringify(raw)}`);
    }
    const previous = { ...defaultGlobalConfig(), [field]: parseGlobalConfig({ [name]: c.ok[0]?.[0] ?? '' }, defaultGlobalConfig()).values[field] };
    for (const raw of c.bad) {
      const r = parseGlobalConfig({ [name]: raw }, previous);
      assert.equal(r.errors.length, 1, `${name}=${JSON.stringify(raw)} is refused`);
      assert.match(r.errors[0]?.message ?? '', new RegExp(`^${name}=.*keeping`));
      assert.deepEqual(r.values[field], previous[field], `${name}=${JSON.stringify(raw)} keeps the previous value`);
    }
  }
});

test('each tuning key refuses injection payloads, alone and after a valid value', () => {
  for (const [name, c] of Object.entries(CASES)) {
    const valid = c.ok[0]?.[0] ?? '';
    for (const p of PAYLOADS) {
      for (const raw of [`${valid}${p}x`, `${valid}${p}${valid}`, `${p}`, `x${p}`]) {
        const r = parseGlobalConfig({ [name]: raw }, defaultGlobalConfig());
        if (r.errors.length === 0) {
          // A value may only pass when it came out as one of the safe shapes: a boolean, a number, or tokens
          // without any of the payload's characters (e.g. "error  error" → "error" for whitespace payloads), or nothing.
          const v = r.values[CONFIG_KEYS[name as keyof typeof CONFIG_KEYS].field];
          // A log format is text inside a single-quoted nginx string: what passes must stay in it (quoteFormat refuses
          // "'", ";", backslashes and control characters); "{", "}", '"', "#" and words are literal text there.
          if (name === 'log-format-stream') {
            assert.doesNotThrow(() => quoteFormat(v), `${name}=${JSON.stringify(raw)}`);
            continue;
          }
          // A regex (gzip-disable) is one double-quoted token (quoteRegex: no quote, control character or "$"
          // before its end), and PCRE-valid, so it cannot end in a backslash that would escape the closing quote.
          if (name === 'gzip-disable') {
            assert.match(quoteRegex(v), /^"[^"\u0000-\u001f]*"$/, `${name}=${JSON.stringify(raw)}`);
            assert.ok(!String(v).endsWith('\\') || String(v).endsWith('\\\\'), `${name}=${JSON.stringify(raw)}`);
            continue;
          }
          // Map sources (skip-access-log-urls): each must be one its escaping helper emits as a single quoted token.
          // Lists of names or addresses (hide-headers, debug-connections): each a plain token.
          if (Array.isArray(v)) {
            for (const item of v) {
              if (typeof item === 'string') assert.match(item, /^[A-Za-z0-9.:/-]+$/, `${name}=${JSON.stringify(raw)}`);
              else assert.match(mapSource(item), /^"[^"]*"$/, `${name}=${JSON.stringify(raw)}`);
            }
            continue;
          }
          assert.ok(typeof v === 'boolean' || typeof v === 'number' || v === '' || (typeof v === 'string' && /^[A-Za-z0-9.+*/:!@=_-]+( [A-Za-z0-9.+*/:!@=_-]+)*$/.test(v)), `${name}=${JSON.stringify(raw)} → ${JSON.stringify(v)}`);
          assert.ok(typeof v !== 'string' || !/_by_lua|include/.test(v), `${name}=${JSON.stringify(raw)} → ${JSON.stringify(v)}`);
        }
      }
    }
  }
});

test('ingress-nginx keys refused on purpose carry a reason; snippets among them', () => {
  for (const k of ['http-snippet', 'server-snippet', 'location-snippet', 'main-snippet', 'stream-snippet']) assert.match(refusedConfigWhy(k) ?? '', /snippets in the ConfigMap are not supported/, k);
  assert.equal(refusedConfigWhy('custom-http-errors'), null, 'supported since custom error pages are');
  assert.equal(refusedConfigWhy('enable-brotli'), null, 'supported since brotli is (libnginx-mod-http-brotli-filter)');
  assert.equal(refusedConfigWhy('brotli-types'), null);
  assert.equal(refusedConfigWhy('ssl-protocols'), null, 'supported keys are not refused');
  assert.equal(refusedConfigWhy('no-such-key'), null);
  const r = parseGlobalConfig({ 'http-snippet': 'include /etc/passwd;', 'use-gzip': 'true' }, defaultGlobalConfig());
  assert.deepEqual(r.unknown, ['http-snippet']);
  assert.equal(r.values.useGzip, true);
});
