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
  /** Server-side-apply bookkeeping; informer caches drop it, and kubectl's last-applied annotation (see stripManagedFields). */
  managedFields?: unknown[];
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

export function isKubeObject(v: unknown): v is KubeObject {
  if (typeof v !== 'object' || v === null) return false;
  const m = (v as { metadata?: unknown }).metadata;
  return typeof m === 'object' && m !== null && typeof (m as { name?: unknown }).name === 'string';
}

/**
 * controller-runtime's default cache transform: `metadata.managedFields` is server-side-apply bookkeeping no
 * reconciler reads, and on objects edited by several managers it is often larger than the rest of the object.
 * Returns the object itself when there is nothing to drop.
 */
export function stripManagedFields<T extends KubeObject>(obj: T): T {
  const last = obj.metadata.annotations?.[LAST_APPLIED];
  if (obj.metadata.managedFields === undefined && last === undefined) return obj;
  const { managedFields: _dropped, ...metadata } = obj.metadata;
  if (last !== undefined) {
    const { [LAST_APPLIED]: _copy, ...annotations } = obj.metadata.annotations as Record<string, string>;
    metadata.annotations = annotations;
  }
  return { ...obj, metadata };
}

/**
 * kubectl apply's copy of the whole object as last applied (often the largest field of an object in a real
 * cluster). Controllers rarely read it; informer caches drop it with managedFields.
 */
export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
