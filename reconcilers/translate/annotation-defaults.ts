// ingress-nginx ConfigMap keys that are the default of an annotation: its parsers of preserve-trailing-slash,
// use-port-in-redirects and service-upstream fall back to the ConfigMap's value when an Ingress does not set the
// annotation; disable-proxy-intercept-errors turns off, in its http block, the interception the ConfigMap's
// custom-http-errors asks for, which in Portico is each path's (so it is that annotation's default too). The translation applies them before anything reads the annotations (processor.ts's admit), on a
// derived record memoized per record and defaults, so the translation's memo sees a stable object.
import type { NormalizedIngress } from '../model/types.ts';
import type { ParsedAnnotations } from '../annotations/table.ts';

export interface AnnotationDefaults {
  preserveTrailingSlash: boolean;
  usePortInRedirects: boolean;
  serviceUpstream: boolean;
  disableProxyInterceptErrors: boolean;
}

const DEFAULTED = [
  ['preserve-trailing-slash', 'preserveTrailingSlash'],
  ['use-port-in-redirects', 'usePortInRedirects'],
  ['service-upstream', 'serviceUpstream'],
  ['disable-proxy-intercept-errors', 'disableProxyInterceptErrors'],
] as const;

const memo = new WeakMap<NormalizedIngress, { key: string; out: NormalizedIngress }>();

/** The Ingress with the ConfigMap's value of each of these annotations it does not set (the same record if none). */
export function withAnnotationDefaults(ing: NormalizedIngress, g: Partial<AnnotationDefaults>): NormalizedIngress {
  const values = ing.annotations as Record<string, unknown>;
  const add = DEFAULTED.filter(([ann, field]) => g[field] === true && values[ann] === undefined).map(([ann]) => ann);
  if (!add.length) return ing;
  const key = add.join(',');
  const hit = memo.get(ing);
  if (hit && hit.key === key) return hit.out;
  const annotations = { ...values } as Record<string, unknown>;
  for (const a of add) annotations[a] = true;
  const out: NormalizedIngress = { ...ing, annotations: annotations as ParsedAnnotations };
  memo.set(ing, { key, out });
  return out;
}
