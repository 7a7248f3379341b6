// Readiness: the gateway is ready once the first complete configuration is live (every initially listed object
// reconciled, nginx started, the data pushed) and for as long as nginx runs. Listeners are told once.
import type { Logger } from '../../operator/log.ts';
import type { NginxProcess } from './nginx/process.ts';
import type { SyncReporting } from './sync-reporting.ts';

export class Readiness {
  private readyFlag = false;
  private readonly listeners: (() => void)[] = [];
  private readonly nginx: NginxProcess;
  private readonly reporting: SyncReporting;
  private readonly log: Logger;

  constructor(nginx: NginxProcess, reporting: SyncReporting, log: Logger) {
    this.nginx = nginx;
    this.reporting = reporting;
    this.log = log;
  }

  /** The first complete configuration has been live (it stays so even while nginx restarts). */
  get reached(): boolean {
    return this.readyFlag;
  }

  /** Ready now: reached, and nginx runs. */
  isReady(): boolean {
    return this.readyFlag && this.nginx.isRunning();
  }

  /** Called once, when the first complete configuration is live. */
  onReady(cb: () => void): void {
    if (this.readyFlag) cb();
    else this.listeners.push(cb);
  }

  /** The first complete configuration is live (`t0`: when its sync started): metric, Event, log, listeners. */
  reach(programmed: number, t0: number): void {
    if (this.readyFlag) return;
    this.readyFlag = true;
    this.reporting.m.ready.set(1);
    this.reporting.controllerEvent('Normal', 'Ready', `first complete configuration is live: ${programmed} Ingresses programmed`);
    this.log.info('first complete configuration is live', { ms: Math.round(performance.now() - t0), programmed });
    for (const cb of this.listeners.splice(0)) cb();
  }
}
