// Generates reconcilers/kinds/processors.ts from the kind registry: the claim processors of the kinds that declare
// one (KindDescriptor.processor), in registry order. The translation runs them (translate/translate.ts,
// translate/incremental.ts) but is pure and may not import the registry, which wires informers and controllers
// (tools/imports.ts LAYERS): so the list it imports is generated, and a unit test fails when it drifts.
//
//   node reconcilers/kinds/processors-gen.ts           rewrites reconcilers/kinds/processors.ts (`make processors`)
//   node reconcilers/kinds/processors-gen.ts --check   writes nothing; exits 1 when the file differs
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { KindDescriptor } from './kind.ts';
import { isMain } from './kustomize-doc.ts';
import { KINDS } from './registry.ts';

export const PROCESSORS_FILE = fileURLToPath(new URL('./processors.ts', import.meta.url));

/** A kind's folder under reconcilers/kinds/: its name in lower case ("IngressClass" → ingressclass/). */
export const folderOf = (kind: string): string => kind.toLowerCase();

/** Where a kind's processor is imported from: the export of <folder>/processor.ts that is its descriptor's processor. */
export async function processorImports(kinds: readonly KindDescriptor[] = KINDS): Promise<{ name: string; module: string }[]> {
  const out: { name: string; module: string }[] = [];
  for (const k of kinds) {
    if (!k.processor) continue;
    const module = `./${folderOf(k.kind)}/processor.ts`;
    const exports = (await import(new URL(module, import.meta.url).href)) as Record<string, unknown>;
    const name = Object.keys(exports).find((n) => exports[n] === k.processor);
    if (!name) throw new Error(`${k.kind}: its claim processor is not exported by reconcilers/kinds/${module.slice(2)}`);
    out.push({ name, module });
  }
  return out;
}

const HEADER = `// Generated from the kind registry (reconcilers/kinds/registry.ts: the kinds that declare a claim processor) by
// reconcilers/kinds/processors-gen.ts: do not edit, run \`make processors\`.
//
// The claim processors of the kinds whose objects claim paths, in the order their objects are admitted into a
// translation (registry order; translate/translate.ts runs them, translate/draft.ts ClaimProcessor says what one is).
// Part of the pure translation (tools/imports.ts), so it cannot import the kind registry, which wires informers and
// controllers: it is generated from it instead.`;

/** The text of processors.ts. */
export async function renderProcessors(kinds: readonly KindDescriptor[] = KINDS): Promise<string> {
  const imports = await processorImports(kinds);
  return [
    HEADER,
    "import type { ClaimProcessor } from '../translate/draft.ts';",
    ...imports.map((i) => `import { ${i.name} } from '${i.module}';`),
    '',
    `export const PROCESSORS: readonly ClaimProcessor[] = [${imports.map((i) => i.name).join(', ')}];`,
    '',
  ].join('\n');
}

export async function processorsDrifted(file = PROCESSORS_FILE): Promise<boolean> {
  return (await renderProcessors()) !== readFileSync(file, 'utf8');
}

async function main(argv: readonly string[]): Promise<number> {
  const next = await renderProcessors();
  const current = readFileSync(PROCESSORS_FILE, 'utf8');
  if (argv.includes('--check')) {
    if (next === current) return 0;
    process.stderr.write('reconcilers/kinds/processors.ts differs from what the kind registry generates: run `make processors`\n');
    return 1;
  }
  if (next !== current) writeFileSync(PROCESSORS_FILE, next);
  return 0;
}

if (isMain(import.meta.url)) process.exitCode = await main(process.argv.slice(2));
