// The minimal shape every Kubernetes object shares. Reconcilers parse the rest with zod.

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: unknown[];
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

/** The cache/queue key of an object: "namespace/name", or "name" for cluster-scoped objects. */
export function keyOf(obj: { metadata: { name: string; namespace?: string } }): string {
  return obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : obj.metadata.name;
}

export function splitKey(key: string): { namespace?: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

export function isKubeObject(v: unknown): v is KubeObject {
  if (typeof v !== 'object' || v === null) return false;
  const m = (v as { metadata?: unknown }).metadata;
  return typeof m === 'object' && m !== null && typeof (m as { name?: unknown }).name === 'string';
}
