// Incremental translation: when only Ingresses and HTTPRoutes changed, translate just the part of the cluster they
// can affect and merge it into the previous result, so a new Ingress or HTTPRoute at 10,000 costs about what one
// costs at 100.
//
// The part is a closure: start from the changed objects (their previous and their current version), take every
// host and backend they claim (paths, default backends, canaries, TLS hosts; for an HTTPRoute, the router's keys
// "<pod port>/<host>" of the listeners it is attached to, and its backendRefs and mirrors), every object that claims
// any of those hosts, and for each backend the objects its result depends on; repeat until nothing is added. A
// backend depends on its owner (the oldest object whose path to it is served: its balancing settings, and what
// every other user's BackendSettingsConflict is measured against) and on canaries; so a backend brings in only its
// previous owner — unless the owner may change (the owner itself changed, a changed object is older than it, in
// its previous or its current version, the backend is new) or a canary is involved, when it brings in every object
// that names it. 10,000 hosts on one Service therefore cost one object, not 10,000. Everything the translation
// decides for the hosts, backends and objects of the closure then depends only on objects inside it, so
// translating the closure alone — with the very same `translate` — gives exactly the full translation's answer for
// them (incremental*.test.ts check this against the full translation over random change sequences).
//
// An HTTPRoute reaches no other route through its Gateways: where a route attaches (its parents' conditions, the
// hosts it serves on each listener) depends on the Gateways, their classes, ReferenceGrants, Namespaces and Services,
// never on other routes, and none of those changed. The Gateway API state (gateway-api/attach.ts) follows an
// HTTPRoute change the same way (only the listeners' attachedRoutes counts add routes up), and the part is
// translated with the whole cluster's state. Gateway certificates and ports do not depend on routes at all.
//
// A change of any other kind (Service, Secret, IngressClass, ConfigMap, Gateway, GatewayClass, ReferenceGrant,
// Namespace, ExternalName answers) runs the full translation; so does a closure larger than a quarter of all
// Ingresses and HTTPRoutes, where the full one is as cheap, and so does a closure that Portico's own objects
// (Routes, Plugins, Upstreams) or shared plugins reach (see clearOfCrds).
import type { Backend, GatewayConfig, GlobalSettings, HostRoutes, PluginInstance, Profile } from '../config/types.ts';
import { addIdx as add, delIdx as del, recordsOf, type CrdViews, type ModelSnapshot } from '../model/model.ts';
import type { HttpRouteRecord } from '../model/gateway-api.ts';
import type { NormalizedIngress } from '../model/types.ts';
import { tracingSettingsOf } from '../model/tracing-config.ts';
import { ingressProcessor, ingressReach } from '../kinds/ingress/processor.ts';
import { HTTPROUTE_REF_PREFIX, httpRouteProcessor, httpRouteReach, ownPluginsOnly } from '../kinds/httproute/processor.ts';
import { PROCESSORS } from '../kinds/processors.ts';
import { blockedWord } from './blocklist.ts';
import { byOwnerAge } from './objects.ts';
import { globalIpLists } from './plugin-instances.ts';
import { ingressKeyOf, ingressRef, isIngressServed, retainMemo, translate, TranslateMemo, type ClaimProcessor, type IngressStatus, type TranslateEvent, type TranslateOptions, type TranslateResult } from './translate.ts';
import { gatewayApiState, shareGatewayApiState, type GatewayApiState } from './gateway-api/attach.ts';
import { usesErrorBackend } from './phases/side-backends.ts';

interface Touches {
  readonly hosts: readonly string[];
  readonly backends: readonly string[];
  /** Its creationTimestamp: the older of two objects wins a path, and owns a backend. */
  readonly created: string;
}

/** The closed set of objects (kind-qualified refs), hosts and backends a change can affect. */
interface Closure {
  objects: Set<string>;
  hosts: Set<string>;
  backends: Set<string>;
}

/** Whether the closure follows the objects of a kind with paths; the others' (Routes) must stay clear of it. */
const followed = (p: ClaimProcessor): boolean => p === ingressProcessor || p === httpRouteProcessor;

const httpRouteRef = (key: string) => `${HTTPROUTE_REF_PREFIX}${key}`;
const httpRouteKeyOf = (ref: string): string | null => (ref.startsWith(HTTPROUTE_REF_PREFIX) ? ref.slice(HTTPROUTE_REF_PREFIX.length) : null);
const NONE: ReadonlySet<string> = new Set();

