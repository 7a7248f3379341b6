// Kubernetes Events on events.k8s.io/v1, visible in `kubectl get events`.
//   - eventTime is a MicroTime (microsecond precision), as the API requires;
//   - an event identical to a recent one (same object, type, reason, action, note) is not created again: the
//     first one gets a `series` whose count grows, patched at most once per `seriesFlushMs` so a hot loop
//     costs a handful of API calls, not one per occurrence. A caller that wants one Event per generation puts
//     the generation in the note;
//   - a per-object token bucket (spam filter) stops one misbehaving object from flooding the API;
//   - writes go through a bounded queue drained by a few writers behind their own token bucket, so a start-up
//     that records one event on each of 10,000 objects spreads them over minutes instead of opening thousands
//     of requests at once (which timed out and lost most of them). Warnings are sent before Normal events; when
//     the queue is full the oldest Normal write (else the oldest Warning) is dropped, counted and logged once.
// Writes are fire-and-forget: a failed event write is logged, never fails a reconcile.
import { randomBytes } from 'node:crypto';
import type { KubeClient } from './kube/client.ts';
import { TokenBucket } from './kube/ratelimit.ts';
import { resourcePath, FrameworkResources } from './kube/resources.ts';
import type { KubeObject } from './kube/object.ts';
import { describe } from './informer.ts';
import type { Logger } from './log.ts';
import type { Metrics } from './metrics.ts';

export type EventType = 'Normal' | 'Warning';

/** What the recorder needs from a client. A real KubeClient is re-derived without its own rate limit. */
export type EventSink = Pick<KubeClient, 'request'> & Partial<Pick<KubeClient, 'withRateLimit'>>;

export interface EventRecorderOptions {
  reportingController: string;
  reportingInstance: string;
  /** Occurrences within this window are folded into one series. */
  seriesWindowMs?: number;
  seriesFlushMs?: number;
  /** Per-object spam filter: distinct events one object may get at once, and the refill rate. */
  burst?: number;
  refillPerSecond?: number;
  /** Event writes (creates and series updates) per second, and how many may go at once. */
  qps?: number;
  writeBurst?: number;
  /** Writes sent concurrently. */
  concurrency?: number;
  /** Writes that may wait in the queue; beyond it the lowest-value oldest write is dropped. */
  maxQueued?: number;
  /** Monotonic clock in ms; tests pass Date.now so that mock timers drive it. */
  now?: () => number;
}

/**
 * Defaults. 10 writes/s with a burst of 100: a small start-up posts its events at once, a 10,000-object start-up
 * (one "Programmed" event each) drains in about 17 minutes without ever competing with status writes or lease
 * renewals (the recorder has its own budget, as controller-runtime gives its event broadcaster its own client).
 * 20,000 queued writes hold roughly 12 MB; that covers a Normal and a Warning for each of 10,000 objects.
 */
export const EVENT_DEFAULTS = {
  seriesWindowMs: 6 * 60_000,
  seriesFlushMs: 1_000,
  burst: 50,
  refillPerSecond: 0.1,
  qps: 10,
  writeBurst: 100,
  concurrency: 4,
  maxQueued: 20_000,
} as const;

/** One distinct event: created once, then its series count is patched. */
interface SeriesState {
  key: string;
  type: EventType;
  namespace: string;
  name: string;
  /** The Event to create; released once it exists (series live for minutes, thousands at a start-up). */
  body: Record<string, unknown> | undefined;
  count: number;
  /** Count the API server has (after the create or the last patch). */
  sentCount: number;
  lastSeen: number;
  /** queued: create waiting in the queue; sending: create in flight; created: exists; gone: failed or dropped. */
  phase: 'queued' | 'sending' | 'created' | 'gone';
  /** A patch is waiting in the queue. */
  patchQueued: boolean;
  flushTimer?: NodeJS.Timeout;
}

interface Job {
  op: 'create' | 'patch';
  s: SeriesState;
}

/** A FIFO with O(1) push and shift. */
class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;
  push(v: T): void {
    this.items.push(v);
  }
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const v = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return v;
  }
  get size(): number {
    return this.items.length - this.head;
  }
}

/** A Go MicroTime: RFC3339 with exactly six fractional digits, in UTC. */
export function microTime(epochMs: number = performance.timeOrigin + performance.now()): string {
  const whole = Math.floor(epochMs);
  const micros = Math.floor((epochMs - whole) * 1000);
  const iso = new Date(whole).toISOString(); // yyyy-mm-ddThh:mm:ss.mmmZ
  return `${iso.slice(0, 23)}${String(micros).padStart(3, '0')}Z`;
}

