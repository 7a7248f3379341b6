// ingress-nginx's two switches for risky annotations, applied by the translation (they come from the ConfigMap,
// so they cannot be decided when an Ingress is normalized):
//   annotations-risk-level (Low | Medium | High | Critical, default High as in ingress-nginx ≥ 1.12): an annotation
//     whose risk (table.ts, ingress-nginx's levels) is above it is refused — not applied, with a RiskyAnnotation
//     Warning naming the annotation, its risk and the setting;
//   allow-snippet-annotations (default false, as in ingress-nginx ≥ 1.9): the snippets (Critical: also
//     modsecurity-snippet) are refused unless it is "true" (and the level is Critical).
// ingress-nginx rejects the whole Ingress in both cases (its admission webhook refuses it, its sync loop skips it);
// Portico serves the rest of the Ingress, except where leaving an annotation out would open access: refused access
// control (an IP list, basic auth, a snippet with access rules) makes the Ingress fail closed, and the annotations
// of a group that only make sense together (CORS, the canary rules, a redirect and its code, basic auth) are
// refused together, so that e.g. a refused cors-allow-origin never turns into CORS for any origin.
// The compiled snippets' own refusals (snippets.ts) are reported here too, once the snippets are allowed; an allowed
// auth-snippet is handed to the auth-url's external-auth spec, and a refused one (with auth-url) fails closed.
import type { NormalizedIngress } from '../model/types.ts';
import { accessControlKind } from '../annotations/access-control.ts';
import { annotationPlugins, type AnnotationPlugin } from '../annotations/plugins.ts';
import { allowedSnippets, SNIPPET_ANNOTATIONS, type SnippetPlugin } from '../annotations/groups/snippets.ts';
import { SNIPPET_GATED } from '../annotations/groups/modsecurity.ts';
import { AUTH_TLS_ANNOTATIONS } from '../annotations/auth-tls.ts';
import { rows as basicAuthRows } from '../annotations/groups/basic-auth.ts';
import { ANNOTATIONS, NGINX_PREFIX, REFUSED_TOGETHER, RISKS, riskLabel, riskRank, type AnnotationName, type ParsedAnnotations, type Risk } from '../annotations/table.ts';

export interface RiskSettings {
  /** ConfigMap allow-snippet-annotations. */
  allowSnippetAnnotations: boolean;
  /** ConfigMap annotations-risk-level. */
  annotationsRiskLevel: Risk;
}

export interface Refusal {
  /** Event reason: RiskyAnnotation (refused by the ConfigMap's switches) or InvalidSnippet (not on the allowlist). */
  reason: 'RiskyAnnotation' | 'InvalidSnippet';
  message: string;
}

// Annotations refused together (REFUSED_TOGETHER, from their groups): partial application would change their
// meaning (or loosen it).
const BASIC_AUTH = new Set<string>(Object.keys(basicAuthRows));
const AUTH_TLS = new Set<string>(AUTH_TLS_ANNOTATIONS);
// modsecurity-snippet is gated as the others (raw ModSecurity text in ingress-nginx); its allowlist is modsecurity.ts.
const SNIPPETS = new Set<string>([...SNIPPET_ANNOTATIONS, ...SNIPPET_GATED]);

const refusals = new WeakMap<NormalizedIngress, Refusal[]>();
const memo = new WeakMap<NormalizedIngress, { key: string; out: NormalizedIngress }>();

/** The RiskyAnnotation / InvalidSnippet Warnings of a record gateAnnotations returned. */
export function annotationRefusals(ing: NormalizedIngress): readonly Refusal[] {
  return refusals.get(ing) ?? [];
}

const isSnippetPlugin = (p: AnnotationPlugin): p is SnippetPlugin => 'snippets' in p;

/**
 * The Ingress as the ConfigMap's switches let it be applied: the same record when nothing is refused, else a
 * derived one (memoized per record and settings, so the translation's memo sees a stable object) without the
 * refused annotations and their plugins, with refused access control added to `accessControl` (fail closed).
 * A snippet plugin that survives is marked `allowed`; annotationInstances runs only those.
 */
