// The single in-memory source of truth. Each reconciler writes its own slice; the gateway reconciler reads a
// snapshot. Keeps reverse indexes (Service → Ingresses, Secret → Ingresses) so a change touches only what uses it,
// and tells listeners which records changed. Every read is O(what it touches): `snapshot()` hands out read-only
// views of the live maps (no copy), and each Service's slices are kept sorted when they are written, not when
// they are read.
import { defaultGlobalConfig, type GlobalConfigValues } from './global-config.ts';
import type {
  CrdMeta,
  IngressClassInfo,
  NormalizedIngress,
  NormalizedService,
  NormalizedSlice,
  StreamEntry,
  StreamProtocol,
  TlsMaterial,
} from './types.ts';

/**
 * The record type of each CRD kind, by kind. Empty here: each kind adds its own from its folder
 * (reconcilers/kinds/<kind>/normalize.ts: `declare module '../../model/model.ts' { interface CrdRecords { Route:
 * NormalizedRoute } }`), so a new CRD kind is stored, indexed and typed without this file knowing it.
 */
export interface CrdRecords {}
export type CrdKind = keyof CrdRecords & string;
export type ChangeKind = 'IngressClass' | 'Ingress' | 'Service' | 'EndpointSlice' | 'Secret' | 'Config' | 'Stream' | CrdKind;

/** A CR whose spec failed its schema: not in the model, reported as Accepted=False. */
export interface RejectedCrd {
  key: string;
  generation: number;
  reason: string;
}

/** What one CR reads besides itself, as its kind declares it (CrdKindSpec.reads): indexed, so a change reaches it. */
export interface RecordReads {
  /** Secrets ("namespace/name"): TLS key material, credentials, CA bundles, plugin configurations. */
  secrets: readonly string[];
  /** ConfigMaps ("namespace/name") whose data the record was made from (a Gateway's client-certificate CA bundles). */
  configMaps?: readonly string[];
  /**
   * ClusterTrustBundles (certificates.k8s.io; cluster-scoped, so by name) whose trust bundle the record was made from
   * (a Gateway's or a BackendTLSPolicy's CA certificates): a change of one normalizes the record again.
   */
  clusterTrustBundles?: readonly string[];
}
const READS_NOTHING: RecordReads = { secrets: [] };

/** The CRs of every kind, each kind's by key: live read-only views (a kind with no record yet is absent). */
export type CrdViews = { readonly [K in CrdKind]?: ReadonlyMap<string, CrdRecords[K]> };
const NONE: ReadonlyMap<string, never> = new Map<string, never>();
/** The records of one CRD kind in a snapshot (an empty map when it has none). */
export function recordsOf<K extends CrdKind>(snap: Pick<ModelSnapshot, 'crds'>, kind: K): ReadonlyMap<string, CrdRecords[K]> {
  return (snap.crds[kind] as ReadonlyMap<string, CrdRecords[K]> | undefined) ?? NONE;
}

export interface Change {
  kind: ChangeKind;
  key: string;
}

export interface RejectedIngress {
  key: string;
  reason: string;
}

/**
 * Read-only views of the model's live maps. Valid for synchronous use only: the pure translation reads it without
 * awaiting, so no reconciler can change the model underneath it. Never keep one across an `await`.
 */
export interface ModelSnapshot {
  revision: number;
  classes: ReadonlyMap<string, IngressClassInfo>;
  ingresses: ReadonlyMap<string, NormalizedIngress>;
  rejected: ReadonlyMap<string, RejectedIngress>;
  services: ReadonlyMap<string, NormalizedService>;
  /** Service key → its slices, sorted by slice key. */
  slices: ReadonlyMap<string, readonly NormalizedSlice[]>;
  secrets: ReadonlyMap<string, TlsMaterial>;
  global: GlobalConfigValues;
  defaultCertificate: TlsMaterial | null;
  /** Portico's CRs by kind (recordsOf(snap, 'Route')). */
  crds: CrdViews;
  /** CRs refused by their schema, keyed by kind-qualified reference ("Route/ns/name"). */
  rejectedCrds: ReadonlyMap<string, RejectedCrd>;
}