export class EventRecorder {
  private readonly o: Required<Omit<EventRecorderOptions, 'now'>>;
  private readonly client: EventSink;
  private readonly log: Logger;
  private readonly metrics: Metrics | undefined;
  private readonly now: () => number;
  private readonly series = new Map<string, SeriesState>();
  private readonly spam = new Map<string, TokenBucket>();
  private readonly writes: TokenBucket;
  /** Warnings first: a configuration error must not wait behind thousands of "Programmed" notices. */
  private readonly queues: Record<EventType, Fifo<Job>> = { Warning: new Fifo(), Normal: new Fifo() };
  private readonly pending = new Set<Promise<unknown>>();
  private readonly idleWaiters: (() => void)[] = [];
  private writers = 0;
  private inFlight = 0;
  private droppedInEpisode = 0;
  private stopped = false;
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(client: EventSink, o: EventRecorderOptions, log: Logger, metrics?: Metrics) {
    // The recorder paces its own writes; going through the shared client's bucket too would let a flood of
    // events delay status writes (and the other way round).
    this.client = client.withRateLimit?.(false) ?? client;
    const { now, ...rest } = o;
    this.o = { ...EVENT_DEFAULTS, ...rest };
    this.now = now ?? (() => performance.now());
    this.writes = new TokenBucket({ qps: this.o.qps, burst: this.o.writeBurst }, this.now);
    this.log = log.child({ component: 'events' });
    this.metrics = metrics;
  }

  /** Writes waiting to be sent. */
  queued(): number {
    return this.queues.Warning.size + this.queues.Normal.size;
  }

