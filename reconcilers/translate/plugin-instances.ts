// Plugin instances made from ingress-nginx annotations and the ConfigMap (auth, IP lists, headers, rewrites).
import { createHash } from 'node:crypto';
import { PLUGIN_ORDER, type PluginInstance } from '../config/types.ts';
import type { ModelSnapshot } from '../model/model.ts';
import type { NormalizedIngress } from '../model/types.ts';
import { limitKey, pluginInstanceOf } from '../crds/normalize.ts';
import type { ExternalAuthSpec } from '../annotations/plugins.ts';
import type { ClientCertSpec } from '../annotations/auth-tls.ts';
import type { AuthTarget } from '../annotations/auth-url.ts';
import { backendIdOf, type PathClaim } from './claims.ts';
import { regexSourceOf } from './matching.ts';

/** An instance made from annotations; external authentication also names where its subrequest goes. */
export interface AnnotationInstance {
  id: string;
  inst: PluginInstance;
  auth?: { target: AuthTarget; backendId: string; url: string };
}
/** Proxy timeouts (seconds) of ingress-nginx's auth subrequests: the ConfigMap's, as its auth location inherits. */
export type AuthTimeouts = { connect: number; send: number; read: number };

/**
 * ingress-nginx's custom-headers: the ConfigMap's headers as a response-headers instance, or why the paths fail
 * closed (the ConfigMap is missing or invalid, or a header is not in the ConfigMap's global-allowed-response-headers,
 * as ingress-nginx denies such a location).
 */
export function customHeadersInstance(ing: NormalizedIngress, allowed: readonly string[]): { id: string; inst: PluginInstance } | { closed: string } {
  const ap = ing.annotationPlugins.find((p) => 'customHeaders' in p);
  const ch = ap && 'customHeaders' in ap ? ap.customHeaders : undefined;
  if (!ch) return { closed: `custom-headers: ConfigMap ${ing.customHeadersConfigMap ?? ing.annotations['custom-headers']} was not read` };
  if (ch.error || !ch.config || ch.config.type !== 'response-headers') return { closed: ch.error ?? `custom-headers: ConfigMap ${ch.configMap} cannot be applied` };
  const set = ch.config.set ?? [];
  const refused = set.map((h) => h.name).filter((n) => !allowed.includes(n.toLowerCase()));
  if (refused.length) return { closed: `custom-headers: ${refused.join(', ')} ${refused.length > 1 ? 'are' : 'is'} not in the ConfigMap's global-allowed-response-headers` };
  const id = `${ingressPluginBase(ing)}.hdrs`;
  const { instance } = pluginInstanceOf(ch.config, ing.namespace, id);
  return { id, inst: { name: `${ing.key} (custom-headers ${ch.configMap})`, ...instance } as PluginInstance };
}

/** The access plugins ingress-nginx's satisfy: any combines (nginx's allow/deny, auth_basic, auth_request). */
const SATISFY_ANY_TYPES = new Set<string>(['ip-restriction', 'basic-auth', 'external-auth']);

const annotationCache = new WeakMap<NormalizedIngress, { key: string; list: AnnotationInstance[] }>();
/**
 * The plugin instances an Ingress's ingress-nginx annotations ask for (derived once per Ingress record and
 * ConfigMap limit-req-status-code, which the rate limits of limit-rps / limit-rpm answer with, and proxy
 * timeouts, which auth-url's subrequest uses).
 */
