// The diff scope: what may differ between what Lua holds and the next desired configuration, accumulated from the
// incremental translation since the last successful push. Null means compare everything — after a full
// translation, a failed reload, while profiles are excluded, or before the first push. At 10,000 Ingresses this
// keeps a sync's diff and reporting proportional to what changed.
import type { TranslateResult } from '../translate/types.ts';

export interface Scope {
  objects: Set<string>;
  hosts: Set<string>;
  backends: Set<string>;
}

export class DiffScope {
  private scope: Scope | null = null;

  /** The scope now (null: everything). */
  get current(): Scope | null {
    return this.scope;
  }

  /** Compare everything next time. */
  invalidate(): void {
    this.scope = null;
  }

  /** A translation ran: widen by what it touched, or compare everything after a full one (nothing touched given). */
  widen(touched: TranslateResult['touched']): void {
    if (!touched) this.scope = null;
    else if (this.scope) {
      for (const k of touched.objects) this.scope.objects.add(k);
      for (const h of touched.hosts) this.scope.hosts.add(h);
      for (const b of touched.backends) this.scope.backends.add(b);
    }
  }

  /** What Lua holds is now exactly the desired configuration: start empty. Returns the scope that ended. */
  restart(): Scope | null {
    const ended = this.scope;
    this.scope = { objects: new Set(), hosts: new Set(), backends: new Set() };
    return ended;
  }
}
