// Normalized, validated state the reconcilers write into the model. Plain data; keys are "namespace/name".
import type { PathMatch, PluginInstance, RouteConditions } from '../config/types.ts';
import type { ParsedAnnotations } from '../annotations/table.ts';
import type { AnnotationPlugin } from '../annotations/plugins.ts';
import type { FastcgiParams } from '../annotations/groups/fastcgi.ts';

export interface IngressClassInfo {
  name: string;
  controller: string;
  isDefault: boolean;
}

export interface ServiceBackendRef {
  service: string;
  /** The Service's namespace when it is not the referring object's (an HTTPRoute's backendRef a ReferenceGrant permits). */
  namespace?: string;
  /** Service port by number or by name. */
  port: { number: number } | { name: string };
}

export interface IngressPath {
  path: string;
  match: PathMatch;
  backend: ServiceBackendRef;
  /**
   * The path as written in the Ingress, when `path` differs from it (a Prefix path's trailing slash is dropped):
   * ingress-nginx's semantics sometimes depend on it (a location "/foo/" redirects "/foo" with 301; rewrite-target
   * and host-wide regex paths use the path as written).
   */
  written?: string;
  /**
   * An ImplementationSpecific path written with one trailing slash ("/foo/"): ingress-nginx's `location /foo/`, which
   * matches "/foo/..." only and answers "/foo" with a 301 to "/foo/". A Prefix path never has it: the Ingress spec
   * makes "/foo/" match "/foo" itself (element-wise prefix, trailing slash ignored).
   */
  slashQuirk?: true;
}

export interface IngressRule {
  /** null = rule without host (served on the catch-all server). */
  host: string | null;
  paths: IngressPath[];
}

export interface IngressTls {
  hosts: string[];
  secretName: string | null;
}

export interface NormalizedIngress {
  key: string;
  namespace: string;
  name: string;
  uid: string;
  generation: number;
  creationTimestamp: string;
  /** spec.ingressClassName, else the legacy kubernetes.io/ingress.class annotation, else null. */
  className: string | null;
  classFromAnnotation: boolean;
  rules: IngressRule[];
  defaultBackend: ServiceBackendRef | null;
  tls: IngressTls[];
  annotations: ParsedAnnotations;
  /**
   * The nginx.ingress.kubernetes.io/ and portico.dev/ annotations as written (name → value), for the ConfigMap's
   * annotation-value-word-blocklist, which the translation applies. Absent when there are none.
   */
  annotationText?: Readonly<Record<string, string>>;
  /** Parts of the object that were dropped, with why (bad annotation values, resource backends, bad paths). */
  problems: string[];
  unsupportedAnnotations: string[];
  /**
   * Unsupported annotations that restrict access (auth-*, allowlists, ...). Non-empty = the Ingress fails closed:
   * its paths are claimed but answer 503 until the annotations are supported or removed.
   */
  accessControl: { annotation: string; kind: string }[];
  /** ingress-nginx annotations that are plugins (IP lists, CORS, rate limits), as validated plugin configurations. */
  annotationPlugins: AnnotationPlugin[];
  /** "namespace/name" of the auth-secret (basic auth) it reads, if any. */
  authSecret?: string;
  /** "namespace/name" of the custom-headers ConfigMap it reads, if any. */
  customHeadersConfigMap?: string;
  /** "namespace/name" of the auth-proxy-set-headers ConfigMap it reads, if any. */
  authProxyHeadersConfigMap?: string;
  /**
   * ingress-nginx's fastcgi-params-configmap (with backend-protocol FCGI): the ConfigMap read and its params, or why
   * they cannot be used (then every path of the Ingress answers 503).
   */
  fastcgi?: FastcgiParams;
  /**
   * ingress-nginx's proxy-ssl-secret: what the Secret holds for TLS to the backend, or why it cannot be used (then
   * every path of the Ingress answers 503). The other proxy-ssl-* values stay in `annotations`.
   */
  proxySsl?: ProxySslSecret;
  /** "namespace/name" of the auth-tls-secret (client certificates' CA) it reads, if any. */
  authTlsSecret?: string;
  /** portico.dev/test-invalid-directive: "true" (only honoured with --enable-test-hooks). */
  testInvalidDirective: boolean;
}

/** proxy-ssl-secret as read by normalizeIngress (only from the Ingress's own namespace). */
export interface ProxySslSecret {
  /** "namespace/name" of the Secret read (and watched); absent when none is (another namespace, an invalid value). */
  secretKey?: string;
  /** tls.crt (the chain) and tls.key, re-encoded as PEM: the client certificate presented to the backend. */
  certificate?: { cert: string; key: string };
  /** ca.crt, re-encoded as PEM: the CAs the backend's certificate is verified against (proxy-ssl-verify on). */
  ca?: string;
  /** Why the proxy-ssl-* annotations cannot be applied: the Ingress's paths answer 503. */
  error?: string;
  /** The Secret does not exist (yet): admission lets the Ingress in with a warning. */
  missing?: true;
}

export interface ServicePort {
  name: string;
  port: number;
  targetPort: number | string;
  protocol: string;
  /** spec.ports[].appProtocol (Gateway API: kubernetes.io/h2c makes HTTPRoute backends speak HTTP/2 without TLS). */
  appProtocol?: string;
}

