// TCPRoute, UDPRoute and TLSRoute → their model record (one shape: parentRefs, TLSRoute's hostnames, the one rule's
// backendRefs), with the API's defaults applied and its validation repeated (the v1.7.0 CRDs: exactly one rule,
// 1–16 backendRefs, a port on every Service backendRef, TLSRoute 1–1024 hostnames). The udproute and tlsroute
// folders use this normalizer too.
import { z } from 'zod';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { StreamRouteKind, StreamRouteRecord } from '../../model/gateway-api.ts';
import { issuesText, metaOf, type CrdResult } from '../crd-normalize.ts';
import { backendOf, groupSchema, gwHostnameSchema, gwPortSchema, kindSchema, namespaceSchema, objectNameSchema, parentRefSchema, parentsOf, sectionNameSchema } from '../gateway/schema.ts';

const backendRefSchema = z
  .looseObject({
    group: groupSchema.default(''),
    kind: kindSchema.default('Service'),
    name: objectNameSchema,
    namespace: namespaceSchema.optional(),
    port: gwPortSchema.optional(),
    weight: z.number().int().min(0).max(1000000).default(1),
  })
  .refine((b) => b.group !== '' || b.kind !== 'Service' || b.port !== undefined, { message: 'a Service backendRef needs a port', path: ['port'] });

const specSchema = (kind: StreamRouteKind) =>
  z.looseObject({
    parentRefs: z.array(parentRefSchema).max(32).default([]),
    hostnames: kind === 'TLSRoute' ? z.array(gwHostnameSchema).min(1).max(1024) : z.undefined({ error: `${kind} has no hostnames` }).optional(),
    rules: z
      .array(z.looseObject({ name: sectionNameSchema.optional(), backendRefs: z.array(backendRefSchema).min(1).max(16) }))
      .min(1)
      .max(1),
  });

export function normalizeStreamRoute(kind: StreamRouteKind, obj: KubeObject): CrdResult<StreamRouteRecord> {
  const r = specSchema(kind).safeParse((obj as { spec?: unknown }).spec ?? {});
  if (!r.success) return { ok: false, reason: issuesText(r.error) };
  const spec = r.data;
  const meta = metaOf(obj);
  const rule = spec.rules[0]!;
  return {
    ok: true,
    record: {
      ...meta,
      parents: parentsOf(spec.parentRefs, meta.namespace),
      hostnames: [...new Set((spec.hostnames as string[] | undefined) ?? [])],
      backends: rule.backendRefs.map((b) => backendOf(b, meta.namespace)),
      ...(rule.name ? { ruleName: rule.name } : {}),
    },
  };
}
