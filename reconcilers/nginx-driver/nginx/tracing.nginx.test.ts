// OpenTelemetry tracing inside a real nginx (Debian's) with a real OpenTelemetry Collector (built from Go modules by
// e2e/otel/build.sh): the configuration comes from the pure translation with the ConfigMap's otel-* / otlp-* keys
// and the Ingress annotations; the collector receives nginx's OTLP/HTTP export and re-exports what it decoded, as
// OTLP JSON, to an HTTP server of this file, so every assertion is on spans the collector accepted. Backends answer
// in this file's network namespace (testnet.test-helpers.ts, subnet 237) and echo the headers they got.
// Ports 32800-32829 belong to this file: nginx 32800-32802 (AlwaysOn), 32803-32805 (AlwaysOff), 32806-32808 (dead
// collector); the echo backend 32810; the collector's OTLP/HTTP receiver 32811; the collector's export to this
// file 32812; a collector that accepts connections and never answers 32813.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { translate } from '../../translate/translate.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../../model/global-config.ts';
import { until } from '../../../e2e/harness/http.ts';
import { TestNet } from './testnet.test-helpers.ts';
import { capturingLogger, liveNginx, sendTo, startLive, stopLive } from './live.test-helpers.ts';

const ON = { httpPort: 32800, httpsPort: 32801, statusPort: 32802, address: '127.0.0.1' };
const OFF = { httpPort: 32803, httpsPort: 32804, statusPort: 32805, address: '127.0.0.1' };
const DEAD = { httpPort: 32806, httpsPort: 32807, statusPort: 32808, address: '127.0.0.1' };
const ECHO = 32810;
const OTLP = 32811;
const SINK = 32812;
const SILENT = 32813;
const tnet = new TestNet(237);
const { logger, lines } = capturingLogger();
const on = liveNginx('portico-otel-on-', logger);
const off = liveNginx('portico-otel-off-', logger);
const dead = liveNginx('portico-otel-dead-', logger);
const root = path.resolve(import.meta.dirname, '../../..');
let collector: ChildProcess | undefined;
let collectorLog = '';
let sink: http.Server | undefined;
let silent: net.Server | undefined;
const silentSockets: net.Socket[] = [];

interface Attr { key: string; value: { stringValue?: string; intValue?: string } }
interface Span { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; startTimeUnixNano: string; endTimeUnixNano: string; attributes: Attr[]; status?: { code?: number } }
const received: { resource: Attr[]; span: Span }[] = [];

function config(listen: typeof ON, keys: Record<string, string>) {
  const m = modelOf({
    services: [svc('api', [{ port: 80, targetPort: ECHO }]), svc('shop', [{ port: 80, targetPort: ECHO }]), svc('quiet', [{ port: 80, targetPort: ECHO }])],
    slices: ['api', 'shop', 'quiet'].map((n) => slice(`${n}-1`, n, [{ port: ECHO }], [{ ip: tnet.ip }])),
    ingresses: [
      ing('web', { rules: [rule('otel.example.com', [{ path: '/api', backend: svcRef('api', 80) }])] }),
      ing('shop', { rules: [rule('otel.example.com', [{ path: '/shop', backend: svcRef('shop', 80) }])] }, {
        annotations: { 'nginx.ingress.kubernetes.io/opentelemetry-operation-name': 'checkout', 'nginx.ingress.kubernetes.io/opentelemetry-trust-incoming-span': 'false' },
      }),
      ing('quiet', { rules: [rule('otel.example.com', [{ path: '/quiet', backend: svcRef('quiet', 80) }])] }, {
        annotations: { 'nginx.ingress.kubernetes.io/enable-opentelemetry': 'false' },
      }),
    ],
  });
  const parsed = parseGlobalConfig(keys, defaultGlobalConfig());
  assert.deepEqual(parsed.errors, []);
  m.setGlobalConfig(parsed.values);
  const c = translate(m.snapshot(), { ...OPTS, listen }).config;
  assert.ok(c.structure.global.tracing, 'tracing is configured');
  return c;
}

const KEYS = { 'enable-opentelemetry': 'true', 'otlp-collector-host': '', 'otlp-collector-port': String(OTLP), 'otel-schedule-delay-millis': '100', 'otel-service-name': 'portico-test' };

