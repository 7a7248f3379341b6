// Canary Ingresses: canary marks the Ingress as the canary of the one serving the same host and path; the rules
// (header, cookie, weight) are read by the translation's canary resolution.
import { row } from '../group.ts';
import { boolSchema, cookieNameSchema, headerNameSchema, headerPatternSchema, headerValueSchema, intSchema } from '../../values/safe.ts';

export const rows = {
  canary: row(boolSchema, 'ingress', 'low', 'This Ingress is a canary for the Ingress serving the same host and path'),
  'canary-weight': row(intSchema(0, 1_000_000), 'backend', 'low', 'Share of requests sent to the canary, out of canary-weight-total (changed without reload)'),
  'canary-weight-total': row(intSchema(1, 1_000_000), 'backend', 'low', 'Total for canary-weight (default 100)'),
  'canary-by-header': row(headerNameSchema, 'backend', 'medium', 'Header routing: "always" → canary, "never" → main, else weight (highest precedence)'),
  'canary-by-header-value': row(headerValueSchema, 'backend', 'medium', 'With canary-by-header: this exact value routes to the canary'),
  'canary-by-header-pattern': row(headerPatternSchema, 'backend', 'medium', 'With canary-by-header: values matching this regex route to the canary'),
  'canary-by-cookie': row(cookieNameSchema, 'backend', 'medium', 'Cookie routing: "always" → canary, "never" → main (after header, before weight)'),
};

/** Refused together (translate/risk.ts); not `canary` itself (Low, never refused): a canary without its rules gets no traffic, never the main's. */
export const refusedTogether = [['canary-by-header', 'canary-by-header-value', 'canary-by-header-pattern', 'canary-by-cookie', 'canary-weight', 'canary-weight-total']] as const;
