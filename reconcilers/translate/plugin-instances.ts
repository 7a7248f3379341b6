// Plugin instances made from ingress-nginx annotations and the ConfigMap (auth, IP lists, headers, rewrites).
import { createHash } from 'node:crypto';
import { PLUGIN_ORDER, type PluginInstance } from '../config/types.ts';
import type { ModelSnapshot } from '../model/model.ts';
import { rateLimitStoreOf, type RateLimitStore } from '../model/global-rate-limit-config.ts';
import type { NormalizedIngress } from '../model/types.ts';
import { limitKey, pluginInstanceOf } from '../config/plugin-instance.ts';
import { annotationInstance } from '../annotations/plugins.ts';
import { externalAuthInstanceOf, type AuthTimeouts, type ExternalAuthSpec } from '../annotations/groups/external-auth.ts';
import { customHeadersConfig } from '../annotations/groups/custom-headers.ts';
import { ownIpLists, satisfiesAny } from '../annotations/groups/ip-lists.ts';
import { rewriteTargetInstance } from '../annotations/groups/rewrite.ts';
import type { ClientCertSpec } from '../annotations/auth-tls.ts';
import type { ParsedAnnotations } from '../annotations/table.ts';
import type { AuthTarget } from '../annotations/auth-url.ts';
import { backendIdOf, type PathClaim } from './claims.ts';
import { regexSourceOf } from './matching.ts';

/** An instance made from annotations; external authentication also names where its subrequest goes. */
export interface AnnotationInstance {
  id: string;
  inst: PluginInstance;
  auth?: { target: AuthTarget; backendId: string; url: string };
}
export type { AuthTimeouts };

/**
 * ingress-nginx's custom-headers: the ConfigMap's headers as a response-headers instance, or why the paths fail
 * closed (customHeadersConfig: the ConfigMap is missing or invalid, or a header is not allowed).
 */
export function customHeadersInstance(ing: NormalizedIngress, allowed: readonly string[]): { id: string; inst: PluginInstance } | { closed: string } {
  const ap = ing.annotationPlugins.find((p) => 'customHeaders' in p);
  const ch = ap && 'customHeaders' in ap ? ap.customHeaders : undefined;
  if (!ch) return { closed: `custom-headers: ConfigMap ${ing.customHeadersConfigMap ?? ing.annotations['custom-headers']} was not read` };
  const c = customHeadersConfig(ch, allowed);
  if ('closed' in c) return c;
  const id = `${ingressPluginBase(ing)}.hdrs`;
  const { instance } = pluginInstanceOf(c.config, ing.namespace, id);
  return { id, inst: { name: `${ing.key} (custom-headers ${ch.configMap})`, ...instance } as PluginInstance };
}

const annotationCache = new WeakMap<NormalizedIngress, { key: string; list: AnnotationInstance[] }>();
/**
 * The plugin instances an Ingress's ingress-nginx annotations ask for (derived once per Ingress record and
 * ConfigMap limit-req-status-code, which the rate limits of limit-rps / limit-rpm answer with, and proxy
 * timeouts, which auth-url's subrequest uses). Each is built by its group's builder (annotations/plugins.ts).
 */
export function annotationInstances(ing: NormalizedIngress, limitStatus: number, authTimeouts: AuthTimeouts = { connect: 5, send: 60, read: 60 }, connStatus = 503, store: RateLimitStore = DEFAULT_STORE): AnnotationInstance[] {
  const cacheKey = `${limitStatus} ${authTimeouts.connect} ${authTimeouts.send} ${authTimeouts.read} ${connStatus} ${storeKey(store)}`;
  const hit = annotationCache.get(ing);
  if (hit && hit.key === cacheKey) return hit.list;
  const name = `${ing.key} (annotations)`;
  const list = ing.annotationPlugins.filter((ap) => (!('snippets' in ap) || ap.allowed) && !('customHeaders' in ap)).map((ap): AnnotationInstance => {
    const base = `ing.${ing.namespace}.${ing.name}`;
    const id = `${base.length <= 230 ? base : `ing.${createHash('sha256').update(ing.key).digest('hex').slice(0, 24)}`}.${ap.suffix}`;
    if ('externalAuth' in ap) return { id, ...externalAuthInstance(ap.externalAuth, name, authTimeouts) };
    if ('customHeaders' in ap) throw new Error(`custom-headers of ${ing.key} are built by customHeadersInstance`);
    const built = annotationInstance(ap, { name, id, namespace: ing.namespace, limitStatus, connStatus, globalLimitStatus: store.status });
    if ('inst' in built) return { id, inst: built.inst };
    const { instance } = pluginInstanceOf(built.config, ing.namespace, limitKey(id, built.config));
    return { id, inst: withRateLimitStore({ name, ...instance } as PluginInstance, store) };
  }).map((e) => (satisfiesAny(ing.annotations, e.inst.type) ? { ...e, inst: { ...e.inst, satisfyAny: true as const } } : e));
  annotationCache.set(ing, { key: cacheKey, list });
  return list;
}