before(async () => {
  tnet.up();
  await tnet.start('echo', ECHO, 'echo');
  // The sink: what the collector exports (OTLP JSON), decoded span by span.
  sink = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: { resource: { attributes: Attr[] }; scopeSpans: { spans: Span[] }[] }[] };
      for (const rs of body.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) for (const span of ss.spans ?? []) received.push({ resource: rs.resource.attributes, span });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => sink!.listen(SINK, tnet.hostIp, r));
  // A collector that accepts connections and never answers.
  silent = net.createServer((s) => { silentSockets.push(s); s.on('error', () => {}); });
  await new Promise<void>((r) => silent!.listen(SILENT, tnet.hostIp, r));
  // The real collector.
  execFileSync('bash', [path.join(root, 'e2e/otel/build.sh')], { stdio: ['ignore', 'ignore', 'inherit'] });
  const bin = execFileSync('bash', [path.join(root, 'e2e/otel/build.sh'), 'path'], { encoding: 'utf8' }).trim();
  assert.ok(existsSync(bin), bin);
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-otelcol-'));
  writeFileSync(path.join(dir, 'config.yaml'), [
    'receivers:',
    '  otlp:',
    '    protocols:',
    '      http:',
    `        endpoint: ${tnet.hostIp}:${OTLP}`,
    'exporters:',
    '  debug:',
    '    verbosity: basic',
    '  otlphttp:',
    `    endpoint: http://${tnet.hostIp}:${SINK}`,
    '    encoding: json',
    '    compression: none',
    '    retry_on_failure:',
    '      enabled: false',
    'service:',
    '  telemetry:',
    '    metrics:',
    '      level: none',
    '  pipelines:',
    '    traces:',
    '      receivers: [otlp]',
    '      exporters: [otlphttp, debug]',
    '',
  ].join('\n'));
  collector = spawn(bin, ['--config', path.join(dir, 'config.yaml')], { stdio: ['ignore', 'pipe', 'pipe'] });
  collector.stdout!.on('data', (c: Buffer) => { collectorLog += c.toString(); });
  collector.stderr!.on('data', (c: Buffer) => { collectorLog += c.toString(); });
  await until('the collector to listen', () => new Promise<boolean>((resolve) => {
    const s = net.connect(OTLP, tnet.hostIp, () => { s.destroy(); resolve(true); });
    s.on('error', () => resolve(false));
  }), 30_000, 100).catch((e: Error) => { throw new Error(`${e.message}\n${collectorLog}`); });
  await startLive(on.nginx, on.dynamic, config(ON, { ...KEYS, 'otlp-collector-host': tnet.hostIp }));
  await startLive(off.nginx, off.dynamic, config(OFF, { ...KEYS, 'otlp-collector-host': tnet.hostIp, 'otel-sampler': 'AlwaysOff', 'otel-sampler-parent-based': 'false' }));
  await startLive(dead.nginx, dead.dynamic, config(DEAD, { ...KEYS, 'otlp-collector-host': tnet.hostIp, 'otlp-collector-port': String(SILENT), 'otel-max-export-batch-size': '1' }));
});

after(async () => {
  collector?.kill('SIGTERM');
  for (const s of silentSockets) s.destroy();
  await new Promise<void>((r) => (silent ? silent.close(() => r()) : r()));
  await new Promise<void>((r) => (sink ? sink.close(() => r()) : r()));
  await stopLive(off.nginx, off.dynamic);
  await stopLive(dead.nginx, dead.dynamic);
  await stopLive(on.nginx, on.dynamic, tnet);
});

const attr = (s: Span, k: string) => {
  const a = s.attributes.find((x) => x.key === k);
  return a ? (a.value.stringValue ?? a.value.intValue) : undefined;
};
const TP = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

