// ingress-nginx-compatible metrics from their sources: the dump of nginx's shared dict, stub_status, the model
// (orphan_ingress) and running certificates — pure functions, no nginx (metrics.nginx.test.ts runs the real one).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { DEFAULT_BUCKETS, DEFAULT_CONST_LABELS, DumpSums, aggregate, certificateMetrics, orphanMetrics, registerCompatMetrics, requestMetrics, requestMetricsText, stubStatusMetrics, type RequestMetricsOptions } from './compat-metrics.ts';
import { CHUNK, type MetricShape } from '../../operator/exposition.ts';
import { Metrics } from '../../operator/metrics.ts';
import { ing, modelOf, rule, slice, svc, svcRef } from '../translate/fixtures.test-helpers.ts';
import { issue, makeCa } from '../translate/pki.test-helpers.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const C = { ...DEFAULT_CONST_LABELS, controller_pod: 'p' };
const O = { constLabels: C, perHost: true, statusClasses: false, exclude: new Set<string>(), buckets: DEFAULT_BUCKETS };
const MK = ['shop', 'web', 'api', '/api', 'shop.example.com'].join('\x1f');

test('the dump is summed per label set; slots outside the layout and malformed lines are ignored', () => {
  const lines = [`${MK}\x1f200\x1fGET\x1f1\t3`, `${MK}\x1f200\x1fGET\x1f1\t2`, `${MK}\x1fshop_api-v2_80\x1f200\x1fGET\x1f1\t4`, `${MK}\x1f200\x1fGET\x1f9999\t7`, 'garbage', `${MK}\x1f200\x1fGET\x1f1\tNaN`];
  const series = [...aggregate(lines.join('\n'), O).values()];
  assert.deepEqual(series.map((s) => [s.labels.canary, s.slots[1]]), [['', 5], ['shop-api-v2-80', 4]]);
  const classes = [...aggregate(lines.join('\n'), { ...O, statusClasses: true, perHost: false }).values()];
  assert.deepEqual(classes.map((s) => [s.labels.status, 'host' in s.labels]), [['2xx', false], ['2xx', false]]);
  const m = requestMetrics(lines.join('\n'), O).find((x) => x.name === 'nginx_ingress_controller_requests');
  assert.equal(m?.values.reduce((a, v) => a + v.value, 0), 9);
});

test('stub_status: connections by state, accepted/handled and requests; an unreadable page gives nothing', () => {
  const page = 'Active connections: 3 \nserver accepts handled requests\n 10 9 42 \nReading: 0 Writing: 1 Waiting: 2 \n';
  const ms = stubStatusMetrics(page, C);
  assert.deepEqual(ms.find((m) => m.name.endsWith('nginx_process_connections'))?.values.map((v) => [v.labels.state, v.value]), [['active', 3], ['reading', 0], ['writing', 1], ['waiting', 2]]);
  assert.deepEqual(ms.find((m) => m.name.endsWith('connections_total'))?.values.map((v) => [v.labels.state, v.value]), [['accepted', 10], ['handled', 9]]);
  assert.equal(ms.find((m) => m.name.endsWith('requests_total'))?.values[0]?.value, 42);
  assert.deepEqual(stubStatusMetrics('502 Bad Gateway', C), []);
});

