// Incremental translation: when only Ingresses changed, translate just the part of the cluster they can affect
// and merge it into the previous result, so a new Ingress at 10,000 costs about what one costs at 100.
//
// The part is a closure: start from the changed Ingresses (their previous and their current version), take every
// host and backend they claim (paths, default backends, canaries, TLS hosts), every Ingress that claims any of
// those hosts, and for each backend the Ingresses its result depends on; repeat until nothing is added. A backend
// depends on its owner (the oldest Ingress whose path to it is served: its balancing settings, and what every
// other user's BackendSettingsConflict is measured against) and on canaries; so a backend brings in only its
// previous owner — unless the owner may change (the owner itself changed, a changed Ingress is older than it in its
// previous or its current version, the backend is new) or a canary is involved, when it brings in every Ingress
// that names it. 10,000 hosts on one Service therefore cost one Ingress, not 10,000. Everything the translation
// decides for the hosts, backends and Ingresses of the closure then depends only on Ingresses inside it, so
// translating the closure alone — with the very same `translate` — gives exactly the full translation's answer for
// them (incremental.test.ts checks this against the full translation over random change sequences). A change of any other kind (Service, Secret,
// IngressClass, ConfigMap, ExternalName answers) runs the full translation; so does a closure larger than a
// quarter of all Ingresses, where the full one is as cheap, and so does a closure that Portico's own objects
// (Routes, Plugins, Upstreams) reach (see clearOfCrds).
import type { Backend, Certificate, ClientAuth, GatewayConfig, GlobalSettings, HostRoutes, Profile } from '../config/types.ts';
import { addIdx as add, delIdx as del, recordsOf, type CrdViews, type ModelSnapshot } from '../model/model.ts';
import type { NormalizedIngress } from '../model/types.ts';
import { tracingSettingsOf } from '../model/tracing-config.ts';
import { ingressReach } from '../kinds/ingress/processor.ts';
import { PROCESSORS } from '../kinds/processors.ts';
import { blockedWord } from './blocklist.ts';
import { byOwnerAge } from './objects.ts';
import { globalIpLists } from './plugin-instances.ts';
import { ingressKeyOf, ingressRef, isIngressServed, retainMemo, translate, TranslateMemo, type IngressStatus, type TranslateEvent, type TranslateOptions, type TranslateResult } from './translate.ts';
import { usesErrorBackend } from './phases/side-backends.ts';

interface Touches {
  readonly hosts: readonly string[];
  readonly backends: readonly string[];
  /** Its creationTimestamp: the older of two Ingresses wins a path, and owns a backend. */
  readonly created: string;
}

/** What an Ingress touches: the hosts it reaches (claims, TLS, from-to-www-redirect) and its backends. */
const touchesOf = (ing: NormalizedIngress): Touches => ({ ...ingressReach(ing), created: ing.creationTimestamp });

export interface IncrementalStats {
  full: number;
  scoped: number;
  /** Ingresses translated by the last run. */
  lastTranslated: number;
}

export class IncrementalTranslator {
  private readonly memo = new TranslateMemo();
  private last: TranslateResult | null = null;
  private lastEvents = new Map<string, TranslateEvent[]>();
  /** What each served Ingress (as of the last run) touches, and the reverse indexes. */
  private readonly touches = new Map<string, Touches>();
  private readonly hostIngresses = new Map<string, Set<string>>();
  private readonly backendIngresses = new Map<string, Set<string>>();
  /** Profiles used per host, to rebuild the structure's profile list without scanning every route. */
  private readonly hostProfiles = new Map<string, Profile[]>();
  /** Hosts with a route that traces (enable-opentelemetry), to say whether the global tracing settings are on. */
  private readonly tracingHosts = new Set<string>();
  /** Served canary Ingresses as of the last run (a deleted canary still counts for the change that deletes it). */
  private readonly canaries = new Set<string>();
  /** Served Ingresses naming Plugins (portico.dev/plugins) as of the last run. */
  private readonly withPlugins = new Set<string>();
  /**
   * Backends routes name besides their own (default-backend, mirror-target) as of the last full run: the Ingresses
   * naming them always run the full translation (hasPlugins), so only a full run changes this set.
   */
  private sideBackends = new Set<string>();
  readonly stats: IncrementalStats = { full: 0, scoped: 0, lastTranslated: 0 };
  /** Above this share of all Ingresses a closure is translated in full instead (tests set 1 to force scoping). */
  private readonly maxShare: number;

  constructor(o: { maxClosureShare?: number } = {}) {
    this.maxShare = o.maxClosureShare ?? 0.25;
  }

