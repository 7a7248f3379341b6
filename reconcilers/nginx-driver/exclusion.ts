// The exclusion state of fault isolation (the search is isolate.ts'): directive profiles left out because nginx -t
// refuses them, with nginx's words. A name is a content digest, so a profile excluded once stays out (same content,
// same verdict) for as long as routes use it; the routes that need it are not served and their objects get an
// `Excluded` Warning and are not reported as programmed by those routes.
import type { GatewayConfig, Structure } from '../config/types.ts';
import type { IngressStatus, TranslateEvent } from '../translate/translate.ts';
import { excludeProfiles, withoutProfiles } from './isolate.ts';

export class Exclusion {
  private readonly excluded = new Map<string, string>();

  /** How many profiles are left out. */
  get size(): number {
    return this.excluded.size;
  }

  /** Leaves profile `name` out from now on; `output` is what nginx -t said. */
  add(name: string, output: string): void {
    this.excluded.set(name, output);
  }

  /** Forgets the excluded profiles `structure` no longer has (no route uses them any more). */
  prune(structure: Structure): void {
    for (const name of [...this.excluded.keys()]) if (!structure.profiles.some((p) => p.name === name)) this.excluded.delete(name);
  }

  /**
   * Leaves the excluded profiles out of `desired` (structure and routes); every object that lost a route gets an
   * `Excluded` Warning and is not reported as programmed by that route.
   */
  apply(desired: GatewayConfig, events: TranslateEvent[], status: Map<string, IngressStatus>): void {
    if (!this.excluded.size) return;
    const names = new Set(this.excluded.keys());
    desired.structure = excludeProfiles(desired.structure, names);
    const { routes, sources } = withoutProfiles(desired.data.routes, names);
    desired.data.routes = routes;
    const why = [...this.excluded.values()][0] ?? '';
    if (!sources.size) return;
    const stillServed = new Set<string>();
    for (const hr of Object.values(routes)) for (const r of hr.rules) if (sources.has(r.route.source) && !r.route.action) stillServed.add(r.route.source);
    for (const ref of sources) {
      const st = status.get(ref);
      if (st && !stillServed.has(ref)) status.set(ref, { ...st, programmed: false });
      events.push({ ref, type: 'Warning', reason: 'Excluded', message: `paths left out of nginx: the nginx directives they need fail nginx -t; everything else is programmed. nginx said: ${why.slice(0, 600)}` });
    }
  }
}
