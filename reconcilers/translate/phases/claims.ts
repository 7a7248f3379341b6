// The claims phase: every path of every served object on its host; the oldest claim on host + path wins.
import type { PathMatch } from '../../config/types.ts';
import type { NormalizedIngress } from '../../model/types.ts';
import { noAuthLocation } from '../../annotations/plugins.ts';
import type { Owner } from '../objects.ts';
import { claimsOfIngress, claimsOfRoute, hostOrder, type PathClaim, type RouteClaim } from '../claims.ts';
import { annotationInstances, customHeadersInstance, GLOBAL_AUTH_ID, globalIpLists, PLUGIN_RANK, rewriteInstance } from '../plugin-instances.ts';
import { needsRewrite } from '../matching.ts';
import { type Draft, describe, isCanary } from '../draft.ts';
import { pluginsFor } from '../plugin-refs.ts';
import { useAuthTarget } from '../auth-targets.ts';

const MATCH_LABEL: Record<PathMatch, string> = { exact: 'Exact', prefix: 'Prefix', regex: 'regex' };

/**
 * One path of an object on its host: the first (oldest) claim wins, a later one gets a Conflict Warning (a default
 * backend's silently gives way); the winner's closed reasons and plugin ids are worked out here.
 */
export function claimPath(d: Draft, pc: PathClaim, owner: Owner, isDefault: boolean, rr?: RouteClaim): void {
  const { warn, hosts } = d;
  if (hostRefused(d, pc, owner)) return;
  let locs = hosts.get(pc.host);
  if (!locs) hosts.set(pc.host, (locs = new Map()));
  const prev = locs.get(pc.id);
  if (prev) {
    if (prev.owner.ref !== owner.ref && !isDefault) {
      const cond = rr?.m.conditions ? ' with the same conditions' : '';
      warn(
        owner.ref,
        'Conflict',
        `host ${pc.host === '_' ? '(any)' : pc.host} path ${pc.path} (${MATCH_LABEL[pc.match]})${cond} is already served by ${describe(prev.owner.ref)}, which is older; this path of ${describe(owner.ref)} is ignored`,
      );
    }
    return;
  }
  const { reasons, pluginIds } = pluginsOfClaim(d, pc, owner, rr);
  const closed = reasons.length ? reasons.join('; ') : undefined;
  const backendId = closed || (rr && !rr.hasBackend) ? null : pc.backendId;
  locs.set(pc.id, { pc, owner, backendId, closed, rr, pluginIds });
}

/** namespace-exclusive-hosts: whether a host belongs to another namespace than the owner's (said once per object and host). */
function hostRefused(d: Draft, pc: PathClaim, owner: Owner): boolean {
  const { warn, exclusiveHosts, hostNamespace, refusedHost } = d;
  if (!exclusiveHosts) return false;
  const first = hostNamespace.get(pc.host);
  if (!first) hostNamespace.set(pc.host, owner);
  else if (first.ns !== owner.ns) {
    const once = `${owner.ref} ${pc.host}`;
    if (!refusedHost.has(once)) {
      refusedHost.add(once);
      warn(owner.ref, 'HostOwnedByNamespace', `host ${pc.host === '_' ? '(any: rules without a host)' : pc.host} belongs to namespace ${first.ns} (its oldest object, ${describe(first.ref)}, named it first) and the ConfigMap's namespace-exclusive-hosts is on: the paths of ${describe(owner.ref)} on it are not served`);
    }
    return true;
  }
  return false;
}

/** Plugin ids in execution order (PLUGIN_ORDER, then id). */
const byRank = (d: Draft) => (a: string, b: string): number => (PLUGIN_RANK.get(d.plugins[a]!.type) ?? 99) - (PLUGIN_RANK.get(d.plugins[b]!.type) ?? 99) || (a < b ? -1 : 1);

/**
 * The plugin ids of a winning claim (its Plugin objects, the ConfigMap's IP lists, an Ingress's annotation plugins),
 * and why it fails closed, in order: the object's own reasons, missing Plugins, the IP lists, annotation plugins.
 */