export interface IncrementalStats {
  full: number;
  scoped: number;
  /** Objects (Ingresses and HTTPRoutes) translated by the last run. */
  lastTranslated: number;
}

export class IncrementalTranslator {
  private readonly memo = new TranslateMemo();
  private last: TranslateResult | null = null;
  /** The revision of the snapshot the last result was translated from. */
  private lastRevision = -1;
  private lastEvents = new Map<string, TranslateEvent[]>();
  /** What each served object (as of the last run, by kind-qualified ref) touches, and the reverse indexes. */
  private readonly touches = new Map<string, Touches>();
  private readonly hostObjects = new Map<string, Set<string>>();
  private readonly backendObjects = new Map<string, Set<string>>();
  /** Profiles used per host, to rebuild the structure's profile list without scanning every route. */
  private readonly hostProfiles = new Map<string, Profile[]>();
  /** Hosts with a route that traces (enable-opentelemetry), to say whether the global tracing settings are on. */
  private readonly tracingHosts = new Set<string>();
  /** Served canary Ingresses as of the last run (a deleted canary still counts for the change that deletes it). */
  private readonly canaries = new Set<string>();
  /**
   * Served objects as of the last run whose plugins the merge cannot follow: Ingresses naming Plugins
   * (portico.dev/plugins) or running plugins of their annotations, HTTPRoutes naming Plugins (ExtensionRef).
   */
  private readonly withPlugins = new Set<string>();
  /**
   * Backends routes name besides their own (default-backend, mirror-target) as of the last full run: the Ingresses
   * naming them always run the full translation (hasPlugins), so only a full run changes this set.
   */
  private sideBackends = new Set<string>();
  /** Backends of external-auth plugins as of the last full run (plugins of that kind come only from full runs). */
  private authBackends = new Set<string>();
  readonly stats: IncrementalStats = { full: 0, scoped: 0, lastTranslated: 0 };
  /** Above this share of all Ingresses and HTTPRoutes a closure is translated in full instead (tests set 1 to force scoping). */
  private readonly maxShare: number;

  constructor(o: { maxClosureShare?: number } = {}) {
    this.maxShare = o.maxClosureShare ?? 0.25;
  }

  /**
   * `changedIngresses`, `changedHttpRoutes`: keys of the Ingresses and HTTPRoutes that changed since the previous
   * call, when nothing else did; `changedIngresses` null when anything else may have changed (the full
   * translation runs).
   */
  translate(snap: ModelSnapshot, o: TranslateOptions, changedIngresses: ReadonlySet<string> | null, changedHttpRoutes: ReadonlySet<string> = NONE): TranslateResult {
    const prev = this.last;
    if (!prev || !changedIngresses) return this.full(snap, o);
    if (!changedIngresses.size && !changedHttpRoutes.size) return prev;
    const changed = new Set<string>();
    for (const k of changedIngresses) changed.add(ingressRef(k));
    for (const k of changedHttpRoutes) changed.add(httpRouteRef(k));
    // Only the HTTPRoutes named changed among what the Gateway API state is made of: only they are compared.
    const state = gatewayApiState(snap, o.gatewayApi, { revision: this.lastRevision, httpRoutes: changedHttpRoutes });
    const closure = this.closure(snap, o, state, changed);
    if (!closure || !this.clearOfCrds(snap, o, closure) || shadowingClientAuth(prev) || passthroughInvolved(snap, o, prev, closure.objects)) return this.full(snap, o);
    // --default-backend-service: an Ingress sending its errors there names a backend no claim of it shows.
    for (const ref of closure.objects) if (usesErrorBackend(ingressOf(snap, ref), snap.global, o)) return this.full(snap, o);
    return this.scoped(snap, o, state, prev, closure);
  }

  /**
   * Backends whose endpoints were pushed outside the translation (the gateway's data lane): the last result takes
   * them over, so results built on it carry the endpoints nginx has.
   */
  patchBackends(upsert: Record<string, Backend>): void {
    const backends = this.last?.config.data.backends;
    if (!backends) return;
    for (const id in upsert) if (id in backends) backends[id] = upsert[id] as Backend;
  }

