// The gateway reconciler: the only writer to nginx. It runs two lanes (see lane.ts), so data never waits for a
// reload:
//   - the structural lane (debounced on model changes other than endpoints): translates the model (pure), diffs
//     the result against what nginx runs and, when the structure changed, renders nginx.conf, validates it with
//     `nginx -t` (finding and leaving out an Ingress whose contribution breaks it), swaps it, reloads and confirms
//     the new generation is live; then pushes the data delta;
//   - the data lane (no debounce; coalesces what arrives while a push is in flight): EndpointSlice changes are
//     turned into backend updates for the affected Services only and pushed to Lua — also while the structural
//     lane is in `nginx -t` or a reload.
// Both lanes push through one lock, and every push computes endpoints from the model at the moment it holds the
// lock, so the last push always carries the newest endpoints whichever lane made it. On any failure the last good
// configuration keeps running and the lane retries with backoff; a bug that throws is a failed sync + Event.
// The first structural sync waits until every initially listed object has been reconciled, so the first
// configuration nginx serves (and /readyz) reflects the whole cluster, not a partial model.
import { Counter, Gauge, Histogram } from 'prom-client';
import type { EventRecorder } from '../../operator/events.ts';
import { describe } from '../../operator/informer.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import type { Logger } from '../../operator/log.ts';
import type { Metrics } from '../../operator/metrics.ts';
import type { Change, Model } from '../model/model.ts';
import { diffConfig, isEmptyDelta, structureChecksum } from '../translate/diff.ts';
import { translate, type TranslateOptions, type TranslateEvent } from '../translate/translate.ts';
import { endpointUpdates, serviceOfBackend } from './endpoint-updates.ts';
import { forbiddenAddressReason } from '../translate/addresses.ts';
import type { DataPlane, GatewayConfig, Structure } from './config-types.ts';
import { Lane } from './lane.ts';
import { DynamicClient } from './nginx/dynamic.ts';
import { NginxProcess } from './nginx/process.ts';
import { renderNginxConf, runtimePaths } from './nginx/render.ts';
import { ExternalNameResolver } from './resolver.ts';
import { excludeSources, findCulprits, fingerprint } from './isolate.ts';

const EMPTY_DATA: DataPlane = { backends: {}, certificates: {}, defaultCertificate: null };

export interface GatewayOptions {
  translate: TranslateOptions;
  nginxBinary: string;
  runtimeDir: string;
  /** nginx access log: /dev/stdout or a file. */
  accessLog?: string;
  quietMs: number;
  maxWaitMs: number;
  shutdownTimeoutMs: number;
}

export interface GatewayDeps {
  model: Model;
  events: EventRecorder;
  metrics: Metrics;
  log: Logger;
  /** The Ingress object for events (from the informer cache). */
  ingressObject: (key: string) => KubeObject | undefined;
  /** Object that Reload events are recorded on (the controller Pod, or the IngressClass). */
  controllerObject: () => KubeObject | undefined;
  /** Resolves once every initially listed object has been reconciled into the model (default: at once). */
  initialReconciled?: () => Promise<void>;
}

export interface SyncRecord {
  at: number;
  lane: 'structural' | 'data';
  reload: boolean;
  reasons: string[];
  bytesSent: number;
  ms: number;
  ok: boolean;
}