test('one SERVER span per request: a new trace without traceparent, the incoming trace continued with one, and the upstream gets Portico\'s span as its parent', async () => {
  const fresh = await sendTo(ON.httpPort, 'otel.example.com', '/api/items?q=1', { headers: { 'user-agent': 't' } });
  assert.equal(fresh.status, 200);
  const upFresh = (JSON.parse(fresh.body) as { headers: Record<string, string> }).headers.traceparent ?? '';
  const mFresh = TP.exec(upFresh);
  assert.ok(mFresh, `the upstream got a traceparent: ${upFresh}`);

  const parentTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
  const parentSpan = '00f067aa0ba902b7';
  const cont = await sendTo(ON.httpPort, 'otel.example.com', '/api/x', { method: 'POST', body: 'hi', headers: { traceparent: `00-${parentTrace}-${parentSpan}-01`, tracestate: 'k=v' } });
  const echoed = (JSON.parse(cont.body) as { headers: Record<string, string> }).headers;
  const mCont = TP.exec(echoed.traceparent ?? '');
  assert.ok(mCont, echoed.traceparent);
  assert.equal(mCont[1], parentTrace, 'the incoming trace is continued');
  assert.notEqual(mCont[2], parentSpan, 'the upstream\'s parent is Portico\'s span, not the client\'s');
  assert.equal(echoed.tracestate, 'k=v', 'tracestate passes through');

  // Not trusted on /shop (annotation): a new trace, and the client's traceparent is not passed on.
  const untrusted = await sendTo(ON.httpPort, 'otel.example.com', '/shop/cart', { headers: { traceparent: `00-${parentTrace}-${parentSpan}-01` } });
  const mUn = TP.exec((JSON.parse(untrusted.body) as { headers: Record<string, string> }).headers.traceparent ?? '');
  assert.ok(mUn);
  assert.notEqual(mUn[1], parentTrace);

  // Tracing off for /quiet (annotation): no span, and the client's header reaches the upstream untouched.
  const quiet = await sendTo(ON.httpPort, 'otel.example.com', '/quiet', { headers: { traceparent: `00-${parentTrace}-${parentSpan}-01` } });
  assert.equal((JSON.parse(quiet.body) as { headers: Record<string, string> }).headers.traceparent, `00-${parentTrace}-${parentSpan}-01`);
  // An invalid traceparent starts a new trace.
  const bad = await sendTo(ON.httpPort, 'otel.example.com', '/api/bad', { headers: { traceparent: `00-${'0'.repeat(32)}-${parentSpan}-01` } });
  const mBad = TP.exec((JSON.parse(bad.body) as { headers: Record<string, string> }).headers.traceparent ?? '');
  assert.ok(mBad);
  assert.notEqual(mBad[1], '0'.repeat(32));

  await until('four spans at the collector', () => received.length >= 4 && received, 20_000, 50).catch((e: Error) => { throw new Error(`${e.message}: ${received.length}\n${collectorLog.slice(-3000)}\n${lines.join('\n').slice(-5000)}`); });
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(received.length, 4, 'one span per traced request, none for /quiet');
  const byId = new Map(received.map((r) => [r.span.spanId, r]));

  const s1 = byId.get(mFresh[2]!)!;
  assert.ok(s1, 'the span the upstream was told about was exported');
  assert.equal(s1.span.traceId, mFresh[1]);
  assert.equal(s1.span.parentSpanId ?? '', '', 'a new trace has no parent');
  assert.equal(s1.span.kind, 2, 'SERVER');
  assert.equal(s1.span.name, '/api', 'the route path, as written');
  assert.equal(attr(s1.span, 'http.method'), 'GET');
  assert.equal(attr(s1.span, 'http.request.method'), 'GET');
  assert.equal(attr(s1.span, 'http.status_code'), '200');
  assert.equal(attr(s1.span, 'http.response.status_code'), '200');
  assert.equal(attr(s1.span, 'http.target'), '/api/items?q=1');
  assert.equal(attr(s1.span, 'http.host'), 'otel.example.com');
  assert.equal(attr(s1.span, 'http.flavor'), '1.1');
  assert.equal(attr(s1.span, 'net.peer.ip'), '127.0.0.1');
  assert.equal(attr(s1.span, 'portico.upstream.address'), `${tnet.ip}:${ECHO}`);
  assert.equal(s1.span.status?.code, 1, 'Ok');
  assert.ok(BigInt(s1.span.endTimeUnixNano) >= BigInt(s1.span.startTimeUnixNano));
  assert.ok(Math.abs(Number(BigInt(s1.span.startTimeUnixNano) / 1_000_000n) - Date.now()) < 60_000, 'start time in ns since the epoch');
  assert.equal(s1.resource.find((a) => a.key === 'service.name')?.value.stringValue, 'portico-test');

  const s2 = byId.get(mCont[2]!)!;
  assert.equal(s2.span.traceId, parentTrace);
  assert.equal(s2.span.parentSpanId, parentSpan, 'the client\'s span is the parent');
  assert.equal(attr(s2.span, 'http.method'), 'POST');

  const s3 = byId.get(mUn[2]!)!;
  assert.equal(s3.span.name, 'checkout', 'the annotation names the span');
  assert.equal(s3.span.parentSpanId ?? '', '');
  assert.ok(byId.get(mBad[2]!), 'the request with an invalid traceparent has a span of its own');
});

test('otel-sampler AlwaysOff exports nothing, and the upstream gets no traceparent of Portico\'s', async () => {
  const before = received.length;
  for (let i = 0; i < 5; i++) {
    const a = await sendTo(OFF.httpPort, 'otel.example.com', `/api/${i}`);
    assert.equal(a.status, 200);
    assert.equal((JSON.parse(a.body) as { headers: Record<string, string> }).headers.traceparent, undefined);
  }
  await new Promise((r) => setTimeout(r, 1_500)); // 15 export periods
  assert.equal(received.length, before);
});

test('a collector that accepts connections and never answers does not delay requests', async () => {
  const times: number[] = [];
  for (let i = 0; i < 40; i++) {
    const t0 = performance.now();
    const a = await sendTo(DEAD.httpPort, 'otel.example.com', `/api/${i}`);
    times.push(performance.now() - t0);
    assert.equal(a.status, 200);
  }
  await until('nginx to be exporting to the silent collector', () => silentSockets.length > 0, 10_000, 50);
  times.sort((a, b) => a - b);
  assert.ok((times.at(-1) ?? 0) < 500, `the slowest request took ${times.at(-1)} ms`);
  const t0 = performance.now();
  const a = await sendTo(DEAD.httpPort, 'otel.example.com', '/api/late');
  assert.equal(a.status, 200);
  assert.ok(performance.now() - t0 < 500, 'a request while an export hangs is not delayed');
  // The export times out (2 s): its spans are dropped and counted, and the controller reads the count.
  await until('the dropped spans to be counted', async () => (await dead.dynamic.getConfig()).tracingDropped > 0, 15_000, 100);
});
