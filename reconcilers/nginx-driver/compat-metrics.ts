// ingress-nginx's metrics (nginx_ingress_controller_*) under their exact names, types, labels and buckets, so a
// migrating cluster's dashboards, alerts and ServiceMonitors keep working. The per-request series are counted inside
// nginx (Portico's module, nginx-assets/modules/portico_metrics) and read from the configuration socket at each
// scrape; the others come from the driver (reloads, running certificates), nginx's stub_status and /proc. Portico's
// own portico_* metrics stay.
import { X509Certificate } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { familyHeader, familyText, labelPairs, TextChunks, valueText, type MetricShape, type Sample } from '../../operator/exposition.ts';
import type { Certificate } from '../config/types.ts';
import { servicesOf, type ModelSnapshot } from '../model/model.ts';

export const PREFIX = 'nginx_ingress_controller_';

/** The per-request histograms in the metrics module's slot order, with ingress-nginx's help texts and bucket sets. */
export const REQUEST_HISTOGRAMS = [
  { name: 'request_duration_seconds', set: 'time', help: 'The request processing time in milliseconds' },
  { name: 'response_duration_seconds', set: 'time', help: 'The time spent on receiving the response from the upstream server' },
  { name: 'header_duration_seconds', set: 'time', help: 'The time spent on receiving first header from the upstream server' },
  { name: 'connect_duration_seconds', set: 'time', help: 'The time spent on establishing a connection with the upstream server' },
  { name: 'request_size', set: 'length', help: 'The request length (including request line, header, and request body)' },
  { name: 'response_size', set: 'length', help: 'The response length (including request line, header, and request body)' },
  { name: 'bytes_sent', set: 'size', help: 'DEPRECATED The number of bytes sent to a client' },
] as const;

/** The names --exclude-socket-metrics accepts (with or without the nginx_ingress_controller_ prefix). */
export const SOCKET_METRICS: readonly string[] = ['requests', ...REQUEST_HISTOGRAMS.map((h) => h.name)];

export type BucketSets = { time: number[]; length: number[]; size: number[] };

/** ingress-nginx's defaults: prometheus.DefBuckets, LinearBuckets(10, 10, 10), ExponentialBuckets(10, 10, 7). */
export const DEFAULT_BUCKETS: BucketSets = {
  time: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  length: [10, 20, 30, 40, 50, 60, 70, 80, 90, 100],
  size: [10, 100, 1000, 10000, 100000, 1000000, 10000000],
};

export interface ConstLabels {
  controller_namespace: string;
  controller_class: string;
  controller_pod: string;
}

/** Labels when the controller is not told its pod (tests, local runs): ingress-nginx's fallbacks. */
export const DEFAULT_CONST_LABELS: ConstLabels = { controller_namespace: 'default', controller_class: 'portico.dev/ingress-controller', controller_pod: '' };

export interface RequestMetricsOptions {
  constLabels: ConstLabels;
  /** --metrics-per-host: the host label (the rule's host as written). */
  perHost: boolean;
  /** --report-status-classes: status "2xx" instead of "200". */
  statusClasses: boolean;
  /** --exclude-socket-metrics, without the prefix. */
  exclude: ReadonlySet<string>;
  buckets: BucketSets;
}

type Labels = Record<string, string>;

/** Slot of each histogram's sum (1-based, as the metrics module numbers them); the count follows, then the buckets. */
function layout(b: BucketSets): { offsets: number[]; width: number } {
  const offsets: number[] = [];
  let width = 1;
  for (const h of REQUEST_HISTOGRAMS) {
    offsets.push(width + 1);
    width += 2 + b[h.set].length + 1;
  }
  return { offsets, width };
}

/** A canary backend id "<namespace>_<service>_<port>" as ingress-nginx names the upstream: "<namespace>-<service>-<port>". */
function upstreamName(backendId: string): string {
  return backendId.replaceAll('_', '-');
}

