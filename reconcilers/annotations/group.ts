// What an annotation group declares (reconcilers/annotations/groups/<group>.ts): its rows — one per annotation, with
// its schema, scope, risk and status (supported / difference / refused, with the difference or why in one line) —
// and how they apply: the one function that turns the parsed values into what the translation uses (a plugin spec,
// where the group becomes a plugin) and, for a plugin, the builder of its instance from that spec and the
// translation's context (the ConfigMap's status codes, timeouts...), never from the annotations again.
// table.ts concatenates the groups' rows; plugins.ts runs the groups' appliers and builders.
// Adding an annotation to a group: its row and what it does, in the group's module; a valid and an invalid value in
// table.test.ts; an ingress-nginx one also an e2e test. A new group: its module, a line in table.ts and, if it makes
// a plugin, its applier and builder in plugins.ts.
import type { z } from 'zod';
import { parsePluginConfig, type PluginConfig } from '../../crds/schema/index.ts';

export const NGINX_PREFIX = 'nginx.ingress.kubernetes.io/';
export const PORTICO_PREFIX = 'portico.dev/';

export type Scope = 'location' | 'server' | 'backend' | 'ingress';
/**
 * ingress-nginx's risk levels (annotations-risk.md); the ConfigMap's annotations-risk-level refuses every
 * annotation above it (translate/risk.ts). Portico's rows carry ingress-nginx's level for the same annotation.
 */
export type Risk = 'low' | 'medium' | 'high' | 'critical';
export const RISKS: readonly Risk[] = ['low', 'medium', 'high', 'critical'];
export const riskRank = (r: Risk): number => RISKS.indexOf(r);
/** "Critical", as ingress-nginx spells the level in its ConfigMap and documentation. */
export const riskLabel = (r: Risk): string => r[0]!.toUpperCase() + r.slice(1);

/**
 * What Portico does with an annotation: `supported` (as ingress-nginx does), `difference` (supported, with the
 * difference in one line) or `refused` (never applied: an UnsupportedAnnotation Warning, or — access control —
 * the Ingress fails closed; why in one line).
 */
export type Status = 'supported' | 'difference' | 'refused';
export const STATUSES: readonly Status[] = ['supported', 'difference', 'refused'];

interface Common {
  scope: Scope;
  /** ingress-nginx's level (annotations-risk.md); Portico's own annotations carry Portico's choice. */
  risk: Risk;
  status: Status;
  /** status difference: the difference with ingress-nginx, one line. */
  difference?: string;
  /** status refused: why, one line. */
  refusedWhy?: string;
  /** The access control it asks for (access-control.ts): when Portico cannot apply it, the Ingress fails closed. */
  access?: string;
  /** ingress-nginx's annotation (both prefixes accepted) or Portico's own (portico.dev/ only makes sense). */
  origin: 'ingress-nginx' | 'portico';
  /** Documented by ingress-nginx once, since removed from it (refused: no risk level there, Low assumed; supported: the level of its last table). */
  removed?: true;
}
/** A row Portico parses: its schema validates the value (`ANNOTATIONS` holds exactly these rows). */
export interface Row<T> extends Common {
  schema: z.ZodType<T, string>;
  description: string;
}
/** An annotation Portico does not parse: reported as unsupported, never applied. */
export interface RefusedRow extends Common {
  status: 'refused';
  refusedWhy: string;
  schema?: undefined;
}
export type CatalogueRow = Row<unknown> | RefusedRow;

interface RowOptions {
  difference?: string;
  refusedWhy?: string;
  access?: string;
  origin?: 'portico';
  /** ingress-nginx removed it since (its level then: `risk`, from the last table that had it). */
  removed?: true;
}
export const row = <T>(schema: z.ZodType<T, string>, scope: Scope, risk: Risk, description: string, o: RowOptions = {}): Row<T> => ({
  schema,
  scope,
  risk,
  description,
  status: o.refusedWhy ? 'refused' : o.difference ? 'difference' : 'supported',
  ...(o.difference ? { difference: o.difference } : {}),
  ...(o.refusedWhy ? { refusedWhy: o.refusedWhy } : {}),
  ...(o.access ? { access: o.access } : {}),
  origin: o.origin ?? 'ingress-nginx',
  ...(o.removed ? { removed: true as const } : {}),
});
export const refused = (scope: Scope, risk: Risk, why: string, o: { access?: string; removed?: true } = {}): RefusedRow => ({
  scope,
  risk,
  status: 'refused',
  refusedWhy: why,
  ...(o.access ? { access: o.access } : {}),
  origin: 'ingress-nginx',
  ...(o.removed ? { removed: true as const } : {}),
});

/** The parsed values of some rows: the schema's output for each annotation that is set and valid. */
export type Values<R> = { [K in keyof R as R[K] extends { schema: z.ZodType } ? K : never]?: R[K] extends { schema: z.ZodType } ? z.output<R[K]['schema']> : never };

/** Access control that cannot be applied: the Ingress fails closed (annotation with its prefix, what it asked for). */
export interface Closed {
  annotation: string;
  kind: string;
}
/** What a group's applier gives: its plugin specs, what is reported (Warnings), and access control that fails closed. */
export interface Applied<P> {
  plugins: P[];
  problems: string[];
  closed: Closed[];
}

/** Reads a ConfigMap ("namespace/name") from the cache; undefined when it does not exist. */
export type ConfigMapReader = (key: string) => { data?: Record<string, string> } | undefined;
/** Reads a Secret ("namespace/name") from the cache; undefined when it does not exist or was not loaded. */
export type SecretReader = (key: string) => { data?: Record<string, string> } | undefined;

/** A plugin spec that is a plugin configuration, validated by the Plugin objects' schemas (crds/schema). */
export interface ConfigPlugin {
  /** Suffix of the data-plane plugin id ("ip", "cors", "rps"...). */
  suffix: string;
  config: PluginConfig;
}

export const emptyApplied = <P>(): Applied<P> => ({ plugins: [], problems: [], closed: [] });

/**
 * Validates a plugin configuration made from annotations (`names`, without prefix) and adds it to `out`; an invalid
 * one is reported and left out, or — access control (`failClosed` names what it asks for) — fails closed.
 */
export function addConfigPlugin(out: Applied<ConfigPlugin>, suffix: string, type: string, config: Record<string, unknown>, names: string[], failClosed: string | null): void {
  const r = parsePluginConfig(type, config);
  if (r.ok) {
    out.plugins.push({ suffix, config: r.config });
    return;
  }
  const which = names.map((n) => `${NGINX_PREFIX}${n}`).join(', ');
  if (failClosed) out.closed.push({ annotation: which, kind: `${failClosed} that cannot be applied (${r.error.replace(/^config\./, '')})` });
  else out.problems.push(`annotation ignored: ${which}: ${r.error.replace(/^config\./, '')}`);
}
