// One serialized lane of gateway work as an explicit state machine. The gateway runs two of them: the structural
// lane (debounced: translate → render → nginx -t → reload → data push) and the data lane (no debounce: endpoint
// changes pushed to Lua, coalescing only what arrives while a push is in flight). Because each lane has its own
// state, an endpoint push never waits behind `nginx -t` or a reload, and a failed structural sync cannot be
// "consumed" by an endpoint batch: the structural lane stays dirty until one of its own runs succeeds.
//
//   idle ──trigger──> waiting ──timer──> running ──ok, no trigger meanwhile──> idle
//                        ^                  │ ──ok, triggered meanwhile───> waiting
//                        │                  └──failed / threw──────────────> backoff ──timer──> running
//                        └──────────trigger (a new change may fix it; debounced again)──┘
//
// `dirty` is true from the first trigger until a run that started after the last trigger succeeds. A run that
// throws counts as failed (reported through onError), never as a crash.
import { Backoff } from '../../operator/backoff.ts';

export type LaneState = 'idle' | 'waiting' | 'running' | 'backoff' | 'stopped';

export interface LaneOptions {
  /** Run once triggers have been quiet this long… */
  quietMs: number;
  /** …or at the latest this long after the first trigger of a burst. */
  maxWaitMs: number;
  retryInitialMs: number;
  retryMaxMs: number;
}

export interface LaneHooks {
  /** One unit of work; resolves true on success, false on a handled failure (it is retried with backoff). */
  run: () => Promise<boolean>;
  /** A run threw: the lane treats it as failed; this reports it (log + Event). */
  onError: (e: unknown) => void;
  /** Told when a retry is scheduled (for logs). */
  onRetry?: (delayMs: number) => void;
  now?: () => number;
}

export class Lane {
  private readonly o: LaneOptions;
  private readonly h: LaneHooks;
  private readonly now: () => number;
  private readonly backoff: Backoff;
  private stateV: LaneState = 'idle';
  private dirtyV = false;
  private triggeredWhileRunning = false;
  private firstTriggerAt: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<void> | undefined;
  /** Completed runs and failures, for tests and metrics. */
  runs = 0;
  failures = 0;

  constructor(o: LaneOptions, h: LaneHooks) {
    this.o = o;
    this.h = h;
    this.now = h.now ?? (() => performance.now());
    this.backoff = new Backoff({ initialMs: o.retryInitialMs, maxMs: o.retryMaxMs, jitter: 0 });
  }

  get state(): LaneState {
    return this.stateV;
  }
  /** Work exists that has not been applied successfully. */
  get dirty(): boolean {
    return this.dirtyV;
  }

  trigger(): void {
    if (this.stateV === 'stopped') return;
    this.dirtyV = true;
    if (this.stateV === 'running') {
      this.triggeredWhileRunning = true;
      return;
    }
    // idle, waiting or backoff: (re)arm the debounce timer, bounded by maxWait from the first trigger.
    const t = this.now();
    this.firstTriggerAt ??= t;
    const delay = Math.max(0, Math.min(this.o.quietMs, this.firstTriggerAt + this.o.maxWaitMs - t));
    this.arm('waiting', delay);
  }

  /** Runs now if there is pending work (skipping the debounce), then waits until the lane is not running. */
  async flush(): Promise<void> {
    if (this.stateV === 'waiting' || this.stateV === 'backoff') {
      this.clearTimer();
      this.start();
    }
    while (this.current) await this.current;
  }

  stop(): void {
    this.clearTimer();
    this.stateV = 'stopped';
  }

  /** Resolves when the in-flight run (if any) has finished. */
  async idle(): Promise<void> {
    while (this.current) await this.current;
  }

  private arm(state: 'waiting' | 'backoff', delay: number): void {
    this.clearTimer();
    this.stateV = state;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.start();
    }, delay);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private start(): void {
    if (this.stateV === 'stopped' || this.stateV === 'running') return;
    this.stateV = 'running';
    this.firstTriggerAt = undefined;
    this.triggeredWhileRunning = false;
    this.current = this.execute().finally(() => {
      this.current = undefined;
    });
  }

  private async execute(): Promise<void> {
    let ok = false;
    try {
      ok = await this.h.run();
    } catch (e) {
      ok = false;
      try {
        this.h.onError(e);
      } catch {
        // reporting must never take the lane down
      }
    }
    this.runs++;
    if (this.stateV === 'stopped') return;
    if (ok) {
      this.backoff.reset();
      if (this.triggeredWhileRunning) {
        this.stateV = 'idle';
        this.trigger();
      } else {
        this.dirtyV = false;
        this.stateV = 'idle';
      }
      return;
    }
    this.failures++;
    if (this.triggeredWhileRunning) {
      // Something changed while the failing run was in flight: try again after the normal debounce.
      this.stateV = 'idle';
      this.trigger();
      return;
    }
    const delay = this.backoff.next();
    this.h.onRetry?.(delay);
    this.arm('backoff', delay);
  }
}
