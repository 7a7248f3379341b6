// Client IP lists: allowlist-source-range (whitelist-source-range, its older name) and denylist-source-range →
// the ip-restriction plugin (403); one that cannot be applied fails the Ingress closed. satisfy: "any" makes the
// lists, basic auth and external auth alternatives (translate/plugin-instances.ts marks their instances).
import { z } from 'zod';
import { addConfigPlugin, emptyApplied, row, type Applied, type ConfigPlugin, type Values } from '../group.ts';
import { commaListSchema } from '../../values/safe.ts';

export const rows = {
  'whitelist-source-range': row(commaListSchema, 'ingress', 'medium', 'Client IP allowlist (CIDRs, comma-separated; older name of allowlist-source-range): others get 403. Runs as an ip-restriction plugin; an invalid list makes the Ingress fail closed (503)', { access: 'a client IP allowlist' }),
  'allowlist-source-range': row(commaListSchema, 'ingress', 'medium', 'Client IP allowlist (CIDRs, comma-separated): others get 403; wins over whitelist-source-range. An invalid list makes the Ingress fail closed (503)', { access: 'a client IP allowlist' }),
  'denylist-source-range': row(commaListSchema, 'ingress', 'medium', 'Client IP denylist (CIDRs, comma-separated): those get 403 (deny wins over allow). An invalid list makes the Ingress fail closed (503)', { access: 'a client IP denylist' }),
  satisfy: row(z.enum(['all', 'any'], { error: () => 'satisfy must be "all" or "any"' }), 'location', 'low', '"any": the request passes when one of the Ingress\'s access checks lets it through — the allow/deny lists, basic auth (auth-type), external auth (auth-url, or the ConfigMap\'s global-auth-url) — and when all refuse it gets their 401 (or auth-signin redirect), else 403; "all" (default): each must pass. Plugin objects attached with portico.dev/plugins are not part of it'),
};

export function ipListPlugins(v: Values<typeof rows>): Applied<ConfigPlugin> {
  const out = emptyApplied<ConfigPlugin>();
  const allow = v['allowlist-source-range'] ?? v['whitelist-source-range'];
  const deny = v['denylist-source-range'];
  if (allow || deny) {
    const names = [...(allow ? [v['allowlist-source-range'] ? 'allowlist-source-range' : 'whitelist-source-range'] : []), ...(deny ? ['denylist-source-range'] : [])];
    addConfigPlugin(out, 'ip', 'ip-restriction', { ...(allow ? { allow } : {}), ...(deny ? { deny } : {}) }, names, 'a client IP list');
  }
  return out;
}

/** The access plugins ingress-nginx's satisfy: any combines (nginx's allow/deny, auth_basic, auth_digest, auth_request). */
const SATISFY_ANY_TYPES = new Set<string>(['ip-restriction', 'basic-auth', 'digest-auth', 'external-auth']);

/** satisfy: "any": an instance of this type is one of the Ingress's alternatives (its lists and authentication). */
export function satisfiesAny(v: Values<typeof rows>, instanceType: string): boolean {
  return v.satisfy === 'any' && SATISFY_ANY_TYPES.has(instanceType);
}

/**
 * Which of the ConfigMap's whitelist-source-range / denylist-source-range the Ingress replaces with its own list
 * (as in ingress-nginx, an Ingress's allowlist replaces the default allowlist, its denylist the default denylist).
 */
export function ownIpLists(v: Values<typeof rows>): { allow: boolean; deny: boolean } {
  return { allow: v['whitelist-source-range'] !== undefined || v['allowlist-source-range'] !== undefined, deny: v['denylist-source-range'] !== undefined };
}
