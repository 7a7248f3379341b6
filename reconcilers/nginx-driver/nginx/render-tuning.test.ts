// The ingress-nginx ConfigMap tuning keys reach nginx.conf as directives, through escaping helpers, and the result
// passes `nginx -t` (the real binary), for the defaults, for non-default values and for the schemas' extremes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderNginxConf } from './render.ts';
import { nginxTest, runtimeDir } from './nginx-t.test-helpers.ts';
import { headerToken, headerVariable, onOff, words, UnsafeValueError } from './escape.ts';
import type { Structure } from '../../config/types.ts';
import { translate } from '../../translate/translate.ts';
import { OPTS, ing, modelOf, rule, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../../model/global-config.ts';

/** The structure the translation builds from a ConfigMap (parsed as the ConfigMap reconciler does). */
function structureFrom(data: Record<string, string>): Structure {
  const r = parseGlobalConfig(data, defaultGlobalConfig());
  assert.deepEqual(r.errors, []);
  const m = modelOf({ services: [svc('web', [{ port: 80 }])], ingresses: [ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] })] });
  m.setGlobalConfig(r.values);
  return translate(m.snapshot(), OPTS).config.structure;
}

const rt = runtimeDir();

test('defaults: ingress-nginx\'s values are rendered and pass nginx -t', () => {
  const conf = renderNginxConf(structureFrom({}), rt, 'c');
  for (const d of [
    'server_tokens off;',
    'client_header_buffer_size 1k;',
    'large_client_header_buffers 4 8k;',
    'client_body_buffer_size 8k;',
    'client_header_timeout 60s;',
    'client_body_timeout 60s;',
    'underscores_in_headers off;',
    'ignore_invalid_headers on;',
    'variables_hash_bucket_size 128;',
    'variables_hash_max_size 2048;',
    'map_hash_bucket_size 64;',
    'proxy_next_upstream error timeout;',
    'proxy_next_upstream_tries 3;',
    'proxy_next_upstream_timeout 0s;',
    'proxy_buffering off;',
    'proxy_request_buffering on;',
    'proxy_buffer_size 4k;',
    'proxy_buffers 4 4k;',
    'ssl_protocols TLSv1.2 TLSv1.3;',
    'ssl_ciphers ECDHE-ECDSA-AES128-GCM-SHA256:',
    'ssl_prefer_server_ciphers on;',
    'ssl_session_cache shared:portico_ssl:10m;',
    'ssl_session_timeout 10m;',
    'ssl_session_tickets off;',
    'ssl_buffer_size 4k;',
    'keepalive 320;',
    'keepalive_timeout 60s;',
    'keepalive_requests 10000;',
  ]) assert.ok(conf.includes(d), d);
  assert.match(renderNginxConf(structureFrom({}), { ...rt, maxOpenFiles: null }, 'c'), /worker_connections 16384;/);
  assert.match(conf, / ssl http2 default_server reuseport backlog=4096;/);
  // No escape= but the module's line's, which escapes its fields as the log module's default does.
  assert.doesNotMatch(conf, /gzip on|proxy_protocol|real_ip_header|escape=(?!none '\$portico_access_line';)|access_log off;\n  # One/);
  assert.match(conf, /log_format portico_upstream escape=none '\$portico_access_line';/);
  nginxTest(rt, conf, { withOutput: true });
});

test('non-default values of every tuning key are rendered and pass nginx -t', () => {
  const conf = renderNginxConf(
    structureFrom({
      'server-tokens': 'true',
      'client-header-buffer-size': '2k',
      'large-client-header-buffers': '8 16k',
      'client-body-buffer-size': '1m',
      'client-header-timeout': '30s',
      'client-body-timeout': '90',
      'enable-underscores-in-headers': 'true',
      'ignore-invalid-headers': 'false',
      'server-name-hash-bucket-size': '128',
      'server-name-hash-max-size': '2048',
      'variables-hash-bucket-size': '256',
      'variables-hash-max-size': '4096',
      'map-hash-bucket-size': '128',
      'proxy-next-upstream': 'error timeout http_502 http_503',
      'proxy-next-upstream-tries': '5',
      'proxy-next-upstream-timeout': '10',
      'proxy-buffering': 'on',
      'proxy-request-buffering': 'off',
      'proxy-buffer-size': '16k',
      'proxy-buffers-number': '8',
      'ssl-protocols': 'TLSv1.3',
      'ssl-ciphers': 'HIGH:!aNULL:!MD5',
      'ssl-prefer-server-ciphers': 'false',
      'ssl-session-cache-size': '20m',
      'ssl-session-timeout': '1h',
      'ssl-session-tickets': 'true',
      'ssl-buffer-size': '16k',
      'use-http2': 'false',
      'upstream-keepalive-connections': '64',
      'upstream-keepalive-timeout': '30',
      'upstream-keepalive-requests': '100',
      'max-worker-connections': '4096',
      'use-gzip': 'true',
      'gzip-level': '5',
      'gzip-min-length': '1024',
      'gzip-types': 'text/css application/json',
      'log-format-escape-json': 'true',
    }),
    rt,
    'c',
  );
  assert.match(renderNginxConf(structureFrom({ 'max-worker-connections': '4096' }), { ...rt, maxOpenFiles: null }, 'c'), /worker_connections 4096;/);
  for (const d of [
    'server_tokens on;',
    'client_header_buffer_size 2k;',
    'large_client_header_buffers 8 16k;',
    'client_body_buffer_size 1m;',
    'client_header_timeout 30s;',
    'client_body_timeout 90s;',
    'underscores_in_headers on;',
    'ignore_invalid_headers off;',
    'server_names_hash_bucket_size 128;',
    'server_names_hash_max_size 2048;',
    'variables_hash_bucket_size 256;',
    'variables_hash_max_size 4096;',
    'map_hash_bucket_size 128;',
    'proxy_next_upstream error timeout http_502 http_503;',
    'proxy_next_upstream_tries 5;',
    'proxy_next_upstream_timeout 10s;',
    'proxy_buffering on;',
    'proxy_request_buffering off;',
    'proxy_buffer_size 16k;',
    'proxy_buffers 8 16k;',
    'ssl_protocols TLSv1.3;',
    'ssl_ciphers HIGH:!aNULL:!MD5;',
    'ssl_prefer_server_ciphers off;',
    'ssl_session_cache shared:portico_ssl:20m;',
    'ssl_session_timeout 1h;',
    'ssl_session_tickets on;',
    'ssl_buffer_size 16k;',
    'keepalive 64;',
    'keepalive_timeout 30s;',
    'keepalive_requests 100;',
    'gzip on;',
    'gzip_comp_level 5;',
    'gzip_min_length 1024;',
    'gzip_types text/css application/json;',
    'log_format portico_upstream escape=json \'',
  ]) assert.ok(conf.includes(d), d);
  assert.match(conf, /listen 127\.0\.0\.1:8443 ssl default_server/, 'use-http2: false drops http2');
  nginxTest(rt, conf, { withOutput: true });
});

test('switches that remove directives: no session cache, no upstream keep-alive, no access log, escape=none', () => {
  const conf = renderNginxConf(
    structureFrom({ 'ssl-session-cache': 'false', 'upstream-keepalive-connections': '0', 'disable-access-log': 'true', 'log-format-escape-none': 'true', 'log-format-escape-json': 'true', 'max-worker-connections': '0' }),
    rt,
    'c',
  );
  assert.match(renderNginxConf(structureFrom({ 'max-worker-connections': '0' }), { ...rt, maxOpenFiles: 100_000 }, 'c'), /worker_connections 50000;\n/);
  assert.doesNotMatch(conf, /ssl_session_cache/);
  assert.doesNotMatch(conf, /upstream portico_upstream \{[^}]*\}[^}]*keepalive \d/);
  assert.doesNotMatch(conf, /\n    keepalive \d+;/);
  assert.match(conf, /\n  access_log off;\n/);
  assert.match(conf, /log_format portico_upstream escape=none '/);
  nginxTest(rt, conf, { withOutput: true });
});

