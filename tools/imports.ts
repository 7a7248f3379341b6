// The import graph of Portico's TypeScript (operator/, crds/, reconcilers/, app/), and the two rules it must keep
// (tools/imports.test.ts fails on either):
//   - no cycles: no module reaches itself through its imports (type-only imports count: a cycle of types is still
//     two modules that cannot be understood, moved or tested apart);
//   - no import runs the wrong way: a lower layer never imports a higher one (LAYERS). operator/ is a framework
//     and imports nothing of Portico's, test files included; for the other layers the rule is on production
//     files (tests and *.test-helpers.ts may reach up to build their fixtures).
// Usage: node tools/imports.ts [root]     print the cycles and wrong-way imports (default root: the repository)
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOTS = ['operator', 'crds', 'reconcilers', 'app'] as const;

/**
 * Layers, lowest first: a file may import its own layer and lower ones. A layer is the longest matching prefix (a
 * `*` stands for one folder name); files directly in reconcilers/ (the reconcilers themselves) are the
 * `reconcilers/` layer.
 */
export const LAYERS: readonly { prefix: string; rank: number }[] = [
  { prefix: 'operator/', rank: 0 },
  { prefix: 'crds/', rank: 1 },
  { prefix: 'reconcilers/values/', rank: 1 },
  // The plugins' TypeScript modules hold the Plugin CRD's per-type settings schemas as well as the data plane's
  // instance types: crds/schema/plugin-config.ts reads them, so they sit with the CRD schemas.
  { prefix: 'reconcilers/config/plugins/', rank: 1 },
  { prefix: 'reconcilers/config/', rank: 2 },
  { prefix: 'reconcilers/annotations/', rank: 3 },
  { prefix: 'reconcilers/model/', rank: 4 },
  { prefix: 'reconcilers/translate/', rank: 5 },
  { prefix: 'reconcilers/nginx-driver/', rank: 6 },
  { prefix: 'reconcilers/crds/', rank: 6 },
  // A kind folder is a vertical slice: its claim processor (and the list of them) is part of the pure translation,
  // so it may import only what the translation may (never the kind's reconciler, the gateway or app/).
  { prefix: 'reconcilers/kinds/*/processor.ts', rank: 5 },
  { prefix: 'reconcilers/kinds/processors.ts', rank: 5 },
  { prefix: 'reconcilers/kinds/', rank: 6 },
  { prefix: 'reconcilers/', rank: 6 },
  { prefix: 'app/', rank: 7 },
  // The CRD generator is a build tool, like app/ an entry point: it writes a CRD for each CRD kind of the kind
  // registry. Nothing but tests imports it; the converter it uses (crds/structural.ts) stays in crds/.
  { prefix: 'crds/generate.ts', rank: 7 },
];

/**
 * Known wrong-way imports, to be removed — not to be added to. "from → to", both relative to the root; a `to`
 * ending in "/" stands for any file of that folder, a `from` ending in "/" for any file under it.
 */
export const KNOWN_WRONG_WAY: readonly string[] = [];

export interface Import {
  from: string;
  to: string;
  typeOnly: boolean;
}

const isTest = (f: string) => f.endsWith('.test.ts') || f.endsWith('.test-helpers.ts');

