// The manager: owns the shared informers (one per kind+scope), the controllers, leader election, the event
// recorder and the health server. Start order: informers → wait for every cache to sync → controllers.
// Stop order (SIGTERM): stop taking keys, let in-flight reconciles finish, flush events, release the lease.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { KubeClient } from './kube/client.ts';
import type { KubeObject } from './kube/object.ts';
import type { ResourceType } from './kube/resources.ts';
import { Informer, describe, type InformerOptions } from './informer.ts';
import { Controller, type ControllerOptions } from './controller.ts';
import { LeaderElector, type LeaderElectionOptions } from './leaderelection.ts';
import { EventRecorder } from './events.ts';
import { startHealthServer } from './health.ts';
import { Metrics } from './metrics.ts';
import type { Logger } from './log.ts';

export interface ManagerOptions {
  client: KubeClient;
  log: Logger;
  metrics?: Metrics;
  /** Namespace Portico runs in: the Lease lives here, and events about cluster-scoped objects. */
  namespace: string;
  reportingController: string;
  identity?: string;
  /** false disables leader election (this replica always leads). */
  leaderElection: Omit<LeaderElectionOptions, 'identity' | 'namespace'> | false;
  health?: { host: string; port: number };
  informerDefaults?: Pick<InformerOptions<KubeObject>, 'stallTimeoutMs' | 'watchTimeoutSeconds' | 'backoff'>;
}

type Runnable = { name: string; run: (signal: AbortSignal) => Promise<void> };

export class Manager {
  readonly client: KubeClient;
  readonly log: Logger;
  readonly metrics: Metrics;
  readonly identity: string;
  readonly events: EventRecorder;
  readonly leader: LeaderElector | undefined;
  private readonly o: ManagerOptions;
  private readonly informers = new Map<string, Informer<KubeObject>>();
  private readonly controllers: Controller[] = [];
  private readonly runnables: Runnable[] = [];
  private readonly readyChecks = new Map<string, () => boolean>();
  private readonly healthChecks = new Map<string, () => boolean>();
  private readonly informerAbort = new AbortController();
  private readonly controllerAbort = new AbortController();
  private server: http.Server | undefined;
  private started = false;
  private synced = false;
  private stopping: Promise<void> | undefined;
  private runPromise: Promise<void> | undefined;

  constructor(o: ManagerOptions) {
    this.o = o;
    this.client = o.client;
    this.log = o.log;
    this.metrics = o.metrics ?? new Metrics();
    this.identity = o.identity ?? `${hostname()}_${randomUUID().slice(0, 8)}`;
    this.events = new EventRecorder(
      o.client,
      { reportingController: o.reportingController, reportingInstance: this.identity, defaultNamespace: o.namespace },
      o.log,
      this.metrics,
    );
    if (o.leaderElection) {
      this.leader = new LeaderElector(
        o.client,
        { ...o.leaderElection, namespace: o.namespace, identity: this.identity },
        o.log,
        this.metrics,
      );
    }
    this.readyChecks.set('informers-synced', () => this.synced);
    this.healthChecks.set('manager', () => !this.stopping);
  }

  /** The shared informer for a kind (and optional namespace / selectors): created once, shared by all users. */
  informer<T extends KubeObject>(resource: ResourceType, opts: InformerOptions<T> = {}): Informer<T> {
    const id = [resource.group, resource.version, resource.plural, opts.namespace ?? '', opts.labelSelector ?? '', opts.fieldSelector ?? ''].join('|');
    let inf = this.informers.get(id) as Informer<T> | undefined;
    if (!inf) {
      if (this.started) throw new Error(`informer for ${resource.plural} requested after start`);
      inf = new Informer<T>(this.client, resource, this.log.child({ informer: resource.kind }), this.metrics, {
        ...this.o.informerDefaults,
        ...opts,
      });
      this.informers.set(id, inf as unknown as Informer<KubeObject>);
    } else if (opts.indexers) {
      inf.addIndexers(opts.indexers);
    }
    return inf;
  }

  controller(opts: ControllerOptions): Controller {
    const c = new Controller(opts, this.log, this.metrics);
    this.controllers.push(c);
    return c;
  }

  /** Anything else that should run between start and stop (e.g. the gateway reconciler's nginx). */
  add(name: string, run: (signal: AbortSignal) => Promise<void>): void {
    this.runnables.push({ name, run });
  }

  addReadyCheck(name: string, fn: () => boolean): void {
    this.readyChecks.set(name, fn);
  }
  addHealthCheck(name: string, fn: () => boolean): void {
    this.healthChecks.set(name, fn);
  }

  isLeader(): boolean {
    return this.leader ? this.leader.isLeader() : true;
  }

  isSynced(): boolean {
    return this.synced;
  }

  /** Starts everything; resolves once caches are synced and controllers run. `done()` resolves at stop. */
  async start(): Promise<void> {
    if (this.started) throw new Error('manager already started');
    this.started = true;
    if (this.o.health) {
      this.server = await startHealthServer(this.o.health.host, this.o.health.port, {
        registry: this.metrics.registry,
        ready: () => Object.fromEntries([...this.readyChecks].map(([k, f]) => [k, f()])),
        healthy: () => Object.fromEntries([...this.healthChecks].map(([k, f]) => [k, f()])),
      });
    }
    const tasks: Promise<void>[] = [];
    for (const inf of this.informers.values()) tasks.push(inf.run(this.informerAbort.signal));
    if (this.leader) tasks.push(this.leader.run(this.controllerAbort.signal));
    const t0 = performance.now();
    const all = [...this.informers.values()];
    const ok = await Promise.all(all.map((i) => i.waitForSync(this.informerAbort.signal)));
    if (ok.includes(false)) return;
    this.synced = true;
    this.log.info('caches synced', { informers: all.map((i) => i.resource.kind), ms: Math.round(performance.now() - t0) });
    for (const c of this.controllers) tasks.push(c.run(this.controllerAbort.signal));
    for (const r of this.runnables) {
      tasks.push(
        r.run(this.controllerAbort.signal).catch((e: unknown) => {
          this.log.error('runnable failed', { runnable: r.name, error: describe(e) });
        }),
      );
    }
    this.runPromise = Promise.all(tasks).then(() => undefined);
  }

  /** Graceful stop: controllers drain, runnables stop, the lease is released, events are flushed. */
  stop(): Promise<void> {
    if (!this.stopping) this.stopping = this.doStop();
    return this.stopping;
  }

  private async doStop(): Promise<void> {
    this.log.info('stopping');
    this.controllerAbort.abort();
    this.informerAbort.abort();
    await this.runPromise;
    await this.events.flushAll();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
    this.server?.closeAllConnections();
    this.log.info('stopped');
  }

  /** Installs SIGTERM/SIGINT handlers that stop the manager gracefully, then exit. */
  handleSignals(onStopped: () => void = () => process.exit(0)): void {
    const handler = (sig: string) => {
      this.log.info('signal received, shutting down', { signal: sig });
      void this.stop().then(onStopped);
    };
    process.once('SIGTERM', () => handler('SIGTERM'));
    process.once('SIGINT', () => handler('SIGINT'));
  }
}