const DEFAULT_STORE = rateLimitStoreOf({});
const storeKeys = new WeakMap<RateLimitStore, string>();
function storeKey(s: RateLimitStore): string {
  let k = storeKeys.get(s);
  if (k === undefined) storeKeys.set(s, (k = JSON.stringify(s)));
  return k;
}

/**
 * A rate-limit instance with policy redis as the ConfigMap runs it: its fail-open setting and Redis (none when the
 * ConfigMap names none: every request then counts as Redis unreachable). Any other instance as it is.
 */
export function withRateLimitStore(inst: PluginInstance, store: RateLimitStore): PluginInstance {
  if (inst.type !== 'rate-limit' || inst.policy !== 'redis') return inst;
  const { redis: _old, ...rest } = inst;
  return { ...rest, failOpen: store.failOpen, ...(store.redis ? { redis: store.redis } : {}) };
}

/**
 * Backend of an auth subrequest: a Service's own backend id (the balancer, its endpoints), or — for another host
 * or an IP address — a backend of its own ("extauth." + host + port; no "_", so never taken for a Service's).
 */
export function authBackendId(t: AuthTarget): string {
  if (t.kind === 'service') return backendIdOf(t.namespace, { service: t.service, port: { number: t.port } });
  if (t.kind === 'host') return `extauth.${t.host}.${t.port}`;
  // (The request's own host: the data plane picks the backend of the host's route per request.)
  if (t.kind === 'own-host') return 'extauth.own-host';
  return `extauth.ip.${t.address.replace(/[^0-9a-f.]/g, (c) => (c === ':' ? '-' : ''))}.${t.port}`;
}

/** ingress-nginx's external authentication (auth-url or global-auth-url) as an external-auth instance. */
export function externalAuthInstance(spec: ExternalAuthSpec, name: string, t: AuthTimeouts): { inst: PluginInstance; auth: NonNullable<AnnotationInstance['auth']> } {
  return externalAuthInstanceOf(spec, name, t, authBackendId(spec.url.target));
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
 * ip-restriction instances a path gets, and why a path must fail closed (an invalid value). An object whose
 * annotations (`ann`: an Ingress's) set its own allowlist (whitelist-/allowlist-source-range) or denylist replaces
 * that default, as in ingress-nginx; an object without annotations (a Route) always gets both, on top of its own
 * plugins.
 */
export function globalIpLists(g: ModelSnapshot['global'], ann: ParsedAnnotations | undefined): { ids: [string, PluginInstance][]; closed: string[] } {
  const out: { ids: [string, PluginInstance][]; closed: string[] } = { ids: [], closed: [] };
  const any = ann ? satisfiesAny(ann, 'ip-restriction') : false;
  const own = ann ? ownIpLists(ann) : { allow: false, deny: false };
  for (const [key, list, replaced, id, field] of [
    ['whitelist-source-range', g.whitelistSourceRange, own.allow, GLOBAL_ALLOW_ID, 'allow'],
    ['denylist-source-range', g.denylistSourceRange, own.deny, GLOBAL_DENY_ID, 'deny'],
  ] as const) {
    if (replaced || !list) continue;
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
    inst: rewriteTargetInstance(ing.annotations['rewrite-target'] as string, pattern, `${ing.key} (annotations)`),
  };
}

/** Plugin id in the data plane for a Plugin object. */
export const pluginId = (namespace: string, name: string) => `${namespace}_${name}`;

export const PLUGIN_RANK = new Map<string, number>(PLUGIN_ORDER.map((t, i) => [t, i]));