/** The series of one dump: its labels (after --metrics-per-host and --report-status-classes) and summed slots. */
export interface Series {
  labels: Labels;
  /** Indexed by slot (1-based; 0 unused). */
  slots: Float64Array;
  /** The labels with the constant ones, as exposition text (made once per series, at rendering). */
  pairs?: string;
}

/**
 * Sums the dump of GET /portico/metrics ("labels\x1fstatus\x1fmethod\x1fslot\tvalue" lines), fed in pieces of any
 * size as they arrive, into series: one per label set after --metrics-per-host and --report-status-classes. A
 * series' lines share everything before the slot: that prefix is parsed once, not once per slot.
 */
export class DumpSums {
  readonly series = new Map<string, Series>();
  private readonly width: number;
  private readonly o: Pick<RequestMetricsOptions, 'perHost' | 'statusClasses'>;
  /** The part before the slot of a line → its series (null: malformed). */
  private readonly byPrefix = new Map<string, Series | null>();
  private partial = '';

  constructor(o: Pick<RequestMetricsOptions, 'perHost' | 'statusClasses' | 'buckets'>) {
    this.o = o;
    this.width = layout(o.buckets).width;
  }

  feed(text: string): void {
    const s = this.partial ? this.partial + text : text;
    let start = 0;
    for (let nl = s.indexOf('\n'); nl >= 0; nl = s.indexOf('\n', start)) {
      this.line(s.slice(start, nl));
      start = nl + 1;
    }
    this.partial = s.slice(start);
  }

  /** The series, once the whole dump was fed. */
  end(): Map<string, Series> {
    if (this.partial) this.line(this.partial);
    this.partial = '';
    return this.series;
  }

  private line(line: string): void {
    const tab = line.lastIndexOf('\t');
    if (tab < 0) return;
    const sep = line.lastIndexOf('\x1f', tab);
    if (sep < 0) return;
    const value = Number(line.slice(tab + 1));
    const slot = Number(line.slice(sep + 1, tab));
    if (!Number.isInteger(slot) || slot < 1 || slot > this.width || !Number.isFinite(value)) return;
    const prefix = line.slice(0, sep);
    let s = this.byPrefix.get(prefix);
    if (s === undefined) this.byPrefix.set(prefix, (s = this.seriesOf(prefix)));
    if (s) s.slots[slot] = (s.slots[slot] as number) + value;
  }

  private seriesOf(prefix: string): Series | null {
    const f = prefix.split('\x1f');
    if (f.length !== 7 && f.length !== 8) return null;
    const [namespace = '', ingress = '', service = '', path = '', host = ''] = f;
    const canary = f.length === 8 ? upstreamName(f[5] as string) : '';
    const rawStatus = f[f.length - 2] as string;
    const status = this.o.statusClasses && rawStatus ? `${rawStatus[0]}xx` : rawStatus;
    const labels: Labels = { status, method: f[f.length - 1] as string, path, namespace, ingress, service, canary };
    if (this.o.perHost) labels.host = host;
    const key = Object.values(labels).join('\x1f');
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = { labels, slots: new Float64Array(this.width + 1) }));
    return s;
  }
}

/** aggregate for a dump at hand (tests; the collector feeds DumpSums as the dump arrives). */
export function aggregate(dump: string, o: Pick<RequestMetricsOptions, 'perHost' | 'statusClasses' | 'buckets'>): Map<string, Series> {
  const sums = new DumpSums(o);
  sums.feed(dump);
  return sums.end();
}