test('orphan_ingress: no-service for a missing Service, no-endpoint without a ready endpoint, 0 otherwise', () => {
  const m = modelOf({
    services: [svc('empty', [{ port: 80 }]), svc('ok', [{ port: 80 }]), svc('ext', [{ port: 80 }], 'default', { type: 'ExternalName', externalName: 'example.org' })],
    slices: [slice('empty-1', 'empty', [{ port: 80 }], [{ ip: '198.18.0.1', ready: false }]), slice('ok-1', 'ok', [{ port: 80 }], [{ ip: '198.18.0.2' }])],
    ingresses: ['missing', 'empty', 'ok', 'ext'].map((s) => ing(s, { rules: [rule(`${s}.example.com`, [{ path: '/', backend: svcRef(s, 80) }])] })),
  });
  const [g] = orphanMetrics(m.snapshot(), C);
  const of = (name: string, type: string) => g?.values.find((v) => v.labels.ingress === name && v.labels.type === type)?.value;
  assert.deepEqual([of('missing', 'no-service'), of('missing', 'no-endpoint')], [1, 0]);
  assert.deepEqual([of('empty', 'no-service'), of('empty', 'no-endpoint')], [0, 1]);
  assert.deepEqual([of('ok', 'no-service'), of('ok', 'no-endpoint')], [0, 0]);
  assert.deepEqual([of('ext', 'no-service'), of('ext', 'no-endpoint')], [0, 0]);
});

test('certificate metrics: expiry (leader only) and info with issuer, serial and key algorithm', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-certmetrics-'));
  const ca = makeCa(dir, 'metrics-ca');
  const leaf = issue(dir, ca, 'shop.example.com', ['shop.example.com']);
  const cert = { cert: leaf.cert, key: '', source: 'shop/shop-tls', notAfter: '2027-01-01T00:00:00Z' };
  const [expire, info] = certificateMetrics({ 'shop.example.com': cert }, 'k8s.io/ingress-nginx', true);
  assert.deepEqual(expire?.values.map((v) => [v.labels.namespace, v.labels.secret_name, v.labels.host, v.value]), [['shop', 'shop-tls', 'shop.example.com', Date.parse('2027-01-01T00:00:00Z') / 1000]]);
  const l = info?.values[0]?.labels;
  assert.equal(l?.issuer_common_name, 'metrics-ca');
  assert.match(l?.serial_number ?? '', /^\d+$/);
  assert.ok(l?.public_key_algorithm === 'RSA' || l?.public_key_algorithm === 'ECDSA', l?.public_key_algorithm);
  assert.equal(certificateMetrics({ 'shop.example.com': cert }, 'c', false)[0]?.values.length, 0, 'a follower reports no expiry');
});

/** A dump as nginx's module writes it: per series every non-zero slot, one line each. */
function dumpOf(series: { labels: string[]; status: string; method: string; slots: Record<number, number> }[]): string {
  return series.flatMap((s) => Object.entries(s.slots).map(([slot, v]) => `${[...s.labels, s.status, s.method, slot].join('\x1f')}\t${v}`)).join('\n');
}

/** What prom-client wrote for these families when they were registered as collectors (the rendering before). */
async function promClientText(shapes: MetricShape[]): Promise<string[]> {
  const r = new Registry();
  for (const m of shapes) r.registerMetric({ name: m.name, get: async () => m } as unknown as Parameters<Registry['registerMetric']>[0]);
  return (await r.metrics()).split('\n').filter(Boolean);
}

const MIXED = dumpOf([
  { labels: ['shop', 'web', 'api', '/api', 'shop.example.com'], status: '200', method: 'GET', slots: { 1: 5, 2: 0.25, 3: 5, 4: 2, 7: 3, 21: 700, 22: 5, 25: 5 } },
  { labels: ['shop', 'web', 'api', '/api', 'shop.example.com'], status: '503', method: 'POST', slots: { 1: 1, 2: 0.001, 3: 1, 4: 1 } },
  { labels: ['shop', 'web', 'api', '/api', 'shop.example.com', 'shop_api-v2_80'], status: '201', method: 'PUT', slots: { 1: 2, 2: 1.5, 3: 2, 13: 2 } },
  // a path with the characters the text format escapes
  { labels: ['shop', 'odd', 'api', '/a"b\\c', 'odd.example.com'], status: '404', method: 'GET', slots: { 1: 1, 2: 0.002, 3: 1, 5: 1 } },
]);

