// The configuration reference (flags, ConfigMap keys, annotations, metrics; the kinds, from the kind registry) is
// generated from the tables the code validates with, between `<!-- reference:NAME -->` and `<!-- /reference:NAME -->` markers in the documents of docs/reference/
// (and the migration table of docs/ingress-nginx.md),
// so it cannot drift: tools/readme-reference.test.ts fails when a document differs from what this produces.
// Usage: node tools/readme-reference.ts        rewrite docs/reference/*.md in place
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { flagsMarkdown, ingressNginxFlagsMarkdown } from '../app/flags.ts';
import { conversionsMarkdown } from '../app/migrate-gateway-api-table.ts';
import { annotationsMarkdown } from '../reconcilers/annotations/table.ts';
import { crdsMarkdown, kindsMarkdown } from '../reconcilers/kinds/reference.ts';
import { configReferenceMarkdown } from '../reconcilers/model/global-config.ts';
import { compatMetricsMarkdown } from '../reconcilers/nginx-driver/compat-metrics.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

type Sections = Record<string, () => string>;

/** Document (path from the repository root) → the generated sections it holds. */
export const DOCUMENTS: Record<string, Sections> = {
  'docs/reference/flags.md': { flags: flagsMarkdown, 'ingress-nginx-flags': ingressNginxFlagsMarkdown },
  'docs/reference/configmap.md': { configmap: configReferenceMarkdown },
  'docs/reference/annotations.md': { annotations: annotationsMarkdown },
  'docs/reference/metrics.md': { metrics: compatMetricsMarkdown },
  'docs/reference/kinds.md': { kinds: kindsMarkdown, crds: crdsMarkdown },
  // `portico migrate --to gateway-api`'s mapping table, with the prose around it.
  'docs/ingress-nginx.md': { 'gateway-api-conversions': conversionsMarkdown },
};

/** Every generated section, whichever document holds it. */
export const SECTIONS: Sections = Object.assign({}, ...Object.values(DOCUMENTS));

/** The text with each of `sections` regenerated; throws when a marker pair is missing. */
export function regenerate(text: string, sections: Sections = SECTIONS, doc = 'the document'): string {
  let out = text;
  for (const [name, gen] of Object.entries(sections)) {
    const open = `<!-- reference:${name} -->`;
    const close = `<!-- /reference:${name} -->`;
    const a = out.indexOf(open);
    const b = out.indexOf(close);
    if (a < 0 || b < a) throw new Error(`${doc} has no ${open} … ${close} section`);
    out = `${out.slice(0, a + open.length)}\n${gen()}\n${out.slice(b)}`;
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [doc, sections] of Object.entries(DOCUMENTS)) {
    const file = path.join(ROOT, doc);
    writeFileSync(file, regenerate(readFileSync(file, 'utf8'), sections, doc));
  }
}