export function gateAnnotations(ing: NormalizedIngress, settings: RiskSettings): NormalizedIngress {
  // A snapshot made without these keys (an older caller) gets ingress-nginx's defaults, never "refuse everything".
  const s: RiskSettings = {
    allowSnippetAnnotations: settings.allowSnippetAnnotations === true,
    annotationsRiskLevel: RISKS.includes(settings.annotationsRiskLevel) ? settings.annotationsRiskLevel : 'high',
  };
  const snippetPlugin = ing.annotationPlugins.find(isSnippetPlugin);
  const values = ing.annotations as Record<string, unknown>;
  const present = (Object.keys(ANNOTATIONS) as AnnotationName[]).filter((n) => values[n] !== undefined);
  const level = riskRank(s.annotationsRiskLevel);
  const over = present.filter((n) => riskRank(ANNOTATIONS[n].risk) > level);
  const snippetsOff = !s.allowSnippetAnnotations && present.some((n) => SNIPPETS.has(n));
  if (!over.length && !snippetsOff && !snippetPlugin) return ing;
  const key = `${s.allowSnippetAnnotations}/${s.annotationsRiskLevel}`;
  const hit = memo.get(ing);
  if (hit && hit.key === key) return hit.out;

  const out: Refusal[] = [];
  const refused = new Map<AnnotationName, string>(); // name → why
  const setting = `annotations-risk-level is ${riskLabel(s.annotationsRiskLevel)}`;
  for (const n of over) refused.set(n, `the ConfigMap's ${setting}`);
  for (const g of REFUSED_TOGETHER) {
    const hitIn = g.find((n) => refused.has(n) && !SNIPPETS.has(n));
    if (!hitIn) continue;
    for (const n of g) if (values[n] !== undefined && !refused.has(n)) refused.set(n, `it belongs with ${NGINX_PREFIX}${hitIn}, which is refused (${refused.get(hitIn)})`);
  }
  if (!s.allowSnippetAnnotations) {
    for (const n of present) {
      if (!SNIPPETS.has(n)) continue;
      const also = refused.has(n) ? ` (and its ${setting})` : '';
      refused.set(n, `the ConfigMap does not set allow-snippet-annotations: "true"${also}; snippets also need annotations-risk-level: Critical`);
    }
  }
  const accessControl = [...ing.accessControl];
  for (const [n, why] of refused) {
    const full = `${NGINX_PREFIX}${n}`;
    out.push({ reason: 'RiskyAnnotation', message: `annotation ${full} (risk ${riskLabel(ANNOTATIONS[n].risk)}) is refused and not applied: ${why}` });
    // auth-snippet restricts nothing without auth-url; with it, the auth service would decide without what it sets.
    const kind = n === 'auth-snippet' && values['auth-url'] === undefined ? null : accessControlKind(n, typeof values[n] === 'string' ? (values[n] as string) : '');
    if (kind) accessControl.push({ annotation: full, kind: `${kind}, refused by the ConfigMap (risk ${riskLabel(ANNOTATIONS[n].risk)})` });
  }

  const kept: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) if (!refused.has(k as AnnotationName)) kept[k] = v;
  let plugins = ing.annotationPlugins;
  if ([...refused.keys()].some((n) => !SNIPPETS.has(n) && !BASIC_AUTH.has(n) && !AUTH_TLS.has(n))) {
    // Recompute the plugins of the annotations that are left (without the snippets, handled below); basic auth and
    // client certificates read Secrets, so theirs are kept as they are.
    const rest: Record<string, unknown> = { ...kept };
    for (const n of SNIPPETS) delete rest[n];
    // What was read with a Secret or ConfigMap cannot be computed again here (no reader): basic/digest auth, client
    // certificates and custom-headers are kept as they were, unless refused themselves. (auth-proxy-set-headers
    // needs auth-url, High risk: a level that refuses another non-snippet annotation refuses auth-url too.)
    const withReads = ing.annotationPlugins.filter((p) => 'basicAuth' in p || 'digestAuth' in p || 'clientCert' in p || ('customHeaders' in p && !refused.has('custom-headers' as AnnotationName)));
    plugins = [...annotationPlugins(rest as ParsedAnnotations).plugins, ...withReads];
  } else plugins = plugins.filter((p) => !isSnippetPlugin(p));
  if ([...refused.keys()].some((n) => BASIC_AUTH.has(n))) plugins = plugins.filter((p) => !('basicAuth' in p) && !('digestAuth' in p));
  if ([...refused.keys()].some((n) => AUTH_TLS.has(n))) plugins = plugins.filter((p) => !('clientCert' in p));

  if (snippetPlugin) {
    const allowed = allowedSnippets(snippetPlugin.snippets, (n) => refused.has(n as AnnotationName));
    for (const r of allowed.refusals) {
      const full = `${NGINX_PREFIX}${r.annotation}`;
      out.push({ reason: 'InvalidSnippet', message: `annotation ${full} is refused: ${r.message}` });
      const raw = values[r.annotation];
      const kind = r.annotation === 'auth-snippet' && values['auth-url'] === undefined ? null : accessControlKind(r.annotation, typeof raw === 'string' ? raw : '');
      if (kind) accessControl.push({ annotation: full, kind: `${kind} in a snippet Portico refused` });
    }
    if (allowed.plugin) plugins = [...plugins, allowed.plugin];
    // The auth-snippet goes with auth-url's subrequest: its external-auth spec carries it (a new object: the
    // record's own plugins are shared with other settings' gates).
    const authSnippet = allowed.auth;
    if (authSnippet?.length) plugins = plugins.map((p) => ('externalAuth' in p ? { ...p, externalAuth: { ...p.externalAuth, snippet: authSnippet } } : p));
  }
  const result: NormalizedIngress = { ...ing, annotations: kept as ParsedAnnotations, annotationPlugins: plugins, accessControl };
  refusals.set(result, out);
  memo.set(ing, { key, out: result });
  return result;
}
