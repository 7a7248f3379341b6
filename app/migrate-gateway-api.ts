// `portico migrate --to gateway-api`: the HTTPRoutes that serve the same requests as a set of Ingresses on Portico,
// attached to a Gateway, with Portico Plugin objects (ExtensionRef filters) where Gateway API has no equivalent, the
// Consumers and Secrets basic auth needs, and ReferenceGrants where a reference crosses namespaces. Per Ingress and
// per annotation it says what each became — a standard field or filter, a Plugin, nothing needed — or why it cannot
// be converted; nothing is dropped silently.
//
// It reads the Ingresses with the code Portico serves them with: the Ingress normalizer (its annotation parsing and
// the plugin configurations the annotation groups build), the ConfigMap's risk gate, the claims of the Ingress
// processor (paths as Portico matches them) and `portico migrate`'s own analysis (a value Portico refuses or ignores
// is not converted). What it writes is what Portico serves for HTTPRoutes (reconcilers/kinds/httproute/): the tests
// pass every object through Portico's own normalizers.
//
// Where an Ingress asks for access control that cannot be converted (or that Portico itself cannot apply, so the
// Ingress fails closed), its rules get an ExtensionRef to a Plugin that is not written: Portico answers those rules
// 503 until it exists — a converted route is never served with less access control than the Ingress had.
//
// The Gateway: `--gateway NS/NAME`, else a Gateway "portico" in each Ingress's namespace; its listeners are named by
// this conversion ("http" on port 80; "https-<host>" on 443 per TLS host, with the Ingress's certificate;
// "https-default" for HTTPS hosts without a certificate of their own), reported under `gateways` and written with
// `--gateway-class`. `--section-name` attaches every route to one listener instead (no HTTP/HTTPS split).
import { createHash } from 'node:crypto';
import type { KubeObject } from '../operator/kube/object.ts';
import { parsePluginConfig, type PluginConfig } from '../crds/schema/index.ts';
import { BCRYPT_SHAPE } from '../reconcilers/config/password-hash.ts';
import type { SnippetStatement } from '../reconcilers/config/types.ts';
import { basicAuthPlugin, noAuthLocation, type ExternalAuthSpec } from '../reconcilers/annotations/plugins.ts';
import { customHeadersConfig } from '../reconcilers/annotations/groups/custom-headers.ts';
import { globalAuthSpec } from '../reconcilers/annotations/groups/external-auth.ts';
import { rateLimitConfig } from '../reconcilers/annotations/groups/rate-limit.ts';
import { CATALOGUE, NGINX_PREFIX, PORTICO_PREFIX } from '../reconcilers/annotations/table.ts';
import { defaultGlobalConfig, parseGlobalConfig, type GlobalConfigValues } from '../reconcilers/model/global-config.ts';
import { normalizeIngress } from '../reconcilers/model/normalize.ts';
import type { NormalizedIngress, ServiceBackendRef } from '../reconcilers/model/types.ts';
import { gwHostnameSchema } from '../reconcilers/kinds/gateway/schema.ts';
import { claimsOfIngress } from '../reconcilers/kinds/ingress/processor.ts';
import type { PathClaim } from '../reconcilers/translate/claims.ts';
import { needsRewrite, regexSourceOf } from '../reconcilers/translate/matching.ts';
import { gateAnnotations, type RiskSettings } from '../reconcilers/translate/risk.ts';
import { regexPathProblem, regexProblem } from '../reconcilers/values/regex-path.ts';
import { wholePathPattern } from './migrate-gateway-api-regex.ts';
import { CONVERSIONS } from './migrate-gateway-api-table.ts';
import { classOf, type Input, type Obj } from './migrate-input.ts';

export const GATEWAY_API_SCHEMA_VERSION = 1;
const GW = 'gateway.networking.k8s.io';
const PLUGIN_API = 'portico.dev/v1alpha1';

// ---- the report -------------------------------------------------------------------------------------------------

/**
 * standard: a Gateway API field or filter; plugin: a Portico Plugin (ExtensionRef), with Consumers for basic auth;
 * unneeded: nothing to write (it changes nothing Portico does for this Ingress); not-convertible: with why.
 */
export type Outcome = 'standard' | 'plugin' | 'unneeded' | 'not-convertible';
export const OUTCOMES: readonly Outcome[] = ['standard', 'plugin', 'unneeded', 'not-convertible'];

export interface AnnotationConversion {
  /** As written, e.g. nginx.ingress.kubernetes.io/rewrite-target. */
  annotation: string;
  /** Without the prefix. */
  name: string;
  value: string;
  outcome: Outcome;
  /** What it became (the field, filter or Plugin), or why it cannot be converted. */
  detail: string;
  /** Converted, but answering differently from Portico serving the Ingress: how; else null. */
  difference: string | null;
}

export interface IngressConversion {
  namespace: string;
  name: string;
  ingressClass: string | null;
  /** converted: everything; partly: some annotation or path is not; not-converted: nothing served as it was. */
  verdict: 'converted' | 'partly-converted' | 'not-converted';
  annotations: AnnotationConversion[];
  /** What keeps a path, a backend or the whole Ingress from being converted. */
  problems: string[];
  /** Not blocking: differences and what the Gateway needs. */
  notes: string[];
  /** The objects written for it: "Kind namespace/name". */
  objects: string[];
}

export interface ListenerNeed {
  name: string;
  protocol: 'HTTP' | 'HTTPS';
  port: number;
  hostname?: string;
  /** HTTPS: the certificate's Secret ("namespace/name"), or null when the Ingress used Portico's default certificate. */
  certificate?: string | null;
  /** Namespaces (other than the Gateway's) whose routes attach: allowedRoutes must admit them. */
  routeNamespaces: string[];
}

export interface GatewayNeed {
  namespace: string;
  name: string;
  listeners: ListenerNeed[];
}

export interface ConversionReport {
  schemaVersion: number;
  source: Input['source'];
  /** The Gateway the routes attach to: the one given, or null for "portico" in each Ingress's namespace. */
  gateway: { namespace: string; name: string } | null;
  sectionName: string | null;
  ingresses: IngressConversion[];
  /** The listeners each Gateway needs for the routes (with --gateway-class, written). */
  gateways: GatewayNeed[];
  summary: {
    ingresses: number;
    converted: number;
    partlyConverted: number;
    notConverted: number;
    annotations: Record<Outcome, number>;
    objects: Record<string, number>;
    exitCode: 0 | 1;
  };
}

export interface Conversion {
  objects: KubeObject[];
  report: ConversionReport;
}

export interface GatewayApiOptions {
  gateway?: { namespace: string; name: string };
  sectionName?: string;
  gatewayClass?: string;
}

/** What the conversion needs of `portico migrate`'s analysis (app/migrate.ts analyze): its issues per Ingress. */
export interface AnalysisOf {
  ingresses: { namespace: string; name: string; issues: { code: string; annotation: string | null; message: string }[] }[];
}

// ---- names --------------------------------------------------------------------------------------------------------

const digest = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 8);

/** A DNS-subdomain object name from parts ("-"-joined), shortened with a digest when too long. */
export function objectName(...parts: string[]): string {
  const n = parts
    .join('-')
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '');
  return n.length <= 253 ? n || 'x' : `${n.slice(0, 244).replace(/[-.]+$/, '')}-${digest(n)}`;
}

/** A listener name (a DNS label-like sectionName) for a host: "*.a.example" → "wildcard-a-example". */
const hostSlug = (h: string) => h.replace(/^\*\./, 'wildcard.').replace(/\./g, '-');
const listenerName = (prefix: string, host: string) => {
  const n = `${prefix}-${hostSlug(host)}`;
  return n.length <= 63 ? n : `${n.slice(0, 54).replace(/-+$/, '')}-${digest(n)}`;
};

// ---- the objects --------------------------------------------------------------------------------------------------

type Json = Record<string, unknown>;
interface HeaderMods {
  set: { name: string; value: string }[];
  add: { name: string; value: string }[];
  remove: string[];
}
interface PathMatch {
  type: 'Exact' | 'PathPrefix' | 'RegularExpression';
  value: string;
}
interface HeaderMatch {
  type: 'Exact' | 'RegularExpression';
  name: string;
  value: string;
}
interface BackendRef {
  name: string;
  port: number;
  weight?: number;
}
interface Rule {
  matches: { path: PathMatch; headers?: HeaderMatch[] }[];
  filters?: Json[];
  backendRefs?: BackendRef[];
  timeouts?: { backendRequest: string };
}
interface RouteDraft {
  job: Job;
  name: string;
  namespace: string;
  hostnames: string[];
  parents: { gateway: GatewayKey; sectionName?: string }[];
  /** Rules in groups that stay in one HTTPRoute (a path's rules: their order decides between equal matches). */
  rules: Rule[][];
}
type GatewayKey = string; // "namespace/name"

const extensionRef = (name: string): Json => ({ type: 'ExtensionRef', extensionRef: { group: 'portico.dev', kind: 'Plugin', name } });
const plugin = (namespace: string, name: string, config: PluginConfig): KubeObject => {
  const { type, ...rest } = config as PluginConfig & Json;
  return { apiVersion: PLUGIN_API, kind: 'Plugin', metadata: { name, namespace }, spec: { type, config: rest } } as KubeObject;
};

// ---- per Ingress --------------------------------------------------------------------------------------------------

interface Job {
  obj: KubeObject;
  namespace: string;
  name: string;
  created: string;
  raw: Record<string, string>;
  /** The Ingress as Portico applies it (the ConfigMap's risk gate applied); null when Portico serves nothing of it. */
  ing: NormalizedIngress | null;
  notServed?: string;
  report: IngressConversion;
  issues: AnalysisOf['ingresses'][number]['issues'];
  outcomes: Map<string, { outcome: Outcome; detail: string; difference?: string }>;
}

/** What every rule of an Ingress carries (its annotations' filters), and why its rules must fail closed, if so. */
interface IngressFilters {
  request: HeaderMods;
  response: HeaderMods;
  rewriteHost?: string;
  cors?: Json;
  mirror?: { name: string; namespace?: string; port: number };
  /** Plugins (ExtensionRef) of every rule. */
  plugins: string[];
  /** Authentication Plugins: left out on no-auth-locations paths, as Portico does. */
  auth: string[];
  /** The Plugin (not written) every rule refers to so it answers 503: access control that is not converted. */
  closed?: string;
  timeout?: string;
  /** Per path: URLRewrite's full path, or a rewrite Plugin, or why it is not converted. */
  rewrites: Map<PathClaim, { path: string } | { plugin: string } | { error: string }>;
  /** Whether a path gets no authentication (the ConfigMap's no-auth-locations). */
  noAuth: (path: string) => boolean;
}

