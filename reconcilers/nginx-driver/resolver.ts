// DNS for ExternalName Services. Translation is pure, so names are resolved here, outside it. The gateway tells
// the resolver which names the current configuration uses (`use`, after every full translation); those names are
// looked up at once when new and refreshed periodically for as long as they are in use — a quiet minute never
// makes a name "unknown" again (the bug that flapped ExternalName backends to 503). A failed refresh keeps the
// last good addresses (stale beats a 503 on a DNS hiccup) and is logged. Every address passes `refuse`: loopback,
// link-local, unspecified and Portico's own addresses are never handed to nginx, whatever a tenant's DNS says.
import { lookup } from 'node:dns/promises';
import type { Logger } from '../../operator/log.ts';

export interface ResolvedName {
  /** Addresses nginx may use, sorted. */
  addresses: string[];
  /** Addresses the name resolved to that were refused, with why. */
  refused: { address: string; reason: string }[];
  /** Set when the last lookup failed and there are no earlier good addresses. */
  error?: string;
  at: number;
}

export type Lookup = (name: string) => Promise<string[]>;

const systemLookup: Lookup = async (name) => (await lookup(name, { all: true, family: 4 })).map((a) => a.address);

export interface ResolverOptions {
  refreshMs?: number;
  /** Why an address must not be used, or null. */
  refuse: (address: string) => string | null;
  lookup?: Lookup;
}

export class ExternalNameResolver {
  private readonly cache = new Map<string, ResolvedName>();
  private readonly pending = new Set<string>();
  private names = new Set<string>();
  private readonly onChange: () => void;
  private readonly log: Logger;
  private timer: NodeJS.Timeout | undefined;
  private readonly o: Required<ResolverOptions>;

  constructor(onChange: () => void, log: Logger, o: ResolverOptions) {
    this.onChange = onChange;
    this.log = log;
    this.o = { refreshMs: 30_000, lookup: systemLookup, ...o };
  }

  /** The names the running configuration uses: new ones are looked up now, dropped ones forgotten. */
  use(names: Iterable<string>): void {
    const next = new Set(names);
    for (const n of next) if (!this.cache.has(n)) this.resolve(n);
    for (const n of this.cache.keys()) if (!next.has(n)) this.cache.delete(n);
    this.names = next;
    if (next.size && !this.timer) {
      this.timer = setInterval(() => {
        for (const n of this.names) this.resolve(n);
      }, this.o.refreshMs);
      this.timer.unref();
    } else if (!next.size && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** Looks every name in use up again now (what `refuse` says changed, e.g. Portico's own addresses). */
  recheck(): void {
    for (const n of this.names) this.resolve(n);
  }

  /** What is known for the name, or undefined while its first lookup runs. */
  get(name: string): ResolvedName | undefined {
    return this.cache.get(name);
  }

  /** Waits for the lookups in flight (tests). */
  async settle(): Promise<void> {
    while (this.pending.size) await new Promise((r) => setImmediate(r));
  }

  private resolve(name: string): void {
    if (this.pending.has(name)) return;
    this.pending.add(name);
    this.o
      .lookup(name)
      .then((all): ResolvedName => {
        const addresses: string[] = [];
        const refused: ResolvedName['refused'] = [];
        for (const address of [...new Set(all)].sort()) {
          const reason = this.o.refuse(address);
          if (reason) refused.push({ address, reason });
          else addresses.push(address);
        }
        return { addresses, refused, at: Date.now() };
      })
      .catch((e: unknown): ResolvedName => {
        const error = e instanceof Error ? e.message : String(e);
        const old = this.cache.get(name);
        if (old && old.addresses.length) {
          this.log.warn('ExternalName refresh failed; keeping the last good addresses', { name, error, addresses: old.addresses });
          return old;
        }
        return { addresses: [], refused: [], error, at: Date.now() };
      })
      .then((entry) => {
        this.pending.delete(name);
        if (!this.names.has(name)) return;
        const old = this.cache.get(name);
        this.cache.set(name, entry);
        const changed = !old || old.addresses.join() !== entry.addresses.join() || old.error !== entry.error || JSON.stringify(old.refused) !== JSON.stringify(entry.refused);
        if (changed) {
          if (entry.error) this.log.warn('ExternalName lookup failed', { name, error: entry.error });
          if (entry.refused.length) this.log.warn('ExternalName resolves to addresses Portico refuses to proxy to', { name, refused: entry.refused });
          this.onChange();
        }
      });
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
