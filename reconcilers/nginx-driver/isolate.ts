// Fault isolation. If a rendered configuration fails `nginx -t` although every object passed validation, find the
// directive profiles whose location makes it fail, leave them out and program everything else — instead of
// blocking every update the way ingress-nginx does (its issue #3435). Routes and backends are data and never reach
// nginx.conf, so a profile is the only per-object part of it; the routes using a left-out profile are not served
// and their objects get an `Excluded` Warning.
//
// Search: while the configuration without the culprits found so far still fails, binary-search the shortest
// prefix of the remaining profiles whose inclusion makes it fail; its last element is a culprit. Each culprit
// costs about log2(n) `nginx -t` runs. If the configuration fails with every profile left out, the fault is
// global (e.g. a ConfigMap value) and nothing is excluded.
import type { DataPlane, HostRoutes, Structure } from '../config/types.ts';

/** The structure without the profiles named in `excluded`. */
export function excludeProfiles(s: Structure, excluded: ReadonlySet<string>): Structure {
  if (!excluded.size) return s;
  return { ...s, profiles: s.profiles.filter((p) => !excluded.has(p.name)) };
}

/**
 * The routes without those using an excluded profile (a host left without rules disappears), and the sources
 * (kind-qualified refs) that lost a route. Hosts not touched keep their objects (the diff relies on identity).
 */
export function withoutProfiles(routes: DataPlane['routes'], excluded: ReadonlySet<string>): { routes: DataPlane['routes']; sources: Set<string> } {
  const sources = new Set<string>();
  if (!excluded.size) return { routes, sources };
  const out: Record<string, HostRoutes> = {};
  for (const [h, hr] of Object.entries(routes)) {
    if (!hr.rules.some((r) => r.route.profile && excluded.has(r.route.profile))) {
      out[h] = hr;
      continue;
    }
    const rules = hr.rules.filter((r) => {
      const drop = r.route.profile !== undefined && excluded.has(r.route.profile);
      if (drop) sources.add(r.route.source);
      return !drop;
    });
    if (rules.length) out[h] = { ...hr, rules };
  }
  return { routes: out, sources };
}

export async function findCulprits(
  s: Structure,
  passes: (candidate: Structure) => Promise<boolean>,
  maxCulprits = 16,
): Promise<{ culprits: string[]; isolated: boolean }> {
  const all = s.profiles.map((p) => p.name);
  if (!(await passes(excludeProfiles(s, new Set(all))))) return { culprits: [], isolated: false };
  const culprits: string[] = [];
  let remaining = all;
  while (culprits.length < maxCulprits) {
    const bad = new Set(culprits);
    if (await passes(excludeProfiles(s, bad))) return { culprits, isolated: true };
    // Smallest k such that including remaining[0..k) (and excluding the rest) fails.
    let lo = 1;
    let hi = remaining.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const ex = new Set([...bad, ...remaining.slice(mid)]);
      if (await passes(excludeProfiles(s, ex))) lo = mid + 1;
      else hi = mid;
    }
    const c = remaining[lo - 1] as string;
    culprits.push(c);
    remaining = remaining.filter((x) => x !== c);
  }
  return { culprits, isolated: await passes(excludeProfiles(s, new Set(culprits))) };
}
