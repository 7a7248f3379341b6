// What one of Portico's CRDs (portico.dev/v1alpha1) is made of: its names, description, spec and status schemas,
// printer columns. Each kind's schema module (crds/schema/<kind>.ts) exports its definition; the kind registry
// (reconcilers/kinds/registry.ts) lists the CRD kinds, and crds/generate.ts writes crds/<plural>.yaml from their
// definitions, in registry order.
import type { z } from 'zod';

export const GROUP = 'portico.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const CATEGORY = 'portico';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
}

export interface CrdDefinition {
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  /** Top-level description of the resource (kubectl explain <kind>). */
  description: string;
  spec: z.ZodType;
  status: z.ZodType;
  printerColumns: PrinterColumn[];
}

/** The printer column of a status condition (Accepted, Programmed...). */
export const conditionColumn = (type: string): PrinterColumn => ({
  name: type,
  type: 'string',
  jsonPath: `.status.conditions[?(@.type=="${type}")].status`,
  description: `Status of the ${type} condition`,
});

/** The last printer column of every CRD. */
export const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };
