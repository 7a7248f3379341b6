// Building blocks shared by Portico's CRD schemas (portico.dev/v1alpha1). The zod schemas in this directory are
// the single source of truth: the controller validates objects with them and crds/generate.ts turns them into the
// CRDs' structural OpenAPI schemas. Every pattern here is written so that JavaScript and Go's RE2 (which the
// apiserver uses for `pattern`) read it the same way: no lookaround, no backreferences.
//
// Cross-field rules are declared once with `crossField()`: the same rule becomes a zod refinement (for the
// controller) and a CEL `x-kubernetes-validations` entry (for the apiserver). Uniqueness of list entries is
// declared with `setList()` / `mapList()`: a zod refinement plus `x-kubernetes-list-type`.
import { z } from 'zod';

/** A CEL rule for `x-kubernetes-validations`. */
export interface CelRule {
  rule: string;
  message: string;
  /** JSON path (from the node carrying the rule) of the field the apiserver reports, e.g. `.tls`. */
  fieldPath?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
}

declare module 'zod' {
  interface GlobalMeta {
    /** CEL rules the generator emits as `x-kubernetes-validations` on this node. */
    cel?: CelRule[];
    /** `x-kubernetes-list-type` of an array. */
    listType?: 'atomic' | 'set' | 'map';
    /** `x-kubernetes-list-map-keys` of a `listType: map` array. */
    listMapKeys?: string[];
  }
}

/** JSON path segment for CEL's fieldPath: `.name`. */
const fieldPathOf = (path: (string | number)[]): string => path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('');

export interface CrossFieldRule<T> {
  /** The rule in CEL, evaluated by the apiserver on the defaulted object (`self` = this node). */
  cel: string;
  /** The same rule in TypeScript, evaluated by zod on the parsed (defaulted) value. */
  check: (value: T) => boolean;
  message: string;
  /** Field (relative to this node) the message is reported on, in both zod and the apiserver. */
  path?: (string | number)[];
}

/** Attaches rules that span fields: a zod refinement and a CEL rule, with the same message. */
export function crossField<S extends z.ZodType>(schema: S, rules: CrossFieldRule<z.output<S>>[]): S {
  const refined = schema.superRefine((value, ctx) => {
    for (const r of rules) {
      if (!r.check(value as z.output<S>)) ctx.addIssue({ code: 'custom', message: r.message, path: r.path ?? [] });
    }
  }) as unknown as S;
  const existing = z.globalRegistry.get(schema)?.cel ?? [];
  const cel: CelRule[] = rules.map((r) => ({
    rule: r.cel,
    message: r.message,
    ...(r.path && r.path.length > 0 ? { fieldPath: fieldPathOf(r.path) } : {}),
  }));
  return refined.meta({ cel: [...existing, ...cel] });
}

/** A list whose entries must be unique (`x-kubernetes-list-type: set`). Entries must be scalars. */
export function setList<S extends z.ZodType>(item: S, maxItems: number) {
  return z
    .array(item)
    .max(maxItems)
    .superRefine((list, ctx) => {
      const seen = new Set<unknown>();
      list.forEach((v, i) => {
        if (seen.has(v)) ctx.addIssue({ code: 'custom', message: `duplicate entry ${JSON.stringify(v)}`, path: [i] });
        seen.add(v);
      });
    })
    .meta({ listType: 'set' });
}

/** A list of objects keyed by one required field (`x-kubernetes-list-type: map`): no two entries share the key. */
export function mapList<S extends z.ZodObject, K extends keyof z.output<S> & string>(item: S, key: K, maxItems: number) {
  return z
    .array(item)
    .max(maxItems)
    .superRefine((list, ctx) => {
      const seen = new Set<unknown>();
      list.forEach((v, i) => {
        const k = (v as Record<string, unknown>)[key];
        if (seen.has(k)) ctx.addIssue({ code: 'custom', message: `duplicate ${key} ${JSON.stringify(k)}`, path: [i, key] });
        seen.add(k);
      });
    })
    .meta({ listType: 'map', listMapKeys: [key] });
}

