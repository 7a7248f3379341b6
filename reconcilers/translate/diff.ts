// Pure diff between the running configuration and the desired one: does nginx need a reload (and why, in words a
// user can read in a Reload event), and which data changed (per backend, per certificate) — only that is sent.
import { createHash } from 'node:crypto';
import type { Backend, Certificate, GatewayConfig, Structure } from '../gateway/config-types.ts';

export interface DataDelta {
  backends: { upsert: Record<string, Backend>; remove: string[] };
  certificates: { upsert: Record<string, Certificate>; remove: string[]; defaultChanged: boolean; default: Certificate | null };
}

export interface ConfigDiff {
  reload: boolean;
  reasons: string[];
  delta: DataDelta;
}

/** Canonical JSON (sorted keys) so equal structures hash equally. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

export function structureChecksum(s: Structure): string {
  return createHash('sha256').update(canonical(s)).digest('hex').slice(0, 32);
}

const list = (xs: string[], max = 5) => (xs.length > max ? `${xs.slice(0, max).join(', ')} and ${xs.length - max} more` : xs.join(', '));

function structureReasons(a: Structure, b: Structure): string[] {
  const reasons: string[] = [];
  const ga = a.global as unknown as Record<string, unknown>;
  const gb = b.global as unknown as Record<string, unknown>;
  const gk = Object.keys(gb).filter((k) => canonical(ga[k]) !== canonical(gb[k]));
  if (gk.length) reasons.push(`global settings changed: ${list(gk)}`);
  const sa = new Map(a.servers.map((s) => [s.host, s]));
  const sb = new Map(b.servers.map((s) => [s.host, s]));
  const added = [...sb.keys()].filter((h) => !sa.has(h));
  const removed = [...sa.keys()].filter((h) => !sb.has(h));
  if (added.length) reasons.push(`hosts added: ${list(added)}`);
  if (removed.length) reasons.push(`hosts removed: ${list(removed)}`);
  const pathsChanged: string[] = [];
  const tlsChanged: string[] = [];
  for (const [h, s] of sb) {
    const old = sa.get(h);
    if (!old) continue;
    if (old.tls !== s.tls) tlsChanged.push(h);
    if (canonical(old.locations) !== canonical(s.locations)) pathsChanged.push(h);
  }
  if (pathsChanged.length) reasons.push(`paths changed on ${list(pathsChanged)}`);
  if (tlsChanged.length) reasons.push(`TLS turned on/off for ${list(tlsChanged)}`);
  if (a.observeLatency !== b.observeLatency) reasons.push(`latency tracking for ewma turned ${b.observeLatency ? 'on' : 'off'}`);
  if (!reasons.length && canonical(a) !== canonical(b)) reasons.push('backend set changed');
  return reasons;
}

export function diffConfig(running: GatewayConfig | null, desired: GatewayConfig): ConfigDiff {
  const reload = !running || canonical(running.structure) !== canonical(desired.structure);
  const reasons = !running ? ['initial configuration'] : reload ? structureReasons(running.structure, desired.structure) : [];
  const rb = running?.data.backends ?? {};
  const db = desired.data.backends;
  const upsert: Record<string, Backend> = {};
  for (const [id, b] of Object.entries(db)) if (!rb[id] || canonical(rb[id]) !== canonical(b)) upsert[id] = b;
  const remove = Object.keys(rb).filter((id) => !(id in db)).sort();
  const rc = running?.data.certificates ?? {};
  const dc = desired.data.certificates;
  const cu: Record<string, Certificate> = {};
  for (const [h, c] of Object.entries(dc)) if (!rc[h] || canonical(rc[h]) !== canonical(c)) cu[h] = c;
  const cr = Object.keys(rc).filter((h) => !(h in dc)).sort();
  const defaultChanged = canonical(running?.data.defaultCertificate ?? null) !== canonical(desired.data.defaultCertificate);
  return {
    reload,
    reasons,
    delta: {
      backends: { upsert, remove },
      certificates: { upsert: cu, remove: cr, defaultChanged, default: desired.data.defaultCertificate },
    },
  };
}

export function isEmptyDelta(d: DataDelta): boolean {
  return (
    Object.keys(d.backends.upsert).length === 0 &&
    d.backends.remove.length === 0 &&
    Object.keys(d.certificates.upsert).length === 0 &&
    d.certificates.remove.length === 0 &&
    !d.certificates.defaultChanged
  );
}

