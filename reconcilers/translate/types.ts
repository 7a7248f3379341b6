// What translate() is given and what it answers: options, events, per-object status, the result.
import type { GatewayConfig, GlobalSettings, ModsecurityInstall, PathMatch, RequestMetricsSettings } from '../config/types.ts';
import type { ServiceBackendRef } from '../model/types.ts';
import type { GatewayApiOptions } from './gateway-api/attach.ts';

export interface TranslateOptions {
  controllerClass: string;
  /** Gateway API (--enable-gateway-api): the GatewayClasses Portico serves, the pod ports it must not give out. */
  gatewayApi?: GatewayApiOptions;
  /** Class name accepted in the legacy kubernetes.io/ingress.class annotation. */
  ingressClassName: string;
  watchWithoutClass: boolean;
  /** --ingress-class-by-name: also serve spec.ingressClassName == ingressClassName whatever its controller. */
  ingressClassByName?: boolean;
  listen: GlobalSettings['listen'];
  /** Honour the portico.dev/test-invalid-directive annotation (tests of fault isolation only). */
  testHooks?: boolean;
  /**
   * Portico's own addresses, never used as endpoints (any spelling of an IP address): the node's and the pod's
   * listener addresses, and those of the published Service and its pods (see self.ts; the gateway adds them).
   */
  ownAddresses?: readonly string[];
  /** --publish-service ("namespace/name"): Portico's own Service. ExternalNames and auth/mirror URLs naming it are refused. */
  selfService?: string;
  /** The installation's loop-detection id (self.ts loopIdOf), sent in the hop header of every proxied request. */
  loopId?: string;
  /**
   * --default-backend-service ("namespace/name"): the Service (its first port) that the custom-http-errors of every
   * Ingress path without its own default-backend go to, as ingress-nginx's default backend.
   */
  defaultBackendService?: string;
  /** --enable-ssl-passthrough: apply the ssl-passthrough annotation (without it the annotation gets a Warning). */
  sslPassthrough?: boolean;
  /**
   * ModSecurity as installed on this machine (nginx-driver/nginx/modsecurity.ts detectModsecurity); absent = nginx's
   * ModSecurity module is not: paths that ask for ModSecurity fail closed (503).
   */
  modsecurity?: ModsecurityInstall;
  /** Per-request metrics (--enable-metrics): present = routes carry their metric labels and nginx counts requests. */
  metrics?: RequestMetricsSettings;
}

export interface TranslateEvent {
  /** Kind-qualified reference of the object the event is about ("Ingress/namespace/name"). */
  ref: string;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface IngressStatus {
  served: boolean;
  /** At least one of its paths (or its default backend) is live in the configuration. */
  programmed: boolean;
  problems: string[];
  /** References that could not be resolved (Plugins, Services, Secrets): ResolvedRefs=False for CRDs. */
  unresolved?: string[];
}

export interface TranslateResult {
  config: GatewayConfig;
  /**
   * Set by the incremental translation: the only objects (refs; status, events), hosts (routes, certificates) and
   * backends in which this result can differ from the previous one. Absent: anything may have changed.
   */
  touched?: { objects: ReadonlySet<string>; hosts: ReadonlySet<string>; backends: ReadonlySet<string> };
  /** Per object, keyed by kind-qualified reference ("Ingress/namespace/name"). */
  status: Map<string, IngressStatus>;
  events: TranslateEvent[];
}

/** One path an Ingress asks for, with every string the translation needs computed once per Ingress record. */
export interface PathClaim {
  host: string;
  /** "<match> <path>": what two claims on one host conflict on. */
  id: string;
  path: string;
  /** The path as the object wrote it (a Prefix path keeps its trailing slash here). */
  written: string;
  match: PathMatch;
  ref: ServiceBackendRef;
  backendId: string;
  /** "<namespace>/<service>" of the backend. */
  serviceKey: string;
  /** Kind-qualified reference of the claiming object. */
  source: string;
}
