// The manager: owns the shared informers (one per kind+scope), the controllers, leader election, the event
// recorder and the health server. Start order, stage by stage (stage 0 first): the stage's informers → wait for
// their caches to sync → its controllers → wait until every initially listed key was reconciled once → next
// stage; then the runnables. Stages let a later informer depend on what earlier controllers wrote (e.g. an
// ingress controller lists TLS Secrets only once every Ingress is in its model, so each Secret's data is kept or
// dropped correctly at list time instead of being fetched one GET at a time afterwards).
// Stop order (SIGTERM): readiness turns false, an optional grace period lets load balancers notice, then stop
// taking keys, let in-flight reconciles finish, flush events, release the lease.
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
import type { Metrics } from './metrics.ts';
import type { Logger } from './log.ts';

export interface ManagerOptions {
  client: KubeClient;
  log: Logger;
  /** The framework's metrics; the application names them (its prefix) and may add its own to the registry. */
  metrics: Metrics;
  /** Namespace the application runs in: the Lease lives here, and events about cluster-scoped objects. */
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
  private readonly informerStage = new Map<Informer<KubeObject>, number>();
  private readonly controllers: Controller[] = [];
  private readonly controllerStage = new Map<Controller, number>();
  private initialDone = false;
  private readonly initialWaiters: (() => void)[] = [];
  private draining = false;
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
    this.metrics = o.metrics;
    this.identity = o.identity ?? `${hostname()}_${randomUUID().slice(0, 8)}`;
    this.events = new EventRecorder(
      o.client,
      { reportingController: o.reportingController, reportingInstance: this.identity },
      o.log,
      this.metrics,
    );
    if (o.leaderElection) {
      // Its own rate limit (none), as controller-runtime does: a lease renewal must never queue behind status writes
      // or Secret reads in the shared token bucket — that is how a busy leader loses its lease.
      this.leader = new LeaderElector(
        o.client.withRateLimit(false),
        { ...o.leaderElection, namespace: o.namespace, identity: this.identity },
        o.log,
        this.metrics,
      );
    }
    this.readyChecks.set('informers-synced', () => this.synced);
    this.readyChecks.set('initial-reconcile', () => this.initialDone);
    this.readyChecks.set('not-draining', () => !this.draining && !this.stopping);
    this.healthChecks.set('manager', () => !this.stopping);
  }

  /** The shared informer for a kind (and optional namespace / selectors): created once, shared by all users. */
  informer<T extends KubeObject>(resource: ResourceType, allOpts: InformerOptions<T> & { stage?: number } = {}): Informer<T> {
    const { stage = 0, ...opts } = allOpts;
    const id = [resource.group, resource.version, resource.plural, opts.namespace ?? '', opts.labelSelector ?? '', opts.fieldSelector ?? ''].join('|');
    let inf = this.informers.get(id) as Informer<T> | undefined;
    if (!inf) {
      if (this.started) throw new Error(`informer for ${resource.plural} requested after start`);
      inf = new Informer<T>(this.client, resource, this.log.child({ informer: resource.kind }), this.metrics, {
        ...this.o.informerDefaults,
        ...opts,
      });
      this.informers.set(id, inf as unknown as Informer<KubeObject>);
      this.informerStage.set(inf as unknown as Informer<KubeObject>, stage);
    } else if (opts.indexers) {
      inf.addIndexers(opts.indexers);
    }
    return inf;
  }

  /** `stage`: the controller starts with the informers of that stage (see the file comment). */
  controller(opts: ControllerOptions & { stage?: number }): Controller {
    const c = new Controller(opts, this.log, this.metrics);
    this.controllers.push(c);
    this.controllerStage.set(c, opts.stage ?? 0);
    return c;
  }

  /** Resolves once every stage's initially listed objects were reconciled once (see `start`). */
  initialReconciled(): Promise<void> {
    if (this.initialDone) return Promise.resolve();
    return new Promise((r) => this.initialWaiters.push(r));
  }

  /** Anything else that should run between start and stop (e.g. a data-plane process the application supervises). */
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
        metrics: () => this.metrics.exposition(),
        contentType: this.metrics.registry.contentType,
        ready: () => Object.fromEntries([...this.readyChecks].map(([k, f]) => [k, f()])),
        healthy: () => Object.fromEntries([...this.healthChecks].map(([k, f]) => [k, f()])),
      });
    }
    const tasks: Promise<void>[] = [];
    if (this.leader) tasks.push(this.leader.run(this.controllerAbort.signal));
    const t0 = performance.now();
    const stages = [...new Set([...this.informerStage.values(), ...this.controllerStage.values()])].sort((a, b) => a - b);
    const signal = this.informerAbort.signal;
    const drains: Promise<void>[] = [];
    for (const stage of stages) {
      const infs = [...this.informerStage].filter(([, s]) => s === stage).map(([i]) => i);
      for (const inf of infs) tasks.push(inf.run(signal));
      const ok = await Promise.all(infs.map((i) => i.waitForSync(signal)));
      if (ok.includes(false)) return;
      const ctrls = [...this.controllerStage].filter(([, s]) => s === stage).map(([c]) => c);
      // Capture each controller's initial keys before its workers take any.
      const stageDrain = Promise.all(ctrls.map((c) => c.initialReconciled())).then(() => undefined);
      for (const c of ctrls) tasks.push(c.run(this.controllerAbort.signal));
      drains.push(stageDrain);
      if (stage !== stages[stages.length - 1]) {
        if (!(await this.awaitDrain(stageDrain, `stage ${stage}`))) return;
      }
    }
    this.synced = true;
    this.log.info('caches synced', { informers: [...this.informers.values()].map((i) => i.resource.kind), ms: Math.round(performance.now() - t0) });
    void this.awaitDrain(Promise.all(drains).then(() => undefined), 'all stages').then((ok) => {
      if (!ok) return;
      this.initialDone = true;
      this.log.info('initial objects reconciled', { ms: Math.round(performance.now() - t0) });
      for (const w of this.initialWaiters.splice(0)) w();
    });
    for (const r of this.runnables) {
      tasks.push(
        r.run(this.controllerAbort.signal).catch((e: unknown) => {
          this.log.error('runnable failed', { runnable: r.name, error: describe(e) });
          // A runnable that gave up (e.g. a data-plane process cannot start) leaves a process that can never serve: /healthz
          // fails, so a liveness probe restarts it instead of it sitting unready forever.
          if (!this.controllerAbort.signal.aborted) this.healthChecks.set(`runnable-${r.name}`, () => false);
        }),
      );
    }
    this.runPromise = Promise.all(tasks).then(() => undefined);
  }

  /**
   * Waits for initial reconciliation; false if the manager stops first. Logs (once a minute) when it takes long —
   * a reconcile that never returns would otherwise hold the start silently.
   */
  private async awaitDrain(p: Promise<void>, what: string): Promise<boolean> {
    const signal = this.informerAbort.signal;
    if (signal.aborted) return false;
    let timer: NodeJS.Timeout | undefined;
    const t0 = performance.now();
    const stopped = new Promise<false>((r) => signal.addEventListener('abort', () => r(false), { once: true }));
    timer = setInterval(() => this.log.warn('still waiting for the initial reconcile', { what, ms: Math.round(performance.now() - t0) }), 60_000);
    timer.unref();
    try {
      return await Promise.race([p.then(() => true as const), stopped]);
    } finally {
      clearInterval(timer);
      timer = undefined;
    }
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

  /**
   * Installs SIGTERM/SIGINT handlers: readiness turns false at once, then after `gracePeriodMs` (time for the
   * Service's endpoints and any external load balancer to stop sending new connections) the manager stops — runnables
   * see their signal abort and drain as part of that — and the process exits.
   */
  handleSignals(gracePeriodMs = 0, onStopped: () => void = () => process.exit(0)): void {
    const handler = (sig: string) => {
      this.draining = true;
      this.log.info('signal received, not ready any more; shutting down', { signal: sig, gracePeriodMs });
      const t = setTimeout(() => void this.stop().then(onStopped), gracePeriodMs);
      // A second signal skips the grace period.
      process.once(sig as NodeJS.Signals, () => {
        clearTimeout(t);
        void this.stop().then(onStopped);
      });
    };
    process.once('SIGTERM', () => handler('SIGTERM'));
    process.once('SIGINT', () => handler('SIGINT'));
  }
}
