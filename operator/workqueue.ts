// A keyed work queue with client-go semantics:
//   - a key waiting in the queue is stored once, however often it is added (dedupe);
//   - a key being processed is never handed to a second worker; if it is added meanwhile, it is queued again
//     once the first worker calls done();
//   - failures re-queue with per-key exponential backoff (max'd with an overall token bucket); forget() resets.
import type { Metrics } from './metrics.ts';

export interface RateLimiterOptions {
  baseDelayMs: number;
  maxDelayMs: number;
  /** Overall token bucket: sustained re-queues per second and burst. */
  qps: number;
  burst: number;
}

export const DEFAULT_RATE_LIMIT: RateLimiterOptions = { baseDelayMs: 5, maxDelayMs: 300_000, qps: 10, burst: 100 };

export class RateLimiter {
  private readonly failures = new Map<string, number>();
  private tokens: number;
  private last: number;
  private readonly o: RateLimiterOptions;
  private readonly now: () => number;
  constructor(o: RateLimiterOptions = DEFAULT_RATE_LIMIT, now: () => number = () => performance.now()) {
    this.o = o;
    this.now = now;
    this.tokens = o.burst;
    this.last = now();
  }
  /** Delay before the key may be retried. */
  when(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    const perItem = Math.min(this.o.maxDelayMs, this.o.baseDelayMs * 2 ** n);
    // token bucket
    const t = this.now();
    this.tokens = Math.min(this.o.burst, this.tokens + ((t - this.last) / 1000) * this.o.qps);
    this.last = t;
    this.tokens -= 1;
    const bucket = this.tokens >= 0 ? 0 : (-this.tokens / this.o.qps) * 1000;
    return Math.max(perItem, bucket);
  }
  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }
  forget(key: string): void {
    this.failures.delete(key);
  }
}

export class WorkQueue {
  readonly name: string;
  private readonly queue: string[] = [];
  private head = 0;
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly addedAt = new Map<string, number>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private shuttingDown = false;
  readonly limiter: RateLimiter;
  private readonly metrics: Metrics | undefined;

  constructor(name: string, metrics?: Metrics, limiter: RateLimiter = new RateLimiter()) {
    this.name = name;
    this.metrics = metrics;
    this.limiter = limiter;
  }

  add(key: string): void {
    if (this.shuttingDown) return;
    if (this.metrics) {
      this.metrics.queueAdds.inc({ name: this.name });
      this.metrics.queueAddCount++;
    }
    if (this.dirty.has(key)) return;
    this.dirty.add(key);
    if (!this.addedAt.has(key)) this.addedAt.set(key, performance.now());
    if (this.processing.has(key)) return;
    this.push(key);
  }

  /** Adds the key after a delay; an earlier pending delay for the same key wins. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) return this.add(key);
    const at = performance.now() + ms;
    const existing = this.timers.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    this.timers.set(key, { at, timer });
  }

  addRateLimited(key: string): number {
    const delay = this.limiter.when(key);
    this.metrics?.queueRetries.inc({ name: this.name });
    this.addAfter(key, delay);
    return delay;
  }

  forget(key: string): void {
    this.limiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.limiter.numRequeues(key);
  }

  /** Waits for the next key; resolves undefined once the queue is shut down and drained of waiters. */
  get(): Promise<string | undefined> {
    if (this.length() > 0) return Promise.resolve(this.take());
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Must be called when a worker finishes a key taken with get(). */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key)) this.push(key);
  }

  length(): number {
    return this.queue.length - this.head;
  }

  /** Keys waiting or being processed (not those parked in a delay timer). */
  pendingKeys(): string[] {
    return [...new Set([...this.dirty, ...this.processing])];
  }

  isProcessing(key: string): boolean {
    return this.processing.has(key);
  }

  shutDown(): void {
    this.shuttingDown = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const w of this.waiters.splice(0)) w(undefined);
  }

  private push(key: string): void {
    const w = this.waiters.shift();
    if (w) {
      this.queue.push(key);
      w(this.take());
      return;
    }
    this.queue.push(key);
    this.metrics?.queueDepth.set({ name: this.name }, this.length());
  }

  private take(): string {
    const key = this.queue[this.head++] as string;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    this.processing.add(key);
    this.dirty.delete(key);
    const t = this.addedAt.get(key);
    this.addedAt.delete(key);
    if (t !== undefined) this.metrics?.queueLatency.observe({ name: this.name }, (performance.now() - t) / 1000);
    this.metrics?.queueDepth.set({ name: this.name }, this.length());
    return key;
  }
}
