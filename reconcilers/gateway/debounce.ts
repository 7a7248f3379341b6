// Coalesces bursts of "the model changed" signals into one sync: the sync runs once the signals have been quiet
// for `quietMs`, or at the latest `maxWaitMs` after the first signal of the burst. A signal that arrives while a
// sync is running schedules exactly one more sync after it. Syncs never overlap.

export interface DebounceOptions {
  quietMs: number;
  maxWaitMs: number;
}

export class Debouncer {
  private readonly o: DebounceOptions;
  private readonly fn: () => Promise<void>;
  private firstAt: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private dirtyWhileRunning = false;
  private stopped = false;
  private readonly now: () => number;

  constructor(o: DebounceOptions, fn: () => Promise<void>, now: () => number = () => performance.now()) {
    this.o = o;
    this.fn = fn;
    this.now = now;
  }

  trigger(): void {
    if (this.stopped) return;
    if (this.running) {
      this.dirtyWhileRunning = true;
      return;
    }
    const t = this.now();
    if (this.firstAt === undefined) this.firstAt = t;
    const deadline = this.firstAt + this.o.maxWaitMs;
    const delay = Math.max(0, Math.min(this.o.quietMs, deadline - t));
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.fire(), delay);
  }

  /** Runs a pending sync now (if any) and waits for the running one. */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
      await this.fire();
    }
    while (this.running) await this.running;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async fire(): Promise<void> {
    this.timer = undefined;
    this.firstAt = undefined;
    this.running = this.fn().finally(() => {
      this.running = undefined;
      if (this.dirtyWhileRunning) {
        this.dirtyWhileRunning = false;
        this.trigger();
      }
    });
    await this.running;
  }
}
