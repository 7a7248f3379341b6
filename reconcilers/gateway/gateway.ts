// The gateway reconciler: the only writer to nginx. Debounced on model changes, it translates the model (pure),
// diffs the result against what nginx runs, and either
//   - renders nginx.conf, validates it with `nginx -t`, swaps it atomically, reloads and confirms the new
//     generation is live (structure changed), then pushes the data delta; or
//   - pushes only the data delta to Lua (endpoints, certificates changed) — no reload.
// On any failure the last good configuration keeps running and the sync is retried with backoff.
import { Counter, Gauge, Histogram } from 'prom-client';
import { Backoff } from '../../operator/backoff.ts';
import type { EventRecorder } from '../../operator/events.ts';
import { describe } from '../../operator/informer.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import type { Logger } from '../../operator/log.ts';
import type { Metrics } from '../../operator/metrics.ts';
import type { Model } from '../model/model.ts';
import { diffConfig, isEmptyDelta, structureChecksum } from '../translate/diff.ts';
import { endpointsFor, translate, type TranslateOptions, type TranslateEvent } from '../translate/translate.ts';
import type { Change } from '../model/model.ts';
import type { Backend } from './config-types.ts';
import type { GatewayConfig } from './config-types.ts';
import { Debouncer } from './debounce.ts';
import { DynamicClient } from './nginx/dynamic.ts';
import { NginxProcess } from './nginx/process.ts';
import { renderNginxConf, runtimePaths } from './nginx/render.ts';
import { ExternalNameResolver } from './resolver.ts';
import { excludeSources, findCulprits, fingerprint } from './isolate.ts';

/**
 * The backends whose endpoints changed, when every change is an EndpointSlice change and can be applied without
 * a full translation; null when the full path is needed (another kind changed, a Service or port is gone, the
 * backend is ExternalName or unavailable). Pure: reads the model and the running configuration only.
 */
export function endpointDelta(model: Model, running: GatewayConfig, changes: Change[]): Record<string, Backend> | null {
  if (!changes.length || changes.some((c) => c.kind !== 'EndpointSlice')) return null;
  const upsert: Record<string, Backend> = {};
  for (const svcKey of new Set(changes.map((c) => c.key))) {
    const [ns, name] = svcKey.split('/') as [string, string];
    const prefix = `${ns}_${name}_`;
    const svc = model.service(svcKey);
    const slices = model.slicesOf(svcKey);
    for (const [id, b] of Object.entries(running.data.backends)) {
      if (!id.startsWith(prefix)) continue;
      const portRef = id.slice(prefix.length);
      const sp = svc?.ports.find((p) => String(p.port) === portRef || p.name === portRef);
      if (!svc || !sp || svc.type === 'ExternalName' || b.unavailableReason) return null;
      const endpoints = endpointsFor(slices, sp.name);
      if (JSON.stringify(endpoints) !== JSON.stringify(b.endpoints)) upsert[id] = { ...b, endpoints };
    }
  }
  return upsert;
}

export interface GatewayOptions {
  translate: TranslateOptions;
  nginxBinary: string;
  runtimeDir: string;
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
}

export interface SyncRecord {
  at: number;
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
  private readonly debouncer: Debouncer;
  private running: GatewayConfig | null = null;
  private runningChecksum = '';
  private dataLost = false;
  private readonly retry = new Backoff({ initialMs: 500, maxMs: 30_000 });
  private retryTimer: NodeJS.Timeout | undefined;
  private reportedEvents = new Set<string>();
  private readonly programmedGeneration = new Map<string, number>();
  private readonly m: {
    reloads: Counter;
    dynamic: Counter;
    dynamicBytes: Counter;
    syncs: Histogram;
    checksum: Gauge;
    ready: Gauge;
  };
  private readyFlag = false;
  private readonly resolver: ExternalNameResolver;
  private pending: Change[] = [];
  /** Sources (Ingress keys) left out because their contribution fails nginx -t, with the content that failed. */
  private excluded = new Map<string, { fingerprint: string; error: string }>();
  /** Ingress keys programmed in nginx after the last full sync (for status publishing). */
  readonly programmed = new Set<string>();
  private readonly statusListeners: ((changed: string[]) => void)[] = [];
  onProgrammedChange(cb: (changed: string[]) => void): void {
    this.statusListeners.push(cb);
  }
  /** Recent syncs, for tests and benchmarks. */
  readonly history: SyncRecord[] = [];