/** Reverse-index helpers (a key → the set of keys that refer to it), shared with the incremental translation. */
export function addIdx(idx: Map<string, Set<string>>, k: string, v: string): void {
  let s = idx.get(k);
  if (!s) idx.set(k, (s = new Set()));
  s.add(v);
}
export function delIdx(idx: Map<string, Set<string>>, k: string, v: string): void {
  const s = idx.get(k);
  if (!s) return;
  s.delete(v);
  if (!s.size) idx.delete(k);
}

export function servicesOf(ing: NormalizedIngress): string[] {
  const out = new Set<string>();
  if (ing.defaultBackend) out.add(`${ing.namespace}/${ing.defaultBackend.service}`);
  for (const r of ing.rules) for (const p of r.paths) out.add(`${ing.namespace}/${p.backend.service}`);
  return [...out].sort();
}
export function secretsOf(ing: NormalizedIngress): string[] {
  return [...new Set(ing.tls.filter((t) => t.secretName).map((t) => `${ing.namespace}/${t.secretName}`))].sort();
}

/** Secrets an Ingress reads besides its TLS ones: the auth-secret (basic auth) and the proxy-ssl-secret. */
/** ConfigMaps an Ingress reads (custom-headers, auth-proxy-set-headers, fastcgi-params-configmap), "namespace/name". */
export function configMapsOf(ing: NormalizedIngress): string[] {
  return [...new Set([ing.customHeadersConfigMap, ing.authProxyHeadersConfigMap, ing.fastcgi?.configMapKey].filter((k): k is string => !!k))].sort();
}

export function ingressCredentialSecrets(ing: NormalizedIngress): string[] {
  return [...new Set([ing.authSecret, ing.proxySsl?.secretKey, ing.authTlsSecret].filter((k): k is string => !!k))].sort();
}

export class Model {
  private revisionN = 0;
  private readonly classes = new Map<string, IngressClassInfo>();
  private readonly ingresses = new Map<string, NormalizedIngress>();
  private readonly rejected = new Map<string, RejectedIngress>();
  private readonly services = new Map<string, NormalizedService>();
  /** Service key → its slices sorted by slice key (sorted on write). */
  private readonly slices = new Map<string, NormalizedSlice[]>();
  private readonly secrets = new Map<string, TlsMaterial>();
  private global: GlobalConfigValues = defaultGlobalConfig();
  private defaultCert: TlsMaterial | null = null;
  private defaultCertKey: string | null = null;
  private readonly byService = new Map<string, Set<string>>();
  private readonly bySecret = new Map<string, Set<string>>();
  /** custom-headers / auth-proxy-set-headers / fastcgi-params-configmap ConfigMap "namespace/name" → Ingress keys. */
  private readonly byConfigMap = new Map<string, Set<string>>();
  private readonly listeners: ((changes: Change[]) => void)[] = [];
  /** The CRs, by kind then key (a kind's map is made with its first record). */
  private readonly crds: { [K in CrdKind]?: Map<string, CrdRecords[K]> } = {};
  private readonly rejectedCrds = new Map<string, RejectedCrd>();
  /** Kind-qualified ref of a CR → what it reads (as given with its record). */
  private readonly crdReads = new Map<string, RecordReads>();
  /**
   * Secret key → kind-qualified refs of the objects that read it besides an Ingress's TLS: every CR's Secrets (Route
   * TLS, Plugin configFrom, Consumer credentials, Upstream CA bundles) and an Ingress's credentials.
   */
  private readonly crdSecrets = new Map<string, Set<string>>();
  /** ConfigMap key → kind-qualified refs of the CRs whose record was made from its data (RecordReads.configMaps). */
  private readonly crdConfigMaps = new Map<string, Set<string>>();
  /** ClusterTrustBundle name → kind-qualified refs of the CRs whose record was made from it (RecordReads.clusterTrustBundles). */
  private readonly crdTrustBundles = new Map<string, Set<string>>();
  /** TCP and UDP services (--tcp-services-configmap / --udp-services-configmap), see tcpudp.ts. */
  private readonly streams: Record<StreamProtocol, readonly StreamEntry[]> = { TCP: [], UDP: [] };