/** Every .ts file under the roots, relative to `root`, "/"-separated, sorted. */
export function sourceFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const e of readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const p = `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (e.name !== 'node_modules') walk(p);
      } else if (e.name.endsWith('.ts')) out.push(p);
    }
  };
  for (const r of ROOTS) walk(r);
  return out.sort();
}

// Statements that start a line: `import … from '…'`, `export … from '…'` (possibly over several lines), `import '…'`;
// and dynamic `import('…')` anywhere. Comments (`//`, ` * `) never start a line with import/export.
const STATIC = /^[ \t]*(import|export)\b(\s+type\b)?([^;'"`]*?)\bfrom\s*['"]([^'"]+)['"]/gm;
const BARE = /^[ \t]*import\s*['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The relative imports of one file's source (specifiers as written) and whether each is type-only. */
export function parseImports(source: string): { spec: string; typeOnly: boolean }[] {
  const out: { spec: string; typeOnly: boolean }[] = [];
  for (const m of source.matchAll(STATIC)) {
    const clause = (m[3] ?? '').trim();
    // `import { type A, type B } from` is type-only too; `import { A, type B }` is not.
    const names = /^\{([^}]*)\}$/.exec(clause)?.[1]?.split(',').map((s) => s.trim()).filter(Boolean);
    const typeOnly = m[2] !== undefined || (names !== undefined && names.length > 0 && names.every((n) => n.startsWith('type ')));
    out.push({ spec: m[4] as string, typeOnly });
  }
  for (const m of source.matchAll(BARE)) out.push({ spec: m[1] as string, typeOnly: false });
  for (const m of source.matchAll(DYNAMIC)) out.push({ spec: m[1] as string, typeOnly: false });
  return out.filter((i) => i.spec.startsWith('.'));
}

/** Every relative import between files under the roots, one per pair of files. */
export function importGraph(root: string): { files: string[]; imports: Import[] } {
  const files = sourceFiles(root);
  const known = new Set(files);
  // One edge per pair of files: type-only when every import statement between them is.
  const edges = new Map<string, Import>();
  for (const from of files) {
    for (const { spec, typeOnly } of parseImports(readFileSync(path.join(root, from), 'utf8'))) {
      const to = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
      if (!known.has(to)) continue;
      const seen = edges.get(`${from}\0${to}`);
      if (seen) seen.typeOnly &&= typeOnly;
      else edges.set(`${from}\0${to}`, { from, to, typeOnly });
    }
  }
  return { files, imports: [...edges.values()] };
}

/** The cycles: each strongly connected component of more than one file (or a file importing itself), sorted. */
export function cycles(files: readonly string[], imports: readonly Import[]): string[][] {
  const next = new Map<string, string[]>(files.map((f) => [f, []]));
  for (const i of imports) next.get(i.from)?.push(i.to);
  // Tarjan's algorithm, iterative (no recursion limit on a deep graph).
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  for (const start of files) {
    if (index.has(start)) continue;
    const work: { v: string; i: number }[] = [{ v: start, i: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length) {
      const top = work[work.length - 1] as { v: string; i: number };
      const succ = next.get(top.v) ?? [];
      if (top.i < succ.length) {
        const w = succ[top.i++] as string;
        if (!index.has(w)) {
          index.set(w, counter);
          low.set(w, counter++);
          stack.push(w);
          onStack.add(w);
          work.push({ v: w, i: 0 });
        } else if (onStack.has(w)) low.set(top.v, Math.min(low.get(top.v) as number, index.get(w) as number));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.v, Math.min(low.get(parent.v) as number, low.get(top.v) as number));
      if (low.get(top.v) === index.get(top.v)) {
        const scc: string[] = [];
        let w: string;
        do {
          w = stack.pop() as string;
          onStack.delete(w);
          scc.push(w);
        } while (w !== top.v);
        if (scc.length > 1 || succ.includes(top.v)) out.push(scc.sort());
      }
    }
  }
  return out.sort((a, b) => (a[0] as string).localeCompare(b[0] as string));
}

/** Whether `file` starts with a LAYERS prefix (`*`: any one folder name). */
function underPrefix(file: string, prefix: string): boolean {
  if (!prefix.includes('*')) return file.startsWith(prefix);
  const parts = prefix.split('*');
  let at = 0;
  for (const [i, part] of parts.entries()) {
    if (i > 0) {
      const slash = file.indexOf('/', at);
      if (slash <= at) return false;
      at = slash;
    }
    if (!file.startsWith(part, at)) return false;
    at += part.length;
  }
  return true;
}

export function layerOf(file: string): number | undefined {
  let best: { prefix: string; rank: number } | undefined;
  for (const l of LAYERS) if (underPrefix(file, l.prefix) && (!best || l.prefix.length > best.prefix.length)) best = l;
  return best?.rank;
}

const matches = (pattern: string, file: string) => (pattern.endsWith('/') ? file.startsWith(pattern) : file === pattern);

/** The known exception an import falls under, if any. */
export function knownException(i: Import): string | undefined {
  return KNOWN_WRONG_WAY.find((k) => {
    const [from, to] = k.split(' → ') as [string, string];
    return matches(from, i.from) && matches(to, i.to);
  });
}

/** Imports from a lower layer into a higher one (operator/: every file; other layers: production files only). */
export function wrongWay(imports: readonly Import[]): Import[] {
  return imports.filter((i) => {
    const a = layerOf(i.from);
    const b = layerOf(i.to);
    if (a === undefined || b === undefined || b <= a) return false;
    return a === 0 || !isTest(i.from);
  });
}

const isMain = process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const root = path.resolve(process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
  const { files, imports } = importGraph(root);
  const cs = cycles(files, imports);
  const ww = wrongWay(imports);
  const known = ww.filter((i) => knownException(i));
  process.stdout.write(`${files.length} files, ${imports.length} relative imports\n`);
  process.stdout.write(`cycles: ${cs.length}\n${cs.map((c) => `  ${c.join(' ↔ ')}\n`).join('')}`);
  process.stdout.write(`wrong-way imports: ${ww.length} (${known.length} known exceptions)\n`);
  for (const i of ww) process.stdout.write(`  ${i.from} → ${i.to}${i.typeOnly ? ' (type)' : ''}${knownException(i) ? ' [known]' : ''}\n`);
}
