// Per-request metrics inside a real nginx (Debian's): the configuration comes from the pure translation with
// --enable-metrics (two Ingresses on one host, a canary by header, a Route on another host), real backends answer in
// this file's network namespace (testnet.test-helpers.ts, subnet 248), and what nginx counts is read back over the
// configuration socket and rendered with ingress-nginx's names. Every count must equal what was sent, per label set.
// Ports 31800-31805 belong to this file: nginx 31800-31802, backends 31803 (api), 31804 (answers 500), 31805 (canary).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { normalizeRoute } from '../../crds/normalize.ts';
import { translate } from '../../translate/translate.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { until } from '../../../e2e/harness/http.ts';
import { TestNet } from './testnet.test-helpers.ts';
import { capturingLogger, liveNginx, sendTo, startLive, stopLive } from './live.test-helpers.ts';
import { DEFAULT_BUCKETS, DEFAULT_CONST_LABELS, requestMetrics, stubStatusMetrics, type RequestMetricsOptions } from '../compat-metrics.ts';

const LISTEN = { httpPort: 31800, httpsPort: 31801, statusPort: 31802, address: '127.0.0.1' };
const net = new TestNet(248);
const { logger } = capturingLogger();
const { dynamic, nginx } = liveNginx('portico-metrics-', logger);
const METRICS = { undefinedHosts: false, buckets: DEFAULT_BUCKETS };
const RENDER: RequestMetricsOptions = { constLabels: { ...DEFAULT_CONST_LABELS, controller_pod: 'p0' }, perHost: true, statusClasses: false, exclude: new Set(), buckets: DEFAULT_BUCKETS };

function config() {
  const svcs = [['api', 31803], ['broken', 31804], ['api-v2', 31805]] as const;
  const m = modelOf({
    services: svcs.map(([n, p]) => svc(n, [{ port: 80, targetPort: p }])),
    slices: svcs.map(([n, p]) => slice(`${n}-1`, n, [{ port: p }], [{ ip: net.ip }])),
    ingresses: [
      ing('web', { rules: [rule('shop.example.com', [{ path: '/api', backend: svcRef('api', 80) }, { path: '/broken', backend: svcRef('broken', 80) }])] }),
      ing('web-canary', { rules: [rule('shop.example.com', [{ path: '/api', backend: svcRef('api-v2', 80) }])] }, {
        annotations: { 'nginx.ingress.kubernetes.io/canary': 'true', 'nginx.ingress.kubernetes.io/canary-by-header': 'x-canary' },
      }),
    ],
  });
  const rt = normalizeRoute({ apiVersion: 'portico.dev/v1alpha1', kind: 'Route', metadata: { name: 'store', namespace: 'default', uid: 'u-store', generation: 1, creationTimestamp: '2026-01-02T00:00:00Z' }, spec: { hosts: ['store.example.com'], rules: [{ matches: [{ path: { type: 'Prefix', value: '/v1' } }], backends: [{ service: { name: 'api', port: 80 } }] }] } } as KubeObject);
  assert.ok(rt.ok, JSON.stringify(rt));
  m.setCrd('Route', rt.record);
  return translate(m.snapshot(), { ...OPTS, listen: LISTEN, metrics: METRICS }).config;
}

before(async () => {
  net.up();
  await net.start('api', 31803, 'echo');
  await net.start('broken', 31804, 'status', { status: 500 });
  await net.start('api-v2', 31805, 'echo');
  await startLive(nginx, dynamic, config());
});
after(() => stopLive(nginx, dynamic, net));

type Sample = { metricName?: string; labels: Record<string, string>; value: number };
function find(ms: ReturnType<typeof requestMetrics>, name: string, want: Record<string, string>): Sample[] {
  const m = ms.find((x) => x.name === name);
  assert.ok(m, `${name} is exported`);
  return m.values.filter((v) => Object.entries(want).every(([k, w]) => v.labels[k] === w));
}