test('the per-request families as text are what prom-client wrote for the same samples, with every flag that shapes them', async () => {
  const variants: RequestMetricsOptions[] = [O, { ...O, statusClasses: true, perHost: false, exclude: new Set(['bytes_sent', 'requests']) }];
  for (const o of variants) {
    const text = [...requestMetricsText(aggregate(MIXED, o).values(), o)].join('');
    assert.deepEqual(text.split('\n').filter(Boolean), await promClientText(requestMetrics(MIXED, o)));
  }
  assert.match([...requestMetricsText(aggregate(MIXED, O).values(), O)].join(''), /path="\/a\\"b\\\\c"/);
});

test('the dump may arrive in pieces of any size: the sums are those of the whole', () => {
  const whole = [...aggregate(MIXED, O).values()].map((s) => [s.labels, [...s.slots]]);
  for (const size of [1, 7, 64]) {
    const sums = new DumpSums(O);
    for (let i = 0; i < MIXED.length; i += size) sums.feed(MIXED.slice(i, i + size));
    assert.deepEqual([...sums.end().values()].map((s) => [s.labels, [...s.slots]]), whole);
  }
});

test('many series come out in bounded chunks that together are the whole text', async () => {
  const many = dumpOf(Array.from({ length: 400 }, (_, i) => ({ labels: ['ns', `i${i}`, `s${i}`, '/', `h${i}.example.com`], status: '200', method: 'GET', slots: { 1: 1, 2: 0.01, 3: 1, 6: 1, 16: 0.002, 17: 1, 20: 1 } })));
  const chunks = [...requestMetricsText(aggregate(many, O).values(), O)];
  assert.ok(chunks.length > 5, `${chunks.length} chunks`);
  // A chunk is handed on at CHUNK characters; what a series adds past that is its own lines (a few KB).
  assert.ok(chunks.every((c) => c.length < CHUNK + 8 * 1024), `largest ${Math.max(...chunks.map((c) => c.length))}`);
  assert.deepEqual(chunks.join('').split('\n').filter(Boolean), await promClientText(requestMetrics(many, O)));
  assert.equal(chunks.join('').match(/^nginx_ingress_controller_requests\{/gm)?.length, 400);
});

test('scrape-time families: each announced once next to the registry, empty while nginx is not running', async () => {
  const m = new Metrics({ prefix: 'portico' });
  let running = true;
  registerCompatMetrics(m, { ...O, enabled: true }, {
    text: () => (running ? Promise.resolve('Active connections: 1 \nserver accepts handled requests\n 3 3 7 \nReading: 0 Writing: 1 Waiting: 0 \n') : null),
    stream: () => (running ? (async function* () { for (let i = 0; i < MIXED.length; i += 100) yield MIXED.slice(i, i + 100); })() : null),
    masterPid: () => null,
    certificates: () => ({}),
    isLeader: () => true,
  });
  const scrape = async () => {
    let t = '';
    for await (const piece of m.exposition()) t += piece;
    return t;
  };
  const live = await scrape();
  const helps = live.match(/^# HELP \S+/gm) ?? [];
  assert.equal(new Set(helps).size, helps.length, 'no family twice');
  assert.match(live, /^# HELP portico_workqueue_depth /m, 'the registry\'s families come first');
  assert.match(live, /^nginx_ingress_controller_requests\{status="200",method="GET",path="\/api",namespace="shop",ingress="web",service="api",canary="",host="shop.example.com",controller_namespace="default",controller_class="portico.dev\/ingress-controller",controller_pod="p"\} 5$/m);
  assert.match(live, /^nginx_ingress_controller_nginx_process_requests_total\{controller_namespace="default",controller_class="portico.dev\/ingress-controller",controller_pod="p"\} 7$/m);
  running = false;
  const down = await scrape();
  assert.doesNotMatch(down, /^nginx_ingress_controller_requests\{/m);
  for (const name of ['requests', 'request_duration_seconds', 'nginx_process_connections', 'ssl_certificate_info']) assert.match(down, new RegExp(`^# TYPE nginx_ingress_controller_${name} `, 'm'));
});
