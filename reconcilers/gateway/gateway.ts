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
import { Counter, Gauge, Histogram } from 'prom-client';
import type { EventRecorder } from '../../operator/events.ts';
import { describe } from '../../operator/informer.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import type { Logger } from '../../operator/log.ts';
import type { Metrics } from '../../operator/metrics.ts';
import type { Change, Model } from '../model/model.ts';
import { diffConfig, emptyDelta, isEmptyDelta, structureChecksum } from '../translate/diff.ts';
import type { IngressStatus, TranslateOptions, TranslateEvent } from '../translate/translate.ts';
import { IncrementalTranslator } from '../translate/incremental.ts';
import { IngressReporting } from './reporting.ts';
import { resolveExternalNames } from './externalnames.ts';
import { endpointUpdates } from './endpoint-updates.ts';
import { forbiddenAddressReason } from '../values/addresses.ts';
import { loopIdOf, selfAddressesOf } from '../translate/self.ts';
import { randomBytes } from 'node:crypto';
import type { Backend, DataPlane, GatewayConfig, Structure } from '../config/types.ts';
import { Lane } from './lane.ts';
import { DynamicClient, type PushResult } from './nginx/dynamic.ts';
import { NginxProcess } from './nginx/process.ts';
import { renderNginxConf, runtimePaths, writeClientCertificates, writeTrustedCas } from './nginx/render.ts';
import { ExternalNameResolver } from './resolver.ts';
import { excludeProfiles, findCulprits, withoutProfiles } from './isolate.ts';
import { StreamServices } from './stream.ts';
import { writeModsecurityRules } from './nginx/modsecurity.ts';

/** Nothing held (a fresh object each time: `held` is updated in place by endpoint pushes). */
const emptyData = (): DataPlane => ({ routes: {}, backends: {}, certificates: {}, defaultCertificate: null, plugins: {}, consumers: {} });

/**
 * What the Lua side holds after a push it partly refused: `desired`, except that the hosts whose certificate (or
 * client CA) could not be stored keep what they had before (`base`), so the next diff sends those again.
 */
