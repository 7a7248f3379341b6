// `portico migrate`: what moving from ingress-nginx to Portico means for a cluster's Ingresses and controller
// ConfigMap — read from a cluster (list, never write) or from manifests — judged by the very code Portico serves
// with: the annotation table (reconcilers/annotations/table.ts), the Ingress normalizer, the plugins built from
// annotations, the risk gate with the ConfigMap's allow-snippet-annotations / annotations-risk-level, the snippet
// compiler, and the ConfigMap key table (reconcilers/model/global-config.ts).
//
// Usage: portico migrate [-f FILE|DIR|-]... [--kubeconfig FILE] [--ingress-class NAME] [--configmap NS/NAME] [-o text|json]
// Exit status: 0 everything can move as-is, 1 something needs changes, 2 usage error or unreadable input.
// The JSON output (-o json) is versioned by `schemaVersion`; docs/ingress-nginx.md ("portico migrate") documents it.
// What it reads (the command line, manifests or a cluster) is app/migrate-input.ts's; this file analyzes and reports.
import type { z } from 'zod';
import type { KubeObject } from '../operator/kube/object.ts';
import { annotationRefusals, gateAnnotations, type RiskSettings } from '../reconcilers/translate/risk.ts';
import { basicAuthPlugin, type SecretReader } from '../reconcilers/annotations/plugins.ts';
import { authTlsPlugin } from '../reconcilers/annotations/groups/auth-tls.ts';
import { CATALOGUE, NGINX_PREFIX, PORTICO_PREFIX, riskLabel, type Status } from '../reconcilers/annotations/table.ts';
import { parseAnnotations } from '../reconcilers/annotations/parse.ts';
import { CONFIG_KEYS, defaultGlobalConfig, parseGlobalConfig, refusedConfigWhy } from '../reconcilers/model/global-config.ts';
import { NO_EFFECT_KEYS } from '../reconcilers/model/directive-keys.ts';
import { normalizeIngress } from '../reconcilers/model/normalize.ts';
import { zodMessage } from '../reconcilers/values/safe.ts';
import { modsecurityClosedReason, proxySslClosedReason } from '../reconcilers/translate/translate.ts';
import { classOf, loadCluster, loadManifests, parseMigrateArgs, UsageError, type ConfigMapInput, type Input, type Obj } from './migrate-input.ts';
import { convertToGatewayApi, renderConversionText, type Conversion, type GatewayApiOptions } from './migrate-gateway-api.ts';
import { dumpYaml } from '@kubernetes/client-node';

export { loadCluster, loadManifests, parseMigrateArgs, UsageError, type Input, type MigrateOptions } from './migrate-input.ts';

export const SCHEMA_VERSION = 1;

// ---- analysis -------------------------------------------------------------------------------------------------------

export type AnnotationStatus = Status | 'unknown';

export interface AnnotationReport {
  /** The annotation as written, e.g. nginx.ingress.kubernetes.io/rewrite-target. */
  annotation: string;
  /** Name without the prefix. */
  name: string;
  value: string;
  /** From the table; "unknown" when neither ingress-nginx nor Portico documents the name. */
  status: AnnotationStatus;
  /** The difference (status difference), why it is refused (refused, unknown), else null. */
  note: string | null;
  risk: string | null;
  /** Whether Portico accepts the value: null when the annotation is not parsed at all (refused, unknown). */
  valid: boolean | null;
  /** Why the value is not accepted (valid false). */
  error: string | null;
}

export type IssueCode = 'refused-annotation' | 'fails-closed' | 'invalid-value' | 'annotation-ignored' | 'refused-by-configmap' | 'snippet-refused' | 'ingress-problem' | 'not-served';

export interface Issue {
  code: IssueCode;
  /** The annotation concerned, when there is one. */
  annotation: string | null;
  message: string;
  /** Short, shared by every Ingress with the same cause: what the summary counts. */
  reason: string;
}

export interface IngressReport {
  namespace: string;
  name: string;
  ingressClass: string | null;
  verdict: 'ready' | 'needs-changes';
  annotations: AnnotationReport[];
  issues: Issue[];
  /** Not blocking: differences to know about, things that could not be checked. */
  notes: string[];
}

export interface ConfigKeyReport {
  key: string;
  value: string;
  /** supported = known to Portico with the same meaning; difference; refused = not supported (ignored). */
  status: Status;
  note: string | null;
  valid: boolean | null;
  error: string | null;
}

