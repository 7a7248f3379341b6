// Installing Portico's own manifests into the test cluster, exactly as a user would: `kubectl apply -k kustomize/`.
import { kubectl } from './cluster.ts';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

let installed = false;
export async function installPorticoRbac(): Promise<void> {
  if (installed) return;
  kubectl(['apply', '-k', path.join(REPO_ROOT, 'kustomize')]);
  installed = true;
}