export function heldWithout(desired: DataPlane, base: DataPlane, notStored: NonNullable<PushResult['notStored']>): DataPlane {
  const certificates = { ...desired.certificates };
  let defaultCertificate = desired.defaultCertificate;
  for (const h of notStored.hosts) {
    if (h === '__default__') defaultCertificate = base.defaultCertificate;
    else if (base.certificates[h]) certificates[h] = base.certificates[h];
    else delete certificates[h];
  }
  const out: DataPlane = { ...desired, certificates, defaultCertificate };
  if (notStored.clientHosts.length && desired.clientAuth) {
    const clientAuth = { ...desired.clientAuth };
    for (const h of notStored.clientHosts) {
      const was = base.clientAuth?.[h];
      if (was) clientAuth[h] = was;
      else delete clientAuth[h];
    }
    out.clientAuth = clientAuth;
  }
  return out;
}

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
  private held: DataPlane = emptyData();
  /** nginx (re)started since the last push: its shared memory is empty, the next push must send everything. */
  private dataLost = true;
  /** Hosts whose certificate the Lua side could not store (zone full): the next diff compares every host again. */
  private certificatesMissing: string[] = [];
  private pushLock: Promise<unknown> = Promise.resolve();
  /** Services whose EndpointSlices changed since the data lane last ran. */
  private pendingServices = new Set<string>();
  /** Services whose EndpointSlices changed since the running configuration sync translated the model. */
  private slicesSinceTranslate: Set<string> | null = null;
  /** Translates only what changed when only Ingresses did (see incremental.ts). */
  readonly translator = new IncrementalTranslator();
  /** Ingresses changed since the last translation; null = something else changed too (translate everything). */
  private changedIngresses: Set<string> | null = null;
  private started = false;
  /**
   * What may differ between what Lua holds and the next desired configuration, accumulated from the incremental
   * translation since the last successful push (null: compare everything — after a full translation, a failed
   * reload, while profiles are excluded, or before the first push). At 10,000 Ingresses this keeps a sync's diff
   * and reporting proportional to what changed.
   */
  private scope: { objects: Set<string>; hosts: Set<string>; backends: Set<string> } | null = null;
  /**
   * Portico's own addresses: the static ones (listeners, this pod) plus its published Service's and its pods' (see
   * translate/self.ts). One Set shared with the stream section, the resolver and the data lane, updated in place.
   */
  private readonly own: Set<string>;
  /** What the translation runs with: the options plus the current own addresses and loop id. */
  private translateOptions: TranslateOptions;
  /** The loop id when the published Service is unknown: this process's own (a loop then ends at the first replica seen twice). */
  private readonly fallbackLoopId = randomBytes(8).toString('hex');
  /**
   * TCP/UDP services and TLS passthrough hosts: rendered into nginx.conf, so their endpoint changes go through this
   * (structural) lane.
   */
  private readonly stream: StreamServices;
  private readonly m: {
    reloads: Counter;
    dynamic: Counter;
    dynamicBytes: Counter;
    syncs: Histogram;
    failures: Counter;
    checksum: Gauge;
    ready: Gauge;
    dictFailures: Gauge;
    certificatesNotStored: Gauge;
    rejectedEndpoints: Gauge;
  };
  private statsTimer: NodeJS.Timeout | undefined;
  private lastDictFailures = 0;
  private readyFlag = false;
  private readonly resolver: ExternalNameResolver;
  /** Directive profiles left out because nginx -t refuses them (names are content digests), with nginx's words. */
  private excluded = new Map<string, string>();
  /** Events and status of Ingresses (see reporting.ts). */
  private readonly reporting: IngressReporting;
  /** Ingress keys programmed in nginx after the last sync (for status publishing). */
  get programmed(): ReadonlySet<string> {
    return this.reporting.programmed;
  }
  /** The data Lua holds (what was last pushed): read-only, for diagnostics and benchmarks. */
  get heldData(): Readonly<DataPlane> {
    return this.held;
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
    this.reporting = new IngressReporting(d.events, d.objectFor);
    this.own = new Set(o.translate.ownAddresses ?? []);
    this.translateOptions = { ...o.translate, loopId: this.fallbackLoopId };
    this.refreshSelf();
    this.stream = new StreamServices(d.model, d.events, this.log, { own: this.own, address: o.translate.listen.address, modulePath: o.streamModule, objectFor: d.objectFor });
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
    this.resolver = new ExternalNameResolver(() => this.translateAll(), this.log, {
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
      certificatesNotStored: new Gauge({
        name: 'portico_nginx_certificates_not_stored',
        help: 'Hosts (and client-certificate hosts) whose certificate nginx could not store because the certificate zone is full; they keep their previous certificate or get the default (raise lua-shared-dicts certificate_data)',
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

  /**
   * Re-reads Portico's own Service (--publish-service) and its EndpointSlices from the model: its addresses join the
   * static own addresses, its uid gives the loop id. Returns whether either changed.
   */
  private refreshSelf(): boolean {
    const key = this.o.translate.selfService;
    const svc = key ? this.d.model.service(key) : undefined;
    const next = new Set([...(this.o.translate.ownAddresses ?? []), ...(key ? selfAddressesOf(svc, this.d.model.slicesOf(key)) : [])]);
    const loopId = svc?.uid ? loopIdOf(svc.uid, this.o.translate.controllerClass) : this.fallbackLoopId;
    const same = next.size === this.own.size && [...next].every((a) => this.own.has(a)) && loopId === this.translateOptions.loopId;
    if (same) return false;
    this.own.clear();
    for (const a of next) this.own.add(a);
    this.translateOptions = { ...this.o.translate, ownAddresses: [...next].sort(), loopId };
    this.log.info("Portico's own addresses", { addresses: [...next].sort(), loopId });
    return true;
  }

  private changed(changes: Change[]): void {
    let structural = false;
    let streamEndpoints = false;
    const selfKey = this.o.translate.selfService;
    if (selfKey && changes.some((c) => (c.kind === 'Service' || c.kind === 'EndpointSlice') && c.key === selfKey) && this.refreshSelf()) {
      // Every backend, ExternalName answer and auth/mirror target is judged again against the new own addresses.
      this.changedIngresses = null;
      this.resolver.recheck();
      structural = true;
    }
    for (const c of changes) {
      if (c.kind === 'EndpointSlice') {
        this.pendingServices.add(c.key);
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
    if (this.pendingServices.size) this.data.trigger();
  }

  /** Next sync translates everything (something other than Ingresses changed, e.g. an ExternalName's answer). */
  private translateAll(): void {
    this.changedIngresses = null;
    this.structural.trigger();
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
          bytes = await this.dynamic.push({ ...emptyDelta(), backends: { upsert, remove: [] } });
          this.endpointsPushed(upsert);
          this.m.dynamic.inc({ result: 'success' });
          this.m.dynamicBytes.inc(bytes);
        }
        return needsStructure;
      });
      // A Service or port gone, a refused address to report: the full translation (Services are not Ingresses).
      if (needsStructure) this.translateAll();
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

  /**
   * Endpoints the data lane pushed: what Lua holds (`held`) and the translator's last result take them over in
   * place — the incremental translation rebuilds only what a change touches, so without this its result would
   * keep older endpoints for every other backend, and a later flap back to them would look like no change.
   */
  private endpointsPushed(upsert: Record<string, Backend>): void {
    Object.assign(this.held.backends, upsert);
    this.translator.patchBackends(upsert);
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
        result = this.translator.translate(this.d.model.snapshot(), this.translateOptions, changed);
      } catch (e) {
        this.changedIngresses = null;
        throw e;
      }
      const t = result.touched;
      if (!t) this.scope = null;
      else if (this.scope) {
        for (const k of t.objects) this.scope.objects.add(k);
        for (const h of t.hosts) this.scope.hosts.add(h);
        for (const b of t.backends) this.scope.backends.add(b);
      }
      // The translator keeps its result to build the next one on: work on shallow copies, never on it.
      const desired: GatewayConfig = { structure: this.stream.apply(result.config.structure), data: { ...result.config.data } };
      const events = [...result.events, ...resolveExternalNames(desired, this.resolver, this.d.model, this.scope?.backends)];
      const status = this.excluded.size ? new Map(result.status) : result.status;
      // Profiles excluded earlier stay out (same name = same content = same verdict) while routes still use them.
      for (const name of [...this.excluded.keys()]) if (!desired.structure.profiles.some((p) => p.name === name)) this.excluded.delete(name);
      this.exclude(desired, events, status);
      const running: GatewayConfig | null = this.runningStructure ? { structure: this.runningStructure, data: this.held } : null;
      const diff = diffConfig(running, desired);
      // (A master that died is restarted by the supervisor, which then triggers this lane; never start a second one.)
      reload = diff.reload;
      reasons = diff.reasons;
      let structureOk = true;
      if (reload) {
        structureOk = await this.applyStructure(desired, running);
        // Newly found culprits are out of the structure now; their routes go too.
        this.exclude(desired, events, status);
        if (!structureOk) {
          if (!this.runningStructure || !this.nginx.isRunning()) return false;
          // The running nginx.conf stays. Everything it can serve is still pushed — a ConfigMap value nginx
          // refuses must not hold back every Ingress — except routes that need a profile it does not have.
          desired.data.routes = this.servableRoutes(desired.data.routes, this.runningStructure);
          this.scope = null;
        }
      } else if (this.dataLost && this.runningChecksum) {
        // nginx was restarted by the supervisor: wait for it before re-sending all data.
        if (!(await this.nginx.waitLive(this.runningChecksum))) return false;
      }
      bytes = await this.locked(async () => {
        // Endpoints may have moved on since the translation (the data lane kept pushing): take those Services' from
        // the model now. (Whatever else changed announced itself through the model and has its own sync queued.)
        const moved = this.slicesSinceTranslate ?? new Set<string>();
        this.slicesSinceTranslate = null;
        let fresh: Record<string, Backend> = {};
        if (moved.size) {
          fresh = endpointUpdates(this.d.model, desired.data.backends, moved, this.own).upsert;
          desired.data.backends = { ...desired.data.backends, ...fresh };
          for (const id of Object.keys(fresh)) this.scope?.backends.add(id);
        }
        const base = this.dataLost ? emptyData() : this.held;
        const scope = this.dataLost || this.excluded.size || this.certificatesMissing.length ? null : this.scope;
        const delta = diffConfig({ structure: desired.structure, data: base }, desired, scope).delta;
        let n = 0;
        let pushed: PushResult = { bytes: 0 };
        if (!isEmptyDelta(delta)) {
          try {
            pushed = await this.dynamic.pushData(delta);
            n = pushed.bytes;
          } catch (e) {
            this.m.dynamic.inc({ result: 'failure' });
            throw e;
          }
          this.m.dynamic.inc({ result: 'success' });
          this.m.dynamicBytes.inc(n);
        }
        // Certificates a full zone refused are not held: the next sync sends them again (routes went anyway).
        this.held = pushed.notStored ? heldWithout(desired.data, base, pushed.notStored) : desired.data;
        this.certificatesNotStored(pushed.notStored, desired.data);
        this.dataLost = false;
        this.translator.patchBackends(fresh);
        return n;
      });
      // What Lua holds is now exactly `desired`: the next diff needs only what changes from here.
      const reported = this.excluded.size ? null : this.scope;
      this.scope = { objects: new Set(), hosts: new Set(), backends: new Set() };
      if (!structureOk) return false; // the reload is retried with backoff; the data is live
      ok = true;
      // The first sync after a start programs everything at once: one event on the controller instead of a
      // "Programmed" event per Ingress (a restart at 10k Ingresses would otherwise post 10k events).
      this.reporting.report(events, status, reported?.objects ?? null, reload, this.readyFlag);
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
   * Leaves the excluded profiles out of `desired` (structure and routes); every object that lost a route gets an
   * `Excluded` Warning and is not reported as programmed by that route.
   */
  private exclude(desired: GatewayConfig, events: TranslateEvent[], status: Map<string, IngressStatus>): void {
    if (!this.excluded.size) return;
    const names = new Set(this.excluded.keys());
    desired.structure = excludeProfiles(desired.structure, names);
    const { routes, sources } = withoutProfiles(desired.data.routes, names);
    desired.data.routes = routes;
    const why = [...this.excluded.values()][0] ?? '';
    if (!sources.size) return;
    const stillServed = new Set<string>();
    for (const hr of Object.values(routes)) for (const r of hr.rules) if (sources.has(r.route.source) && !r.route.action) stillServed.add(r.route.source);
    for (const ref of sources) {
      const st = status.get(ref);
      if (st && !stillServed.has(ref)) status.set(ref, { ...st, programmed: false });
      events.push({ ref, type: 'Warning', reason: 'Excluded', message: `paths left out of nginx: the nginx directives they need fail nginx -t; everything else is programmed. nginx said: ${why.slice(0, 600)}` });
    }
  }

  /** Hosts whose routes all use profiles `structure` has; for the others the routes Lua holds now stay. */
  private servableRoutes(routes: DataPlane['routes'], structure: Structure): DataPlane['routes'] {
    const have = new Set(structure.profiles.map((p) => p.name));
    const out: DataPlane['routes'] = {};
    for (const [h, hr] of Object.entries(routes)) {
      if (hr.rules.every((r) => !r.route.profile || have.has(r.route.profile))) out[h] = hr;
      else if (this.held.routes[h]) out[h] = this.held.routes[h];
    }
    return out;
  }

  /** Render → nginx -t (with fault isolation) → start or reload → confirm. False when the running config stays. */
  private async applyStructure(desired: GatewayConfig, running: GatewayConfig | null): Promise<boolean> {
    const t0 = performance.now();
    let checksum = structureChecksum(desired.structure);
    writeTrustedCas(desired.structure, this.nginx.runtime);
    writeClientCertificates(desired.structure, this.nginx.runtime);
    writeModsecurityRules(desired.structure, this.nginx.runtime);
    let conf = renderNginxConf(desired.structure, this.nginx.runtime, checksum);
    const tTest = performance.now();
    let v = await this.nginx.writeValidated(conf);
    // Starting or reloading parses the same file again: give it a few times what `nginx -t` took (at 10k
    // Ingresses a fixed 15 s made the first start time out and be retried).
    const liveBudgetMs = Math.max(15_000, Math.round(3 * (performance.now() - tTest)));
    if (!v.ok) {
      // Every object passed validation, yet nginx refuses the result: find the directive profiles that break it.
      const firstError = v.output;
      const iso = await findCulprits(desired.structure, async (s) => (await this.nginx.testContent(renderNginxConf(s, this.nginx.runtime, 'probe'))).ok);
      if (iso.isolated && iso.culprits.length) {
        for (const name of iso.culprits) {
          this.excluded.set(name, firstError);
          this.log.error('left out a directive profile that fails nginx -t', { profile: name, output: firstError });
        }
        desired.structure = excludeProfiles(desired.structure, new Set(iso.culprits));
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

  /** A full certificate zone: log, metric and a Warning naming the Secrets and hosts; cleared once all are stored. */
  private certificatesNotStored(notStored: PushResult['notStored'], data: DataPlane): void {
    const hosts = notStored ? [...notStored.hosts, ...notStored.clientHosts] : [];
    const before = this.certificatesMissing;
    this.certificatesMissing = hosts;
    this.m.certificatesNotStored.set(hosts.length);
    if (!notStored || !hosts.length) {
      if (before.length) this.log.info('every certificate is stored again', { hosts: before.length });
      return;
    }
    const secrets = [...new Set(notStored.hosts.map((h) => (h === '__default__' ? data.defaultCertificate?.source : data.certificates[h]?.source)).filter((x): x is string => !!x))].sort();
    const list = (xs: string[]) => (xs.length > 10 ? `${xs.slice(0, 10).join(', ')} and ${xs.length - 10} more` : xs.join(', '));
    const note = `nginx's certificate zone (portico_certs) is full: ${hosts.length} host(s) keep their previous certificate or get the default one (${list(hosts.sort())}; Secrets ${list(secrets)}); nothing else was evicted and everything else is programmed. Raise the ConfigMap's lua-shared-dicts certificate_data`;
    this.log.warn('certificates not stored: the certificate zone is full', { hosts: hosts.length, secrets: secrets.slice(0, 50), error: notStored.error });
    this.controllerEvent('Warning', 'CertificateZoneFull', note);
  }

  private controllerEvent(type: 'Normal' | 'Warning', reason: string, note: string): void {
    const obj = this.d.controllerObject();
    if (obj) this.d.events.event(obj, type, reason, reason === 'Reload' || reason === 'ReloadFailed' ? 'Reload' : 'Sync', note);
  }

}
