// GRPCRoute → a model record of the HTTPRoute's shape, so one claim processor and one router serve both: a gRPC
// call is an HTTP/2 POST to "/<service>/<method>", so a method match is a path match —
//   - Exact service and method: the exact path "/<service>/<method>";
//   - Exact service only: the path prefix "/<service>/" (every method of the service);
//   - Exact method only: the regex "^/[^/]+/<method>$";
//   - RegularExpression: the regex "^/(?:<service>)/(?:<method>)$" (an omitted part matches any one segment);
//   - no method match: every call (the prefix "/").
// Header matches are HTTP header matches. Filters: RequestHeaderModifier, ResponseHeaderModifier and ExtensionRef
// (Portico Plugins); RequestMirror is refused by name (its copy would be HTTP/1.1, not gRPC). The API server allows no
// other. The API server's validation is repeated.
// Regular expressions run in the router like HTTPRoute's: anchored, and case-insensitive (nginx's `~*`, as every
// regex path Portico serves), which an Exact match is not.
import { z } from 'zod';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { HttpFilterN, HttpMatchN, HttpRouteRecord, HttpRuleN } from '../../model/gateway-api.ts';
import { regexPathProblem, regexProblem } from '../../values/regex-path.ts';
import { issuesText, metaOf, type CrdResult } from '../crd-normalize.ts';
import { backendOf, groupSchema, gwHeaderNameSchema, gwHeaderValueSchema, gwHostnameSchema, gwPortSchema, headerModsOf, headerModsSchema, kindSchema, namespaceSchema, objectNameSchema, parentRefSchema, parentsOf, sectionNameSchema } from '../gateway/schema.ts';

/** The API server's patterns for Exact service and method names. */
const SERVICE = /^\.?[a-z_][a-z_0-9]*(\.[a-z_][a-z_0-9]*)*$/i;
const METHOD = /^[A-Za-z_][A-Za-z_0-9]*$/;

const backendRef = z.looseObject({ group: groupSchema.default(''), kind: kindSchema.default('Service'), name: objectNameSchema, namespace: namespaceSchema.optional(), port: gwPortSchema.optional() });
const filterSchema = z.looseObject({
  type: z.enum(['RequestHeaderModifier', 'ResponseHeaderModifier', 'RequestMirror', 'ExtensionRef']),
  requestHeaderModifier: headerModsSchema.optional(),
  responseHeaderModifier: headerModsSchema.optional(),
  requestMirror: z
    .looseObject({
      backendRef,
      percent: z.number().int().min(0).max(100).optional(),
      fraction: z.looseObject({ numerator: z.number().int().min(0), denominator: z.number().int().min(1).default(100) }).optional(),
    })
    .optional(),
  extensionRef: z.looseObject({ group: groupSchema, kind: kindSchema, name: objectNameSchema }).optional(),
});
const matchSchema = z.looseObject({
  method: z
    .looseObject({ type: z.enum(['Exact', 'RegularExpression']).default('Exact'), service: z.string().max(1024).optional(), method: z.string().max(1024).optional() })
    .optional(),
  headers: z.array(z.looseObject({ type: z.enum(['Exact', 'RegularExpression']).default('Exact'), name: gwHeaderNameSchema, value: gwHeaderValueSchema })).max(16).optional(),
});
const ruleSchema = z.looseObject({
  name: sectionNameSchema.optional(),
  matches: z.array(matchSchema).max(64).optional(),
  filters: z.array(filterSchema).max(16).optional(),
  backendRefs: z.array(backendRef.extend({ weight: z.number().int().min(0).max(1000000).default(1), filters: z.array(z.unknown()).optional() })).max(16).optional(),
  sessionPersistence: z.unknown().optional(),
});
const specSchema = z.looseObject({
  parentRefs: z.array(parentRefSchema).max(32).default([]),
  hostnames: z.array(gwHostnameSchema).max(16).default([]),
  rules: z.array(ruleSchema).max(16).default([{}]),
});

/** A regex part: escaped when it is an exact name. */
const literal = (s: string) => s.replace(/\./g, '\\.');

