// The install's NetworkPolicy: the webhook port is admitted from non-pod sources only (ipBlock peers), never from
// "anywhere" (a rule without `from`) nor from pod or namespace selectors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadYaml } from '@kubernetes/client-node';

type Peer = { ipBlock?: { cidr: string; except?: string[] }; podSelector?: unknown; namespaceSelector?: unknown };
type Rule = { from?: Peer[]; ports?: { port: number | string; protocol?: string }[] };

const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../kustomize/networkpolicy.yaml');
// client-node's loader turns the field "from" into "_from" (a reserved word in its generated models): undo that.
const raw = loadYaml<{ spec: { ingress: (Rule & { _from?: Peer[] })[]; policyTypes: string[] } }>(readFileSync(file, 'utf8'));
const policy = { spec: { ...raw.spec, ingress: raw.spec.ingress.map(({ _from, ...r }) => ({ ...r, ...(_from ?? r.from ? { from: _from ?? r.from } : {}) })) } };

test('NetworkPolicy: 8444 (webhook) only from ipBlock peers; HTTP/HTTPS from anywhere; metrics from namespaces', () => {
  const rulesFor = (port: number) => policy.spec.ingress.filter((r) => !r.ports || r.ports.some((p) => p.port === port));
  const webhook = rulesFor(8444);
  assert.ok(webhook.length > 0, 'the webhook port is admitted at all');
  for (const r of webhook) {
    assert.ok(r.from && r.from.length > 0, `a rule admits 8444 from anywhere: ${JSON.stringify(r)}`);
    for (const peer of r.from) assert.deepEqual(Object.keys(peer), ['ipBlock'], `8444 from a pod or namespace selector: ${JSON.stringify(peer)}`);
  }
  assert.deepEqual(webhook.flatMap((r) => r.from!.map((p) => p.ipBlock!.cidr)).sort(), ['0.0.0.0/0', '::/0']);
  for (const port of [8080, 8443]) assert.ok(rulesFor(port).some((r) => !r.from), `${port} from anywhere`);
  assert.ok(rulesFor(10254).every((r) => r.from?.every((p) => p.namespaceSelector !== undefined)));
  assert.deepEqual(policy.spec.policyTypes, ['Ingress']);
});