  get revision(): number {
    return this.revisionN;
  }

  onChange(cb: (changes: Change[]) => void): void {
    this.listeners.push(cb);
  }

  private changed(kind: ChangeKind, key: string): void {
    this.revisionN++;
    for (const l of this.listeners) l([{ kind, key }]);
  }

  setIngressClass(c: IngressClassInfo): void {
    const old = this.classes.get(c.name);
    if (old && JSON.stringify(old) === JSON.stringify(c)) return;
    this.classes.set(c.name, c);
    this.changed('IngressClass', c.name);
  }
  deleteIngressClass(name: string): void {
    if (this.classes.delete(name)) this.changed('IngressClass', name);
  }

  setIngress(ing: NormalizedIngress): void {
    const old = this.ingresses.get(ing.key);
    if (old && JSON.stringify(old) === JSON.stringify(ing) && !this.rejected.has(ing.key)) return;
    this.unindex(ing.key);
    this.rejected.delete(ing.key);
    this.ingresses.set(ing.key, ing);
    for (const s of servicesOf(ing)) addIdx(this.byService, s, ing.key);
    for (const s of secretsOf(ing)) addIdx(this.bySecret, s, ing.key);
    // An auth-secret (basic auth) or proxy-ssl-secret is read like a CR's credentials: same index, the Ingress's
    // kind-qualified ref.
    for (const s of ingressCredentialSecrets(ing)) addIdx(this.crdSecrets, s, `Ingress/${ing.key}`);
    for (const c of configMapsOf(ing)) addIdx(this.byConfigMap, c, ing.key);
    this.changed('Ingress', ing.key);
  }
  rejectIngress(r: RejectedIngress): void {
    const had = this.ingresses.has(r.key) || this.rejected.get(r.key)?.reason !== r.reason;
    this.unindex(r.key);
    this.ingresses.delete(r.key);
    this.rejected.set(r.key, r);
    if (had) this.changed('Ingress', r.key);
  }
  deleteIngress(key: string): void {
    const had = this.ingresses.has(key) || this.rejected.has(key);
    this.unindex(key);
    this.ingresses.delete(key);
    this.rejected.delete(key);
    if (had) this.changed('Ingress', key);
  }
  private unindex(key: string): void {
    const old = this.ingresses.get(key);
    if (!old) return;
    for (const s of servicesOf(old)) delIdx(this.byService, s, key);
    for (const s of secretsOf(old)) delIdx(this.bySecret, s, key);
    for (const s of ingressCredentialSecrets(old)) delIdx(this.crdSecrets, s, `Ingress/${key}`);
    for (const c of configMapsOf(old)) delIdx(this.byConfigMap, c, key);
  }

  setService(svc: NormalizedService): void {
    const old = this.services.get(svc.key);
    if (old && JSON.stringify(old) === JSON.stringify(svc)) return;
    this.services.set(svc.key, svc);
    this.changed('Service', svc.key);
  }
  deleteService(key: string): void {
    if (this.services.delete(key)) this.changed('Service', key);
  }

