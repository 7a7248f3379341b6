// kustomize/rbac.yaml's ClusterRole is what the kind registry generates (else run `make rbac`), and the registry
// holds every kind Portico reconciles (docs/reference/kinds.md, generated from it, pins which).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadAllYaml } from '@kubernetes/client-node';
import { RBAC_FILE, rbacDrifted, renderRbacFile } from './rbac.ts';
import { regenerate } from '../../tools/readme-reference.ts';
import { ADMITTED, KINDS } from './registry.ts';
import { kindsMarkdown } from './reference.ts';

const KINDS_DOC = fileURLToPath(new URL('../../docs/reference/kinds.md', import.meta.url));

const grants = (yaml: string): string[] => {
  const out = new Set<string>();
  for (const doc of loadAllYaml(yaml) as { kind: string; rules?: { apiGroups: string[]; resources: string[]; verbs: string[] }[] }[]) {
    if (doc.kind !== 'ClusterRole') continue;
    for (const r of doc.rules ?? []) for (const g of r.apiGroups) for (const res of r.resources) for (const v of r.verbs) out.add(`${v} ${g}/${res}`);
  }
  return [...out].sort();
};

test('kustomize/rbac.yaml\'s ClusterRole is what the kind registry generates (else run `make rbac`)', () => {
  assert.equal(rbacDrifted(), false, 'kustomize/rbac.yaml is out of date with reconcilers/kinds/: regenerate it with `make rbac`');
  execFileSync(process.execPath, [fileURLToPath(new URL('./rbac.ts', import.meta.url)), '--check'], { stdio: 'pipe' });
});

test('generating keeps the hand-written documents and is idempotent', () => {
  const current = readFileSync(RBAC_FILE, 'utf8');
  const again = renderRbacFile(current);
  assert.equal(renderRbacFile(again), again);
  const rest = (s: string) => s.slice(s.indexOf('\n---\n'));
  assert.equal(rest(again), rest(current));
  assert.match(rest(again), /kind: Role\b/);
});

test('every kind can list and watch its resource; every kind with conditions can patch its status', () => {
  const granted = new Set(grants(renderRbacFile(readFileSync(RBAC_FILE, 'utf8'))));
  for (const k of KINDS) {
    for (const v of ['list', 'watch']) assert.ok(granted.has(`${v} ${k.resource.group}/${k.resource.plural}`), `${k.kind}: ${v}`);
    if (k.conditions) assert.ok(granted.has(`patch ${k.resource.group}/${k.resource.plural}/status`), `${k.kind}: patch status`);
  }
});

test('every kind Portico reconciles is in the registry, once', () => {
  const names = KINDS.map((k) => k.kind);
  // Which kinds, in which order, with which stage and webhook: docs/reference/kinds.md is generated from the
  // registry and pins them (a kind added, dropped or moved is a change of that document: tools/readme-reference.ts).
  const doc = readFileSync(KINDS_DOC, 'utf8');
  assert.equal(regenerate(doc, { kinds: kindsMarkdown }, 'docs/reference/kinds.md'), doc, 'docs/reference/kinds.md is out of date with the registry: run `node tools/readme-reference.ts`');
  assert.equal(new Set(names).size, names.length);
  // Every kind folder of reconcilers/kinds/ is registered (a kind is its folder: reconcilers/kinds/<kind in lower case>/).
  const folders = readdirSync(new URL('./', import.meta.url), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  assert.deepEqual(folders.sort(), names.map((n) => n.toLowerCase()).sort());
  assert.deepEqual(ADMITTED.map((k) => k.kind), KINDS.filter((k) => k.admission && k.webhook).map((k) => k.kind));
  // A kind may use the informer of one listed before it (registry order), and stages only go forward along it.
  const idx = (k: string) => names.indexOf(k);
  assert.ok(idx('IngressClass') < idx('Ingress') && idx('IngressClass') < idx('Route'));
});