  /**
   * The closure follows Ingress and HTTPRoute claims only. Portico's own objects are outside it, so it is
   * translated alone only when none of them can change its answer: no Route claims one of its hosts or serves one
   * of its backends, no Upstream tunes one of its Services, no external-auth Plugin calls one of its backends, and
   * none of its objects names Plugins or runs plugins shared with others (now or before). Otherwise — and only
   * then — the full translation runs. Plugins and Consumers themselves did not change (only Ingresses and
   * HTTPRoutes did), so the previous ones are kept; an HTTPRoute's own plugins (its filters) are merged (scoped).
   */
  private clearOfCrds(snap: ModelSnapshot, o: TranslateOptions, c: Closure): boolean {
    // The ConfigMap's global external authentication adds a plugin and an auth backend to every Ingress, and its IP
    // lists a plugin to every path: the full translation keeps those (the merge keeps the previous plugins, and
    // whether such a plugin is there at all depends on every object's claims).
    if (snap.global.globalAuthUrl) return false;
    const lists = globalIpLists(snap.global, undefined);
    if (lists.ids.length || lists.closed.length) return false;
    for (const ref of c.objects) if (this.withPlugins.has(ref) || this.pluginsOf(snap, ref)) return false;
    // Objects of the other kinds with paths (Routes): none may claim a host or serve a backend of the closure.
    for (const p of PROCESSORS) {
      if (followed(p)) continue;
      for (const rec of p.records(snap)) {
        const r = p.reach(rec, snap, o);
        if (r.hosts.some((h) => c.hosts.has(h)) || r.backends.some((b) => c.backends.has(b))) return false;
      }
    }
    const upstreams = recordsOf(snap, 'Upstream');
    if (upstreams.size) {
      const tuned = new Set([...upstreams.values()].map((u) => u.serviceKey));
      // Backend ids are "<namespace>_<service>_<port>"; Kubernetes names never contain "_".
      for (const b of c.backends) {
        const [ns, svc] = b.split('_');
        if (tuned.has(`${ns}/${svc}`)) return false;
      }
    }
    for (const b of this.authBackends) if (c.backends.has(b)) return false;
    for (const b of this.sideBackends) if (c.backends.has(b)) return false;
    return true;
  }

  /** Whether an object's current version has plugins the merge cannot follow (see withPlugins). */
  private pluginsOf(snap: ModelSnapshot, ref: string): boolean {
    const hk = httpRouteKeyOf(ref);
    if (hk !== null) {
      const rt = recordsOf(snap, 'HTTPRoute').get(hk);
      return !!rt && !ownPluginsOnly(rt);
    }
    return hasPlugins(ingressOf(snap, ref));
  }

  private served(ing: NormalizedIngress | undefined, snap: ModelSnapshot, o: TranslateOptions): ing is NormalizedIngress {
    const words = snap.global.annotationValueWordBlocklist ?? [];
    return !!ing && isIngressServed(ing, snap.classes, o) && !(words.length && blockedWord(ing, words));
  }

  /** What an object's current version touches, when it is served (undefined: it claims nothing). */
  private current(snap: ModelSnapshot, o: TranslateOptions, state: GatewayApiState, ref: string): Touches | undefined {
    const hk = httpRouteKeyOf(ref);
    if (hk !== null) {
      const rt = recordsOf(snap, 'HTTPRoute').get(hk);
      const parents = state.routes.get(hk);
      if (!rt || !parents?.some((p) => p.accepted.status === 'True')) return undefined;
      return { ...httpRouteReach(rt, parents), created: rt.creationTimestamp };
    }
    const ing = ingressOf(snap, ref);
    return this.served(ing, snap, o) ? { ...ingressReach(ing), created: ing.creationTimestamp } : undefined;
  }