export interface ConfigMapReport {
  namespace: string;
  name: string;
  verdict: 'ready' | 'needs-changes';
  keys: ConfigKeyReport[];
}

export interface Report {
  schemaVersion: number;
  source: Input['source'];
  settings: { allowSnippetAnnotations: boolean; annotationsRiskLevel: string };
  ingresses: IngressReport[];
  configMap: ConfigMapReport | null;
  /**
   * Hosts named by Ingresses of more than one namespace. Portico serves them shared (as ingress-nginx does), but each
   * namespace's canaries, use-regex / rewrite-target and app-root stay within its own paths; with the ConfigMap's
   * namespace-exclusive-hosts the host would belong to `owner` (the namespace of its oldest Ingress) alone.
   */
  sharedHosts: { host: string; namespaces: string[]; ingresses: string[]; owner: string | null }[];
  summary: {
    ingresses: number;
    ready: number;
    needsChanges: number;
    annotations: Record<AnnotationStatus, number>;
    configMap: { supported: number; difference: number; refused: number; invalid: number } | null;
    topReasons: { reason: string; ingresses: number }[];
    exitCode: 0 | 1;
  };
}

/** ConfigMap keys Portico reads with a meaning that differs from ingress-nginx's (one line each). */
export const CONFIG_DIFFERENCES: Partial<Record<keyof typeof CONFIG_KEYS, string>> = {
  'proxy-real-ip-cidr': 'with use-forwarded-headers, X-Forwarded-Proto/-Host/-Port are taken only from these peers too (ingress-nginx takes them from any peer); an empty value trusts nobody',
  'server-tokens': '"false" (the default) leaves "Server: nginx" without the version; ingress-nginx removes the Server header altogether',
  'limit-req-status-code': 'applies to the limit-rps / limit-rpm annotations only (Plugin objects set their own status)',
  'global-rate-limit-status-code': 'refusals also carry Retry-After; the counters are in Redis (global-rate-limit-redis-*), not memcached',
  'lua-shared-dicts': 'only configuration_data and certificate_data are sized (Portico has no other zones)',
  'allow-snippet-annotations': 'snippets are compiled from an allowlist of directives, never pasted into nginx.conf',
  'log-format-upstream': 'single quotes, ";", backslashes and line breaks are refused (JSON formats work); $the_real_ip does not exist (use $remote_addr)',
  'ssl-protocols': 'SSLv2 and SSLv3 are refused (TLSv1 to TLSv1.3 only)',
  'ssl-session-tickets': 'ticket keys are random per nginx process (ssl-session-ticket-key is not supported)',
  'proxy-next-upstream': 'Routes and Upstreams with their own retry settings keep them',
  'proxy-buffers-number': 'at least 4 (fewer fail nginx\'s busy-buffers check with the default buffer sizes)',
  'max-worker-connections': 'lowered to half the open-files limit when that is smaller; 0 = as many as that limit allows',
  'use-proxy-protocol': 'with an empty proxy-real-ip-cidr every peer is trusted (the listeners accept PROXY connections only); with use-forwarded-headers too, the client is still the PROXY header\'s (ingress-nginx reads forwarded-for-header from a trusted load balancer then)',
};

/** Why a ConfigMap key Portico does not read is refused (reconcilers/model/global-config.ts REFUSED_CONFIG_KEYS). */
const refusedWhy = (key: string) => refusedConfigWhy(key) ?? 'not supported by Portico: the key is ignored';

function analyzeConfigMap(cm: ConfigMapInput): ConfigMapReport {
  const parsed = parseGlobalConfig(cm.data, defaultGlobalConfig());
  const errors = new Map(parsed.errors.map((e) => [e.key, e.message]));
  const keys: ConfigKeyReport[] = Object.keys(cm.data)
    .sort()
    .map((key) => {
      const value = cm.data[key] as string;
      const none = NO_EFFECT_KEYS[key];
      if (none) {
        const err = errors.get(key);
        return { key, value, status: 'difference' as const, note: `accepted without effect: ${none.why}`, valid: !err, error: err ?? null };
      }
      if (!Object.hasOwn(CONFIG_KEYS, key)) return { key, value, status: 'refused' as const, note: refusedWhy(key), valid: null, error: null };
      const diff = CONFIG_DIFFERENCES[key as keyof typeof CONFIG_KEYS];
      const err = errors.get(key);
      return { key, value, status: diff ? ('difference' as const) : ('supported' as const), note: diff ?? null, valid: !err, error: err ? err.replace(/; keeping .*$/, '') : null };
    });
  const verdict = keys.some((k) => k.status === 'refused' || k.valid === false) ? 'needs-changes' : 'ready';
  return { namespace: cm.namespace, name: cm.name, verdict, keys };
}