test('the schemas\' extremes pass nginx -t (smallest hash tables and buffers, largest values)', () => {
  const extremes: Record<string, string>[] = [
    { 'server-name-hash-bucket-size': '32', 'server-name-hash-max-size': '512', 'variables-hash-bucket-size': '64', 'variables-hash-max-size': '1024', 'map-hash-bucket-size': '32', 'proxy-buffers-number': '4', 'proxy-buffer-size': '1k', 'client-header-buffer-size': '512', 'large-client-header-buffers': '1 1k', 'client-body-buffer-size': '1k', 'ssl-buffer-size': '1k', 'ssl-session-cache-size': '1m', 'gzip-types': '*', 'use-gzip': 'true', 'gzip-level': '9', 'max-worker-connections': '512', 'ssl-protocols': 'TLSv1 TLSv1.1 TLSv1.2 TLSv1.3', 'proxy-next-upstream': 'off', 'proxy-next-upstream-tries': '0' },
    { 'server-name-hash-bucket-size': '4096', 'variables-hash-bucket-size': '4096', 'map-hash-bucket-size': '4096', 'proxy-buffers-number': '1024', 'proxy-buffer-size': '16m', 'large-client-header-buffers': '64 1m', 'client-header-buffer-size': '1m', 'client-body-buffer-size': '64m', 'ssl-buffer-size': '64k', 'ssl-session-cache-size': '1024m', 'ssl-session-timeout': '1d' },
  ];
  for (const data of extremes) {
    const conf = renderNginxConf(structureFrom(data), rt, 'c');
    nginxTest(rt, conf, { withOutput: true });
  }
});

