// The zod → CRD converter: Portico's CustomResourceDefinitions from the zod schemas in crds/schema/ (the source of
// truth), and the YAML they are written as (crds/generate.ts writes the files).
//
// The converter walks zod 4's schema definitions (`schema._zod.def`) and emits a Kubernetes *structural* schema:
// every node has a type, there is no $ref/anyOf/oneOf/allOf, and rules spanning fields are CEL
// (`x-kubernetes-validations`) taken from the schemas' metadata (see crossField() in crds/schema/common.ts). A
// construct it cannot express faithfully (a transform, a non-literal union, a refinement without a CEL or
// list-type counterpart, two regexes on one string, a regex Go's RE2 would read differently) is an error, not a
// silent loosening.
import { z } from 'zod';
import type { CelRule } from './schema/common.ts';
import { GROUP, VERSION, CATEGORY, type CrdDefinition } from './schema/definition.ts';

/** A node of the emitted OpenAPI v3 schema (apiextensions.k8s.io/v1 JSONSchemaProps). */
export type SchemaNode = { [key: string]: unknown };

// Output key order (anything else is a bug in the converter).
const KEY_ORDER = [
  'description',
  'type',
  'format',
  'enum',
  'default',
  'minimum',
  'exclusiveMinimum',
  'maximum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'items',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'minProperties',
  'maxProperties',
  'properties',
  'required',
  'additionalProperties',
  'nullable',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-validations',
];

function ordered(node: SchemaNode, where: string): SchemaNode {
  const out: SchemaNode = {};
  for (const k of KEY_ORDER) if (node[k] !== undefined) out[k] = node[k];
  const extra = Object.keys(node).filter((k) => !KEY_ORDER.includes(k) && node[k] !== undefined);
  if (extra.length) throw new Error(`${where}: converter produced unknown keys ${extra.join(', ')}`);
  return out;
}

/** Metadata collected while unwrapping optional/default/... layers; the outermost layer wins. */
interface Collected {
  description?: string;
  cel: CelRule[];
  listType?: string;
  listMapKeys?: string[];
  optional: boolean;
  hasDefault: boolean;
  default?: unknown;
  nullable: boolean;
}

// zod's internal definition shapes, as far as the converter reads them.
type Def = { type: string; [k: string]: unknown };
type Check = { _zod: { def: { check: string; [k: string]: unknown } } };
const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;
const checksOf = (d: Def): Check['_zod']['def'][] => ((d.checks as Check[] | undefined) ?? []).map((c) => c._zod.def);

function collect(schema: z.ZodType): { inner: z.ZodType; meta: Collected } {
  const meta: Collected = { cel: [], optional: false, hasDefault: false, nullable: false };
  let cur = schema;
  for (;;) {
    const m = z.globalRegistry.get(cur);
    if (m) {
      if (meta.description === undefined && typeof m.description === 'string') meta.description = m.description;
      if (meta.listType === undefined && m.listType) meta.listType = m.listType;
      if (meta.listMapKeys === undefined && m.listMapKeys) meta.listMapKeys = m.listMapKeys;
      for (const r of m.cel ?? []) if (!meta.cel.some((x) => x.rule === r.rule)) meta.cel.push(r);
    }
    const d = defOf(cur);
    if (d.type === 'optional') meta.optional = true;
    else if (d.type === 'default') {
      if (!meta.hasDefault) {
        meta.hasDefault = true;
        meta.default = structuredClone(d.defaultValue);
      }
      meta.optional = true;
    } else if (d.type === 'nullable') meta.nullable = true;
    else if (d.type !== 'readonly') break; // anything else (pipe, transform, ...) is refused by toStructural
    cur = d.innerType as z.ZodType;
  }
  return { inner: cur, meta };
}