/** What the annotation converters share: the ConfigMap, the input's Secrets, and where objects go. */
interface Ctx {
  cfg: GlobalConfigValues;
  secrets: Input['secrets'];
  /** auth-secrets of basic auth per namespace ("namespace/name"). */
  basicAuthSecrets: Map<string, Set<string>>;
  emit: Emit;
  grant: Grant;
}

const mods = (): HeaderMods => ({ set: [], add: [], remove: [] });
const hasMods = (m: HeaderMods) => m.set.length + m.add.length + m.remove.length > 0;
/** A header set that replaces an earlier one of the same name (names compare case-insensitively). */
function setHeader(m: HeaderMods, name: string, value: string): void {
  m.set = m.set.filter((h) => h.name.toLowerCase() !== name.toLowerCase());
  m.remove = m.remove.filter((h) => h.toLowerCase() !== name.toLowerCase());
  m.set.push({ name, value });
}

/** The annotation's key as Portico reads it: the portico.dev form when both are set, else the nginx one. */
const fullName = (raw: Record<string, string>, name: string) => (raw[`${PORTICO_PREFIX}${name}`] !== undefined ? `${PORTICO_PREFIX}${name}` : `${NGINX_PREFIX}${name}`);

/** Gateway API's path rules (HTTPPathModifier): what URLRewrite and RequestRedirect accept as a full path. */
const gwPath = (p: string) => p.startsWith('/') && p.length <= 1024 && !p.includes('//') && !/\/\.\.?(\/|$)/.test(p) && !/%2f|%25/i.test(p) && /^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|%[0-9a-fA-F]{2})+$/.test(p);

/** Gateway durations: "60s" (Portico's timeouts are whole seconds). */
const duration = (seconds: number) => `${seconds}s`;

