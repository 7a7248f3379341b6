// kustomize/rbac.yaml's ClusterRole is what the kind registry generates (else run `make rbac`), and the registry
// holds every kind Portico reconciles.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadAllYaml } from '@kubernetes/client-node';
import { RBAC_FILE, rbacDrifted, renderRbacFile } from './rbac.ts';
import { ADMITTED, KINDS } from './registry.ts';

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
  assert.deepEqual([...names].sort(), ['ConfigMap', 'Consumer', 'Ingress', 'IngressClass', 'Plugin', 'Route', 'Secret', 'Service', 'Upstream']);
  assert.equal(new Set(names).size, names.length);
  assert.deepEqual(ADMITTED.map((k) => k.kind), ['Ingress', 'Route', 'Upstream', 'Plugin', 'Consumer']);
  // A kind may use the informer of one listed before it (registry order), and stages only go forward along it.
  const idx = (k: string) => names.indexOf(k);
  assert.ok(idx('IngressClass') < idx('Ingress') && idx('IngressClass') < idx('Route'));
  assert.deepEqual(Object.fromEntries(KINDS.map((k) => [k.kind, k.stage])), { IngressClass: 0, Ingress: 1, Service: 2, Secret: 2, Route: 1, Upstream: 1, Plugin: 1, Consumer: 1, ConfigMap: 2 });
});