  constructor(o: GatewayOptions, d: GatewayDeps) {
    this.o = o;
    this.d = d;
    this.log = d.log.child({ component: 'gateway' });
    this.dynamic = new DynamicClient(o.translate.listen.statusPort);
    this.nginx = new NginxProcess(
      { binary: o.nginxBinary, runtime: runtimePaths(o.runtimeDir), shutdownTimeoutMs: o.shutdownTimeoutMs },
      this.dynamic,
      d.log,
    );
    this.debouncer = new Debouncer({ quietMs: o.quietMs, maxWaitMs: o.maxWaitMs }, () => this.sync());
    this.resolver = new ExternalNameResolver(() => this.debouncer.trigger(), this.log);
    const r = [d.metrics.registry];
    this.m = {
      reloads: new Counter({ name: 'portico_nginx_reloads_total', help: 'nginx configuration reloads by result', labelNames: ['result'], registers: r }),
      dynamic: new Counter({ name: 'portico_dynamic_updates_total', help: 'Data-only updates pushed to Lua (no reload), by result', labelNames: ['result'], registers: r }),
      dynamicBytes: new Counter({ name: 'portico_dynamic_update_bytes_total', help: 'Bytes of data deltas sent to nginx', registers: r }),
      syncs: new Histogram({
        name: 'portico_sync_duration_seconds',
        help: 'Gateway sync latency (translate + diff + apply), by kind',
        labelNames: ['kind'],
        buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
        registers: r,
      }),
      checksum: new Gauge({ name: 'portico_config_checksum', help: 'First 48 bits of the running structure checksum', registers: r }),
      ready: new Gauge({ name: 'portico_nginx_ready', help: '1 once nginx runs a Portico configuration', registers: r }),
    };
    d.model.onChange((changes) => {
      for (const c of changes) this.pending.push(c);
      this.debouncer.trigger();
    });
    this.nginx.onRestart(() => {
      this.dataLost = true;
      this.log.warn('nginx restarted: re-applying configuration and data');
      this.debouncer.trigger();
    });
  }

  isReady(): boolean {
    return this.readyFlag && this.nginx.isRunning();
  }

  /** Runs until the signal aborts, then stops nginx gracefully. */
  async run(signal: AbortSignal): Promise<void> {
    this.nginx.prepare();
    this.debouncer.trigger();
    await new Promise<void>((r) => (signal.aborted ? r() : signal.addEventListener('abort', () => r(), { once: true })));
    this.debouncer.stop();
    this.resolver.stop();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.nginx.stop();
  }

  /** Forces an immediate sync (tests, benchmarks). */
  async flush(): Promise<void> {
    this.debouncer.trigger();
    await this.debouncer.flush();
  }

