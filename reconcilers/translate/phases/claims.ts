// The claims phase: every path of every served object on its host; the oldest claim on host + path wins.
import type { PathMatch } from '../../config/types.ts';
import { recordsOf } from '../../model/model.ts';
import { hostOrder, type PathClaim } from '../claims.ts';
import { globalIpLists, PLUGIN_RANK } from '../plugin-instances.ts';
import { type Draft, describe, type KindClaim, type Owner } from '../draft.ts';
import { pluginsFor } from '../plugin-refs.ts';

const MATCH_LABEL: Record<PathMatch, string> = { exact: 'Exact', prefix: 'Prefix', regex: 'regex' };

/**
 * One path of an object on its host: the first (oldest) claim wins, a later one gets a Conflict Warning (a default
 * backend's silently gives way); the winner's closed reasons and plugin ids are worked out here.
 */
export function claimPath(d: Draft, kc: KindClaim, owner: Owner, isDefault: boolean): void {
  const { warn, hosts } = d;
  const { pc } = kc;
  if (hostRefused(d, pc, owner)) return;
  let locs = hosts.get(pc.host);
  if (!locs) hosts.set(pc.host, (locs = new Map()));
  const prev = locs.get(pc.id);
  if (prev) {
    if (prev.owner.ref !== owner.ref && !isDefault) {
      const cond = kc.conditions ? ' with the same conditions' : '';
      warn(
        owner.ref,
        'Conflict',
        `host ${pc.host === '_' ? '(any)' : pc.host} path ${pc.path} (${MATCH_LABEL[pc.match]})${cond} is already served by ${describe(prev.owner.ref)}, which is older; this path of ${describe(owner.ref)} is ignored`,
      );
    }
    return;
  }
  const { reasons, pluginIds } = pluginsOfClaim(d, kc, owner);
  const closed = reasons.length ? reasons.join('; ') : undefined;
  const backendId = closed || kc.noBackend ? null : pc.backendId;
  locs.set(pc.id, { pc, owner, backendId, closed, kc, pluginIds });
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
export const byRank = (d: Draft) => (a: string, b: string): number => (PLUGIN_RANK.get(d.plugins[a]!.type) ?? 99) - (PLUGIN_RANK.get(d.plugins[b]!.type) ?? 99) || (a < b ? -1 : 1);

/**
 * The plugin ids of a winning claim (its Plugin objects, the ConfigMap's IP lists, the plugins of the object's own,
 * e.g. an Ingress's annotations), and why it fails closed, in order: the object's own reasons, missing Plugins, the
 * IP lists, its own plugins.
 */
function pluginsOfClaim(d: Draft, kc: KindClaim, owner: Owner): { reasons: string[]; pluginIds: string[] } {
  const { snap, unresolved, plugins } = d;
  const proc = owner.proc;
  const reasons: string[] = proc.closedReasons?.(d, owner) ?? [];
  const names = kc.plugins;
  const pl = pluginsFor(d, owner.ns, names);
  if (pl.closed) {
    reasons.push(pl.closed);
    for (const n of names) if (!recordsOf(snap, 'Plugin').get(`${owner.ns}/${n}`)?.instance) unresolved(owner.ref, `Plugin ${n}`);
  }
  let pluginIds = pl.ids;
  const gip = globalIpLists(snap.global, proc.annotations?.(owner));
  reasons.push(...gip.closed);
  if (gip.ids.length) {
    pluginIds = [...pluginIds];
    for (const [id, inst] of gip.ids) {
      plugins[id] ??= inst;
      if (!pluginIds.includes(id)) pluginIds.push(id);
    }
    pluginIds.sort(byRank(d));
  }
  const extra = proc.ownPlugins?.(d, owner, kc.pc, reasons) ?? [];
  if (extra.length) {
    pluginIds = [...pluginIds];
    for (const id of extra) if (!pluginIds.includes(id)) pluginIds.push(id);
    pluginIds.sort(byRank(d));
  }
  return { reasons, pluginIds };
}

/** Every path of every served object, oldest first, then the fallbacks (default backends) where no claim took a path. */
export function claimPaths(d: Draft): void {
  const { owners, hosts } = d;
  for (const ow of owners) for (const kc of ow.proc.claims(ow)) claimPath(d, kc, ow, false);
  // Default backends fill "/" where no rule claimed it (oldest first).
  for (const ow of owners) for (const kc of ow.proc.fallbacks?.(ow) ?? []) claimPath(d, kc, ow, true);
  d.hostList = [...hosts.keys()].sort(hostOrder);
}
