// DNS for ExternalName Services. Translation is pure, so names are resolved here, outside it: the gateway asks
// for the addresses it has, unknown names are looked up in the background, and every name in use is refreshed
// periodically; any change triggers a sync (a data-only update, no reload).
import { lookup } from 'node:dns/promises';
import type { Logger } from '../../operator/log.ts';

interface Entry {
  addresses: string[];
  error?: string;
  at: number;
}

export class ExternalNameResolver {
  private readonly cache = new Map<string, Entry>();
  private readonly pending = new Set<string>();
  private readonly inUse = new Set<string>();
  private readonly onChange: () => void;
  private readonly log: Logger;
  private timer: NodeJS.Timeout | undefined;
  private readonly refreshMs: number;

  constructor(onChange: () => void, log: Logger, refreshMs = 30_000) {
    this.onChange = onChange;
    this.log = log;
    this.refreshMs = refreshMs;
  }

  /** Addresses known for the name (sorted), or undefined while the first lookup runs. */
  get(name: string): Entry | undefined {
    this.inUse.add(name);
    const e = this.cache.get(name);
    if (!e) this.resolve(name);
    this.ensureTimer();
    return e;
  }

  private resolve(name: string): void {
    if (this.pending.has(name)) return;
    this.pending.add(name);
    lookup(name, { all: true, family: 4 })
      .then((r) => ({ addresses: [...new Set(r.map((a) => a.address))].sort(), at: Date.now() }) as Entry)
      .catch((e: unknown) => ({ addresses: [], error: (e as Error).message, at: Date.now() }) as Entry)
      .then((entry) => {
        this.pending.delete(name);
        const old = this.cache.get(name);
        this.cache.set(name, entry);
        if (!old || old.addresses.join() !== entry.addresses.join() || old.error !== entry.error) {
          if (entry.error) this.log.warn('ExternalName lookup failed', { name, error: entry.error });
          this.onChange();
        }
      });
  }

  private ensureTimer(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      for (const n of this.inUse) this.resolve(n);
      for (const n of [...this.cache.keys()]) if (!this.inUse.has(n)) this.cache.delete(n);
      this.inUse.clear();
    }, this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