// ---- patterns (JavaScript and RE2 alike) ----

const LABEL = '[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?';
// Subdomains as the API server checks them: at most 253 characters, no limit of their own on each label.
const SUB_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
export const DNS1123_LABEL = new RegExp(`^${LABEL}$`);
export const DNS1123_SUBDOMAIN = new RegExp(`^${SUB_LABEL}(\\.${SUB_LABEL})*$`);
/** A host name as Ingress takes it: a lower-case DNS name, or `*.` followed by one (the `*` is one label). */
export const HOST = new RegExp(`^(\\*\\.)?${SUB_LABEL}(\\.${SUB_LABEL})*$`);
/** RFC 7230 token (header names; RFC 6265 cookie names use the same alphabet). */
export const TOKEN = /^[!#$%&'*+.^_\x60|~0-9A-Za-z-]+$/;
/** Printable ASCII including space: no CR, LF or other control characters. */
export const PRINTABLE = /^[ -~]*$/;
/** Printable ASCII without space. */
export const VISIBLE = /^[!-~]+$/;
/** An absolute URL path: starts with "/", only RFC 3986 path characters (and %-escapes). */
export const URL_PATH = /^\/[A-Za-z0-9\/._~%!$&'()*+,;=:@-]*$/;
/** A query parameter name: RFC 3986 unreserved characters, %-escapes and brackets (`a[]`). */
export const QUERY_NAME = /^[A-Za-z0-9._~%\[\]-]+$/;
export const DURATION = /^[0-9]{1,6}(ms|s|m)$/;

// ---- scalar schemas ----

export const dnsLabel = () => z.string().min(1).max(63).regex(DNS1123_LABEL, 'must be a DNS label: lower-case letters, digits and "-", starting and ending with a letter or digit');
/** A name of a Kubernetes object (DNS-1123 subdomain, as object names are). */
export const objectName = () => z.string().min(1).max(253).regex(DNS1123_SUBDOMAIN, 'must be a lower-case DNS subdomain (letters, digits, "-" and ".")');
/** A Service name: a DNS-1123 label (Kubernetes 1.36 accepts a leading digit; older API servers a DNS-1035 label, a subset). */
export const serviceName = dnsLabel;
export const host = () => z.string().min(1).max(253).regex(HOST, 'must be a lower-case DNS name, optionally prefixed with "*." (wildcard of one label)');
export const dnsName = () => z.string().min(1).max(253).regex(DNS1123_SUBDOMAIN, 'must be a lower-case DNS name');
export const headerName = () => z.string().min(1).max(256).regex(TOKEN, 'must be an HTTP token (RFC 7230): letters, digits and !#$%&\'*+-.^_`|~');
export const headerValue = () => z.string().max(4096).regex(PRINTABLE, 'must be printable ASCII (space allowed, no CR/LF or other control characters)');
export const queryParamName = () => z.string().min(1).max(256).regex(QUERY_NAME, 'must be letters, digits, "._~-", "[]" or %-escapes');
export const urlPath = () => z.string().min(1).max(1024).regex(URL_PATH, 'must start with "/" and contain only URL path characters (RFC 3986; %-escape others)');
export const port = () => z.int().min(1).max(65535);
export const duration = () => z.string().max(8).regex(DURATION, 'must be a duration: up to 6 digits followed by ms, s or m (e.g. "100ms", "5s", "2m")');

/** Parses a duration ("100ms", "5s", "2m") into milliseconds. */
export function durationMs(d: string): number {
  const m = DURATION.exec(d);
  if (!m) throw new Error(`not a duration: ${d}`);
  const n = Number(d.slice(0, d.length - m[1]!.length));
  return m[1] === 'ms' ? n : m[1] === 's' ? n * 1000 : n * 60_000;
}

// ---- shared objects ----

export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE'] as const;
export const httpMethod = () => z.enum(HTTP_METHODS);

export const timeoutsSchema = z
  .strictObject({
    connect: duration().optional().describe('Time to establish the TCP (and TLS) connection to a backend, e.g. "5s". Absent: the controller\'s global proxy-connect-timeout.'),
    read: duration().optional().describe('Longest wait between two reads of the backend\'s response, e.g. "60s". Absent: the global proxy-read-timeout.'),
    send: duration().optional().describe('Longest wait between two writes of the request to the backend, e.g. "60s". Absent: the global proxy-send-timeout.'),
  })
  .describe('Proxy timeouts for this traffic. Durations are an integer followed by ms, s or m ("100ms", "5s", "2m").');
export type Timeouts = z.output<typeof timeoutsSchema>;

export const RETRY_ON = ['error', 'timeout', 'http_500', 'http_502', 'http_503', 'http_504', 'http_429', 'non_idempotent'] as const;
export const retriesSchema = z
  .strictObject({
    attempts: z.int().min(0).max(10).describe('How many more backends to try after the first one failed (0 = no retry).'),
    on: setList(z.enum(RETRY_ON), RETRY_ON.length)
      .optional()
      .describe('Which failures are retried (as nginx proxy_next_upstream): error, timeout, http_5xx codes, http_429; non_idempotent also retries POST/PATCH/LOCK requests. Absent: error and timeout.'),
  })
  .describe('Retrying a failed request on another backend endpoint.');
export type Retries = z.output<typeof retriesSchema>;

/** A reference to a Service in the same namespace, with a port. */
export const servicePortRefSchema = z
  .strictObject({
    name: serviceName().describe('Name of a Service in the same namespace.'),
    port: port().describe('Service port number (spec.ports[].port of the Service, not the target port).'),
  })
  .describe('A Service in the same namespace and one of its ports.');

/** A reference to a Secret in the same namespace. */
export const secretRefSchema = z
  .strictObject({ name: objectName().describe('Name of a Secret in the same namespace.') })
  .describe('A Secret in the same namespace.');

// ---- status ----

export const CONDITION_TYPES = ['Accepted', 'Programmed', 'ResolvedRefs'] as const;

const CONDITION_TYPE = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/;
const CONDITION_REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;

export const conditionSchema = z
  .strictObject({
    type: z
      .string()
      .min(1)
      .max(316)
      .regex(CONDITION_TYPE)
      .describe('Condition type. Portico sets Accepted (the spec is valid and taken), ResolvedRefs (every referenced object exists) and Programmed (the configuration is live in the data plane).'),
    status: z.enum(['True', 'False', 'Unknown']).describe('True, False or Unknown.'),
    observedGeneration: z.int().min(0).optional().describe('metadata.generation of the object this condition was computed from; older than metadata.generation means the condition is stale.'),
    lastTransitionTime: z.iso.datetime({ offset: true }).describe('When the condition last changed status (RFC 3339).'),
    reason: z.string().min(1).max(1024).regex(CONDITION_REASON).describe('CamelCase reason for the last transition, for programs (e.g. InvalidConfig, BackendNotFound).'),
    message: z.string().max(32768).describe('Human-readable detail, e.g. which field is invalid and why.'),
  })
  .describe('One aspect of the object\'s state, as in metav1.Condition.');
export type Condition = z.output<typeof conditionSchema>;

export const statusSchema = z
  .strictObject({
    observedGeneration: z.int().min(0).optional().describe('metadata.generation the controller last processed.'),
    conditions: mapList(conditionSchema, 'type', 8)
      .optional()
      .describe('Current state, one entry per condition type: Accepted, ResolvedRefs, Programmed. Written by the controller.'),
  })
  .describe('Observed state, written by Portico (status subresource).');
export type Status = z.output<typeof statusSchema>;
