// ingress-nginx annotations that are plugins in disguise, turned into the plugin configurations Portico's own
// Plugin objects use — validated by the very same zod schemas (crds/schema/plugin-config.ts) and run by the same
// Lua plugins, so an allowlist from an annotation and one from a Plugin object behave identically.
//   allowlist-source-range / whitelist-source-range / denylist-source-range → ip-restriction (403);
//   enable-cors + cors-*                                                     → cors (ingress-nginx's defaults);
//   limit-rps / limit-rpm (+ limit-burst-multiplier, limit-whitelist)        → rate-limit per client IP, 503.
// An allow- or denylist that cannot be applied (an invalid CIDR) makes the Ingress fail closed; an invalid CORS or
// rate-limit setting is reported and that plugin is left out (as ingress-nginx ignores an invalid annotation).
import { parsePluginConfig, type PluginConfig } from '../../crds/schema/index.ts';
import { NGINX_PREFIX, type ParsedAnnotations } from './table.ts';

export interface AnnotationPlugin {
  /** Suffix of the data-plane plugin id ("ip", "cors", "rps", "rpm"). */
  suffix: string;
  config: PluginConfig;
}

const CORS_METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS'];
const CORS_HEADERS = ['DNT', 'Keep-Alive', 'User-Agent', 'X-Requested-With', 'If-Modified-Since', 'Cache-Control', 'Content-Type', 'Range', 'Authorization'];
/** ingress-nginx's limit-req-status-code default; the translation applies the ConfigMap's value. */
const LIMIT_STATUS = 503;

export function annotationPlugins(v: ParsedAnnotations): { plugins: AnnotationPlugin[]; problems: string[]; closed: { annotation: string; kind: string }[] } {
  const plugins: AnnotationPlugin[] = [];
  const problems: string[] = [];
  const closed: { annotation: string; kind: string }[] = [];
  const add = (suffix: string, type: string, config: Record<string, unknown>, names: string[], failClosed: string | null) => {
    const r = parsePluginConfig(type, config);
    if (r.ok) {
      plugins.push({ suffix, config: r.config });
      return;
    }
    const which = names.map((n) => `${NGINX_PREFIX}${n}`).join(', ');
    if (failClosed) closed.push({ annotation: which, kind: `${failClosed} that cannot be applied (${r.error.replace(/^config\./, '')})` });
    else problems.push(`annotation ignored: ${which}: ${r.error.replace(/^config\./, '')}`);
  };

  const allow = v['allowlist-source-range'] ?? v['whitelist-source-range'];
  const deny = v['denylist-source-range'];
  if (allow || deny) {
    const names = [...(allow ? [v['allowlist-source-range'] ? 'allowlist-source-range' : 'whitelist-source-range'] : []), ...(deny ? ['denylist-source-range'] : [])];
    add('ip', 'ip-restriction', { ...(allow ? { allow } : {}), ...(deny ? { deny } : {}) }, names, 'a client IP list');
  }

  if (v['enable-cors'] === true) {
    const origins = v['cors-allow-origin'] ?? ['*'];
    add(
      'cors',
      'cors',
      {
        allowOrigins: origins,
        allowMethods: (v['cors-allow-methods'] ?? CORS_METHODS).map((m) => m.toUpperCase()),
        allowHeaders: v['cors-allow-headers'] ?? CORS_HEADERS,
        ...(v['cors-expose-headers'] ? { exposeHeaders: v['cors-expose-headers'] } : {}),
        // ingress-nginx sends credentials "true" with "*" too, which browsers refuse: never allow that pair.
        allowCredentials: origins.includes('*') ? false : (v['cors-allow-credentials'] ?? true),
        maxAge: v['cors-max-age'] ?? 1728000,
      },
      ['enable-cors', 'cors-allow-origin', 'cors-allow-methods', 'cors-allow-headers', 'cors-expose-headers'].filter((n) => (v as Record<string, unknown>)[n] !== undefined),
      null,
    );
  } else {
    const stray = ['cors-allow-origin', 'cors-allow-methods', 'cors-allow-headers', 'cors-expose-headers', 'cors-allow-credentials', 'cors-max-age'].filter((n) => (v as Record<string, unknown>)[n] !== undefined);
    if (stray.length) problems.push(`annotation ignored: ${stray.map((n) => `${NGINX_PREFIX}${n}`).join(', ')}: has no effect without ${NGINX_PREFIX}enable-cors: "true"`);
  }

  const mult = v['limit-burst-multiplier'] ?? 5;
  const exempt = v['limit-whitelist'];
  for (const [suffix, name, key] of [['rps', 'limit-rps', 'requestsPerSecond'], ['rpm', 'limit-rpm', 'requestsPerMinute']] as const) {
    const rate = v[name];
    if (rate === undefined) continue;
    add(suffix, 'rate-limit', { [key]: rate, burst: Math.min(rate * mult, 1_000_000), by: 'ip', status: LIMIT_STATUS, ...(exempt ? { exempt } : {}) }, [name, ...(exempt ? ['limit-whitelist'] : [])], null);
  }
  if (v['limit-rps'] === undefined && v['limit-rpm'] === undefined) {
    const stray = ['limit-burst-multiplier', 'limit-whitelist'].filter((n) => (v as Record<string, unknown>)[n] !== undefined);
    if (stray.length) problems.push(`annotation ignored: ${stray.map((n) => `${NGINX_PREFIX}${n}`).join(', ')}: has no effect without ${NGINX_PREFIX}limit-rps or limit-rpm`);
  }
  return { plugins, problems, closed };
}