/** The per-request metrics of one dump as samples (cumulative buckets, _sum, _count): for tests to look into. */
export function requestMetrics(dump: string, o: RequestMetricsOptions): MetricShape[] {
  const series = [...aggregate(dump, o).values()];
  const { offsets } = layout(o.buckets);
  const out: MetricShape[] = [];
  if (!o.exclude.has('requests')) {
    out.push({ name: `${PREFIX}requests`, help: REQUESTS_HELP, type: 'counter', aggregator: 'sum', values: series.map((s) => ({ labels: { ...s.labels, ...o.constLabels }, value: s.slots[1] as number })) });
  }
  REQUEST_HISTOGRAMS.forEach((h, i) => {
    if (o.exclude.has(h.name)) return;
    const name = `${PREFIX}${h.name}`;
    const bounds = o.buckets[h.set];
    const at = offsets[i] as number;
    const values: Sample[] = [];
    for (const s of series) {
      const count = s.slots[at + 1] as number;
      if (!count) continue;
      const labels = { ...s.labels, ...o.constLabels };
      let cum = 0;
      bounds.forEach((le, j) => {
        cum += s.slots[at + 2 + j] as number;
        values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: String(le) }, value: cum });
      });
      values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: count });
      values.push({ metricName: `${name}_sum`, labels, value: s.slots[at] as number });
      values.push({ metricName: `${name}_count`, labels, value: count });
    }
    out.push({ name, help: h.help, type: 'histogram', aggregator: 'sum', values });
  });
  return out;
}

/**
 * The same samples as exposition text, in chunks (what a scrape sends): each series' labels are escaped once, and
 * no sample object or line array is built — at 1,000 Ingresses this is tens of MB of text per scrape.
 */
export function* requestMetricsText(series: Iterable<Series>, o: RequestMetricsOptions): Generator<string> {
  const all = [...series];
  const pairs = (s: Series) => (s.pairs ??= labelPairs({ ...s.labels, ...o.constLabels }));
  const { offsets } = layout(o.buckets);
  const out = new TextChunks();
  let c: string | undefined;
  let first = true;
  const header = (name: string, help: string, type: string) => {
    const h = `${first ? '' : '\n'}${familyHeader(name, help, type)}`;
    first = false;
    return h;
  };
  if (!o.exclude.has('requests')) {
    const name = `${PREFIX}requests`;
    if ((c = out.add(header(name, REQUESTS_HELP, 'counter')))) yield c;
    for (const s of all) if ((c = out.add(`${name}{${pairs(s)}} ${valueText(s.slots[1] as number)}\n`))) yield c;
  }
  for (const [i, h] of REQUEST_HISTOGRAMS.entries()) {
    if (o.exclude.has(h.name)) continue;
    const name = `${PREFIX}${h.name}`;
    const les = o.buckets[h.set].map((le) => `,le="${String(le)}"} `);
    const at = offsets[i] as number;
    if ((c = out.add(header(name, h.help, 'histogram')))) yield c;
    for (const s of all) {
      const count = s.slots[at + 1] as number;
      if (!count) continue;
      const p = pairs(s);
      let lines = '';
      let cum = 0;
      for (let j = 0; j < les.length; j++) {
        cum += s.slots[at + 2 + j] as number;
        lines += `${name}_bucket{${p}${les[j] as string}${valueText(cum)}\n`;
      }
      lines += `${name}_bucket{${p},le="+Inf"} ${valueText(count)}\n${name}_sum{${p}} ${valueText(s.slots[at] as number)}\n${name}_count{${p}} ${valueText(count)}\n`;
      if ((c = out.add(lines))) yield c;
    }
  }
  const rest = out.take();
  if (rest) yield rest;
}

const REQUESTS_HELP = 'The total number of client requests';

/** nginx's stub_status page → ingress-nginx's nginx_process_connections / _connections_total / _requests_total. */
export function stubStatusMetrics(text: string, c: ConstLabels): MetricShape[] {
  const active = /Active connections:\s*(\d+)/.exec(text);
  const totals = /\n\s*(\d+)\s+(\d+)\s+(\d+)\s*\n/.exec(text);
  const rw = /Reading:\s*(\d+)\s+Writing:\s*(\d+)\s+Waiting:\s*(\d+)/.exec(text);
  if (!active || !totals || !rw) return [];
  const n = (s: string | undefined) => Number(s);
  return [
    {
      name: `${PREFIX}nginx_process_connections`,
      help: 'current number of client connections with state {active, reading, writing, waiting}',
      type: 'gauge',
      aggregator: 'sum',
      values: [
        { labels: { ...c, state: 'active' }, value: n(active[1]) },
        { labels: { ...c, state: 'reading' }, value: n(rw[1]) },
        { labels: { ...c, state: 'writing' }, value: n(rw[2]) },
        { labels: { ...c, state: 'waiting' }, value: n(rw[3]) },
      ],
    },
    {
      name: `${PREFIX}nginx_process_connections_total`,
      help: 'total number of connections with state {accepted, handled}',
      type: 'counter',
      aggregator: 'sum',
      values: [
        { labels: { ...c, state: 'accepted' }, value: n(totals[1]) },
        { labels: { ...c, state: 'handled' }, value: n(totals[2]) },
      ],
    },
    { name: `${PREFIX}nginx_process_requests_total`, help: 'total number of client requests', type: 'counter', aggregator: 'sum', values: [{ labels: { ...c }, value: n(totals[3]) }] },
  ];
}