test('requests, statuses, canary, Route and unmatched paths are counted under ingress-nginx names and labels, exactly as sent', async () => {
  const sent: Promise<unknown>[] = [];
  for (let i = 0; i < 5; i++) sent.push(sendTo(LISTEN.httpPort, 'shop.example.com', `/api/item/${i}?q=${i}`).then((a) => assert.equal(a.status, 200)));
  for (let i = 0; i < 2; i++) sent.push(sendTo(LISTEN.httpPort, 'shop.example.com', '/api/x', { method: 'POST', body: 'hello', headers: { 'x-canary': 'always' } }).then((a) => assert.equal(a.status, 200)));
  for (let i = 0; i < 3; i++) sent.push(sendTo(LISTEN.httpPort, 'shop.example.com', '/broken').then((a) => assert.equal(a.status, 500)));
  for (let i = 0; i < 2; i++) sent.push(sendTo(LISTEN.httpPort, 'shop.example.com', `/nope-${i}`).then((a) => assert.equal(a.status, 404)));
  sent.push(sendTo(LISTEN.httpPort, 'store.example.com', '/v1/cart').then((a) => assert.equal(a.status, 200)));
  sent.push(sendTo(LISTEN.httpPort, 'unknown.example.org', '/').then((a) => assert.equal(a.status, 404)));
  sent.push(sendTo(LISTEN.httpPort, 'shop.example.com', '/api', { method: 'FOO' }));
  await Promise.all(sent);

  // The workers move their counts to shared memory once a second: wait (with a deadline) for the total.
  const total = (ms: ReturnType<typeof requestMetrics>) => ms.find((m) => m.name === 'nginx_ingress_controller_requests')!.values.reduce((a, v) => a + v.value, 0);
  const ms = await until('all 14 counted requests to reach shared memory', async () => {
    const r = requestMetrics(await dynamic.getText('/portico/metrics'), RENDER);
    return total(r) >= 14 && r;
  });
  assert.equal(total(ms), 14, 'the request for an unknown host is not counted (--metrics-per-undefined-host is off)');
  const R = 'nginx_ingress_controller_requests';
  const base = { namespace: 'default', ingress: 'web', host: 'shop.example.com', controller_class: 'portico.dev/ingress-controller', controller_pod: 'p0' };
  assert.deepEqual(find(ms, R, { ...base, path: '/api', method: 'GET', status: '200' }).map((v) => [v.labels.service, v.labels.canary, v.value]), [['api', '', 5]]);
  assert.deepEqual(find(ms, R, { ...base, path: '/api', method: 'POST' }).map((v) => [v.labels.status, v.labels.canary, v.value]), [['200', 'default-api-v2-80', 2]], 'canary traffic keeps the main Service and names the canary upstream');
  assert.deepEqual(find(ms, R, { ...base, path: '/broken' }).map((v) => [v.labels.status, v.labels.service, v.value]), [['500', 'broken', 3]]);
  assert.deepEqual(find(ms, R, { ...base, path: '/', service: '' }).map((v) => [v.labels.status, v.value]), [['404', 2]], 'unmatched paths of a known host count under its first object, path "/"');
  assert.deepEqual(find(ms, R, { ingress: 'store' }).map((v) => [v.labels.path, v.labels.host, v.labels.service, v.value]), [['/v1', 'store.example.com', 'api', 1]], 'a Route counts under its own name');
  assert.deepEqual(find(ms, R, { method: 'OTHER' }).map((v) => v.value), [1], 'a method outside the known list cannot mint a label value');
  assert.equal(find(ms, R, { host: 'unknown.example.org' }).length, 0);

  // Histograms: cumulative buckets ending at +Inf = _count, the count equal to the requests of the series.
  const H = 'nginx_ingress_controller_request_duration_seconds';
  const get = find(ms, H, { ...base, path: '/api', method: 'GET', status: '200' });
  const count = get.find((v) => v.metricName === `${H}_count`)?.value;
  assert.equal(count, 5);
  const buckets = get.filter((v) => v.metricName === `${H}_bucket`);
  assert.equal(buckets.length, DEFAULT_BUCKETS.time.length + 1);
  assert.equal(buckets.at(-1)?.labels.le, '+Inf');
  assert.equal(buckets.at(-1)?.value, 5);
  assert.ok(buckets.every((b, i) => i === 0 || b.value >= (buckets[i - 1] as Sample).value), 'buckets are cumulative');
  // Upstream timings: observed for proxied requests, not for the 404s nginx answered itself.
  const up = 'nginx_ingress_controller_response_duration_seconds';
  assert.equal(find(ms, up, { ...base, path: '/api', method: 'GET' }).find((v) => v.metricName === `${up}_count`)?.value, 5);
  assert.equal(find(ms, up, { ...base, path: '/', service: '' }).length, 0);
  const size = 'nginx_ingress_controller_request_size';
  const posted = find(ms, size, { ...base, method: 'POST' }).find((v) => v.metricName === `${size}_sum`)?.value ?? 0;
  assert.ok(posted > 2 * 'hello'.length, `request_size sums request line, headers and body (${posted})`);
  const sent2 = 'nginx_ingress_controller_response_size';
  assert.ok((find(ms, sent2, { ...base, path: '/broken' }).find((v) => v.metricName === `${sent2}_sum`)?.value ?? 0) > 0);

  // The flags that shape them: status classes and no host label, from the same counts.
  const classes = requestMetrics(await dynamic.getText('/portico/metrics'), { ...RENDER, statusClasses: true, perHost: false, exclude: new Set(['bytes_sent']) });
  assert.deepEqual(find(classes, R, { path: '/broken' }).map((v) => [v.labels.status, 'host' in v.labels]), [['5xx', false]]);
  assert.ok(!classes.some((m) => m.name === 'nginx_ingress_controller_bytes_sent'), '--exclude-socket-metrics drops the metric');

  // nginx's connection counters (stub_status) for the connection panels.
  const st = stubStatusMetrics(await dynamic.getText('/nginx_status'), RENDER.constLabels);
  const handled = st.find((m) => m.name === 'nginx_ingress_controller_nginx_process_requests_total')?.values[0]?.value ?? 0;
  assert.ok(handled >= 15, `stub_status counts the requests nginx handled (${handled})`);
});
