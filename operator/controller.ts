// A controller: a work queue of keys, N workers calling a level-based Reconciler, and event handlers that map
// changes of any watched kind to keys of the reconciled kind.
import type { Informer } from './informer.ts';
import { describe } from './informer.ts';
import { keyOf, type KubeObject } from './kube/object.ts';
import type { Logger } from './log.ts';
import type { Metrics } from './metrics.ts';
import { RateLimiter, WorkQueue, type RateLimiterOptions, DEFAULT_RATE_LIMIT } from './workqueue.ts';

export interface ReconcileContext {
  signal: AbortSignal;
  log: Logger;
}

export interface ReconcileResult {
  /** Reconcile this key again after the given delay even though it succeeded (e.g. a certificate expiry). */
  requeueAfterMs?: number;
}

export interface Reconciler {
  reconcile(ctx: ReconcileContext, key: string): Promise<ReconcileResult | void>;
}

export interface ControllerOptions {
  name: string;
  reconciler: Reconciler;
  workers?: number;
  rateLimit?: RateLimiterOptions;
}

export class Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  private readonly reconciler: Reconciler;
  private readonly workers: number;
  private readonly log: Logger;
  private readonly metrics: Metrics | undefined;

  constructor(opts: ControllerOptions, log: Logger, metrics?: Metrics) {
    this.name = opts.name;
    this.reconciler = opts.reconciler;
    this.workers = opts.workers ?? 1;
    this.log = log.child({ controller: opts.name });
    this.metrics = metrics;
    this.queue = new WorkQueue(opts.name, metrics, new RateLimiter(opts.rateLimit ?? DEFAULT_RATE_LIMIT));
  }

  enqueue(key: string): void {
    this.queue.add(key);
  }

  private initial: { keys: Set<string>; resolve: () => void } | undefined;
  /**
   * Resolves once every key queued right now (at start: every object of the initial list) has been reconciled
   * once, successfully or not — Contour's "initial DAG built" for one kind. A failed key is retried with backoff
   * as usual; readiness does not wait for it to succeed.
   */
  initialReconciled(): Promise<void> {
    const keys = new Set(this.queue.pendingKeys());
    if (!keys.size) return Promise.resolve();
    return new Promise((resolve) => {
      this.initial = { keys, resolve };
    });
  }

  /**
   * Watches an informer: every add/update/delete enqueues the keys `map` returns (default: the object's own key).
   * For updates both the old and the new object are mapped, so a reference that was removed is reconciled too.
   */
  watch<T extends KubeObject>(informer: Informer<T>, map: (obj: T) => string[] = (o) => [keyOf(o)]): this {
    const enqueue = (obj: T) => {
      for (const k of map(obj)) this.queue.add(k);
    };
    informer.addHandler({
      add: enqueue,
      update: (o, n) => {
        enqueue(o);
        enqueue(n);
      },
      delete: enqueue,
    });
    return this;
  }

  /** Runs the workers until the signal aborts; resolves once every in-flight reconcile has finished. */
  async run(signal: AbortSignal): Promise<void> {
    const stop = () => this.queue.shutDown();
    signal.addEventListener('abort', stop, { once: true });
    const workers = Array.from({ length: this.workers }, () => this.worker(signal));
    await Promise.all(workers);
    signal.removeEventListener('abort', stop);
  }

  private async worker(signal: AbortSignal): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      await this.processOne(key, signal);
    }
  }

  private async processOne(key: string, signal: AbortSignal): Promise<void> {
    const end = this.metrics?.reconcileDuration.startTimer({ controller: this.name });
    try {
      const res = await this.reconciler.reconcile({ signal, log: this.log.child({ key }) }, key);
      this.queue.forget(key);
      this.metrics?.reconcileTotal.inc({ controller: this.name, result: res?.requeueAfterMs ? 'requeue_after' : 'success' });
      if (res?.requeueAfterMs) this.queue.addAfter(key, res.requeueAfterMs);
    } catch (e) {
      const delay = this.queue.addRateLimited(key);
      this.metrics?.reconcileTotal.inc({ controller: this.name, result: 'error' });
      this.log.warn('reconcile failed, retrying', {
        key,
        error: describe(e),
        retryInMs: Math.round(delay),
        attempt: this.queue.numRequeues(key),
      });
    } finally {
      end?.();
      this.queue.done(key);
      if (this.initial?.keys.delete(key) && !this.initial.keys.size) {
        this.initial.resolve();
        this.initial = undefined;
      }
    }
  }
}
