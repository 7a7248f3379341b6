// ingress-nginx's official Grafana dashboards, unchanged, against Portico and a real Prometheus (Debian's `prometheus`).
// Portico runs as in the other suites (own IngressClass, own ports); a Prometheus of this file scrapes its /metrics
// every second the way the Prometheus Operator does (target labels namespace, pod and kubernetes_pod_name; honor_labels
// false, so the metrics' own `namespace` becomes `exported_namespace`). Every query of both dashboards (panel targets,
// the reload annotation, the variable queries) is read from e2e/testdata/ingress-nginx-dashboards/, its variables
// substituted as Grafana does ("All" = `.*`, a picked value regex-escaped), and evaluated: each must return data,
// and the values that are exact must equal what this file sent.
// Ports: Portico 52480-52483, Prometheus 52490.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { admin, ensureCluster, ownIngressClass, uniqueNamespace } from './harness/cluster.ts';
import { addPod, deleteNamespace } from './harness/pods.ts';
import { request, tlsRequest, until, type Reply } from './harness/http.ts';
import { Pki } from './harness/pki.ts';
import { REPO_ROOT, startPortico, type RunningPortico } from './harness/portico.ts';

const BASE = 52480;
const PROM_PORT = 52490;
const POD = 'portico-dash-0';
const POD_NS = 'portico-system';
const RUN = Date.now().toString(36);
const SHOP = `shop.dash${RUN}.test`;
const STORE = `store.dash${RUN}.test`;
const SECURE = `secure.dash${RUN}.test`;
const A = 'nginx.ingress.kubernetes.io/';
const DASH_DIR = path.join(REPO_ROOT, 'e2e/testdata/ingress-nginx-dashboards');

let p: RunningPortico;
let ns = '';
let CLASS = '';
let CONTROLLER = '';
let removeClass: (() => Promise<void>) | undefined;
let prometheus: ChildProcess | undefined;
let promDir = '';

// ---- Prometheus ------------------------------------------------------------------------------------------------

type Sample = { metric: Record<string, string>; value: [number, string] };
type Vector = { resultType: string; result: Sample[] };

async function promApi<T>(p: string, params: Record<string, string>, method: 'GET' | 'POST' = 'POST'): Promise<T> {
  const body = new URLSearchParams(params);
  const url = `http://127.0.0.1:${PROM_PORT}${p}`;
  const r = await fetch(method === 'GET' ? `${url}?${body}` : url, method === 'GET' ? {} : { method, body });
  const j = (await r.json()) as { status: string; data: T; error?: string };
  if (j.status !== 'success') throw new Error(`Prometheus ${p} ${JSON.stringify(params)}: ${j.error}`);
  return j.data;
}
const query = async (q: string, time?: number): Promise<Sample[]> => {
  const d = await promApi<Vector>('/api/v1/query', { query: q, ...(time ? { time: String(time) } : {}) });
  assert.equal(d.resultType, 'vector', q);
  return d.result;
};
const scalarOf = async (q: string, time?: number): Promise<number> => {
  const r = await query(q, time);
  return r.length ? Number(r[0]?.value[1]) : NaN;
};
const byLabels = (r: Sample[], ...labels: string[]) => Object.fromEntries(r.map((s) => [labels.map((l) => s.metric[l] ?? '').join(' '), Number(s.value[1])]));

function startPrometheus(): void {
  promDir = mkdtempSync(path.join(tmpdir(), 'portico-prom-'));
  const cfg = path.join(promDir, 'prometheus.yml');
  // The Prometheus Operator's ServiceMonitor setup, written as static target labels.
  writeFileSync(cfg, [
    'global:',
    '  scrape_interval: 1s',
    '  scrape_timeout: 1s',
    '  evaluation_interval: 1s',
    'scrape_configs:',
    '  - job_name: portico',
    '    honor_labels: false',
    '    metrics_path: /metrics',
    '    static_configs:',
    `      - targets: ['127.0.0.1:${BASE + 3}']`,
    `        labels: { namespace: ${POD_NS}, pod: ${POD}, kubernetes_pod_name: ${POD} }`,
    '',
  ].join('\n'));
  prometheus = spawn('prometheus', [
    `--config.file=${cfg}`, `--storage.tsdb.path=${path.join(promDir, 'data')}`, `--web.listen-address=127.0.0.1:${PROM_PORT}`,
    '--storage.tsdb.retention.time=1h', '--log.level=warn',
  ], { stdio: ['ignore', 'ignore', process.env.E2E_PROM_LOG ? 'inherit' : 'ignore'] });
}