  /**
   * Records an event about `obj` (which must carry apiVersion and kind). `action` is what the controller did or tried
   * (e.g. "Reload", "Programming"), `reason` is the short CamelCase why, `note` the human message.
   */
  event(obj: KubeObject, type: EventType, reason: string, action: string, note: string): void {
    if (this.stopped) return;
    const regarding = {
      apiVersion: obj.apiVersion,
      kind: obj.kind,
      name: obj.metadata.name,
      namespace: obj.metadata.namespace,
      uid: obj.metadata.uid,
    };
    // The API requires events about cluster-scoped objects (IngressClass, Node) to live in "default".
    const namespace = obj.metadata.namespace || 'default';
    const trimmed = note.length > 1024 ? `${note.slice(0, 1021)}...` : note;
    const key = [regarding.kind, namespace, regarding.name, regarding.uid, type, reason, action, trimmed].join('\u0000');
    const now = this.now();
    const existing = this.series.get(key);
    if (existing && existing.phase !== 'gone' && now - existing.lastSeen < this.o.seriesWindowMs) {
      existing.count++;
      existing.lastSeen = now;
      // A create still waiting in the queue will carry the count itself.
      if (existing.phase !== 'queued') this.scheduleFlush(existing);
      this.metrics?.eventsEmitted.inc({ type, outcome: 'series' });
      return;
    }
    if (!this.takeSpam(`${regarding.kind}/${namespace}/${regarding.name}`)) {
      this.metrics?.eventsEmitted.inc({ type, outcome: 'spam_filtered' });
      this.log.debug('event dropped by the per-object rate limit', { reason, object: `${namespace}/${regarding.name}` });
      return;
    }
    const name = `${obj.metadata.name}.${randomBytes(8).toString('hex')}`.slice(0, 253);
    const body = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name, namespace },
      eventTime: microTime(),
      reportingController: this.o.reportingController,
      reportingInstance: this.o.reportingInstance,
      action,
      reason,
      type,
      note: trimmed,
      regarding,
    };
    const s: SeriesState = { key, type, namespace, name, body, count: 1, sentCount: 0, lastSeen: now, phase: 'queued', patchQueued: false };
    this.series.set(key, s);
    this.enqueue({ op: 'create', s });
    this.ensureSweep();
  }

  private enqueue(job: Job): void {
    if (this.queued() >= this.o.maxQueued) {
      // Full: drop the oldest Normal write; a Warning is only dropped for another Warning.
      const victimQueue = this.queues.Normal.size > 0 ? this.queues.Normal : job.s.type === 'Warning' ? this.queues.Warning : undefined;
      const victim = victimQueue?.shift() ?? job;
      this.drop(victim);
      if (victim === job) return;
    }
    this.queues[job.s.type].push(job);
    this.metrics?.eventsQueued.set(this.queued());
    this.startWriters();
  }

  private drop(job: Job): void {
    this.metrics?.eventsEmitted.inc({ type: job.s.type, outcome: 'queue_full' });
    if (job.op === 'create') {
      job.s.phase = 'gone';
      if (this.series.get(job.s.key) === job.s) this.series.delete(job.s.key);
    } else job.s.patchQueued = false;
    if (this.droppedInEpisode++ === 0) {
      this.log.warn('event queue full: dropping the oldest, lowest-value event writes until it drains', {
        maxQueued: this.o.maxQueued,
        qps: this.o.qps,
      });
    }
  }

  private scheduleFlush(s: SeriesState): void {
    if (s.flushTimer || s.patchQueued) return;
    s.flushTimer = setTimeout(() => {
      s.flushTimer = undefined;
      if (s.phase === 'sending') return this.scheduleFlush(s); // wait for the create's answer
      if (s.phase !== 'created' || s.count === s.sentCount || s.patchQueued) return;
      s.patchQueued = true;
      this.enqueue({ op: 'patch', s });
    }, this.o.seriesFlushMs);
  }

  private startWriters(): void {
    while (this.writers < this.o.concurrency && this.writers < this.queued()) {
      this.writers++;
      void this.writer();
    }
  }

  /** One writer: waits for a token, takes the most valuable queued write, sends it; exits when the queue is empty. */
  private async writer(): Promise<void> {
    try {
      while (this.queued() > 0) {
        await this.writes.wait();
        const job = this.queues.Warning.shift() ?? this.queues.Normal.shift();
        this.metrics?.eventsQueued.set(this.queued());
        if (!job) {
          this.writes.cancel();
          break;
        }
        this.inFlight++;
        try {
          await this.track(job.op === 'create' ? this.create(job.s) : this.patch(job.s));
        } finally {
          this.inFlight--;
        }
      }
    } finally {
      this.writers--;
      this.checkIdle();
    }
  }

  private checkIdle(): void {
    if (this.queued() > 0 || this.inFlight > 0 || this.writers > 0) return;
    if (this.droppedInEpisode > 0) {
      this.log.warn('event queue drained', { droppedWhileFull: this.droppedInEpisode });
      this.droppedInEpisode = 0;
    }
    for (const w of this.idleWaiters.splice(0)) w();
  }

  private async create(s: SeriesState): Promise<void> {
    if (s.phase !== 'queued' || !s.body) return;
    s.phase = 'sending';
    const count = s.count;
    // Occurrences that arrived while the create waited in the queue go into the create itself.
    const body = count > 1 ? { ...s.body, series: { count, lastObservedTime: microTime() } } : s.body;
    const type = s.type;
    try {
      await this.client.request('POST', resourcePath(FrameworkResources.Event, s.namespace), { body });
      s.phase = 'created';
      s.body = undefined;
      s.sentCount = count;
      this.metrics?.eventsEmitted.inc({ type, outcome: 'created' });
      if (s.count !== s.sentCount) this.scheduleFlush(s);
    } catch (e) {
      s.phase = 'gone';
      if (this.series.get(s.key) === s) this.series.delete(s.key);
      this.metrics?.eventsEmitted.inc({ type, outcome: 'failed' });
      this.log.warn('could not write event', { reason: body.reason, object: `${s.namespace}/${(body.regarding as { name: string }).name}`, error: describe(e) });
    }
  }

  private async patch(s: SeriesState): Promise<void> {
    s.patchQueued = false;
    if (s.phase !== 'created' || s.count === s.sentCount) return;
    const count = s.count;
    try {
      await this.client.request('PATCH', resourcePath(FrameworkResources.Event, s.namespace, s.name), {
        body: { series: { count, lastObservedTime: microTime() } },
        contentType: 'application/merge-patch+json',
      });
      s.sentCount = count;
    } catch (e) {
      this.log.warn('could not update event series', { event: `${s.namespace}/${s.name}`, error: describe(e) });
    }
  }

  private takeSpam(objectKey: string): boolean {
    let b = this.spam.get(objectKey);
    if (!b) this.spam.set(objectKey, (b = new TokenBucket({ qps: this.o.refillPerSecond, burst: this.o.burst }, this.now)));
    return b.tryTake();
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
    return p;
  }

  private ensureSweep(): void {
    if (this.sweepTimer) return;
    this.sweepTimer = setInterval(() => {
      const now = this.now();
      for (const [k, s] of this.series) {
        if (now - s.lastSeen > this.o.seriesWindowMs && !s.flushTimer && !s.patchQueued && s.phase !== 'queued' && s.phase !== 'sending') this.series.delete(k);
      }
      // A full bucket behaves like a new one: forget it, so the map only holds objects that were noisy lately.
      for (const [k, b] of this.spam) if (b.full()) this.spam.delete(k);
    }, 60_000);
    this.sweepTimer.unref();
  }

  /**
   * On shutdown: sends pending series updates and waits up to `timeoutMs` for the queue to drain (at the write
   * rate); what is still queued then is dropped and counted.
   */
  async flushAll(timeoutMs = 5_000): Promise<void> {
    for (const s of this.series.values()) {
      if (s.flushTimer) {
        clearTimeout(s.flushTimer);
        s.flushTimer = undefined;
        if (s.phase === 'created' && s.count !== s.sentCount && !s.patchQueued) {
          s.patchQueued = true;
          this.enqueue({ op: 'patch', s });
        }
      }
    }
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<void>((r) => {
      this.idleWaiters.push(r);
      this.checkIdle();
    });
    await Promise.race([idle, new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
    this.stopped = true;
    const left = this.queued();
    for (let j = this.queues.Warning.shift() ?? this.queues.Normal.shift(); j; j = this.queues.Warning.shift() ?? this.queues.Normal.shift()) {
      this.metrics?.eventsEmitted.inc({ type: j.s.type, outcome: 'shutdown' });
    }
    if (left > 0) this.log.warn('shutting down with event writes still queued; dropped', { dropped: left });
    await Promise.allSettled([...this.pending]);
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
  }
}
