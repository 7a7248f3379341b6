// nginx-side counters (shared-memory write failures, refused endpoints) polled from the Lua side into metrics, every
// 15 s while the gateway is ready.
import { describe } from '../../operator/informer.ts';
import type { Logger } from '../../operator/log.ts';
import type { DynamicClient } from './nginx/dynamic.ts';
import type { Readiness } from './readiness.ts';
import type { GatewayMetrics } from './metrics.ts';

const POLL_MS = 15_000;

export class NginxStats {
  private timer: NodeJS.Timeout | undefined;
  private lastDictFailures = 0;
  private readonly dynamic: DynamicClient;
  private readonly readiness: Readiness;
  private readonly m: GatewayMetrics;
  private readonly log: Logger;

  constructor(dynamic: DynamicClient, readiness: Readiness, m: GatewayMetrics, log: Logger) {
    this.dynamic = dynamic;
    this.readiness = readiness;
    this.m = m;
    this.log = log;
  }

  start(): void {
    this.timer = setInterval(() => void this.poll(), POLL_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private async poll(): Promise<void> {
    if (!this.readiness.isReady()) return;
    try {
      const c = await this.dynamic.getConfig();
      this.m.dictFailures.set({ dict: 'data' }, c.dictFailures.data);
      this.m.dictFailures.set({ dict: 'certs' }, c.dictFailures.certs);
      this.m.dictFailures.set({ dict: 'metrics' }, c.dictFailures.metrics);
      this.m.rejectedEndpoints.set(c.rejectedEndpoints);
      this.m.tracingDropped.set(c.tracingDropped);
      this.m.rateLimitStoreFailures.set({ outcome: 'open' }, c.rateLimitStoreFailures.open);
      this.m.rateLimitStoreFailures.set({ outcome: 'closed' }, c.rateLimitStoreFailures.closed);
      const total = c.dictFailures.data + c.dictFailures.certs;
      if (total > this.lastDictFailures) this.log.warn('nginx shared memory is full: some writes were refused (raise lua-shared-dicts)', { failures: c.dictFailures });
      this.lastDictFailures = total;
    } catch (e) {
      this.log.debug('could not read nginx counters', { error: describe(e) });
    }
  }
}
