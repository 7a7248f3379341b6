import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultGlobalConfig, parseGlobalConfig, refusedConfigWhy } from '../model/global-config.ts';
import { tracingSettingsOf } from '../model/tracing-config.ts';
import { translate } from '../translate/translate.ts';
import { createLogger } from '../../operator/log.ts';
import { ExternalNameResolver } from './resolver.ts';
import { resolveExternalNames } from './externalnames.ts';
import { forbiddenAddressReason } from '../values/addresses.ts';
import { OPTS, ing, modelOf, rule, svc, svcRef } from '../translate/fixtures.test-helpers.ts';

const parse = (d: Record<string, string>) => parseGlobalConfig(d, defaultGlobalConfig());

test('OpenTelemetry ConfigMap keys: ingress-nginx\'s defaults, 4317 read as 4318, the three samplers', () => {
  const d = defaultGlobalConfig();
  assert.deepEqual([d.otelEnabled, d.otelTrustIncomingSpan, d.otlpCollectorPort, d.otelServiceName, d.otelSampler, d.otelSamplerRatio, d.otelSamplerParentBased, d.otelMaxQueueSize, d.otelScheduleDelayMillis, d.otelMaxExportBatchSize], [false, true, 4318, 'nginx', 'AlwaysOn', 0.01, true, 2048, 5000, 512]);
  const r = parse({ 'enable-opentelemetry': 'true', 'otlp-collector-host': '10.96.0.20', 'otlp-collector-port': '4317', 'otel-sampler': 'TraceIdRatioBased', 'otel-sampler-ratio': '0.25', 'opentelemetry-operation-name': 'HTTP $request_method $service_name $uri', 'opentelemetry-config': '/etc/ingress-controller/telemetry/opentelemetry.toml' });
  assert.deepEqual(r.errors, []);
  assert.equal(r.values.otlpCollectorPort, 4318);
  assert.equal(r.values.otelSamplerRatio, 0.25);
  assert.equal(refusedConfigWhy('otlp-collector-host'), null, 'no longer refused');
  assert.equal(parse({ 'otlp-collector-host': 'OTel-Collector.observability.svc.cluster.local.' }).values.otlpCollectorHost, 'otel-collector.observability.svc.cluster.local', 'a DNS name (resolved by the gateway)');
  assert.match(refusedConfigWhy('jaeger-collector-host') ?? '', /removed from ingress-nginx/);
});

test('OpenTelemetry ConfigMap keys: bad values are reported and keep the previous value', () => {
  const bad: Record<string, RegExp> = {
    'otel-sampler': /AlwaysOn, AlwaysOff or TraceIdRatioBased/,
    'otel-sampler-ratio': /between 0 and 1/,
    'otlp-collector-host': /./,
    'opentelemetry-operation-name': /./,
    'opentelemetry-config': /writes no OpenTelemetry configuration file/,
    'otel-service-name': /./,
    'otel-max-queuesize': /./,
  };
  const values: Record<string, string[]> = {
    'otel-sampler': ['remote', 'ParentBased'],
    'otel-sampler-ratio': ['1.5', '-0.1', 'abc'],
    'otlp-collector-host': ['127.0.0.1', '::1', '169.254.169.254', '0.0.0.0', 'localhost', 'http://10.0.0.1', 'collector:4318', 'a_b.example'],
    'opentelemetry-operation-name': ['HTTP $request_body', 'a"b', 'x;y', '$http_authorization'],
    'opentelemetry-config': ['/tmp/x.toml'],
    'otel-service-name': ['a b', ''],
    'otel-max-queuesize': ['0'],
  };
  for (const [k, vs] of Object.entries(values)) {
    for (const v of vs) {
      const r = parse({ [k]: v });
      assert.equal(r.errors.length, 1, `${k}=${v}`);
      assert.match(r.errors[0]!.message, bad[k]!, `${k}=${v}`);
    }
  }
});

