// The gateway reconciler: the only writer to nginx. A thin coordinator over small parts, so data never waits for a
// reload:
//   - the configuration lane (config-lane.ts; model changes other than endpoints, debounced): translate → diff →
//     data delta to Lua, and only when the structure changed render → nginx -t → reload → confirm first
//     (structure-apply.ts), leaving out directive profiles nginx refuses (exclusion.ts, isolate.ts);
//   - the data lane (data-lane.ts; no debounce): EndpointSlice changes pushed to Lua for the affected Services
//     only — also while the configuration lane is in `nginx -t` or a reload.
// Both lanes (each a lane.ts state machine) push through one lock (push-lock.ts) and share what nginx runs and Lua
// holds (nginx-state.ts). On any failure the last good configuration keeps running and the lane retries with
// backoff; a bug that throws is a failed sync + Event (sync-reporting.ts). The first configuration sync waits until
// every initially listed object has been reconciled, so the first configuration nginx serves (and /readyz,
// readiness.ts) reflects the whole cluster, not a partial model.
//
// This class routes model changes to the lanes, starts and stops them with nginx, and keeps the members app/setup.ts,
// the e2e harness and the benchmarks use. It is not an operator/ Reconciler (one key on a work queue): its two lanes
// have their own debounce, backoff and observable state, and must not wait for each other.
import type { EventRecorder } from '../../operator/events.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import type { Logger } from '../../operator/log.ts';
import type { Metrics } from '../../operator/metrics.ts';
import type { Change, Model } from '../model/model.ts';
import type { IngressStatus, TranslateOptions } from '../translate/translate.ts';
import type { IncrementalTranslator } from '../translate/incremental.ts';
import { forbiddenAddressReason } from '../values/addresses.ts';
import type { DataPlane } from '../config/types.ts';
import { CertificateZone } from './certificate-zone.ts';
import { ConfigurationLane } from './config-lane.ts';
import { DataLane } from './data-lane.ts';
import { Exclusion } from './exclusion.ts';
import type { Lane } from './lane.ts';
import { DynamicClient } from './nginx/dynamic.ts';
import { NginxProcess } from './nginx/process.ts';
import { runtimePaths } from './nginx/render.ts';
import { NginxState } from './nginx-state.ts';
import { OwnAddresses } from './own-addresses.ts';
import { PushLock } from './push-lock.ts';
import { Readiness } from './readiness.ts';
import { IngressReporting } from './reporting.ts';
import { ExternalNameResolver } from './resolver.ts';
import { NginxStats } from './stats.ts';
import { StreamServices } from './stream.ts';
import { StructureApplier } from './structure-apply.ts';
import { SyncReporting, type SyncRecord } from './sync-reporting.ts';

export type { SyncRecord } from './sync-reporting.ts';
import { registerCompatMetrics, type RequestMetricsOptions } from './compat-metrics.ts';

export interface GatewayOptions {
  translate: TranslateOptions;
  nginxBinary: string;
  runtimeDir: string;
  /** nginx access log: /dev/stdout or a file. */
  accessLog?: string;
  quietMs: number;
  maxWaitMs: number;
  shutdownTimeoutMs: number;
  /** nginx's stream module (TCP/UDP services); default: Debian's path (nginx-driver/stream.ts). */
  streamModule?: string;
  /**
   * ingress-nginx's metrics (compat-metrics.ts): the controller's constant labels and the per-request options
   * (--enable-metrics and the flags that shape them). Absent: reload metrics with default labels only.
   */
  compatMetrics?: RequestMetricsOptions & { enabled: boolean };
}

export interface GatewayDeps {
  model: Model;
  events: EventRecorder;
  metrics: Metrics;
  log: Logger;
  /** The Ingress object for events (from the informer cache). */
  objectFor: (ref: string) => KubeObject | undefined;
  /** Object that Reload events are recorded on (the controller Pod, or the IngressClass). */
  controllerObject: () => KubeObject | undefined;
  /** Resolves once every initially listed object has been reconciled into the model (default: at once). */
  initialReconciled?: () => Promise<void>;
  /** Whether this replica leads (certificate expiry metrics are the leader's, as ingress-nginx's). */
  isLeader?: () => boolean;
}

