// Summarizes a V8 heap snapshot (e.g. one the startup benchmark had Portico write: BENCH_HEAP_SNAPSHOT=<dir>) without
// loading it whole — snapshots of a big heap exceed the longest string JSON.parse can take. Prints the self size
// and count per kind of object (constructor name for objects; strings, arrays, code... by type), and the string
// values that take the most memory with all their copies (duplicates worth sharing).
// Then the self size of objects grouped by what holds them: the holder's kind and the property ("Map.table",
// "NormalizedIngress.host"...), each object counted once, under its first holder; by chains of holders; and by the
// nearest holder that is an instance of a named class ("Store.items", "TranslateMemo.hosts": what each of Portico's
// structures keeps).
// Usage: node e2e/bench/heap-summary.ts <file.heapsnapshot> [top=40] [depth of the chains=4]
import { createReadStream } from 'node:fs';

const file = process.argv[2];
const TOP = Number(process.argv[3] ?? 40);
if (!file) {
  process.stderr.write('usage: heap-summary.ts <file.heapsnapshot> [top]\n');
  process.exit(2);
}

type Section = 'top' | 'nodes' | 'edges' | 'skip' | 'strings';
let section: Section = 'top';
let meta = ''; // the top-level text before the first array (the "snapshot" object with the field names)
let metaDone = false;
let key = ''; // the last top-level text, to name the array that starts
let depth = 0; // nesting in the top-level text (outside the big arrays)
let topString = false;
let topEscaped = false;
let skipDepth = 0;
const nodes: number[] = [];
const edges: number[] = [];
const strings: string[] = [];
let num = '';
let inString = false;
let escaped = false;
let str = '';

for await (const chunk of createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 22 })) {
  const text = chunk as string;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (section === 'top') {
      if (!metaDone) meta += c;
      key = (key + c).slice(-64);
      if (topString) {
        if (topEscaped) topEscaped = false;
        else if (c === '\\') topEscaped = true;
        else if (c === '"') topString = false;
        continue;
      }
      if (c === '"') topString = true;
      else if (c === '{') depth++;
      else if (c === '}') depth--;
      else if (c === '[' && depth === 1) {
        const m = /"(\w+)"\s*:\s*\[$/.exec(key);
        const name = m?.[1] ?? '';
        if (!metaDone) {
          meta = meta.slice(0, meta.length - (m?.[0].length ?? 0));
          metaDone = true;
        }
        section = name === 'nodes' ? 'nodes' : name === 'edges' ? 'edges' : name === 'strings' ? 'strings' : 'skip';
        skipDepth = 1;
      } else if (c === '[') depth++;
      else if (c === ']') depth--;
      continue;
    }
    if (section === 'nodes' || section === 'edges') {
      if (c >= '0' && c <= '9') num += c;
      else {
        if (num) (section === 'nodes' ? nodes : edges).push(Number(num));
        num = '';
        if (c === ']') section = 'top';
      }
      continue;
    }
    if (section === 'strings') {
      if (inString) {
        if (escaped) { str += c; escaped = false; }
        else if (c === '\\') { str += c; escaped = true; }
        else if (c === '"') { strings.push(JSON.parse(`"${str}"`) as string); str = ''; inString = false; }
        else str += c;
      } else if (c === '"') inString = true;
      else if (c === ']') section = 'top';
      continue;
    }
    // skip: another array (edges, locations...), of numbers or nested arrays of numbers
    if (c === '[') skipDepth++;
    else if (c === ']' && --skipDepth === 0) section = 'top';
  }
}

const snap = JSON.parse(`${meta.replace(/,\s*$/, '')}}`) as { snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } } };
const fields = snap.snapshot.meta.node_fields;
const types = snap.snapshot.meta.node_types[0];
const F = fields.length;
const iType = fields.indexOf('type');
const iName = fields.indexOf('name');
const iSize = fields.indexOf('self_size');
const byKind = new Map<string, { size: number; count: number }>();
const byString = new Map<string, { size: number; count: number }>();
const largest: { size: number; text: string; type: string }[] = [];
let total = 0;
for (let n = 0; n < nodes.length; n += F) {
  const type = types[nodes[n + iType] as number] as string;
  const name = strings[nodes[n + iName] as number] ?? '';
  const size = nodes[n + iSize] as number;
  total += size;
  const kind = type === 'object' || type === 'native' ? `${type === 'native' ? '(native) ' : ''}${name}` : `(${type})`;
  const k = byKind.get(kind) ?? { size: 0, count: 0 };
  k.size += size;
  k.count++;
  byKind.set(kind, k);
  if ((type === 'string' || type === 'array' || type === 'concatenated string') && size > 65536) largest.push({ size, text: name.slice(0, 100), type });
  if (type === 'string') {
    const v = name.length > 80 ? `${name.slice(0, 77)}...` : name;
    const s = byString.get(v) ?? { size: 0, count: 0 };
    s.size += size;
    s.count++;
    byString.set(v, s);
  }
}
const mb = (b: number) => (b / 1048576).toFixed(1);
console.log(`${file}: ${nodes.length / F} objects, ${mb(total)} MB (self sizes)`);
console.log('\nby kind (self size):');
for (const [k, v] of [...byKind].sort((a, b) => b[1].size - a[1].size).slice(0, TOP)) console.log(`  ${mb(v.size).padStart(8)} MB ${String(v.count).padStart(9)}×  ${k}`);
console.log('\nstrings with the most memory over all their copies:');
for (const [k, v] of [...byString].filter(([, v]) => v.count > 1).sort((a, b) => b[1].size - a[1].size).slice(0, TOP)) console.log(`  ${mb(v.size).padStart(8)} MB ${String(v.count).padStart(9)}×  ${JSON.stringify(k)}`);
console.log('\nlargest single strings and arrays (over 64 KB):');
for (const l of largest.sort((a, b) => b.size - a.size).slice(0, TOP)) console.log(`  ${mb(l.size).padStart(8)} MB  (${l.type}) ${JSON.stringify(l.text)}`);