export function convertToGatewayApi(input: Input, analysis: AnalysisOf, opts: GatewayApiOptions = {}): Conversion {
  const cfg: GlobalConfigValues = input.configMap ? parseGlobalConfig(input.configMap.data, defaultGlobalConfig()).values : defaultGlobalConfig();
  const settings: RiskSettings = { allowSnippetAnnotations: cfg.allowSnippetAnnotations, annotationsRiskLevel: cfg.annotationsRiskLevel };
  const secrets = (k: string) => input.secrets.get(k);
  const configMaps = (k: string) => input.configMaps?.get(k);
  const issuesOf = new Map(analysis.ingresses.map((i) => [`${i.namespace}/${i.name}`, i.issues]));

  // Oldest first: where Ingresses compete (TLS of a host, canaries), Portico takes the oldest one's.
  const jobs: Job[] = input.ingresses
    .map((obj): Job => {
      const namespace = obj.metadata.namespace ?? 'default';
      const name = obj.metadata.name;
      const res = normalizeIngress(obj, secrets, configMaps);
      const job: Job = {
        obj,
        namespace,
        name,
        created: obj.metadata.creationTimestamp ?? '',
        raw: obj.metadata.annotations ?? {},
        ing: res.ok ? gateAnnotations(res.ingress, settings) : null,
        report: { namespace, name, ingressClass: classOf(obj as Obj), verdict: 'converted', annotations: [], problems: [], notes: [], objects: [] },
        issues: issuesOf.get(`${namespace}/${name}`) ?? [],
        outcomes: new Map(),
      };
      if (!res.ok) job.notServed = res.reason;
      return job;
    })
    .sort((a, b) => (a.created < b.created ? -1 : a.created > b.created ? 1 : `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`)));
  const served = jobs.filter((j): j is Job & { ing: NormalizedIngress } => j.ing !== null);
  const mains = served.filter((j) => j.ing.annotations.canary !== true);
  const basicAuthSecrets = new Map<string, Set<string>>();
  for (const j of mains) if (j.ing.annotations['auth-type'] === 'basic' && j.ing.authSecret) basicAuthSecrets.set(j.namespace, (basicAuthSecrets.get(j.namespace) ?? new Set()).add(j.ing.authSecret));

  // ---- what spans Ingresses ----
  // TLS per host: the oldest Ingress naming the host in a TLS section gives its Secret (null: the default certificate).
  const tlsOf = new Map<string, { namespace: string; secret: string | null }>();
  for (const j of served) for (const t of j.ing.tls) for (const h of t.hosts) if (!tlsOf.has(h)) tlsOf.set(h, { namespace: j.namespace, secret: t.secretName });
  // ingress-nginx's host-wide regex mode, per namespace as Portico keeps it.
  const regexHosts = new Set<string>();
  for (const j of mains) {
    for (const pc of claimsOfIngress(j.ing).paths) if (j.ing.annotations['use-regex'] === true || needsRewrite(j.ing.annotations, pc.written)) regexHosts.add(`${j.namespace} ${pc.host}`);
  }
  // Every path on every host (for nginx's "/foo" → "/foo/" redirect, which a path "/foo" of its own cancels).
  const hostPaths = new Map<string, Set<string>>();
  for (const j of mains) for (const pc of claimsOfIngress(j.ing).paths) hostPaths.set(pc.host, (hostPaths.get(pc.host) ?? new Set()).add(`${pc.match} ${pc.path}`));
  // server-alias: more names for a host, whichever Ingress on it names them.
  const aliases = new Map<string, Set<string>>();
  for (const j of mains) for (const a of j.ing.annotations['server-alias'] ?? []) for (const r of j.ing.rules) if (r.host) aliases.set(r.host, (aliases.get(r.host) ?? new Set()).add(a));
  const allHosts = new Set(mains.flatMap((j) => j.ing.rules.map((r) => r.host).filter((h): h is string => !!h)));

  // Canaries: attached to the backend (Service and port) of the main path they name, in the same namespace (as
  // Portico's canary resolution: phases/canaries.ts).
  const canaryOf = new Map<string, { job: Job & { ing: NormalizedIngress }; ref: ServiceBackendRef }>();
  for (const c of served.filter((j) => j.ing.annotations.canary === true)) {
    if (issueCodes(c).has('fails-closed') || c.ing.accessControl.length) continue; // a canary whose own access control cannot apply gets no traffic
    for (const pc of claimsOfIngress(c.ing).paths) {
      const main = mains.find((m) => m.namespace === c.namespace && claimsOfIngress(m.ing).paths.some((p) => p.host === pc.host && p.id === pc.id));
      const mpc = main && claimsOfIngress(main.ing).paths.find((p) => p.host === pc.host && p.id === pc.id);
      if (!main || !mpc) continue;
      const key = backendKey(main.namespace, mpc.ref);
      if (!canaryOf.has(key)) canaryOf.set(key, { job: c, ref: pc.ref });
    }
  }

  const objects: KubeObject[] = [];
  const routes: RouteDraft[] = [];
  const gateways = new Map<GatewayKey, GatewayNeed>();
  const grants = new Map<string, { namespace: string; from: { kind: string; namespace: string }; to: { kind: string; names: Set<string> } }>();
  const written = new Map<string, string>();
  const emit = (j: Job, o: KubeObject) => {
    const id = `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`;
    const text = JSON.stringify(o);
    const before = written.get(id);
    // The same object for two Ingresses (a Consumer of a shared auth-secret) is written once; another object of the
    // same name (Ingresses named so that their objects' names meet) is not written over: reported.
    if (before !== undefined && before !== text) {
      j.report.problems.push(`${id} is not written: another Ingress's object has that name (rename one of the Ingresses)`);
      return;
    }
    if (!j.report.objects.includes(id)) j.report.objects.push(id);
    if (before !== undefined) return;
    written.set(id, text);
    objects.push(o);
  };

  const gatewayFor = (ns: string): GatewayKey => (opts.gateway ? `${opts.gateway.namespace}/${opts.gateway.name}` : `${ns}/portico`);
  /** The listener a route attaches to, recorded with what the Gateway needs for it. */
  const listener = (routeNs: string, l: Omit<ListenerNeed, 'routeNamespaces'>): { gateway: GatewayKey; sectionName?: string } => {
    const gw = gatewayFor(routeNs);
    if (opts.sectionName) return { gateway: gw, sectionName: opts.sectionName };
    const [gns, gname] = gw.split('/') as [string, string];
    const need = gateways.get(gw) ?? { namespace: gns, name: gname, listeners: [] };
    gateways.set(gw, need);
    let have = need.listeners.find((x) => x.name === l.name);
    if (!have) {
      have = { ...l, routeNamespaces: [] };
      need.listeners.push(have);
    }
    if (routeNs !== gns && !have.routeNamespaces.includes(routeNs)) have.routeNamespaces.push(routeNs);
    // A certificate of another namespace than the Gateway's: a ReferenceGrant in the Secret's namespace.
    if (l.certificate) {
      const [sns, sname] = l.certificate.split('/') as [string, string];
      if (sns !== gns) grant(sns, { kind: 'Gateway', namespace: gns }, 'Secret', sname);
    }
    return { gateway: gw, sectionName: l.name };
  };
  const grant = (namespace: string, from: { kind: string; namespace: string }, toKind: string, toName: string) => {
    const key = `${namespace} ${from.kind} ${from.namespace} ${toKind}`;
    const g = grants.get(key) ?? { namespace, from, to: { kind: toKind, names: new Set<string>() } };
    g.to.names.add(toName);
    grants.set(key, g);
  };
  const http = (ns: string) => listener(ns, { name: 'http', protocol: 'HTTP', port: 80 });
  const https = (ns: string, host: string | null) => {
    const t = host ? tlsOf.get(host) : undefined;
    if (host && t?.secret) return listener(ns, { name: listenerName('https', host), protocol: 'HTTPS', port: 443, hostname: host, certificate: `${t.namespace}/${t.secret}` });
    return listener(ns, { name: 'https-default', protocol: 'HTTPS', port: 443, certificate: null });
  };

  for (const j of jobs) {
    if (!j.ing) {
      j.report.problems.push(`not converted: ${j.notServed}`);
      continue;
    }
    const job = j as Job & { ing: NormalizedIngress };
    markAnalysis(job);
    if (job.ing.annotations.canary === true) {
      const attached = [...canaryOf.values()].some((c) => c.job === job);
      convertCanary(job, attached);
      if (attached) job.report.notes.push('its rules are in the HTTPRoutes of its main Ingress (the rules with its Service as a backendRef)');
      continue;
    }
    const f = ingressFilters(job, { cfg, secrets: input.secrets, basicAuthSecrets, emit, grant });
    routes.push(...routesOf(job, f));
  }

  /** An Ingress's HTTPRoutes: per host, the route of its HTTPS side and of its HTTP side (redirects to HTTPS). */
  function routesOf(job: Job & { ing: NormalizedIngress }, f: IngressFilters): RouteDraft[] {
    const ing = job.ing;
    const a = ing.annotations;
    const claims = claimsOfIngress(ing);
    const byHost = new Map<string, PathClaim[]>();
    for (const pc of claims.paths) byHost.set(pc.host, [...(byHost.get(pc.host) ?? []), pc]);
    // defaultBackend: "/" on the Ingress's hosts where no rule claims it, and on any host ("_").
    for (const pc of claims.defaults) {
      const list = byHost.get(pc.host) ?? [];
      if (!list.some((p) => p.match === 'prefix' && p.path === '/') && !mains.some((m) => m !== job && claimsOfIngress(m.ing).paths.some((p) => p.host === pc.host && p.id === pc.id))) byHost.set(pc.host, [...list, pc]);
    }
    const out: RouteDraft[] = [];
    const hosts = [...byHost.keys()];
    let anyTls = false;
    let anyRedirect = false;
    for (const host of hosts) {
      const h = host === '_' ? null : host;
      const tls = h !== null && tlsOf.has(h);
      const force = a['force-ssl-redirect'] ?? cfg.forceSslRedirect;
      const redirect = force || (tls && (a['ssl-redirect'] ?? cfg.sslRedirect));
      anyTls ||= tls;
      anyRedirect ||= redirect;
      // One host (and perhaps the defaultBackend's "any host"): the Ingress's name; several: per host.
      const named = hosts.filter((x) => x !== '_');
      const base = h === null ? (hosts.length === 1 ? job.name : `${job.name}-any-host`) : named.length === 1 ? job.name : `${job.name}-${hostSlug(h)}`;
      const hostnames = h ? [h, ...[...(aliases.get(h) ?? [])].filter((x) => x !== h)] : [];
      const rules: Rule[][] = [];
      const httpRules: Rule[][] = [];
      const appRoot = a['app-root'];
      if (appRoot !== undefined) {
        // Before any path, the HTTPS redirect or access control (ingress-nginx's server-level `if ($uri = /)`).
        const r: Rule = { matches: [{ path: { type: 'Exact', value: '/' } }], filters: [{ type: 'RequestRedirect', requestRedirect: { path: { type: 'ReplaceFullPath', replaceFullPath: appRoot }, statusCode: 302 } }] };
        rules.push([r]);
        httpRules.push([r]);
      }
      for (const pc of byHost.get(host) ?? []) {
        const made = rulesOfPath(job, f, pc, host);
        if (!made) continue;
        rules.push(made.rules);
        // The HTTP side: what the HTTPS side serves, or for redirected paths a 308 to HTTPS (no-tls-redirect-locations
        // excepted). nginx's own "/foo" → "/foo/" comes first (it happens before the location's redirect).
        const noTls = noAuthLocation(pc.path, cfg.noTlsRedirectLocations ?? []);
        if (redirect && !noTls && !opts.sectionName) {
          httpRules.push([...made.slash, { matches: [{ path: made.match }], filters: [{ type: 'RequestRedirect', requestRedirect: { scheme: 'https', statusCode: cfg.httpRedirectCode } }] }]);
        } else httpRules.push(made.rules);
      }
      if (!rules.length) continue;
      const ns = job.namespace;
      if (opts.sectionName) {
        out.push({ job, name: base, namespace: ns, hostnames, parents: [http(ns)], rules });
        continue;
      }
      const secure = tls || redirect;
      if (!secure) out.push({ job, name: base, namespace: ns, hostnames, parents: [http(ns)], rules });
      else if (!redirect || JSON.stringify(rules) === JSON.stringify(httpRules)) out.push({ job, name: base, namespace: ns, hostnames, parents: [http(ns), https(ns, h)], rules });
      else {
        out.push({ job, name: base, namespace: ns, hostnames, parents: [https(ns, h)], rules });
        out.push({ job, name: `${base}-http`, namespace: ns, hostnames, parents: [http(ns)], rules: httpRules });
      }
      if (secure && !(h && tlsOf.get(h)?.secret)) job.report.notes.push(`HTTPS for ${h ?? 'rules without a host'}: Portico served it with its default certificate; the Gateway's listener https-default needs a certificate`);
      if (!secure && h === null) job.report.notes.push('rules without a host are on the HTTP listener only (Portico also answers them over HTTPS, with its default certificate)');
      if (h?.startsWith('*.')) job.report.notes.push(`${h}: a Gateway API wildcard hostname covers one label or more (an Ingress's, exactly one)`);
    }
    redirectOutcomes(job, anyTls, anyRedirect);
    // from-to-www-redirect: the other name (www.<host> or <host> without www.) answers 308 to the host, unless it
    // has rules of its own.
    if (a['from-to-www-redirect'] === true) {
      for (const r of ing.rules) {
        if (!r.host || r.host.startsWith('*.')) continue;
        const other = r.host.startsWith('www.') ? r.host.slice(4) : `www.${r.host}`;
        if (allHosts.has(other)) continue;
        out.push({ job, name: `${job.name}-${hostSlug(other)}-redirect`, namespace: job.namespace, hostnames: [other], parents: [http(job.namespace)], rules: [[{ matches: [{ path: { type: 'PathPrefix', value: '/' } }], filters: [{ type: 'RequestRedirect', requestRedirect: { hostname: r.host, statusCode: 308 } }] }]] });
        if (tlsOf.has(r.host)) job.report.notes.push(`from-to-www-redirect: HTTPS for ${other} needs a listener of its own with a certificate for that name (the route attaches to "http" only)`);
      }
    }
    return out;
  }

  /** The rules of one path: its match, canary rules, the rewrite, nginx's trailing-slash redirect. */
  function rulesOfPath(job: Job & { ing: NormalizedIngress }, f: IngressFilters, pc: PathClaim, host: string): { rules: Rule[]; slash: Rule[]; match: PathMatch } | null {
    const ns = job.namespace;
    const port = portOf(ns, pc.ref);
    if (typeof port === 'string') {
      job.report.problems.push(`path ${pc.written} on ${host === '_' ? '(any host)' : host} is not converted: ${port}`);
      return null;
    }
    const rw = f.rewrites.get(pc);
    if (rw && 'error' in rw) {
      job.report.problems.push(`path ${pc.written} on ${host === '_' ? '(any host)' : host} is not converted: ${rw.error}`);
      return null;
    }
    const regex = pc.match === 'regex' || regexHosts.has(`${ns} ${pc.host}`);
    const match: PathMatch = regex
      ? { type: 'RegularExpression', value: `^${regexSourceOf(pc)}` }
      : pc.match === 'exact'
        ? { type: 'Exact', value: pc.path }
        : { type: 'PathPrefix', value: pc.path };
    const filters = ruleFilters(f, pc, rw);
    const main: BackendRef = { name: pc.ref.service, port };
    const rules: Rule[] = [];
    const rule = (headers: HeaderMatch[] | undefined, backendRefs: BackendRef[]): Rule => ({
      matches: [{ path: match, ...(headers ? { headers } : {}) }],
      ...(filters.length ? { filters } : {}),
      backendRefs,
      ...(f.timeout ? { timeouts: { backendRequest: f.timeout } } : {}),
    });
    const canary = canaryOf.get(backendKey(ns, pc.ref));
    const canaryPort = canary ? portOf(ns, canary.ref) : undefined;
    if (canary && typeof canaryPort === 'number') {
      const c = canary.job.ing.annotations;
      const to: BackendRef = { name: canary.ref.service, port: canaryPort };
      // ingress-nginx's order: the header, then the cookie, then the weight; the rules with a header match come
      // first, and Gateway API (as Portico) takes the first of equally specific rules in their order.
      const header = c['canary-by-header'];
      if (header) {
        const value = c['canary-by-header-value'];
        const pattern = c['canary-by-header-pattern'];
        // (An empty value or a pattern outside Portico's regex subset is not converted: convertCanary says so.)
        if (value !== undefined) {
          if (value !== '') rules.push(rule([{ type: 'Exact', name: header, value }], [to]));
        } else if (pattern !== undefined) {
          if (regexProblem(pattern) === null) rules.push(rule([{ type: 'RegularExpression', name: header, value: pattern }], [to]));
        } else {
          rules.push(rule([{ type: 'Exact', name: header, value: 'always' }], [to]), rule([{ type: 'Exact', name: header, value: 'never' }], [main]));
        }
      }
      const cookie = c['canary-by-cookie'];
      if (cookie) rules.push(rule([{ type: 'RegularExpression', name: 'Cookie', value: cookieMatch(cookie, 'always') }], [to]), rule([{ type: 'RegularExpression', name: 'Cookie', value: cookieMatch(cookie, 'never') }], [main]));
      const w = c['canary-weight'] ?? 0;
      const total = c['canary-weight-total'] ?? 100;
      rules.push(rule(undefined, w > 0 ? [{ ...main, weight: Math.max(total - w, 0) }, { ...to, weight: Math.min(w, total) }] : [main]));
    } else rules.push(rule(undefined, [main]));
    // nginx's redirect of "/foo" to "/foo/" for an ImplementationSpecific path written "/foo/" (unless a path
    // "/foo" exists on the host): Gateway API's PathPrefix "/foo/" matches "/foo" itself, so an Exact rule answers it.
    const slash: Rule[] = [];
    if (!regex && pc.match === 'prefix' && pc.path.length > 1 && pc.path.endsWith('/')) {
      const bare = pc.path.slice(0, -1);
      const paths = hostPaths.get(pc.host) ?? new Set();
      if (!paths.has(`prefix ${bare}`) && !paths.has(`exact ${bare}`)) slash.push({ matches: [{ path: { type: 'Exact', value: bare } }], filters: [{ type: 'RequestRedirect', requestRedirect: { path: { type: 'ReplaceFullPath', replaceFullPath: pc.path }, statusCode: 301 } }] });
    }
    return { rules: [...slash, ...rules], slash, match };
  }

  /** ssl-redirect, force-ssl-redirect, preserve-trailing-slash: what they changed on this Ingress's hosts. */
  function redirectOutcomes(job: Job & { ing: NormalizedIngress }, anyTls: boolean, anyRedirect: boolean): void {
    const a = job.ing.annotations;
    const set = (name: 'ssl-redirect' | 'force-ssl-redirect' | 'preserve-trailing-slash', outcome: Outcome, detail: string, difference?: string) => {
      if (a[name] !== undefined && !job.outcomes.has(name)) job.outcomes.set(name, { outcome, detail, ...(difference ? { difference } : {}) });
    };
    const slash = a['preserve-trailing-slash'] === true ? undefined : 'the Location keeps a final "/" of the path (ingress-nginx drops it unless preserve-trailing-slash is "true")';
    const redirects = `the host's rules are on the Gateway's HTTPS listener, and on its HTTP listener each path answers a RequestRedirect to https (${cfg.httpRedirectCode}, the ConfigMap's http-redirect-code)`;
    if (opts.sectionName && anyRedirect) {
      for (const n of ['ssl-redirect', 'force-ssl-redirect', 'preserve-trailing-slash'] as const) set(n, 'not-convertible', 'with --section-name every route attaches to one listener: the redirect to HTTPS needs the Gateway\'s HTTP listener apart from its HTTPS one');
      job.report.problems.push('the redirect to HTTPS is not converted: --section-name attaches every route to one listener');
      return;
    }
    const both = 'its TLS hosts\' rules are on both the HTTP and the HTTPS listener (no redirect)';
    if (a['ssl-redirect'] === true) set('ssl-redirect', anyRedirect && anyTls ? 'standard' : 'unneeded', anyRedirect && anyTls ? redirects : 'no host of the Ingress has TLS: nothing is redirected', anyRedirect ? slash : undefined);
    else if (a['ssl-redirect'] === false) set('ssl-redirect', anyTls && !anyRedirect ? 'standard' : 'unneeded', anyTls && !anyRedirect ? both : 'nothing is redirected without TLS (or force-ssl-redirect redirects anyway)');
    if (a['force-ssl-redirect'] === true) set('force-ssl-redirect', 'standard', `${redirects}; hosts without TLS of their own need the listener https-default and its certificate`, slash);
    else if (a['force-ssl-redirect'] === false) set('force-ssl-redirect', cfg.forceSslRedirect ? 'standard' : 'unneeded', cfg.forceSslRedirect ? 'its hosts without TLS are not redirected (the ConfigMap\'s force-ssl-redirect is "true")' : '"false" is the default');
    if (a['preserve-trailing-slash'] !== undefined) set('preserve-trailing-slash', anyRedirect && a['preserve-trailing-slash'] ? 'standard' : 'unneeded', anyRedirect && a['preserve-trailing-slash'] ? 'RequestRedirect keeps the path as it is' : 'it changes nothing here (no redirect to HTTPS, or "false")');
  }

  function portOf(ns: string, ref: ServiceBackendRef): number | string {
    if ('number' in ref.port) return ref.port.number;
    const name = ref.port.name;
    const svc = input.services?.get(`${ns}/${ref.service}`);
    if (!svc) return `Service ${ns}/${ref.service} is not in the input, so its port "${name}" cannot be given as a number (a backendRef needs one)`;
    const p = svc.ports.find((x) => x.name === name);
    return p ? p.port : `Service ${ns}/${ref.service} has no port named "${name}"`;
  }

  // ---- routes → objects ----
  for (const r of routes) {
    const job = r.job;
    // Gateway API allows 16 rules per HTTPRoute: more make more routes, a path's rules always in the same one.
    const chunks: Rule[][] = [];
    for (const g of r.rules) {
      const last = chunks[chunks.length - 1];
      if (last && last.length + g.length <= 16) last.push(...g);
      else chunks.push([...g]);
    }
    chunks.forEach((rules, i) => {
      const name = objectName(i === 0 ? r.name : `${r.name}-${i + 1}`);
      emit(job, {
        apiVersion: `${GW}/v1`,
        kind: 'HTTPRoute',
        metadata: { name, namespace: r.namespace },
        spec: {
          parentRefs: r.parents.map((p) => {
            const [gns, gname] = p.gateway.split('/') as [string, string];
            return { name: gname, ...(gns !== r.namespace ? { namespace: gns } : {}), ...(p.sectionName ? { sectionName: p.sectionName } : {}) };
          }),
          ...(r.hostnames.length ? { hostnames: r.hostnames } : {}),
          rules,
        },
      } as KubeObject);
    });
  }
  const grantObjects: KubeObject[] = [...grants.values()].map((g) => ({
    apiVersion: `${GW}/v1beta1`,
    kind: 'ReferenceGrant',
    metadata: { name: objectName('from', g.from.namespace, g.from.kind.toLowerCase()), namespace: g.namespace },
    spec: { from: [{ group: GW, kind: g.from.kind, namespace: g.from.namespace }], to: [...g.to.names].sort().map((n) => ({ group: '', kind: g.to.kind, name: n })) },
  }) as KubeObject);

  // ---- the report ----
  for (const j of jobs) finishReport(j);
  const reports = [...jobs].sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`)).map((j) => j.report);
  const needs = [...gateways.values()].sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
  for (const g of needs) g.listeners.sort((a, b) => (a.name === 'http' ? -1 : b.name === 'http' ? 1 : a.name.localeCompare(b.name)));
  const gatewayObjects = opts.gatewayClass ? needs.map((g) => gatewayObject(g, opts.gatewayClass as string)) : [];
  const all = [...gatewayObjects, ...objects, ...grantObjects];
  const counts: Record<Outcome, number> = { standard: 0, plugin: 0, unneeded: 0, 'not-convertible': 0 };
  for (const r of reports) for (const a of r.annotations) counts[a.outcome]++;
  const objectCounts: Record<string, number> = {};
  for (const o of all) objectCounts[o.kind as string] = (objectCounts[o.kind as string] ?? 0) + 1;
  const converted = reports.filter((r) => r.verdict === 'converted').length;
  return {
    objects: all,
    report: {
      schemaVersion: GATEWAY_API_SCHEMA_VERSION,
      source: input.source,
      gateway: opts.gateway ?? null,
      sectionName: opts.sectionName ?? null,
      ingresses: reports,
      gateways: needs,
      summary: {
        ingresses: reports.length,
        converted,
        partlyConverted: reports.filter((r) => r.verdict === 'partly-converted').length,
        notConverted: reports.filter((r) => r.verdict === 'not-converted').length,
        annotations: counts,
        objects: objectCounts,
        exitCode: converted === reports.length ? 0 : 1,
      },
    },
  };

  // ---- helpers that read the conversion's state ----

  function markAnalysis(job: Job): void {
    // A value Portico refuses or ignores (invalid, refused by the table or the ConfigMap, without effect) is not
    // converted: `portico migrate`'s analysis says why.
    for (const is of job.issues) {
      if (!is.annotation) continue;
      for (const full of is.annotation.split(', ')) {
        const name = full.replace(/^[^/]+\//, '');
        if (!job.outcomes.has(name)) job.outcomes.set(name, { outcome: 'not-convertible', detail: `Portico does not apply it as written (${is.code}): ${is.message}` });
      }
    }
  }

  function convertCanary(job: Job & { ing: NormalizedIngress }, attached: boolean): void {
    const names = ['canary', 'canary-weight', 'canary-weight-total', 'canary-by-header', 'canary-by-header-value', 'canary-by-header-pattern', 'canary-by-cookie'];
    const a = job.ing.annotations;
    if (a['canary-by-header-value'] === '') job.outcomes.set('canary-by-header-value', { outcome: 'not-convertible', detail: 'an empty header value cannot be a Gateway API header match' });
    const patternProblem = a['canary-by-header-pattern'] !== undefined && a['canary-by-header-value'] === undefined ? regexProblem(a['canary-by-header-pattern']) : null;
    if (patternProblem) job.outcomes.set('canary-by-header-pattern', { outcome: 'not-convertible', detail: `outside the regular expressions Portico's HTTPRoute header matches take: ${patternProblem}` });
    const why = issueCodes(job).has('fails-closed') || job.ing.accessControl.length ? 'its own access control cannot be applied' : 'no main Ingress of its namespace serves its host and path';
    for (const n of names) {
      if (job.ing.annotations[n as 'canary'] === undefined || job.outcomes.has(n)) continue;
      if (!attached) job.outcomes.set(n, { outcome: 'not-convertible', detail: `${why}: Portico sends it no traffic either` });
      else job.outcomes.set(n, { outcome: 'standard', detail: canaryDetail(n), ...(n === 'canary-by-cookie' ? { difference: 'matched in the Cookie header with a regular expression: the cookie must come first or after "; " (as browsers send it), and its name is matched case-sensitively' } : {}) });
    }
    if (!attached) job.report.problems.push(`canary: ${why}`);
    // The rest of a canary's annotations: Portico serves the canary's share with its main Ingress's settings.
    for (const full of Object.keys(job.raw)) {
      const name = annotationName(full);
      if (name && !job.outcomes.has(name) && !names.includes(name)) job.outcomes.set(name, { outcome: 'unneeded', detail: 'on a canary Ingress it does not apply: the canary\'s requests are served with its main Ingress\'s settings (as in ingress-nginx)' });
    }
  }

  function finishReport(j: Job): void {
    const r = j.report;
    for (const full of Object.keys(j.raw).sort()) {
      const name = annotationName(full);
      if (!name) continue;
      const row = Object.hasOwn(CATALOGUE, name) ? CATALOGUE[name] : undefined;
      let o = j.outcomes.get(name);
      if (!o) {
        if (!row) o = { outcome: 'not-convertible', detail: 'neither ingress-nginx nor Portico documents it' };
        else if (row.status === 'refused') o = { outcome: 'not-convertible', detail: `Portico does not apply it: ${row.refusedWhy}` };
        else if (!j.ing) o = { outcome: 'not-convertible', detail: 'the Ingress is not converted' };
        else if (fullName(j.raw, name) !== full) o = { outcome: 'unneeded', detail: `${fullName(j.raw, name)} is the one applied` };
        else {
          const c = CONVERSIONS[name];
          o = { outcome: 'not-convertible', detail: c && c.kind === 'none' ? c.detail : 'Portico applies it, but this conversion does not carry it' };
        }
      }
      const value = j.raw[full] ?? '';
      r.annotations.push({ annotation: full, name, value: value.length > 200 ? `${value.slice(0, 200)}…` : value, outcome: o.outcome, detail: o.detail, difference: o.difference ?? null });
    }
    const lost = r.annotations.some((a) => a.outcome === 'not-convertible') || r.problems.length > 0;
    const canaryAttached = j.ing?.annotations.canary === true && !r.problems.length;
    r.verdict = !j.ing || (!r.objects.some((o) => o.startsWith('HTTPRoute ')) && !canaryAttached) ? 'not-converted' : lost ? 'partly-converted' : 'converted';
    r.notes = [...new Set(r.notes)];
  }
}