export class GatewayReconciler {
  private readonly o: GatewayOptions;
  private readonly d: GatewayDeps;
  private readonly log: Logger;
  readonly dynamic: DynamicClient;
  readonly nginx: NginxProcess;
  readonly structural: Lane;
  readonly data: Lane;
  /** What nginx.conf holds (after the last confirmed reload). */
  private runningStructure: Structure | null = null;
  private runningChecksum = '';
  /** What the Lua side holds (after the last successful push). */
  private held: DataPlane = EMPTY_DATA;
  /** nginx (re)started since the last push: its shared memory is empty, the next push must send everything. */
  private dataLost = true;
  private pushLock: Promise<unknown> = Promise.resolve();
  /** Services whose EndpointSlices changed since the data lane last ran. */
  private pendingServices = new Set<string>();
  private started = false;
  private reportedEvents = new Set<string>();
  private readonly programmedGeneration = new Map<string, number>();
  private readonly own: ReadonlySet<string>;
  private readonly m: {
    reloads: Counter;
    dynamic: Counter;
    dynamicBytes: Counter;
    syncs: Histogram;
    failures: Counter;
    checksum: Gauge;
    ready: Gauge;
    dictFailures: Gauge;
    rejectedEndpoints: Gauge;
  };
  private statsTimer: NodeJS.Timeout | undefined;
  private lastDictFailures = 0;
  private readyFlag = false;
  private readonly resolver: ExternalNameResolver;
  /** Sources (Ingress keys) left out because their contribution fails nginx -t, with the content that failed. */
  private excluded = new Map<string, { fingerprint: string; error: string }>();
  /** Ingress keys programmed in nginx after the last full sync (for status publishing). */
  readonly programmed = new Set<string>();
  private readonly statusListeners: ((changed: string[]) => void)[] = [];
  onProgrammedChange(cb: (changed: string[]) => void): void {
    this.statusListeners.push(cb);
  }
  private readonly readyListeners: (() => void)[] = [];
  /** Called once, when the first complete configuration is live. */
  onReady(cb: () => void): void {
    if (this.readyFlag) cb();
    else this.readyListeners.push(cb);
  }
  /** Recent syncs, for tests and benchmarks. */
  readonly history: SyncRecord[] = [];