  private scheduleRetry(why: string): void {
    if (this.retryTimer) return;
    const delay = this.retry.next();
    this.log.warn('sync failed, retrying', { why, retryInMs: delay });
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.debouncer.trigger();
    }, delay);
    this.retryTimer.unref();
  }

  /**
   * Endpoint-only fast path: when every change since the last sync is an EndpointSlice change, recompute just the
   * backends of those Services (no full translation, no snapshot) and push them. Returns false when the full
   * path is needed (anything else changed, a Service or port vanished, nginx lost its data).
   */
  private async syncEndpointsOnly(changes: Change[], t0: number): Promise<boolean> {
    const running = this.running;
    if (!running || this.dataLost) return false;
    const upsert = endpointDelta(this.d.model, running, changes);
    if (!upsert) return false;
    let bytes = 0;
    try {
      if (Object.keys(upsert).length) {
        bytes = await this.dynamic.push({
          backends: { upsert, remove: [] },
          certificates: { upsert: {}, remove: [], defaultChanged: false, default: null },
        });
        this.m.dynamic.inc({ result: 'success' });
        this.m.dynamicBytes.inc(bytes);
        this.running = { structure: running.structure, data: { ...running.data, backends: { ...running.data.backends, ...upsert } } };
      }
    } catch (e) {
      this.m.dynamic.inc({ result: 'failure' });
      this.pending.push(...changes);
      this.log.error('endpoint update failed', { error: describe(e) });
      this.scheduleRetry(describe(e));
    }
    const ms = performance.now() - t0;
    this.m.syncs.observe({ kind: 'endpoints' }, ms / 1000);
    this.history.push({ at: Date.now(), reload: false, reasons: [], bytesSent: bytes, ms, ok: true });
    if (this.history.length > 1000) this.history.splice(0, this.history.length - 1000);
    return true;
  }

  private async sync(): Promise<void> {
    const t0 = performance.now();
    const changes = this.pending;
    this.pending = [];
    if (await this.syncEndpointsOnly(changes, t0)) return;
    const snap = this.d.model.snapshot();
    const result = translate(snap, this.o.translate);
    const desired = result.config;
    // ExternalName backends: endpoints from DNS (resolved outside the pure translation).
    for (const b of Object.values(desired.data.backends)) {
      if (!b.externalName || !b.externalPort) continue;
      const e = this.resolver.get(b.externalName);
      if (!e) b.unavailableReason = `resolving ExternalName ${b.externalName}`;
      else if (e.error || !e.addresses.length) b.unavailableReason = `ExternalName ${b.externalName} does not resolve: ${e.error ?? 'no addresses'}`;
      else b.endpoints = e.addresses.map((address) => ({ address, port: b.externalPort as number, weight: 1 }));
    }
    // Objects excluded earlier stay out while their contribution is unchanged; a changed one is tried again.
    const keep = new Map<string, { fingerprint: string; error: string }>();
    for (const [src, x] of this.excluded) if (fingerprint(desired.structure, src) === x.fingerprint) keep.set(src, x);
    this.excluded = keep;
    if (keep.size) desired.structure = excludeSources(desired.structure, new Set(keep.keys()));
    let base = this.running;
    if (this.dataLost && base) base = { structure: base.structure, data: { backends: {}, certificates: {}, defaultCertificate: null } };
    let diff = diffConfig(base, desired);
    let bytes = 0;
    let ok = true;
    try {
      if (diff.reload) {
        let checksum = structureChecksum(desired.structure);
        let conf = renderNginxConf(desired.structure, this.nginx.runtime, checksum);
        let v = await this.nginx.writeValidated(conf);
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
            diff = diffConfig(base, desired);
            checksum = structureChecksum(desired.structure);
            conf = renderNginxConf(desired.structure, this.nginx.runtime, checksum);
            v = await this.nginx.writeValidated(conf);
          }
        }
        if (!v.ok) {
          ok = false;
          this.m.reloads.inc({ result: 'failure' });
          this.controllerEvent('Warning', 'ReloadFailed', `nginx -t rejected the new configuration, keeping the running one: ${v.output.slice(0, 800)}`);
          this.log.error('nginx -t failed; keeping the last good configuration', { output: v.output });
          this.scheduleRetry('nginx -t failed');
          return;
        }
        let live: boolean;
        if (!this.nginx.isRunning()) {
          this.nginx.start();
          live = await this.nginx.waitLive(checksum);
          this.dataLost = true;
          base = this.running ? { structure: this.running.structure, data: { backends: {}, certificates: {}, defaultCertificate: null } } : null;
        } else {
          live = await this.nginx.reload(checksum);
        }
        if (!live) {
          ok = false;
          this.m.reloads.inc({ result: 'failure' });
          this.controllerEvent('Warning', 'ReloadFailed', 'nginx did not confirm the new configuration in time');
          this.scheduleRetry('reload not confirmed');
          return;
        }
        this.m.reloads.inc({ result: 'success' });
        this.runningChecksum = checksum;
        this.m.checksum.set(Number.parseInt(checksum.slice(0, 12), 16));
        const why = diff.reasons.join('; ') || 'configuration changed';
        this.controllerEvent('Normal', 'Reload', `nginx reloaded: ${why}`);
        this.log.info('nginx reloaded', { reasons: diff.reasons, ms: Math.round(performance.now() - t0) });
      } else if (this.dataLost && this.runningChecksum) {
        // nginx was restarted by the supervisor: wait for it before re-sending all data.
        if (!(await this.nginx.waitLive(this.runningChecksum))) {
          ok = false;
          this.scheduleRetry('restarted nginx not live');
          return;
        }
      }
      const delta = this.dataLost || !this.running ? diffConfig(base ? { ...base, data: { backends: {}, certificates: {}, defaultCertificate: null } } : null, desired).delta : diff.delta;
      if (!isEmptyDelta(delta)) {
        bytes = await this.dynamic.push(delta);
        this.m.dynamic.inc({ result: 'success' });
        this.m.dynamicBytes.inc(bytes);
      }
      this.running = desired;
      this.dataLost = false;
      this.readyFlag = true;
      this.m.ready.set(1);
      this.retry.reset();
      for (const src of this.excluded.keys()) {
        const st = result.ingressStatus.get(src);
        if (st) st.programmed = false;
      }
      this.reportIngresses(result.events, result.ingressStatus, diff.reload);
      const changed: string[] = [];
      const now = new Set([...result.ingressStatus].filter(([, st]) => st.served && st.programmed).map(([k]) => k));
      for (const k of now) if (!this.programmed.has(k)) changed.push(k);
      for (const k of this.programmed) if (!now.has(k)) changed.push(k);
      this.programmed.clear();
      for (const k of now) this.programmed.add(k);
      if (changed.length) for (const cb of this.statusListeners) cb(changed);
    } catch (e) {
      ok = false;
      if (!diff.reload) this.m.dynamic.inc({ result: 'failure' });
      this.log.error('sync failed', { error: describe(e) });
      this.scheduleRetry(describe(e));
    } finally {
      const ms = performance.now() - t0;
      this.m.syncs.observe({ kind: diff.reload ? 'reload' : 'dynamic' }, ms / 1000);
      this.history.push({ at: Date.now(), reload: diff.reload, reasons: diff.reasons, bytesSent: bytes, ms, ok });
      if (this.history.length > 1000) this.history.splice(0, this.history.length - 1000);
    }
  }

  private controllerEvent(type: 'Normal' | 'Warning', reason: string, note: string): void {
    const obj = this.d.controllerObject();
    if (obj) this.d.events.event(obj, type, reason, reason === 'Reload' || reason === 'ReloadFailed' ? 'Reload' : 'Sync', note);
  }

  /** Events on Ingresses: problems when they first appear, and "Programmed" when a generation goes live. */
  private reportIngresses(events: TranslateEvent[], status: Map<string, { served: boolean; programmed: boolean; problems: string[] }>, reload: boolean): void {
    const next = new Set<string>();
    for (const e of events) {
      const k = `${e.objectKey}\u0000${e.reason}\u0000${e.message}`;
      next.add(k);
      if (this.reportedEvents.has(k)) continue;
      const obj = this.d.ingressObject(e.objectKey);
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
      const how = reload ? 'with a reload' : 'dynamically';
      this.d.events.event(obj, 'Normal', 'Programmed', 'Programming', `Ingress generation ${gen} is served by nginx (applied ${how})`);
    }
    for (const key of [...this.programmedGeneration.keys()]) if (!status.has(key)) this.programmedGeneration.delete(key);
  }
}
