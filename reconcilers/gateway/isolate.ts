// Fault isolation. If a rendered configuration fails `nginx -t` although every object passed validation, find the
// objects whose contribution makes it fail, leave them out and program everything else — instead of blocking
// every update the way ingress-nginx does (its issue #3435).
//
// Search: while the configuration without the culprits found so far still fails, binary-search the shortest
// prefix of the remaining sources whose inclusion makes it fail; its last element is a culprit. Each culprit costs
// about log2(n) `nginx -t` runs. If the configuration fails with every source left out, the fault is global
// (e.g. a ConfigMap value) and nothing is excluded.
import type { Structure } from './config-types.ts';
import { canonical } from '../translate/diff.ts';

export function sourcesOf(s: Structure): string[] {
  const out = new Set<string>();
  for (const srv of s.servers) for (const l of srv.locations) out.add(l.source);
  return [...out].sort();
}

/** The structure without the locations contributed by `excluded` (servers left empty disappear). */
export function excludeSources(s: Structure, excluded: ReadonlySet<string>): Structure {
  if (!excluded.size) return s;
  const servers = s.servers
    .map((srv) => ({ ...srv, locations: srv.locations.filter((l) => !excluded.has(l.source)) }))
    .filter((srv) => srv.locations.length > 0);
  const ids = new Set<string>();
  for (const srv of servers) for (const l of srv.locations) if (l.backendId) ids.add(l.backendId);
  return { ...s, servers, backendIds: [...ids].sort() };
}

/** What one source contributes; an exclusion is retried as soon as this changes. */
export function fingerprint(s: Structure, source: string): string {
  return canonical(s.servers.map((srv) => ({ host: srv.host, tls: srv.tls, locations: srv.locations.filter((l) => l.source === source) })).filter((x) => x.locations.length));
}

export async function findCulprits(
  s: Structure,
  passes: (candidate: Structure) => Promise<boolean>,
  maxCulprits = 16,
): Promise<{ culprits: string[]; isolated: boolean }> {
  const all = sourcesOf(s);
  if (!(await passes(excludeSources(s, new Set(all))))) return { culprits: [], isolated: false };
  const culprits: string[] = [];
  let remaining = all;
  while (culprits.length < maxCulprits) {
    const bad = new Set(culprits);
    if (await passes(excludeSources(s, bad))) return { culprits, isolated: true };
    // Smallest k such that including remaining[0..k) (and excluding the rest) fails.
    let lo = 1;
    let hi = remaining.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const ex = new Set([...bad, ...remaining.slice(mid)]);
      if (await passes(excludeSources(s, ex))) lo = mid + 1;
      else hi = mid;
    }
    const c = remaining[lo - 1] as string;
    culprits.push(c);
    remaining = remaining.filter((x) => x !== c);
  }
  return { culprits, isolated: await passes(excludeSources(s, new Set(culprits))) };
}
