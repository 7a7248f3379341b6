// kustomize/webhook.yaml's ValidatingWebhookConfiguration is what the kind registry generates (else run
// `make webhook`), and it sends Portico exactly the kinds that have an admission review.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadAllYaml } from '@kubernetes/client-node';
import type { KindDescriptor } from './kind.ts';
import { ADMITTED, KINDS } from './registry.ts';
import { renderWebhookFile, WEBHOOK_FILE, webhookDrifted, webhooksOf } from './webhook.ts';

type Config = { kind: string; webhooks?: { name: string; rules: { apiGroups: string[]; apiVersions: string[]; operations: string[]; resources: string[]; scope: string }[]; matchConditions?: { name: string; expression: string }[] }[] };

test('kustomize/webhook.yaml\'s configuration is what the kind registry generates (else run `make webhook`)', () => {
  assert.equal(webhookDrifted(), false, 'kustomize/webhook.yaml is out of date with reconcilers/kinds/: regenerate it with `make webhook`');
  execFileSync(process.execPath, [fileURLToPath(new URL('./webhook.ts', import.meta.url)), '--check'], { stdio: 'pipe' });
});

test('generating keeps the hand-written documents and is idempotent', () => {
  const current = readFileSync(WEBHOOK_FILE, 'utf8');
  const again = renderWebhookFile(current);
  assert.equal(renderWebhookFile(again), again);
  const rest = (s: string) => s.slice(s.indexOf('\n---\n'));
  assert.equal(rest(again), rest(current));
  assert.match(rest(again), /kind: Service\b/);
});

test('the webhooks send exactly the kinds with an admission review, on create and update', () => {
  const docs = loadAllYaml(readFileSync(WEBHOOK_FILE, 'utf8')) as Config[];
  const cfg = docs.find((d) => d.kind === 'ValidatingWebhookConfiguration');
  assert.ok(cfg?.webhooks?.length);
  const sent = new Set<string>();
  for (const w of cfg.webhooks) {
    for (const r of w.rules) {
      assert.deepEqual(r.operations, ['CREATE', 'UPDATE'], w.name);
      for (const g of r.apiGroups) for (const v of r.apiVersions) for (const res of r.resources) sent.add(`${g}/${v}/${res}`);
    }
  }
  assert.deepEqual([...sent].sort(), ADMITTED.map((k) => `${k.resource.group}/${k.resource.version}/${k.resource.plural}`).sort());
  assert.deepEqual(ADMITTED.map((k) => k.kind), KINDS.filter((k) => k.admission).map((k) => k.kind));
  // Only Ingresses of Portico's class (or none) are sent: the expression of the Ingress's webhook.
  const ing = cfg.webhooks.find((w) => w.rules.some((r) => r.resources.includes('ingresses')));
  assert.match(ing?.matchConditions?.[0]?.expression ?? '', /^has\(object\.spec\.ingressClassName\) \? object\.spec\.ingressClassName == 'portico' : \(/);
});

test('kinds share a webhook by name (one rule per API group); one without a webhook, or with other conditions, is an error', () => {
  const kind = (name: string, group: string, plural: string, webhook?: KindDescriptor['webhook']): KindDescriptor =>
    ({ kind: name, resource: { group, version: 'v1', plural, kind: name, namespaced: true }, webhook }) as unknown as KindDescriptor;
  const hooks = webhooksOf([kind('A', 'x.dev', 'as', { name: 'x.portico.dev' }), kind('B', 'y.dev', 'bs', { name: 'y.portico.dev' }), kind('C', 'x.dev', 'cs', { name: 'x.portico.dev' })]);
  assert.deepEqual(hooks.map((h) => [h.spec.name, h.rules.map((r) => `${r.apiGroup}:${r.resources.join(',')}`)]), [
    ['x.portico.dev', ['x.dev:as,cs']],
    ['y.portico.dev', ['y.dev:bs']],
  ]);
  assert.throws(() => webhooksOf([kind('A', 'x.dev', 'as')]), /names its webhook/);
  const cond = { name: 'c', expression: ['true'] };
  assert.throws(() => webhooksOf([kind('A', 'x.dev', 'as', { name: 'w' }), kind('B', 'x.dev', 'bs', { name: 'w', matchConditions: [cond] })]), /matchConditions/);
});