  private full(snap: ModelSnapshot, o: TranslateOptions): TranslateResult {
    const r = translate(snap, o, this.memo);
    retainMemo(this.memo, r.config);
    this.stats.full++;
    const routes = recordsOf(snap, 'HTTPRoute');
    this.stats.lastTranslated = snap.ingresses.size + routes.size;
    this.touches.clear();
    this.hostObjects.clear();
    this.backendObjects.clear();
    this.canaries.clear();
    this.withPlugins.clear();
    for (const ing of snap.ingresses.values()) {
      if (!this.served(ing, snap, o)) continue;
      const ref = ingressRef(ing.key);
      this.index(ref, { ...ingressReach(ing), created: ing.creationTimestamp }, ing.annotations.canary === true);
      if (hasPlugins(ing) || usesErrorBackend(ing, snap.global, o)) this.withPlugins.add(ref);
    }
    const state = gatewayApiState(snap, o.gatewayApi);
    for (const rt of routes.values()) {
      const ref = httpRouteRef(rt.key);
      const t = this.current(snap, o, state, ref);
      if (!t) continue;
      this.index(ref, t, false);
      if (!ownPluginsOnly(rt)) this.withPlugins.add(ref);
    }
    this.lastEvents = groupEvents(r.events);
    this.hostProfiles.clear();
    this.tracingHosts.clear();
    const byName = new Map(r.config.structure.profiles.map((p) => [p.name, p]));
    for (const [h, hr] of Object.entries(r.config.data.routes)) this.noteRoutes(h, hr, byName);
    // (--default-backend-service's backend for unknown hosts is none: every translation makes it, after the paths
    // using it, which the closure follows; it is made as in the full translation whenever the closure names it. Nor
    // is an HTTPRoute's mirror: it is one of the route's backends, in its reach.)
    this.sideBackends = new Set();
    for (const hr of Object.values(r.config.data.routes)) {
      for (const rule of hr.rules) {
        if (rule.route.defaultBackendId) this.sideBackends.add(rule.route.defaultBackendId);
        if (rule.route.errorPage?.backendId) this.sideBackends.add(rule.route.errorPage.backendId);
        if (rule.route.mirrors && !rule.route.source.startsWith(HTTPROUTE_REF_PREFIX)) for (const m of rule.route.mirrors) this.sideBackends.add(m.backendId);
      }
    }
    this.authBackends = new Set();
    for (const p of Object.values(r.config.data.plugins)) if (p.type === 'external-auth') this.authBackends.add(p.backendId);
    this.last = r;
    this.lastRevision = snap.revision;
    return r;
  }

  private index(ref: string, t: Touches, canary: boolean): void {
    if (canary) this.canaries.add(ref);
    else this.canaries.delete(ref);
    this.touches.set(ref, t);
    for (const h of t.hosts) add(this.hostObjects, h, ref);
    for (const b of t.backends) add(this.backendObjects, b, ref);
  }

  private unindex(ref: string): void {
    const t = this.touches.get(ref);
    if (!t) return;
    for (const h of t.hosts) del(this.hostObjects, h, ref);
    for (const b of t.backends) del(this.backendObjects, b, ref);
    this.touches.delete(ref);
    this.canaries.delete(ref);
  }

  /** What the merge keeps per host: the profiles its routes use, whether one of them traces. */
  private noteRoutes(host: string, hr: HostRoutes | undefined, byName: ReadonlyMap<string, Profile>): void {
    const used = new Map<string, Profile>();
    let traces = false;
    for (const r of hr?.rules ?? []) {
      const p = r.route.profile ? byName.get(r.route.profile) : undefined;
      if (p) used.set(p.name, p);
      if (r.route.tracing?.enabled) traces = true;
    }
    if (used.size) this.hostProfiles.set(host, [...used.values()]);
    else this.hostProfiles.delete(host);
    if (traces) this.tracingHosts.add(host);
    else this.tracingHosts.delete(host);
  }

