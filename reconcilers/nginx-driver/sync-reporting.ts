// What the gateway reports about itself (the events and status of Ingresses and Routes are reporting.ts'): its
// metrics, Events on the controller object (Reload, ReloadFailed, SyncFailed, …) and the recent syncs kept for tests
// and benchmarks.
import type { EventRecorder } from '../../operator/events.ts';
import { describe } from '../../operator/informer.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import type { Logger } from '../../operator/log.ts';
import type { Metrics } from '../../operator/metrics.ts';
import { gatewayMetrics, type GatewayMetrics } from './metrics.ts';
import { DEFAULT_CONST_LABELS, type ConstLabels } from './compat-metrics.ts';

export interface SyncRecord {
  at: number;
  lane: 'structural' | 'data';
  reload: boolean;
  reasons: string[];
  bytesSent: number;
  ms: number;
  ok: boolean;
}

/** How many syncs `history` keeps. */
const HISTORY = 1000;

export class SyncReporting {
  readonly m: GatewayMetrics;
  /** Recent syncs, oldest first. */
  readonly history: SyncRecord[] = [];
  private readonly events: EventRecorder;
  private readonly controllerObject: () => KubeObject | undefined;
  private readonly log: Logger;

  constructor(metrics: Metrics, events: EventRecorder, controllerObject: () => KubeObject | undefined, log: Logger, labels: ConstLabels = DEFAULT_CONST_LABELS) {
    this.m = gatewayMetrics(metrics.registry, labels);
    this.events = events;
    this.controllerObject = controllerObject;
    this.log = log;
  }

  /** An Event on the controller object (the Pod, or the IngressClass), if there is one. */
  controllerEvent(type: 'Normal' | 'Warning', reason: string, note: string): void {
    const obj = this.controllerObject();
    if (obj) this.events.event(obj, type, reason, reason === 'Reload' || reason === 'ReloadFailed' ? 'Reload' : 'Sync', note);
  }

  record(rec: Omit<SyncRecord, 'at'>): void {
    this.history.push({ at: Date.now(), ...rec });
    if (this.history.length > HISTORY) this.history.splice(0, this.history.length - HISTORY);
  }

  /** A lane's run threw (a bug): a failed sync, logged and reported; the lane retries. */
  laneCrashed(lane: 'structural' | 'data', e: unknown): void {
    this.m.failures.inc({ lane });
    this.log.error('gateway sync threw; the running configuration is kept and the sync retried', { lane, error: describe(e), stack: e instanceof Error ? e.stack : undefined });
    this.controllerEvent('Warning', 'SyncFailed', `${lane} sync failed (the running configuration is kept, retrying): ${describe(e).slice(0, 500)}`);
  }
}