function pluginsOfClaim(d: Draft, pc: PathClaim, owner: Owner, rr: RouteClaim | undefined): { reasons: string[]; pluginIds: string[] } {
  const { snap, unresolved, closedReason, sslClosed, wafClosed, plugins } = d;
  const ing = owner.ing;
  const reasons: string[] = [];
  for (const why of ing ? [closedReason.get(ing.key), sslClosed.get(ing.key), wafClosed.get(ing.key)] : []) if (why) reasons.push(why);
  const names = ing ? (ing.annotations.plugins ?? []) : (rr?.rule.plugins ?? []);
  const pl = pluginsFor(d, owner.ns, names);
  if (pl.closed) {
    reasons.push(pl.closed);
    for (const n of names) if (!snap.plugins.get(`${owner.ns}/${n}`)?.instance) unresolved(owner.ref, `Plugin ${n}`);
  }
  let pluginIds = pl.ids;
  const gip = globalIpLists(snap.global, ing);
  reasons.push(...gip.closed);
  if (gip.ids.length) {
    pluginIds = [...pluginIds];
    for (const [id, inst] of gip.ids) {
      plugins[id] ??= inst;
      if (!pluginIds.includes(id)) pluginIds.push(id);
    }
    pluginIds.sort(byRank(d));
  }
  if (ing) {
    const extra = annotationPluginsOfClaim(d, pc, ing, owner, reasons);
    if (extra.length) {
      pluginIds = [...pluginIds];
      for (const id of extra) if (!pluginIds.includes(id)) pluginIds.push(id);
      pluginIds.sort(byRank(d));
    }
  }
  return { reasons, pluginIds };
}

/**
 * ingress-nginx annotations that are plugins (IP lists, CORS, rate limits, auth): the same engine, own ids; and the
 * ConfigMap's global external authentication. no-auth-locations: paths (as written) that get neither external nor
 * basic authentication, as in ingress-nginx. Registers the instances; adds to `reasons` what cannot be used.
 */
function annotationPluginsOfClaim(d: Draft, pc: PathClaim, ing: NormalizedIngress, owner: Owner, reasons: string[]): string[] {
  const { snap, authTimeouts, noAuthList, globalAuth, plugins } = d;
  const g0 = snap.global;
  const noAuth = noAuthLocation(pc.path, noAuthList);
  const extra: string[] = [];
  const unusable = (why: string | null) => {
    if (why) reasons.push(why);
  };
  if (ing.annotationPlugins.length) {
    for (const e of annotationInstances(ing, snap.global.limitReqStatusCode, authTimeouts, snap.global.limitConnStatusCode)) {
      if (noAuth && (e.auth || (e.inst.type === 'basic-auth' && e.inst.users))) continue;
      if (e.auth) unusable(useAuthTarget(d, owner.ref, e.auth, 'auth-url', ing.namespace));
      plugins[e.id] ??= e.inst;
      extra.push(e.id);
    }
  }
  if (ing.annotations['custom-headers'] !== undefined) {
    const ch = customHeadersInstance(ing, g0.globalAllowedResponseHeaders);
    if ('closed' in ch) unusable(ch.closed);
    else {
      plugins[ch.id] ??= ch.inst;
      extra.push(ch.id);
    }
  }
  if (globalAuth && !noAuth && ing.annotations['auth-url'] === undefined && ing.annotations['enable-global-auth'] !== false) {
    if ('error' in globalAuth) unusable(`the ConfigMap's global external authentication cannot be applied (${globalAuth.error})`);
    else {
      unusable(useAuthTarget(d, owner.ref, globalAuth.auth, 'the ConfigMap\'s global-auth-url', null));
      // satisfy: any makes the global authentication one of this Ingress's alternatives: a flagged copy.
      const any = ing.annotations.satisfy === 'any';
      const gid = any ? `${GLOBAL_AUTH_ID}.any` : GLOBAL_AUTH_ID;
      plugins[gid] ??= any ? { ...globalAuth.inst, satisfyAny: true } : globalAuth.inst;
      extra.push(gid);
    }
  }
  // rewrite-target: ingress-nginx writes `rewrite "(?i)<path as written>" <target> break;` into each location
  // of the Ingress — one rewrite per path, with that path's own regex and captures.
  if (needsRewrite(ing.annotations, pc.written)) {
    const rw = rewriteInstance(ing, pc);
    plugins[rw.id] ??= rw.inst;
    extra.push(rw.id);
  }
  return extra;
}

/** Every path of every served object, oldest first, then default backends where no rule claimed "/". */
export function claimPaths(d: Draft): void {
  const { served, owners, ownerOf, hosts } = d;
  for (const ow of owners) {
    if (ow.ing) {
      if (isCanary(ow.ing)) continue;
      for (const pc of claimsOfIngress(ow.ing).paths) claimPath(d, pc, ow, false);
    } else if (ow.rt) {
      for (const rc of claimsOfRoute(ow.rt)) claimPath(d, rc.pc, ow, false, rc);
    }
  }
  // Default backends fill "/" where no rule claimed it (oldest Ingress first).
  for (const ing of served) {
    if (!ing.defaultBackend || isCanary(ing)) continue;
    for (const pc of claimsOfIngress(ing).defaults) claimPath(d, pc, ownerOf.get(ing.key)!, true);
  }
  d.hostList = [...hosts.keys()].sort(hostOrder);
}