async function stopPrometheus(): Promise<void> {
  const c = prometheus;
  if (c && c.exitCode === null && c.signalCode === null) {
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    const t = setTimeout(() => c.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(t);
  }
  if (promDir) rmSync(promDir, { recursive: true, force: true });
}

// ---- Grafana's variable handling (see /work/research/dashboards.md §1.3) -----------------------------------------

/** A picked value as Grafana's Prometheus datasource writes it into a regex matcher: backslashes doubled twice, metacharacters prefixed with `\\`. */
function grafanaRegexEscape(v: string): string {
  return v.replace(/\\/g, '\\\\\\\\').replace(/[$^*{}[\]'+?.()|]/g, (c) => `\\\\${c}`);
}
function substitute(expr: string, vars: Record<string, string>): string {
  return expr.replace(/\$\{(\w+)\}|\$(\w+)/g, (all, a: string | undefined, b: string | undefined) => {
    const name = (a ?? b) as string;
    return name in vars ? (vars[name] as string) : all;
  });
}

interface Dashboard {
  title: string;
  panels: { id: number; title: string; targets?: { refId: string; expr: string }[] }[];
  annotations: { list: { name: string; expr?: string }[] };
  templating: { list: { name: string; type: string; query: string | { query: string } }[] };
}
const dashboards = ['nginx.json', 'request-handling-performance.json'].map((f) => ({ file: f, d: JSON.parse(readFileSync(path.join(DASH_DIR, f), 'utf8')) as Dashboard }));

/** Every expression of a dashboard: panel targets and annotations. */
function expressions(d: Dashboard): { where: string; panel: number; expr: string }[] {
  const out: { where: string; panel: number; expr: string }[] = [];
  for (const a of d.annotations.list) if (a.expr) out.push({ where: `annotation "${a.name}"`, panel: 0, expr: a.expr });
  for (const p of d.panels) for (const t of p.targets ?? []) out.push({ where: `panel ${p.id} "${p.title}" ${t.refId}`, panel: p.id, expr: t.expr });
  return out;
}

/** The options of a query variable (`label_values(selector, label)`), as Grafana lists them (label values API). */
async function variableValues(q: string, vars: Record<string, string>): Promise<string[]> {
  const m = /^\s*label_values\(([\s\S]*),\s*(\w+)\s*\)\s*$/.exec(q);
  assert.ok(m, `variable query is label_values(): ${q}`);
  const selector = substitute(m[1] as string, vars);
  return promApi<string[]>(`/api/v1/label/${m[2]}/values`, { 'match[]': selector, start: String(Date.now() / 1000 - 3600), end: String(Date.now() / 1000) }, 'GET');
}

// ---- Traffic ---------------------------------------------------------------------------------------------------

/** ingress, host and path: the labels its requests are counted under (path: the rule's path as written). */
interface Kind { ingress: string; host: string; path: string; send: () => Promise<{ status: number; pod?: string }>; status: number; pod?: string; n: number }
const http = (host: string, p: string, headers?: Record<string, string>) => async () => {
  const r: Reply = await request(BASE, host, p, { headers });
  return { status: r.status, pod: r.status === 200 ? (r.json().pod as string) : undefined };
};
const https = (p: string) => async () => {
  const r = await tlsRequest(BASE + 1, SECURE, { path: p });
  return { status: r.status, pod: r.status === 200 ? (JSON.parse(r.body) as { pod: string }).pod : undefined };
};
/** What this file sends after Prometheus is scraping: per kind, its Ingress (or Route), expected status and count. */
const KINDS: Kind[] = [
  { ingress: 'web', host: SHOP, path: '/api', send: http(SHOP, '/api/item'), status: 200, pod: 'api-1', n: 6 },
  { ingress: 'web', host: SHOP, path: '/api', send: http(SHOP, '/api/c', { 'x-canary': 'always' }), status: 200, pod: 'api-v2-1', n: 3 },
  { ingress: 'web', host: SHOP, path: '/broken', send: http(SHOP, '/broken/x'), status: 500, n: 4 },
  { ingress: 'web-extra', host: SHOP, path: '/extra', send: http(SHOP, '/extra/ok'), status: 200, pod: 'api-1', n: 2 },
  { ingress: 'web-extra', host: SHOP, path: '/extra', send: http(SHOP, '/extra/nf?status=404'), status: 404, n: 3 },
  { ingress: 'web-extra', host: SHOP, path: '/missing', send: http(SHOP, '/missing'), status: 503, n: 2 },
  { ingress: 'store', host: STORE, path: '/v1', send: http(STORE, '/v1/cart'), status: 200, pod: 'api-1', n: 5 },
  { ingress: 'store', host: STORE, path: '/v1', send: http(STORE, '/v1/nf?status=404'), status: 404, n: 1 },
  { ingress: 'secure', host: SECURE, path: '/', send: https('/s'), status: 200, pod: 'api-1', n: 2 },
  { ingress: 'secure', host: SECURE, path: '/', send: https('/s?status=503'), status: 503, n: 1 },
];
const isError = (s: number) => s >= 400;
const sentBy = (f: (k: Kind) => boolean) => KINDS.filter(f).reduce((a, k) => a + k.n, 0);
const INGRESSES = [...new Set(KINDS.map((k) => k.ingress))].sort();

/** Portico's own /metrics: the sum of nginx_ingress_controller_requests. */
async function porticoRequestTotal(): Promise<number> {
  const r = await request(BASE + 3, 'x', '/metrics');
  return r.body.split('\n').filter((l) => l.startsWith('nginx_ingress_controller_requests{')).reduce((a, l) => a + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

const ingress = (name: string, host: string, paths: { path: string; svc: string }[], annotations: Record<string, string> = {}, tls?: string) =>
  admin().request('POST', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, {
    body: {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name, annotations },
      spec: {
        ingressClassName: CLASS,
        ...(tls ? { tls: [{ hosts: [host], secretName: tls }] } : {}),
        rules: [{ host, http: { paths: paths.map((x) => ({ path: x.path, pathType: 'Prefix', backend: { service: { name: x.svc, port: { number: 80 } } } })) } }],
      },
    },
  });
const service = (name: string, app: string) =>
  admin().request('POST', `/api/v1/namespaces/${ns}/services`, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { selector: { app }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } } });

let base: Record<string, number> = {};
let baseByStatus: Record<string, number> = {};
let seriesBefore: string[] = [];
const SCRAPES = 'count_over_time(nginx_ingress_controller_config_hash[10m])';
const SERIES = 'group by (ingress, path, host, method, status, service, canary) (nginx_ingress_controller_requests)';

before(async () => {
  await ensureCluster();
  ns = await uniqueNamespace('dash');
  const cls = await ownIngressClass('dash');
  CLASS = cls.name;
  CONTROLLER = cls.controller;
  removeClass = cls.remove;
  // What the Deployment's downward API gives ingress-nginx (and Portico): its pod's name and namespace.
  process.env.POD_NAME = POD;
  process.env.POD_NAMESPACE = POD_NS;
  p = await startPortico(BASE, [...cls.flags, '--configmap', `${ns}/portico`]);
  await until('portico ready', async () => (await request(p.healthPort, 'x', '/readyz')).status === 200);

  for (const [svc, app] of [['api', 'api'], ['api-v2', 'api-v2'], ['broken', 'broken'], ['ghost', 'ghost']] as const) await service(svc, app);
  await addPod(ns, 'api-1', { labels: { app: 'api' } });
  await addPod(ns, 'api-v2-1', { labels: { app: 'api-v2' } });
  await addPod(ns, 'broken-1', { labels: { app: 'broken' }, status: 500 });
  // "ghost" has no pods: nginx answers 503 itself.
  const pki = new Pki().ca('ca').server('secure', 'ca', SECURE);
  await admin().request('POST', `/api/v1/namespaces/${ns}/secrets`, {
    body: { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name: 'secure-tls' }, data: { 'tls.crt': Buffer.from(pki.read('secure.crt')).toString('base64'), 'tls.key': Buffer.from(pki.read('secure.key')).toString('base64') } },
  });
  await ingress('web', SHOP, [{ path: '/api', svc: 'api' }, { path: '/broken', svc: 'broken' }]);
  await ingress('web-extra', SHOP, [{ path: '/extra', svc: 'api' }, { path: '/missing', svc: 'ghost' }]);
  await ingress('web-canary', SHOP, [{ path: '/api', svc: 'api-v2' }], { [`${A}canary`]: 'true', [`${A}canary-by-header`]: 'x-canary' });
  await ingress('secure', SECURE, [{ path: '/', svc: 'api' }], {}, 'secure-tls');
  await admin().request('POST', `/apis/portico.dev/v1alpha1/namespaces/${ns}/routes`, {
    body: { apiVersion: 'portico.dev/v1alpha1', kind: 'Route', metadata: { name: 'store' }, spec: { ingressClassName: CLASS, hosts: [STORE], rules: [{ matches: [{ path: { type: 'Prefix', value: '/v1' } }], backends: [{ service: { name: 'api', port: 80 } }] }] } },
  });

  // Every kind of request once, until it is answered as it will be: each series the measured traffic touches then
  // exists before Prometheus's first scrape, so rate() and increase() see all of that traffic.
  for (const k of KINDS) {
    await until(`${k.ingress}: ${k.status}${k.pod ? ` from ${k.pod}` : ''}`, async () => {
      const r = await k.send();
      return r.status === k.status && (!k.pod || r.pod === k.pod);
    }, 60_000, 200);
  }
  // nginx's workers move their counts to shared memory once a second: wait until /metrics stops changing.
  let last = -1;
  await until('per-request counts settled', async () => {
    const t = await porticoRequestTotal();
    const same = t === last && t > 0;
    last = t;
    return same;
  }, 20_000, 1500);

  startPrometheus();
  await until('Prometheus ready', async () => (await fetch(`http://127.0.0.1:${PROM_PORT}/-/ready`)).ok, 60_000, 200);
  // rate() extrapolates each series to the window's start unless that would take the counter below zero (then only
  // to its zero point): with first values of 1, the series keep the same extrapolation — and the success rates
  // their exact ratios — only if each series' increase stays below (samples − 1) / 1.1 times its first value. Six
  // samples before the traffic and eight after keep that true for this file's increases (at most 6 per series).
  await until('Prometheus has scraped Portico six times', async () => (await scalarOf(SCRAPES)) >= 6, 30_000, 250);
  const total = await porticoRequestTotal();
  assert.equal(await scalarOf('sum(nginx_ingress_controller_requests)'), total, 'Prometheus sees what Portico serves');
  const t0 = Date.now() / 1000;
  base = byLabels(await query('sum by (ingress) (nginx_ingress_controller_requests)', t0), 'ingress');
  baseByStatus = byLabels(await query('sum by (ingress, status) (nginx_ingress_controller_requests)', t0), 'ingress', 'status');
  seriesBefore = (await query(SERIES, t0)).map((s) => JSON.stringify(s.metric)).sort();

  // The measured traffic.
  for (const k of KINDS) for (let i = 0; i < k.n; i++) assert.equal((await k.send()).status, k.status, k.ingress);
  const sent = sentBy(() => true);
  const want = Object.values(base).reduce((a, v) => a + v, 0) + sent;
  await until(`Prometheus to count all ${sent} requests`, async () => (await scalarOf('sum(nginx_ingress_controller_requests)')) === want, 30_000, 250);
  // More scrapes: irate/rate need two samples after the last change; see above for why eight.
  const scrapes = await scalarOf(SCRAPES);
  await until('eight more scrapes', async () => (await scalarOf(SCRAPES)) >= scrapes + 8, 30_000, 250);
  await until('certificate expiry exported (leader)', async () => (await query('nginx_ingress_controller_ssl_expire_time_seconds')).length > 0, 30_000, 250);
});

after(async () => {
  await stopPrometheus();
  await p?.stop();
  if (ns) await deleteNamespace(ns);
  await removeClass?.();
  delete process.env.POD_NAME;
  delete process.env.POD_NAMESPACE;
});

test('the measured traffic added no series: every label set existed before Prometheus started (test precondition)', async () => {
  assert.deepEqual((await query(SERIES)).map((s) => JSON.stringify(s.metric)).sort(), seriesBefore);
});

test('nginx_ingress_controller_requests per Ingress/Route and per status, read from Prometheus, grew by exactly what was sent', async () => {
  const now = byLabels(await query(`sum by (ingress) (nginx_ingress_controller_requests{exported_namespace="${ns}"})`), 'ingress');
  const got = Object.fromEntries(INGRESSES.map((i) => [i, (now[i] ?? 0) - (base[i] ?? 0)]));
  assert.deepEqual(got, Object.fromEntries(INGRESSES.map((i) => [i, sentBy((k) => k.ingress === i)])));
  const nowS = byLabels(await query(`sum by (ingress, status) (nginx_ingress_controller_requests{exported_namespace="${ns}"})`), 'ingress', 'status');
  for (const k of KINDS) {
    const key = `${k.ingress} ${k.status}`;
    assert.equal((nowS[key] ?? 0) - (baseByStatus[key] ?? 0), sentBy((x) => x.ingress === k.ingress && x.status === k.status), key);
  }
  const canary = byLabels(await query(`sum by (canary) (nginx_ingress_controller_requests{ingress="web",canary!=""})`), 'canary');
  assert.deepEqual(Object.keys(canary), [`${ns}-api-v2-80`], 'canary traffic names the canary upstream');
});

test('the variable queries list this controller, its class, its pod, the Ingress namespace and the Ingresses/Route', async () => {
  const [nginx, rhp] = dashboards.map((x) => x.d) as [Dashboard, Dashboard];
  const vars: Record<string, string> = {};
  const want: Record<string, string[]> = { namespace: [POD_NS], controller_class: [CONTROLLER], controller: [POD], exported_namespace: [ns], ingress: INGRESSES };
  for (const all of [true, false]) {
    for (const v of nginx.templating.list.filter((x) => x.type === 'query')) {
      const q = typeof v.query === 'string' ? v.query : v.query.query;
      const values = (await variableValues(q, vars)).sort();
      assert.deepEqual(values, want[v.name], `nginx.json variable ${v.name} (${all ? 'All' : 'picked'} above it)`);
      vars[v.name] = all ? '.*' : grafanaRegexEscape(values[0] as string);
    }
  }
  const v = rhp.templating.list.find((x) => x.type === 'query')!;
  assert.deepEqual((await variableValues(typeof v.query === 'string' ? v.query : v.query.query, {})).sort(), INGRESSES);
});

/** Queries that must be empty, and why. */
function expectEmpty(file: string, panel: number, vars: Record<string, string>): string | undefined {
  if (file === 'nginx.json' && panel === 83) return 'Last Config Failed counts pods whose last reload failed: none';
  if (file === 'nginx.json' && panel === 85 && vars.ingress !== '.*') return 'dashboard: ssl_expire_time_seconds has no ingress label (ingress-nginx neither), so a picked Ingress empties the certificate panel';
  return undefined;
}

for (const { file, d } of dashboards) {
  test(`${file}: every query returns data, with every variable at All and with each Ingress picked`, async () => {
    const all: Record<string, string> = { namespace: '.*', controller_class: '.*', controller: '.*', exported_namespace: '.*', ingress: '.*' };
    const picked = { namespace: grafanaRegexEscape(POD_NS), controller_class: grafanaRegexEscape(CONTROLLER), controller: grafanaRegexEscape(POD), exported_namespace: grafanaRegexEscape(ns) };
    const variants: { name: string; vars: Record<string, string> }[] = [
      { name: 'All', vars: all },
      { name: 'controller picked, Ingress All', vars: { ...picked, ingress: '.*' } },
      ...INGRESSES.map((i) => ({ name: `Ingress ${i} picked (others All)`, vars: { ...all, ingress: grafanaRegexEscape(i) } })),
      ...INGRESSES.map((i) => ({ name: `everything picked, Ingress ${i}`, vars: { ...picked, ingress: grafanaRegexEscape(i) } })),
    ];
    const problems: string[] = [];
    let ran = 0;
    for (const e of expressions(d)) {
      for (const v of variants) {
        const q = substitute(e.expr, v.vars);
        if (/\$\w/.test(q)) problems.push(`${e.where} [${v.name}]: unsubstituted variable in ${q}`);
        let r: Sample[];
        try {
          r = await query(q);
        } catch (err) {
          problems.push(`${e.where} [${v.name}]: ${String(err)}`);
          continue;
        }
        ran++;
        const empty = expectEmpty(file, e.panel, v.vars);
        if (empty) {
          if (r.length) problems.push(`${e.where} [${v.name}]: expected no data (${empty}), got ${JSON.stringify(r)}`);
        } else if (!r.length) problems.push(`${e.where} [${v.name}]: no data\n    ${q.replace(/\s+/g, ' ')}`);
        else if (!r.some((s) => Number.isFinite(Number(s.value[1])))) problems.push(`${e.where} [${v.name}]: only NaN/Inf ${JSON.stringify(r)}`);
      }
    }
    assert.deepEqual(problems, [], `${problems.length} of ${ran} queries failed:\n${problems.join('\n')}`);
  });
}

/** One panel target of a dashboard, variables substituted. */
function target(file: string, panel: number, refId: string, vars: Record<string, string>): string {
  const d = dashboards.find((x) => x.file === file)!.d;
  const t = d.panels.find((p) => p.id === panel)?.targets?.find((x) => x.refId === refId);
  assert.ok(t, `${file} panel ${panel} ${refId}`);
  return substitute(t.expr, vars);
}
const ALL = { namespace: '.*', controller_class: '.*', controller: '.*', exported_namespace: '.*', ingress: '.*' };
const close = (a: number, b: number, msg: string) => assert.ok(Math.abs(a - b) < 1e-9, `${msg}: ${a} ≠ ${b}`);

test('exact values: success rates (controller and per Ingress) and error share by path equal the traffic sent', async () => {
  close(await scalarOf(target('nginx.json', 21, 'A', ALL)), sentBy((k) => !isError(k.status)) / sentBy(() => true), 'Controller Success Rate');
  for (const i of INGRESSES) {
    const r = byLabels(await query(target('nginx.json', 87, 'A', { ...ALL, ingress: grafanaRegexEscape(i) })), 'ingress');
    assert.deepEqual(Object.keys(r), [i]);
    close(r[i] as number, sentBy((k) => k.ingress === i && !isError(k.status)) / sentBy((k) => k.ingress === i), `Ingress Success Rate ${i}`);
  }
  // Response Error Rate by Method and Path: per (method, host, path), the 4xx/5xx share; paths without errors absent.
  const errShare = byLabels(await query(target('request-handling-performance.json', 100, 'A', ALL)), 'method', 'host', 'path');
  const groups = [...new Set(KINDS.map((k) => `GET ${k.host} ${k.path}`))];
  const share = (g: string) => sentBy((k) => `GET ${k.host} ${k.path}` === g && isError(k.status)) / sentBy((k) => `GET ${k.host} ${k.path}` === g);
  assert.deepEqual(Object.keys(errShare).sort(), groups.filter((g) => share(g) > 0).sort());
  for (const g of groups.filter((x) => share(x) > 0)) close(errShare[g] as number, share(g), `error share of ${g}`);
  const errRate = byLabels(await query(target('request-handling-performance.json', 101, 'A', ALL)), 'host', 'path', 'status');
  assert.deepEqual(Object.keys(errRate).filter((k) => (errRate[k] as number) > 0).sort(), [...new Set(KINDS.filter((k) => isError(k.status)).map((k) => `${k.host} ${k.path} ${k.status}`))].sort());
});

test('exact values: no failed reload, reload annotation tagged with the class, certificate expiry of the TLS host, heatmap buckets', async () => {
  assert.deepEqual(await query(target('nginx.json', 83, 'A', ALL)), [], 'Last Config Failed: no pod counted');
  assert.equal(await scalarOf(`nginx_ingress_controller_config_last_reload_successful{controller_pod="${POD}"}`), 1);
  const ann = dashboards[0]!.d.annotations.list.find((a) => a.expr)!;
  assert.deepEqual((await query(substitute(ann.expr!, ALL))).map((s) => s.metric.controller_class), [CONTROLLER]);
  const cert = byLabels(await query(target('nginx.json', 85, 'A', { ...ALL, controller: grafanaRegexEscape(POD), namespace: grafanaRegexEscape(POD_NS) })), 'host');
  assert.deepEqual(Object.keys(cert), [SECURE]);
  const left = cert[SECURE] as number;
  assert.ok(left > 86_400 && left <= 2 * 86_400 + 60, `certificate valid two days: ${left}s left`);
  const le = (await query(target('nginx.json', 89, 'A', ALL))).map((s) => s.metric.le).sort((a, b) => (a === '+Inf' ? Infinity : Number(a)) - (b === '+Inf' ? Infinity : Number(b)));
  assert.deepEqual(le, ['0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf']);
});
