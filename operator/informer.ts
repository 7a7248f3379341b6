// A shared informer: list, then watch from the list's resourceVersion (with bookmarks), keeping a read-only
// cache and calling handlers. Recovers from every way a watch ends:
//   - clean close (server timeout)       → re-watch from the last seen resourceVersion, no relist;
//   - 410 Gone / "too old" version       → relist, diff against the cache, replay adds/updates/deletes;
//   - transport errors, apiserver down   → exponential backoff with jitter, then resume;
//   - silently stalled connection        → watchdog aborts it when nothing (not even a bookmark) arrives, then
//                                          the same backoff as an error (a StallError, logged and counted).
// Cached objects lose metadata.managedFields (controller-runtime's default transform) and kubectl's
// last-applied-configuration annotation (a copy of the whole object) before any user transform.
import { ApiError, isGone, type KubeClient, type WatchEvent } from './kube/client.ts';
import { isKubeObject, keyOf, stripManagedFields, type KubeObject } from './kube/object.ts';
import { resourcePath, type ResourceType } from './kube/resources.ts';
import { Store, type IndexFunc, type ReadonlyStore } from './cache.ts';
import { Backoff, sleep } from './backoff.ts';
import type { Logger } from './log.ts';
import type { Metrics } from './metrics.ts';

export interface EventHandler<T extends KubeObject> {
  add?(obj: T): void;
  update?(oldObj: T, newObj: T): void;
  delete?(obj: T): void;
}

export interface InformerOptions<T extends KubeObject> {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  indexers?: Record<string, IndexFunc<T>>;
  /** Page size for lists. */
  pageSize?: number;
  /** Abort a watch that received nothing (not even a bookmark) for this long. */
  stallTimeoutMs?: number;
  /** Server-side watch timeout range (seconds); a random value in it spreads reconnects. */
  watchTimeoutSeconds?: [number, number];
  backoff?: { initialMs: number; maxMs: number };
  /**
   * Applied to every object before it enters the cache, e.g. to drop Secret data the application does not need.
   * Must be pure and return a new object. Runs after managedFields were dropped.
   */
  transform?: (obj: T) => T;
  /** Keep metadata.managedFields in the cache (dropped by default: controllers rarely read it). */
  keepManagedFields?: boolean;
}

class GoneError extends Error {}

/** A watch on which nothing (not even a bookmark) arrived for the stall timeout; the informer reconnects. */
export class StallError extends Error {
  constructor(ms: number) {
    super(`watch stalled: nothing received for ${ms}ms`);
    this.name = 'StallError';
  }
}

/** What an informer needs from a client (tests pass a fake). */
export type WatchClient = Pick<KubeClient, 'request' | 'watch'>;

export class Informer<T extends KubeObject> {
  readonly resource: ResourceType;
  private readonly storeImpl: Store<T>;
  private readonly handlers: EventHandler<T>[] = [];
  private readonly o: Required<
    Omit<InformerOptions<T>, 'namespace' | 'labelSelector' | 'fieldSelector' | 'indexers' | 'transform' | 'keepManagedFields'>
  > &
    InformerOptions<T>;
  /** The cache transform: managedFields dropped (unless kept), then the caller's transform. */
  private readonly transform: (obj: T) => T;
  private synced = false;
  private syncWaiters: (() => void)[] = [];
  private resourceVersion: string | undefined;
  private running = false;

  private readonly client: WatchClient;
  private readonly log: Logger;
  private readonly metrics: Metrics | undefined;

  constructor(
    client: WatchClient,
    resource: ResourceType,
    log: Logger,
    metrics: Metrics | undefined,
    opts: InformerOptions<T> = {},
  ) {
    this.client = client;
    this.log = log;
    this.metrics = metrics;
    this.resource = resource;
    this.o = {
      pageSize: 500,
      stallTimeoutMs: 150_000,
      watchTimeoutSeconds: [300, 600],
      backoff: { initialMs: 200, maxMs: 30_000 },
      ...opts,
    };
    this.storeImpl = new Store<T>(opts.indexers ?? {});
    const user = opts.transform;
    const strip = opts.keepManagedFields ? (o: T) => o : stripManagedFields<T>;
    this.transform = user ? (o) => user(strip(o)) : strip;
  }

  get store(): ReadonlyStore<T> {
    return this.storeImpl;
  }

  /** Adds indexes; allowed before or after start (existing objects are indexed). */
  addIndexers(indexers: Record<string, IndexFunc<T>>): void {
    this.storeImpl.addIndexers(indexers);
  }

