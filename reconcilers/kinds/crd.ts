// A CRD kind's descriptor from what differs between the CRD kinds (its CRD definition, and CrdSpec: normalizer,
// class, Warning, status conditions, admission). Everything else is the same for every CRD of Portico's: its API
// resource (portico.dev/v1alpha1, namespaced, named by the definition), listed with the Ingresses
// (stage 1, so the Secrets they read are known to be referenced before Secrets are listed), one controller named
// after the kind, list/watch and a status patch in the ClusterRole, reviewed by the webhook.
import type { CrdKind, ModelSnapshot } from '../model/model.ts';
import type { CrdMeta } from '../model/types.ts';
import { GROUP, VERSION, type CrdDefinition } from '../../crds/schema/definition.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import type { ResourceType } from '../../operator/kube/resources.ts';
import { isIngressServed, type TranslateOptions } from '../translate/translate.ts';
import { clip, NOTHING_READ, stamp, type Verdict } from './admission.ts';
import { CrdReconciler, type CrdSpec } from './crd-reconciler.ts';
import type { ConditionsOf, KindDescriptor } from './kind.ts';

export interface CrdKindSpec extends CrdSpec {
  /** Its CRD (crds/schema/<kind>.ts): names the API resource, and crds/generate.ts writes crds/<plural>.yaml from it. */
  crd: CrdDefinition;
  conditions: ConditionsOf;
  /** Whether the kind has a Programmed condition (Routes: live in nginx). */
  programmed?: boolean;
  /** Whether the Secrets it reads hold TLS key material (Route TLS) rather than credentials, CA bundles, configs. */
  tlsSecrets?: boolean;
  /** Admission beyond "the spec normalizes": what else denies or warns, given the normalized record. */
  review?: (record: CrdMeta, snap: ModelSnapshot, o: TranslateOptions) => Verdict;
  /** See KindDescriptor.statusFollows. */
  statusFollows?: KindDescriptor['statusFollows'];
  /** See KindDescriptor.processor (kinds whose objects claim paths). */
  processor?: KindDescriptor['processor'];
}

const CRD_STAGE = 1;
/** Portico's CRs are reviewed by one webhook (every object: Portico's API, whatever the class). */
const CRD_WEBHOOK = { name: 'crds.portico.dev' };

/** The API resource of one of Portico's CRDs. */
export function crdResource(def: CrdDefinition): ResourceType {
  return { group: GROUP, version: VERSION, plural: def.plural, kind: def.kind, namespaced: true };
}

export function crdKind(spec: CrdKindSpec): KindDescriptor {
  const kind: CrdKind = spec.kind;
  if (spec.crd.kind !== kind) throw new Error(`${kind}: its CRD definition is for ${spec.crd.kind}`);
  const r = crdResource(spec.crd);
  return {
    kind,
    resource: r,
    crd: spec.crd,
    stage: CRD_STAGE,
    writes: [kind],
    rbac: [
      { resource: r, verbs: ['list', 'watch'], why: "Portico's own API (crds/): read the objects..." },
      { resource: r, subresource: 'status', verbs: ['patch'], why: '...and report on them (conditions Accepted, ResolvedRefs, Programmed in the status subresource).' },
    ],
    reportedByGateway: true,
    rereadsCredentials: !spec.tlsSecrets,
    conditions: spec.conditions,
    reportsProgrammed: !!spec.programmed,
    ...(spec.statusFollows ? { statusFollows: spec.statusFollows } : {}),
    ...(spec.processor ? { processor: spec.processor } : {}),
    secretsRead(model, key) {
      const list = [...model.readsOf(`${kind}/${key}`).secrets];
      return spec.tlsSecrets ? { tls: list, other: [] } : { tls: [], other: list };
    },
    wire(ctx) {
      const informer = ctx.m.informer<KubeObject>(r, { stage: CRD_STAGE, ...ctx.o.watched });
      const reconciler = new CrdReconciler(spec, informer, ctx.model, ctx.secrets, ctx.o.classes, ctx.m.events);
      const controller = ctx.m.controller({ name: kind.toLowerCase(), reconciler, stage: CRD_STAGE });
      controller.watch(informer);
      // Which objects Portico owns depends on the classes: re-check every one when a class changes.
      if (spec.classOf) controller.watch(ctx.informerOf('IngressClass'), () => informer.store.keys());
      return { informer, controller };
    },
    webhook: CRD_WEBHOOK,
    admission(obj, snap, o, now) {
      if (spec.classOf && !isIngressServed({ className: spec.classOf(obj), classFromAnnotation: false }, snap.classes, o)) return { allowed: true, warnings: [] };
      const n = spec.normalize(stamp(obj, now), NOTHING_READ, NOTHING_READ, undefined);
      if (!n.ok) return { allowed: false, message: clip(n.reason), warnings: [] };
      return spec.review ? spec.review(n.record, snap, o) : { allowed: true, warnings: [] };
    },
  };
}