  constructor(o: GatewayOptions, d: GatewayDeps) {
    this.o = o;
    this.d = d;
    this.log = d.log.child({ component: 'gateway' });
    this.own = new Set(o.translate.ownAddresses ?? []);
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
        onError: (e) => this.laneCrashed('structural', e),
        onRetry: (ms) => this.log.warn('structural sync failed, retrying', { retryInMs: ms }),
      },
    );
    this.data = new Lane(
      { quietMs: 0, maxWaitMs: 0, retryInitialMs: 100, retryMaxMs: 5_000 },
      {
        run: () => this.syncEndpoints(),
        onError: (e) => this.laneCrashed('data', e),
        onRetry: (ms) => this.log.warn('endpoint update failed, retrying', { retryInMs: ms }),
      },
    );
    this.resolver = new ExternalNameResolver(() => this.structural.trigger(), this.log, {
      refuse: (a) => forbiddenAddressReason(a, this.own),
    });
    const r = [d.metrics.registry];
    this.m = {
      reloads: new Counter({ name: 'portico_nginx_reloads_total', help: 'nginx configuration reloads by result', labelNames: ['result'], registers: r }),
      dynamic: new Counter({ name: 'portico_dynamic_updates_total', help: 'Data-only updates pushed to Lua (no reload), by result', labelNames: ['result'], registers: r }),
      dynamicBytes: new Counter({ name: 'portico_dynamic_update_bytes_total', help: 'Bytes of data deltas sent to nginx', registers: r }),
      syncs: new Histogram({
        name: 'portico_sync_duration_seconds',
        help: 'Gateway sync latency (translate + diff + apply), by kind: reload, dynamic (structural lane, no reload), endpoints (data lane)',
        labelNames: ['kind'],
        buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
        registers: r,
      }),
      failures: new Counter({ name: 'portico_sync_failures_total', help: 'Failed gateway syncs by lane (each is retried with backoff)', labelNames: ['lane'], registers: r }),
      checksum: new Gauge({ name: 'portico_config_checksum', help: 'First 48 bits of the running structure checksum', registers: r }),
      ready: new Gauge({ name: 'portico_nginx_ready', help: '1 once nginx runs a complete Portico configuration', registers: r }),
      dictFailures: new Gauge({
        name: 'portico_nginx_shared_dict_write_failures',
        help: 'Writes the Lua side refused because a shared-memory zone was full, since nginx started (raise lua-shared-dicts)',
        labelNames: ['dict'],
        registers: r,
      }),
      rejectedEndpoints: new Gauge({ name: 'portico_nginx_rejected_endpoints', help: 'Endpoints the Lua side refused (loopback, link-local, unspecified, not an IP) since nginx started', registers: r }),
    };
    d.model.onChange((changes) => this.changed(changes));
    this.nginx.onRestart(() => {
      this.dataLost = true;
      this.log.warn('nginx restarted: re-applying configuration and data');
      this.structural.trigger();
    });
  }

  private changed(changes: Change[]): void {
    let structural = false;
    for (const c of changes) {
      if (c.kind === 'EndpointSlice') this.pendingServices.add(c.key);
      else structural = true;
    }
    if (!this.started) return; // the first sync (after the initial reconcile) takes everything
    if (structural) this.structural.trigger();
    if (this.pendingServices.size) this.data.trigger();
  }

  private laneCrashed(lane: 'structural' | 'data', e: unknown): void {
    this.m.failures.inc({ lane });
    this.log.error('gateway sync threw; the running configuration is kept and the sync retried', { lane, error: describe(e), stack: e instanceof Error ? e.stack : undefined });
    this.controllerEvent('Warning', 'SyncFailed', `${lane} sync failed (the running configuration is kept, retrying): ${describe(e).slice(0, 500)}`);
  }

  isReady(): boolean {
    return this.readyFlag && this.nginx.isRunning();
  }

  /** Runs until the signal aborts, then stops nginx gracefully. */
  async run(signal: AbortSignal): Promise<void> {
    this.nginx.prepare();
    const gate = this.d.initialReconciled?.() ?? Promise.resolve();
    await Promise.race([gate, new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }))]);
    if (!signal.aborted) {
      this.started = true;
      this.pendingServices.clear(); // the first structural sync computes every endpoint from the model
      this.structural.trigger();
      this.statsTimer = setInterval(() => void this.pollStats(), 15_000);
      this.statsTimer.unref();
      await new Promise<void>((r) => (signal.aborted ? r() : signal.addEventListener('abort', () => r(), { once: true })));
    }
    if (this.statsTimer) clearInterval(this.statsTimer);
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

  /** nginx-side counters (shared-memory write failures, refused endpoints) as metrics. */
  private async pollStats(): Promise<void> {
    if (!this.readyFlag || !this.nginx.isRunning()) return;
    try {
      const c = await this.dynamic.getConfig();
      this.m.dictFailures.set({ dict: 'data' }, c.dictFailures.data);
      this.m.dictFailures.set({ dict: 'certs' }, c.dictFailures.certs);
      this.m.rejectedEndpoints.set(c.rejectedEndpoints);
      const total = c.dictFailures.data + c.dictFailures.certs;
      if (total > this.lastDictFailures) this.log.warn('nginx shared memory is full: some writes were refused (raise lua-shared-dicts)', { failures: c.dictFailures });
      this.lastDictFailures = total;
    } catch (e) {
      this.log.debug('could not read nginx counters', { error: describe(e) });
    }
  }

  /** Serializes pushes to Lua across both lanes. */
  private locked<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.pushLock.then(fn, fn);
    this.pushLock = next.catch(() => undefined);
    return next;
  }

  private record(rec: Omit<SyncRecord, 'at'>): void {
    this.history.push({ at: Date.now(), ...rec });
    if (this.history.length > 1000) this.history.splice(0, this.history.length - 1000);
  }

  /** Data lane: endpoints of the Services whose slices changed, pushed without waiting for anything structural. */
  private async syncEndpoints(): Promise<boolean> {
    const t0 = performance.now();
    if (!this.runningStructure || this.dataLost) {
      // Nothing programmed yet (or nginx lost its data): the structural lane pushes everything from the model.
      this.pendingServices.clear();
      return true;
    }
    const services = this.pendingServices;
    this.pendingServices = new Set();
    let bytes = 0;
    try {
      const needsStructure = await this.locked(async () => {
        const { upsert, needsStructure } = endpointUpdates(this.d.model, this.held.backends, services, this.own);
        if (Object.keys(upsert).length) {
          bytes = await this.dynamic.push({
            backends: { upsert, remove: [] },
            certificates: { upsert: {}, remove: [], defaultChanged: false, default: null },
          });
          this.held = { ...this.held, backends: { ...this.held.backends, ...upsert } };
          this.m.dynamic.inc({ result: 'success' });
          this.m.dynamicBytes.inc(bytes);
        }
        return needsStructure;
      });
      if (needsStructure) this.structural.trigger();
      const ms = performance.now() - t0;
      this.m.syncs.observe({ kind: 'endpoints' }, ms / 1000);
      this.record({ lane: 'data', reload: false, reasons: [], bytesSent: bytes, ms, ok: true });
      return true;
    } catch (e) {
      for (const s of services) this.pendingServices.add(s);
      this.m.dynamic.inc({ result: 'failure' });
      this.m.failures.inc({ lane: 'data' });
      this.log.error('endpoint update failed', { error: describe(e) });
      this.record({ lane: 'data', reload: false, reasons: [], bytesSent: 0, ms: performance.now() - t0, ok: false });
      return false;
    }
  }

  /** Structural lane: full translation; reload when the structure changed; then the data delta. */
  private async syncStructure(): Promise<boolean> {
    const t0 = performance.now();
    let reload = false;
    let reasons: string[] = [];
    let bytes = 0;
    let ok = false;
    try {
      const result = translate(this.d.model.snapshot(), this.o.translate);
      const desired = result.config;
      result.events.push(...this.resolveExternalNames(desired));
      // Objects excluded earlier stay out while their contribution is unchanged; a changed one is tried again.
      const keep = new Map<string, { fingerprint: string; error: string }>();
      for (const [src, x] of this.excluded) if (fingerprint(desired.structure, src) === x.fingerprint) keep.set(src, x);
      this.excluded = keep;
      if (keep.size) desired.structure = excludeSources(desired.structure, new Set(keep.keys()));
      const running: GatewayConfig | null = this.runningStructure ? { structure: this.runningStructure, data: this.held } : null;
      let diff = diffConfig(running, desired);
      // (A master that died is restarted by the supervisor, which then triggers this lane; never start a second one.)
      reload = diff.reload;
      reasons = diff.reasons;
      if (reload) {
        if (!(await this.applyStructure(desired, running))) return false;
        diff = diffConfig(running, desired);
        reasons = diff.reasons;
      } else if (this.dataLost && this.runningChecksum) {
        // nginx was restarted by the supervisor: wait for it before re-sending all data.
        if (!(await this.nginx.waitLive(this.runningChecksum))) return false;
      }
      bytes = await this.locked(async () => {
        // Endpoints may have moved on since the snapshot (the data lane kept pushing): take them from the model now.
        // (Whatever else changed since the snapshot announced itself through the model and has its own sync queued.)
        Object.assign(desired.data.backends, endpointUpdates(this.d.model, desired.data.backends, null, this.own).upsert);
        const base = this.dataLost ? EMPTY_DATA : this.held;
        const delta = diffConfig({ structure: desired.structure, data: base }, desired).delta;
        let n = 0;
        if (!isEmptyDelta(delta)) {
          try {
            n = await this.dynamic.push(delta);
          } catch (e) {
            this.m.dynamic.inc({ result: 'failure' });
            throw e;
          }
          this.m.dynamic.inc({ result: 'success' });
          this.m.dynamicBytes.inc(n);
        }
        this.held = desired.data;
        this.dataLost = false;
        return n;
      });
      ok = true;
      for (const src of this.excluded.keys()) {
        const st = result.ingressStatus.get(src);
        if (st) st.programmed = false;
      }
      // The first sync after a start programs everything at once: one event on the controller instead of a
      // "Programmed" event per Ingress (a restart at 10k Ingresses would otherwise post 10k events).
      this.reportIngresses(result.events, result.ingressStatus, reload, this.readyFlag);
      this.updateProgrammed(result.ingressStatus);
      if (!this.readyFlag) {
        this.readyFlag = true;
        this.m.ready.set(1);
        this.controllerEvent('Normal', 'Ready', `first complete configuration is live: ${this.programmed.size} Ingresses programmed`);
        this.log.info('first complete configuration is live', { ms: Math.round(performance.now() - t0), programmed: this.programmed.size });
        for (const cb of this.readyListeners.splice(0)) cb();
      }
      return true;
    } catch (e) {
      this.m.failures.inc({ lane: 'structural' });
      this.log.error('sync failed', { error: describe(e) });
      return false;
    } finally {
      const ms = performance.now() - t0;
      this.m.syncs.observe({ kind: reload ? 'reload' : 'dynamic' }, ms / 1000);
      this.record({ lane: 'structural', reload, reasons, bytesSent: bytes, ms, ok });
    }
  }

  /**
   * ExternalName backends: endpoints from DNS (resolved outside the pure translation), refused addresses dropped
   * with a Warning on every Ingress that uses the Service.
   */
  private resolveExternalNames(desired: GatewayConfig): TranslateEvent[] {
    const events: TranslateEvent[] = [];
    const names = new Set<string>();
    for (const b of Object.values(desired.data.backends)) if (b.externalName && b.externalPort) names.add(b.externalName);
    this.resolver.use(names);
    for (const b of Object.values(desired.data.backends)) {
      if (!b.externalName || !b.externalPort) continue;
      const e = this.resolver.get(b.externalName);
      if (!e) b.unavailableReason = `resolving ExternalName ${b.externalName}`;
      else if (e.error) b.unavailableReason = `ExternalName ${b.externalName} does not resolve: ${e.error}`;
      else if (!e.addresses.length && e.refused.length)
        b.unavailableReason = `ExternalName ${b.externalName} resolves only to addresses Portico refuses to proxy to (${e.refused.map((r) => `${r.address}: ${r.reason}`).join(', ')})`;
      else if (!e.addresses.length) b.unavailableReason = `ExternalName ${b.externalName} has no addresses`;
      else b.endpoints = e.addresses.map((address) => ({ address, port: b.externalPort as number, weight: 1 }));
      if (e?.refused.length) {
        const svc = serviceOfBackend(b.id)?.serviceKey;
        const msg = `Service ${svc} (ExternalName ${b.externalName}) resolves to ${e.refused.map((r) => `${r.address} (${r.reason})`).join(', ')}; Portico never proxies there${e.addresses.length ? '' : ', so paths using it answer 503'}`;
        for (const ingKey of svc ? this.d.model.ingressesUsingService(svc) : []) events.push({ objectKey: ingKey, type: 'Warning', reason: 'ForbiddenEndpoint', message: msg });
      }
    }
    return events;
  }

  /** Render → nginx -t (with fault isolation) → start or reload → confirm. False when the running config stays. */
  private async applyStructure(desired: GatewayConfig, running: GatewayConfig | null): Promise<boolean> {
    const t0 = performance.now();
    let checksum = structureChecksum(desired.structure);
    let conf = renderNginxConf(desired.structure, this.nginx.runtime, checksum);
    const tTest = performance.now();
    let v = await this.nginx.writeValidated(conf);
    // Starting or reloading parses the same file again: give it a few times what `nginx -t` took (at 10k
    // Ingresses a fixed 15 s made the first start time out and be retried).
    const liveBudgetMs = Math.max(15_000, Math.round(3 * (performance.now() - tTest)));
    if (!v.ok) {
      // Every object passed validation, yet nginx refuses the result: find whose contribution breaks it.
      const firstError = v.output;
      const iso = await findCulprits(desired.structure, async (s) => (await this.nginx.testContent(renderNginxConf(s, this.nginx.runtime, 'probe'))).ok);
      if (iso.isolated && iso.culprits.length) {
        for (const src of iso.culprits) {
          this.excluded.set(src, { fingerprint: fingerprint(desired.structure, src), error: firstError });
          const obj = this.d.ingressObject(src);
          if (obj) this.d.events.event(obj, 'Warning', 'Excluded', 'Programming', `left out of nginx: the configuration it contributes fails nginx -t; everything else is programmed. nginx said: ${firstError.slice(0, 600)}`);
          this.log.error('excluded an Ingress whose configuration fails nginx -t', { ingress: src, output: firstError });
        }
        desired.structure = excludeSources(desired.structure, new Set(iso.culprits));
        if (running && !diffConfig(running, desired).reload && this.nginx.isRunning()) return true;
        checksum = structureChecksum(desired.structure);
        conf = renderNginxConf(desired.structure, this.nginx.runtime, checksum);
        v = await this.nginx.writeValidated(conf);
      }
    }
    if (!v.ok) {
      this.m.reloads.inc({ result: 'failure' });
      this.controllerEvent('Warning', 'ReloadFailed', `nginx -t rejected the new configuration, keeping the running one: ${v.output.slice(0, 800)}`);
      this.log.error('nginx -t failed; keeping the last good configuration', { output: v.output });
      return false;
    }
    let live: boolean;
    if (!this.nginx.isRunning()) {
      this.nginx.start();
      this.dataLost = true; // a fresh nginx holds no data
      live = await this.nginx.waitLive(checksum, liveBudgetMs);
    } else {
      live = await this.nginx.reload(checksum, liveBudgetMs);
    }
    if (!live) {
      this.m.reloads.inc({ result: 'failure' });
      this.controllerEvent('Warning', 'ReloadFailed', 'nginx did not confirm the new configuration in time');
      return false;
    }
    this.m.reloads.inc({ result: 'success' });
    this.runningStructure = desired.structure;
    this.runningChecksum = checksum;
    this.m.checksum.set(Number.parseInt(checksum.slice(0, 12), 16));
    const why = diffConfig(running, desired).reasons.join('; ') || 'configuration changed';
    this.controllerEvent('Normal', 'Reload', `nginx reloaded: ${why}`);
    this.log.info('nginx reloaded', { reasons: why, ms: Math.round(performance.now() - t0) });
    return true;
  }

  private updateProgrammed(status: Map<string, { served: boolean; programmed: boolean }>): void {
    const changed: string[] = [];
    const now = new Set([...status].filter(([, st]) => st.served && st.programmed).map(([k]) => k));
    for (const k of now) if (!this.programmed.has(k)) changed.push(k);
    for (const k of this.programmed) if (!now.has(k)) changed.push(k);
    this.programmed.clear();
    for (const k of now) this.programmed.add(k);
    if (changed.length) for (const cb of this.statusListeners) cb(changed);
  }

  private controllerEvent(type: 'Normal' | 'Warning', reason: string, note: string): void {
    const obj = this.d.controllerObject();
    if (obj) this.d.events.event(obj, type, reason, reason === 'Reload' || reason === 'ReloadFailed' ? 'Reload' : 'Sync', note);
  }

  /** Events on Ingresses: problems when they first appear, and "Programmed" when a generation goes live. */
  private reportIngresses(events: TranslateEvent[], status: Map<string, { served: boolean; programmed: boolean; problems: string[] }>, reload: boolean, announce: boolean): void {
    const next = new Set<string>();
    for (const e of events) {
      const obj = this.d.ingressObject(e.objectKey);
      // Once per generation: the same problem is reported again only for a new generation of the object.
      const k = `${e.objectKey}\u0000${obj?.metadata.generation ?? 0}\u0000${e.reason}\u0000${e.message}`;
      next.add(k);
      if (this.reportedEvents.has(k)) continue;
      if (obj) this.d.events.event(obj, e.type, e.reason, 'Programming', e.message);
    }
    this.reportedEvents = next;
    for (const [key, st] of status) {
      const obj = this.d.ingressObject(key);
      if (!obj) continue;
      const gen = obj.metadata.generation ?? 0;
      if (!st.served || !st.programmed) {
        this.programmedGeneration.delete(key);
        continue;
      }
      if (this.programmedGeneration.get(key) === gen) continue;
      this.programmedGeneration.set(key, gen);
      if (!announce) continue;
      const how = reload ? 'with a reload' : 'dynamically';
      this.d.events.event(obj, 'Normal', 'Programmed', 'Programming', `Ingress generation ${gen} is served by nginx (applied ${how})`);
    }
    for (const key of [...this.programmedGeneration.keys()]) if (!status.has(key)) this.programmedGeneration.delete(key);
  }
}
