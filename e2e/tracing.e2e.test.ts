// OpenTelemetry end to end through the real apiserver (ingress-nginx's enable-opentelemetry,
// opentelemetry-trust-incoming-span and opentelemetry-operation-name annotations, and the ConfigMap's otel-* /
// otlp-* keys): the annotations are accepted (no UnsupportedAnnotation), a traced Ingress's backend receives a
// traceparent naming Portico's span (the client's trace continued, or not when the Ingress does not trust it), an
// Ingress with enable-opentelemetry "false" passes the client's header through untouched, and the collector named by
// the ConfigMap (a documentation address nothing answers on) never delays a request. What the collector receives is
// asserted with a real OpenTelemetry Collector in reconcilers/nginx-driver/nginx/tracing.nginx.test.ts.
//
// Isolation as in global-access: an IngressClass, namespace and hosts of this run, Portico on its own ports
// (54580-54583).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, ensureCluster, ownIngressClass, uniqueNamespace } from './harness/cluster.ts';
import { addPod, deleteNamespace } from './harness/pods.ts';
import { request, until } from './harness/http.ts';
import { startPortico, type RunningPortico } from './harness/portico.ts';
import { eventsAbout } from './harness/objects.ts';

let p: RunningPortico;
let ns: string;
const RUN = Date.now().toString(36);
const H = (name: string) => `${name}.otel${RUN}.test`;
const N = 'nginx.ingress.kubernetes.io/';
let CLASS = '';
let removeClass: (() => Promise<void>) | undefined;
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';
const CLIENT_TP = `00-${TRACE}-${SPAN}-01`;
const ingress = (name: string, host: string, annotations: Record<string, string> = {}) =>
  admin().request('POST', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, {
    body: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, annotations }, spec: { ingressClassName: CLASS, rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'echo', port: { number: 80 } } } }] } }] } },
  });
const upstreamTraceparent = async (host: string, headers: Record<string, string> = {}) => {
  const r = await request(p.httpPort, host, '/', { headers });
  assert.equal(r.status, 200);
  return (JSON.parse(r.body) as { headers: Record<string, string> }).headers.traceparent;
};

before(async () => {
  await ensureCluster();
  ns = await uniqueNamespace('otel');
  const cls = await ownIngressClass('otel');
  CLASS = cls.name;
  removeClass = cls.remove;
  // The collector: 192.0.2.1 (TEST-NET-1), where nothing answers: every export fails (and is counted), no request waits.
  await admin().request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'portico' }, data: { 'otlp-collector-host': '192.0.2.1', 'otlp-collector-port': '4317', 'otel-schedule-delay-millis': '200' } },
  });
  p = await startPortico(54580, [...cls.flags, '--configmap', `${ns}/portico`]);
  await until('portico ready', async () => (await request(p.healthPort, 'x', '/readyz')).status === 200);
  await admin().request('POST', `/api/v1/namespaces/${ns}/services`, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'echo' }, spec: { selector: { app: 'echo' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } } });
  await addPod(ns, 'echo-1', { labels: { app: 'echo' } });
  await ingress('traced', H('traced'), { [`${N}enable-opentelemetry`]: 'true', [`${N}opentelemetry-operation-name`]: 'traced-root' });
  await ingress('untrusted', H('untrusted'), { [`${N}enable-opentelemetry`]: 'true', [`${N}opentelemetry-trust-incoming-span`]: 'false' });
  await ingress('quiet', H('quiet'), { [`${N}enable-opentelemetry`]: 'false' });
  await until('served', async () => (await request(p.httpPort, H('traced'), '/')).status === 200 && (await request(p.httpPort, H('quiet'), '/')).status === 200 && (await request(p.httpPort, H('untrusted'), '/')).status === 200);
});

after(async () => {
  await p?.stop();
  if (ns) await deleteNamespace(ns);
  await removeClass?.();
});

describe('OpenTelemetry annotations', () => {
  test('the annotations are applied, not reported as unsupported', async () => {
    for (const name of ['traced', 'untrusted', 'quiet']) {
      const ev = await eventsAbout(ns, 'Ingress', name);
      assert.deepEqual(ev.filter((e) => e.reason === 'UnsupportedAnnotation').map((e) => e.note), [], name);
    }
  });

  test('a traced Ingress continues the client\'s trace and names Portico\'s span to the backend', async () => {
    await until('the traced route sends Portico\'s traceparent', async () => {
      const tp = await upstreamTraceparent(H('traced'), { traceparent: CLIENT_TP });
      return typeof tp === 'string' && tp.startsWith(`00-${TRACE}-`) && !tp.includes(SPAN);
    });
    const fresh = await upstreamTraceparent(H('traced'));
    assert.match(fresh ?? '', /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/, 'without a traceparent: a new trace');
  });

  test('opentelemetry-trust-incoming-span "false" starts a new trace; enable-opentelemetry "false" leaves the client\'s header alone', async () => {
    const tp = await upstreamTraceparent(H('untrusted'), { traceparent: CLIENT_TP });
    assert.match(tp ?? '', /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    assert.ok(!tp!.includes(TRACE), tp);
    assert.equal(await upstreamTraceparent(H('quiet'), { traceparent: CLIENT_TP }), CLIENT_TP);
  });

  test('a collector that does not answer never delays requests', async () => {
    let slowest = 0;
    for (let i = 0; i < 30; i++) {
      const t0 = performance.now();
      await upstreamTraceparent(H('traced'));
      slowest = Math.max(slowest, performance.now() - t0);
    }
    assert.ok(slowest < 1_000, `slowest request ${slowest} ms`);
  });
});
