// The single in-memory source of truth. Each reconciler writes its own slice; the gateway reconciler reads a
// snapshot. Keeps reverse indexes (Service → Ingresses, Secret → Ingresses) so a change touches only what uses it,
// and tells listeners which records changed. Every read is O(what it touches): `snapshot()` hands out read-only
// views of the live maps (no copy), and each Service's slices are kept sorted when they are written, not when
// they are read.
import { defaultGlobalConfig, type GlobalConfigValues } from './global-config.ts';
import type {
  IngressClassInfo,
  NormalizedConsumer,
  NormalizedIngress,
  NormalizedPlugin,
  NormalizedRoute,
  NormalizedService,
  NormalizedSlice,
  NormalizedUpstream,
  StreamEntry,
  StreamProtocol,
  TlsMaterial,
} from './types.ts';

export type CrdKind = 'Route' | 'Upstream' | 'Plugin' | 'Consumer';
export type ChangeKind = 'IngressClass' | 'Ingress' | 'Service' | 'EndpointSlice' | 'Secret' | 'Config' | 'Stream' | CrdKind;

/** A CR whose spec failed its schema: not in the model, reported as Accepted=False. */
export interface RejectedCrd {
  key: string;
  generation: number;
  reason: string;
}

interface CrdRecords {
  Route: NormalizedRoute;
  Upstream: NormalizedUpstream;
  Plugin: NormalizedPlugin;
  Consumer: NormalizedConsumer;
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
  routes: ReadonlyMap<string, NormalizedRoute>;
  upstreams: ReadonlyMap<string, NormalizedUpstream>;
  plugins: ReadonlyMap<string, NormalizedPlugin>;
  consumers: ReadonlyMap<string, NormalizedConsumer>;
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
/** ConfigMaps an Ingress reads (custom-headers, auth-proxy-set-headers), "namespace/name". */
export function configMapsOf(ing: NormalizedIngress): string[] {
  return [...new Set([ing.customHeadersConfigMap, ing.authProxyHeadersConfigMap].filter((k): k is string => !!k))].sort();
}

export function ingressCredentialSecrets(ing: NormalizedIngress): string[] {
  return [...new Set([ing.authSecret, ing.proxySsl?.secretKey, ing.authTlsSecret].filter((k): k is string => !!k))].sort();
}

/** Secrets a CR reads: Route TLS Secrets (key material, like an Ingress's), a Plugin's configFrom, Consumer credentials, an Upstream's CA bundle. */
export function crdSecretsOf(kind: CrdKind, rec: NormalizedRoute | NormalizedUpstream | NormalizedPlugin | NormalizedConsumer): string[] {
  if (kind === 'Route') return [...new Set((rec as NormalizedRoute).tls.map((t) => `${rec.namespace}/${t.secretName}`))].sort();
  if (kind === 'Plugin') return (rec as NormalizedPlugin).secretKey ? [(rec as NormalizedPlugin).secretKey as string] : [];
  if (kind === 'Consumer') return (rec as NormalizedConsumer).secretKeys;
  const ca = (rec as NormalizedUpstream).tls?.caSecret;
  if (kind === 'Upstream' && ca && (rec as NormalizedUpstream).tls?.verify) return [`${rec.namespace}/${ca}`];
  return [];
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
  /** custom-headers ConfigMap "namespace/name" → Ingress keys. */
  private readonly byConfigMap = new Map<string, Set<string>>();
  private readonly listeners: ((changes: Change[]) => void)[] = [];
  private readonly crds: { [K in CrdKind]: Map<string, CrdRecords[K]> } = { Route: new Map(), Upstream: new Map(), Plugin: new Map(), Consumer: new Map() };
  private readonly rejectedCrds = new Map<string, RejectedCrd>();
  /** Secret key → kind-qualified refs of the CRs that read it (Route TLS, Plugin configFrom, Consumer credentials). */
  private readonly crdSecrets = new Map<string, Set<string>>();
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

  /** Stores a normalized CR (replacing its previous record and any rejection). */
  setCrd<K extends CrdKind>(kind: K, rec: CrdRecords[K]): void {
    const ref = `${kind}/${rec.key}`;
    const map = this.crds[kind] as Map<string, CrdRecords[K]>;
    const old = map.get(rec.key);
    if (old && JSON.stringify(old) === JSON.stringify(rec) && !this.rejectedCrds.has(ref)) return;
    this.unindexCrd(kind, rec.key);
    this.rejectedCrds.delete(ref);
    map.set(rec.key, rec);
    for (const s of crdSecretsOf(kind, rec)) addIdx(this.crdSecrets, s, ref);
    this.changed(kind, rec.key);
  }
  rejectCrd(kind: CrdKind, r: RejectedCrd): void {
    const ref = `${kind}/${r.key}`;
    const prev = this.rejectedCrds.get(ref);
    const had = this.crds[kind].has(r.key) || prev?.reason !== r.reason || prev?.generation !== r.generation;
    this.unindexCrd(kind, r.key);
    this.crds[kind].delete(r.key);
    this.rejectedCrds.set(ref, r);
    if (had) this.changed(kind, r.key);
  }
  deleteCrd(kind: CrdKind, key: string): void {
    const ref = `${kind}/${key}`;
    const had = this.crds[kind].has(key) || this.rejectedCrds.has(ref);
    this.unindexCrd(kind, key);
    this.crds[kind].delete(key);
    this.rejectedCrds.delete(ref);
    if (had) this.changed(kind, key);
  }
  private unindexCrd(kind: CrdKind, key: string): void {
    const old = this.crds[kind].get(key);
    if (!old) return;
    for (const s of crdSecretsOf(kind, old)) delIdx(this.crdSecrets, s, `${kind}/${key}`);
  }
  crd<K extends CrdKind>(kind: K, key: string): CrdRecords[K] | undefined {
    return (this.crds[kind] as Map<string, CrdRecords[K]>).get(key);
  }
  /** Kind-qualified refs of the CRs reading a Secret. */
  crdsUsingSecret(secretKey: string): string[] {
    return [...(this.crdSecrets.get(secretKey) ?? [])].sort();
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
      routes: this.crds.Route,
      upstreams: this.crds.Upstream,
      plugins: this.crds.Plugin,
      consumers: this.crds.Consumer,
      rejectedCrds: this.rejectedCrds,
    };
  }
}