  /** Replaces every slice of one Service (the Service reconciler owns them as a set). */
  setEndpointSlices(serviceKey: string, slices: NormalizedSlice[]): void {
    const byKey = new Map(slices.map((s) => [s.key, s]));
    const next = [...byKey.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const old = this.slices.get(serviceKey);
    const same = old && old.length === next.length && next.every((s, i) => JSON.stringify(old[i]) === JSON.stringify(s));
    if (same || (!old && next.length === 0)) return;
    if (next.length) this.slices.set(serviceKey, next);
    else this.slices.delete(serviceKey);
    this.changed('EndpointSlice', serviceKey);
  }

  setSecret(m: TlsMaterial): void {
    const old = this.secrets.get(m.key);
    if (old && JSON.stringify(old) === JSON.stringify(m)) return;
    this.secrets.set(m.key, m);
    if (m.key === this.defaultCertKey) this.defaultCert = m;
    this.changed('Secret', m.key);
  }
  deleteSecret(key: string): void {
    if (this.secrets.delete(key)) this.changed('Secret', key);
  }

  /** --default-ssl-certificate: the Secret key to use, or the generated fallback material. */
  setDefaultCertificate(secretKey: string | null, fallback: TlsMaterial | null): void {
    this.defaultCertKey = secretKey;
    const m = (secretKey && this.secrets.get(secretKey)) || fallback;
    this.defaultCert = m ?? null;
    this.changed('Secret', secretKey ?? '(default)');
  }

  setGlobalConfig(v: GlobalConfigValues): void {
    if (JSON.stringify(v) === JSON.stringify(this.global)) return;
    this.global = v;
    this.changed('Config', 'global');
  }
  globalConfig(): GlobalConfigValues {
    return this.global;
  }

  /** Replaces every TCP or UDP service entry (one ConfigMap holds them all). */
  setStreamServices(protocol: StreamProtocol, entries: StreamEntry[]): void {
    if (JSON.stringify(this.streams[protocol]) === JSON.stringify(entries)) return;
    this.streams[protocol] = entries;
    this.changed('Stream', protocol);
  }
  /** Every TCP entry, then every UDP entry. */
  streamServices(): readonly StreamEntry[] {
    return [...this.streams.TCP, ...this.streams.UDP];
  }

  /** The live map of one CRD kind (made with its first record). */
  private mapOf<K extends CrdKind>(kind: K): Map<string, CrdRecords[K]> {
    let map = this.crds[kind] as Map<string, CrdRecords[K]> | undefined;
    if (!map) this.crds[kind] = map = new Map() as never;
    return map as Map<string, CrdRecords[K]>;
  }

  /**
   * Stores a normalized CR (replacing its previous record and any rejection), with what it reads (its kind's
   * declaration, CrdKindSpec.reads): the Secrets are indexed, so a change of one reaches the CRs reading it.
   */
  setCrd<K extends CrdKind>(kind: K, rec: CrdRecords[K] & CrdMeta, reads: RecordReads = READS_NOTHING): void {
    const ref = `${kind}/${rec.key}`;
    const map = this.mapOf(kind);
    const old = map.get(rec.key);
    const before = this.crdReads.get(ref) ?? READS_NOTHING;
    if (old && JSON.stringify(old) === JSON.stringify(rec) && !this.rejectedCrds.has(ref) && JSON.stringify(before) === JSON.stringify(reads)) return;
    this.unindexCrd(ref);
    this.rejectedCrds.delete(ref);
    map.set(rec.key, rec);
    if (reads.secrets.length || reads.configMaps?.length || reads.clusterTrustBundles?.length) this.crdReads.set(ref, reads);
    for (const s of new Set(reads.secrets)) addIdx(this.crdSecrets, s, ref);
    for (const c of new Set(reads.configMaps ?? [])) addIdx(this.crdConfigMaps, c, ref);
    for (const b of new Set(reads.clusterTrustBundles ?? [])) addIdx(this.crdTrustBundles, b, ref);
    this.changed(kind, rec.key);
  }
  rejectCrd(kind: CrdKind, r: RejectedCrd): void {
    const ref = `${kind}/${r.key}`;
    const prev = this.rejectedCrds.get(ref);
    const map = this.mapOf(kind);
    const had = map.has(r.key) || prev?.reason !== r.reason || prev?.generation !== r.generation;
    this.unindexCrd(ref);
    map.delete(r.key);
    this.rejectedCrds.set(ref, r);
    if (had) this.changed(kind, r.key);
  }
  deleteCrd(kind: CrdKind, key: string): void {
    const ref = `${kind}/${key}`;
    const map = this.mapOf(kind);
    const had = map.has(key) || this.rejectedCrds.has(ref);
    this.unindexCrd(ref);
    map.delete(key);
    this.rejectedCrds.delete(ref);
    if (had) this.changed(kind, key);
  }
  private unindexCrd(ref: string): void {
    const old = this.crdReads.get(ref);
    if (!old) return;
    for (const s of old.secrets) delIdx(this.crdSecrets, s, ref);
    for (const c of old.configMaps ?? []) delIdx(this.crdConfigMaps, c, ref);
    for (const b of old.clusterTrustBundles ?? []) delIdx(this.crdTrustBundles, b, ref);
    this.crdReads.delete(ref);
  }
  crd<K extends CrdKind>(kind: K, key: string): CrdRecords[K] | undefined {
    return this.crds[kind]?.get(key) as CrdRecords[K] | undefined;
  }
  /** Every record of one CRD kind (a live read-only view). */
  records<K extends CrdKind>(kind: K): ReadonlyMap<string, CrdRecords[K]> {
    return (this.crds[kind] as ReadonlyMap<string, CrdRecords[K]> | undefined) ?? NONE;
  }
  /** What a CR read when it was stored ("Route/ns/name"; nothing for an unknown one). */
  readsOf(ref: string): RecordReads {
    return this.crdReads.get(ref) ?? READS_NOTHING;
  }
  /** Kind-qualified refs of the CRs reading a Secret. */
  crdsUsingSecret(secretKey: string): string[] {
    return [...(this.crdSecrets.get(secretKey) ?? [])].sort();
  }

  /** Kind-qualified refs of the CRs whose record was made from a ConfigMap's data ("namespace/name"). */
  crdsUsingConfigMap(configMapKey: string): string[] {
    return [...(this.crdConfigMaps.get(configMapKey) ?? [])].sort();
  }

  /** Kind-qualified refs of the CRs whose record was made from a ClusterTrustBundle (by name: it is cluster-scoped). */
  crdsUsingClusterTrustBundle(name: string): string[] {
    return [...(this.crdTrustBundles.get(name) ?? [])].sort();
  }

  ingressesUsingService(serviceKey: string): string[] {
    return [...(this.byService.get(serviceKey) ?? [])].sort();
  }
  /** Ingresses whose custom-headers names this ConfigMap ("namespace/name"). */
  ingressesUsingConfigMap(configMapKey: string): string[] {
    return [...(this.byConfigMap.get(configMapKey) ?? [])].sort();
  }
  ingressesUsingSecret(secretKey: string): string[] {
    return [...(this.bySecret.get(secretKey) ?? [])].sort();
  }
  /** Only Secrets referenced by an Ingress (or the default certificate) are kept in memory. */
  isSecretReferenced(secretKey: string): boolean {
    return secretKey === this.defaultCertKey || (this.bySecret.get(secretKey)?.size ?? 0) > 0 || (this.crdSecrets.get(secretKey)?.size ?? 0) > 0;
  }

  /** Direct reads for hot paths (no full snapshot). */
  ingress(key: string): NormalizedIngress | undefined {
    return this.ingresses.get(key);
  }
  secret(key: string): TlsMaterial | undefined {
    return this.secrets.get(key);
  }
  service(key: string): NormalizedService | undefined {
    return this.services.get(key);
  }
  slicesOf(serviceKey: string): readonly NormalizedSlice[] {
    return this.slices.get(serviceKey) ?? [];
  }
  classList(): ReadonlyMap<string, IngressClassInfo> {
    return this.classes;
  }
  ingressCount(): number {
    return this.ingresses.size;
  }

  /** O(1): read-only views, see ModelSnapshot. */
  snapshot(): ModelSnapshot {
    let def = this.defaultCert;
    if (this.defaultCertKey) {
      const s = this.secrets.get(this.defaultCertKey);
      if (s?.ok) def = s;
    }
    return {
      revision: this.revisionN,
      classes: this.classes,
      ingresses: this.ingresses,
      rejected: this.rejected,
      services: this.services,
      slices: this.slices,
      secrets: this.secrets,
      global: this.global,
      defaultCertificate: def,
      crds: this.crds,
      rejectedCrds: this.rejectedCrds,
    };
  }
}