  /** Registers a handler. If the cache is already synced, the handler first gets an add for every object. */
  addHandler(h: EventHandler<T>): void {
    this.handlers.push(h);
    if (this.synced) for (const obj of this.storeImpl.list()) this.safe(() => h.add?.(obj));
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** The last resourceVersion seen (list, event or bookmark). */
  lastResourceVersion(): string | undefined {
    return this.resourceVersion;
  }

  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    return new Promise((resolve) => {
      const onAbort = () => resolve(false);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.syncWaiters.push(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve(true);
      });
    });
  }

  /** Runs until the signal aborts. Never throws: every failure is logged, backed off and retried. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.running) throw new Error(`informer for ${this.resource.plural} already running`);
    this.running = true;
    const backoff = new Backoff(this.o.backoff);
    const kind = this.resource.kind;
    while (!signal.aborted) {
      try {
        if (this.resourceVersion === undefined) await this.relist(signal);
        await this.watchOnce(signal);
        backoff.reset();
        this.metrics?.informerWatchRestarts.inc({ kind, cause: 'closed' });
      } catch (e) {
        if (signal.aborted) break;
        if (e instanceof GoneError || isGone(e)) {
          this.log.info('watch expired (410 Gone), relisting', { kind, resourceVersion: this.resourceVersion });
          this.metrics?.informerWatchRestarts.inc({ kind, cause: 'gone' });
          this.resourceVersion = undefined;
          continue;
        }
        const delay = backoff.next();
        const stalled = e instanceof StallError;
        this.metrics?.informerWatchRestarts.inc({ kind, cause: stalled ? 'stalled' : 'error' });
        this.log.warn(stalled ? 'watch stalled, reconnecting' : 'list/watch failed, retrying', {
          kind,
          error: describe(e),
          resourceVersion: this.resourceVersion,
          retryInMs: delay,
          attempt: backoff.attempts,
        });
        await sleep(delay, signal);
      }
    }
    this.running = false;
  }

  private listPath(): string {
    return resourcePath(this.resource, this.o.namespace);
  }

  private selectors(): Record<string, string | undefined> {
    return { labelSelector: this.o.labelSelector, fieldSelector: this.o.fieldSelector };
  }

  /** Lists everything (paginated) and replaces the cache, replaying the differences to handlers. */
  private async relist(signal: AbortSignal): Promise<void> {
    this.metrics?.informerRelists.inc({ kind: this.resource.kind });
    const items: T[] = [];
    let cont: string | undefined;
    let rv = '';
    do {
      const page = await this.client.request<{ metadata: { resourceVersion: string; continue?: string }; items: unknown[] }>(
        'GET',
        this.listPath(),
        { query: { ...this.selectors(), limit: this.o.pageSize, continue: cont }, signal },
      );
      for (const it of page.items) if (isKubeObject(it)) items.push(this.withKind(it) as T);
      cont = page.metadata.continue || undefined;
      rv = page.metadata.resourceVersion;
    } while (cont);
    const seen = new Set<string>();
    for (const obj of items) {
      const key = keyOf(obj);
      seen.add(key);
      const old = this.storeImpl.upsert(obj);
      if (!old) this.emit('add', undefined, obj);
      else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) this.emit('update', old, obj);
    }
    for (const key of this.storeImpl.keys()) {
      if (!seen.has(key)) {
        const old = this.storeImpl.remove(key) as T;
        this.emit('delete', undefined, old);
      }
    }
    this.resourceVersion = rv;
    this.log.debug('listed', { kind: this.resource.kind, count: items.length, resourceVersion: rv });
    if (!this.synced) {
      this.synced = true;
      for (const w of this.syncWaiters.splice(0)) w();
    }
  }

  private async watchOnce(signal: AbortSignal): Promise<void> {
    const [lo, hi] = this.o.watchTimeoutSeconds;
    const timeoutSeconds = Math.floor(lo + Math.random() * (hi - lo));
    const ac = new AbortController();
    const onAbort = () => ac.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    let stalled = false;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        stalled = true;
        ac.abort();
      }, this.o.stallTimeoutMs);
    };
    arm();
    try {
      const stream = this.client.watch(
        this.listPath(),
        { ...this.selectors(), resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds },
        ac.signal,
        arm,
      );
      for await (const ev of stream) this.handleEvent(ev);
    } catch (e) {
      // Our own abort surfaces as an AbortError (or ends the stream quietly); either way the stall is the cause.
      if (!stalled) throw e;
    } finally {
      if (timer) clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      ac.abort();
    }
    // Never a silent return: the caller must back off and count the stall, as for any other failed watch.
    if (stalled) throw new StallError(this.o.stallTimeoutMs);
  }

  private handleEvent(ev: WatchEvent): void {
    const kind = this.resource.kind;
    this.metrics?.informerEvents.inc({ kind, type: ev.type });
    if (ev.type === 'ERROR') {
      const st = ev.object as { code?: number; reason?: string; message?: string };
      if (st.code === 410 || st.reason === 'Expired' || st.reason === 'Gone') throw new GoneError(st.message ?? 'gone');
      throw new ApiError('WATCH', this.listPath(), st.code ?? 500, st.reason ?? 'Unknown', st.message ?? 'watch error');
    }
    if (!isKubeObject(ev.object)) return;
    const rv = ev.object.metadata.resourceVersion;
    if (ev.type === 'BOOKMARK') {
      if (rv) this.resourceVersion = rv;
      return;
    }
    const obj = this.withKind(ev.object) as T;
    const key = keyOf(obj);
    if (ev.type === 'DELETED') {
      const old = this.storeImpl.remove(key);
      this.emit('delete', undefined, (old ?? obj) as T);
    } else {
      const old = this.storeImpl.upsert(obj);
      if (old) this.emit('update', old, obj);
      else this.emit('add', undefined, obj);
    }
    if (rv) this.resourceVersion = rv;
  }

  /** Lists omit kind/apiVersion on items; put them back so handlers and event recorders can rely on them. */
  private withKind(obj: KubeObject): KubeObject {
    const apiVersion = this.resource.group ? `${this.resource.group}/${this.resource.version}` : this.resource.version;
    const full = obj.kind ? obj : { ...obj, kind: this.resource.kind, apiVersion };
    return this.transform(full as T);
  }

  private emit(type: 'add' | 'update' | 'delete', old: T | undefined, obj: T): void {
    for (const h of this.handlers) {
      this.safe(() => {
        if (type === 'add') h.add?.(obj);
        else if (type === 'update') h.update?.(old as T, obj);
        else h.delete?.(obj);
      });
    }
  }

  private safe(fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.log.error('informer handler threw', { kind: this.resource.kind, error: describe(e) });
    }
  }
}

export function describe(e: unknown): string {
  if (e instanceof Error) {
    const cause = (e as { cause?: unknown }).cause;
    return cause instanceof Error ? `${e.message} (${cause.message})` : e.message;
  }
  return String(e);
}
