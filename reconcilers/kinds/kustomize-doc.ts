// What the generators of kustomize/ documents from the kind registry share (rbac.ts: the ClusterRole of rbac.yaml;
// webhook.ts: the ValidatingWebhookConfiguration of webhook.yaml): the first document of the file is generated,
// the ones after it are written by hand and kept as they are; `--check` writes nothing and fails on a difference.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SEPARATOR = '\n---\n';

/** A kustomize/ file under the repository root. */
export const kustomizeFile = (name: string): string => path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../kustomize', name);

/** `current` with its first document replaced by `generated` (which ends with a newline). */
export function replaceFirstDocument(current: string, generated: string, file: string): string {
  const at = current.indexOf(SEPARATOR);
  if (at < 0) throw new Error(`${path.basename(file)}: expected the generated document, then "---" and the hand-written documents`);
  return generated + current.slice(at + 1);
}

/** A generator's command line: rewrite the file, or with --check only say whether it differs (exit code 1). */
export function runGenerator(argv: readonly string[], file: string, render: (current: string) => string, makeTarget: string): number {
  const current = readFileSync(file, 'utf8');
  const next = render(current);
  if (argv.includes('--check')) {
    if (next === current) return 0;
    process.stderr.write(`kustomize/${path.basename(file)} differs from what the kind registry generates: run \`make ${makeTarget}\`\n`);
    return 1;
  }
  if (next !== current) writeFileSync(file, next);
  return 0;
}

/** Whether a module is the program being run (`node <file>`). */
export const isMain = (url: string): boolean => !!process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(url);
