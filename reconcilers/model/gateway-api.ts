// Gateway API (gateway.networking.k8s.io) objects as the model keeps them: what the kinds' normalizers
// (reconcilers/kinds/{gatewayclass,gateway,httproute,referencegrant,namespace}/) make of the API objects, and what
// the pure attachment (translate/gateway-api/attach.ts) and the HTTPRoute claim processor read. The CRDs are
// upstream's (installed from the gateway-api release), so these records are shaped by Portico, not by a schema of
// its own: every value that reaches nginx is validated where it is normalized.
import type { CrdMeta } from './types.ts';

export const GATEWAY_GROUP = 'gateway.networking.k8s.io';

/**
 * ClusterTrustBundle (certificates.k8s.io): cluster-scoped public CA certificates, which caCertificateRefs of
 * BackendTLSPolicies and of Gateways' frontend validation may name (Gateway API's ClusterTrustBundle feature).
 */
export const TRUST_BUNDLE_GROUP = 'certificates.k8s.io';
export const TRUST_BUNDLE_KIND = 'ClusterTrustBundle';
/** Whether a reference (group, kind) names a ClusterTrustBundle. */
export const isTrustBundleRef = (r: { group?: string | undefined; kind?: string | undefined }): boolean => r.group === TRUST_BUNDLE_GROUP && r.kind === TRUST_BUNDLE_KIND;
/**
 * A ClusterTrustBundle's spec.trustBundle (PEM certificates) by name, or undefined when there is none of that name.
 * The normalizers are handed no reader at all (undefined) when the API server does not serve ClusterTrustBundles.
 */
export type ClusterTrustBundleReader = (name: string) => { trustBundle: string } | undefined;

/** A GatewayClass (cluster-scoped: key = name). */
export interface GatewayClassRecord extends CrdMeta {
  controllerName: string;
}

/** One listener of a Gateway, as written (validated by the attachment, which reports on it). */
export interface ListenerN {
  name: string;
  port: number;
  protocol: string;
  /** Absent: any host. May be a wildcard ("*.example.com"). */
  hostname?: string;
  tls?: {
    mode: 'Terminate' | 'Passthrough';
    certificateRefs: { group: string; kind: string; namespace: string; name: string }[];
  };
  allowedRoutes: {
    namespaces: { from: 'Same' | 'All' | 'Selector' | 'None'; selector?: LabelSelectorN };
    /** Absent: the kinds the protocol supports. */
    kinds?: { group: string; kind: string }[];
  };
  /**
   * filters.requests (experimental, GatewayListenerFilters): run on every request the listener accepts, before route
   * matching, in this order. Absent or empty: none. Judged by the attachment (attach.ts listenerFilterPlan).
   */
  filters?: ListenerFilterN[];
}

/** One listener filter as written (the namespace of references defaulted to the listener's object's). */
export interface ListenerFilterN {
  type: string;
  extensionRef?: { group: string; kind: string; name: string };
  externalAuth?: {
    protocol: string;
    backendRef: { group: string; kind: string; namespace: string; name: string; port?: number };
    /** http.path: the prefix put before the client's path on the auth request ("" none). */
    path: string;
    /** http.allowedHeaders: client headers sent besides those always sent. */
    allowedHeaders: string[];
    /** http.allowedResponseHeaders: auth response headers copied onto the request; empty = all but Host/Authority. */
    allowedResponseHeaders: string[];
    /** forwardBody.maxSize (0: the body is not sent). */
    forwardBodyMaxSize: number;
  };
}

export interface LabelSelectorN {
  matchLabels: Record<string, string>;
  matchExpressions: { key: string; operator: string; values: string[] }[];
}

/**
 * One caCertificateRef of a Gateway's frontend TLS validation, defaults applied (namespace the Gateway's; '' for a
 * ClusterTrustBundle, which is cluster-scoped). For a core ConfigMap or a ClusterTrustBundle the normalizer read it:
 * `ca` is its ca.crt or spec.trustBundle (PEM certificates, re-encoded), else `problem` says why it cannot be used.
 * Whether the reference is allowed at all (its kind, a ReferenceGrant) is the attachment's to judge; `kindProblem`
 * says why a kind Portico otherwise reads cannot be (the API server does not serve ClusterTrustBundles).
 */
