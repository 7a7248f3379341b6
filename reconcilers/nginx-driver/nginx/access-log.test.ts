// The access and error logs (issue 20): ingress-nginx's default format and variables, JSON formats, escaping,
// skip-access-log-urls, access-log-params, error-log-level, log-format-stream and generate-request-id — the
// ConfigMap schemas, what the translation sends, and what the templates render (each variant passes nginx -t).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultGlobalConfig, parseGlobalConfig } from '../../model/global-config.ts';
import { structureChecksum } from '../../translate/diff.ts';
import { translate } from '../../translate/translate.ts';
import { OPTS, ing, modelOf, rule, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { DEFAULT_LOG_FORMAT_STREAM, DEFAULT_LOG_FORMAT_UPSTREAM, renderNginxConf } from './render.ts';
import { nginxTest, runtimeDir } from './nginx-t.test-helpers.ts';
import { forwardedNginxLine } from './process.ts';
import { accessLogParams, errorLogLevel, UnsafeValueError } from './escape.ts';

const INGRESS_NGINX_DEFAULT =
  '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_length $request_time [$proxy_upstream_name] [$proxy_alternative_upstream_name] $upstream_addr $upstream_response_length $upstream_response_time $upstream_status $req_id';
const JSON_FORMAT =
  '{"time": "$time_iso8601", "request_id": "$req_id", "bytes_sent": $bytes_sent, "status": $status, "vhost": "$host", "upstream": "$proxy_upstream_name", "alt": "$proxy_alternative_upstream_name", "ns": "$namespace", "ingress": "$ingress_name", "service": "$service_name", "port": "$service_port", "path": "$location_path"}';

function structureWith(data: Record<string, string>, metrics = false) {
  const cfg = parseGlobalConfig(data, defaultGlobalConfig());
  assert.deepEqual(cfg.errors, []);
  const m = modelOf({ services: [svc('web', [{ port: 80 }])], ingresses: [ing('a', { rules: [rule('a.example.com', [{ path: '/api', backend: svcRef('web', 80) }])] })] });
  m.setGlobalConfig(cfg.values);
  return translate(m.snapshot(), metrics ? { ...OPTS, metrics: { undefinedHosts: false, buckets: { time: [1], length: [1], size: [1] } } } : OPTS).config;
}

function render(data: Record<string, string>, accessLog?: string): string {
  const s = structureWith(data).structure;
  const rt = accessLog ? { ...runtimeDir(), accessLog } : runtimeDir();
  const conf = renderNginxConf(s, rt, structureChecksum(s));
  // (nginx -t opens the log file: /dev/stdout is no device under the test runner.)
  if (!accessLog) nginxTest(rt, conf);
  return conf;
}

test('the default access-log format is ingress-nginx\'s, byte for byte, and its variables are derived only when read', () => {
  assert.equal(DEFAULT_LOG_FORMAT_UPSTREAM, INGRESS_NGINX_DEFAULT);
  assert.equal(DEFAULT_LOG_FORMAT_STREAM, '[$remote_addr] [$time_local] $protocol $status $bytes_sent $bytes_received $session_time');
  const conf = render({});
  // Written by the variables module, which escapes its fields as the log module would (access-line.nginx.test.ts
  // holds the two side by side): the log module copies the line as it is.
  assert.ok(conf.includes(`  portico_access_line $portico_access_line;\n  log_format portico_upstream escape=none '$portico_access_line';\n`), 'the default line is the module\'s');
  // The same format named in the ConfigMap is the same line; with another escaping or another format, the log
  // module writes it.
  assert.ok(render({ 'log-format-upstream': INGRESS_NGINX_DEFAULT }).includes(`log_format portico_upstream escape=none '$portico_access_line';`));
  for (const [data, directive] of [
    [{ 'log-format-escape-json': 'true' }, `log_format portico_upstream escape=json '${INGRESS_NGINX_DEFAULT}';`],
    [{ 'log-format-escape-none': 'true' }, `log_format portico_upstream escape=none '${INGRESS_NGINX_DEFAULT}';`],
    [{ 'log-format-upstream': '$remote_addr $status' }, `log_format portico_upstream '$remote_addr $status';`],
  ] as const) {
    const c = render(data);
    assert.ok(c.includes(directive), `${JSON.stringify(data)}: ${directive}`);
    assert.ok(!c.includes('portico_access_line'), `${JSON.stringify(data)}: not the module's line`);
  }
  for (const v of ['proxy_upstream_name', 'proxy_alternative_upstream_name', 'req_id', 'namespace', 'ingress_name', 'service_name', 'service_port', 'location_path']) {
    // A map, or a derivation of Portico's variables module (nginx-assets/modules/portico_vars): evaluated when read.
    assert.match(conf, new RegExp(`^  (?:map \\$[a-z_]+|portico_coalesce|portico_if) \\$${v} `, 'm'), `$${v} is derived when read`);
  }
  // No `set` of them anywhere: nothing is computed per request unless a format reads them.
  assert.doesNotMatch(conf, /\bset \$(proxy_upstream_name|req_id|namespace|ingress_name|service_name|service_port|location_path)\b/);
});

test('log-format-upstream: JSON formats (quotes, braces, ":" and ",") are accepted and rendered in single quotes; escape-none wins over escape-json', () => {
  const json = render({ 'log-format-upstream': JSON_FORMAT, 'log-format-escape-json': 'true' });
  assert.ok(json.includes(`log_format portico_upstream escape=json '${JSON_FORMAT}';`));
  const none = render({ 'log-format-upstream': JSON_FORMAT, 'log-format-escape-json': 'true', 'log-format-escape-none': 'true' });
  assert.ok(none.includes(`log_format portico_upstream escape=none '${JSON_FORMAT}';`));
  // The ingress-nginx documentation's example, as YAML folds it onto one line.
  const docs = '{"time": "$time_iso8601", "remote_addr": "$proxy_protocol_addr", "x_forwarded_for": "$proxy_add_x_forwarded_for", "request_id": "$req_id", "remote_user": "$remote_user", "bytes_sent": $bytes_sent, "request_time": $request_time, "status": $status, "vhost": "$host", "request_proto": "$server_protocol", "path": "$uri", "request_query": "$args", "request_length": $request_length, "method": "$request_method", "http_referrer": "$http_referer", "http_user_agent": "$http_user_agent" }';
  assert.deepEqual(parseGlobalConfig({ 'log-format-upstream': docs }, defaultGlobalConfig()).errors, []);
});

test('log-format-upstream: what could leave the quoted string is refused, keeping the previous format', () => {
  const prev = { ...defaultGlobalConfig(), logFormatUpstream: '$status' };
  const bad: [string, RegExp][] = [
    ["$status' ; access_log off; '", /no single quotes/],
    ['$status; error_log /tmp/x', /";"/],
    ['{"a": "\\"$status"}', /backslashes/],
    ['{"a": $status}\n{"b": 1}', /newlines/],
    ['$status\t$host', /control characters/],
    ['{"a": "${status}"}', /not supported/],
    ['{"a": "$nosuch"}', /unknown variable \$nosuch/],
    ['{"a": "é"}', /text, \$variables and JSON punctuation only/],
  ];
  for (const [v, why] of bad) {
    const r = parseGlobalConfig({ 'log-format-upstream': v }, prev);
    assert.equal(r.values.logFormatUpstream, '$status', v);
    assert.match(r.errors[0]?.message ?? '', why, v);
    assert.match(r.errors[0]?.message ?? '', /keeping "\$status"$/, v);
  }
});

test('log-format-stream: the stream section\'s variables only; rendered with disable-access-log and access-log-params', () => {
  const prev = defaultGlobalConfig();
  const ok = parseGlobalConfig({ 'log-format-stream': '{"client": "$remote_addr", "proto": "$protocol", "up": "$upstream_addr"}' }, prev);
  assert.deepEqual(ok.errors, []);
  const r = parseGlobalConfig({ 'log-format-stream': '$remote_addr $request_uri' }, prev);
  assert.equal(r.values.logFormatStream, '');
  assert.match(r.errors[0]?.message ?? '', /unknown variable \$request_uri of the stream section/);
});

test('skip-access-log-urls: a map on $request_uri and access_log if=; exact strings and regexes, checked', () => {
  const conf = render({ 'skip-access-log-urls': '/healthz, ~^/metrics(\\?|$), ~*^/PING' });
  assert.match(conf, /map \$request_uri \$portico_loggable \{\n\s+"\/healthz" 0;\n\s+"~\^\/metrics\(\\\\\?\|\$\)" 0;\n\s+"~\*\^\/PING" 0;\n\s+default 1;\n\s+\}/);
  assert.match(conf, /access_log "[^"]+" portico_upstream buffer=64k flush=1s if=\$portico_loggable;/);
  assert.doesNotMatch(render({}), /portico_loggable/, 'no list: no map, no if=');
  const prev = { ...defaultGlobalConfig(), skipAccessLogUrls: [{ match: 'exact' as const, value: '/a' }] };
  for (const v of ['/a;b', '/a b{', '~(?R)', '/x$y']) {
    const r = parseGlobalConfig({ 'skip-access-log-urls': v }, prev);
    assert.deepEqual(r.values.skipAccessLogUrls, prev.skipAccessLogUrls, v);
    assert.match(r.errors[0]?.message ?? '', /^skip-access-log-urls=.*keeping/, v);
  }
});

test('access-log-params: buffer, flush and gzip only, each once; flush needs a buffer; replaces Portico\'s own buffering', () => {
  const prev = defaultGlobalConfig();
  const parse = (v: string) => parseGlobalConfig({ 'access-log-params': v }, prev);
  assert.equal(parse(' buffer=16k  gzip flush=1m ').values.accessLogParams, 'buffer=16k gzip flush=1m');
  assert.equal(parse('gzip=9').values.accessLogParams, 'gzip=9');
  for (const bad of ['if=$x', 'buffer=16k buffer=32k', 'flush=5s', 'buffer=2g', 'gzip=0', 'buffer=16k;', 'buffer=16k flush=0s', '/tmp/log', 'buffer=16k\nerror_log']) {
    const r = parse(bad);
    assert.equal(r.values.accessLogParams, '', bad);
    assert.match(r.errors[0]?.message ?? '', /^access-log-params=.*keeping ""$/, bad);
  }
  assert.match(render({ 'access-log-params': 'buffer=16k flush=5s' }), /access_log "[^"]+access\.log" portico_upstream buffer=16k flush=5s;/);
  assert.match(render({ 'access-log-params': 'buffer=4k' }, '/dev/stdout'), /access_log "\/dev\/stdout" portico_upstream buffer=4k;/);
  assert.match(render({}, '/dev/stdout'), /access_log "\/dev\/stdout" portico_upstream;/);
  assert.match(render({ 'disable-access-log': 'true', 'access-log-params': 'gzip' }), /^  access_log off;$/m);
  for (const v of ['if=$x', 'buffer=1k;', 'gzip error']) assert.throws(() => accessLogParams(v), UnsafeValueError);
});

test('error-log-level: nginx\'s severities, rendered at the main level; info and debug lines are then forwarded', () => {
  const prev = defaultGlobalConfig();
  assert.equal(prev.errorLogLevel, 'notice');
  assert.equal(parseGlobalConfig({ 'error-log-level': ' Warn ' }, prev).values.errorLogLevel, 'warn');
  const bad = parseGlobalConfig({ 'error-log-level': 'verbose' }, prev);
  assert.equal(bad.values.errorLogLevel, 'notice');
  assert.match(bad.errors[0]?.message ?? '', /expected one of debug, info, notice/);
  assert.match(render({}), /^error_log stderr notice;$/m);
  assert.match(render({ 'error-log-level': 'error' }), /^error_log stderr error;$/m);
  assert.match(render({ 'error-log-level': 'debug' }), /^error_log stderr debug;$/m);
  assert.throws(() => errorLogLevel('info; x'), UnsafeValueError);
  const info = '2026/01/01 00:00:00 [info] 12#12: *3 client closed keepalive connection';
  assert.equal(forwardedNginxLine(info), null);
  assert.deepEqual(forwardedNginxLine(info, true)?.level, 'info');
});

test('generate-request-id: the variables module\'s id only for requests without an X-Request-ID; "false" sends the client\'s only; $req_id is the id sent', () => {
  const on = render({});
  assert.match(on, /portico_request_id \$portico_rid;\n\s*portico_coalesce \$req_id \$http_x_request_id \$portico_rid;/, 'the variables module makes ids');
  assert.match(on, /map \$req_id \$portico_request_id \{ default \$req_id; \}/, 'the earlier name is an alias');
  assert.match(on, /portico_proxy_header X-Request-ID \$req_id;/);
  assert.doesNotMatch(on, /_set_header X-Request-ID \$portico_request_id;/, 'the headers read $req_id itself, not through the alias');
  const off = render({ 'generate-request-id': 'false' });
  assert.match(off, /portico_coalesce \$req_id \$http_x_request_id;/);
  assert.doesNotMatch(off, /\$req_id \$http_x_request_id \$portico_rid/);
  assert.doesNotMatch(off, /^\s*portico_request_id /m, 'no id is made');
  assert.match(off, /portico_coalesce \$portico_rid "";/, '$portico_rid stays defined (log formats may name it), empty');
});

test('route labels are sent for $namespace, $ingress_name and $location_path formats (or metrics), not otherwise', () => {
  const labels = (data: Record<string, string>, metrics = false) => structureWith(data, metrics).data.routes['a.example.com']?.rules[0]?.route.metrics;
  assert.equal(labels({}), undefined);
  assert.equal(labels({ 'log-format-upstream': '$proxy_upstream_name $service_name $service_port $req_id' }), undefined, 'these come from the backend id');
  for (const v of ['namespace', 'ingress_name', 'location_path']) {
    assert.equal(labels({ 'log-format-upstream': `{"x": "$${v}"}` }), 'default\x1fa\x1fweb\x1f/api\x1fa.example.com', v);
  }
  assert.equal(labels({ 'log-format-upstream': '$http_namespace $cookie_ingress_name' }, false), undefined, 'a longer name is another variable');
  assert.equal(labels({}, true), 'default\x1fa\x1fweb\x1f/api\x1fa.example.com');
});