export class NginxDriver {
  readonly dynamic: DynamicClient;
  readonly nginx: NginxProcess;
  /** The configuration lane's state machine (`state`, `dirty`: the e2e harness waits on them). */
  readonly structural: Lane;
  /** The data lane's state machine. */
  readonly data: Lane;
  /** Translates only what changed when only Ingresses and HTTPRoutes did (see incremental.ts). */
  readonly translator: IncrementalTranslator;
  private readonly config: ConfigurationLane;
  private readonly endpoints: DataLane;
  private readonly state = new NginxState();
  /** Portico's own addresses and the options the translation runs with. */
  private readonly own: OwnAddresses;
  /** TCP/UDP services and TLS passthrough hosts: rendered into nginx.conf, so their endpoint changes go through the configuration lane. */
  private readonly stream: StreamServices;
  private readonly resolver: ExternalNameResolver;
  /** Events and status of Ingresses and Routes (see reporting.ts). */
  private readonly reporting: IngressReporting;
  /** Metrics, controller Events and the sync history. */
  private readonly syncs: SyncReporting;
  private readonly readiness: Readiness;
  private readonly stats: NginxStats;
  private readonly initialReconciled: (() => Promise<void>) | undefined;
  private started = false;

  constructor(o: GatewayOptions, d: GatewayDeps) {
    const log = d.log.child({ component: 'gateway' });
    this.initialReconciled = d.initialReconciled;
    this.reporting = new IngressReporting(d.events, d.objectFor);
    this.own = new OwnAddresses(o.translate, d.model, log);
    this.stream = new StreamServices(d.model, d.events, log, { own: this.own.addresses, address: o.translate.listen.address, modulePath: o.streamModule, objectFor: d.objectFor });
    this.dynamic = new DynamicClient(); // NginxProcess attaches it to its runtime's API socket
    this.nginx = new NginxProcess(
      { binary: o.nginxBinary, runtime: runtimePaths(o.runtimeDir, { accessLog: o.accessLog }), shutdownTimeoutMs: o.shutdownTimeoutMs },
      this.dynamic,
      d.log,
    );
    this.resolver = new ExternalNameResolver(() => this.config.translateAll(), log, {
      refuse: (a) => forbiddenAddressReason(a, this.own.addresses),
    });
    this.syncs = new SyncReporting(d.metrics, d.events, d.controllerObject, log, o.compatMetrics?.constLabels);
    if (o.compatMetrics) {
      registerCompatMetrics(d.metrics, o.compatMetrics, {
        text: (path) => (this.nginx.isRunning() ? this.dynamic.getText(path) : null),
        stream: (path) => (this.nginx.isRunning() ? this.dynamic.streamText(path) : null),
        masterPid: () => (this.nginx.isRunning() ? (this.nginx.pid ?? null) : null),
        certificates: () => this.state.held.certificates,
        isLeader: () => d.isLeader?.() ?? true,
        model: () => d.model.snapshot(),
      });
    }
    this.readiness = new Readiness(this.nginx, this.syncs, log);
    this.stats = new NginxStats(this.dynamic, this.readiness, this.syncs.m, log);
    const exclusion = new Exclusion();
    const lock = new PushLock();
    this.config = new ConfigurationLane(o, {
      model: d.model,
      state: this.state,
      lock,
      own: this.own,
      stream: this.stream,
      resolver: this.resolver,
      exclusion,
      applier: new StructureApplier(this.nginx, this.state, exclusion, this.syncs, log),
      certificates: new CertificateZone(this.syncs, log),
      nginx: this.nginx,
      dynamic: this.dynamic,
      reporting: this.syncs,
      objects: this.reporting,
      readiness: this.readiness,
      log,
    });
    this.translator = this.config.translator;
    this.endpoints = new DataLane({
      model: d.model,
      state: this.state,
      lock,
      own: this.own.addresses,
      dynamic: this.dynamic,
      translator: this.translator,
      translateAll: () => this.config.translateAll(),
      reporting: this.syncs,
      log,
    });
    this.structural = this.config.lane;
    this.data = this.endpoints.lane;
    d.model.onChange((changes) => this.changed(changes));
    this.nginx.onRestart(() => {
      this.state.dataLost = true;
      log.warn('nginx restarted: re-applying configuration and data');
      this.structural.trigger();
    });
  }

