// Reading an Ingress's annotations with the table (table.ts): each value through its row's schema, and every
// annotation under Portico's prefixes the table has no schema for reported as unsupported, access control first
// (access-control.ts).
import type { z } from 'zod';
import { zodMessage } from '../values/safe.ts';
import { accessControlKind } from './access-control.ts';
import { ANNOTATIONS, NGINX_PREFIX, PORTICO_PREFIX, type ParsedAnnotations } from './table.ts';

/** Annotations under Portico's prefixes that are handled outside this table (test hooks). */
const HANDLED_ELSEWHERE = new Set(['portico.dev/test-invalid-directive']);

export interface AnnotationResult {
  values: ParsedAnnotations;
  /** Invalid values: the annotation is ignored (default applies) and the user gets a Warning event. */
  errors: { annotation: string; message: string }[];
  /**
   * nginx.ingress.kubernetes.io/* and portico.dev/* annotations Portico does not implement, sorted. Each raises an
   * UnsupportedAnnotation Warning; the access-control ones (also listed in `accessControl`) make the Ingress fail
   * closed.
   */
  unsupported: string[];
  /** Unsupported annotations that restrict access, with what they ask for; the Ingress must not be served. */
  accessControl: { annotation: string; kind: string }[];
}

export function parseAnnotations(annotations: Record<string, string> | undefined): AnnotationResult {
  const out: AnnotationResult = { values: {}, errors: [], unsupported: [], accessControl: [] };
  const a = annotations ?? {};
  for (const full of Object.keys(a).sort()) {
    const prefix = full.startsWith(NGINX_PREFIX) ? NGINX_PREFIX : full.startsWith(PORTICO_PREFIX) ? PORTICO_PREFIX : null;
    if (!prefix || HANDLED_ELSEWHERE.has(full)) continue;
    const name = full.slice(prefix.length);
    if (Object.hasOwn(ANNOTATIONS, name)) continue;
    out.unsupported.push(full);
    const kind = accessControlKind(name, a[full] ?? '');
    if (kind) out.accessControl.push({ annotation: full, kind });
  }
  for (const [name, r] of Object.entries(ANNOTATIONS)) {
    const full = a[`${PORTICO_PREFIX}${name}`] !== undefined ? `${PORTICO_PREFIX}${name}` : `${NGINX_PREFIX}${name}`;
    const raw = a[full];
    if (raw === undefined) continue;
    const parsed = (r.schema as z.ZodType).safeParse(raw);
    if (parsed.success) (out.values as Record<string, unknown>)[name] = parsed.data;
    else {
      // Access control with a value Portico cannot read is not ignored: the Ingress fails closed.
      const kind = accessControlKind(name, raw);
      if (kind) out.accessControl.push({ annotation: full, kind: `${kind} with an invalid value: ${zodMessage(parsed.error)}` });
      else out.errors.push({ annotation: full, message: `${full}=${JSON.stringify(raw.slice(0, 100))}: ${zodMessage(parsed.error)}` });
    }
  }
  return out;
}