export function annotationInstances(ing: NormalizedIngress, limitStatus: number, authTimeouts: AuthTimeouts = { connect: 5, send: 60, read: 60 }, connStatus = 503): AnnotationInstance[] {
  const cacheKey = `${limitStatus} ${authTimeouts.connect} ${authTimeouts.send} ${authTimeouts.read} ${connStatus}`;
  const hit = annotationCache.get(ing);
  if (hit && hit.key === cacheKey) return hit.list;
  const list = ing.annotationPlugins.filter((ap) => (!('snippets' in ap) || ap.allowed) && !('customHeaders' in ap)).map((ap): AnnotationInstance => {
    const base = `ing.${ing.namespace}.${ing.name}`;
    const id = `${base.length <= 230 ? base : `ing.${createHash('sha256').update(ing.key).digest('hex').slice(0, 24)}`}.${ap.suffix}`;
    if ('snippets' in ap) {
      // Compiled ingress-nginx snippets (reconcilers/annotations/snippets.ts); only those the gate allowed (risk.ts).
      const { server, location } = ap.snippets;
      const inst: PluginInstance = { name: `${ing.key} (annotations)`, type: 'snippet', ...(server ? { server } : {}), ...(location ? { location } : {}) };
      return { id, inst };
    }
    if ('basicAuth' in ap) {
      // ingress-nginx auth-type basic: the users of its auth-secret; the Authorization header goes upstream as
      // with nginx's auth_basic.
      const inst: PluginInstance = { name: `${ing.key} (annotations)`, type: 'basic-auth', namespace: ing.namespace, realm: ap.basicAuth.realm, hideCredentials: false, users: ap.basicAuth.users };
      return { id, inst };
    }
    if ('connLimit' in ap) {
      const inst: PluginInstance = { name: `${ing.key} (annotations)`, type: 'conn-limit', limit: ap.connLimit.limit, status: connStatus, key: id, ...(ap.connLimit.exempt ? { exempt: ap.connLimit.exempt } : {}) };
      return { id, inst };
    }
    if ('externalAuth' in ap) return { id, ...externalAuthInstance(ap.externalAuth, `${ing.key} (annotations)`, authTimeouts) };
    if ('clientCert' in ap) return { id, inst: clientCertInstance(ap.clientCert, `${ing.key} (annotations)`) };
    if (!('config' in ap)) throw new Error(`annotation plugin ${ap.suffix} of ${ing.key} has no configuration`);
    const config = ap.config.type === 'rate-limit' ? { ...ap.config, status: limitStatus } : ap.config;
    const { instance } = pluginInstanceOf(config, ing.namespace, limitKey(id, config));
    return { id, inst: { name: `${ing.key} (annotations)`, ...instance } as PluginInstance };
  }).map((e) => (ing.annotations.satisfy === 'any' && SATISFY_ANY_TYPES.has(e.inst.type) ? { ...e, inst: { ...e.inst, satisfyAny: true as const } } : e));
  annotationCache.set(ing, { key: cacheKey, list });
  return list;
}

/**
 * Backend of an auth subrequest: a Service's own backend id (the balancer, its endpoints), or — for another host
 * or an IP address — a backend of its own ("extauth." + host + port; no "_", so never taken for a Service's).
 */
export function authBackendId(t: AuthTarget): string {
  if (t.kind === 'service') return backendIdOf(t.namespace, { service: t.service, port: { number: t.port } });
  if (t.kind === 'host') return `extauth.${t.host}.${t.port}`;
  return `extauth.ip.${t.address.replace(/[^0-9a-f.]/g, (c) => (c === ':' ? '-' : ''))}.${t.port}`;
}

/** ingress-nginx's external authentication (auth-url or global-auth-url) as an external-auth instance. */
export function externalAuthInstance(spec: ExternalAuthSpec, name: string, t: AuthTimeouts): { inst: PluginInstance; auth: NonNullable<AnnotationInstance['auth']> } {
  const backendId = authBackendId(spec.url.target);
  const inst: PluginInstance = {
    name,
    type: 'external-auth',
    backendId,
    path: spec.url.uri,
    method: 'GET',
    forwardHeaders: [],
    upstreamHeaders: spec.responseHeaders,
    clientHeaders: [],
    timeoutMs: Math.max(1, Math.round(t.read * 1000)),
    ingressNginx: {
      scheme: spec.url.scheme,
      host: spec.url.host,
      ...(spec.method !== undefined ? { method: spec.method } : {}),
      ...(spec.requestRedirect ? { requestRedirect: spec.requestRedirect } : {}),
      ...(spec.signin ? { signin: spec.signin } : {}),
      ...(spec.cache ? { cache: spec.cache } : {}),
      alwaysSetCookie: spec.alwaysSetCookie,
      timeouts: { connect: t.connect, send: t.send, read: t.read },
      ...(spec.proxySetHeaders?.length ? { setHeaders: spec.proxySetHeaders } : {}),
    },
  };
  return { inst, auth: { target: spec.url.target, backendId, url: spec.url.url } };
}