// ---- by holder: each object's self size under its first holder's kind and the property it is held by ----------------
const EF = snap.snapshot.meta.edge_fields.length;
const eType = snap.snapshot.meta.edge_fields.indexOf('type');
const eName = snap.snapshot.meta.edge_fields.indexOf('name_or_index');
const eTo = snap.snapshot.meta.edge_fields.indexOf('to_node');
const edgeTypes = snap.snapshot.meta.edge_types[0];
const iEdges = fields.indexOf('edge_count');
const owner = new Int32Array(nodes.length / F).fill(-1);
const ownerEdge = new Array<string>(nodes.length / F);
let e = 0;
for (let n = 0; n < nodes.length; n += F) {
  const count = nodes[n + iEdges] as number;
  for (let k = 0; k < count; k++, e += EF) {
    const et = edgeTypes[edges[e + eType] as number];
    if (et === 'weak' || et === 'shortcut') continue;
    const child = (edges[e + eTo] as number) / F;
    if (owner[child] !== -1) continue;
    owner[child] = n / F;
    ownerEdge[child] = et === 'element' || et === 'hidden' ? '[]' : et === 'internal' ? `(${strings[edges[e + eName] as number] ?? ''})` : (strings[edges[e + eName] as number] ?? '?');
  }
}
const label = (i: number) => {
  const t = types[nodes[i * F + iType] as number] as string;
  return t === 'object' ? (strings[nodes[i * F + iName] as number] ?? '') : `(${t})`;
};
// Every object's self size, grouped by key(i) (undefined: left out); prints the largest groups.
function printGroups(title: string, key: (i: number) => string | undefined): void {
  const groups = new Map<string, { size: number; count: number }>();
  for (let i = 0; i < nodes.length / F; i++) {
    const k = key(i);
    if (k === undefined) continue;
    const v = groups.get(k) ?? { size: 0, count: 0 };
    v.size += nodes[i * F + iSize] as number;
    v.count++;
    groups.set(k, v);
  }
  console.log(`\n${title}:`);
  for (const [k, v] of [...groups].sort((a, b) => b[1].size - a[1].size).slice(0, TOP)) console.log(`  ${mb(v.size).padStart(8)} MB ${String(v.count).padStart(9)}×  ${k}`);
}
printGroups('by holder (self size of what each kind of object holds, per property)', (i) => {
  const o = owner[i] as number;
  return o < 0 ? '(root)' : `${label(o)}.${ownerEdge[i]} -> ${label(i)}`;
});

// ---- by chain: the same, with the holders' own holders (DEPTH levels up, argv[4], default 4): which structure an
// array or a string belongs to ("Map.(table) -> Object.spec -> Array.[] -> (array)") ---------------------------------
const DEPTH = Number(process.argv[4] ?? 4);
printGroups(`by chain of ${DEPTH} holders`, (i) => {
  let key = label(i);
  let c = i;
  for (let d = 0; d < DEPTH; d++) {
    const o = owner[c] as number;
    if (o < 0) break;
    key = `${label(o)}.${ownerEdge[c]} -> ${key}`;
    c = o;
  }
  return key;
});

// ---- by owner: each object's self size under the nearest holder that is an instance of a named class (not a plain
// object, array, Map, Set, string...), with the property it is reached by: what each of Portico's structures keeps in
// total ("Store.items", "Model.ingresses", "TranslateMemo.hosts") ------------------------------------------------------
const GENERIC = new Set(['Object', 'Array', 'Map', 'Set', '(array)', '(string)', '(concatenated string)', '(sliced string)', '(hidden)', '(object shape)', '(number)', 'system / Context', '(closure)', 'WeakMap', '(code)', '']);
printGroups('by owner (nearest named class holding it)', (i) => {
  let c = i;
  for (let d = 0; d < 64; d++) {
    const o = owner[c] as number;
    if (o < 0) break;
    const l = label(o);
    if (!GENERIC.has(l)) return `${l}.${ownerEdge[c]}`;
    c = o;
  }
  return '(unowned)';
});
