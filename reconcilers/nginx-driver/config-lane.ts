// The configuration lane (model changes other than endpoints; debounced): translates the model (pure; only the
// closure of what changed when only Ingresses and HTTPRoutes did), diffs the result against what nginx runs and
// pushes the data delta — routes, backends, certificates — to Lua. Only when the structure changed (listeners,
// global settings, a never-seen directive profile) does it first apply the new structure (structure-apply.ts:
// render → nginx -t → reload → confirm). Adding, changing or removing an Ingress or an HTTPRoute is data. Then it
// reports on the objects the sync touched and, after the first complete configuration, turns ready.
import { describe } from '../../operator/informer.ts';
import type { Logger } from '../../operator/log.ts';
import type { Backend, DataPlane, GatewayConfig, Structure } from '../config/types.ts';
import type { Change, Model } from '../model/model.ts';
import { diffConfig, isEmptyDelta } from '../translate/diff.ts';
import { IncrementalTranslator } from '../translate/incremental.ts';
import type { IngressStatus, TranslateEvent } from '../translate/translate.ts';
import type { CertificateZone } from './certificate-zone.ts';
import { DiffScope } from './diff-scope.ts';
import { endpointUpdates } from './endpoint-updates.ts';
import type { Exclusion } from './exclusion.ts';
import { resolveExternalNames } from './externalnames.ts';
import { applyOcspResponders, ocspNames } from './ocsp-responders.ts';
import { Lane } from './lane.ts';
import type { DynamicClient, PushResult } from './nginx/dynamic.ts';
import type { NginxProcess } from './nginx/process.ts';
import { emptyData, heldWithout, type NginxState } from './nginx-state.ts';
import type { OwnAddresses } from './own-addresses.ts';
import type { PushLock } from './push-lock.ts';
import type { Readiness } from './readiness.ts';
import type { IngressReporting } from './reporting.ts';
import type { ExternalNameResolver } from './resolver.ts';
import type { StreamServices } from './stream.ts';
import type { StructureApplier } from './structure-apply.ts';
import type { SyncReporting } from './sync-reporting.ts';

export interface ConfigurationLaneParts {
  model: Model;
  state: NginxState;
  lock: PushLock;
  own: OwnAddresses;
  stream: StreamServices;
  resolver: ExternalNameResolver;
  exclusion: Exclusion;
  applier: StructureApplier;
  certificates: CertificateZone;
  nginx: NginxProcess;
  dynamic: DynamicClient;
  reporting: SyncReporting;
  objects: IngressReporting;
  readiness: Readiness;
  log: Logger;
}

/** A translated desired configuration with the events and status it reports. */
interface Desired {
  desired: GatewayConfig;
  events: TranslateEvent[];
  status: Map<string, IngressStatus>;
}

/** What a sync did, for its history record (filled in as it goes). */
interface SyncOutcome {
  reload: boolean;
  reasons: string[];
  bytes: number;
  ok: boolean;
}

export class ConfigurationLane {
  readonly lane: Lane;
  /** Translates only what changed when only Ingresses and HTTPRoutes did (see incremental.ts). */
  readonly translator = new IncrementalTranslator();
  /**
   * Ingresses and HTTPRoutes changed since the last translation (keys); null = something else changed too
   * (translate everything).
   */
  private changed: { ingresses: Set<string>; httpRoutes: Set<string> } | null = null;
  /** Services whose EndpointSlices changed since the running sync translated the model. */
  private slicesSinceTranslate: Set<string> | null = null;
  private readonly scope = new DiffScope();
  private readonly p: ConfigurationLaneParts;

  constructor(timing: { quietMs: number; maxWaitMs: number }, p: ConfigurationLaneParts) {
    this.p = p;
    this.lane = new Lane(
      { quietMs: timing.quietMs, maxWaitMs: timing.maxWaitMs, retryInitialMs: 500, retryMaxMs: 30_000 },
      {
        run: () => this.sync(),
        onError: (e) => p.reporting.laneCrashed('structural', e),
        onRetry: (ms) => p.log.warn('structural sync failed, retrying', { retryInMs: ms }),
      },
    );
  }

  /** A model change other than an EndpointSlice: the next translation covers it (no trigger). */
  noteChange(c: Change): void {
    if (c.kind === 'Ingress') this.changed?.ingresses.add(c.key);
    else if (c.kind === 'HTTPRoute') this.changed?.httpRoutes.add(c.key);
    else if (c.kind !== 'Stream') this.changed = null;
  }

  /** A Service's EndpointSlices changed: a sync already translating takes its endpoints from the model at push time. */
  noteSlices(serviceKey: string): void {
    this.slicesSinceTranslate?.add(serviceKey);
  }

  /** The next sync translates everything (no trigger). */
  translateEverything(): void {
    this.changed = null;
  }

  /** Next sync translates everything (something else changed, e.g. an ExternalName's answer). */
  translateAll(): void {
    this.changed = null;
    this.lane.trigger();
  }

  /** One run of the lane: full or incremental translation; reload when the structure changed; then the data delta. */
  private async sync(): Promise<boolean> {
    const t0 = performance.now();
    const out: SyncOutcome = { reload: false, reasons: [], bytes: 0, ok: false };
    const { reporting, log } = this.p;
    try {
      return await this.syncSteps(t0, out);
    } catch (e) {
      reporting.m.failures.inc({ lane: 'structural' });
      log.error('sync failed', { error: describe(e) });
      return false;
    } finally {
      const ms = performance.now() - t0;
      reporting.m.syncs.observe({ kind: out.reload ? 'reload' : 'dynamic' }, ms / 1000);
      reporting.record({ lane: 'structural', reload: out.reload, reasons: out.reasons, bytesSent: out.bytes, ms, ok: out.ok });
    }
  }

