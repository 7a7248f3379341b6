// The README's configuration reference is generated from the tables the code validates with (flags, ConfigMap keys,
// annotations), between `<!-- reference:NAME -->` and `<!-- /reference:NAME -->` markers, so it cannot drift:
// tools/readme-reference.test.ts fails when README differs from what this produces.
// Usage: node tools/readme-reference.ts        rewrite README.md in place
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { flagsMarkdown } from '../app/flags.ts';
import { annotationsMarkdown } from '../reconcilers/annotations/table.ts';
import { configReferenceMarkdown } from '../reconcilers/model/global-config.ts';

export const README = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../README.md');

export const SECTIONS: Record<string, () => string> = {
  flags: flagsMarkdown,
  configmap: configReferenceMarkdown,
  annotations: annotationsMarkdown,
};

/** README text with every marked section regenerated; throws when a marker pair is missing. */
export function regenerate(readme: string): string {
  let out = readme;
  for (const [name, gen] of Object.entries(SECTIONS)) {
    const open = `<!-- reference:${name} -->`;
    const close = `<!-- /reference:${name} -->`;
    const a = out.indexOf(open);
    const b = out.indexOf(close);
    if (a < 0 || b < a) throw new Error(`README has no ${open} … ${close} section`);
    out = `${out.slice(0, a + open.length)}\n${gen()}\n${out.slice(b)}`;
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(README, regenerate(readFileSync(README, 'utf8')));
}
