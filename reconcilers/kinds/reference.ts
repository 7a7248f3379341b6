// The reference tables of the kinds Portico reconciles, generated from the kind registry into
// docs/reference/kinds.md (tools/readme-reference.ts; its test fails when the document drifts). They are also what
// pins the registry: a kind added, dropped or changed (its resource, stage, webhook, claim processor, CRD names or
// printer columns) shows as a change of the document, made with `node tools/readme-reference.ts`.
import type { KindDescriptor } from './kind.ts';
import { KINDS } from './registry.ts';

const NONE = '—';
const code = (s: string) => `\`${s}\``;

/** "ingresses.networking.k8s.io/v1", "services (v1)": how kubectl names the resource, with its version. */
const resourceName = (k: KindDescriptor) => (k.resource.group ? `${k.resource.plural}.${k.resource.group}/${k.resource.version}` : `${k.resource.plural} (${k.resource.version})`);

/** One row per kind, in registry order (the order app/setup.ts wires them in). */
export function kindsMarkdown(kinds: readonly KindDescriptor[] = KINDS): string {
  const rows = kinds.map((k) =>
    [
      k.kind,
      code(resourceName(k)),
      k.resource.namespaced ? 'Namespaced' : 'Cluster',
      String(k.stage),
      k.writes.length ? k.writes.join(', ') : NONE,
      k.webhook ? code(k.webhook.name) : NONE,
      k.processor ? 'yes' : NONE,
      k.conditions ? (k.reportsProgrammed ? 'yes, with Programmed' : 'yes') : NONE,
    ].join(' | '),
  );
  return ['| kind | resource | scope | start-up stage | model slices written | admission webhook | claims paths | status conditions written |', '|---|---|---|---|---|---|---|---|', ...rows.map((r) => `| ${r} |`)].join('\n');
}

/** One row per CRD kind, in registry order (the order of crds/kustomization.yaml). */
export function crdsMarkdown(kinds: readonly KindDescriptor[] = KINDS): string {
  const rows = kinds.flatMap((k) =>
    k.crd ? [`| ${k.kind} | ${code(`crds/${k.crd.plural}.yaml`)} | ${k.crd.shortNames.map(code).join(', ')} | ${k.crd.printerColumns.map((c) => c.name).join(', ')} |`] : [],
  );
  return ['| kind | generated CRD | short names | printer columns |', '|---|---|---|---|', ...rows].join('\n');
}