  /** Ingress keys programmed in nginx after the last sync (for status publishing). */
  get programmed(): ReadonlySet<string> {
    return this.reporting.programmed;
  }
  /** The data Lua holds (what was last pushed): read-only, for diagnostics and benchmarks. */
  get heldData(): Readonly<DataPlane> {
    return this.state.held;
  }
  /** Recent syncs, for tests and benchmarks. */
  get history(): SyncRecord[] {
    return this.syncs.history;
  }
  /** Last reported status of a Route (kind-qualified reference), for its status conditions. */
  statusOf(ref: string): IngressStatus | undefined {
    return this.reporting.crdStatus.get(ref);
  }
  /** Called after each sync with the Routes it reported on. */
  onReported(cb: (refs: string[]) => void): void {
    this.reporting.onReported(cb);
  }
  onProgrammedChange(cb: (changed: string[]) => void): void {
    this.reporting.onProgrammedChange(cb);
  }
  /** Called once, when the first complete configuration is live. */
  onReady(cb: () => void): void {
    this.readiness.onReady(cb);
  }
  isReady(): boolean {
    return this.readiness.isReady();
  }

  /** Routes model changes to the lanes: endpoints to the data lane (and stream ones to the configuration lane), the rest to the configuration lane. */
  private changed(changes: Change[]): void {
    let structural = false;
    let streamEndpoints = false;
    if (this.own.touchedBy(changes) && this.own.refresh()) {
      // Every backend, ExternalName answer and auth/mirror target is judged again against the new own addresses.
      this.config.translateEverything();
      this.resolver.recheck();
      structural = true;
    }
    for (const c of changes) {
      if (c.kind === 'EndpointSlice') {
        this.endpoints.noteSlices(c.key);
        this.config.noteSlices(c.key);
        // Endpoints of a TCP/UDP service or a passthrough host live in nginx.conf: a (debounced) structural sync, no
        // full translation.
        if (this.stream.uses(c.key)) streamEndpoints = true;
        continue;
      }
      structural = true;
      this.config.noteChange(c);
    }
    if (!this.started) return; // the first sync (after the initial reconcile) takes everything
    if (structural || streamEndpoints) this.structural.trigger();
    if (this.endpoints.hasPending) this.data.trigger();
  }

  /** Runs until the signal aborts, then stops nginx gracefully. */
  async run(signal: AbortSignal): Promise<void> {
    this.nginx.prepare();
    const gate = this.initialReconciled?.() ?? Promise.resolve();
    await Promise.race([gate, new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }))]);
    if (!signal.aborted) {
      this.started = true;
      this.endpoints.clear(); // the first structural sync computes every endpoint from the model
      this.structural.trigger();
      this.stats.start();
      await new Promise<void>((r) => (signal.aborted ? r() : signal.addEventListener('abort', () => r(), { once: true })));
    }
    this.stats.stop();
    this.structural.stop();
    this.data.stop();
    this.resolver.stop();
    await Promise.all([this.structural.idle(), this.data.idle()]);
    await this.nginx.stop();
  }

  /** Runs pending work in both lanes now (tests, benchmarks). */
  async flush(): Promise<void> {
    if (!this.started) return;
    this.structural.trigger();
    await this.structural.flush();
    await this.data.flush();
  }
}
