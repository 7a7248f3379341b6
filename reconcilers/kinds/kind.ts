// What a kind declares about itself (a kind is a folder: reconcilers/kinds/<kind>/), and what app/setup.ts hands a
// kind when it wires it. The registry (registry.ts) lists every kind once; setup, the admission webhook, its
// configuration (webhook.ts → kustomize/webhook.yaml) and the ClusterRole (rbac.ts → kustomize/rbac.yaml) iterate it.
import type { CrdDefinition } from '../../crds/schema/definition.ts';
import type { Controller } from '../../operator/controller.ts';
import type { Informer } from '../../operator/informer.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import type { ResourceType } from '../../operator/kube/resources.ts';
import type { Manager } from '../../operator/manager.ts';
import type { ConfigMapReader, SecretReader } from '../annotations/plugins.ts';
import type { Change, ChangeKind, Model, ModelSnapshot } from '../model/model.ts';
import type { ClaimProcessor, IngressStatus, TranslateOptions } from '../translate/translate.ts';
import type { Verdict } from './admission.ts';
import type { GatewayApiOptions } from '../translate/gateway-api/attach.ts';
import type { ClusterTrustBundleReader } from '../model/gateway-api.ts';

/** Which Ingresses and Routes are Portico's (flags --controller-class, --ingress-class, --watch-ingress-without-class). */
export interface ClassOptions {
  controllerClass: string;
  /** Class name accepted in the legacy kubernetes.io/ingress.class annotation. */
  ingressClassName: string;
  watchWithoutClass: boolean;
}

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

/** One permission of the ClusterRole: verbs on a resource (or on its subresource). */
export interface RbacRule {
  resource: ResourceType;
  subresource?: string;
  verbs: readonly Verb[];
  /** Why Portico needs it: a comment above the rule in kustomize/rbac.yaml. */
  why?: string;
}

/**
 * The webhook of Portico's ValidatingWebhookConfiguration that sends a kind's objects to the admission review
 * (kustomize/webhook.yaml is generated from it: webhook.ts, `make webhook`).
 */
export interface WebhookSpec {
  /** The webhook's name: kinds that name the same one are reviewed by it together (one rule per API group). */
  name: string;
  /** CEL conditions an object must meet to be sent (kinds sharing a webhook must share them). */
  matchConditions?: readonly { name: string; /** The expression, as the lines of a folded YAML scalar. */ expression: readonly string[] }[];
  /** Why the webhook is as it is: a comment above it in kustomize/webhook.yaml. */
  why?: string;
}

/** The settings (from flags) the kinds read. */
export interface KindOptions {
  classes: ClassOptions & { ingressClassByName: boolean };
  /** --watch-namespace: only that namespace's Ingresses, CRDs and referenced ConfigMaps are listed. */
  watched: { namespace?: string };
  /** --configmap, --tcp-services-configmap, --udp-services-configmap ("namespace/name"). */
  configmap?: string;
  tcpServices?: string;
  udpServices?: string;
  reservedPorts: number[];
  status: { update: boolean; publishService?: string; publishStatusAddress?: string; clearOnShutdown: boolean };
  /**
   * Gateway API, when on (--enable-gateway-api): the controllerName Portico serves, the pod ports it must not give
   * to listeners, Portico's namespace (where each Gateway's Service goes) and its own Service (whose selector those
   * Services copy).
   */
  gatewayApi?: GatewayApiOptions & { namespace: string; publishService?: string };
  /**
   * The version of certificates.k8s.io that serves ClusterTrustBundles (v1, else v1beta1), when the API server serves
   * them and Gateway API is on: the ClusterTrustBundle kind is wired only then.
   */
  clusterTrustBundleVersion?: string;
}

/** What a kind gets when it is wired (setup.ts builds it once for all kinds). */
export interface KindContext {
  m: Manager;
  model: Model;
  o: KindOptions;
  /** Every registered kind (a kind that serves the others, e.g. Secret, asks them what they read). */
  kinds: readonly KindDescriptor[];
  /** The main informer of a kind wired before this one (registry order). */
  informerOf(kind: string): Informer<KubeObject>;
  /** Reconciles a key of a kind again; resolved when called, so any kind may be named. */
  enqueue(kind: string, key: string): void;
  /** Secret data for the normalizers (the Secret kind provides it; resolved when called). */
  secrets: SecretReader;
  /** Referenced ConfigMaps (the ConfigMap kind provides it; resolved when called). */
  configMaps: ConfigMapReader;
  /**
   * ClusterTrustBundles by name (the ClusterTrustBundle kind provides it; resolved when called); undefined when that
   * kind is not wired (the API server does not serve them): a reference to one is then of a kind Portico cannot read.
   */
  clusterTrustBundles: ClusterTrustBundleReader | undefined;
}