const CLOCK_TICKS = 100;
const PAGE = 4096;

/** Processes of the nginx whose master is `masterPid` (the master and its workers), from /proc. */
export function nginxProcesses(masterPid: number, proc = '/proc'): number[] {
  const pids = [masterPid];
  for (const d of readdirSync(proc)) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`${proc}/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === masterPid) pids.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** ingress-nginx's process metrics over nginx's processes (cpu_seconds_total is system time, as ingress-nginx's). */
export function processMetrics(pids: number[], c: ConstLabels, proc = '/proc'): MetricShape[] {
  let cpu = 0;
  let rss = 0;
  let vsize = 0;
  let read = 0;
  let write = 0;
  let oldest = Infinity;
  let procs = 0;
  let bootTime = 0;
  try {
    bootTime = Number(/\nbtime (\d+)/.exec(readFileSync(`${proc}/stat`, 'utf8'))?.[1] ?? 0);
  } catch {
    bootTime = 0;
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`${proc}/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // Fields after the name, 0-based from state (field 3): stime = 15th field → index 12; starttime 22 → 19;
      // vsize 23 → 20; rss 24 → 21.
      cpu += Number(f[12]) / CLOCK_TICKS;
      oldest = Math.min(oldest, bootTime + Number(f[19]) / CLOCK_TICKS);
      vsize += Number(f[20]);
      rss += Number(f[21]) * PAGE;
      procs += 1;
      try {
        const io = readFileSync(`${proc}/${pid}/io`, 'utf8');
        read += Number(/read_bytes:\s*(\d+)/.exec(io)?.[1] ?? 0);
        write += Number(/write_bytes:\s*(\d+)/.exec(io)?.[1] ?? 0);
      } catch {
        // /proc/<pid>/io needs the same user or CAP_SYS_PTRACE
      }
    } catch {
      // gone meanwhile
    }
  }
  if (!procs) return [];
  const g = (name: string, help: string, value: number, type: 'gauge' | 'counter' = 'gauge'): MetricShape => ({ name: `${PREFIX}nginx_process_${name}`, help, type, aggregator: 'sum', values: [{ labels: { ...c }, value }] });
  return [
    g('num_procs', 'number of processes', procs),
    g('cpu_seconds_total', 'Cpu usage in seconds', cpu, 'counter'),
    g('read_bytes_total', 'number of bytes read', read, 'counter'),
    g('write_bytes_total', 'number of bytes written', write, 'counter'),
    g('resident_memory_bytes', 'number of bytes of memory in use', rss),
    g('virtual_memory_bytes', 'number of bytes of memory in use', vsize),
    g('oldest_start_time_seconds', 'start time in seconds since 1970/01/01', oldest),
  ];
}

