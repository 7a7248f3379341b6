// Leader election on a coordination.k8s.io/v1 Lease, following client-go's algorithm:
//   - a candidate takes the lease when it is free, expired, or already its own;
//   - expiry is judged by this process's own clock from the moment it last SAW the record change (not the
//     renewTime written by the holder), so clock skew between replicas does not matter;
//   - the leader renews every retryPeriod; if it cannot renew within renewDeadline it steps down;
//   - on graceful stop the leader releases the lease (empty holder) so another replica takes over at once.
// What leadership gates is the application's choice (e.g. only status writes, while every replica does the rest).
import { isConflict, isNotFound, type KubeClient } from './kube/client.ts';
import { resourcePath, FrameworkResources } from './kube/resources.ts';
import { sleep } from './backoff.ts';
import { describe } from './informer.ts';
import type { Logger } from './log.ts';
import type { Metrics } from './metrics.ts';

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}
interface Lease {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: LeaseSpec;
}

const microTime = (d = new Date()): string => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export class LeaderElector {
  private readonly o: LeaderElectionOptions;
  private readonly client: KubeClient;
  private readonly log: Logger;
  private readonly metrics: Metrics | undefined;
  private leading = false;
  private observed: { record: string; at: number } | undefined;
  private lastRenew = 0;
  private current: Lease | undefined;
  private readonly startedListeners: (() => void)[] = [];
  private readonly stoppedListeners: (() => void)[] = [];

  constructor(client: KubeClient, o: LeaderElectionOptions, log: Logger, metrics?: Metrics) {
    if (!(o.leaseDurationMs > o.renewDeadlineMs && o.renewDeadlineMs > o.retryPeriodMs)) {
      throw new Error('leader election needs leaseDuration > renewDeadline > retryPeriod');
    }
    this.client = client;
    this.o = o;
    this.log = log.child({ component: 'leader-election', lease: `${o.namespace}/${o.name}`, identity: o.identity });
    this.metrics = metrics;
  }

  isLeader(): boolean {
    return this.leading;
  }

  onStartedLeading(cb: () => void): void {
    this.startedListeners.push(cb);
  }
  onStoppedLeading(cb: () => void): void {
    this.stoppedListeners.push(cb);
  }

  /** Campaigns and renews until the signal aborts; then releases the lease if held. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let ok = false;
      try {
        ok = await this.tryAcquireOrRenew(signal);
      } catch (e) {
        if (!signal.aborted) this.log.warn('lease update failed', { error: describe(e) });
      }
      const now = performance.now();
      if (ok) {
        this.lastRenew = now;
        if (!this.leading) this.setLeading(true);
      } else if (this.leading && now - this.lastRenew > this.o.renewDeadlineMs) {
        this.log.warn('could not renew the lease within the renew deadline, stepping down');
        this.setLeading(false);
      }
      // Followers poll with jitter; the leader renews on the retry period.
      const wait = this.leading ? this.o.retryPeriodMs : this.o.retryPeriodMs * (1 + Math.random() * 0.2);
      await sleep(wait, signal);
    }
    if (this.leading) await this.release();
  }

  private setLeading(v: boolean): void {
    this.leading = v;
    this.metrics?.leader.set(v ? 1 : 0);
    this.log.info(v ? 'became leader' : 'stopped leading');
    for (const cb of v ? this.startedListeners : this.stoppedListeners) {
      try {
        cb();
      } catch (e) {
        this.log.error('leader callback threw', { error: describe(e) });
      }
    }
  }

  private path(): string {
    return resourcePath(FrameworkResources.Lease, this.o.namespace, this.o.name);
  }

  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const now = new Date();
    const wanted: LeaseSpec = {
      holderIdentity: this.o.identity,
      leaseDurationSeconds: Math.round(this.o.leaseDurationMs / 1000),
      renewTime: microTime(now),
    };
    let lease: Lease;
    try {
      lease = await this.client.request<Lease>('GET', this.path(), { signal, timeoutMs: this.o.retryPeriodMs * 2 });
    } catch (e) {
      if (!isNotFound(e)) throw e;
      const created: Lease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: this.o.name, namespace: this.o.namespace },
        spec: { ...wanted, acquireTime: microTime(now), leaseTransitions: 0 },
      };
      try {
        this.current = await this.client.request<Lease>('POST', resourcePath(FrameworkResources.Lease, this.o.namespace), {
          body: created,
          signal,
        });
      } catch (err) {
        if (isConflict(err)) return false;
        throw err;
      }
      this.observe(this.current);
      return true;
    }
    this.observe(lease);
    const holder = lease.spec.holderIdentity ?? '';
    const mine = holder === this.o.identity;
    if (!mine && holder !== '') {
      const durMs = (lease.spec.leaseDurationSeconds ?? 15) * 1000;
      const seenAt = this.observed?.at ?? performance.now();
      if (performance.now() - seenAt < durMs) return false; // held by someone else and not expired
    }
    const spec: LeaseSpec = mine
      ? { ...lease.spec, ...wanted }
      : {
          ...wanted,
          acquireTime: microTime(now),
          leaseTransitions: (lease.spec.leaseTransitions ?? 0) + (holder === '' && !lease.spec.acquireTime ? 0 : 1),
        };
    try {
      this.current = await this.client.request<Lease>('PUT', this.path(), {
        body: { ...lease, spec },
        signal,
        timeoutMs: this.o.retryPeriodMs * 2,
      });
    } catch (e) {
      if (isConflict(e)) return false;
      throw e;
    }
    this.observe(this.current);
    return true;
  }

  /** Remembers when the record (holder + renewTime) last changed, on our own monotonic clock. */
  private observe(lease: Lease): void {
    const record = `${lease.spec.holderIdentity ?? ''}|${lease.spec.renewTime ?? ''}|${lease.spec.leaseTransitions ?? 0}`;
    if (this.observed?.record !== record) this.observed = { record, at: performance.now() };
  }

  private async release(): Promise<void> {
    this.setLeading(false);
    const lease = this.current;
    if (!lease || lease.spec.holderIdentity !== this.o.identity) return;
    try {
      await this.client.request('PUT', this.path(), {
        body: {
          ...lease,
          spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime() },
        },
        timeoutMs: 5_000,
      });
      this.log.info('released the lease');
    } catch (e) {
      this.log.warn('could not release the lease', { error: describe(e) });
    }
  }
}