  /** The closed set of objects, hosts and backends a change can affect (previous and current versions). */
  private closure(snap: ModelSnapshot, o: TranslateOptions, state: GatewayApiState, changed: ReadonlySet<string>): Closure | null {
    const prev = this.last as TranslateResult;
    const httpRoutes = recordsOf(snap, 'HTTPRoute');
    const limit = this.maxShare >= 1 ? Infinity : Math.max(64, (snap.ingresses.size + snap.rejected.size + httpRoutes.size) * this.maxShare);
    const isCanary = (ref: string) => ingressOf(snap, ref)?.annotations.canary === true || this.canaries.has(ref);
    // What the changed objects touch now (those served), computed once.
    const now = new Map<string, Touches>();
    for (const ref of changed) {
      const t = this.current(snap, o, state, ref);
      if (t) now.set(ref, t);
    }
    // The oldest changed object, in its previous or its current version (served): whether one of them may become a
    // backend's owner — by claiming it now, or by releasing a path that an older user of the backend then wins.
    let oldest: { created: string; ref: string } | undefined;
    for (const ref of changed) {
      for (const t of [now.get(ref), this.touches.get(ref)]) {
        if (!t) continue;
        const v = { created: t.created, ref };
        if (!oldest || byOwnerAge(v, oldest) < 0) oldest = v;
      }
    }
    // The object whose settings a backend has (another kind's object: undefined, see clearOfCrds).
    const ownerOf = (b: string): string | undefined => {
      const ref = this.memo.owners.get(b);
      return ref !== undefined && (ingressKeyOf(ref) !== null || httpRouteKeyOf(ref) !== null) ? ref : undefined;
    };
    const createdOf = (ref: string): string | undefined => {
      const hk = httpRouteKeyOf(ref);
      return hk !== null ? httpRoutes.get(hk)?.creationTimestamp : ingressOf(snap, ref)?.creationTimestamp;
    };
    let canaryInvolved = [...changed].some(isCanary);
    for (;;) {
      const objects = new Set<string>();
      const hosts = new Set<string>();
      const backends = new Set<string>();
      const queue: string[] = [];
      const enqueue = (ref: string) => {
        if (objects.has(ref)) return;
        objects.add(ref);
        queue.push(ref);
        if (!canaryInvolved && isCanary(ref)) canaryInvolved = true;
      };
      const everyUser = (b: string): boolean => {
        if (canaryInvolved || prev.config.data.backends[b]?.canary) return true;
        const owner = ownerOf(b);
        if (!owner || changed.has(owner)) return true;
        const created = createdOf(owner);
        return created === undefined || (oldest !== undefined && byOwnerAge(oldest, { created, ref: owner }) <= 0);
      };
      const visit = (t: Touches | undefined) => {
        if (!t) return;
        for (const h of t.hosts) {
          if (hosts.has(h)) continue;
          hosts.add(h);
          for (const k of this.hostObjects.get(h) ?? []) enqueue(k);
        }
        for (const b of t.backends) {
          if (backends.has(b)) continue;
          backends.add(b);
          if (everyUser(b)) for (const k of this.backendObjects.get(b) ?? []) enqueue(k);
          else enqueue(ownerOf(b) as string);
        }
      };
      for (const ref of changed) enqueue(ref);
      const wasCanary = canaryInvolved;
      while (queue.length) {
        if (objects.size > limit) return null;
        const ref = queue.pop() as string;
        // The previous version's reach (to undo it) and the current one's (to apply it).
        visit(this.touches.get(ref));
        if (changed.has(ref)) visit(now.get(ref));
      }
      // A canary found on the way changes what backends depend on: start over with every user of each backend.
      if (canaryInvolved && !wasCanary) continue;
      return { objects, hosts, backends };
    }
  }