/** The path match of a gRPC method match (see the file comment), or a problem. */
export function grpcPathOf(m: { type: 'Exact' | 'RegularExpression'; service?: string | undefined; method?: string | undefined } | undefined, at: string, problems: string[]): HttpMatchN['path'] {
  const any: HttpMatchN['path'] = { type: 'PathPrefix', value: '/' };
  if (!m) return any;
  const service = m.service || undefined;
  const method = m.method || undefined;
  if (!service && !method) {
    problems.push(`${at}: one or both of service and method must be given`);
    return any;
  }
  if (m.type === 'Exact') {
    if (service && !SERVICE.test(service)) problems.push(`${at}.service: ${JSON.stringify(service)} is not a gRPC service name`);
    if (method && !METHOD.test(method)) problems.push(`${at}.method: ${JSON.stringify(method)} is not a gRPC method name`);
    if (service && method) return { type: 'Exact', value: `/${service}/${method}` };
    if (service) return { type: 'PathPrefix', value: `/${service}/` };
    return { type: 'RegularExpression', value: `^/[^/]+/${literal(method!)}$` };
  }
  const value = `^/${service ? `(?:${service})` : '[^/]+'}/${method ? `(?:${method})` : '[^/]+'}$`;
  const p = regexPathProblem(value);
  if (p) problems.push(`${at}: regular expression ${p}`);
  return { type: 'RegularExpression', value };
}

export function normalizeGrpcRoute(obj: KubeObject): CrdResult<HttpRouteRecord> {
  const r = specSchema.safeParse((obj as { spec?: unknown }).spec ?? {});
  if (!r.success) return { ok: false, reason: issuesText(r.error) };
  const spec = r.data;
  const meta = metaOf(obj);
  const problems: string[] = [];
  const rules: HttpRuleN[] = spec.rules.map((rule, i) => {
    const at = `spec.rules.${i}`;
    const matches: HttpMatchN[] = (rule.matches?.length ? rule.matches : [{}]).map((m, j) => {
      const headers = (m.headers ?? []).map((h, k) => {
        if (h.type === 'RegularExpression') {
          const p = regexProblem(h.value);
          if (p) problems.push(`${at}.matches.${j}.headers.${k}.value: regular expression ${p}`);
        }
        return { type: h.type, name: h.name, value: h.value };
      });
      return { path: grpcPathOf(m.method, `${at}.matches.${j}.method`, problems), headers, queryParams: [] };
    });
    const filters: HttpFilterN[] = [];
    const plugins: string[] = [];
    (rule.filters ?? []).forEach((f, j) => {
      const fat = `${at}.filters.${j}`;
      if (f.type === 'RequestHeaderModifier' && f.requestHeaderModifier) filters.push({ type: 'RequestHeaderModifier', ...headerModsOf(f.requestHeaderModifier) });
      else if (f.type === 'ResponseHeaderModifier' && f.responseHeaderModifier) filters.push({ type: 'ResponseHeaderModifier', ...headerModsOf(f.responseHeaderModifier) });
      else if (f.type === 'RequestMirror') problems.push(`${fat}: RequestMirror on a GRPCRoute is not served by Portico (yet): its copy would not speak gRPC`);
      else if (f.type === 'ExtensionRef' && f.extensionRef) {
        const e = f.extensionRef;
        if (e.group === 'portico.dev' && e.kind === 'Plugin') plugins.push(e.name);
        else problems.push(`${fat}.extensionRef: ${e.group || 'core'}/${e.kind} is not an extension Portico knows (portico.dev/Plugin)`);
      } else problems.push(`${fat}: filter ${f.type} needs its ${f.type[0]!.toLowerCase()}${f.type.slice(1)} field`);
    });
    if (rule.sessionPersistence !== undefined) problems.push(`${at}.sessionPersistence: session persistence is not served by Portico on GRPCRoutes (yet); an Upstream with affinity does it for a Service`);
    const backends = (rule.backendRefs ?? []).map((b, k) => {
      if (b.filters?.length) problems.push(`${at}.backendRefs.${k}.filters: filters per backendRef are not served by Portico (yet)`);
      if (b.group === '' && b.kind === 'Service' && b.port === undefined) problems.push(`${at}.backendRefs.${k}.port: a Service backendRef needs a port`);
      return backendOf(b, meta.namespace);
    });
    const out: HttpRuleN = { matches, backends, filters, plugins: [...new Set(plugins)] };
    if (rule.name) out.name = rule.name;
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
      grpc: true,
    },
  };
}
