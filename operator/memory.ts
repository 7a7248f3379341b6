// Gives a burst's memory back once the controller is quiet.
//
// A burst of work (a start at 10,000 Ingresses, a full translation for a reload, a relist) leaves V8 with a heap grown
// for it and full of garbage; with nothing allocating afterwards, V8 runs no collection and keeps the pages, so an idle
// controller held 400-500 MB at 10,000 Ingresses where its live objects take ~150 MB (e2e/bench/startup.ts). When the
// event loop has been quiet for a whole interval and V8's heap (or the process's RSS: after a start at 10,000 it grew
// by 80 MB while V8's heap grew by 13) has grown well past what it was after the last settle, one full collection
// that also returns free pages to the system (gc's "last-resort" flavor) runs: ~0.3-0.7 s of the main thread at
// 10,000 Ingresses, only while nothing else is running, at most once per `minGapMs`.
//
// The same burst leaves glibc's malloc heaps (Buffers, sockets, TLS, V8's off-heap data) full of free chunks that it
// returns only from a heap's top: 66-72 MB of an idle controller at 10,000 Ingresses after a burst of reloads, where a
// start leaves 28 MB. Right after the collection, malloc_trim(0) (Portico's addon, operator/native/malloc.c) releases
// the free pages inside the heaps as well.
//
// Needs `gc` (node --expose-gc, in NODE_FLAGS: the image and the benchmarks); without it nothing runs. Without the
// addon (not built: operator/native/build.sh) the collection still runs and the start-up log says so.
import { createRequire } from 'node:module';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import v8 from 'node:v8';
import { Counter, Histogram } from 'prom-client';
import type { Logger } from './log.ts';
import type { Metrics } from './metrics.ts';