test('real client address: enable-real-ip alone, forwarded-for-header, compute-full-forwarded-for, use-proxy-protocol', () => {
  // enable-real-ip: realip from the named header, trusted peers only; X-Forwarded-Proto etc. still not trusted.
  const realIp = renderNginxConf(structureFrom({ 'enable-real-ip': 'true', 'forwarded-for-header': 'CF-Connecting-IP', 'proxy-real-ip-cidr': '192.0.2.0/24' }), rt, 'c');
  assert.match(realIp, /set_real_ip_from 192\.0\.2\.0\/24;\n  real_ip_header CF-Connecting-IP;\n  real_ip_recursive on;/);
  assert.match(realIp, /portico_proxy_header X-Forwarded-Proto \$scheme;/);
  assert.doesNotMatch(realIp, /portico_trusted_peer/);
  assert.match(realIp, /portico_proxy_header X-Forwarded-For \$remote_addr;/);
  nginxTest(rt, realIp, { withOutput: true });
  // compute-full-forwarded-for: only with use-forwarded-headers (ingress-nginx ignores it otherwise); the peer is
  // appended to the incoming X-Forwarded-For (whatever forwarded-for-header names, as ingress-nginx's $full_x_forwarded_for).
  const alone = renderNginxConf(structureFrom({ 'compute-full-forwarded-for': 'true' }), rt, 'c');
  assert.match(alone, /portico_proxy_header X-Forwarded-For \$remote_addr;/);
  assert.match(alone, /map \$remote_addr \$portico_forwarded_for \{ default \$remote_addr; \}/);
  const full = renderNginxConf(structureFrom({ 'compute-full-forwarded-for': 'true', 'use-forwarded-headers': 'true', 'forwarded-for-header': 'X-Client-Chain' }), rt, 'c');
  assert.match(full, /map \$http_x_forwarded_for \$portico_forwarded_for \{ "" \$realip_remote_addr; default "\$http_x_forwarded_for, \$realip_remote_addr"; \}/);
  assert.match(full, /portico_proxy_header X-Forwarded-For \$portico_forwarded_for;/);
  assert.match(full, /portico_proxy_header X-Original-Forwarded-For \$http_x_client_chain;/);
  nginxTest(rt, full, { withOutput: true });
  // use-proxy-protocol: both public listeners expect it; the status port and the unix sockets do not. The default
  // proxy-real-ip-cidr is ingress-nginx's 0.0.0.0/0; an empty one trusts every peer (nothing but PROXY connections
  // are accepted on those listeners). A trusted PROXY header naming port 443 means HTTPS (ingress-nginx).
  const pp = renderNginxConf(structureFrom({ 'use-proxy-protocol': 'true', 'compute-full-forwarded-for': 'true', 'use-forwarded-headers': 'true' }), rt, 'c');
  assert.equal((pp.match(/listen [^;]* proxy_protocol;/g) ?? []).length, 2);
  assert.match(pp, /listen 127\.0\.0\.1:8080 default_server reuseport backlog=4096 proxy_protocol;/);
  assert.match(pp, /listen 127\.0\.0\.1:8443 ssl http2 default_server reuseport backlog=4096 proxy_protocol;/);
  assert.match(pp, /listen 127\.0\.0\.1:10246;/);
  assert.match(pp, /\n  set_real_ip_from 0\.0\.0\.0\/0;\n  real_ip_header proxy_protocol;/);
  assert.match(pp, /"~\^1:443:" https;/);
  const ppEmpty = renderNginxConf(structureFrom({ 'use-proxy-protocol': 'true', 'proxy-real-ip-cidr': '' }), rt, 'c');
  assert.match(ppEmpty, /set_real_ip_from 0\.0\.0\.0\/0;\n  set_real_ip_from ::\/0;\n  real_ip_header proxy_protocol;/);
  assert.match(ppEmpty, /map "\$portico_trusted_peer:\$proxy_protocol_server_port" \$portico_forwarded_proto \{ "1:443" https; default \$scheme; \}/);
  nginxTest(rt, ppEmpty, { withOutput: true });
  assert.match(pp, /default "\$http_x_forwarded_for, \$proxy_protocol_addr"/);
  nginxTest(rt, pp, { withOutput: true });
  // With CIDRs, only those peers.
  const ppCidr = renderNginxConf(structureFrom({ 'use-proxy-protocol': 'true', 'proxy-real-ip-cidr': '10.0.0.0/8' }), rt, 'c');
  assert.match(ppCidr, /set_real_ip_from 10\.0\.0\.0\/8;\n  real_ip_header proxy_protocol;/);
  assert.doesNotMatch(ppCidr, /0\.0\.0\.0\/0/);
  nginxTest(rt, ppCidr, { withOutput: true });
});

