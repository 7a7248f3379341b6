// Generates the ClusterRole of kustomize/rbac.yaml (its first document) from the kind registry: every kind's
// rules, then the framework's own (Events). The rest of the file (bindings, the leader-election Role) is written
// by hand and kept as it is.
//
//   node reconcilers/kinds/rbac.ts           rewrites the ClusterRole in kustomize/rbac.yaml (`make rbac`)
//   node reconcilers/kinds/rbac.ts --check   writes nothing; exits 1 when the file differs (a unit test checks it too)
import { readFileSync } from 'node:fs';
import { FrameworkResources } from '../../operator/kube/resources.ts';
import type { KindDescriptor, RbacRule } from './kind.ts';
import { isMain, kustomizeFile, replaceFirstDocument, runGenerator } from './kustomize-doc.ts';
import { KINDS } from './registry.ts';

export const RBAC_FILE = kustomizeFile('rbac.yaml');

/** What the framework itself needs (operator/events.ts): Events, folded into series. */
const FRAMEWORK_RULES: readonly RbacRule[] = [
  { resource: FrameworkResources.Event, verbs: ['create', 'patch'], why: 'Users watch Portico with `kubectl get events`; repeated events are folded into a series (patch).' },
];

interface Group {
  apiGroup: string;
  verbs: string[];
  resources: string[];
  why: string[];
}

/** Rules with the same API group and verbs become one (resources in registry order); their reasons are kept. */
export function clusterRoleRules(kinds: readonly KindDescriptor[] = KINDS): Group[] {
  const groups: Group[] = [];
  for (const r of [...kinds.flatMap((k) => k.rbac), ...FRAMEWORK_RULES]) {
    const verbs = [...r.verbs];
    const resource = r.subresource ? `${r.resource.plural}/${r.subresource}` : r.resource.plural;
    let g = groups.find((x) => x.apiGroup === r.resource.group && x.verbs.join() === verbs.join());
    if (!g) groups.push((g = { apiGroup: r.resource.group, verbs, resources: [], why: [] }));
    if (!g.resources.includes(resource)) g.resources.push(resource);
    if (r.why && !g.why.includes(r.why)) g.why.push(r.why);
  }
  return groups;
}

const list = (xs: readonly string[]) => `[${xs.map((x) => JSON.stringify(x)).join(', ')}]`;

/** The ClusterRole document, as YAML text. */
export function renderClusterRole(kinds: readonly KindDescriptor[] = KINDS): string {
  const out = [
    '# Generated from the kind registry (reconcilers/kinds/registry.ts: each kind declares its rules) by',
    '# reconcilers/kinds/rbac.ts: do not edit this document, run `make rbac`. Only the documents after it are written by hand.',
    '# Least privilege: every rule here is used by the code (e2e/gateway.e2e.test.ts compares the calls Portico makes',
    '# with these rules in both directions; e2e/crd-plugins.e2e.test.ts does the same for the portico.dev rules).',
    'apiVersion: rbac.authorization.k8s.io/v1',
    'kind: ClusterRole',
    'metadata:',
    '  name: portico',
    'rules:',
  ];
  for (const g of clusterRoleRules(kinds)) {
    for (const w of g.why) for (const line of w.split('\n')) out.push(`  # ${line}`);
    out.push(`  - apiGroups: ${list([g.apiGroup])}`, `    resources: ${list(g.resources)}`, `    verbs: ${list(g.verbs)}`);
  }
  return `${out.join('\n')}\n`;
}

/** kustomize/rbac.yaml with its first document (the ClusterRole) replaced by the generated one. */
export function renderRbacFile(current: string, kinds: readonly KindDescriptor[] = KINDS): string {
  return replaceFirstDocument(current, renderClusterRole(kinds), RBAC_FILE);
}

export function rbacDrifted(file = RBAC_FILE): boolean {
  const current = readFileSync(file, 'utf8');
  return renderRbacFile(current) !== current;
}

if (isMain(import.meta.url)) process.exitCode = runGenerator(process.argv.slice(2), RBAC_FILE, (current) => renderRbacFile(current), 'rbac');