  private scoped(snap: ModelSnapshot, o: TranslateOptions, state: GatewayApiState, prev: TranslateResult, c: Closure): TranslateResult {
    const ingresses = new Map<string, NormalizedIngress>();
    const rejected = new Map<string, { key: string; reason: string }>();
    const httpRoutes = new Map<string, HttpRouteRecord>();
    const allRoutes = recordsOf(snap, 'HTTPRoute');
    for (const ref of c.objects) {
      const hk = httpRouteKeyOf(ref);
      if (hk !== null) {
        const rt = allRoutes.get(hk);
        if (rt) httpRoutes.set(hk, rt);
        continue;
      }
      const k = ingressKeyOf(ref) as string;
      const ing = snap.ingresses.get(k);
      if (ing) ingresses.set(k, ing);
      const rj = snap.rejected.get(k);
      if (rj) rejected.set(k, rj);
    }
    // The other kinds' objects with paths (Routes) are left out: none touches the closure (clearOfCrds), and the
    // previous result holds theirs. (A processor's records are the model's records of its kind.) The HTTPRoutes of
    // the closure are translated with the whole cluster's Gateway API state: they attach as they do in the whole.
    const crds: { [kind: string]: ReadonlyMap<string, unknown> | undefined } = { ...snap.crds };
    for (const p of PROCESSORS) if (p !== ingressProcessor) crds[p.kind] = new Map();
    crds.HTTPRoute = httpRoutes;
    shareGatewayApiState(httpRoutes, state);
    const part = translate({ ...snap, ingresses, rejected, crds: crds as CrdViews }, o, this.memo);
    this.stats.scoped++;
    this.stats.lastTranslated = ingresses.size + httpRoutes.size;

    const pd = prev.config.data;
    const d = part.config.data;
    // The previous records with the closure's keys replaced: copied only when one of them changes (a copy of 10,000
    // keys is most of what a scoped translation costs).
    const routes = new Merged(pd.routes);
    const certificates = new Merged(pd.certificates);
    const clientAuth = new Merged(pd.clientAuth ?? {});
    const byName = new Map(prev.config.structure.profiles.map((p) => [p.name, p]));
    for (const p of part.config.structure.profiles) byName.set(p.name, p);
    const plugins = mergePlugins(pd.plugins, d.plugins, pd.routes, d.routes, c.hosts);
    for (const h of c.hosts) {
      const hr = d.routes[h];
      routes.set(h, hr);
      certificates.set(h, d.certificates[h]);
      clientAuth.set(h, d.clientAuth?.[h]);
      this.noteRoutes(h, hr, byName);
    }
    // A backend no object of the closure names is made as before (its users are all outside the closure): the
    // part's own may differ (--default-backend-service's backend, which every translation makes, is made there
    // without its users' settings).
    const backends = new Merged(pd.backends);
    const touchedBackends = new Set([...c.backends, ...Object.keys(d.backends)]);
    for (const id of touchedBackends) {
      if (!c.backends.has(id) && id in pd.backends) continue;
      backends.set(id, d.backends[id]);
    }
    // What the memo kept for hosts and backends the closure no longer has goes (retainMemo does so for all after a
    // full translation): between two full translations, routes and Ingresses come and go.
    for (const h of c.hosts) if (!(h in routes.out)) this.memo.hosts.delete(h);
    for (const id of c.backends) {
      if (id in backends.out) continue;
      this.memo.backends.delete(id);
      this.memo.backends.delete(`canary ${id}`);
      this.memo.owners.delete(id);
    }
    const status = new Map<string, IngressStatus>(prev.status);
    const partEvents = groupEvents(part.events);
    for (const ref of c.objects) {
      const st = part.status.get(ref);
      if (st) status.set(ref, st);
      else status.delete(ref);
      const ev = partEvents.get(ref);
      if (ev) this.lastEvents.set(ref, ev);
      else this.lastEvents.delete(ref);
      this.unindex(ref);
      const t = this.current(snap, o, state, ref);
      if (t) this.index(ref, t, ingressOf(snap, ref)?.annotations.canary === true);
    }
    const profiles = new Map<string, Profile>();
    for (const ps of this.hostProfiles.values()) for (const p of ps) profiles.set(p.name, p);
    const config: GatewayConfig = {
      structure: {
        global: this.globalOf(snap, o, part),
        profiles: [...profiles.values()].sort((a, b) => (a.name < b.name ? -1 : 1)),
        // No passthrough host before nor in the closure (passthroughInvolved): the part's (empty) decision is everyone's.
        ...(part.config.structure.passthrough ? { passthrough: part.config.structure.passthrough } : {}),
      },
      data: { routes: routes.out, backends: backends.out, certificates: certificates.out, defaultCertificate: d.defaultCertificate, plugins, consumers: pd.consumers, ...(Object.keys(clientAuth.out).length ? { clientAuth: clientAuth.out } : {}) },
    };
    const events: TranslateEvent[] = [];
    for (const ev of this.lastEvents.values()) events.push(...ev);
    const r: TranslateResult = { config, status, events, touched: { objects: new Set(c.objects), hosts: c.hosts, backends: touchedBackends } };
    this.last = r;
    this.lastRevision = snap.revision;
    return r;
  }

  /**
   * The part's global settings are everyone's but one: whether tracing is on in nginx.conf follows the routes of
   * every host (an Ingress's enable-opentelemetry), not only the part's.
   */
  private globalOf(snap: ModelSnapshot, o: TranslateOptions, part: TranslateResult): GlobalSettings {
    const global = part.config.structure.global;
    const g = snap.global;
    if (!g.otlpCollectorHost || g.otelEnabled) return global;
    const partTraces = Object.values(part.config.data.routes).some((hr) => hr.rules.some((r) => r.route.tracing?.enabled));
    const traces = this.tracingHosts.size > 0;
    if (traces === partTraces) return global;
    const { tracing: _, ...rest } = global;
    const tracing = tracingSettingsOf(g, traces, new Set(o.ownAddresses ?? []));
    return tracing ? { ...rest, tracing } : rest;
  }
}

/** A record of the previous result with some keys set or deleted: the same object while none differs. */
class Merged<T> {
  out: Record<string, T>;
  private readonly before: Record<string, T>;
  constructor(before: Record<string, T>) {
    this.before = before;
    this.out = before;
  }
  set(k: string, v: T | undefined): void {
    if (v === undefined ? !(k in this.out) : this.out[k] === v) return;
    if (this.out === this.before) this.out = { ...this.before };
    if (v === undefined) delete this.out[k];
    else this.out[k] = v;
  }
}

