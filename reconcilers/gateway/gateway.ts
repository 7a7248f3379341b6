// The gateway reconciler: the only writer to nginx. It runs two lanes (see lane.ts), so data never waits for a
// reload:
//   - the configuration lane (model changes other than endpoints): translates the model (pure), diffs the result
//     against what nginx runs and pushes the data delta — routes, backends, certificates — to Lua. Only when the
//     structure changed (listeners, global settings, a never-seen directive profile) does it first render
//     nginx.conf, validate it with `nginx -t` (finding and leaving out a profile that breaks it), swap it, reload
//     and confirm the new generation is live. Adding, changing or removing an Ingress is data;
//   - the data lane (no debounce; coalesces what arrives while a push is in flight): EndpointSlice changes are
//     turned into backend updates for the affected Services only and pushed to Lua — also while the structural
//     lane is in `nginx -t` or a reload.
// Both lanes push through one lock, and every push computes endpoints from the model at the moment it holds the
// lock, so the last push always carries the newest endpoints whichever lane made it. On any failure the last good
// configuration keeps running and the lane retries with backoff; a bug that throws is a failed sync + Event.
// The first structural sync waits until every initially listed object has been reconciled, so the first
// configuration nginx serves (and /readyz) reflects the whole cluster, not a partial model.
import type { EventRecorder } from '../../operator/events.ts';
import { describe } from '../../operator/informer.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import type { Logger } from '../../operator/log.ts';
import type { Metrics } from '../../operator/metrics.ts';
import type { Change, Model } from '../model/model.ts';
import { diffConfig, isEmptyDelta } from '../translate/diff.ts';
import type { IngressStatus, TranslateOptions } from '../translate/translate.ts';
import { IncrementalTranslator } from '../translate/incremental.ts';
import { IngressReporting } from './reporting.ts';
import { resolveExternalNames } from './externalnames.ts';
import { endpointUpdates } from './endpoint-updates.ts';
import { forbiddenAddressReason } from '../values/addresses.ts';
import type { Backend, DataPlane, GatewayConfig, Structure } from '../config/types.ts';
import { Lane } from './lane.ts';
import { DynamicClient, type PushResult } from './nginx/dynamic.ts';
import { NginxProcess } from './nginx/process.ts';
import { runtimePaths } from './nginx/render.ts';
import { ExternalNameResolver } from './resolver.ts';
import { StreamServices } from './stream.ts';
import { PushLock } from './push-lock.ts';
import { emptyData, heldWithout, NginxState } from './nginx-state.ts';
import { SyncReporting, type SyncRecord } from './sync-reporting.ts';
import { Readiness } from './readiness.ts';
import { NginxStats } from './stats.ts';
import { Exclusion } from './exclusion.ts';
import { CertificateZone } from './certificate-zone.ts';
import { OwnAddresses } from './own-addresses.ts';
import { DiffScope } from './diff-scope.ts';
import { StructureApplier } from './structure-apply.ts';
import { DataLane } from './data-lane.ts';

export type { SyncRecord } from './sync-reporting.ts';

export interface GatewayOptions {
  translate: TranslateOptions;
  nginxBinary: string;
  runtimeDir: string;
  /** nginx access log: /dev/stdout or a file. */
  accessLog?: string;
  quietMs: number;
  maxWaitMs: number;
  shutdownTimeoutMs: number;
  /** nginx's stream module (TCP/UDP services); default: Debian's path (gateway/stream.ts). */
  streamModule?: string;
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
}

export class GatewayReconciler {
  private readonly o: GatewayOptions;
  private readonly d: GatewayDeps;
  private readonly log: Logger;
  readonly dynamic: DynamicClient;
  readonly nginx: NginxProcess;
  readonly structural: Lane;
  readonly data: Lane;
  /** What nginx runs and Lua holds. */
  private readonly state = new NginxState();
  private readonly lock = new PushLock();
  /** The data lane: endpoint updates. */
  private readonly endpoints: DataLane;
  /** Services whose EndpointSlices changed since the running configuration sync translated the model. */
  private slicesSinceTranslate: Set<string> | null = null;
  /** Translates only what changed when only Ingresses did (see incremental.ts). */
  readonly translator = new IncrementalTranslator();
  /** Ingresses changed since the last translation; null = something else changed too (translate everything). */
  private changedIngresses: Set<string> | null = null;
  private started = false;
  private readonly scope = new DiffScope();
  /** Portico's own addresses and the options the translation runs with. */
  private readonly own: OwnAddresses;
  /**
   * TCP/UDP services and TLS passthrough hosts: rendered into nginx.conf, so their endpoint changes go through this
   * (structural) lane.
   */
  private readonly stream: StreamServices;
  /** Metrics, controller Events and the sync history. */
  private readonly syncs: SyncReporting;
  private readonly readiness: Readiness;
  private readonly stats: NginxStats;
  private readonly resolver: ExternalNameResolver;
  private readonly exclusion = new Exclusion();
  private readonly certificates: CertificateZone;
  /** render → nginx -t → reload → confirm. */
  private readonly applier: StructureApplier;
  /** Events and status of Ingresses (see reporting.ts). */
  private readonly reporting: IngressReporting;
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