test('tracing settings: none without a collector or when nothing traces; the collector may not be Portico\'s own address', () => {
  const g = { ...defaultGlobalConfig(), otlpCollectorHost: '10.96.0.20', otelEnabled: true };
  assert.equal(tracingSettingsOf({ ...g, otlpCollectorHost: '' }, true), undefined);
  assert.equal(tracingSettingsOf({ ...g, otelEnabled: false }, false), undefined);
  assert.equal(tracingSettingsOf(g, false)?.host, '10.96.0.20');
  assert.equal(tracingSettingsOf({ ...g, otelEnabled: false }, true)?.enabled, false, 'an Ingress turns it on: routes without the annotation stay untraced');
  assert.equal(tracingSettingsOf(g, false, new Set(['10.96.0.20'])), undefined);
});

test('translation: annotations become route data (no nginx.conf change per Ingress); an Ingress turning tracing on brings the settings', () => {
  const m = modelOf({
    services: [svc('api', [{ port: 80, targetPort: 8080 }])],
    ingresses: [
      ing('a', { rules: [rule('a.example', [{ path: '/a', backend: svcRef('api', 80) }])] }, { annotations: { 'nginx.ingress.kubernetes.io/enable-opentelemetry': 'true', 'nginx.ingress.kubernetes.io/opentelemetry-operation-name': 'op-a', 'nginx.ingress.kubernetes.io/opentelemetry-trust-incoming-span': 'false' } }),
      ing('b', { rules: [rule('b.example', [{ path: '/b', backend: svcRef('api', 80) }])] }),
    ],
  });
  m.setGlobalConfig(parse({ 'otlp-collector-host': '10.96.0.20' }).values);
  const c = translate(m.snapshot(), OPTS).config;
  assert.deepEqual(c.data.routes['a.example']?.rules[0]?.route.tracing, { enabled: true, trust: false, operationName: 'op-a' });
  assert.equal(c.data.routes['b.example']?.rules[0]?.route.tracing, undefined);
  assert.equal(c.structure.global.tracing?.enabled, false);
  assert.equal(c.structure.global.tracing?.port, 4318);
  m.setGlobalConfig(parse({}).values);
  assert.equal(translate(m.snapshot(), OPTS).config.structure.global.tracing, undefined, 'no collector: no tracing in nginx.conf');
});

test('a collector named by DNS: the gateway resolves it and puts an allowed address in the settings; loopback or nothing: no tracing', async () => {
  const m = modelOf({ services: [svc('api', [{ port: 80, targetPort: 8080 }])], ingresses: [ing('a', { rules: [rule('a.example', [{ path: '/a', backend: svcRef('api', 80) }])] })] });
  const run = async (answer: string[]) => {
    m.setGlobalConfig(parse({ 'enable-opentelemetry': 'true', 'otlp-collector-host': 'otel.observability.svc.cluster.local' }).values);
    const desired = translate(m.snapshot(), { ...OPTS, ownAddresses: ['10.0.0.7'] }).config;
    assert.equal(desired.structure.global.tracing?.host, 'otel.observability.svc.cluster.local');
    const resolver = new ExternalNameResolver(() => {}, createLogger('error'), { refuse: (a) => forbiddenAddressReason(a, new Set(['10.0.0.7'])), lookup: async () => answer });
    // Each sync works on a shallow copy of the translation's result (config-lane.ts).
    resolveExternalNames({ structure: desired.structure, data: { ...desired.data } }, resolver, m); // starts the lookup
    await resolver.settle();
    const second = { structure: desired.structure, data: { ...desired.data } };
    resolveExternalNames(second, resolver, m);
    resolver.stop();
    return second.structure.global.tracing;
  };
  assert.equal((await run(['10.96.3.4']))?.host, '10.96.3.4');
  assert.equal(await run(['127.0.0.1']), undefined, 'loopback');
  assert.equal(await run(['10.0.0.7']), undefined, 'Portico\'s own address');
  assert.equal(await run([]), undefined, 'does not resolve');
});