/** "nginx.ingress.kubernetes.io/x" → "x" (the test hook and other prefixes: null). */
function annotationName(full: string): string | null {
  if (full === 'portico.dev/test-invalid-directive') return null;
  if (full.startsWith(NGINX_PREFIX)) return full.slice(NGINX_PREFIX.length);
  if (full.startsWith(PORTICO_PREFIX)) return full.slice(PORTICO_PREFIX.length);
  return null;
}

const issueCodes = (j: Job) => new Set(j.issues.map((i) => i.code));
const backendKey = (ns: string, ref: ServiceBackendRef) => `${ns}/${ref.service}:${'number' in ref.port ? ref.port.number : ref.port.name}`;

/** A Cookie header matching one cookie's value: first, or after whitespace (browsers write "a=1; b=2"), the value whole. */
export function cookieMatch(cookie: string, value: string): string {
  return `(^|\\s)${cookie}=${value}(?![\\w!%&*+.:=@~/()?|-])`;
}

function canaryDetail(n: string): string {
  switch (n) {
    case 'canary':
      return 'its rules are added to the main Ingress\'s HTTPRoute, for the backend (Service and port) of its main path';
    case 'canary-weight':
    case 'canary-weight-total':
      return 'weighted backendRefs: the main Service with canary-weight-total − canary-weight, the canary with canary-weight';
    case 'canary-by-header':
      return 'rules with a header match ahead of the weighted one: "always" → the canary, "never" → the main Service (with canary-by-header-value or -pattern: that value or regular expression → the canary)';
    case 'canary-by-header-value':
      return 'a rule with an Exact header match → the canary';
    case 'canary-by-header-pattern':
      return 'a rule with a RegularExpression header match → the canary (unanchored, as Portico matches both)';
    default:
      return 'rules with a RegularExpression match on the Cookie header ("always" → the canary, "never" → the main Service), after the header rules';
  }
}

