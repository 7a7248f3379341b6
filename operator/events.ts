// Kubernetes Events on events.k8s.io/v1, visible in `kubectl get events`.
//   - eventTime is a MicroTime (microsecond precision), as the API requires;
//   - an event identical to a recent one (same object, type, reason, action, note) is not created again: the
//     first one gets a `series` whose count grows, patched at most once per `seriesFlushMs` so a hot loop
//     costs a handful of API calls, not one per occurrence;
//   - a per-object token bucket stops one misbehaving object from flooding the API with distinct events.
// Writes are fire-and-forget: a failed event write is logged, never fails a reconcile.
import { randomBytes } from 'node:crypto';
import type { KubeClient } from './kube/client.ts';
import { resourcePath, Resources } from './kube/resources.ts';
import type { KubeObject } from './kube/object.ts';
import { describe } from './informer.ts';
import type { Logger } from './log.ts';
import type { Metrics } from './metrics.ts';

export type EventType = 'Normal' | 'Warning';

export interface EventRecorderOptions {
  reportingController: string;
  reportingInstance: string;
  /** Kept for callers; events about cluster-scoped objects always go to "default", as the API requires. */
  defaultNamespace?: string;
  /** Occurrences within this window are folded into one series. */
  seriesWindowMs?: number;
  seriesFlushMs?: number;
  burst?: number;
  refillPerSecond?: number;
}

interface SeriesState {
  namespace: string;
  name: string;
  count: number;
  flushedCount: number;
  lastSeen: number;
  createdPromise: Promise<boolean>;
  flushTimer?: NodeJS.Timeout;
}

/** A Go MicroTime: RFC3339 with exactly six fractional digits, in UTC. */
export function microTime(epochMs: number = performance.timeOrigin + performance.now()): string {
  const whole = Math.floor(epochMs);
  const micros = Math.floor((epochMs - whole) * 1000);
  const iso = new Date(whole).toISOString(); // yyyy-mm-ddThh:mm:ss.mmmZ
  return `${iso.slice(0, 23)}${String(micros).padStart(3, '0')}Z`;
}

export class EventRecorder {
  private readonly o: Required<EventRecorderOptions>;
  private readonly client: KubeClient;
  private readonly log: Logger;
  private readonly metrics: Metrics | undefined;
  private readonly series = new Map<string, SeriesState>();
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly pending = new Set<Promise<unknown>>();
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(client: KubeClient, o: EventRecorderOptions, log: Logger, metrics?: Metrics) {
    this.client = client;
    this.o = { seriesWindowMs: 6 * 60_000, seriesFlushMs: 1_000, burst: 50, refillPerSecond: 0.1, defaultNamespace: 'default', ...o };
    this.log = log.child({ component: 'events' });
    this.metrics = metrics;
  }

  /**
   * Records an event about `obj` (which must carry apiVersion and kind). `action` is what Portico did or tried
   * (e.g. "Reload", "Programming"), `reason` is the short CamelCase why, `note` the human message.
   */
  event(obj: KubeObject, type: EventType, reason: string, action: string, note: string): void {
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
    const now = performance.now();
    const existing = this.series.get(key);
    if (existing && now - existing.lastSeen < this.o.seriesWindowMs) {
      existing.count++;
      existing.lastSeen = now;
      this.scheduleFlush(existing);
      this.metrics?.eventsEmitted.inc({ type, outcome: 'series' });
      return;
    }
    if (!this.take(`${regarding.kind}/${namespace}/${regarding.name}`, now)) {
      this.metrics?.eventsEmitted.inc({ type, outcome: 'dropped' });
      this.log.debug('event dropped by rate limit', { reason, object: `${namespace}/${regarding.name}` });
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
    const state: SeriesState = {
      namespace,
      name,
      count: 1,
      flushedCount: 1,
      lastSeen: now,
      createdPromise: this.track(
        this.client
          .request('POST', resourcePath(Resources.Event, namespace), { body })
          .then(() => {
            this.metrics?.eventsEmitted.inc({ type, outcome: 'created' });
            return true;
          })
          .catch((e: unknown) => {
            this.metrics?.eventsEmitted.inc({ type, outcome: 'failed' });
            this.log.warn('could not write event', { reason, object: `${namespace}/${obj.metadata.name}`, error: describe(e) });
            this.series.delete(key);
            return false;
          }),
      ),
    };
    this.series.set(key, state);
    this.ensureSweep();
  }

  private scheduleFlush(s: SeriesState): void {
    if (s.flushTimer) return;
    s.flushTimer = setTimeout(() => {
      s.flushTimer = undefined;
      void this.track(this.flush(s));
    }, this.o.seriesFlushMs);
  }

  private async flush(s: SeriesState): Promise<void> {
    if (!(await s.createdPromise) || s.count === s.flushedCount) return;
    const count = s.count;
    try {
      await this.client.request('PATCH', resourcePath(Resources.Event, s.namespace, s.name), {
        body: { series: { count, lastObservedTime: microTime() } },
        contentType: 'application/merge-patch+json',
      });
      s.flushedCount = count;
    } catch (e) {
      this.log.warn('could not update event series', { event: `${s.namespace}/${s.name}`, error: describe(e) });
    }
  }

  private take(objectKey: string, now: number): boolean {
    const b = this.buckets.get(objectKey) ?? { tokens: this.o.burst, at: now };
    b.tokens = Math.min(this.o.burst, b.tokens + ((now - b.at) / 1000) * this.o.refillPerSecond);
    b.at = now;
    this.buckets.set(objectKey, b);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
    return p;
  }

  private ensureSweep(): void {
    if (this.sweepTimer) return;
    this.sweepTimer = setInterval(() => {
      const now = performance.now();
      for (const [k, s] of this.series) if (now - s.lastSeen > this.o.seriesWindowMs && !s.flushTimer) this.series.delete(k);
      for (const [k, b] of this.buckets) if (now - b.at > 3_600_000) this.buckets.delete(k);
    }, 60_000);
    this.sweepTimer.unref();
  }

  /** Writes every pending series update; call on shutdown. */
  async flushAll(): Promise<void> {
    for (const s of this.series.values()) {
      if (s.flushTimer) {
        clearTimeout(s.flushTimer);
        s.flushTimer = undefined;
        void this.track(this.flush(s));
      }
    }
    await Promise.allSettled([...this.pending]);
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
  }
}
