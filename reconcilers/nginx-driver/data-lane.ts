// The data lane (no debounce; coalesces what arrives while a push is in flight): EndpointSlice changes are turned
// into backend updates for the affected Services only and pushed to Lua — also while the configuration lane is in
// `nginx -t` or a reload. It shares only the push lock with that lane.
import { describe } from '../../operator/informer.ts';
import type { Logger } from '../../operator/log.ts';
import type { Backend } from '../config/types.ts';
import type { Model } from '../model/model.ts';
import { emptyDelta } from '../translate/diff.ts';
import type { IncrementalTranslator } from '../translate/incremental.ts';
import { endpointUpdates } from './endpoint-updates.ts';
import { Lane } from './lane.ts';
import type { DynamicClient } from './nginx/dynamic.ts';
import type { NginxState } from './nginx-state.ts';
import type { PushLock } from './push-lock.ts';
import type { SyncReporting } from './sync-reporting.ts';

export interface DataLaneParts {
  model: Model;
  state: NginxState;
  lock: PushLock;
  /** Portico's own addresses (never an endpoint). */
  own: ReadonlySet<string>;
  dynamic: DynamicClient;
  /** The configuration lane's translator: takes the pushed endpoints over in place. */
  translator: IncrementalTranslator;
  /** Asks the configuration lane for a full translation. */
  translateAll: () => void;
  reporting: SyncReporting;
  log: Logger;
}

export class DataLane {
  readonly lane: Lane;
  /** Services whose EndpointSlices changed since the data lane last ran. */
  private pending = new Set<string>();
  private readonly p: DataLaneParts;

  constructor(p: DataLaneParts) {
    this.p = p;
    this.lane = new Lane(
      { quietMs: 0, maxWaitMs: 0, retryInitialMs: 100, retryMaxMs: 5_000 },
      {
        run: () => this.sync(),
        onError: (e) => p.reporting.laneCrashed('data', e),
        onRetry: (ms) => p.log.warn('endpoint update failed, retrying', { retryInMs: ms }),
      },
    );
  }

  /** A Service's EndpointSlices changed (no trigger). */
  noteSlices(serviceKey: string): void {
    this.pending.add(serviceKey);
  }

  get hasPending(): boolean {
    return this.pending.size > 0;
  }

  /** Forgets pending Services (the next configuration sync computes every endpoint from the model). */
  clear(): void {
    this.pending.clear();
  }

  /** Endpoints of the Services whose slices changed, pushed without waiting for anything structural. */
  private async sync(): Promise<boolean> {
    const { state, lock, reporting, log } = this.p;
    const t0 = performance.now();
    if (!state.structure || state.dataLost) {
      // Nothing programmed yet (or nginx lost its data): the structural lane pushes everything from the model.
      this.pending.clear();
      return true;
    }
    const services = this.pending;
    this.pending = new Set();
    let bytes = 0;
    try {
      const needsStructure = await lock.run(async () => {
        const { upsert, needsStructure } = endpointUpdates(this.p.model, state.held.backends, services, this.p.own);
        if (Object.keys(upsert).length) {
          bytes = await this.p.dynamic.push({ ...emptyDelta(), backends: { upsert, remove: [] } });
          this.endpointsPushed(upsert);
          reporting.m.dynamic.inc({ result: 'success' });
          reporting.m.dynamicBytes.inc(bytes);
        }
        return needsStructure;
      });
      // A Service or port gone, a refused address to report: the full translation (Services are not Ingresses).
      if (needsStructure) this.p.translateAll();
      const ms = performance.now() - t0;
      reporting.m.syncs.observe({ kind: 'endpoints' }, ms / 1000);
      reporting.record({ lane: 'data', reload: false, reasons: [], bytesSent: bytes, ms, ok: true });
      return true;
    } catch (e) {
      for (const s of services) this.pending.add(s);
      reporting.m.dynamic.inc({ result: 'failure' });
      reporting.m.failures.inc({ lane: 'data' });
      log.error('endpoint update failed', { error: describe(e) });
      reporting.record({ lane: 'data', reload: false, reasons: [], bytesSent: 0, ms: performance.now() - t0, ok: false });
      return false;
    }
  }

  /**
   * Endpoints the data lane pushed: what Lua holds (`held`) and the translator's last result take them over in
   * place — the incremental translation rebuilds only what a change touches, so without this its result would
   * keep older endpoints for every other backend, and a later flap back to them would look like no change.
   */
  private endpointsPushed(upsert: Record<string, Backend>): void {
    Object.assign(this.p.state.held.backends, upsert);
    this.p.translator.patchBackends(upsert);
  }
}