const certInfo = new WeakMap<Certificate, { serial: string; issuerOrg: string; issuerCn: string; algorithm: string; serialAttr: string } | null>();
function parseCert(c: Certificate) {
  let info = certInfo.get(c);
  if (info !== undefined) return info;
  try {
    const x = new X509Certificate(c.cert);
    const issuer = Object.fromEntries(x.issuer.split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    const alg = x.publicKey.asymmetricKeyType;
    info = {
      serial: BigInt(`0x${x.serialNumber}`).toString(10),
      issuerOrg: issuer.O ?? '',
      issuerCn: issuer.CN ?? '',
      algorithm: alg === 'rsa' ? 'RSA' : alg === 'ec' ? 'ECDSA' : alg === 'ed25519' ? 'Ed25519' : (alg ?? '').toUpperCase(),
      serialAttr: issuer.serialNumber ?? '',
    };
  } catch {
    info = null;
  }
  certInfo.set(c, info);
  return info;
}

/**
 * ssl_expire_time_seconds and ssl_certificate_info of the running certificates (host → certificate), with
 * ingress-nginx's labels: namespace and secret_name of the Secret, class = the controller class, identifier =
 * "<issuer serialNumber>-<serial>". Expiry is the leader's to report (as ingress-nginx); the info every replica's.
 */
export function certificateMetrics(certs: Record<string, Certificate>, controllerClass: string, leader: boolean): MetricShape[] {
  const expire: Sample[] = [];
  const info: Sample[] = [];
  for (const [host, c] of Object.entries(certs)) {
    const [namespace = '', secretName = ''] = c.source.split('/');
    const x = parseCert(c);
    const identifier = x ? `${x.serialAttr}-${x.serial}` : '';
    const base = { namespace, class: controllerClass, host, secret_name: secretName, identifier };
    const t = Date.parse(c.notAfter) / 1000;
    if (leader && Number.isFinite(t) && t > 0) expire.push({ labels: base, value: t });
    if (x) info.push({ labels: { ...base, issuer_organization: x.issuerOrg, issuer_common_name: x.issuerCn, serial_number: x.serial, public_key_algorithm: x.algorithm }, value: 1 });
  }
  return [
    { name: `${PREFIX}ssl_expire_time_seconds`, help: 'Number of seconds since 1970 to the SSL Certificate expire.', type: 'gauge', aggregator: 'sum', values: expire },
    { name: `${PREFIX}ssl_certificate_info`, help: 'Hold all labels associated to a certificate', type: 'gauge', aggregator: 'sum', values: info },
  ];
}

/**
 * orphan_ingress{namespace, ingress, type}: per Ingress, 1 when one of its Services does not exist (no-service) or
 * has no ready endpoint (no-endpoint), else 0 — ingress-nginx's meaning (an ExternalName Service has endpoints).
 */
export function orphanMetrics(snap: Pick<ModelSnapshot, 'ingresses' | 'services' | 'slices'>, c: ConstLabels): MetricShape[] {
  const values: Sample[] = [];
  for (const ing of snap.ingresses.values()) {
    let noService = 0;
    let noEndpoint = 0;
    for (const key of servicesOf(ing)) {
      const svc = snap.services.get(key);
      if (!svc) noService = 1;
      else if (!svc.externalName && !(snap.slices.get(key) ?? []).some((sl) => sl.endpoints.some((e) => e.ready))) noEndpoint = 1;
    }
    const l = { ...c, namespace: ing.namespace, ingress: ing.name };
    values.push({ labels: { ...l, type: 'no-service' }, value: noService }, { labels: { ...l, type: 'no-endpoint' }, value: noEndpoint });
  }
  return [{ name: `${PREFIX}orphan_ingress`, help: 'Gauge reporting status of ingress orphanity, 1 indicates orphaned ingress. \'namespace\' is the string used to identify namespace of ingress, \'ingress\' for ingress name and \'type\' for \'no-service\' or \'no-endpoint\' of orphanity', type: 'gauge', aggregator: 'sum', values }];
}

/** What the collector reads at scrape time. */
export interface CompatSources {
  /** GET /nginx_status over the configuration socket; null while nginx is not running. */
  text(path: '/nginx_status'): Promise<string> | null;
  /** GET /portico/metrics (the per-request dump) as it arrives, in pieces; null while nginx is not running. */
  stream(path: '/portico/metrics'): AsyncIterable<string> | null;
  masterPid(): number | null;
  certificates(): Record<string, Certificate>;
  isLeader(): boolean;
  /** The model, for orphan_ingress. */
  model?(): Pick<ModelSnapshot, 'ingresses' | 'services' | 'slices'>;
}

/** Where the scrape-time families go: Metrics.addText (operator/metrics.ts). */
export interface TextTarget {
  addText(source: () => AsyncIterable<string>): void;
}

/** The dump summed as it arrives (a dump that cannot be read, or breaks off, counts as empty: no partial sums). */
async function readDump(src: CompatSources, o: RequestMetricsOptions): Promise<Iterable<Series>> {
  const pieces = src.stream('/portico/metrics');
  if (!pieces) return [];
  const sums = new DumpSums(o);
  try {
    for await (const piece of pieces) sums.feed(piece);
  } catch {
    return [];
  }
  return sums.end().values();
}

/**
 * The scrape-time families, written at each scrape as exposition text in chunks (never one string: the per-request
 * series are tens of MB of text at 1,000 Ingresses): one read of nginx per scrape.
 */
export function registerCompatMetrics(target: TextTarget, o: RequestMetricsOptions & { enabled: boolean }, src: CompatSources): void {
  const names = [
    ...COMPAT_METRICS.filter((r) => r.name.startsWith('nginx_process_')).map((r) => `${PREFIX}${r.name}`),
    `${PREFIX}ssl_expire_time_seconds`,
    `${PREFIX}ssl_certificate_info`,
    ...(src.model ? [`${PREFIX}orphan_ingress`] : []),
  ];
  target.addText(async function* () {
    const [series, status] = await Promise.all([o.enabled ? readDump(src, o) : null, src.text('/nginx_status')?.catch(() => null)]);
    if (series) {
      yield* requestMetricsText(series, o);
      yield '\n';
    }
    const small: MetricShape[] = [];
    if (status) small.push(...stubStatusMetrics(status, o.constLabels));
    const pid = src.masterPid();
    if (pid) small.push(...processMetrics(nginxProcesses(pid), o.constLabels));
    small.push(...certificateMetrics(src.certificates(), o.constLabels.controller_class, src.isLeader()));
    const snap = src.model?.();
    if (snap) small.push(...orphanMetrics(snap, o.constLabels));
    // Every family is announced, with no samples while its source has none (nginx not running...).
    for (const [i, name] of names.entries()) {
      const row = COMPAT_METRICS.find((r) => `${PREFIX}${r.name}` === name);
      if (i) yield '\n';
      yield* familyText(small.find((m) => m.name === name) ?? { name, help: row?.help ?? name, type: row?.type ?? 'gauge', aggregator: 'sum', values: [] });
    }
  });
}

const REQ = 'status, method, path, namespace, ingress, service, canary, host';
const CONST = 'controller_namespace, controller_class, controller_pod';
/** Every ingress-nginx metric Portico serves: the reference table (docs/reference/metrics.md is generated from it). */
export const COMPAT_METRICS: readonly { name: string; type: 'counter' | 'gauge' | 'histogram'; labels: string; help: string; source: string }[] = [
  { name: 'requests', type: 'counter', labels: REQ, help: 'The total number of client requests', source: 'nginx log phase (Portico\'s metrics module), per route' },
  ...REQUEST_HISTOGRAMS.map((h) => ({ name: h.name, type: 'histogram' as const, labels: REQ, help: h.help, source: `nginx log phase; --${h.set}-buckets` })),
  { name: 'nginx_process_connections', type: 'gauge', labels: 'state', help: 'current number of client connections with state {active, reading, writing, waiting}', source: 'nginx stub_status' },
  { name: 'nginx_process_connections_total', type: 'counter', labels: 'state', help: 'total number of connections with state {accepted, handled}', source: 'nginx stub_status' },
  { name: 'nginx_process_requests_total', type: 'counter', labels: '', help: 'total number of client requests', source: 'nginx stub_status' },
  { name: 'nginx_process_num_procs', type: 'gauge', labels: '', help: 'number of processes', source: '/proc (nginx master and workers)' },
  { name: 'nginx_process_cpu_seconds_total', type: 'counter', labels: '', help: 'Cpu usage in seconds', source: '/proc: system time, as ingress-nginx' },
  { name: 'nginx_process_read_bytes_total', type: 'counter', labels: '', help: 'number of bytes read', source: '/proc/<pid>/io' },
  { name: 'nginx_process_write_bytes_total', type: 'counter', labels: '', help: 'number of bytes written', source: '/proc/<pid>/io' },
  { name: 'nginx_process_resident_memory_bytes', type: 'gauge', labels: '', help: 'number of bytes of memory in use', source: '/proc' },
  { name: 'nginx_process_virtual_memory_bytes', type: 'gauge', labels: '', help: 'number of bytes of memory in use', source: '/proc' },
  { name: 'nginx_process_oldest_start_time_seconds', type: 'gauge', labels: '', help: 'start time in seconds since 1970/01/01', source: '/proc' },
  { name: 'ssl_expire_time_seconds', type: 'gauge', labels: 'namespace, class, host, secret_name, identifier (no controller_* labels)', help: 'Number of seconds since 1970 to the SSL Certificate expire.', source: 'running certificates; leader only' },
  { name: 'ssl_certificate_info', type: 'gauge', labels: 'namespace, class, host, secret_name, identifier, issuer_organization, issuer_common_name, serial_number, public_key_algorithm (no controller_* labels)', help: 'Hold all labels associated to a certificate', source: 'running certificates' },
  { name: 'success', type: 'counter', labels: '', help: 'Cumulative number of Ingress controller reload operations', source: 'nginx reloads (data-only updates are not reloads)' },
  { name: 'errors', type: 'counter', labels: '', help: 'Cumulative number of Ingress controller errors during reload operations', source: 'failed reloads (nginx -t or not confirmed)' },
  { name: 'config_hash', type: 'gauge', labels: '', help: 'Running configuration hash actually running', source: 'first 48 bits of the running nginx.conf checksum; 0 after a failed reload' },
  { name: 'config_last_reload_successful', type: 'gauge', labels: '', help: 'Whether the last configuration reload attempt was successful', source: 'reloads' },
  { name: 'config_last_reload_successful_timestamp_seconds', type: 'gauge', labels: '', help: 'Timestamp of the last successful configuration reload.', source: 'reloads' },
  { name: 'check_success', type: 'counter', labels: 'namespace, ingress', help: 'Cumulative number of Ingress controller syntax check operations', source: 'admission webhook: Ingresses admitted (with --webhook-port)' },
  { name: 'check_errors', type: 'counter', labels: 'namespace, ingress', help: 'Cumulative number of Ingress controller errors during syntax check operations', source: 'admission webhook: Ingresses denied' },
  ...(['tested_ingresses', 'tested_duration', 'render_ingresses', 'render_duration', 'roundtrip_duration'] as const).map((n) => ({
    name: `admission_${n}`,
    type: 'gauge' as const,
    labels: '',
    help: `ingress-nginx's admission_${n}`,
    source: n === 'roundtrip_duration' ? 'admission webhook: the last Ingress review, request to answer' : "admission webhook: the last Ingress review (one Ingress, translated with the others; there is no nginx.conf render or test to time)",
  })),
  { name: 'orphan_ingress', type: 'gauge', labels: 'namespace, ingress, type', help: 'Gauge reporting status of ingress orphanity', source: 'the model at scrape time: type no-service / no-endpoint, 1 = orphaned' },
  { name: 'build_info', type: 'gauge', labels: 'release, build, repository', help: "A metric with a constant '1' labeled with information about the build.", source: 'package version' },
  { name: 'leader_election_status', type: 'gauge', labels: 'name', help: "Gauge reporting status of the leader election, 0 indicates follower, 1 indicates leader. 'name' is the string used to identify the lease", source: '--election-id' },
];

/** The metric table of docs/reference/metrics.md. */
export function compatMetricsMarkdown(): string {
  const rows = COMPAT_METRICS.map((m) => `| \`${PREFIX}${m.name}\` | ${m.type} | ${m.labels ? `${m.labels}${m.labels.includes('no controller_') ? '' : `, ${CONST}`}` : CONST} | ${m.source} |`);
  return ['| metric | type | labels | from |', '|---|---|---|---|', ...rows].join('\n');
}