export interface NormalizedService {
  key: string;
  type: string;
  externalName: string | null;
  ports: ServicePort[];
  /** Parts of the Service that were dropped, with why (invalid port names or numbers, invalid externalName). */
  problems: string[];
  /** spec.clusterIP when it is an IP address, "None" for a headless Service, else null (for service-upstream). */
  clusterIP?: string | null;
  /** metadata.uid (Portico's own Service's gives the installation's loop-detection id). */
  uid?: string;
  /** The other IP addresses the Service answers on: spec.clusterIPs besides clusterIP, externalIPs, load-balancer IPs. */
  otherIPs?: string[];
}

export interface SliceEndpoint {
  address: string;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
}

export interface NormalizedSlice {
  key: string;
  serviceKey: string;
  addressType: string;
  ports: { name: string; port: number; protocol: string }[];
  endpoints: SliceEndpoint[];
}

export type TlsMaterial =
  | { key: string; ok: true; cert: string; privateKey: string; hosts: string[]; notAfter: string; fingerprint: string }
  | { key: string; ok: false; error: string };

// ---- Portico's CRDs (portico.dev/v1alpha1), normalized by their reconcilers ------------------------------------

/** What every normalized CRD record carries for status and events. */
export interface CrdMeta {
  /** "namespace/name". */
  key: string;
  namespace: string;
  name: string;
  uid: string;
  generation: number;
  creationTimestamp: string;
}

export interface RouteMatchN {
  path: string;
  match: PathMatch;
  /** Absent when the match has only a path. */
  conditions?: RouteConditions;
}

export interface RouteRuleN {
  /** spec.rules[].name, or "rule-<index>" when absent. */
  name: string;
  matches: RouteMatchN[];
  backends: { service: string; port: number; weight: number }[];
  /** Plugin object names (same namespace), as written. */
  plugins: string[];
  /** Seconds. */
  timeouts?: { connect?: number; read?: number; send?: number };
  retries?: { attempts: number; on: string[] };
  websocket: boolean;
  priority: number;
}

export interface NormalizedRoute extends CrdMeta {
  className: string | null;
  /** Empty = any host (the catch-all, like an Ingress rule without host). */
  hosts: string[];
  tls: { hosts: string[]; secretName: string }[];
  rules: RouteRuleN[];
}

export interface NormalizedUpstream extends CrdMeta {
  /** "namespace/service". */
  serviceKey: string;
  /** Service ports (numbers) it applies to; null = all. */
  ports: number[] | null;
  balance?: 'round_robin' | 'ewma' | 'chash' | 'cookie';
  /** nginx variable for chash, e.g. "$http_x_user". */
  hashBy?: string;
  cookie?: { name: string; maxAgeSeconds?: number; mode: 'balanced' | 'persistent'; path?: string; domain?: string; sameSite?: 'Strict' | 'Lax' | 'None'; conditionalSameSiteNone?: boolean; secure?: boolean; expiresSeconds?: number; changeOnFailure?: boolean; partitioned?: boolean };
  retries?: { attempts: number; on: string[] };
  timeouts?: { connect?: number; read?: number; send?: number };
  protocol: 'HTTP' | 'HTTPS' | 'GRPC' | 'GRPCS';
  /**
   * TLS to the backend (protocol HTTPS/GRPCS). serverName: SNI and the name verified (default
   * "<service>.<namespace>.svc"). With verify, `caPem` is the CA bundle read from caSecret's ca.crt, or `caError`
   * says why it could not be read — then the backend fails closed (503), never unverified.
   */
  tls?: { caSecret?: string; serverName?: string; verify: boolean; caPem?: string; caError?: string };
  passiveHealth?: { failures: number; statuses: number[]; ejectSeconds: number };
}

/** A Plugin object: its Lua-ready instance, or why it cannot be used. */
export interface NormalizedPlugin extends CrdMeta {
  type: string;
  /** Ready for the data plane (without `name`, which the translation sets); null when `error` is set. */
  instance: DistributiveOmit<PluginInstance, 'name'> | null;
  /** For external-auth: the Service it calls. */
  authService?: { service: string; port: number };
  /** Invalid config, or a configFrom Secret that is missing/unreadable (ResolvedRefs). */
  error?: string;
  /** The error is about a reference (Secret), not the spec itself. */
  unresolved?: boolean;
  /** configFrom Secret key "namespace/name", if any. */
  secretKey?: string;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export interface NormalizedConsumer extends CrdMeta {
  username: string;
  /** Resolved credentials (hashes only). */
  keys: string[];
  basic: { username: string; hash: string }[];
  /** Credential Secrets ("namespace/name") it reads. */
  secretKeys: string[];
  plugins: string[];
  /** Credential Secrets missing or malformed (ResolvedRefs=False); the other credentials still work. */
  problems: string[];
}

// ---- TCP and UDP services (--tcp-services-configmap / --udp-services-configmap), normalized by tcpudp.ts ---------

export type StreamProtocol = 'TCP' | 'UDP';

/** One normalized ConfigMap entry. */
export interface StreamEntry {
  protocol: StreamProtocol;
  /** The port Portico listens on (the ConfigMap key). */
  port: number;
  namespace: string;
  service: string;
  /** The Service port: its number, or its name. */
  servicePort: number | string;
  /** Expect a PROXY protocol header from clients on this listener. */
  decodeProxy: boolean;
  /** Send a PROXY protocol header to the backend. */
  encodeProxy: boolean;
  /** Where it came from, for Events: the ConfigMap ("namespace/name") and the key. */
  configMap: string;
  key: string;
}
