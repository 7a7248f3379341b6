// Normalized, validated state the reconcilers write into the model. Plain data; keys are "namespace/name".
import type { PathMatch } from '../config/types.ts';
import type { ParsedAnnotations } from '../annotations/table.ts';

export interface IngressClassInfo {
  name: string;
  controller: string;
  isDefault: boolean;
}

export interface ServiceBackendRef {
  service: string;
  /** Service port by number or by name. */
  port: { number: number } | { name: string };
}

export interface IngressPath {
  path: string;
  match: PathMatch;
  backend: ServiceBackendRef;
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
  /** Parts of the object that were dropped, with why (bad annotation values, resource backends, bad paths). */
  problems: string[];
  unsupportedAnnotations: string[];
  /**
   * Unsupported annotations that restrict access (auth-*, allowlists, ...). Non-empty = the Ingress fails closed:
   * its paths are claimed but answer 503 until the annotations are supported or removed.
   */
  accessControl: { annotation: string; kind: string }[];
  /** portico.dev/test-invalid-directive: "true" (only honoured with --enable-test-hooks). */
  testInvalidDirective: boolean;
}

export interface ServicePort {
  name: string;
  port: number;
  targetPort: number | string;
  protocol: string;
}

export interface NormalizedService {
  key: string;
  type: string;
  externalName: string | null;
  ports: ServicePort[];
  /** Parts of the Service that were dropped, with why (invalid port names or numbers, invalid externalName). */
  problems: string[];
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
