// Generates the ValidatingWebhookConfiguration of kustomize/webhook.yaml (its first document) from the kind
// registry: every kind with an admission review (ADMITTED) names the webhook that sends its objects to Portico
// (KindDescriptor.webhook); kinds naming the same webhook share it, with one rule per API group and version. The
// rest of the file (the webhook's Service and its own rights) is written by hand and kept as it is.
//
//   node reconcilers/kinds/webhook.ts           rewrites the configuration in kustomize/webhook.yaml (`make webhook`)
//   node reconcilers/kinds/webhook.ts --check   writes nothing; exits 1 when the file differs (a unit test checks it too)
import { readFileSync } from 'node:fs';
import type { KindDescriptor, WebhookSpec } from './kind.ts';
import { isMain, kustomizeFile, replaceFirstDocument, runGenerator } from './kustomize-doc.ts';
import { ADMITTED } from './registry.ts';

export const WEBHOOK_FILE = kustomizeFile('webhook.yaml');

/** Where the API server sends the reviews: the webhook's Service (a hand-written document of the same file). */
const CLIENT = '{ namespace: portico-system, name: portico-webhook, port: 443, path: /validate }';

const HEADER = `# Generated from the kind registry (reconcilers/kinds/registry.ts: each kind with an admission review names its
# webhook) by reconcilers/kinds/webhook.ts: do not edit this document, run \`make webhook\`. Only the documents after it
# are written by hand.
#
# The validating admission webhook, served by every Portico replica on port 8444 (--webhook-port). Portico creates
# and rotates its own certificate (Secret portico-webhook-tls) and writes the CA bundle below (caBundle) — no
# cert-manager, no Job. It validates with the same schemas and translation as the controller and never runs nginx
# or anything else on what it is sent.
#
# failurePolicy Ignore: the webhook gives early, specific feedback, but Portico does not depend on it for safety —
# the controller validates every object again, isolates a bad one (the others keep being served, the running nginx
# configuration is never replaced by a broken one) and reports it with Events and status. With Fail, an outage of
# Portico (or scaling it to 0 during a migration) would block every Ingress write in the cluster, including CI
# deploys of unrelated apps; with Ignore, such writes go through and are judged by the controller when it is back.
# timeoutSeconds 5: a review is an in-memory check (milliseconds; the translation only looks at the hosts the
# object touches), so 5 s bounds the latency a stuck replica can add to an API write well below the default 10 s.`;

/** One webhook of the configuration: its spec and the resources it reviews, by API group and version. */
export interface Webhook {
  spec: WebhookSpec;
  rules: { apiGroup: string; apiVersion: string; resources: string[]; scope: 'Namespaced' | 'Cluster' }[];
}

/** The webhooks, in registry order of their first kind; each one's rules in registry order of their first kind. */
export function webhooksOf(kinds: readonly KindDescriptor[] = ADMITTED): Webhook[] {
  const out: Webhook[] = [];
  for (const k of kinds) {
    if (!k.webhook) throw new Error(`${k.kind}: a kind with an admission review names its webhook (KindDescriptor.webhook)`);
    let w = out.find((x) => x.spec.name === k.webhook!.name);
    if (!w) out.push((w = { spec: k.webhook, rules: [] }));
    else if (JSON.stringify(w.spec.matchConditions ?? []) !== JSON.stringify(k.webhook.matchConditions ?? [])) {
      throw new Error(`${k.kind}: webhook ${w.spec.name} is shared with other kinds but not its matchConditions`);
    }
    const r = k.resource;
    const scope = r.namespaced ? 'Namespaced' : 'Cluster';
    let rule = w.rules.find((x) => x.apiGroup === r.group && x.apiVersion === r.version && x.scope === scope);
    if (!rule) w.rules.push((rule = { apiGroup: r.group, apiVersion: r.version, resources: [], scope }));
    if (!rule.resources.includes(r.plural)) rule.resources.push(r.plural);
  }
  return out;
}

const list = (xs: readonly string[]) => `[${xs.map((x) => JSON.stringify(x)).join(', ')}]`;

/** The ValidatingWebhookConfiguration document, as YAML text. */
export function renderWebhookConfiguration(kinds: readonly KindDescriptor[] = ADMITTED): string {
  const out = [HEADER, 'apiVersion: admissionregistration.k8s.io/v1', 'kind: ValidatingWebhookConfiguration', 'metadata:', '  name: portico', 'webhooks:'];
  for (const { spec, rules } of webhooksOf(kinds)) {
    for (const line of spec.why?.split('\n') ?? []) out.push(`  # ${line}`);
    out.push(
      `  - name: ${spec.name}`,
      '    admissionReviewVersions: ["v1"]',
      '    sideEffects: None',
      '    failurePolicy: Ignore',
      '    timeoutSeconds: 5',
      '    clientConfig:',
      `      service: ${CLIENT}`,
      '    rules:',
    );
    for (const r of rules) {
      out.push(`      - apiGroups: ${list([r.apiGroup])}`, `        apiVersions: ${list([r.apiVersion])}`, '        operations: ["CREATE", "UPDATE"]', `        resources: ${list(r.resources)}`, `        scope: ${r.scope}`);
    }
    if (spec.matchConditions?.length) {
      out.push('    matchConditions:');
      for (const c of spec.matchConditions) out.push(`      - name: ${c.name}`, '        expression: >-', ...c.expression.map((l) => `          ${l}`));
    }
  }
  return `${out.join('\n')}\n`;
}

/** kustomize/webhook.yaml with its first document (the configuration) replaced by the generated one. */
export function renderWebhookFile(current: string, kinds: readonly KindDescriptor[] = ADMITTED): string {
  return replaceFirstDocument(current, renderWebhookConfiguration(kinds), WEBHOOK_FILE);
}

export function webhookDrifted(file = WEBHOOK_FILE): boolean {
  const current = readFileSync(file, 'utf8');
  return renderWebhookFile(current) !== current;
}

if (isMain(import.meta.url)) process.exitCode = runGenerator(process.argv.slice(2), WEBHOOK_FILE, (current) => renderWebhookFile(current), 'webhook');