/** A JavaScript RegExp as a pattern Go's regexp (RE2) reads the same way, or an error. */
export function goPattern(re: RegExp, where: string): string {
  const src = re.source;
  if (/\(\?[=!]|\(\?<[=!]/.test(src)) throw new Error(`${where}: pattern ${src} uses lookaround, which Kubernetes (RE2) does not support`);
  if (/\\[1-9]|\\k</.test(src)) throw new Error(`${where}: pattern ${src} uses a backreference, which RE2 does not support`);
  if (/\\[cu]|\\x(?![0-9a-fA-F]{2})/.test(src)) throw new Error(`${where}: pattern ${src} uses a JavaScript-only escape`);
  let flags = '';
  for (const f of re.flags) {
    if (f === 'i' || f === 'm' || f === 's') flags += f;
    else if (f !== 'u' && f !== 'v') throw new Error(`${where}: regex flag ${f} has no RE2 equivalent`);
  }
  return flags ? `(?${flags})${src}` : src;
}

function literalType(values: unknown[], where: string): string {
  const types = new Set(values.map((v) => (typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v)));
  if (types.size !== 1) throw new Error(`${where}: an enum mixes types (${[...types].join(', ')})`);
  const t = [...types][0]!;
  if (t !== 'string' && t !== 'integer' && t !== 'number' && t !== 'boolean') throw new Error(`${where}: literal of type ${t} is not expressible`);
  return t;
}

/** Literal values of an enum/literal/union-of-literals, or undefined when the schema is not one. */
function literalValues(s: z.ZodType): unknown[] | undefined {
  const d = defOf(s);
  if (d.type === 'enum') return Object.values(d.entries as Record<string, unknown>);
  if (d.type === 'literal') return d.values as unknown[];
  if (d.type === 'union') {
    const all: unknown[] = [];
    for (const o of d.options as z.ZodType[]) {
      if (z.globalRegistry.get(o)) return undefined;
      const v = literalValues(o);
      if (!v) return undefined;
      all.push(...v);
    }
    return all;
  }
  return undefined;
}

const SAFE_MIN = Number.MIN_SAFE_INTEGER;
const SAFE_MAX = Number.MAX_SAFE_INTEGER;

/** Converts one zod schema to a structural schema node. `where` is the field path, for errors; `isItem`: a list's items. */
export function toStructural(schema: z.ZodType, where = 'spec', isItem = false): { node: SchemaNode; optional: boolean } {
  const { inner, meta } = collect(schema);
  const d = defOf(inner);
  const node: SchemaNode = {};
  const custom = checksOf(d).filter((c) => c.check === 'custom');
  if (custom.length > 0 && meta.cel.length === 0 && meta.listType !== 'set' && meta.listType !== 'map') {
    throw new Error(`${where}: a zod refinement has no CEL counterpart; declare it with crossField() (or setList()/mapList())`);
  }

  const lit = literalValues(inner);
  if (lit) {
    node.type = literalType(lit, where);
    node.enum = lit;
  } else {
    switch (d.type) {
      case 'string': {
        node.type = 'string';
        if (d.format === 'datetime') node.format = 'date-time';
        else if (d.format !== undefined) throw new Error(`${where}: string format ${String(d.format)} is not supported`);
        const patterns: string[] = [];
        for (const c of checksOf(d)) {
          if (c.check === 'min_length') node.minLength = Math.max(Number(c.minimum), Number(node.minLength ?? 0));
          else if (c.check === 'max_length') node.maxLength = Math.min(Number(c.maximum), Number(node.maxLength ?? Infinity));
          else if (c.check === 'length_equals') node.minLength = node.maxLength = c.length;
          else if (c.check === 'string_format' && (c.format === 'regex' || c.format === 'starts_with' || c.format === 'ends_with' || c.format === 'includes'))
            patterns.push(goPattern(c.pattern as RegExp, where));
          else if (c.check !== 'custom') throw new Error(`${where}: string check ${c.check}${c.format ? ` (${String(c.format)})` : ''} is not supported`);
        }
        if (patterns.length > 1) throw new Error(`${where}: a string may carry one regex (Kubernetes has one pattern per field); merge ${patterns.join(' and ')}`);
        if (patterns[0] !== undefined) node.pattern = patterns[0];
        break;
      }
      case 'number': {
        node.type = d.format === 'safeint' || d.format === 'int32' || d.format === 'uint32' ? 'integer' : 'number';
        if (d.format === 'int32' || d.format === 'uint32') node.format = 'int32';
        for (const c of checksOf(d)) {
          if (c.check === 'greater_than') {
            node.minimum = c.value;
            if (!c.inclusive) node.exclusiveMinimum = true;
          } else if (c.check === 'less_than') {
            node.maximum = c.value;
            if (!c.inclusive) node.exclusiveMaximum = true;
          } else if (c.check === 'multiple_of') node.multipleOf = c.value;
          else if (c.check !== 'custom' && c.check !== 'number_format') throw new Error(`${where}: number check ${c.check} is not supported`);
        }
        // z.int()'s implicit safe-integer bounds say nothing a user needs.
        if (node.minimum === SAFE_MIN) delete node.minimum;
        if (node.maximum === SAFE_MAX) delete node.maximum;
        break;
      }
      case 'boolean':
        node.type = 'boolean';
        break;
      case 'object': {
        node.type = 'object';
        const shape = d.shape as Record<string, z.ZodType>;
        const properties: Record<string, SchemaNode> = {};
        const required: string[] = [];
        for (const [key, child] of Object.entries(shape)) {
          const c = toStructural(child, `${where}.${key}`);
          properties[key] = c.node;
          if (!c.optional) required.push(key);
        }
        const catchall = d.catchall as z.ZodType | undefined;
        const catchallType = catchall ? defOf(catchall).type : undefined;
        if (catchallType === 'unknown' || catchallType === 'any') node['x-kubernetes-preserve-unknown-fields'] = true;
        else if (catchallType !== undefined && catchallType !== 'never') throw new Error(`${where}: an object with a typed catchall is not structural`);
        if (Object.keys(properties).length > 0) node.properties = properties;
        if (required.length > 0) node.required = required;
        for (const c of checksOf(d)) if (c.check !== 'custom') throw new Error(`${where}: object check ${c.check} is not supported`);
        break;
      }
      case 'record': {
        node.type = 'object';
        const keyType = defOf(d.keyType as z.ZodType);
        if (keyType.type !== 'string' || checksOf(keyType).length > 0) throw new Error(`${where}: record keys must be plain strings`);
        const valueType = defOf(d.valueType as z.ZodType).type;
        if (valueType === 'unknown' || valueType === 'any') node['x-kubernetes-preserve-unknown-fields'] = true;
        else {
          const v = toStructural(d.valueType as z.ZodType, `${where}[*]`);
          node.additionalProperties = v.node;
        }
        break;
      }
      case 'array': {
        node.type = 'array';
        const item = toStructural(d.element as z.ZodType, `${where}[*]`, true);
        if (item.optional) throw new Error(`${where}: array items cannot be optional`);
        node.items = item.node;
        for (const c of checksOf(d)) {
          if (c.check === 'min_length') node.minItems = c.minimum;
          else if (c.check === 'max_length') node.maxItems = c.maximum;
          else if (c.check === 'length_equals') node.minItems = node.maxItems = c.length;
          else if (c.check !== 'custom') throw new Error(`${where}: array check ${c.check} is not supported`);
        }
        if (meta.listType) node['x-kubernetes-list-type'] = meta.listType;
        if (meta.listMapKeys) node['x-kubernetes-list-map-keys'] = meta.listMapKeys;
        break;
      }
      default:
        throw new Error(`${where}: zod type ${d.type} cannot be expressed in a structural schema`);
    }
  }
  if (meta.listType && node.type !== 'array') throw new Error(`${where}: listType on a ${String(node.type)}`);
  // Every field needs a description (kubectl explain shows it); list items are described by their list.
  if (meta.description === undefined && !isItem) throw new Error(`${where}: no description; add .describe() (it is what kubectl explain shows)`);
  node.description = meta.description;
  if (meta.hasDefault && meta.default !== undefined) node.default = meta.default;
  if (meta.nullable) node.nullable = true;
  if (meta.cel.length > 0) {
    node['x-kubernetes-validations'] = meta.cel.map((r) => {
      const out: SchemaNode = { rule: r.rule, message: r.message };
      if (r.fieldPath) out.fieldPath = r.fieldPath;
      if (r.reason) out.reason = r.reason;
      return out;
    });
  }
  return { node: ordered(node, where), optional: meta.optional };
}

/** The CustomResourceDefinition object of one kind. */
export function crdFor(def: CrdDefinition): SchemaNode {
  const spec = toStructural(def.spec, `${def.kind}.spec`).node;
  const status = toStructural(def.status, `${def.kind}.status`).node;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${def.plural}.${GROUP}` },
    spec: {
      group: GROUP,
      names: {
        kind: def.kind,
        listKind: `${def.kind}List`,
        plural: def.plural,
        singular: def.singular,
        shortNames: def.shortNames,
        categories: [CATEGORY],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: def.printerColumns.map((c) => ({
            name: c.name,
            type: c.type,
            jsonPath: c.jsonPath,
            ...(c.description ? { description: c.description } : {}),
            ...(c.priority ? { priority: c.priority } : {}),
          })),
          schema: {
            openAPIV3Schema: {
              description: def.description,
              type: 'object',
              properties: {
                apiVersion: {
                  description: `APIVersion of this object: ${GROUP}/${VERSION}.`,
                  type: 'string',
                },
                kind: { description: `Kind of this object: ${def.kind}.`, type: 'string' },
                metadata: { type: 'object' },
                spec,
                status,
              },
              required: ['spec'],
            },
          },
        },
      ],
    },
  };
}

// ---- YAML (a small deterministic emitter for JSON-like data) ----

const YAML_WORDS = /^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL|~)$/;
const YAML_NUMBER = /^[-+]?(?:\.?[0-9]|0x|0o|\.inf|\.Inf|\.INF|\.nan|\.NaN|\.NAN)/;

function scalar(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'boolean' || typeof v === 'number') return String(v);
  if (typeof v !== 'string') throw new Error(`not a YAML scalar: ${String(v)}`);
  const plain =
    v.length > 0 &&
    /^[\x20-\x7e]*$/.test(v) &&
    !/^[-?:,[\]{}#&*!|>'"%@`\s]/.test(v) &&
    !/\s$/.test(v) &&
    !/: |:$| #/.test(v) &&
    !YAML_WORDS.test(v) &&
    !YAML_NUMBER.test(v);
  return plain ? v : JSON.stringify(v); // a JSON string is a valid YAML double-quoted scalar
}

const isScalar = (v: unknown) => v === null || typeof v !== 'object';
const isEmpty = (v: unknown) => (Array.isArray(v) ? v.length === 0 : v !== null && typeof v === 'object' && Object.keys(v).length === 0);

export function toYaml(value: unknown, indent = ''): string {
  if (isScalar(value)) return `${indent}${scalar(value)}\n`;
  let out = '';
  if (Array.isArray(value)) {
    for (const item of value) {
      if (isScalar(item) || isEmpty(item)) out += `${indent}- ${isScalar(item) ? scalar(item) : Array.isArray(item) ? '[]' : '{}'}\n`;
      else if (Array.isArray(item)) out += `${indent}-\n${toYaml(item, `${indent}  `)}`;
      else out += `${indent}- ${toYaml(item, `${indent}  `).slice(indent.length + 2)}`;
    }
    return out;
  }
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === undefined) continue;
    if (isScalar(v)) out += `${indent}${scalar(k)}: ${scalar(v)}\n`;
    else if (isEmpty(v)) out += `${indent}${scalar(k)}: ${Array.isArray(v) ? '[]' : '{}'}\n`;
    else if (Array.isArray(v)) out += `${indent}${scalar(k)}:\n${toYaml(v, `${indent}  `)}`;
    else out += `${indent}${scalar(k)}:\n${toYaml(v, `${indent}  `)}`;
  }
  return out;
}