/** The Gateway for a set of listener needs (HTTPS listeners without a certificate are left out: one must be chosen). */
export function gatewayObject(g: GatewayNeed, className: string): KubeObject {
  const listeners = g.listeners
    .filter((l) => l.protocol === 'HTTP' || l.certificate)
    .map((l) => {
      const allowed = l.routeNamespaces.length
        ? { allowedRoutes: { namespaces: { from: 'Selector', selector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [g.namespace, ...l.routeNamespaces].sort() }] } } } }
        : {};
      if (l.protocol === 'HTTP') return { name: l.name, port: l.port, protocol: 'HTTP', ...allowed };
      const [sns, sname] = (l.certificate as string).split('/') as [string, string];
      return { name: l.name, port: l.port, protocol: 'HTTPS', ...(l.hostname ? { hostname: l.hostname } : {}), tls: { mode: 'Terminate', certificateRefs: [{ kind: 'Secret', name: sname, ...(sns !== g.namespace ? { namespace: sns } : {}) }] }, ...allowed };
    });
  return { apiVersion: `${GW}/v1`, kind: 'Gateway', metadata: { name: g.name, namespace: g.namespace }, spec: { gatewayClassName: className, listeners } } as KubeObject;
}

/** The filters of one rule: the Ingress's, with the path's rewrite and without authentication on no-auth-locations. */
function ruleFilters(f: IngressFilters, pc: PathClaim, rw: { path: string } | { plugin: string } | undefined): Json[] {
  const out: Json[] = [];
  if (hasMods(f.request)) out.push({ type: 'RequestHeaderModifier', requestHeaderModifier: compact(f.request) });
  if (hasMods(f.response)) out.push({ type: 'ResponseHeaderModifier', responseHeaderModifier: compact(f.response) });
  const rewritePath = rw && 'path' in rw ? rw.path : undefined;
  if (rewritePath !== undefined || f.rewriteHost) {
    out.push({ type: 'URLRewrite', urlRewrite: { ...(f.rewriteHost ? { hostname: f.rewriteHost } : {}), ...(rewritePath !== undefined ? { path: { type: 'ReplaceFullPath', replaceFullPath: rewritePath } } : {}) } });
  }
  if (f.cors) out.push({ type: 'CORS', cors: f.cors });
  if (f.mirror) out.push({ type: 'RequestMirror', requestMirror: { backendRef: { name: f.mirror.name, ...(f.mirror.namespace ? { namespace: f.mirror.namespace } : {}), port: f.mirror.port } } });
  const noAuth = f.noAuth(pc.path);
  const plugins = [...(f.closed ? [f.closed] : []), ...f.plugins.filter((p) => !noAuth || !f.auth.includes(p)), ...(rw && 'plugin' in rw ? [rw.plugin] : [])];
  for (const p of [...new Set(plugins)]) out.push(extensionRef(p));
  return out;
}

const compact = (m: HeaderMods): Json => ({ ...(m.set.length ? { set: m.set } : {}), ...(m.add.length ? { add: m.add } : {}), ...(m.remove.length ? { remove: m.remove } : {}) });

// ---- the annotations of one Ingress -------------------------------------------------------------------------------

type Emit = (j: Job, o: KubeObject) => void;
type Grant = (namespace: string, from: { kind: string; namespace: string }, toKind: string, toName: string) => void;

/** The filters, Plugins and their outcomes for an Ingress's annotations. */
function ingressFilters(job: Job & { ing: NormalizedIngress }, ctx: Ctx): IngressFilters {
  const { cfg, emit, grant } = ctx;
  const ing = job.ing;
  const a = ing.annotations;
  const ns = job.namespace;
  const out = job.outcomes;
  const set = (names: string[], outcome: Outcome, detail: string, difference?: string) => {
    for (const n of names) if ((a as Record<string, unknown>)[n] !== undefined && !out.has(n)) out.set(n, { outcome, detail, ...(difference ? { difference } : {}) });
  };
  const noAuthList = cfg.noAuthLocations ?? [];
  const f: IngressFilters = { request: mods(), response: mods(), plugins: [], auth: [], rewrites: new Map(), noAuth: (p) => noAuthLocation(p, noAuthList) };
  const pluginName = (suffix: string) => objectName(job.name, suffix);
  const addPlugin = (suffix: string, config: PluginConfig, auth = false): string => {
    const name = pluginName(suffix);
    emit(job, plugin(ns, name, config));
    f.plugins.push(name);
    if (auth) f.auth.push(name);
    return name;
  };
  const closed = (why: string) => {
    f.closed ??= pluginName('not-converted');
    const p = `${why}: every rule refers to Plugin ${f.closed}, which is not written, so Portico answers 503 until one doing the same exists (never served with less access control)`;
    if (!job.report.problems.includes(p)) job.report.problems.push(p);
  };
  const configOf = (suffix: string): PluginConfig | undefined => {
    for (const p of ing.annotationPlugins) if ('config' in p && p.suffix === suffix) return p.config;
    return undefined;
  };

  // The Ingress fails closed on Portico (access control it cannot apply): the routes do too.
  const failsClosed = [...new Set([...job.issues.filter((i) => i.code === 'fails-closed').map((i) => i.message), ...ing.accessControl.map((c) => `${c.annotation}: ${c.kind}`)])];
  if (failsClosed.length) closed(`Portico serves this Ingress 503 (${failsClosed.join('; ')})`);

  // ---- paths ----
  set(['use-regex'], a['use-regex'] === true ? 'standard' : 'unneeded', a['use-regex'] === true ? 'its paths (and, as in ingress-nginx, every path of its hosts in its namespace) are RegularExpression matches "^<path>" (Portico matches them case-insensitively, anchored at the start, as the Ingress)' : '"false" is the default');
  rewriteTarget(job, f, a['rewrite-target'], emit, pluginName);
  if (a['app-root'] !== undefined) set(['app-root'], 'standard', 'a rule with an Exact "/" match and a RequestRedirect (ReplaceFullPath, 302) ahead of the others', 'the client\'s query is kept in the Location (ingress-nginx drops it), and the port is the listener\'s (left out for 80 and 443)');
  set(['use-port-in-redirects'], 'standard', 'the redirect of "/foo" to "/foo/" is a RequestRedirect, whose Location carries the listener\'s port unless it is the scheme\'s default');

  // ---- redirects (ssl-redirect and the others: with the routes, which know the hosts' TLS) ----
  const redirect = configOf('redirect');
  if (redirect) {
    const name = addPlugin('redirect', redirect);
    const which = a['permanent-redirect'] !== undefined ? ['permanent-redirect', 'permanent-redirect-code'] : ['temporal-redirect', 'temporal-redirect-code'];
    set(which, 'plugin', `Plugin ${name} (redirect): every request answered ${(redirect as { statusCode?: number }).statusCode} to the URL, without the request's path or query (RequestRedirect would keep the query)`);
  }
  set(['from-to-www-redirect'], 'standard', 'an HTTPRoute for the other name with a RequestRedirect (hostname, 308) to the host', 'a final "/" of the path is kept (ingress-nginx drops it)');

  // ---- hosts ----
  set(['server-alias'], 'standard', 'the names are more hostnames of the host\'s HTTPRoutes', 'HTTPS for an alias needs a listener whose certificate covers it');
  if (a['ssl-passthrough'] !== undefined) set(['ssl-passthrough'], a['ssl-passthrough'] ? 'not-convertible' : 'unneeded', a['ssl-passthrough'] ? 'a TLSRoute needs a TLS listener in Passthrough mode, which Portico\'s Gateways cannot have on the port of their HTTPS listeners (ProtocolConflict): write it for a Gateway (or port) of its own' : '"false" is the default');

  // ---- request and response headers ----
  const fwd = a['x-forwarded-prefix'];
  if (fwd !== undefined) {
    setHeader(f.request, 'X-Forwarded-Prefix', fwd);
    set(['x-forwarded-prefix'], 'standard', 'RequestHeaderModifier sets X-Forwarded-Prefix');
  }
  upstreamVhost(job, f, set, addPlugin, configOf('vhost'));
  customHeaders(job, f, cfg, set, addPlugin, closed);
  snippets(job, f, set);

  // ---- CORS ----
  const cors = configOf('cors');
  if (cors && cors.type === 'cors') {
    const names = ['enable-cors', 'cors-allow-origin', 'cors-allow-methods', 'cors-allow-headers', 'cors-expose-headers', 'cors-allow-credentials', 'cors-max-age'];
    // The standard filter, unless it cannot say it (a max age of 0, more than 9 methods, "*" exposed headers).
    if (cors.maxAge >= 1 && cors.allowMethods.length <= 9 && !(cors.exposeHeaders ?? []).includes('*')) {
      f.cors = { allowOrigins: cors.allowOrigins, allowMethods: cors.allowMethods, ...(cors.allowHeaders?.length ? { allowHeaders: cors.allowHeaders } : {}), ...(cors.exposeHeaders?.length ? { exposeHeaders: cors.exposeHeaders } : {}), allowCredentials: cors.allowCredentials, maxAge: cors.maxAge };
      set(names, 'standard', 'the CORS filter, with ingress-nginx\'s defaults for what is not set', 'a preflight from an origin not allowed is answered (without CORS headers) instead of being proxied');
    } else {
      const name = addPlugin('cors', cors);
      set(names, 'plugin', `Plugin ${name} (cors): the CORS filter cannot say a max age of 0 or expose "*"`);
    }
  } else if (a['enable-cors'] === false) set(['enable-cors'], 'unneeded', '"false" is the default');

  if (a['proxy-body-size'] !== undefined && a['proxy-body-size'] === cfg.proxyBodySize) set(['proxy-body-size'], 'unneeded', `the ConfigMap's proxy-body-size (${cfg.proxyBodySize}), which HTTPRoutes get`);

  // ---- the backend ----
  const proto = a['backend-protocol'];
  if (proto === 'HTTP' || proto === 'AUTO_HTTP') set(['backend-protocol'], 'unneeded', 'HTTPRoute backends speak HTTP');
  else if (proto === 'GRPC') set(['backend-protocol'], 'not-convertible', 'gRPC backends are GRPCRoute\'s (grpc_pass), not HTTPRoute\'s: write a GRPCRoute (Portico serves it on HTTPS listeners)');
  else if (proto === 'HTTPS' || proto === 'GRPCS') set(['backend-protocol'], 'not-convertible', 'TLS to the backend: BackendTLSPolicy is not served by Portico yet; an Upstream object\'s protocol applies to every route of the Service');
  else if (proto === 'FCGI') set(['backend-protocol'], 'not-convertible', 'FastCGI backends: HTTPRoute backends speak HTTP');

  // ---- timeouts ----
  timeouts(job, f, cfg, set);

  // ---- mirror ----
  mirror(job, f, cfg, set, grant);

  // ---- access: IP lists, rate limits, basic auth, external auth ----
  const ip = configOf('ip');
  if (ip) {
    const name = addPlugin('ip', ip);
    const own = ['whitelist-source-range', 'allowlist-source-range', 'denylist-source-range'];
    const global = (cfg.whitelistSourceRange.items?.length ?? 0) + (cfg.denylistSourceRange.items?.length ?? 0) > 0;
    set(own, 'plugin', `Plugin ${name} (ip-restriction, 403)`, global ? 'Portico adds the ConfigMap\'s whitelist-/denylist-source-range to every HTTPRoute too; the Ingress\'s own list replaced them' : undefined);
  }
  for (const [suffix, names] of [['rps', ['limit-rps']], ['rpm', ['limit-rpm']], ['grl', ['global-rate-limit', 'global-rate-limit-window', 'global-rate-limit-key', 'global-rate-limit-ignored-cidrs']]] as const) {
    const c = configOf(suffix);
    if (!c) continue;
    const name = addPlugin(suffix === 'grl' ? 'global-rate-limit' : suffix, rateLimitConfig(c, cfg.limitReqStatusCode, cfg.globalRateLimitStatusCode));
    set([...names], 'plugin', `Plugin ${name} (rate-limit${suffix === 'grl' ? ', counted in the ConfigMap\'s Redis' : ', per client address'}), answering ${suffix === 'grl' ? cfg.globalRateLimitStatusCode : cfg.limitReqStatusCode} as the ConfigMap says`);
    if (suffix !== 'grl') set(['limit-burst-multiplier', 'limit-whitelist', 'limit-allowlist'], 'plugin', `in Plugin ${name} (its burst and exempt clients)`);
  }
  basicAuth(job, f, ctx, set, closed);
  externalAuth(job, f, cfg, set, addPlugin, closed);
  if (a.satisfy !== undefined) set(['satisfy'], a.satisfy === 'all' ? 'unneeded' : 'not-convertible', a.satisfy === 'all' ? '"all" is the default: every Plugin of a rule must let the request through' : 'Plugin objects cannot be alternatives of each other: each access check must pass (stricter than "any")');

  // ---- Portico's own Plugins ----
  const named = a.plugins ?? [];
  if (named.length) {
    for (const n of named) f.plugins.push(n);
    set(['plugins'], 'plugin', `ExtensionRef filters to the Plugin objects ${named.join(', ')} of namespace ${ns} (not written: they exist already)`);
  }
  if (a.canary === false) set(['canary'], 'unneeded', '"false" is the default');
  // Access control no converter above carried (client certificates...): the rules fail closed.
  const open = Object.keys(a).filter((n) => CATALOGUE[n]?.access && !['standard', 'plugin', 'unneeded'].includes(out.get(n)?.outcome ?? ''));
  if (open.length && !f.closed) closed(`access control is not converted (${open.map((n) => `${NGINX_PREFIX}${n}`).join(', ')})`);
  return f;
}

