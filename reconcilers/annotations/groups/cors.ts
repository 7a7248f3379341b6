// CORS: enable-cors and cors-* → the cors plugin, with ingress-nginx's defaults. An invalid setting is reported and
// the plugin left out (as ingress-nginx ignores an invalid annotation).
import { addConfigPlugin, emptyApplied, NGINX_PREFIX, row, type Applied, type ConfigPlugin, type Values } from '../group.ts';
import { boolSchema, commaListSchema, intSchema } from '../../values/safe.ts';

export const rows = {
  'enable-cors': row(boolSchema, 'ingress', 'low', 'CORS with the cors-* settings: preflights answered with 204 by Portico, CORS headers on responses (cors plugin)'),
  'cors-allow-origin': row(commaListSchema, 'ingress', 'medium', 'Allowed origins, comma-separated: "*" (default), "https://a.example" or "https://*.example.com"; with "*", credentials are not allowed (browsers refuse that pair anyway)'),
  'cors-allow-methods': row(commaListSchema, 'ingress', 'medium', 'Allowed methods (default GET, PUT, POST, DELETE, PATCH, OPTIONS)'),
  'cors-allow-headers': row(commaListSchema, 'ingress', 'medium', 'Allowed request headers (default DNT, Keep-Alive, User-Agent, X-Requested-With, If-Modified-Since, Cache-Control, Content-Type, Range, Authorization)'),
  'cors-expose-headers': row(commaListSchema, 'ingress', 'medium', 'Response headers exposed to the page (default none)'),
  'cors-allow-credentials': row(boolSchema, 'ingress', 'low', 'Access-Control-Allow-Credentials (default true, except with origin "*")', { difference: 'never sent with cors-allow-origin "*" (ingress-nginx sends it, and browsers then reject the response)' }),
  'cors-max-age': row(intSchema(0, 2_592_000), 'ingress', 'low', 'Access-Control-Max-Age in seconds (default 1728000)'),
};

/** Refused together (translate/risk.ts): a refused cors-allow-origin must never turn into CORS for any origin. */
export const refusedTogether = [['enable-cors', 'cors-allow-origin', 'cors-allow-methods', 'cors-allow-headers', 'cors-expose-headers', 'cors-allow-credentials', 'cors-max-age']] as const;

const CORS_METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS'];
const CORS_HEADERS = ['DNT', 'Keep-Alive', 'User-Agent', 'X-Requested-With', 'If-Modified-Since', 'Cache-Control', 'Content-Type', 'Range', 'Authorization'];

export function corsPlugins(v: Values<typeof rows>): Applied<ConfigPlugin> {
  const out = emptyApplied<ConfigPlugin>();
  if (v['enable-cors'] === true) {
    const origins = v['cors-allow-origin'] ?? ['*'];
    addConfigPlugin(
      out,
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
    if (stray.length) out.problems.push(`annotation ignored: ${stray.map((n) => `${NGINX_PREFIX}${n}`).join(', ')}: has no effect without ${NGINX_PREFIX}enable-cors: "true"`);
  }
  return out;
}