  private async syncSteps(t0: number, out: SyncOutcome): Promise<boolean> {
    const { state, nginx, exclusion } = this.p;
    const { desired, events, status } = this.translate();
    const running = state.running();
    const diff = diffConfig(running, desired);
    // (A master that died is restarted by the supervisor, which then triggers this lane; never start a second one.)
    out.reload = diff.reload;
    out.reasons = diff.reasons;
    let structureOk = true;
    if (out.reload) {
      structureOk = await this.p.applier.apply(desired, running);
      // Newly found culprits are out of the structure now; their routes go too.
      exclusion.apply(desired, events, status);
      if (!structureOk) {
        if (!state.structure || !nginx.isRunning()) return false;
        // The running nginx.conf stays. Everything it can serve is still pushed — a ConfigMap value nginx
        // refuses must not hold back every Ingress — except routes that need a profile it does not have.
        desired.data.routes = this.servableRoutes(desired.data.routes, state.structure);
        this.scope.invalidate();
      }
    } else if (state.dataLost && state.checksum) {
      // nginx was restarted by the supervisor: wait for it before re-sending all data.
      if (!(await nginx.waitLive(state.checksum))) return false;
    }
    out.bytes = await this.p.lock.run(() => this.push(desired));
    // What Lua holds is now exactly `desired`: the next diff needs only what changes from here.
    const ended = this.scope.restart();
    const reported = exclusion.size ? null : ended;
    if (!structureOk) return false; // the reload is retried with backoff; the data is live
    out.ok = true;
    // The first sync after a start programs everything at once: one event on the controller instead of a
    // "Programmed" event per Ingress (a restart at 10k Ingresses would otherwise post 10k events).
    this.p.objects.report(events, status, reported?.objects ?? null, out.reload, this.p.readiness.reached);
    this.p.readiness.reach(this.p.objects.programmed.size, t0);
    return true;
  }

  /** Translates the model (only what changed when only Ingresses and HTTPRoutes did) and leaves the excluded profiles out. */
  private translate(): Desired {
    const { model, stream, resolver, exclusion } = this.p;
    this.slicesSinceTranslate = new Set();
    const changed = this.changed;
    this.changed = { ingresses: new Set(), httpRoutes: new Set() };
    let result;
    try {
      result = this.translator.translate(model.snapshot(), this.p.own.options, changed?.ingresses ?? null, changed?.httpRoutes);
    } catch (e) {
      this.changed = null;
      throw e;
    }
    this.scope.widen(result.touched);
    // The translator keeps its result to build the next one on: work on shallow copies, never on it.
    const desired: GatewayConfig = { structure: stream.apply(result.config.structure), data: { ...result.config.data } };
    const events = [...result.events, ...resolveExternalNames(desired, resolver, model, this.scope.current?.backends, ocspNames(desired))];
    applyOcspResponders(desired, resolver, model, this.p.own.addresses, this.p.log);
    const status = exclusion.size ? new Map(result.status) : result.status;
    // Profiles excluded earlier stay out (same name = same content = same verdict) while routes still use them.
    exclusion.prune(desired.structure);
    exclusion.apply(desired, events, status);
    return { desired, events, status };
  }

  /** Under the push lock: the data delta from what Lua holds to `desired`, pushed. Returns the bytes sent. */
  private async push(desired: GatewayConfig): Promise<number> {
    const { model, state, own, reporting, certificates } = this.p;
    // Endpoints may have moved on since the translation (the data lane kept pushing): take those Services' from
    // the model now. (Whatever else changed announced itself through the model and has its own sync queued.)
    const moved = this.slicesSinceTranslate ?? new Set<string>();
    this.slicesSinceTranslate = null;
    let fresh: Record<string, Backend> = {};
    if (moved.size) {
      fresh = endpointUpdates(model, desired.data.backends, moved, own.addresses).upsert;
      desired.data.backends = { ...desired.data.backends, ...fresh };
      for (const id of Object.keys(fresh)) this.scope.current?.backends.add(id);
    }
    const base = state.dataLost ? emptyData() : state.held;
    const scope = state.dataLost || this.p.exclusion.size || certificates.missing.length ? null : this.scope.current;
    const delta = diffConfig({ structure: desired.structure, data: base }, desired, scope).delta;
    let n = 0;
    let pushed: PushResult = { bytes: 0 };
    if (!isEmptyDelta(delta)) {
      try {
        pushed = await this.p.dynamic.pushData(delta);
        n = pushed.bytes;
      } catch (e) {
        reporting.m.dynamic.inc({ result: 'failure' });
        throw e;
      }
      reporting.m.dynamic.inc({ result: 'success' });
      reporting.m.dynamicBytes.inc(n);
    }
    // Certificates a full zone refused are not held: the next sync sends them again (routes went anyway).
    state.held = pushed.notStored ? heldWithout(desired.data, base, pushed.notStored) : desired.data;
    certificates.update(pushed.notStored, desired.data);
    state.dataLost = false;
    this.translator.patchBackends(fresh);
    return n;
  }

  /** Hosts whose routes all use profiles `structure` has; for the others the routes Lua holds now stay. */
  private servableRoutes(routes: DataPlane['routes'], structure: Structure): DataPlane['routes'] {
    const have = new Set(structure.profiles.map((p) => p.name));
    const out: DataPlane['routes'] = {};
    for (const [h, hr] of Object.entries(routes)) {
      if (hr.rules.every((r) => !r.route.profile || have.has(r.route.profile))) out[h] = hr;
      else if (this.p.state.held.routes[h]) out[h] = this.p.state.held.routes[h];
    }
    return out;
  }
}
