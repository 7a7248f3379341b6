// Portico's own addresses: the static ones (listeners, this pod) plus its published Service's and its pods' (see
// translate/self.ts), and the loop id its uid gives. `addresses` is one Set shared with the stream section, the
// resolver and the data lane, updated in place; `options` is what the translation runs with.
import { randomBytes } from 'node:crypto';
import type { Logger } from '../../operator/log.ts';
import type { Change, Model } from '../model/model.ts';
import { loopIdOf, selfAddressesOf } from '../translate/self.ts';
import type { TranslateOptions } from '../translate/translate.ts';

export class OwnAddresses {
  readonly addresses: Set<string>;
  /** The translation options plus the current own addresses and loop id. */
  options: TranslateOptions;
  /** The loop id when the published Service is unknown: this process's own (a loop then ends at the first replica seen twice). */
  private readonly fallbackLoopId = randomBytes(8).toString('hex');
  private readonly base: TranslateOptions;
  private readonly model: Model;
  private readonly log: Logger;

  constructor(base: TranslateOptions, model: Model, log: Logger) {
    this.base = base;
    this.model = model;
    this.log = log;
    this.addresses = new Set(base.ownAddresses ?? []);
    this.options = { ...base, loopId: this.fallbackLoopId };
    this.refresh();
  }

  /** Whether `changes` touch Portico's own Service or its EndpointSlices. */
  touchedBy(changes: readonly Change[]): boolean {
    const key = this.base.selfService;
    return !!key && changes.some((c) => (c.kind === 'Service' || c.kind === 'EndpointSlice') && c.key === key);
  }

  /**
   * Re-reads Portico's own Service (--publish-service) and its EndpointSlices from the model: its addresses join the
   * static own addresses, its uid gives the loop id. Returns whether either changed.
   */
  refresh(): boolean {
    const key = this.base.selfService;
    const svc = key ? this.model.service(key) : undefined;
    const next = new Set([...(this.base.ownAddresses ?? []), ...(key ? selfAddressesOf(svc, this.model.slicesOf(key)) : [])]);
    const loopId = svc?.uid ? loopIdOf(svc.uid, this.base.controllerClass) : this.fallbackLoopId;
    const same = next.size === this.addresses.size && [...next].every((a) => this.addresses.has(a)) && loopId === this.options.loopId;
    if (same) return false;
    this.addresses.clear();
    for (const a of next) this.addresses.add(a);
    this.options = { ...this.base, ownAddresses: [...next].sort(), loopId };
    this.log.info("Portico's own addresses", { addresses: [...next].sort(), loopId });
    return true;
  }
}