  /**
   * `changedIngresses`: keys of the Ingresses that changed since the previous call, when nothing else did; null
   * when anything else may have changed (the full translation runs).
   */
  translate(snap: ModelSnapshot, o: TranslateOptions, changedIngresses: ReadonlySet<string> | null): TranslateResult {
    const prev = this.last;
    if (!prev || !changedIngresses) return this.full(snap, o);
    if (!changedIngresses.size) return prev;
    const closure = this.closure(snap, o, changedIngresses);
    if (!closure || !this.clearOfCrds(snap, closure) || shadowingClientAuth(prev) || passthroughInvolved(snap, o, prev, closure.ingresses)) return this.full(snap, o);
    // --default-backend-service: an Ingress sending its errors there names a backend no claim of it shows.
    for (const k of closure.ingresses) if (usesErrorBackend(snap.ingresses.get(k), snap.global, o)) return this.full(snap, o);
    return this.scoped(snap, o, prev, closure);
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
   * The closure follows Ingress claims only. Portico's own objects are outside it, so it is translated alone only
   * when none of them can change its answer: no Route claims one of its hosts or serves one of its backends, no
   * Upstream tunes one of its Services, no external-auth Plugin calls one of its backends, and none of its
   * Ingresses names Plugins (now or before). Otherwise — and only then — the full translation runs. Plugins and
   * Consumers themselves did not change (only Ingresses did), so the previous ones are kept.
   */
  private clearOfCrds(snap: ModelSnapshot, c: { ingresses: Set<string>; hosts: Set<string>; backends: Set<string> }): boolean {
    // The ConfigMap's global external authentication adds a plugin and an auth backend to every Ingress, and its IP
    // lists a plugin to every path: the full translation keeps those (the merge of a scoped one keeps the previous
    // plugins, and whether such a plugin is there at all depends on every object's claims).
    if (snap.global.globalAuthUrl) return false;
    const lists = globalIpLists(snap.global, undefined);
    if (lists.ids.length || lists.closed.length) return false;
    const noCrds = Object.values(snap.crds).every((m) => !m?.size);
    if (noCrds && !this.withPlugins.size && ![...c.ingresses].some((k) => hasPlugins(snap.ingresses.get(k)))) return true;
    for (const k of c.ingresses) if (this.withPlugins.has(k) || hasPlugins(snap.ingresses.get(k))) return false;
    // Objects of the other kinds with paths (Routes): none may claim a host or serve a backend of the closure.
    for (const p of PROCESSORS) {
      if (p.kind === 'Ingress') continue;
      for (const rec of p.records(snap)) {
        const r = p.reach(rec);
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
    for (const p of Object.values(this.last?.config.data.plugins ?? {})) if (p.type === 'external-auth' && c.backends.has(p.backendId)) return false;
    for (const b of this.sideBackends) if (c.backends.has(b)) return false;
    return true;
  }

  private served(ing: NormalizedIngress | undefined, snap: ModelSnapshot, o: TranslateOptions): ing is NormalizedIngress {
    const words = snap.global.annotationValueWordBlocklist ?? [];
    return !!ing && isIngressServed(ing, snap.classes, o) && !(words.length && blockedWord(ing, words));
  }

  private full(snap: ModelSnapshot, o: TranslateOptions): TranslateResult {
    const r = translate(snap, o, this.memo);
    retainMemo(this.memo, r.config);
    this.stats.full++;
    this.stats.lastTranslated = snap.ingresses.size;
    this.touches.clear();
    this.hostIngresses.clear();
    this.backendIngresses.clear();
    this.canaries.clear();
    this.withPlugins.clear();
    for (const ing of snap.ingresses.values()) if (this.served(ing, snap, o)) this.index(ing.key, touchesOf(ing), ing.annotations.canary === true);
    for (const ing of snap.ingresses.values()) if ((hasPlugins(ing) || usesErrorBackend(ing, snap.global, o)) && this.served(ing, snap, o)) this.withPlugins.add(ing.key);
    this.lastEvents = groupEvents(r.events);
    this.hostProfiles.clear();
    this.tracingHosts.clear();
    const byName = new Map(r.config.structure.profiles.map((p) => [p.name, p]));
    for (const [h, hr] of Object.entries(r.config.data.routes)) this.noteRoutes(h, hr, byName);
    this.sideBackends = new Set();
    for (const hr of Object.values(r.config.data.routes)) {
      if (hr.unmatchedBackendId) this.sideBackends.add(hr.unmatchedBackendId);
      for (const rule of hr.rules) {
        if (rule.route.defaultBackendId) this.sideBackends.add(rule.route.defaultBackendId);
        if (rule.route.errorPage?.backendId) this.sideBackends.add(rule.route.errorPage.backendId);
        if (rule.route.mirror) this.sideBackends.add(rule.route.mirror.backendId);
      }
    }
    this.last = r;
    return r;
  }

  private index(key: string, t: Touches, canary: boolean): void {
    if (canary) this.canaries.add(key);
    else this.canaries.delete(key);
    this.touches.set(key, t);
    for (const h of t.hosts) add(this.hostIngresses, h, key);
    for (const b of t.backends) add(this.backendIngresses, b, key);
  }

  private unindex(key: string): void {
    const t = this.touches.get(key);
    if (!t) return;
    for (const h of t.hosts) del(this.hostIngresses, h, key);
    for (const b of t.backends) del(this.backendIngresses, b, key);
    this.touches.delete(key);
    this.canaries.delete(key);
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

  /** The closed set of Ingresses, hosts and backends a change can affect (previous and current versions). */
  private closure(snap: ModelSnapshot, o: TranslateOptions, changed: ReadonlySet<string>): { ingresses: Set<string>; hosts: Set<string>; backends: Set<string> } | null {
    const prev = this.last as TranslateResult;
    const limit = this.maxShare >= 1 ? Infinity : Math.max(64, (snap.ingresses.size + snap.rejected.size) * this.maxShare);
    const isCanary = (k: string) => snap.ingresses.get(k)?.annotations.canary === true || this.canaries.has(k);
    // The oldest changed Ingress, in its previous or its current version (served): whether one of them may become a
    // backend's owner — by claiming it now, or by releasing a path that an older user of the backend then wins.
    let oldest: { created: string; ref: string } | undefined;
    for (const k of changed) {
      const ing = snap.ingresses.get(k);
      for (const t of [this.served(ing, snap, o) ? touchesOf(ing) : undefined, this.touches.get(k)]) {
        const v = t && { created: t.created, ref: k };
        if (v && (!oldest || byOwnerAge(v, oldest) < 0)) oldest = v;
      }
    }
    let canaryInvolved = [...changed].some(isCanary);
    for (;;) {
      const ingresses = new Set<string>();
      const hosts = new Set<string>();
      const backends = new Set<string>();
      const queue: string[] = [];
      const enqueue = (k: string) => {
        if (ingresses.has(k)) return;
        ingresses.add(k);
        queue.push(k);
        if (!canaryInvolved && isCanary(k)) canaryInvolved = true;
      };
      // The Ingress whose settings a backend has (another kind's object: undefined, see clearOfCrds).
      const ownerOf = (b: string): string | undefined => {
        const ref = this.memo.owners.get(b);
        return (ref !== undefined && ingressKeyOf(ref)) || undefined;
      };
      const everyUser = (b: string): boolean => {
        if (canaryInvolved || prev.config.data.backends[b]?.canary) return true;
        const owner = ownerOf(b);
        if (!owner || changed.has(owner)) return true;
        const ownerRecord = snap.ingresses.get(owner);
        return !ownerRecord || (oldest !== undefined && byOwnerAge(oldest, { created: ownerRecord.creationTimestamp, ref: owner }) <= 0);
      };
      const visit = (t: Touches | undefined) => {
        if (!t) return;
        for (const h of t.hosts) {
          if (hosts.has(h)) continue;
          hosts.add(h);
          for (const k of this.hostIngresses.get(h) ?? []) enqueue(k);
        }
        for (const b of t.backends) {
          if (backends.has(b)) continue;
          backends.add(b);
          if (everyUser(b)) for (const k of this.backendIngresses.get(b) ?? []) enqueue(k);
          else enqueue(ownerOf(b) as string);
        }
      };
      for (const k of changed) enqueue(k);
      const wasCanary = canaryInvolved;
      while (queue.length) {
        if (ingresses.size > limit) return null;
        const k = queue.pop() as string;
        // The previous version's reach (to undo it) and the current one's (to apply it).
        visit(this.touches.get(k));
        if (changed.has(k)) {
          const ing = snap.ingresses.get(k);
          if (this.served(ing, snap, o)) visit(touchesOf(ing));
        }
      }
      // A canary found on the way changes what backends depend on: start over with every user of each backend.
      if (canaryInvolved && !wasCanary) continue;
      return { ingresses, hosts, backends };
    }
  }

  private scoped(snap: ModelSnapshot, o: TranslateOptions, prev: TranslateResult, c: { ingresses: Set<string>; hosts: Set<string>; backends: Set<string> }): TranslateResult {
    const ingresses = new Map<string, NormalizedIngress>();
    const rejected = new Map<string, { key: string; reason: string }>();
    for (const k of c.ingresses) {
      const ing = snap.ingresses.get(k);
      if (ing) ingresses.set(k, ing);
      const rj = snap.rejected.get(k);
      if (rj) rejected.set(k, rj);
    }
    // The other kinds' objects with paths (Routes) are left out: none touches the closure (clearOfCrds), and the
    // previous result holds theirs. (A processor's records are the model's records of its kind.)
    const crds: { [kind: string]: ReadonlyMap<string, unknown> | undefined } = { ...snap.crds };
    for (const p of PROCESSORS) if (p.kind !== 'Ingress') crds[p.kind] = new Map();
    const part = translate({ ...snap, ingresses, rejected, crds: crds as CrdViews }, o, this.memo);
    this.stats.scoped++;
    this.stats.lastTranslated = ingresses.size;

    const pd = prev.config.data;
    const d = part.config.data;
    const routes: Record<string, HostRoutes> = { ...pd.routes };
    const certificates: Record<string, Certificate> = { ...pd.certificates };
    const clientAuth: Record<string, ClientAuth> = { ...pd.clientAuth };
    const byName = new Map(prev.config.structure.profiles.map((p) => [p.name, p]));
    for (const p of part.config.structure.profiles) byName.set(p.name, p);
    for (const h of c.hosts) {
      const hr = d.routes[h];
      if (hr) routes[h] = hr;
      else delete routes[h];
      const cert = d.certificates[h];
      if (cert) certificates[h] = cert;
      else delete certificates[h];
      const ca = d.clientAuth?.[h];
      if (ca) clientAuth[h] = ca;
      else delete clientAuth[h];
      this.noteRoutes(h, hr, byName);
    }
    // A backend no Ingress of the closure names is made as before (its users are all outside the closure): the
    // part's own may differ (--default-backend-service's backend, which every translation makes, is made there
    // without its users' settings).
    const backends: Record<string, Backend> = { ...pd.backends };
    const touchedBackends = new Set([...c.backends, ...Object.keys(d.backends)]);
    for (const id of touchedBackends) {
      const b = d.backends[id];
      if (!c.backends.has(id) && id in pd.backends) continue;
      if (b) backends[id] = b;
      else delete backends[id];
    }
    const status = new Map<string, IngressStatus>(prev.status);
    const partEvents = groupEvents(part.events);
    const objects = new Set<string>();
    for (const k of c.ingresses) {
      const ref = ingressRef(k);
      objects.add(ref);
      const st = part.status.get(ref);
      if (st) status.set(ref, st);
      else status.delete(ref);
      const ev = partEvents.get(ref);
      if (ev) this.lastEvents.set(ref, ev);
      else this.lastEvents.delete(ref);
      this.unindex(k);
      const ing = snap.ingresses.get(k);
      if (this.served(ing, snap, o)) this.index(k, touchesOf(ing), ing.annotations.canary === true);
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
      data: { routes, backends, certificates, defaultCertificate: d.defaultCertificate, plugins: pd.plugins, consumers: pd.consumers, ...(Object.keys(clientAuth).length ? { clientAuth } : {}) },
    };
    const events: TranslateEvent[] = [];
    for (const ev of this.lastEvents.values()) events.push(...ev);
    const r: TranslateResult = { config, status, events, touched: { objects, hosts: c.hosts, backends: touchedBackends } };
    this.last = r;
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

/**
 * TLS passthrough is decided across all hosts (which Ingress passes a host through, the exact hosts a passthrough
 * wildcard leaves alone): with --enable-ssl-passthrough, a configuration that has a passthrough host, or a closure
 * with an Ingress asking for one, is translated in full.
 */
function passthroughInvolved(snap: ModelSnapshot, o: TranslateOptions, prev: TranslateResult, ingresses: ReadonlySet<string>): boolean {
  if (!o.sslPassthrough) return false;
  if (prev.config.structure.passthrough?.hosts.length) return true;
  for (const k of ingresses) if (snap.ingresses.get(k)?.annotations['ssl-passthrough'] === true) return true;
  return false;
}

/** The Ingress runs plugins: named ones (portico.dev/plugins) or ingress-nginx annotations that are plugins. */
/**
 * A wildcard or "_" host asks for client certificates: the hosts below it get an "ask for nothing" entry, which any
 * host's change can add or drop, so such a configuration is translated in full. (An Ingress setting auth-tls-* is
 * translated in full anyway: its client-cert plugin makes hasPlugins true.)
 */
function shadowingClientAuth(prev: TranslateResult): boolean {
  for (const h in prev.config.data.clientAuth ?? {}) if (h === '_' || h.startsWith('*.')) return true;
  return false;
}

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
