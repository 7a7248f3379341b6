// Zod schemas of the Gateway API fields Portico reads, with the API server's own validation (the v1.7.0 CRDs'
// patterns and limits), so what the API server admits Portico accepts, and what reaches nginx is checked again.
// Unknown fields are let through (passthrough): the CRDs are upstream's and grow; a field Portico does not serve is
// reported by the normalizer that reads the object (never ignored silently).
import { z } from 'zod';
import { GATEWAY_GROUP, isTrustBundleRef, type BackendRefN, type ParentRefN } from '../../model/gateway-api.ts';

/** RFC 1123 subdomain, optionally with a leading "*." (Gateway API's Hostname). */
export const gwHostnameSchema = z
  .string()
  .min(1)
  .max(253)
  .regex(/^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, 'must be a lower-case DNS name, optionally starting with "*."');

/** Object names: DNS subdomains (Gateways, Services, Secrets...). */
export const objectNameSchema = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a lower-case DNS subdomain');
export const namespaceSchema = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS label');
export const sectionNameSchema = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, 'must be a DNS subdomain');
export const groupSchema = z
  .string()
  .max(253)
  .regex(/^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, 'must be an API group');
export const kindSchema = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$/, 'must be a kind name');
/**
 * A caCertificateRef (BackendTLSPolicy's LocalObjectReference, a Gateway frontend validation's ObjectReference with
 * its namespace): group, kind and name (ObjectName: 1-253 characters), an object name — or a ClusterTrustBundle's,
 * which may hold colons (a bundle of a signer is named "<signer name with / as :>:<name>").
 */
export const caCertificateRefSchema = z
  .looseObject({
    group: groupSchema,
    kind: kindSchema,
    name: z
      .string()
      .min(1)
      .max(253)
      .regex(/^[a-z0-9]([-a-z0-9.:]*[a-z0-9])?$/, "must be a lower-case DNS subdomain (a ClusterTrustBundle's may hold colons)"),
    namespace: namespaceSchema.optional(),
  })
  .refine((r) => isTrustBundleRef(r) || !r.name.includes(':'), { message: "must be a lower-case DNS subdomain (only a ClusterTrustBundle's name may hold colons)", path: ['name'] });
export const gwPortSchema = z.number().int().min(1).max(65535);

export const labelSelectorSchema = z.looseObject({
  matchLabels: z.record(z.string(), z.string()).optional(),
  matchExpressions: z
    .array(z.looseObject({ key: z.string(), operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']), values: z.array(z.string()).optional() }))
    .optional(),
});

/** Header names (RFC 7230 tokens, Gateway API's HTTPHeaderName). */
export const gwHeaderNameSchema = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/, 'must be an HTTP header name');
/** Header values Portico passes to the data plane: printable ASCII (no control characters). */
export const gwHeaderValueSchema = z
  .string()
  .min(1)
  .max(4096)
  .regex(/^[\x20-\x7e\t]*$/, 'must be printable ASCII');

/** A route's parentRef (CommonRouteSpec), with the API's defaults: group and kind of a Gateway. */
export const parentRefSchema = z.looseObject({
  group: groupSchema.default(GATEWAY_GROUP),
  kind: kindSchema.default('Gateway'),
  namespace: namespaceSchema.optional(),
  name: objectNameSchema,
  sectionName: sectionNameSchema.optional(),
  port: gwPortSchema.optional(),
});

/** A route's parentRefs as the model keeps them (namespace defaulted to the route's). */
export function parentsOf(refs: readonly z.infer<typeof parentRefSchema>[], ns: string): ParentRefN[] {
  return refs.map((p) => ({ group: p.group, kind: p.kind, namespace: p.namespace ?? ns, name: p.name, ...(p.sectionName ? { sectionName: p.sectionName } : {}), ...(p.port ? { port: p.port } : {}) }));
}

/** A backendRef as the model keeps it (namespace defaulted to the route's; weight 1 unless given). */
export function backendOf(b: { group: string; kind: string; name: string; namespace?: string | undefined; port?: number | undefined; weight?: number | undefined }, ns: string): BackendRefN {
  return { group: b.group, kind: b.kind, namespace: b.namespace ?? ns, name: b.name, ...(b.port !== undefined ? { port: b.port } : {}), weight: b.weight ?? 1 };
}

/** RequestHeaderModifier / ResponseHeaderModifier (HTTPRoute, GRPCRoute). */
export const headerModsSchema = z.looseObject({
  set: z.array(z.looseObject({ name: gwHeaderNameSchema, value: z.string().max(4096).regex(/^[\x20-\x7e\t]*$/, 'must be printable ASCII') })).max(16).optional(),
  add: z.array(z.looseObject({ name: gwHeaderNameSchema, value: z.string().max(4096).regex(/^[\x20-\x7e\t]*$/, 'must be printable ASCII') })).max(16).optional(),
  remove: z.array(gwHeaderNameSchema).max(16).optional(),
});

export function headerModsOf(m: z.infer<typeof headerModsSchema>): { set: { name: string; value: string }[]; add: { name: string; value: string }[]; remove: string[] } {
  return { set: (m.set ?? []).map((h) => ({ name: h.name, value: h.value })), add: (m.add ?? []).map((h) => ({ name: h.name, value: h.value })), remove: [...(m.remove ?? [])] };
}
