// nginx.conf with and without OpenTelemetry: nothing of tracing runs per request unless the ConfigMap names a
// collector and something traces; with it, the settings reach init_by_lua through the escaping helpers and nginx -t
// accepts the result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderNginxConf } from './render.ts';
import { nginxTest, runtimeDir } from './nginx-t.test-helpers.ts';
import { UnsafeValueError } from './escape.ts';
import { translate } from '../../translate/translate.ts';
import { OPTS, ing, modelOf, rule, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../../model/global-config.ts';

const rt = runtimeDir();
function conf(keys: Record<string, string>, metrics = false) {
  const m = modelOf({ services: [svc('api', [{ port: 80, targetPort: 8080 }])], ingresses: [ing('a', { rules: [rule('a.example', [{ path: '/a', backend: svcRef('api', 80) }])] })] });
  const parsed = parseGlobalConfig(keys, defaultGlobalConfig());
  assert.deepEqual(parsed.errors, []);
  m.setGlobalConfig(parsed.values);
  const s = translate(m.snapshot(), { ...OPTS, ...(metrics ? { metrics: { undefinedHosts: false, buckets: { time: [1], length: [1], size: [1] } } } : {}) }).config.structure;
  return { s, text: renderNginxConf(s, rt, 'c') };
}

test('tracing off (no collector, or nothing traces): no traceparent header, no tracing hook, the plain router entry', () => {
  const cases: Record<string, string>[] = [{}, { 'otlp-collector-host': '10.96.0.20' }, { 'enable-opentelemetry': 'true' }];
  for (const keys of cases) {
    const { text } = conf(keys);
    assert.doesNotMatch(text, /proxy_set_header traceparent/);
    assert.doesNotMatch(text, /portico\.tracing|route_traced|@portico_traced/);
    assert.match(text, /set_by_lua \$portico_jump 'return require\("portico.router"\).route_set\(\)';/);
  }
});

test('tracing on: settings in init_by_lua, traceparent sent upstream, location / without a log handler; nginx -t accepts it', () => {
  const { text } = conf({ 'enable-opentelemetry': 'true', 'otlp-collector-host': '10.96.0.20', 'otel-sampler': 'TraceIdRatioBased', 'opentelemetry-operation-name': 'HTTP $request_method $uri' }, true);
  assert.match(text, /host = "10\.96\.0\.20",\n\s+port = 4318,/);
  assert.match(text, /sampler = "TraceIdRatioBased",\n\s+ratio = 0\.01,/);
  assert.match(text, /operationName = "HTTP \$request_method \$uri",/);
  assert.match(text, /proxy_set_header traceparent \$portico_traceparent_out;/);
  assert.match(text, /route_traced_set\(\)';/);
  assert.match(text, /require\("portico.tracing"\).start_worker\(\)/);
  assert.match(text, /^load_module "\/usr\/lib\/nginx\/modules\/ngx_http_portico_metrics_module\.so";$/m, 'metrics on as well: counted by Portico\'s module');
  assert.match(text, /^    portico_metrics on;$/m);
  assert.doesNotMatch(text, /portico\.metrics/, 'no Lua log handler counts them');
  assert.match(text, /    location \/ \{\n      proxy_pass http:\/\/portico_upstream;\n    \}/);
  nginxTest(rt, text, { withOutput: true });
});

test('a value that is not safe Lua text never reaches init_by_lua', () => {
  const { s } = conf({ 'enable-opentelemetry': 'true', 'otlp-collector-host': '10.96.0.20' });
  const bad = { ...s, global: { ...s.global, tracing: { ...s.global.tracing!, operationName: 'x" } os.execute("id") --' } } };
  assert.throws(() => renderNginxConf(bad, rt, 'c'), UnsafeValueError);
});