/** rewrite-target: per path, URLRewrite (a target without captures) or a rewrite Plugin (captures), or why not. */
function rewriteTarget(job: Job & { ing: NormalizedIngress }, f: IngressFilters, target: string | undefined, emit: Emit, pluginName: (s: string) => string): void {
  if (target === undefined || job.outcomes.has('rewrite-target')) return;
  const ing = job.ing;
  const paths = claimsOfIngress(ing).paths.filter((pc) => needsRewrite(ing.annotations, pc.written));
  if (!paths.length) {
    job.outcomes.set('rewrite-target', { outcome: 'unneeded', detail: 'it is the path as written: nothing is rewritten (as in ingress-nginx), but the host\'s paths are regular expressions' });
    return;
  }
  const captures = /\$(\d|\{\d\})/.test(target);
  let plugins = 0;
  let failed = 0;
  let n = 0;
  for (const pc of paths) {
    if (target.includes('?')) {
      f.rewrites.set(pc, { error: 'rewrite-target has a query ("?"): neither URLRewrite nor the rewrite Plugin sets the query' });
      failed++;
    } else if (!captures && gwPath(target)) f.rewrites.set(pc, { path: target });
    else {
      const pattern = wholePathPattern(regexSourceOf(pc));
      const problem = pattern === null ? 'the path\'s regular expression has a "|" outside any group' : regexPathProblem(pattern);
      const config = pattern !== null && !problem ? parsePluginConfig('rewrite', { regex: { pattern, replacement: target } }) : null;
      if (!config?.ok) {
        f.rewrites.set(pc, { error: `rewrite-target on this path cannot be a rewrite Plugin (${problem ?? (config && !config.ok ? config.error : '')})` });
        failed++;
      } else {
        const name = pluginName(`rewrite${paths.length > 1 ? `-${++n}` : ''}`);
        emit(job, plugin(job.namespace, name, config.config));
        f.rewrites.set(pc, { plugin: name });
        plugins++;
      }
    }
  }
  if (failed) job.outcomes.set('rewrite-target', { outcome: 'not-convertible', detail: [...new Set([...f.rewrites.values()].flatMap((r) => ('error' in r ? [r.error] : [])))].join('; ') });
  else if (plugins) job.outcomes.set('rewrite-target', { outcome: 'plugin', detail: 'a rewrite Plugin per path (regex mode: the path\'s regular expression, case-insensitive, replaced by the target with its captures): URLRewrite has no captures' });
  else job.outcomes.set('rewrite-target', { outcome: 'standard', detail: `URLRewrite ReplaceFullPath "${target}" (ingress-nginx replaces the whole path)` });
}

function upstreamVhost(job: Job & { ing: NormalizedIngress }, f: IngressFilters, set: SetFn, addPlugin: AddPlugin, vhost: PluginConfig | undefined): void {
  const v = job.ing.annotations['upstream-vhost'];
  if (v === undefined) return;
  if (v === '$host') return set(['upstream-vhost'], 'unneeded', '$host is the Host Portico sends anyway');
  if (vhost?.type === 'rewrite' && vhost.host && gwHostnameSchema.safeParse(vhost.host).success) {
    f.rewriteHost = vhost.host;
    return set(['upstream-vhost'], 'standard', `URLRewrite hostname "${vhost.host}"`);
  }
  if (vhost) {
    const name = addPlugin('vhost', vhost);
    return set(['upstream-vhost'], 'plugin', `Plugin ${name} (rewrite${vhost.type === 'rewrite' && vhost.hostHeader ? ', hostHeader: the client\'s Host header as sent' : ''}): URLRewrite takes a host name only`);
  }
}

type SetFn = (names: string[], outcome: Outcome, detail: string, difference?: string) => void;
type AddPlugin = (suffix: string, config: PluginConfig, auth?: boolean) => string;

function customHeaders(job: Job & { ing: NormalizedIngress }, f: IngressFilters, cfg: GlobalConfigValues, set: SetFn, addPlugin: AddPlugin, closed: (why: string) => void): void {
  if (job.ing.annotations['custom-headers'] === undefined || job.outcomes.has('custom-headers')) return;
  const ap = job.ing.annotationPlugins.find((p) => 'customHeaders' in p);
  const ch = ap && 'customHeaders' in ap ? ap.customHeaders : undefined;
  if (!ch) {
    job.outcomes.set('custom-headers', { outcome: 'not-convertible', detail: `ConfigMap ${job.ing.customHeadersConfigMap ?? job.ing.annotations['custom-headers']} is not in the input: its headers are not known` });
    return;
  }
  const c = customHeadersConfig(ch, cfg.globalAllowedResponseHeaders);
  if ('closed' in c) {
    job.outcomes.set('custom-headers', { outcome: 'not-convertible', detail: `Portico answers this Ingress's paths 503: ${c.closed}` });
    closed(`custom-headers cannot be applied (${c.closed})`);
    return;
  }
  const headers = c.config.type === 'response-headers' ? (c.config.set ?? []) : [];
  if (headers.length <= 16) {
    for (const h of headers) setHeader(f.response, h.name, h.value);
    set(['custom-headers'], 'standard', `ResponseHeaderModifier sets ${headers.map((h) => h.name).join(', ')} (from ConfigMap ${ch.configMap}, as it is now: a later change of the ConfigMap is not followed)`);
  } else {
    const name = addPlugin('custom-headers', c.config);
    set(['custom-headers'], 'plugin', `Plugin ${name} (response-headers): more than the 16 headers a ResponseHeaderModifier takes`);
  }
}

/**
 * configuration-snippet / server-snippet (as compiled by Portico and allowed by the ConfigMap): header changes only,
 * with literal values, become header modifiers; anything else (return, rewrite, if, variables...) is not converted.
 */