  constructor(o: GatewayOptions, d: GatewayDeps) {
    this.o = o;
    this.d = d;
    this.log = d.log.child({ component: 'gateway' });
    this.reporting = new IngressReporting(d.events, d.objectFor);
    this.own = new OwnAddresses(o.translate, d.model, this.log);
    this.stream = new StreamServices(d.model, d.events, this.log, { own: this.own.addresses, address: o.translate.listen.address, modulePath: o.streamModule, objectFor: d.objectFor });
    this.dynamic = new DynamicClient(); // NginxProcess attaches it to its runtime's API socket
    this.nginx = new NginxProcess(
      { binary: o.nginxBinary, runtime: runtimePaths(o.runtimeDir, { accessLog: o.accessLog }), shutdownTimeoutMs: o.shutdownTimeoutMs },
      this.dynamic,
      d.log,
    );
    this.structural = new Lane(
      { quietMs: o.quietMs, maxWaitMs: o.maxWaitMs, retryInitialMs: 500, retryMaxMs: 30_000 },
      {
        run: () => this.syncStructure(),
        onError: (e) => this.syncs.laneCrashed('structural', e),
        onRetry: (ms) => this.log.warn('structural sync failed, retrying', { retryInMs: ms }),
      },
    );
    this.resolver = new ExternalNameResolver(() => this.translateAll(), this.log, {
      refuse: (a) => forbiddenAddressReason(a, this.own.addresses),
    });
    this.syncs = new SyncReporting(d.metrics, d.events, d.controllerObject, this.log);
    this.readiness = new Readiness(this.nginx, this.syncs, this.log);
    this.stats = new NginxStats(this.dynamic, this.readiness, this.syncs.m, this.log);
    this.certificates = new CertificateZone(this.syncs, this.log);
    this.applier = new StructureApplier(this.nginx, this.state, this.exclusion, this.syncs, this.log);
    this.endpoints = new DataLane({
      model: d.model,
      state: this.state,
      lock: this.lock,
      own: this.own.addresses,
      dynamic: this.dynamic,
      translator: this.translator,
      translateAll: () => this.translateAll(),
      reporting: this.syncs,
      log: this.log,
    });
    this.data = this.endpoints.lane;
    d.model.onChange((changes) => this.changed(changes));
    this.nginx.onRestart(() => {
      this.state.dataLost = true;
      this.log.warn('nginx restarted: re-applying configuration and data');
      this.structural.trigger();
    });
  }

  private changed(changes: Change[]): void {
    let structural = false;
    let streamEndpoints = false;
    if (this.own.touchedBy(changes) && this.own.refresh()) {
      // Every backend, ExternalName answer and auth/mirror target is judged again against the new own addresses.
      this.changedIngresses = null;
      this.resolver.recheck();
      structural = true;
    }
    for (const c of changes) {
      if (c.kind === 'EndpointSlice') {
        this.endpoints.noteSlices(c.key);
        this.slicesSinceTranslate?.add(c.key);
        // Endpoints of a TCP/UDP service or a passthrough host live in nginx.conf: a (debounced) structural sync, no
        // full translation.
        if (this.stream.uses(c.key)) streamEndpoints = true;
        continue;
      }
      structural = true;
      if (c.kind === 'Ingress') this.changedIngresses?.add(c.key);
      else if (c.kind !== 'Stream') this.changedIngresses = null;
    }
    if (!this.started) return; // the first sync (after the initial reconcile) takes everything
    if (structural || streamEndpoints) this.structural.trigger();
    if (this.endpoints.hasPending) this.data.trigger();
  }

  /** Next sync translates everything (something other than Ingresses changed, e.g. an ExternalName's answer). */
  private translateAll(): void {
    this.changedIngresses = null;
    this.structural.trigger();
  }

  isReady(): boolean {
    return this.readiness.isReady();
  }