/** What wiring a kind produced. */
export interface Wired {
  informer: Informer<KubeObject>;
  controller: Controller;
  /** Readers this kind serves to the others (see KindContext). */
  provides?: { secrets?: SecretReader; configMaps?: ConfigMapReader; clusterTrustBundles?: ClusterTrustBundleReader };
}

/** The gateway as the status writers see it (app/setup.ts passes the NginxDriver). */
export interface GatewayView {
  isReady(): boolean;
  readonly programmed: ReadonlySet<string>;
  statusOf(ref: string): IngressStatus | undefined;
  onReady(cb: () => void): void;
  onReported(cb: (refs: string[]) => void): void;
  onProgrammedChange(cb: (changed: string[]) => void): void;
}

/** One kind Portico reconciles. */
export interface KindDescriptor {
  /** The kind ("Ingress", "Route"...): the key of the registry and the prefix of its kind-qualified refs. */
  kind: string;
  /** The API resource of its main informer (and of admission). */
  resource: ResourceType;
  /** A kind wired only when its API is on ('gateway-api': --enable-gateway-api). */
  feature?: 'gateway-api';
  /** One of Portico's CRDs: its definition (crds/schema/<kind>.ts), which crds/generate.ts turns into crds/<plural>.yaml. */
  crd?: CrdDefinition;
  /** Start-up stage of its informers and controllers (operator/manager.ts): 0 IngressClasses, 1 Ingresses and CRDs, 2 what they refer to. */
  stage: number;
  /** The model slices its reconcilers write (the `kind` of the model's changes). */
  writes: readonly ChangeKind[];
  /** The ClusterRole rules it needs (kustomize/rbac.yaml is generated from them). */
  rbac: readonly RbacRule[];
  /** Informers and controllers, created in its stage. */
  wire(ctx: KindContext): Wired;
  /** Leader-only status writers, wired once the gateway exists. */
  status?(ctx: KindContext, wired: Wired, gateway: GatewayView): void;
  /** The gateway reports (Events, status) on objects of this kind by kind-qualified ref ("Route/ns/name"). */
  reportedByGateway?: boolean;
  /** The Secrets one of its objects in the model reads: TLS ones (key material) and the others (credentials, CA bundles...). */
  secretsRead?(model: Model, key: string): { tls: string[]; other: string[] };
  /** Whether a change of a credential Secret it reads reconciles the object again. */
  rereadsCredentials?: boolean;
  /** The ConfigMaps ("namespace/name") one of its objects in the model reads. */
  configMapsRead?(model: Model, key: string): string[];
  /** CRD status conditions (Accepted, ResolvedRefs, Programmed), written by the shared crd-status controller. */
  conditions?: ConditionsOf;
  /** Whether those include Programmed (live in nginx): then a rejected spec is also reported not programmed. */
  reportsProgrammed?: boolean;
  /** Status refs to recompute when another kind's record changes (an Upstream's ResolvedRefs follows its Service). */
  statusFollows?(change: Change, model: Model): string[];
  /** How its objects claim paths in the translation (kinds/processors.ts, generated from the registry, lists them in registry order). */
  processor?: ClaimProcessor;
  /** Validating admission of this kind (the webhook). */
  admission?(obj: KubeObject, snap: ModelSnapshot, o: TranslateOptions, now: Date): Verdict;
  /** The webhook that sends its objects to that review (every kind with an admission names one). */
  webhook?: WebhookSpec;
}

export type DesiredCondition = { type: 'Accepted' | 'ResolvedRefs' | 'Programmed'; status: 'True' | 'False' | 'Unknown'; reason: string; message: string };
/** Pure: the conditions of one CR (null = not Portico's to write, e.g. a Route of another class). */
export type ConditionsOf = (key: string, model: Model, route: { status: IngressStatus | undefined; programmed: boolean; synced: boolean }) => DesiredCondition[] | null;