function ingressOf(snap: ModelSnapshot, ref: string): NormalizedIngress | undefined {
  const k = ingressKeyOf(ref);
  return k === null ? undefined : snap.ingresses.get(k);
}

/**
 * The plugins of the merged result: the previous ones, without the instances of the HTTPRoute filters that the
 * closure's hosts had, with those they have now. Every other plugin comes from objects outside the closure or of
 * kinds that changed nothing (clearOfCrds): kept. A closure HTTPRoute's filter instances are its own (ids no other
 * object registers, see ownPluginsOnly) and all in use by its routes (nothing fails them closed), so the ids its
 * rules name are exactly the ones it registers.
 */
function mergePlugins(before: Record<string, PluginInstance>, part: Record<string, PluginInstance>, beforeRoutes: Record<string, HostRoutes>, partRoutes: Record<string, HostRoutes>, hosts: ReadonlySet<string>): Record<string, PluginInstance> {
  const named = (routes: Record<string, HostRoutes>) => {
    const ids = new Set<string>();
    for (const h of hosts) {
      for (const r of routes[h]?.rules ?? []) {
        if (!r.route.source.startsWith(HTTPROUTE_REF_PREFIX)) continue;
        for (const id of r.route.plugins ?? []) ids.add(id);
        // A backendRef's own filters: on the entries of the split.
        for (const s of r.route.split ?? []) for (const id of s.plugins ?? []) ids.add(id);
      }
    }
    return ids;
  };
  const gone = named(beforeRoutes);
  const kept = named(partRoutes);
  if (!gone.size && !kept.size) return before;
  const out = { ...before };
  for (const id of gone) if (!kept.has(id)) delete out[id];
  for (const id of kept) {
    const p = part[id];
    if (p) out[id] = p;
  }
  return out;
}

/**
 * TLS passthrough is decided across all hosts (which Ingress passes a host through, the exact hosts a passthrough
 * wildcard leaves alone): with --enable-ssl-passthrough, a configuration that has a passthrough host, or a closure
 * with an Ingress asking for one, is translated in full.
 */
function passthroughInvolved(snap: ModelSnapshot, o: TranslateOptions, prev: TranslateResult, objects: ReadonlySet<string>): boolean {
  if (!o.sslPassthrough) return false;
  if (prev.config.structure.passthrough?.hosts.length) return true;
  for (const ref of objects) if (ingressOf(snap, ref)?.annotations['ssl-passthrough'] === true) return true;
  return false;
}

/**
 * A wildcard or "_" host asks for client certificates: the hosts below it get an "ask for nothing" entry, which any
 * host's change can add or drop, so such a configuration is translated in full. (An Ingress setting auth-tls-* is
 * translated in full anyway: its client-cert plugin makes hasPlugins true.)
 */
function shadowingClientAuth(prev: TranslateResult): boolean {
  for (const h in prev.config.data.clientAuth ?? {}) if (h === '_' || h.startsWith('*.')) return true;
  return false;
}

/** The Ingress runs plugins: named ones (portico.dev/plugins) or ingress-nginx annotations that are plugins. */
function hasPlugins(ing: NormalizedIngress | undefined): boolean {
  if (!ing) return false;
  const a = ing.annotations;
  // rewrite-target, app-root and from-to-www-redirect are plugin instances the translation makes (per path or host);
  // default-backend and mirror-target name backends no claim of the Ingress shows (see sideBackends).
  // backend-protocol FCGI: its FastCGI settings count against a per-namespace bound (phases/objects.ts), which reads
  // every Ingress of the namespace.
  return a.plugins !== undefined || ing.annotationPlugins.length > 0 || a['rewrite-target'] !== undefined || a['app-root'] !== undefined || a['from-to-www-redirect'] === true || a['default-backend'] !== undefined || a['mirror-target'] !== undefined || a['backend-protocol'] === 'FCGI';
}

function groupEvents(events: readonly TranslateEvent[]): Map<string, TranslateEvent[]> {
  const out = new Map<string, TranslateEvent[]>();
  for (const e of events) {
    let l = out.get(e.ref);
    if (!l) out.set(e.ref, (l = []));
    l.push(e);
  }
  return out;
}