  /** Runs until the signal aborts, then stops nginx gracefully. */
  async run(signal: AbortSignal): Promise<void> {
    this.nginx.prepare();
    const gate = this.d.initialReconciled?.() ?? Promise.resolve();
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

  /** Structural lane: full translation; reload when the structure changed; then the data delta. */
  private async syncStructure(): Promise<boolean> {
    const t0 = performance.now();
    let reload = false;
    let reasons: string[] = [];
    let bytes = 0;
    let ok = false;
    try {
      this.slicesSinceTranslate = new Set();
      const changed = this.changedIngresses;
      this.changedIngresses = new Set();
      let result;
      try {
        result = this.translator.translate(this.d.model.snapshot(), this.own.options, changed);
      } catch (e) {
        this.changedIngresses = null;
        throw e;
      }
      this.scope.widen(result.touched);
      // The translator keeps its result to build the next one on: work on shallow copies, never on it.
      const desired: GatewayConfig = { structure: this.stream.apply(result.config.structure), data: { ...result.config.data } };
      const events = [...result.events, ...resolveExternalNames(desired, this.resolver, this.d.model, this.scope.current?.backends)];
      const status = this.exclusion.size ? new Map(result.status) : result.status;
      // Profiles excluded earlier stay out (same name = same content = same verdict) while routes still use them.
      this.exclusion.prune(desired.structure);
      this.exclusion.apply(desired, events, status);
      const running = this.state.running();
      const diff = diffConfig(running, desired);
      // (A master that died is restarted by the supervisor, which then triggers this lane; never start a second one.)
      reload = diff.reload;
      reasons = diff.reasons;
      let structureOk = true;
      if (reload) {
        structureOk = await this.applier.apply(desired, running);
        // Newly found culprits are out of the structure now; their routes go too.
        this.exclusion.apply(desired, events, status);
        if (!structureOk) {
          if (!this.state.structure || !this.nginx.isRunning()) return false;
          // The running nginx.conf stays. Everything it can serve is still pushed — a ConfigMap value nginx
          // refuses must not hold back every Ingress — except routes that need a profile it does not have.
          desired.data.routes = this.servableRoutes(desired.data.routes, this.state.structure);
          this.scope.invalidate();
        }
      } else if (this.state.dataLost && this.state.checksum) {
        // nginx was restarted by the supervisor: wait for it before re-sending all data.
        if (!(await this.nginx.waitLive(this.state.checksum))) return false;
      }
      bytes = await this.lock.run(async () => {
        // Endpoints may have moved on since the translation (the data lane kept pushing): take those Services' from
        // the model now. (Whatever else changed announced itself through the model and has its own sync queued.)
        const moved = this.slicesSinceTranslate ?? new Set<string>();
        this.slicesSinceTranslate = null;
        let fresh: Record<string, Backend> = {};
        if (moved.size) {
          fresh = endpointUpdates(this.d.model, desired.data.backends, moved, this.own.addresses).upsert;
          desired.data.backends = { ...desired.data.backends, ...fresh };
          for (const id of Object.keys(fresh)) this.scope.current?.backends.add(id);
        }
        const base = this.state.dataLost ? emptyData() : this.state.held;
        const scope = this.state.dataLost || this.exclusion.size || this.certificates.missing.length ? null : this.scope.current;
        const delta = diffConfig({ structure: desired.structure, data: base }, desired, scope).delta;
        let n = 0;
        let pushed: PushResult = { bytes: 0 };
        if (!isEmptyDelta(delta)) {
          try {
            pushed = await this.dynamic.pushData(delta);
            n = pushed.bytes;
          } catch (e) {
            this.syncs.m.dynamic.inc({ result: 'failure' });
            throw e;
          }
          this.syncs.m.dynamic.inc({ result: 'success' });
          this.syncs.m.dynamicBytes.inc(n);
        }
        // Certificates a full zone refused are not held: the next sync sends them again (routes went anyway).
        this.state.held = pushed.notStored ? heldWithout(desired.data, base, pushed.notStored) : desired.data;
        this.certificates.update(pushed.notStored, desired.data);
        this.state.dataLost = false;
        this.translator.patchBackends(fresh);
        return n;
      });
      // What Lua holds is now exactly `desired`: the next diff needs only what changes from here.
      const ended = this.scope.restart();
      const reported = this.exclusion.size ? null : ended;
      if (!structureOk) return false; // the reload is retried with backoff; the data is live
      ok = true;
      // The first sync after a start programs everything at once: one event on the controller instead of a
      // "Programmed" event per Ingress (a restart at 10k Ingresses would otherwise post 10k events).
      this.reporting.report(events, status, reported?.objects ?? null, reload, this.readiness.reached);
      this.readiness.reach(this.programmed.size, t0);
      return true;
    } catch (e) {
      this.syncs.m.failures.inc({ lane: 'structural' });
      this.log.error('sync failed', { error: describe(e) });
      return false;
    } finally {
      const ms = performance.now() - t0;
      this.syncs.m.syncs.observe({ kind: reload ? 'reload' : 'dynamic' }, ms / 1000);
      this.syncs.record({ lane: 'structural', reload, reasons, bytesSent: bytes, ms, ok });
    }
  }

  /** Hosts whose routes all use profiles `structure` has; for the others the routes Lua holds now stay. */
  private servableRoutes(routes: DataPlane['routes'], structure: Structure): DataPlane['routes'] {
    const have = new Set(structure.profiles.map((p) => p.name));
    const out: DataPlane['routes'] = {};
    for (const [h, hr] of Object.entries(routes)) {
      if (hr.rules.every((r) => !r.route.profile || have.has(r.route.profile))) out[h] = hr;
      else if (this.state.held.routes[h]) out[h] = this.state.held.routes[h];
    }
    return out;
  }
}
