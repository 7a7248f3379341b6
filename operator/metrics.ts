// Prometheus metrics (prom-client) of the framework's parts: work queues, reconciles, informers, leader election,
// events and API requests. Each manager owns one registry so tests can run several in one process. Metric names
// start with the application's prefix ("<prefix>_workqueue_depth"); the application registers its own metrics
// in the same registry.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class Metrics {
  readonly registry = new Registry();
  readonly queueDepth: Gauge;
  readonly queueAdds: Counter;
  /** Keys added to any work queue since start, as a plain number (operator/memory.ts: no settle while work comes in). */
  queueAddCount = 0;
  readonly queueRetries: Counter;
  readonly queueLatency: Histogram;
  readonly reconcileDuration: Histogram;
  readonly reconcileTotal: Counter;
  readonly informerEvents: Counter;
  readonly informerRelists: Counter;
  readonly informerWatchRestarts: Counter;
  readonly leader: Gauge;
  readonly eventsEmitted: Counter;
  readonly eventsQueued: Gauge;
  readonly kubeRequests: Counter;
  readonly kubeRateLimiterWait: Histogram;

  /** The application's metric name prefix, without the trailing "_" (e.g. "myapp"). */
  readonly prefix: string;
  /** Families rendered at scrape time as exposition text, chunk by chunk (operator/exposition.ts), after the registry's. */
  private readonly texts: (() => AsyncIterable<string>)[] = [];

  constructor(opts: { prefix: string; defaultMetrics?: boolean }) {
    if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(opts.prefix)) throw new Error(`invalid metric name prefix ${JSON.stringify(opts.prefix)}`);
    this.prefix = opts.prefix;
    const p = `${opts.prefix}_`;
    const r = [this.registry];
    if (opts.defaultMetrics) collectDefaultMetrics({ register: this.registry, prefix: `${p}process_` });
    this.queueDepth = new Gauge({ name: `${p}workqueue_depth`, help: 'Keys waiting in a work queue', labelNames: ['name'], registers: r });
    this.queueAdds = new Counter({ name: `${p}workqueue_adds_total`, help: 'Keys added to a work queue', labelNames: ['name'], registers: r });
    this.queueRetries = new Counter({ name: `${p}workqueue_retries_total`, help: 'Keys re-queued after a failed reconcile', labelNames: ['name'], registers: r });
    this.queueLatency = new Histogram({
      name: `${p}workqueue_queue_duration_seconds`,
      help: 'Time a key waits in the queue before a worker takes it',
      labelNames: ['name'],
      buckets: [0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers: r,
    });
    this.reconcileDuration = new Histogram({
      name: `${p}reconcile_duration_seconds`,
      help: 'Time spent in one reconcile call',
      labelNames: ['controller'],
      buckets: [0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers: r,
    });
    this.reconcileTotal = new Counter({ name: `${p}reconcile_total`, help: 'Reconcile calls by result', labelNames: ['controller', 'result'], registers: r });
    this.informerEvents = new Counter({ name: `${p}informer_events_total`, help: 'Watch events received', labelNames: ['kind', 'type'], registers: r });
    this.informerRelists = new Counter({ name: `${p}informer_relists_total`, help: 'Full lists (start, 410 Gone)', labelNames: ['kind'], registers: r });
    this.informerWatchRestarts = new Counter({ name: `${p}informer_watch_restarts_total`, help: 'Watch connections re-opened, by cause', labelNames: ['kind', 'cause'], registers: r });
    this.leader = new Gauge({ name: `${p}leader`, help: '1 when this replica holds the leader lease', registers: r });
    this.eventsEmitted = new Counter({
      name: `${p}events_total`,
      help: 'Kubernetes Events recorded, by outcome: created, series (folded into an existing event), spam_filtered (per-object limit), queue_full (dropped: write queue full), shutdown (still queued at exit), failed (API refused)',
      labelNames: ['type', 'outcome'],
      registers: r,
    });
    this.eventsQueued = new Gauge({ name: `${p}events_queue_depth`, help: 'Event writes (creates and series updates) waiting to be sent', registers: r });
    this.kubeRequests = new Counter({ name: `${p}kube_requests_total`, help: 'API server requests by method and HTTP status ("error": no response)', labelNames: ['method', 'code'], registers: r });
    this.kubeRateLimiterWait = new Histogram({
      name: `${p}kube_rate_limiter_wait_seconds`,
      help: 'Time a request waited for the client-side rate limiter (--kube-api-qps / --kube-api-burst)',
      labelNames: ['method'],
      buckets: [0.001, 0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60],
      registers: r,
    });
  }

  /**
   * Adds families written as exposition text at each scrape, in chunks: for families with many series, which
   * prom-client would render as one string. Their names must not also be in the registry.
   */
  addText(source: () => AsyncIterable<string>): void {
    this.texts.push(source);
  }

  /** The whole exposition (the registry's families, then the text sources'), in pieces to write out one by one. */
  async *exposition(): AsyncGenerator<string> {
    yield await this.registry.metrics();
    for (const source of this.texts) {
      yield '\n';
      yield* source();
    }
  }
}