/** ingress-nginx's auth-tls-* as a client-cert instance (the CA itself goes to the host's handshake: clientAuth). */
export function clientCertInstance(s: ClientCertSpec, name: string): PluginInstance {
  return {
    name,
    type: 'client-cert',
    verify: s.verify,
    ...(s.verify !== 'off' ? { caId: s.caId } : {}),
    ...(s.errorPage !== undefined ? { errorPage: s.errorPage } : {}),
    passCertificate: s.passCertificate,
    ...(s.matchCn !== undefined ? { matchCn: s.matchCn } : {}),
  };
}

/** The client-certificate settings an Ingress asks for that make the handshake ask for a certificate (not "off"). */
export function clientCertOf(ing: NormalizedIngress | undefined): ClientCertSpec | undefined {
  for (const p of ing?.annotationPlugins ?? []) if ('clientCert' in p && p.clientCert.verify !== 'off') return p.clientCert;
  return undefined;
}

/** Data-plane id of the ConfigMap's global external authentication. */
export const GLOBAL_AUTH_ID = 'portico.global-auth';
/** Data-plane ids of the ConfigMap's whitelist-source-range and denylist-source-range (ip-restriction instances). */
export const GLOBAL_ALLOW_ID = 'portico.global-allow';
export const GLOBAL_DENY_ID = 'portico.global-deny';

/**
 * The ConfigMap's whitelist-source-range / denylist-source-range (ingress-nginx's defaults for every location): the
 * ip-restriction instances a path gets, and why a path must fail closed (an invalid value). An Ingress that sets its
 * own allowlist (whitelist-/allowlist-source-range) or denylist annotation replaces that default, as in
 * ingress-nginx; a Route (no such annotations) always gets both, on top of its own plugins.
 */
export function globalIpLists(g: ModelSnapshot['global'], ing: NormalizedIngress | undefined): { ids: [string, PluginInstance][]; closed: string[] } {
  const out: { ids: [string, PluginInstance][]; closed: string[] } = { ids: [], closed: [] };
  const any = ing?.annotations.satisfy === 'any';
  for (const [key, list, own, id, field] of [
    ['whitelist-source-range', g.whitelistSourceRange, ing && (ing.annotations['whitelist-source-range'] !== undefined || ing.annotations['allowlist-source-range'] !== undefined), GLOBAL_ALLOW_ID, 'allow'],
    ['denylist-source-range', g.denylistSourceRange, ing && ing.annotations['denylist-source-range'] !== undefined, GLOBAL_DENY_ID, 'deny'],
  ] as const) {
    if (own || !list) continue;
    if (list.error !== undefined) out.closed.push(`the ConfigMap's ${key} cannot be applied (${list.error})`);
    else if (list.items.length) {
      const inst = { name: `ConfigMap ${key}`, type: 'ip-restriction', status: 403, [field]: list.items } as PluginInstance;
      // satisfy: any makes the list one of the Ingress's alternatives (with its authentication), as the annotation.
      out.ids.push(any ? [`${id}.any`, { ...inst, satisfyAny: true } as PluginInstance] : [id, inst]);
    }
  }
  return out;
}

/** Prefix of the data-plane ids of the plugin instances an Ingress's annotations make ("ing.<ns>.<name>"). */
export function ingressPluginBase(ing: NormalizedIngress): string {
  const base = `ing.${ing.namespace}.${ing.name}`;
  return base.length <= 200 ? base : `ing.${createHash('sha256').update(ing.key).digest('hex').slice(0, 24)}`;
}

/**
 * The rewrite of rewrite-target for one path: nginx's rewrite semantics (the `nginx` flag of the rewrite plugin) on
 * the path's regex — the regex path itself, or a literal path as written read as a regex, as ingress-nginx does.
 */
export function rewriteInstance(ing: NormalizedIngress, pc: PathClaim): { id: string; inst: PluginInstance } {
  const pattern = regexSourceOf(pc);
  const digest = createHash('sha256').update(`${pc.match} ${pc.written}`).digest('hex').slice(0, 16);
  return {
    id: `${ingressPluginBase(ing)}.rw-${digest}`,
    inst: { name: `${ing.key} (annotations)`, type: 'rewrite', regex: { pattern, replacement: ing.annotations['rewrite-target'] as string, nginx: true } },
  };
}

/** Plugin id in the data plane for a Plugin object. */
export const pluginId = (namespace: string, name: string) => `${namespace}_${name}`;

export const PLUGIN_RANK = new Map<string, number>(PLUGIN_ORDER.map((t, i) => [t, i]));
