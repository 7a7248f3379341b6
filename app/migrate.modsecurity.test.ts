// `portico migrate` on ingress-nginx's ModSecurity annotations: applied as they are, except a modsecurity-snippet
// off Portico's allowlist or refused by the ConfigMap, which (ModSecurity being on) fails the Ingress closed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, type Input } from './migrate.ts';
import type { KubeObject } from '../operator/kube/object.ts';

const A = 'nginx.ingress.kubernetes.io/';
const ingress = (name: string, annotations: Record<string, string>): KubeObject =>
  ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace: 'web', annotations },
    spec: { ingressClassName: 'nginx', rules: [{ host: `${name}.example.com`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'app', port: { number: 80 } } } }] } }] },
  }) as KubeObject;

const input = (configMap: Record<string, string> | null): Input => ({
  source: { kind: 'manifests', files: [] },
  ingresses: [
    ingress('detect', { [`${A}enable-modsecurity`]: 'true', [`${A}enable-owasp-core-rules`]: 'true', [`${A}modsecurity-transaction-id`]: '$request_id' }),
    ingress('block', { [`${A}enable-modsecurity`]: 'true', [`${A}modsecurity-snippet`]: 'SecRuleEngine On\nSecRuleRemoveById 920350' }),
    ingress('custom', { [`${A}enable-modsecurity`]: 'true', [`${A}modsecurity-snippet`]: 'SecRuleEngine On\nSecRule ARGS "@rx x" "id:1,deny"' }),
  ],
  configMap: configMap ? { namespace: 'ingress-nginx', name: 'ingress-nginx-controller', data: configMap } : null,
  secrets: new Map(),
  missingSecrets: new Set(),
});

test('migrate: ModSecurity annotations are applied; a refused modsecurity-snippet fails the Ingress closed', () => {
  const codes = (r: ReturnType<typeof analyze>) => Object.fromEntries(r.ingresses.map((i) => [i.name, [...new Set(i.issues.map((x) => x.code))].sort().join(',') || 'ready']));
  const allowed = analyze(input({ 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' }));
  assert.deepEqual(codes(allowed), { detect: 'ready', block: 'ready', custom: 'fails-closed,snippet-refused' });
  const custom = allowed.ingresses.find((i) => i.name === 'custom')!;
  assert.match(custom.issues.map((i) => i.message).join('\n'), /line 2: directive "SecRule"/);
  // ingress-nginx's defaults (snippets not allowed, risk level High): the snippet is refused, and with it the Ingress.
  const defaults = analyze(input(null));
  assert.deepEqual(codes(defaults), { detect: 'ready', block: 'fails-closed,refused-by-configmap', custom: 'fails-closed,refused-by-configmap' });
});
