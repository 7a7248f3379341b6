// Route → its normalized model record (see ../crd-normalize.ts for what every CRD normalizer shares).
import { routeSpecSchema } from '../../../crds/schema/index.ts';
import type { RouteConditions } from '../../config/types.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { NormalizedRoute, RouteRuleN } from '../../model/types.ts';
import { regexPathProblem, regexProblem } from '../../values/regex-path.ts';
import { issuesText, metaOf, timeoutsOf, type CrdResult } from '../crd-normalize.ts';

export function normalizeRoute(obj: KubeObject): CrdResult<NormalizedRoute> {
  const r = routeSpecSchema.safeParse((obj as { spec?: unknown }).spec ?? {});
  if (!r.success) return { ok: false, reason: issuesText(r.error) };
  const spec = r.data;
  const problems: string[] = [];
  const rules: RouteRuleN[] = spec.rules.map((rule, i) => {
    const at = `spec.rules.${i}`;
    const matches = (rule.matches ?? [{}]).map((m, j) => {
      const type = m.path?.type ?? 'Prefix';
      let path = m.path?.value ?? '/';
      const match = type === 'Exact' ? 'exact' : type === 'Prefix' ? 'prefix' : 'regex';
      if (match === 'regex') {
        const p = regexPathProblem(path);
        if (p) problems.push(`${at}.matches.${j}.path.value: regular expression ${p}`);
      }
      if (match === 'prefix' && path.length > 1) path = path.replace(/\/+$/, '') || '/';
      const conditions: RouteConditions = {};
      if (m.methods?.length) conditions.methods = [...m.methods];
      const values = (list: { name: string; type: string; value: string }[] | undefined, what: string, lower: boolean) =>
        list?.map((h, k) => {
          if (h.type === 'RegularExpression') {
            const p = regexProblem(h.value);
            if (p) problems.push(`${at}.matches.${j}.${what}.${k}.value: regular expression ${p}`);
          }
          return { name: lower ? h.name.toLowerCase() : h.name, type: h.type === 'RegularExpression' ? ('regex' as const) : ('exact' as const), value: h.value };
        });
      if (m.headers?.length) conditions.headers = values(m.headers, 'headers', true);
      if (m.queryParams?.length) conditions.query = values(m.queryParams, 'queryParams', false);
      return Object.keys(conditions).length ? { path, match, conditions } : { path, match };
    }) as RouteRuleN['matches'];
    const out: RouteRuleN = {
      name: rule.name ?? `rule-${i}`,
      matches,
      backends: (rule.backends ?? []).map((b) => ({ service: b.service.name, port: b.service.port, weight: b.weight })),
      plugins: [...new Set([...(spec.plugins ?? []), ...(rule.plugins ?? [])])],
      websocket: rule.websocket ?? spec.websocket,
      priority: rule.priority ?? spec.priority,
    };
    const t = timeoutsOf(rule.timeouts ?? spec.timeouts);
    if (t) out.timeouts = t;
    const retries = rule.retries ?? spec.retries;
    if (retries) out.retries = { attempts: retries.attempts, on: [...(retries.on ?? [])] };
    return out;
  });
  if (problems.length) return { ok: false, reason: problems.join('; ') };
  return {
    ok: true,
    record: {
      ...metaOf(obj),
      className: spec.ingressClassName ?? null,
      hosts: [...(spec.hosts ?? [])],
      tls: (spec.tls ?? []).map((t) => ({ hosts: [...t.hosts], secretName: t.secretName })),
      rules,
    },
  };
}

// The model stores Routes with the other CRs, by kind (model.ts CrdRecords): this is their record type there.
declare module '../../model/model.ts' {
  interface CrdRecords {
    Route: NormalizedRoute;
  }
}