/** Rows sharing a why (e.g. the external-auth family) count as one reason in the summary. */
let whyCount: Map<string, number> | undefined;
function refusalReason(name: string, why: string): string {
  whyCount ??= Object.values(CATALOGUE).reduce((m, r) => (r.refusedWhy ? m.set(r.refusedWhy, (m.get(r.refusedWhy) ?? 0) + 1) : m), new Map<string, number>());
  if (!Object.hasOwn(CATALOGUE, name)) return 'annotations neither ingress-nginx nor Portico documents';
  return (whyCount.get(why) ?? 0) > 1 || why.startsWith(`${name}:`) ? why : `${name}: ${why}`;
}

const short = (v: string) => (v.length > 200 ? `${v.slice(0, 200)}…` : v);

function analyzeIngress(obj: KubeObject, input: Input, settings: RiskSettings, redisHost = ''): IngressReport {
  const namespace = obj.metadata.namespace ?? 'default';
  const raw = obj.metadata.annotations ?? {};
  const parsed = parseAnnotations(raw);
  const issues: Issue[] = [];
  const notes: string[] = [];
  const add = (code: IssueCode, annotation: string | null, message: string, reason: string) => {
    if (!issues.some((i) => i.code === code && i.annotation === annotation && i.message === message)) issues.push({ code, annotation, message, reason });
  };
  const reader: SecretReader = (key) => input.secrets.get(key);
  const res = normalizeIngress(obj, reader);
  const annotations: AnnotationReport[] = [];
  for (const full of Object.keys(raw).sort()) {
    const prefix = full.startsWith(NGINX_PREFIX) ? NGINX_PREFIX : full.startsWith(PORTICO_PREFIX) ? PORTICO_PREFIX : null;
    if (!prefix || full === 'portico.dev/test-invalid-directive') continue;
    const name = full.slice(prefix.length);
    const row = Object.hasOwn(CATALOGUE, name) ? CATALOGUE[name] : undefined;
    const value = raw[full] ?? '';
    const status: AnnotationStatus = row?.status ?? 'unknown';
    const note = row ? (row.status === 'difference' ? row.difference ?? null : row.status === 'refused' ? row.refusedWhy ?? null : null) : `neither ingress-nginx nor Portico documents ${prefix}${name}`;
    let valid: boolean | null = null;
    let error: string | null = null;
    if (row?.schema) {
      const r = (row.schema as z.ZodType).safeParse(value);
      valid = r.success;
      if (!r.success) error = zodMessage(r.error);
      const shadowed = prefix === NGINX_PREFIX && raw[`${PORTICO_PREFIX}${name}`] !== undefined;
      if (shadowed) notes.push(`${full} is overridden by ${PORTICO_PREFIX}${name}`);
      else if (!r.success) add('invalid-value', full, `${full}=${JSON.stringify(short(value))}: ${error}${row.access ? ' — the Ingress fails closed' : ''}`, `invalid value for ${name}`);
    }
    annotations.push({ annotation: full, name, value: short(value), status, note, risk: row ? row.risk : null, valid, error });
    if (status === 'refused' || status === 'unknown') {
      const access = row?.access;
      const reason = refusalReason(name, note ?? '');
      if (access) add('fails-closed', full, `${full}: ${note} (it asks for ${access})`, reason);
      else add('refused-annotation', full, `${full}: ${note}`, reason);
    }
  }

  // global-rate-limit counts in Redis: without the ConfigMap's Redis every request is let through (or refused).
  if (parsed.values['global-rate-limit'] !== undefined && parsed.values['global-rate-limit-window'] !== undefined && !redisHost) {
    notes.push('global-rate-limit counts in Redis in Portico (not memcached): set the ConfigMap\'s global-rate-limit-redis-host (an IP address), else requests are let through unlimited (global-rate-limit-redis-fail-open)');
  }
  // ssl-passthrough works only with the controller flag, in Portico as in ingress-nginx (off by default in both).
  if (parsed.values['ssl-passthrough'] === true) notes.push('ssl-passthrough needs Portico started with --enable-ssl-passthrough (as ingress-nginx needs it; off by default): without it TLS for these hosts is terminated by Portico');
  if (!res.ok) {
    add('not-served', null, res.reason, 'nothing Portico can serve');
  } else {
    const gated = gateAnnotations(res.ingress, settings);
    // Basic or digest auth whose Secret is not in the input: its users cannot be checked here (not a reason to change).
    const ba = basicAuthPlugin(parsed.values, namespace, reader);
    const unchecked = ba.secretKey && !input.secrets.has(ba.secretKey) && !input.missingSecrets.has(ba.secretKey) ? new Set(ba.closed) : new Set<(typeof ba.closed)[number]>();
    if (unchecked.size) notes.push(`Secret ${ba.secretKey} is not in the input: the ${parsed.values['auth-type'] === 'digest' ? 'digest-auth' : 'basic-auth'} users were not checked`);
    // The same for the CA of client-certificate authentication.
    const tls = authTlsPlugin(parsed.values, namespace, reader);
    if (tls.secretKey && !input.secrets.has(tls.secretKey) && !input.missingSecrets.has(tls.secretKey)) {
      for (const c of tls.closed) unchecked.add(c);
      if (tls.closed.length) notes.push(`Secret ${tls.secretKey} is not in the input: the auth-tls CA (ca.crt) was not checked`);
    }
    const closedSeen = new Set(issues.filter((i) => i.code === 'fails-closed').map((i) => i.annotation));
    for (const ac of gated.accessControl) {
      if ([...unchecked].some((c) => c.annotation === ac.annotation && c.kind === ac.kind)) continue;
      const annotationsIn = ac.annotation.split(', ');
      if (annotationsIn.every((a) => closedSeen.has(a))) continue; // already reported as a refused access-control annotation
      if (annotationsIn.some((a) => issues.some((i) => i.code === 'invalid-value' && i.annotation === a)) && !/refused/.test(ac.kind)) continue;
      add('fails-closed', ac.annotation, `${ac.annotation}: ${ac.kind}; every path answers 503`, `${ac.annotation.replace(/^[^/]+\//, '').split(', ')[0]}: the Ingress fails closed`);
    }
    // proxy-ssl-*: a Secret not in the input cannot be checked (a note); anything else that cannot be applied as asked
    // fails the Ingress's paths closed.
    const ps = res.ingress.proxySsl;
    const sslWhy = proxySslClosedReason(res.ingress, gated);
    if (ps?.missing && ps.secretKey && !input.missingSecrets.has(ps.secretKey)) notes.push(`Secret ${ps.secretKey} is not in the input: the proxy-ssl-secret client certificate and CA were not checked`);
    else if (sslWhy) {
      const a = raw[`${PORTICO_PREFIX}proxy-ssl-secret`] !== undefined ? `${PORTICO_PREFIX}proxy-ssl-secret` : `${NGINX_PREFIX}proxy-ssl-secret`;
      add('fails-closed', a, `${a}: ${sslWhy}; every path answers 503`, 'proxy-ssl-secret: the Ingress fails closed');
    }
    // FastCGI params: a ConfigMap of another namespace fails the paths closed; one not in the input is not checked.
    const fc = res.ingress.fastcgi;
    const fcName = raw[`${PORTICO_PREFIX}fastcgi-params-configmap`] !== undefined ? `${PORTICO_PREFIX}fastcgi-params-configmap` : `${NGINX_PREFIX}fastcgi-params-configmap`;
    if (fc?.error) add('fails-closed', fcName, `${fcName}: ${fc.error}; every path answers 503`, 'fastcgi-params-configmap: the Ingress fails closed');
    else if (fc?.configMapKey) notes.push(`ConfigMap ${fc.configMapKey} is not in the input: the FastCGI params (fastcgi-params-configmap) were not checked`);
    // ModSecurity (Portico's image has the module and the CRS): a modsecurity-snippet off the allowlist is refused, and
    // where ModSecurity is on a refused snippet fails the paths closed.
    const msnip = gated.annotations['modsecurity-snippet'];
    const msName = raw[`${PORTICO_PREFIX}modsecurity-snippet`] !== undefined ? `${PORTICO_PREFIX}modsecurity-snippet` : `${NGINX_PREFIX}modsecurity-snippet`;
    if (msnip && 'error' in msnip) add('snippet-refused', msName, `annotation ${msName} is refused: ${msnip.error}`, 'modsecurity-snippet: a directive outside Portico\'s allowlist');
    const wafWhy = modsecurityClosedReason(res.ingress, gated, {}, { crs: true });
    if (wafWhy) add('fails-closed', msName, `${msName}: ${wafWhy}; every path answers 503`, 'modsecurity-snippet refused with ModSecurity on: the Ingress fails closed');
    for (const r of annotationRefusals(gated)) {
      const m = /annotation (\S+)/.exec(r.message);
      const a = m ? (m[1] as string) : null;
      const n = a ? a.replace(/^[^/]+\//, '') : '';
      if (r.reason === 'RiskyAnnotation') add('refused-by-configmap', a, r.message, `${n} refused by the ConfigMap (allow-snippet-annotations / annotations-risk-level)`);
      else add('snippet-refused', a, r.message, `${n}: a directive outside Portico's snippet allowlist`);
    }
    for (const p of res.ingress.problems) {
      const m = /^annotation ignored: ((?:nginx\.ingress\.kubernetes\.io|portico\.dev)\/[a-z0-9-]+)(.)/.exec(p);
      if (!m) add('ingress-problem', null, p, 'an Ingress field Portico cannot serve as written');
      else {
        const a = m[1] as string;
        if (issues.some((i) => i.code === 'invalid-value' && i.annotation === a)) continue;
        // "name=value: why" or "name: why" is a value Portico cannot use; anything else is an annotation without effect.
        if (m[2] === '=' || m[2] === ':') add('invalid-value', a, p.replace(/^annotation ignored: /, ''), `value of ${a.replace(/^[^/]+\//, '')} not usable by Portico`);
        else add('annotation-ignored', a, p.replace(/^annotation ignored: /, ''), `${a.replace(/^[^/]+\//, '')} has no effect as written`);
      }
    }
  }
  // Mark the values the downstream checks refused (e.g. a redirect URL with a query) as invalid too.
  for (const ar of annotations) {
    const i = issues.find((x) => x.code === 'invalid-value' && x.annotation === ar.annotation);
    if (i && ar.valid) {
      ar.valid = false;
      ar.error = i.message.replace(/^\S+: /, '');
    }
  }
  return {
    namespace,
    name: obj.metadata.name,
    ingressClass: classOf(obj as Obj),
    verdict: issues.length ? 'needs-changes' : 'ready',
    annotations,
    issues,
    notes: [...new Set(notes)],
  };
}

export function analyze(input: Input): Report {
  const cfg = input.configMap ? parseGlobalConfig(input.configMap.data, defaultGlobalConfig()).values : defaultGlobalConfig();
  const settings: RiskSettings = { allowSnippetAnnotations: cfg.allowSnippetAnnotations, annotationsRiskLevel: cfg.annotationsRiskLevel };
  const ingresses = [...input.ingresses]
    .sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`))
    .map((i) => analyzeIngress(i, input, settings, cfg.globalRateLimitRedisHost));
  const configMap = input.configMap ? analyzeConfigMap(input.configMap) : null;
  const sharedHosts = hostsSharedAcrossNamespaces(input.ingresses);
  const counts: Record<AnnotationStatus, number> = { supported: 0, difference: 0, refused: 0, unknown: 0 };
  for (const i of ingresses) for (const a of i.annotations) counts[a.status]++;
  const reasons = new Map<string, Set<string>>();
  for (const i of ingresses) for (const is of i.issues) {
    const set = reasons.get(is.reason) ?? new Set<string>();
    set.add(`${i.namespace}/${i.name}`);
    reasons.set(is.reason, set);
  }
  const topReasons = [...reasons]
    .map(([reason, s]) => ({ reason, ingresses: s.size }))
    .sort((a, b) => b.ingresses - a.ingresses || a.reason.localeCompare(b.reason))
    .slice(0, 10);
  const ready = ingresses.filter((i) => i.verdict === 'ready').length;
  const cmSummary = configMap
    ? {
        supported: configMap.keys.filter((k) => k.status === 'supported').length,
        difference: configMap.keys.filter((k) => k.status === 'difference').length,
        refused: configMap.keys.filter((k) => k.status === 'refused').length,
        invalid: configMap.keys.filter((k) => k.valid === false).length,
      }
    : null;
  const exitCode = ready === ingresses.length && (!configMap || configMap.verdict === 'ready') ? 0 : 1;
  return {
    schemaVersion: SCHEMA_VERSION,
    source: input.source,
    settings: { allowSnippetAnnotations: settings.allowSnippetAnnotations, annotationsRiskLevel: riskLabel(settings.annotationsRiskLevel) },
    ingresses,
    configMap,
    sharedHosts,
    summary: { ingresses: ingresses.length, ready, needsChanges: ingresses.length - ready, annotations: counts, configMap: cmSummary, topReasons, exitCode },
  };
}

/** Hosts (rules' hosts; "(no host)" for rules without one) that Ingresses of several namespaces name. */
export function hostsSharedAcrossNamespaces(ingresses: readonly KubeObject[]): Report['sharedHosts'] {
  const byHost = new Map<string, { ns: string; name: string; created: string | undefined }[]>();
  for (const i of ingresses) {
    const spec = (i as { spec?: { rules?: { host?: string }[] } }).spec;
    const seen = new Set<string>();
    for (const r of spec?.rules ?? []) {
      const h = r.host ? r.host : '(no host)';
      if (seen.has(h)) continue;
      seen.add(h);
      const list = byHost.get(h) ?? [];
      list.push({ ns: i.metadata.namespace ?? 'default', name: i.metadata.name, created: i.metadata.creationTimestamp });
      byHost.set(h, list);
    }
  }
  const out: Report['sharedHosts'] = [];
  for (const [host, list] of [...byHost].sort(([a], [b]) => a.localeCompare(b))) {
    const namespaces = [...new Set(list.map((x) => x.ns))].sort();
    if (namespaces.length < 2) continue;
    // The owner under namespace-exclusive-hosts: the oldest Ingress's namespace (unknown without timestamps).
    const dated = list.filter((x) => x.created);
    const oldest = dated.length === list.length ? [...dated].sort((a, b) => (a.created! < b.created! ? -1 : a.created! > b.created! ? 1 : `${a.ns}/${a.name}`.localeCompare(`${b.ns}/${b.name}`)))[0] : undefined;
    out.push({ host, namespaces, ingresses: list.map((x) => `${x.ns}/${x.name}`).sort(), owner: oldest?.ns ?? null });
  }
  return out;
}

// ---- output ---------------------------------------------------------------------------------------------------------

export function renderText(r: Report): string {
  const out: string[] = [];
  const src = r.source.kind === 'cluster' ? `the cluster at ${r.source.server}` : `${r.source.files.length} manifest file(s)`;
  out.push(`portico migrate: ${r.ingresses.length} Ingress(es) from ${src}; ConfigMap: ${r.configMap ? `${r.configMap.namespace}/${r.configMap.name}` : 'none (ingress-nginx defaults)'}`);
  out.push(`snippets ${r.settings.allowSnippetAnnotations ? 'allowed' : 'not allowed'} (allow-snippet-annotations), annotations-risk-level ${r.settings.annotationsRiskLevel}`);
  for (const i of r.ingresses) {
    out.push('', `Ingress ${i.namespace}/${i.name}${i.ingressClass ? ` (class ${i.ingressClass})` : ''}: ${i.verdict === 'ready' ? 'ready to move as-is' : 'NEEDS CHANGES'}`);
    for (const a of i.annotations) {
      const tag = a.valid === false ? 'INVALID' : a.status;
      const why = a.valid === false ? a.error : a.note;
      out.push(`  ${tag.padEnd(10)} ${a.name} = ${JSON.stringify(a.value.length > 60 ? `${a.value.slice(0, 60)}…` : a.value)}${why ? ` — ${why}` : ''}`);
    }
    for (const is of i.issues) out.push(`  ! ${is.code}: ${is.message}`);
    for (const n of i.notes) out.push(`  note: ${n}`);
  }
  if (r.configMap) {
    const c = r.configMap;
    out.push('', `ConfigMap ${c.namespace}/${c.name}: ${c.verdict === 'ready' ? 'ready to move as-is' : 'NEEDS CHANGES'}`);
    for (const k of c.keys) {
      const tag = k.valid === false ? 'INVALID' : k.status === 'supported' ? 'same' : k.status === 'refused' ? 'ignored' : k.status;
      const why = k.valid === false ? k.error : k.note;
      out.push(`  ${tag.padEnd(10)} ${k.key} = ${JSON.stringify(k.value.length > 60 ? `${k.value.slice(0, 60)}…` : k.value)}${why ? ` — ${why}` : ''}`);
    }
  }
  if (r.sharedHosts.length) {
    out.push('', `Hosts shared across namespaces (${r.sharedHosts.length}): served shared by default; each namespace's canaries, use-regex, rewrite-target and app-root apply to its own paths only. With namespace-exclusive-hosts: "true" only the owner's namespace keeps the host`);
    for (const h of r.sharedHosts) out.push(`  ${h.host}: namespaces ${h.namespaces.join(', ')} (Ingresses ${h.ingresses.join(', ')}); owner ${h.owner ?? 'unknown (no creationTimestamp in the manifests)'}`);
  }
  const s = r.summary;
  out.push('', 'Summary');
  out.push(`  ${s.ingresses} Ingress(es): ${s.ready} ready to move as-is, ${s.needsChanges} need changes`);
  out.push(`  annotations: ${s.annotations.supported} supported, ${s.annotations.difference} with a difference, ${s.annotations.refused} refused, ${s.annotations.unknown} unknown`);
  if (s.configMap) out.push(`  ConfigMap keys: ${s.configMap.supported} same meaning, ${s.configMap.difference} with a difference, ${s.configMap.refused} not supported, ${s.configMap.invalid} invalid`);
  if (s.topReasons.length) {
    out.push('  top reasons (Ingresses affected):');
    for (const t of s.topReasons) out.push(`    ${String(t.ingresses).padStart(3)}  ${t.reason}`);
  }
  out.push(s.exitCode === 0 ? '  everything can move as-is' : '  something needs changes (exit status 1)');
  return `${out.join('\n')}\n`;
}

export interface MigrateIO {
  stdout: (s: string) => Promise<void>;
  stderr: (s: string) => Promise<void>;
  stdin?: () => string;
}

const write = (stream: NodeJS.WriteStream) => (s: string) => new Promise<void>((resolve) => stream.write(s, () => resolve()));

/**
 * `portico migrate --to gateway-api`: the HTTPRoutes, Plugins, Consumers, Secrets, ReferenceGrants (and, with
 * gatewayClass, Gateways) serving what `input`'s Ingresses serve, with the report (app/migrate-gateway-api.ts).
 */
export function migrateToGatewayApi(input: Input, opts: GatewayApiOptions = {}): Conversion {
  return convertToGatewayApi(input, analyze(input), opts);
}

/** The objects as YAML documents (stdout of --to gateway-api). */
export function renderObjectsYaml(objects: readonly unknown[]): string {
  return objects.map((o) => `---\n${dumpYaml(o, { noRefs: true, lineWidth: -1 })}`).join('');
}

/** Runs `portico migrate` with the arguments after "migrate"; resolves to the exit status. */
export async function runMigrate(argv: readonly string[], io: MigrateIO = { stdout: write(process.stdout), stderr: write(process.stderr) }): Promise<number> {
  try {
    const opts = parseMigrateArgs(argv);
    const input = opts.files.length ? loadManifests(opts.files, opts, io.stdin) : await loadCluster(opts);
    if (opts.to === 'gateway-api') {
      const c = migrateToGatewayApi(input, { ...(opts.gateway ? { gateway: opts.gateway } : {}), ...(opts.sectionName ? { sectionName: opts.sectionName } : {}), ...(opts.gatewayClass ? { gatewayClass: opts.gatewayClass } : {}) });
      if (opts.output === 'json') await io.stdout(`${JSON.stringify({ ...c.report, objects: c.objects }, null, 2)}\n`);
      else {
        await io.stdout(renderObjectsYaml(c.objects));
        await io.stderr(renderConversionText(c.report));
      }
      return c.report.summary.exitCode;
    }
    const report = analyze(input);
    await io.stdout(opts.output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : renderText(report));
    return report.summary.exitCode;
  } catch (e) {
    if (e instanceof UsageError) {
      await io.stderr(`portico migrate: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
}