export interface CaCertificateRefN {
  group: string;
  kind: string;
  namespace: string;
  name: string;
  ca?: string;
  problem?: string;
  kindProblem?: string;
}

/** spec.tls.frontend's validation of client certificates (FrontendTLSValidation), mode defaulted to AllowValidOnly. */
export interface FrontendValidationN {
  mode: 'AllowValidOnly' | 'AllowInsecureFallback';
  caCertificateRefs: CaCertificateRefN[];
}

/** spec.tls.frontend: the default validation, and per port the one replacing it (none: that port validates nothing). */
export interface FrontendTlsN {
  default?: FrontendValidationN;
  perPort: { port: number; validation?: FrontendValidationN }[];
}

export interface GatewayRecord extends CrdMeta {
  className: string;
  listeners: ListenerN[];
  /**
   * spec.addresses as written (type defaulted to IPAddress). Portico serves IPAddress ones only (the cluster IP of the
   * Gateway's Service); an IPAddress without a value asks for any address.
   */
  addresses: { type: string; value?: string; routability?: string }[];
  /** spec.tls.frontend (client certificates of HTTPS listeners); absent when not set. */
  frontendTls?: FrontendTlsN;
  /** spec.tls.backend.clientCertificateRef (namespace defaulted to the Gateway's): presented to TLS backends. */
  backendClientCertificate?: { group: string; kind: string; name: string; namespace: string };
  infrastructure?: {
    labels: Record<string, string>;
    annotations: Record<string, string>;
    /** spec.infrastructure.parametersRef as written ("group/Kind name"): Portico takes none (Accepted False). */
    parametersRef?: string;
  };
  /**
   * spec.allowedListeners.namespaces: which namespaces' ListenerSets may add listeners to this Gateway (default None:
   * none may; Same: its own namespace; Selector: namespaces whose labels the selector matches; All).
   */
  allowedListeners: { from: 'Same' | 'All' | 'Selector' | 'None'; selector?: LabelSelectorN };
}

/**
 * A ListenerSet: listeners it adds to its parent Gateway (when the Gateway's allowedListeners admits its namespace).
 * Listeners as a Gateway's (certificateRefs' namespaces defaulted to the ListenerSet's); at most 64 (the API's cap).
 */
export interface ListenerSetRecord extends CrdMeta {
  /** spec.parentRef, defaults applied (group gateway.networking.k8s.io, kind Gateway, namespace the ListenerSet's). */
  parent: { group: string; kind: string; namespace: string; name: string };
  listeners: ListenerN[];
}

/** A parentRef of a route, defaults applied (group/kind Gateway, namespace the route's). */
export interface ParentRefN {
  group: string;
  kind: string;
  namespace: string;
  name: string;
  sectionName?: string;
  port?: number;
}

/** A backendRef, defaults applied (group "" kind Service, namespace the route's, weight 1). */
export interface BackendRefN {
  group: string;
  kind: string;
  namespace: string;
  name: string;
  port?: number;
  weight: number;
  /** HTTPRoute: the backendRef's own filters (run only for the requests sent to it, after the rule's). */
  filters?: HttpFilterN[];
}

export interface HttpMatchN {
  path: { type: 'Exact' | 'PathPrefix' | 'RegularExpression'; value: string };
  headers: { type: 'Exact' | 'RegularExpression'; name: string; value: string }[];
  queryParams: { type: 'Exact' | 'RegularExpression'; name: string; value: string }[];
  method?: string;
}

/** A filter of a rule as Portico serves it (those it does not are refused when normalizing, naming the field). */
export type HttpFilterN =
  | { type: 'RequestHeaderModifier' | 'ResponseHeaderModifier'; set: { name: string; value: string }[]; add: { name: string; value: string }[]; remove: string[] }
  | { type: 'RequestRedirect'; scheme?: 'http' | 'https'; hostname?: string; port?: number; statusCode: 301 | 302 | 303 | 307 | 308; path?: { type: 'ReplaceFullPath' | 'ReplacePrefixMatch'; value: string } }
  | { type: 'URLRewrite'; hostname?: string; path?: { type: 'ReplaceFullPath' | 'ReplacePrefixMatch'; value: string } }
  /**
   * A copy of requests to another backend (its answer is dropped): of each request, or of a share of them
   * (`share`: numerator/denominator, numerator ≤ denominator; absent = every request), drawn per request.
   */
  | { type: 'RequestMirror'; backend: BackendRefN; share?: { numerator: number; denominator: number } }
  /** CORS; an empty allowMethods / allowHeaders list stands for "*" (the preflight's request is echoed). */
  | { type: 'CORS'; allowOrigins: string[]; allowMethods: string[]; allowHeaders: string[]; exposeHeaders: string[]; allowCredentials: boolean; maxAge: number };

