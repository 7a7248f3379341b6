// The ClusterRole of kustomize/rbac.yaml as "verb group/resource" strings (the form KubeClient.calls records), for the
// least-privilege checks of the suites: every rule granted is used, every call made is granted.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadAllYaml } from '@kubernetes/client-node';
import { ROOT } from './cluster.ts';

export function grantedRules(): Set<string> {
  const granted = new Set<string>();
  for (const doc of loadAllYaml(readFileSync(path.join(ROOT, 'kustomize/rbac.yaml'), 'utf8'))) {
    const o = doc as { kind: string; rules?: { apiGroups: string[]; resources: string[]; verbs: string[] }[] };
    for (const r of o.rules ?? []) for (const g of r.apiGroups) for (const res of r.resources) for (const v of r.verbs) granted.add(`${v} ${g}/${res}`);
  }
  return granted;
}

/**
 * The rules only Gateway API uses (its kinds, and the Service and EndpointSlice Portico writes for each Gateway):
 * e2e/gateway-api.e2e.test.ts checks them; the other suites leave them out of their "never used" check.
 */
export function isGatewayApiRule(rule: string): boolean {
  return rule.includes(' gateway.networking.k8s.io/') || /^(get|create|patch|delete) (\/services|discovery\.k8s\.io\/endpointslices)$/.test(rule) || rule === 'list /namespaces' || rule === 'watch /namespaces';
}
