// Exponential backoff with full jitter, and an abortable sleep.

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  factor?: number;
  /** 0..1: fraction of the delay that is randomised. */
  jitter?: number;
}

export class Backoff {
  private attempt = 0;
  private readonly o: Required<BackoffOptions>;
  private readonly random: () => number;
  constructor(o: BackoffOptions, random: () => number = Math.random) {
    this.o = { factor: 2, jitter: 0.5, ...o };
    this.random = random;
  }
  next(): number {
    const base = Math.min(this.o.maxMs, this.o.initialMs * this.o.factor ** this.attempt);
    this.attempt++;
    const j = base * this.o.jitter;
    return Math.round(base - j + this.random() * j * 2);
  }
  reset(): void {
    this.attempt = 0;
  }
  get attempts(): number {
    return this.attempt;
  }
}

/** Resolves after ms, or early (without throwing) when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
