// ingress-nginx-compatible metrics from their sources: the dump of nginx's shared dict, stub_status, the model
// (orphan_ingress) and running certificates — pure functions, no nginx (metrics.nginx.test.ts runs the real one).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_BUCKETS, DEFAULT_CONST_LABELS, aggregate, certificateMetrics, orphanMetrics, requestMetrics, stubStatusMetrics } from './compat-metrics.ts';
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