export interface HttpRuleN {
  name?: string;
  matches: HttpMatchN[];
  backends: BackendRefN[];
  filters: HttpFilterN[];
  /** Portico Plugin objects of the route's namespace the rule runs (ExtensionRef filters, group portico.dev kind Plugin). */
  plugins: string[];
  /** Seconds (timeouts.request, timeouts.backendRequest); absent: the global ones. */
  timeouts?: { request?: number; backendRequest?: number };
  /** retry: the status codes retried on (besides connection errors), the retries allowed, and backoff as written. */
  retry?: { codes: number[]; attempts: number; backoff?: string };
}

export interface HttpRouteRecord extends CrdMeta {
  parents: ParentRefN[];
  hostnames: string[];
  rules: HttpRuleN[];
  /** A GRPCRoute (kinds/grpcroute/normalize.ts: method matches are path matches): its backends speak gRPC (HTTP/2). */
  grpc?: true;
}

/** The Layer-4 route kinds: TCPRoute and UDPRoute (a port's connections), TLSRoute (TLS passed through by server name). */
export type StreamRouteKind = 'TCPRoute' | 'UDPRoute' | 'TLSRoute';

/** A TCPRoute, UDPRoute or TLSRoute (one rule: the API server allows exactly one). */
export interface StreamRouteRecord extends CrdMeta {
  parents: ParentRefN[];
  /** TLSRoute's server names (exact or "*." wildcards); empty for TCP and UDP. */
  hostnames: string[];
  backends: BackendRefN[];
  /** The rule's name (sectionName of the rule), when it has one. */
  ruleName?: string;
}

export interface ReferenceGrantRecord extends CrdMeta {
  from: { group: string; kind: string; namespace: string }[];
  to: { group: string; kind: string; name?: string }[];
}

/** A Namespace's labels (for allowedRoutes.namespaces.from: Selector). Cluster-scoped: key = name. */
export interface NamespaceRecord extends CrdMeta {
  labels: Record<string, string>;
}

/**
 * A BackendTLSPolicy: TLS from Portico to the Service ports it targets, verified against its CA bundle under its
 * hostname (also the SNI). Its ConfigMaps are read when it is normalized (kinds/backendtlspolicy/normalize.ts).
 */
export interface BackendTlsPolicyRecord extends CrdMeta {
  /** Services of the policy's namespace, each with the port name it targets (absent: every port). */
  targets: { name: string; sectionName?: string }[];
  hostname: string;
  /**
   * spec.validation.subjectAltNames, checked (absent: none): the backend's certificate must carry one of them, and
   * the hostname is then only the SNI. Hostname: a DNS name (a leading "*." for a wildcard); URI: an absolute URI.
   */
  subjectAltNames?: { type: 'Hostname' | 'URI'; value: string }[];
  /** The CA certificates of its valid caCertificateRefs (PEM), or the system's (wellKnownCACertificates: System). */
  caPem?: string;
  /** Its caCertificateRefs Portico cannot use, each with the ResolvedRefs reason and why. */
  refProblems: { reason: 'InvalidKind' | 'InvalidCACertificateRef'; message: string }[];
  /**
   * What it asks that Portico does not serve (options; subjectAltNames without Portico's nginx module portico_upstream_ssl,
   * or ones Portico refuses): the policy is not accepted, its targets fail closed.
   */
  unsupported?: string;
}

declare module './model.ts' {
  interface CrdRecords {
    BackendTLSPolicy: BackendTlsPolicyRecord;
    GatewayClass: GatewayClassRecord;
    Gateway: GatewayRecord;
    ListenerSet: ListenerSetRecord;
    HTTPRoute: HttpRouteRecord;
    GRPCRoute: HttpRouteRecord;
    TCPRoute: StreamRouteRecord;
    UDPRoute: StreamRouteRecord;
    TLSRoute: StreamRouteRecord;
    ReferenceGrant: ReferenceGrantRecord;
    Namespace: NamespaceRecord;
  }
}