function snippets(job: Job & { ing: NormalizedIngress }, f: IngressFilters, set: SetFn): void {
  const sp = job.ing.annotationPlugins.find((p) => 'snippets' in p);
  if (!sp || !('snippets' in sp)) return;
  for (const [name, list] of [['server-snippet', sp.snippets.server], ['configuration-snippet', sp.snippets.location]] as const) {
    if (job.ing.annotations[name] === undefined || job.outcomes.has(name)) continue;
    if (!sp.allowed) {
      job.outcomes.set(name, { outcome: 'not-convertible', detail: 'refused by the ConfigMap (allow-snippet-annotations / annotations-risk-level): Portico does not apply it' });
      continue;
    }
    const stmts = list ?? [];
    const why = snippetProblem(stmts);
    if (why) {
      job.outcomes.set(name, { outcome: 'not-convertible', detail: `only header changes with literal values become header modifiers; this snippet has ${why}` });
      continue;
    }
    for (const s of stmts) {
      if (s.op === 'response') {
        if (s.action === 'clear') f.response.remove = [...new Set([...f.response.remove, s.name])];
        else if (s.action === 'set') setHeader(f.response, s.name, literal(s.value) as string);
        else f.response.add.push({ name: s.name, value: literal(s.value) as string });
      } else if (s.op === 'request') {
        if (s.action === 'clear') f.request.remove = [...new Set([...f.request.remove, s.name])];
        else setHeader(f.request, s.name, literal(s.value) as string);
      }
    }
    set([name], 'standard', `its header changes as RequestHeaderModifier / ResponseHeaderModifier (${stmts.length} statement${stmts.length === 1 ? '' : 's'})`);
  }
}

/** A snippet value made of literal text only, else null (variables, captures). */
const literal = (v: unknown): string | null => (Array.isArray(v) && v.every((x) => typeof x === 'string') ? v.join('') : null);

/** Why a compiled snippet cannot be header modifiers, or null. */
function snippetProblem(stmts: SnippetStatement[]): string | null {
  for (const s of stmts) {
    if (s.op !== 'response' && s.op !== 'request') return `"${s.op}"`;
    if (s.name.endsWith('*')) return `a header prefix (${s.name})`;
    if (s.name.toLowerCase() === 'host') return 'the Host header';
    if (s.action !== 'clear') {
      const v = literal(s.value);
      if (v === null) return 'a value with variables';
      if (v === '') return 'an empty value';
    }
    if (s.op === 'response' && (s.statuses?.length || s.types?.length)) return 'more_set_headers -s / -t';
    if (s.op === 'response' && s.action === 'add' && !s.always) return 'add_header without "always" (only on some statuses)';
    if (s.op === 'request' && (s.replaceOnly || s.types?.length)) return 'more_set_input_headers -r / -t';
  }
  return null;
}

/**
 * proxy-read/send/connect-timeout → the rules' timeouts.backendRequest, which Portico applies to each read and send
 * of the proxied request (connect: the ConfigMap's, at most that). HTTPRoute has one timeout where the annotations
 * have two: proxy-read-timeout (waiting for the answer) decides it; a different proxy-send-timeout is not converted.
 */
function timeouts(job: Job & { ing: NormalizedIngress }, f: IngressFilters, cfg: GlobalConfigValues, set: SetFn): void {
  const a = job.ing.annotations;
  const readSet = a['proxy-read-timeout'];
  const sendSet = a['proxy-send-timeout'];
  const send = sendSet ?? cfg.proxySendTimeoutSeconds;
  const difference = 'other implementations read backendRequest as a deadline for the whole answer; Portico bounds each read and send with it, as nginx\'s proxy_read_timeout';
  // The rule's timeout: proxy-read-timeout's, or proxy-send-timeout's alone when it is the read timeout anyway.
  let x: number | undefined;
  if (readSet !== undefined) {
    if (readSet === 0) set(['proxy-read-timeout'], 'not-convertible', 'a timeout of 0 means none in Gateway API');
    else if (readSet === cfg.proxyReadTimeoutSeconds && send === cfg.proxySendTimeoutSeconds) set(['proxy-read-timeout'], 'unneeded', `the ConfigMap's proxy-read-timeout (${readSet}s), which HTTPRoutes get`);
    else {
      x = readSet;
      set(['proxy-read-timeout'], 'standard', `timeouts.backendRequest "${duration(x)}"`, send === x ? difference : `${difference}; the send timeout becomes ${x}s too (it is ${send}s on the Ingress)`);
    }
  }
  if (sendSet !== undefined) {
    const read = x ?? readSet ?? cfg.proxyReadTimeoutSeconds;
    if (sendSet === read) set(['proxy-send-timeout'], x === undefined ? 'unneeded' : 'standard', x === undefined ? `the ConfigMap's timeouts (${read}s), which HTTPRoutes get` : 'with proxy-read-timeout: timeouts.backendRequest');
    else set(['proxy-send-timeout'], 'not-convertible', `an HTTPRoute rule has one timeout for reading and sending, here proxy-read-timeout's (${read}s); the send timeout cannot be ${sendSet}s`);
  }
  if (x !== undefined) f.timeout = duration(x);
  const connect = a['proxy-connect-timeout'];
  if (connect !== undefined) {
    const effective = x === undefined ? cfg.proxyConnectTimeoutSeconds : Math.min(cfg.proxyConnectTimeoutSeconds, x);
    if (connect === effective) set(['proxy-connect-timeout'], 'unneeded', `HTTPRoutes get ${effective}s (the ConfigMap's proxy-connect-timeout${x !== undefined ? ', at most the rule\'s timeout' : ''})`);
    else set(['proxy-connect-timeout'], 'not-convertible', `an HTTPRoute sets no connect timeout of its own: Portico uses the ConfigMap's (${cfg.proxyConnectTimeoutSeconds}s), at most the rule's timeout`);
  }
}

/** mirror-target → RequestMirror: a Service of the cluster with the client's URI ($request_uri), body included. */
function mirror(job: Job & { ing: NormalizedIngress }, f: IngressFilters, cfg: GlobalConfigValues, set: SetFn, grant: Grant): void {
  const a = job.ing.annotations;
  const m = a['mirror-target'];
  if (m === undefined || job.outcomes.has('mirror-target')) return;
  const names = ['mirror-target', 'mirror-host', 'mirror-request-body'];
  const no = (why: string) => set(names, 'not-convertible', why);
  if (m.target.kind !== 'service') return no('RequestMirror copies to a Service (backendRef); this target is a host outside the cluster');
  if (m.scheme !== 'http') return no('RequestMirror copies over plain HTTP; mirror-target is https');
  if (!('requestUri' in m.uri)) return no('RequestMirror copies with the client\'s path; mirror-target names a path of its own');
  if (a['mirror-request-body'] === false) return no('RequestMirror always copies the body (mirror-request-body "off")');
  if (a['mirror-host'] !== undefined && a['mirror-host'] !== m.host) return no('RequestMirror sets no Host of its own (mirror-host)');
  const other = m.target.namespace !== job.namespace;
  if (other && !cfg.allowCrossNamespaceAuth) return no(`the Service is in namespace ${m.target.namespace}: Portico mirrors nothing for it (the ConfigMap does not set allow-cross-namespace-auth)`);
  f.mirror = { name: m.target.service, ...(other ? { namespace: m.target.namespace } : {}), port: m.target.port };
  if (other) grant(m.target.namespace, { kind: 'HTTPRoute', namespace: job.namespace }, 'Service', m.target.service);
  set(names.filter((n) => n !== 'mirror-target'), 'unneeded', 'what RequestMirror does anyway');
  set(['mirror-target'], 'standard', `RequestMirror to Service ${m.target.namespace}/${m.target.service} port ${m.target.port}${other ? ' (with a ReferenceGrant in its namespace)' : ''}`, 'the copy carries the client\'s Host header, not the mirror\'s host');
}

/**
 * Basic auth: a basic-auth Plugin checks the Consumers of its namespace, so each user of auth-secret becomes a
 * Consumer with a Secret holding its name and password hash — the hashes a Consumer keeps as they are (bcrypt,
 * {SHA}); other users are reported. Two Ingresses of one namespace with different user lists cannot both be
 * converted (the Plugin would let either list in). Digest auth is not convertible: the rules fail closed.
 */
function basicAuth(job: Job & { ing: NormalizedIngress }, f: IngressFilters, ctx: Ctx, set: SetFn, closed: (why: string) => void): void {
  const { emit, basicAuthSecrets } = ctx;
  const a = job.ing.annotations;
  const names = ['auth-type', 'auth-secret', 'auth-secret-type', 'auth-realm'];
  if (a['auth-type'] === 'digest' && !job.outcomes.has('auth-type')) {
    // Digest: the digest-auth plugin's users are an Ingress's auth-secret only (its instance data); no Plugin object
    // configures it and a Consumer holds no digest credential (HA1), so nothing can carry it on an HTTPRoute.
    const why = 'digest authentication has no Plugin object: Portico\'s digest-auth plugin takes its users (HA1) from an Ingress\'s auth-secret only, and Consumers hold no digest credentials; keep the Ingress, or move its users to basic auth (htpasswd -B)';
    set(names, 'not-convertible', why);
    closed(`digest authentication is not converted (${why})`);
    return;
  }
  if (a['auth-type'] !== 'basic' || job.outcomes.has('auth-type')) return;
  const ba = basicAuthPlugin(a, job.namespace, (k) => ctx.secrets.get(k));
  const no = (why: string) => {
    set(names, 'not-convertible', why);
    closed(`basic authentication is not converted (${why})`);
  };
  if (!ba.plugin || !('basicAuth' in ba.plugin)) return no(ba.closed.map((c) => c.kind).join('; ') || `Secret ${ba.secretKey} is not in the input: its users are not known`);
  const others = basicAuthSecrets.get(job.namespace) ?? new Set();
  if (others.size > 1) return no(`Ingresses of namespace ${job.namespace} use different auth-secrets (${[...others].sort().join(', ')}): a basic-auth Plugin accepts every Consumer of its namespace, so each would let the other's users in`);
  const secretName = (ba.secretKey ?? '').split('/')[1] as string;
  const kept: string[] = [];
  const dropped: string[] = [];
  for (const u of ba.plugin.basicAuth.users) {
    if (!BCRYPT_SHAPE.test(u.hash) && !/^\{SHA\}[A-Za-z0-9+/]{27}=$/.test(u.hash)) {
      dropped.push(u.username);
      continue;
    }
    const cname = objectName(secretName, u.username);
    emit(job, { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name: cname, namespace: job.namespace }, data: { username: b64(u.username), password: b64(u.hash) } } as KubeObject);
    emit(job, { apiVersion: PLUGIN_API, kind: 'Consumer', metadata: { name: cname, namespace: job.namespace }, spec: { username: u.username.replace(/[^A-Za-z0-9._@-]/g, '_'), credentials: [{ type: 'basic-auth', secretRef: { name: cname } }] } } as KubeObject);
    kept.push(u.username);
  }
  if (!kept.length) return no(`none of the users of Secret ${ba.secretKey} has a hash a Consumer keeps (bcrypt or {SHA}); re-hash them (htpasswd -B)`);
  const config = parsePluginConfig('basic-auth', { realm: ba.plugin.basicAuth.realm, hideCredentials: false });
  if (!config.ok) return no(`the realm cannot be a basic-auth Plugin's (${config.error})`);
  const name = objectName(job.name, 'basic-auth');
  emit(job, plugin(job.namespace, name, config.config));
  f.plugins.push(name);
  f.auth.push(name);
  const diff = `the Plugin accepts every Consumer of namespace ${job.namespace} with a basic-auth credential (here the ${kept.length} written from Secret ${ba.secretKey}); the backend also receives X-Consumer-Username`;
  set(names, 'plugin', `Plugin ${name} (basic-auth) with ${kept.length} Consumer(s) and their Secrets (user name and password hash)${dropped.length ? `; not users ${dropped.join(', ')}` : ''}`, diff);
  // Fewer users than the Ingress lets in: never more access, but not everything converted.
  if (dropped.length) job.report.problems.push(`basic auth: users ${dropped.join(', ')} of Secret ${ba.secretKey} have a hash a Consumer does not keep (only bcrypt and {SHA}): re-hash them (htpasswd -B) to let them in`);
}

