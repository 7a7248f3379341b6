// HTTPRoute → its model record: parentRefs and backendRefs with the API's defaults applied, matches and the filters
// Portico serves. A filter or field it does not serve refuses the route by name (Accepted=False with the field in
// the message), so nothing is dropped silently; the API server's own validation is repeated (paths, names, values).
import { z } from 'zod';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { HttpFilterN, HttpRouteRecord, HttpRuleN } from '../../model/gateway-api.ts';
import { regexPathProblem, regexProblem } from '../../values/regex-path.ts';
import { issuesText, metaOf, type CrdResult } from '../crd-normalize.ts';
import { backendOf, groupSchema, gwHeaderNameSchema, gwHeaderValueSchema, gwHostnameSchema, gwPortSchema, headerModsOf, headerModsSchema, kindSchema, namespaceSchema, objectNameSchema, parentRefSchema, parentsOf, sectionNameSchema } from '../gateway/schema.ts';

/** The API server's path rules (HTTPPathMatch, HTTPPathModifier): absolute, no "//", "/./", "/../", no encoded "/" or "%". */
const pathValue = z
  .string()
  .min(1)
  .max(1024)
  .refine((p) => p.startsWith('/'), 'must be an absolute path')
  .refine((p) => !p.includes('//') && !/\/\.\.?(\/|$)/.test(p), 'must not contain "//", "/./" or "/../"')
  .refine((p) => !/%2f|%2F|%25/.test(p), 'must not contain "%2f", "%2F" or "%25"')
  .refine((p) => /^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|%[0-9a-fA-F]{2})+$/.test(p), 'must contain only characters of a URL path');