test('headers sent upstream as ingress-nginx sends them: X-Forwarded-Scheme, X-Scheme, X-Original-Forwarded-For/-Host, Proxy cleared, X-Original-URI with proxy-add-original-uri-header', () => {
  const plain = renderNginxConf(structureFrom({}), rt, 'c');
  // Written by the variables module (portico_proxy_header), each with an empty proxy_set_header of its name so
  // the client's own is not passed.
  assert.match(plain, /\n  proxy_set_header X-Forwarded-Scheme "";\n  portico_proxy_header X-Forwarded-Scheme \$scheme;\n  proxy_set_header X-Scheme "";\n  portico_proxy_header X-Scheme \$scheme;/);
  assert.match(plain, /\n  proxy_set_header X-Original-Forwarded-For "";\n  portico_proxy_header X-Original-Forwarded-For \$http_x_forwarded_for;\n  proxy_set_header X-Original-Forwarded-Host "";\n  portico_proxy_header X-Original-Forwarded-Host \$http_x_forwarded_host;/);
  assert.match(plain, /\n  proxy_set_header Proxy "";/);
  assert.doesNotMatch(plain, /X-Original-URI \$request_uri;\n  # httpoxy/);
  // Locations that restate their headers (mirror, mirror_nobody, their slots, error pages) clear Proxy too.
  assert.equal((plain.match(/\n      proxy_set_header Proxy "";/g) ?? []).length, 5);
  assert.match(plain, /location @portico_https \{ return 308 https:\/\/\$portico_redirect_host\$request_uri;/);
  const fwd = renderNginxConf(structureFrom({ 'use-forwarded-headers': 'true', 'proxy-add-original-uri-header': 'true' }), rt, 'c');
  assert.match(fwd, /\n  proxy_set_header X-Forwarded-Scheme "";\n  portico_proxy_header X-Forwarded-Scheme \$portico_forwarded_proto;\n  proxy_set_header X-Scheme "";\n  portico_proxy_header X-Scheme \$portico_forwarded_proto;/);
  assert.match(fwd, /\n  proxy_set_header X-Original-URI "";\n  portico_proxy_header X-Original-URI \$request_uri;/);
  // gRPC backends get them too (grpc_set_header), with the trusted values.
  for (const [h, v] of [['X-Real-IP', '$remote_addr'], ['X-Forwarded-For', '$portico_forwarded_for'], ['X-Forwarded-Proto', '$portico_forwarded_proto'], ['X-Scheme', '$portico_forwarded_proto'], ['X-Original-URI', '$request_uri'], ['Proxy', '""']]) {
    assert.ok(fwd.includes(`\n  grpc_set_header ${h} ${v};`), `grpc_set_header ${h}`);
  }
  // A trusted X-Forwarded-Host listing several names: the first (as ingress-nginx).
  assert.ok(fwd.includes('"~^1:(?<fhost>[A-Za-z0-9.:\\[\\]-]+)( *,.*)?$" $fhost;'));
  nginxTest(rt, fwd, { withOutput: true });
});

test('a changed tuning key changes the structure (one reload), an unchanged ConfigMap does not', () => {
  const a = structureFrom({ 'use-gzip': 'true' });
  assert.notDeepEqual(a.global, structureFrom({}).global);
  assert.deepEqual(a.global, structureFrom({ 'use-gzip': 'true' }).global);
  assert.equal(a.global.useGzip, true);
});

test('escaping helpers of the tuning keys refuse what could break out of their token', () => {
  assert.equal(onOff(true), 'on');
  assert.equal(onOff(false), 'off');
  for (const bad of ['on', 1, null, 'true']) assert.throws(() => onOff(bad), UnsafeValueError);
  assert.equal(headerToken('X-Forwarded-For'), 'X-Forwarded-For');
  assert.equal(headerToken('proxy_protocol'), 'proxy_protocol');
  assert.equal(headerVariable('X-Forwarded-For'), '$http_x_forwarded_for');
  assert.throws(() => headerVariable('proxy_protocol'), UnsafeValueError);
  assert.equal(words('TLSv1.2 TLSv1.3'), 'TLSv1.2 TLSv1.3');
  assert.equal(words('HIGH:!aNULL:@STRENGTH'), 'HIGH:!aNULL:@STRENGTH');
  for (const p of [';', '}', '{', '\n', '#', '$', '"', "'", '\\', '\u0000', '\u2028', '  ', '\t']) {
    assert.throws(() => words(`TLSv1.2${p}x`), UnsafeValueError, JSON.stringify(p));
    assert.throws(() => headerToken(`X-A${p}`), UnsafeValueError, JSON.stringify(p));
  }
  for (const bad of ['', ' a', 'a ', 'x'.repeat(4097), 5]) assert.throws(() => words(bad), UnsafeValueError);
});

test('the one-directive keys (directive-tuning.ts): defaults as ingress-nginx renders them, other values in place, nginx -t passes', () => {
  const dflt = renderNginxConf(structureFrom({}), rt, 'c');
  for (const d of ['default_type text/html;', 'aio threads;', 'aio_write on;', 'proxy_headers_hash_bucket_size 64;', 'proxy_headers_hash_max_size 512;', 'keepalive_time 1h;', 'multi_accept on;', 'proxy_http_version 1.1;\n']) assert.ok(dflt.includes(d), d);
  assert.doesNotMatch(dflt, /limit_rate |proxy_busy_buffers_size|grpc_buffer_size|absolute_redirect|proxy_pass_header|proxy_hide_header|gzip_disable|worker_cpu_affinity|debug_connection/);

  const conf = renderNginxConf(structureFrom({
    'allow-backend-server-header': 'true',
    'hide-headers': 'X-Powered-By,X-AspNet-Version',
    'default-type': 'application/octet-stream',
    'use-gzip': 'true',
    'gzip-disable': 'MSIE [4-6]\\.',
    'limit-rate': '1048576',
    'limit-rate-after': '65536',
    'proxy-busy-buffers-size': '8k',
    'proxy-headers-hash-bucket-size': '128',
    'proxy-headers-hash-max-size': '1024',
    'retry-non-idempotent': 'true',
    'upstream-keepalive-time': '30m',
    'enable-multi-accept': 'false',
    'worker-cpu-affinity': 'auto',
    'max-worker-open-files': '4096',
    'grpc-buffer-size-kb': '64',
    'relative-redirects': 'true',
    'proxy-http-version': '1.0',
    'debug-connections': '127.0.0.1,192.0.2.0/24',
    'enable-aio-write': 'false',
    'disable-http-access-log': 'true',
    'proxy-cookie-domain': 'internal.example .example.com',
    'proxy-cookie-path': '/app /',
    'proxy-redirect-from': 'http://internal/',
    'proxy-redirect-to': 'https://www.example.com/',
    'proxy-max-temp-file-size': '2048m',
    'enable-access-log-for-default-backend': 'true',
    'enable-auth-access-log': 'true',
    'http-redirect-code': '301',
    'forwarded-host-header': 'X-Original-Host',
    'enable-syslog': 'true',
    'syslog-host': '192.0.2.10',
    'syslog-port': '5140',
  }), rt, 'c');
  assert.ok(conf.includes('error_log syslog:server=192.0.2.10:5140 notice;'), 'a copy of the error log');
  assert.match(conf, /location @portico_https \{ return 301 https:/);
  assert.match(conf, /portico_proxy_header X-Original-Forwarded-Host \$http_x_original_host;/);
  assert.match(dflt, /portico_proxy_header X-Original-Forwarded-Host \$http_x_forwarded_host;/);
  assert.match(conf, /httpsRedirectCode = 301,/);
  assert.match(dflt, /location @portico_https \{ return 308 https:/);
  assert.doesNotMatch(conf, /access_log syslog/, 'disable-http-access-log wins');
  for (const d of ['proxy_cookie_domain internal.example .example.com;', 'proxy_cookie_path /app /;', 'proxy_redirect http://internal/ https://www.example.com/;', 'proxy_max_temp_file_size 2048m;', '      log_subrequest on;']) assert.ok(conf.includes(d), d);
  assert.match(conf, /location @portico_unmatched \{ return 404; \}/, 'logged with enable-access-log-for-default-backend');
  assert.match(dflt, /location @portico_unmatched \{ return 404; access_log off; \}/, 'not logged by default');
  for (const d of [
    'proxy_pass_header Server;', 'default_type application/octet-stream;',
    'gzip_disable "MSIE [4-6]\\.";', 'limit_rate 1048576;', 'limit_rate_after 65536;', 'proxy_busy_buffers_size 8k;',
    'proxy_headers_hash_bucket_size 128;', 'proxy_headers_hash_max_size 1024;', 'proxy_next_upstream error timeout non_idempotent;',
    'keepalive_time 30m;', 'multi_accept off;', 'worker_cpu_affinity auto;', 'worker_rlimit_nofile 4096;', 'worker_connections 2048;',
    'grpc_buffer_size 64k;', 'absolute_redirect off;', 'proxy_http_version 1.0;', 'debug_connection 127.0.0.1;', 'debug_connection 192.0.2.0/24;',
  ]) assert.ok(conf.includes(d), d);
  assert.match(conf, /proxy_hide_header x-powered-by;\n  proxy_hide_header x-aspnet-version;/);
  assert.doesNotMatch(conf, /aio_write on/);
  assert.match(conf, /^  access_log off;$/m, 'disable-http-access-log');
  nginxTest(rt, conf, { withOutput: true });
  // retry-non-idempotent adds nothing to "off", and does not repeat what is there.
  assert.match(renderNginxConf(structureFrom({ 'retry-non-idempotent': 'true', 'proxy-next-upstream': 'off' }), rt, 'c'), /proxy_next_upstream off;/);
  assert.match(renderNginxConf(structureFrom({ 'retry-non-idempotent': 'true', 'proxy-next-upstream': 'error non_idempotent' }), rt, 'c'), /proxy_next_upstream error non_idempotent;/);
});

test('keys accepted without effect are checked and reported as such; the rest of the unknown keys are refused by name', () => {
  const r = parseGlobalConfig({ 'enable-serial-reloads': 'true', 'limit-conn-zone-variable': '$remote_addr', 'disable-ipv6': 'maybe', 'access-log-path': '/var/log/x' }, defaultGlobalConfig());
  assert.deepEqual(r.unknown, ['access-log-path'], 'accepted keys are not unknown');
  assert.deepEqual(r.errors.map((e) => e.key), ['disable-ipv6'], 'a bad value is still reported');
  const bad = parseGlobalConfig({ 'limit-conn-zone-variable': '$http_x_user' }, defaultGlobalConfig());
  assert.match(bad.errors[0]?.message ?? '', /per client address only/);
});

test('enable-syslog: the access log to syslog instead of the file; without syslog-host it is reported and stays local', () => {
  const conf = renderNginxConf(structureFrom({ 'enable-syslog': 'true', 'syslog-host': 'syslog.example.com', 'skip-access-log-urls': '/healthz' }), rt, 'c');
  assert.match(conf, /^  access_log syslog:server=syslog\.example\.com:514 portico_upstream if=\$portico_loggable;$/m);
  assert.match(conf, /^  error_log stderr notice;\n  error_log syslog:server=syslog\.example\.com:514 notice;$/m);
  assert.doesNotMatch(conf, /access_log "[^"]*access\.log"/);
  const r = parseGlobalConfig({ 'enable-syslog': 'true' }, defaultGlobalConfig());
  assert.match(r.errors[0]?.message ?? '', /syslog-host is empty/);
});