/**
 * auth-url (and the ConfigMap's global-auth-url, which HTTPRoutes never get) → an external-auth Plugin, when the
 * auth service is a Service of the Ingress's namespace over HTTP and nothing asks for what only ingress-nginx's
 * auth_request does (sign-in redirect, cache, headers or a snippet for the subrequest).
 */
function externalAuth(job: Job & { ing: NormalizedIngress }, f: IngressFilters, cfg: GlobalConfigValues, set: SetFn, addPlugin: AddPlugin, closed: (why: string) => void): void {
  const a = job.ing.annotations;
  const names = ['auth-url', 'auth-method', 'auth-response-headers', 'auth-signin', 'auth-signin-redirect-param', 'auth-request-redirect', 'auth-cache-key', 'auth-cache-duration', 'auth-always-set-cookie', 'auth-proxy-set-headers', 'auth-snippet', 'auth-keepalive', 'auth-keepalive-requests', 'auth-keepalive-share-vars', 'auth-keepalive-timeout'];
  const ea = job.ing.annotationPlugins.find((p) => 'externalAuth' in p);
  let spec: ExternalAuthSpec | undefined = ea && 'externalAuth' in ea ? ea.externalAuth : undefined;
  let what = 'auth-url';
  if (!spec && a['auth-url'] === undefined && a['enable-global-auth'] !== false && cfg.globalAuthUrl.trim()) {
    const g = globalAuthSpec({ url: cfg.globalAuthUrl, method: cfg.globalAuthMethod, signin: cfg.globalAuthSignin, signinRedirectParam: cfg.globalAuthSigninRedirectParam, responseHeaders: cfg.globalAuthResponseHeaders, requestRedirect: cfg.globalAuthRequestRedirect, cacheKey: cfg.globalAuthCacheKey, cacheDuration: cfg.globalAuthCacheDuration, alwaysSetCookie: cfg.globalAuthAlwaysSetCookie, snippet: cfg.globalAuthSnippet });
    what = 'the ConfigMap\'s global-auth-url';
    if (!g || 'error' in g) {
      closed(`${what} protects this Ingress on Portico and cannot be converted (${g && 'error' in g ? g.error : 'invalid'})`);
      return;
    }
    spec = g.spec;
  }
  if (a['enable-global-auth'] !== undefined) set(['enable-global-auth'], 'unneeded', 'HTTPRoutes never get the ConfigMap\'s global-auth-url (an Ingress under it gets an external-auth Plugin of its own)');
  if (!spec || job.outcomes.has('auth-url')) return;
  const u = spec.url;
  const why: string[] = [];
  if (u.target.kind === 'own-host') why.push('the auth URL is the request\'s own host ($host): an external-auth Plugin names a Service');
  else if (u.target.kind !== 'service') why.push('the auth service is outside the cluster: an external-auth Plugin names a Service');
  else if (u.target.namespace !== job.namespace) why.push(`the auth Service is in namespace ${u.target.namespace}: an external-auth Plugin names one of its own namespace`);
  if (u.scheme !== 'http') why.push('the auth URL is https (the Plugin speaks plain HTTP to its Service)');
  if (u.uriParts) why.push('the auth URL has variables');
  if (spec.signin) why.push('auth-signin: the Plugin answers 401 with the auth service\'s headers, it redirects to no sign-in page');
  if (spec.requestRedirect) why.push('auth-request-redirect');
  if (spec.cache) why.push('auth-cache-key: the Plugin caches nothing');
  if (spec.alwaysSetCookie) why.push('auth-always-set-cookie');
  if (spec.proxySetHeaders?.length || a['auth-proxy-set-headers'] !== undefined) why.push('auth-proxy-set-headers: the Plugin sets no headers on the auth request');
  if (spec.snippet?.length || a['auth-snippet'] !== undefined) why.push('auth-snippet');
  const method = spec.method ?? 'GET';
  if (!['GET', 'POST', 'HEAD'].includes(method)) why.push(`auth-method ${method} (the Plugin sends GET, POST or HEAD)`);
  const path = u.uri || '/';
  const config = why.length || u.target.kind !== 'service'
    ? null
    : parsePluginConfig('external-auth', {
        service: { name: u.target.service, port: u.target.port },
        path,
        method,
        ...(spec.responseHeaders.length ? { upstreamHeaders: spec.responseHeaders } : {}),
        clientHeaders: ['WWW-Authenticate'],
        timeout: duration(Math.min(cfg.proxyReadTimeoutSeconds, 600)),
      });
  if (config && !config.ok) why.push(config.error);
  if (!config?.ok) {
    const detail = `${what} is not converted: ${why.join('; ')}`;
    set(['auth-url'], 'not-convertible', detail);
    set(names, 'not-convertible', `not converted with ${what} (see it)`);
    closed(detail);
    return;
  }
  const name = addPlugin(what === 'auth-url' ? 'external-auth' : 'global-auth', config.config, true);
  const difference = 'the auth service receives X-Forwarded-Method/-Uri/-Host/-Proto (not X-Original-URL, X-Original-Method, X-Auth-Request-Redirect, X-Sent-From); an answer other than 2xx, 401 or 403 is 503 (ingress-nginx: 500); the auth answer\'s Set-Cookie is not passed on';
  if (what !== 'auth-url') job.report.notes.push(`${what} protects this Ingress on Portico: Plugin ${name} (external-auth) does the same for its routes (${difference})`);
  set(['auth-url', 'auth-method', 'auth-response-headers'], 'plugin', `Plugin ${name} (external-auth) to Service ${u.target.kind === 'service' ? `${u.target.service}:${u.target.port}` : ''} path ${path}${spec.responseHeaders.length ? `, copying ${spec.responseHeaders.join(', ')} onto the request` : ''}`, difference);
  set(['auth-keepalive', 'auth-keepalive-requests', 'auth-keepalive-share-vars', 'auth-keepalive-timeout'], 'unneeded', 'the Plugin\'s auth requests reuse connections as Portico\'s do for auth-url');
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

// ---- output -------------------------------------------------------------------------------------------------------

const TAG: Record<Outcome, string> = { standard: 'standard', plugin: 'Plugin', unneeded: 'unneeded', 'not-convertible': 'NOT' };

/** The report as text (stderr with -o yaml). */
export function renderConversionText(r: ConversionReport): string {
  const out: string[] = [];
  const src = r.source.kind === 'cluster' ? `the cluster at ${r.source.server}` : `${r.source.files.length} manifest file(s)`;
  out.push(`portico migrate --to gateway-api: ${r.ingresses.length} Ingress(es) from ${src}; routes attach to ${r.gateway ? `Gateway ${r.gateway.namespace}/${r.gateway.name}` : 'a Gateway "portico" in each Ingress\'s namespace'}${r.sectionName ? `, listener ${r.sectionName}` : ''}`);
  for (const i of r.ingresses) {
    const verdict = i.verdict === 'converted' ? 'converted' : i.verdict === 'partly-converted' ? 'PARTLY CONVERTED' : 'NOT CONVERTED';
    out.push('', `Ingress ${i.namespace}/${i.name}: ${verdict}${i.objects.length ? ` → ${i.objects.join(', ')}` : ''}`);
    for (const a of i.annotations) {
      const v = a.value.length > 40 ? `${a.value.slice(0, 40)}…` : a.value;
      out.push(`  ${TAG[a.outcome].padEnd(9)} ${a.name} = ${JSON.stringify(v)} — ${a.detail}${a.difference ? ` [difference: ${a.difference}]` : ''}`);
    }
    for (const p of i.problems) out.push(`  ! ${p}`);
    for (const n of i.notes) out.push(`  note: ${n}`);
  }
  for (const g of r.gateways) {
    out.push('', `Gateway ${g.namespace}/${g.name} needs these listeners:`);
    for (const l of g.listeners) {
      const cert = l.protocol === 'HTTPS' ? (l.certificate ? ` certificate Secret ${l.certificate}` : ' a certificate to choose (Portico used its default one)') : '';
      out.push(`  ${l.name}: ${l.protocol} port ${l.port}${l.hostname ? ` hostname ${l.hostname}` : ''}${cert}${l.routeNamespaces.length ? `; routes from namespaces ${l.routeNamespaces.join(', ')}` : ''}`);
    }
  }
  const s = r.summary;
  out.push('', 'Summary');
  out.push(`  ${s.ingresses} Ingress(es): ${s.converted} converted, ${s.partlyConverted} partly converted, ${s.notConverted} not converted`);
  out.push(`  annotations: ${s.annotations.standard} to standard fields or filters, ${s.annotations.plugin} to Portico Plugins, ${s.annotations.unneeded} need nothing, ${s.annotations['not-convertible']} not convertible`);
  out.push(`  objects written: ${Object.entries(s.objects).map(([k, n]) => `${n} ${k}`).join(', ') || 'none'}`);
  out.push(s.exitCode === 0 ? '  everything converted' : '  something is not converted (exit status 1)');
  return `${out.join('\n')}\n`;
}