type GcFn = (opts: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/** What Portico's malloc addon exports (operator/native/malloc.c). */
export interface MallocAddon {
  /** malloc_trim(0): whether any memory was released. */
  trim(): boolean;
  /** glibc's mallinfo2: bytes in its heaps (all arenas), free bytes among them, bytes mapped chunk by chunk. */
  stats(): { heapBytes: number; freeBytes: number; mmapBytes: number };
}

/** Where the image and `make deps` install the addon (operator/native/build.sh). */
export const MALLOC_ADDON = '/usr/lib/portico/portico_malloc.node';

/** The addon, or why it cannot be used (not built, not glibc). */
export function loadMallocAddon(file = MALLOC_ADDON): MallocAddon | Error {
  try {
    const m = createRequire(import.meta.url)(file) as Partial<MallocAddon>;
    if (typeof m.trim !== 'function' || typeof m.stats !== 'function') return new Error(`${file} does not export trim and stats`);
    return m as MallocAddon;
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}

export interface MemorySettlerOptions {
  /** How often the loop's utilization and the heap are looked at. */
  intervalMs?: number;
  /** The loop counts as quiet when it was busy at most this share of the last interval. */
  quietUtilization?: number;
  /** A settle runs when V8's heap (committed) has grown by this much since the last settle... */
  minGrowthBytes?: number;
  /** ...and by this share of it. */
  minGrowthRatio?: number;
  /**
   * Or when the process's RSS has grown by this much since the last settle (memory V8's heap does not count: free
   * malloc chunks, buffers; with the addon the settle returns those too)...
   */
  minRssGrowthBytes?: number;
  /** ...and by this share of it. */
  minRssGrowthRatio?: number;
  /** At most one settle per this many ms. */
  minGapMs?: number;
  /**
   * A count that moves with the controller's work (keys added to its work queues): a settle runs only after a whole
   * interval in which it did not move, so the collection (~0.1 s at a small cluster, ~0.5 s at 10,000 Ingresses) never
   * delays an endpoint or route change that is arriving in a trickle too light to show in the loop's utilization.
   */
  activity?: () => number;
  log?: Logger;
  /** Called after each settle (metrics). */
  onSettle?: (s: SettleReport) => void;
  // Seams for tests: the collection, malloc's trim, the heap's committed/used size, the loop's utilization, the clock.
  gc?: GcFn | undefined;
  /** malloc_trim after the collection; default: Portico's addon when it loads. */
  malloc?: MallocAddon | undefined;
  heap?: () => { total: number; used: number };
  rss?: () => number;
  utilization?: (prev?: EventLoopUtilization) => EventLoopUtilization;
  now?: () => number;
}

export interface SettleReport {
  durationMs: number;
  /** V8's heap (committed) before and after. */
  beforeBytes: number;
  afterBytes: number;
  /** Free bytes in glibc's heaps before the trim (undefined without the addon). */
  mallocFreeBytes?: number;
}

const systemGc = (): GcFn | undefined => {
  const g = (globalThis as { gc?: unknown }).gc;
  return typeof g === 'function' ? (g as GcFn) : undefined;
};

export class MemorySettler {
  private readonly o: Required<Omit<MemorySettlerOptions, 'log' | 'onSettle' | 'gc' | 'malloc'>> & Pick<MemorySettlerOptions, 'log' | 'onSettle' | 'gc' | 'malloc'>;
  private timer: NodeJS.Timeout | undefined;
  private lastElu: EventLoopUtilization | undefined;
  /** V8's heap (committed) right after the last settle (0 before the first: the start-up burst settles too). */
  private baseline = 0;
  /** The process's RSS right after the last settle. */
  private rssBaseline = 0;
  private lastSettle = -Infinity;
  private lastActivity = NaN;
  settles = 0;

  constructor(opts: MemorySettlerOptions = {}) {
    this.o = {
      intervalMs: 5_000,
      quietUtilization: 0.05,
      minGrowthBytes: 16 * 1024 * 1024,
      minGrowthRatio: 0.3,
      // RSS: 12 MB and 10 %. A small cluster's controller grew from ~100 to 121 MB over make bench-peers' churn
      // (30 new Ingresses, 90 endpoint changes) and stayed there under 32 MB / 20 %; settled, 106 MB. At 10,000
      // Ingresses (~210 MB idle) a settle still needs 21 MB of growth.
      minRssGrowthBytes: 12 * 1024 * 1024,
      minRssGrowthRatio: 0.1,
      minGapMs: 30_000,
      heap: () => {
        const h = v8.getHeapStatistics();
        return { total: h.total_heap_size, used: h.used_heap_size };
      },
      rss: () => process.memoryUsage.rss(),
      utilization: (prev) => performance.eventLoopUtilization(prev),
      now: () => performance.now(),
      activity: () => 0,
      ...opts,
      gc: 'gc' in opts ? opts.gc : systemGc(),
      malloc: 'malloc' in opts ? opts.malloc : undefined,
    };
  }

  /** Whether settling can run at all (node --expose-gc). */
  get enabled(): boolean {
    return this.o.gc !== undefined;
  }

  start(): void {
    if (!this.enabled || this.timer) {
      if (!this.enabled) this.o.log?.debug('memory settling off: node runs without --expose-gc');
      return;
    }
    this.lastElu = this.o.utilization();
    this.timer = setInterval(() => this.tick(), this.o.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One look (the timer's; tests call it directly). Returns whether a settle ran. */
  tick(): boolean {
    const gc = this.o.gc;
    if (!gc) return false;
    const now = this.o.utilization();
    const busy = this.lastElu ? this.o.utilization(this.lastElu).utilization : 1;
    this.lastElu = now;
    const activity = this.o.activity();
    const working = activity !== this.lastActivity;
    this.lastActivity = activity;
    if (busy > this.o.quietUtilization || working) return false;
    const t = this.o.now();
    if (t - this.lastSettle < this.o.minGapMs) return false;
    const before = this.o.heap();
    const growth = before.total - this.baseline;
    const heapGrew = growth >= this.o.minGrowthBytes && growth >= this.baseline * this.o.minGrowthRatio;
    const rssGrowth = this.o.rss() - this.rssBaseline;
    const rssGrew = rssGrowth >= this.o.minRssGrowthBytes && rssGrowth >= this.rssBaseline * this.o.minRssGrowthRatio;
    if (!heapGrew && !rssGrew) return false;
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    // After the collection: it has just freed the off-heap memory of the objects it collected.
    const mallocFreeBytes = this.o.malloc?.stats().freeBytes;
    this.o.malloc?.trim();
    const after = this.o.heap();
    const durationMs = this.o.now() - t;
    this.baseline = after.total;
    this.rssBaseline = this.o.rss();
    this.lastSettle = this.o.now();
    this.settles++;
    // The collection took the loop: the next interval's utilization must not count it as work.
    this.lastElu = this.o.utilization();
    const MB = (b: number) => Math.round(b / 1048576);
    this.o.log?.debug('memory settled', {
      durationMs: Math.round(durationMs), heapBeforeMB: MB(before.total), heapAfterMB: MB(after.total),
      ...(mallocFreeBytes === undefined ? {} : { mallocFreeMB: MB(mallocFreeBytes) }),
    });
    this.o.onSettle?.({ durationMs, beforeBytes: before.total, afterBytes: after.total, ...(mallocFreeBytes === undefined ? {} : { mallocFreeBytes }) });
    return true;
  }
}

/** The controller's settler, with its metrics: <prefix>_memory_settles_total and _memory_settle_duration_seconds. */
export function startMemorySettler(metrics: Metrics, log: Logger): MemorySettler {
  const registers = [metrics.registry];
  const total = new Counter({ name: `${metrics.prefix}_memory_settles_total`, help: 'Full garbage collections run once the controller was quiet after a burst, returning free heap pages to the system', registers });
  const duration = new Histogram({
    name: `${metrics.prefix}_memory_settle_duration_seconds`,
    help: 'How long each memory settle held the main thread',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers,
  });
  const addon = loadMallocAddon();
  if (addon instanceof Error) log.info('memory settling without malloc_trim: Portico\'s malloc addon did not load (operator/native/build.sh)', { reason: addon.message });
  const settler = new MemorySettler({
    log,
    malloc: addon instanceof Error ? undefined : addon,
    activity: () => metrics.queueAddCount,
    onSettle: ({ durationMs }) => {
      total.inc();
      duration.observe(durationMs / 1000);
    },
  });
  settler.start();
  return settler;
}
