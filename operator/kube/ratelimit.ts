// A token bucket with reservations, the shape of client-go's flowcontrol limiter (golang.org/x/time/rate): each
// caller reserves the next token and sleeps until it is due, so callers are served in arrival order and a burst
// of N requests is spread over N / qps seconds instead of all hitting the API server at once.

export interface TokenBucketOptions {
  /** Sustained rate, tokens per second. */
  qps: number;
  /** Tokens available at once (the bucket's size). */
  burst: number;
}

export class TokenBucket {
  readonly qps: number;
  readonly burst: number;
  private tokens: number;
  private last: number;
  private readonly now: () => number;

  /** `now` is a monotonic millisecond clock; tests pass `Date.now` so that node:test's mock timers drive it. */
  constructor(o: TokenBucketOptions, now: () => number = () => performance.now()) {
    if (!(o.qps > 0) || !Number.isFinite(o.qps)) throw new Error(`token bucket qps must be a positive number, got ${o.qps}`);
    if (!(o.burst >= 1) || !Number.isInteger(o.burst)) throw new Error(`token bucket burst must be an integer >= 1, got ${o.burst}`);
    this.qps = o.qps;
    this.burst = o.burst;
    this.tokens = o.burst;
    this.now = now;
    this.last = now();
  }

  private refill(): void {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.qps);
    this.last = t;
  }

  /** Takes a token if one is available now; never waits and never goes into debt. */
  tryTake(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** True when the bucket has refilled completely: it then behaves exactly like a new one. */
  full(): boolean {
    this.refill();
    return this.tokens >= this.burst;
  }

  /** Reserves the next token and returns how long (ms) the caller must wait before using it (0: now). */
  reserve(): number {
    this.refill();
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  /** Gives back a reservation that was not used (the caller gave up while waiting). */
  cancel(): void {
    this.tokens = Math.min(this.burst, this.tokens + 1);
  }

  /**
   * Waits for a token and resolves with the milliseconds waited. If the signal aborts first, the reservation is
   * returned and the promise rejects with the signal's reason, so an abandoned request does not delay later ones.
   */
  wait(signal?: AbortSignal): Promise<number> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const ms = this.reserve();
    if (ms <= 0) return Promise.resolve(0);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        this.cancel();
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve(ms);
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