const matchSchema = z.looseObject({
  path: z.looseObject({ type: z.enum(['Exact', 'PathPrefix', 'RegularExpression']).default('PathPrefix'), value: z.string().max(1024).default('/') }).optional(),
  headers: z.array(z.looseObject({ type: z.enum(['Exact', 'RegularExpression']).default('Exact'), name: gwHeaderNameSchema, value: gwHeaderValueSchema })).max(16).optional(),
  queryParams: z.array(z.looseObject({ type: z.enum(['Exact', 'RegularExpression']).default('Exact'), name: gwHeaderNameSchema, value: gwHeaderValueSchema })).max(16).optional(),
  method: z.enum(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']).optional(),
});
const pathModifier = z.looseObject({
  type: z.enum(['ReplaceFullPath', 'ReplacePrefixMatch']),
  replaceFullPath: pathValue.optional(),
  replacePrefixMatch: pathValue.optional(),
});
const filterSchema = z.looseObject({
  type: z.string().min(1),
  requestHeaderModifier: headerModsSchema.optional(),
  responseHeaderModifier: headerModsSchema.optional(),
  requestRedirect: z
    .looseObject({
      scheme: z.enum(['http', 'https']).optional(),
      hostname: gwHostnameSchema.optional(),
      path: pathModifier.optional(),
      port: gwPortSchema.optional(),
      statusCode: z.union([z.literal(301), z.literal(302), z.literal(303), z.literal(307), z.literal(308)]).default(302),
    })
    .optional(),
  urlRewrite: z.looseObject({ hostname: gwHostnameSchema.optional(), path: pathModifier.optional() }).optional(),
  requestMirror: z
    .looseObject({
      backendRef: z.looseObject({ group: groupSchema.default(''), kind: kindSchema.default('Service'), name: objectNameSchema, namespace: namespaceSchema.optional(), port: gwPortSchema.optional() }),
      percent: z.number().int().min(0).max(100).optional(),
      fraction: z.looseObject({ numerator: z.number().int().min(0).max(2147483647), denominator: z.number().int().min(1).max(2147483647).default(100) }).optional(),
    })
    .optional(),
  extensionRef: z.looseObject({ group: groupSchema, kind: kindSchema, name: objectNameSchema }).optional(),
  cors: z
    .looseObject({
      allowOrigins: z.array(z.string().min(1).max(253)).max(64).optional(),
      allowCredentials: z.boolean().optional(),
      allowMethods: z.array(z.string().min(1).max(32)).max(9).optional(),
      allowHeaders: z.array(z.string().min(1).max(256)).max(64).optional(),
      exposeHeaders: z.array(z.string().min(1).max(256)).max(64).optional(),
      maxAge: z.number().int().min(1).max(86400 * 30).optional(),
    })
    .optional(),
});
const backendRefSchema = z.looseObject({
  group: groupSchema.default(''),
  kind: kindSchema.default('Service'),
  name: objectNameSchema,
  namespace: namespaceSchema.optional(),
  port: gwPortSchema.optional(),
  weight: z.number().int().min(0).max(1000000).default(1),
  filters: z.array(filterSchema).max(16).optional(),
});
const durationSchema = z.string().regex(/^([0-9]{1,5}(h|m|s|ms)){1,4}$/, 'must be a Gateway API duration such as 10s or 1m30s');
const ruleSchema = z.looseObject({
  name: sectionNameSchema.optional(),
  matches: z.array(matchSchema).max(64).optional(),
  filters: z.array(filterSchema).max(16).optional(),
  backendRefs: z.array(backendRefSchema).max(16).optional(),
  timeouts: z.looseObject({ request: durationSchema.optional(), backendRequest: durationSchema.optional() }).optional(),
  retry: z
    .looseObject({ codes: z.array(z.number().int().min(400).max(599)).optional(), attempts: z.number().int().min(0).optional(), backoff: durationSchema.optional() })
    .optional(),
  sessionPersistence: z.unknown().optional(),
});
const specSchema = z.looseObject({
  parentRefs: z.array(parentRefSchema).max(32).default([]),
  hostnames: z.array(gwHostnameSchema).max(16).default([]),
  rules: z.array(ruleSchema).max(64).default([{}]),
});

/** The statuses nginx's proxy_next_upstream can retry on. */
export const RETRY_CODES: ReadonlySet<number> = new Set([500, 502, 503, 504, 403, 404, 429]);
/** Retries per request at most (each is another connection to a backend: a tenant's setting must stay bounded). */
export const MAX_RETRIES = 10;

/** Gateway API durations ("1h2m3s4ms") in seconds. */
export function durationSeconds(d: string): number {
  let s = 0;
  for (const [, n, u] of d.matchAll(/([0-9]+)(h|ms|m|s)/g)) s += Number(n) * (u === 'h' ? 3600 : u === 'm' ? 60 : u === 's' ? 1 : 0.001);
  return s;
}


export function normalizeHttpRoute(obj: KubeObject): CrdResult<HttpRouteRecord> {
  const r = specSchema.safeParse((obj as { spec?: unknown }).spec ?? {});
  if (!r.success) return { ok: false, reason: issuesText(r.error) };
  const spec = r.data;
  const meta = metaOf(obj);
  const problems: string[] = [];
  const rules: HttpRuleN[] = spec.rules.map((rule, i) => {
    const at = `spec.rules.${i}`;
    const matches = (rule.matches?.length ? rule.matches : [{}]).map((m, j) => {
      const path = { type: m.path?.type ?? 'PathPrefix', value: m.path?.value ?? '/' } as HttpRuleN['matches'][number]['path'];
      if (path.type === 'RegularExpression') {
        const p = regexPathProblem(path.value);
        if (p) problems.push(`${at}.matches.${j}.path.value: regular expression ${p}`);
      } else {
        const v = pathValue.safeParse(path.value);
        if (!v.success) problems.push(`${at}.matches.${j}.path.value: ${v.error.issues[0]?.message}`);
      }
      const values = (list: { type: 'Exact' | 'RegularExpression'; name: string; value: string }[] | undefined, what: string) =>
        (list ?? []).map((h, k) => {
          // A header or query value is not a path: the value subset (no leading "/", spaces allowed), as the
          // router matches it (an unanchored PCRE find on the value).
          if (h.type === 'RegularExpression') {
            const p = regexProblem(h.value);
            if (p) problems.push(`${at}.matches.${j}.${what}.${k}.value: regular expression ${p}`);
          }
          return { type: h.type, name: h.name, value: h.value };
        });
      return { path, headers: values(m.headers, 'headers'), queryParams: values(m.queryParams, 'queryParams'), ...(m.method ? { method: m.method } : {}) };
    });
    const filters: HttpFilterN[] = [];
    const plugins: string[] = [];
    (rule.filters ?? []).forEach((f, j) => {
      const fat = `${at}.filters.${j}`;
      const pf = pluginFilterOf(f, fat, problems);
      if (pf !== undefined) {
        if (pf) filters.push(pf);
      } else if (f.type === 'RequestMirror' && f.requestMirror) {
        // Several mirrors per rule (each its own copy), each of every request or of a share of them: percent, or
        // fraction (denominator 100 unless given). The API server allows one of the two, numerator ≤ denominator.
        const rm = f.requestMirror;
        const share = mirrorShareOf(rm, `${fat}.requestMirror`, problems);
        if (share !== null) filters.push({ type: 'RequestMirror', backend: backendOf(rm.backendRef, meta.namespace), ...(share ? { share } : {}) });
      } else if (f.type === 'ExtensionRef' && f.extensionRef) {
        // Portico's own Plugins (portico.dev/v1alpha1 Plugin, in the route's namespace) through the standard's hook.
        const e = f.extensionRef;
        if (e.group === 'portico.dev' && e.kind === 'Plugin') plugins.push(e.name);
        else problems.push(`${fat}.extensionRef: ${e.group || 'core'}/${e.kind} is not an extension Portico knows (portico.dev/Plugin)`);
      } else problems.push(`${fat}: filter type ${f.type} is not served by Portico (yet)`);
    });
    const backends = (rule.backendRefs ?? []).map((b, k) => {
      const out = backendOf(b, meta.namespace);
      // A backendRef's own filters run only for the requests sent to it (after the rule's): the filters Portico
      // serves as plugins. A copy per backend (RequestMirror) and Plugin objects (ExtensionRef) belong on the rule.
      const bf: HttpFilterN[] = [];
      (b.filters ?? []).forEach((f, j) => {
        const fat = `${at}.backendRefs.${k}.filters.${j}`;
        const pf = pluginFilterOf(f, fat, problems);
        if (pf !== undefined) {
          if (pf) bf.push(pf);
        } else if (f.type === 'RequestMirror' || f.type === 'ExtensionRef') problems.push(`${fat}: ${f.type} on a backendRef is not served by Portico (yet); put it in the rule's filters`);
        else problems.push(`${fat}: filter type ${f.type} is not served by Portico (yet)`);
      });
      if (bf.length) out.filters = bf;
      return out;
    });
    if (rule.sessionPersistence !== undefined) problems.push(`${at}.sessionPersistence: session persistence is not served by Portico on HTTPRoutes (yet); an Upstream with affinity does it for a Service`);
    const out: HttpRuleN = { matches, backends, filters, plugins: [...new Set(plugins)] };
    if (rule.retry) {
      // nginx retries (proxy_next_upstream) on connection errors and on these statuses only.
      const bad = (rule.retry.codes ?? []).filter((c) => !RETRY_CODES.has(c));
      if (bad.length) problems.push(`${at}.retry.codes: ${bad.join(', ')} ${bad.length > 1 ? 'are' : 'is'} not a status nginx can retry on (${[...RETRY_CODES].join(', ')})`);
      out.retry = { codes: [...new Set(rule.retry.codes ?? [])], attempts: Math.min(rule.retry.attempts ?? 1, MAX_RETRIES), ...(rule.retry.backoff ? { backoff: rule.retry.backoff } : {}) };
    }
    if (rule.name) out.name = rule.name;
    if (rule.timeouts) {
      const t: NonNullable<HttpRuleN['timeouts']> = {};
      if (rule.timeouts.request && rule.timeouts.request !== '0s') t.request = durationSeconds(rule.timeouts.request);
      if (rule.timeouts.backendRequest && rule.timeouts.backendRequest !== '0s') t.backendRequest = durationSeconds(rule.timeouts.backendRequest);
      if (Object.keys(t).length) out.timeouts = t;
    }
    return out;
  });
  if (problems.length) return { ok: false, reason: problems.join('; ') };
  return {
    ok: true,
    record: {
      ...meta,
      parents: parentsOf(spec.parentRefs, meta.namespace),
      hostnames: [...new Set(spec.hostnames)],
      rules,
    },
  };
}

/**
 * The filters Portico serves as plugin instances (header modifiers, redirect, rewrite, CORS), on a rule or on a
 * backendRef: the filter (null: refused, the problem is recorded), or undefined for the other types.
 */
function pluginFilterOf(f: z.infer<typeof filterSchema>, fat: string, problems: string[]): HttpFilterN | null | undefined {
  if (f.type === 'RequestHeaderModifier' && f.requestHeaderModifier) return { type: 'RequestHeaderModifier', ...headerModsOf(f.requestHeaderModifier) };
  if (f.type === 'ResponseHeaderModifier' && f.responseHeaderModifier) return { type: 'ResponseHeaderModifier', ...headerModsOf(f.responseHeaderModifier) };
  if (f.type === 'RequestRedirect' && f.requestRedirect) {
    const rr = f.requestRedirect;
    const p = rr.path ? pathOf(rr.path, `${fat}.requestRedirect.path`, problems) : undefined;
    return { type: 'RequestRedirect', statusCode: rr.statusCode, ...(rr.scheme ? { scheme: rr.scheme } : {}), ...(rr.hostname ? { hostname: rr.hostname } : {}), ...(rr.port ? { port: rr.port } : {}), ...(p ? { path: p } : {}) };
  }
  if (f.type === 'URLRewrite' && f.urlRewrite) {
    const p = f.urlRewrite.path ? pathOf(f.urlRewrite.path, `${fat}.urlRewrite.path`, problems) : undefined;
    return { type: 'URLRewrite', ...(f.urlRewrite.hostname ? { hostname: f.urlRewrite.hostname } : {}), ...(p ? { path: p } : {}) };
  }
  if (f.type === 'CORS' && f.cors) return corsOf(f.cors, `${fat}.cors`, problems) ?? null;
  return undefined;
}

/**
 * A RequestMirror's share of the requests: undefined for every request (neither percent nor fraction, or 100 %),
 * else numerator/denominator (0 = none); null when refused (both given, or a numerator above its denominator).
 */
function mirrorShareOf(rm: { percent?: number | undefined; fraction?: { numerator: number; denominator: number } | undefined }, at: string, problems: string[]): { numerator: number; denominator: number } | undefined | null {
  if (rm.percent !== undefined && rm.fraction) {
    problems.push(`${at}: percent and fraction are exclusive`);
    return null;
  }
  const s = rm.fraction ? { numerator: rm.fraction.numerator, denominator: rm.fraction.denominator } : rm.percent !== undefined ? { numerator: rm.percent, denominator: 100 } : undefined;
  if (!s) return undefined;
  if (s.numerator > s.denominator) {
    problems.push(`${at}.fraction: numerator must be less than or equal to denominator`);
    return null;
  }
  return s.numerator === s.denominator ? undefined : s;
}

function pathOf(p: z.infer<typeof pathModifier>, at: string, problems: string[]): { type: 'ReplaceFullPath' | 'ReplacePrefixMatch'; value: string } | undefined {
  const value = p.type === 'ReplaceFullPath' ? p.replaceFullPath : p.replacePrefixMatch;
  if (value === undefined) {
    problems.push(`${at}: ${p.type} needs ${p.type === 'ReplaceFullPath' ? 'replaceFullPath' : 'replacePrefixMatch'}`);
    return undefined;
  }
  return { type: p.type, value };
}

/** Origins as Portico's cors plugin takes them: "*", "scheme://host[:port]" or "scheme://*.domain[:port]", lower-case. */
const ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/(\*\.)?[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*(:[0-9]{1,5})?$/;
const HEADER = /^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/;
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);

/** HTTPRoute's CORS filter as the cors plugin serves it ("*" methods or headers: the preflight's are echoed). */
function corsOf(c: NonNullable<z.infer<typeof filterSchema>['cors']>, at: string, problems: string[]): Extract<HttpFilterN, { type: 'CORS' }> | undefined {
  const before = problems.length;
  const origins = (c.allowOrigins ?? []).map((o) => o.toLowerCase());
  if (!origins.length) problems.push(`${at}.allowOrigins: at least one origin is needed (no origin would be allowed)`);
  for (const o of origins) if (o !== '*' && !ORIGIN.test(o)) problems.push(`${at}.allowOrigins: ${JSON.stringify(o)} is not an origin Portico serves ("*", "scheme://host[:port]" or "scheme://*.domain[:port]")`);
  const methods = c.allowMethods ?? [];
  for (const m of methods) if (m !== '*' && !METHODS.has(m)) problems.push(`${at}.allowMethods: ${JSON.stringify(m)} is not an HTTP method`);
  const headerList = (list: string[] | undefined, what: string) => {
    for (const h of list ?? []) if (h !== '*' && !HEADER.test(h)) problems.push(`${at}.${what}: ${JSON.stringify(h)} is not a header name`);
  };
  headerList(c.allowHeaders, 'allowHeaders');
  headerList(c.exposeHeaders, 'exposeHeaders');
  if ((c.exposeHeaders ?? []).includes('*')) problems.push(`${at}.exposeHeaders: "*" is not served by Portico (list the headers)`);
  // allowCredentials with the "*" origin: Gateway API defines it (the request's origin is echoed, with credentials
  // allowed), unlike Portico's own cors Plugin, which refuses it; the route's author asked for exactly that.
  if (problems.length > before) return undefined;
  return {
    type: 'CORS',
    allowOrigins: [...new Set(origins)],
    allowMethods: methods.includes('*') ? [] : [...new Set(methods)],
    allowHeaders: (c.allowHeaders ?? []).includes('*') ? [] : [...new Set((c.allowHeaders ?? []).map((h) => h.toLowerCase()))],
    exposeHeaders: [...new Set((c.exposeHeaders ?? []).map((h) => h.toLowerCase()))],
    allowCredentials: c.allowCredentials === true,
    maxAge: c.maxAge ?? 5,
  };
}
