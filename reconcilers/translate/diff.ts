// Pure diff between the running configuration and the desired one: does nginx need a reload (and why, in words a
// user can read in a Reload event), and which data changed (per host's routes, per backend, per certificate) —
// only that is sent. Unchanged parts are usually the very same objects (the translation reuses them), which is
// checked first so a diff at 10k hosts costs little more than the parts that changed.
import { createHash } from 'node:crypto';
import type { Backend, Certificate, ClientAuth, ConsumerSet, GatewayConfig, HostRoutes, PluginInstance, Structure } from '../config/types.ts';

export interface DataDelta {
  routes: { upsert: Record<string, HostRoutes>; remove: string[] };
  backends: { upsert: Record<string, Backend>; remove: string[] };
  certificates: { upsert: Record<string, Certificate>; remove: string[]; defaultChanged: boolean; default: Certificate | null };
  plugins: { upsert: Record<string, PluginInstance>; remove: string[] };
  consumers: { upsert: Record<string, ConsumerSet>; remove: string[] };
  /** Per host: what the TLS handshake asks of clients (sent with the certificates). */
  clientAuth: { upsert: Record<string, ClientAuth>; remove: string[] };
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
  const pa = new Set(a.profiles.map((p) => p.name));
  const pb = new Set(b.profiles.map((p) => p.name));
  const added = [...pb].filter((n) => !pa.has(n));
  const removed = [...pa].filter((n) => !pb.has(n));
  if (added.length) reasons.push(`directive profiles added: ${list(added)}`);
  if (removed.length) reasons.push(`directive profiles removed: ${list(removed)}`);
  if (canonical(a.stream?.servers ?? []) !== canonical(b.stream?.servers ?? [])) reasons.push('TCP/UDP services or their endpoints changed');
  if (canonical(a.stream?.passthrough ?? null) !== canonical(b.stream?.passthrough ?? null)) reasons.push('TLS passthrough hosts or their endpoints changed');
  if (!reasons.length && canonical(a) !== canonical(b)) reasons.push('structure changed');
  return reasons;
}

/** Equal content; the same object (what the translation reuses for unchanged parts) is equal at once. */
function same(a: unknown, b: unknown): boolean {
  return a === b || (a !== undefined && canonical(a) === canonical(b));
}

/**
 * Keys outside of which the running and desired data are known to be equal (the incremental translation knows
 * what a change touched): only these are compared. Hosts cover both routes and certificates.
 */
export interface DiffScope {
  hosts: ReadonlySet<string>;
  backends: ReadonlySet<string>;
}

/** upsert: keys whose value differs; remove: keys only `running` has — over every key, or over `keys` only. */
function diffRecord<T>(running: Record<string, T>, desired: Record<string, T>, keys?: ReadonlySet<string>): { upsert: Record<string, T>; remove: string[] } {
  const upsert: Record<string, T> = {};
  const remove: string[] = [];
  if (keys) {
    for (const k of keys) {
      if (k in desired) {
        if (!same(running[k], desired[k])) upsert[k] = desired[k] as T;
      } else if (k in running) remove.push(k);
    }
  } else {
    for (const k in desired) if (!same(running[k], desired[k])) upsert[k] = desired[k] as T;
    for (const k in running) if (!(k in desired)) remove.push(k);
  }
  remove.sort();
  return { upsert, remove };
}

export function diffConfig(running: GatewayConfig | null, desired: GatewayConfig, scope?: DiffScope | null): ConfigDiff {
  const reload = !running || canonical(running.structure) !== canonical(desired.structure);
  const reasons = !running ? ['initial configuration'] : reload ? structureReasons(running.structure, desired.structure) : [];
  const only = running && scope ? scope : undefined;
  const { upsert: ru, remove: rremove } = diffRecord<HostRoutes>(running?.data.routes ?? {}, desired.data.routes, only?.hosts);
  const { upsert, remove } = diffRecord<Backend>(running?.data.backends ?? {}, desired.data.backends, only?.backends);
  const { upsert: cu, remove: cr } = diffRecord<Certificate>(running?.data.certificates ?? {}, desired.data.certificates, only?.hosts);
  const defaultChanged = canonical(running?.data.defaultCertificate ?? null) !== canonical(desired.data.defaultCertificate);
  // Plugins and consumers are few: always compared in full (a scope only narrows routes, backends, certificates).
  const plugins = diffRecord<PluginInstance>(running?.data.plugins ?? {}, desired.data.plugins);
  const consumers = diffRecord<ConsumerSet>(running?.data.consumers ?? {}, desired.data.consumers);
  const clientAuth = diffRecord<ClientAuth>(running?.data.clientAuth ?? {}, desired.data.clientAuth ?? {}, only?.hosts);
  return {
    reload,
    reasons,
    delta: {
      routes: { upsert: ru, remove: rremove },
      backends: { upsert, remove },
      certificates: { upsert: cu, remove: cr, defaultChanged, default: desired.data.defaultCertificate },
      plugins,
      consumers,
      clientAuth,
    },
  };
}

/** A delta with nothing in it, to fill in the parts a caller sends. */
export function emptyDelta(): DataDelta {
  return {
    routes: { upsert: {}, remove: [] },
    backends: { upsert: {}, remove: [] },
    certificates: { upsert: {}, remove: [], defaultChanged: false, default: null },
    plugins: { upsert: {}, remove: [] },
    consumers: { upsert: {}, remove: [] },
    clientAuth: { upsert: {}, remove: [] },
  };
}

export function isEmptyDelta(d: DataDelta): boolean {
  return (
    Object.keys(d.routes.upsert).length === 0 &&
    d.routes.remove.length === 0 &&
    Object.keys(d.backends.upsert).length === 0 &&
    d.backends.remove.length === 0 &&
    Object.keys(d.certificates.upsert).length === 0 &&
    d.certificates.remove.length === 0 &&
    !d.certificates.defaultChanged &&
    Object.keys(d.plugins.upsert).length === 0 &&
    d.plugins.remove.length === 0 &&
    Object.keys(d.consumers.upsert).length === 0 &&
    d.consumers.remove.length === 0 &&
    Object.keys(d.clientAuth.upsert).length === 0 &&
    d.clientAuth.remove.length === 0
  );
}

