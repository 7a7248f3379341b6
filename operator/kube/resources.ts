// Descriptors of API resources (group, version, plural, kind, scope), and the REST paths built from them.

export interface ResourceType {
  /** "" for the core group. */
  group: string;
  version: string;
  /** Lower-case plural, as in the REST path and in RBAC rules. */
  plural: string;
  kind: string;
  namespaced: boolean;
}

/**
 * The resources the framework itself reads and writes: the leader Lease and Events. An application declares the
 * resources it watches in its own table (e.g. spreading this one into it) and passes them to the manager.
 */
export const FrameworkResources = {
  Lease: { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', namespaced: true },
  Event: { group: 'events.k8s.io', version: 'v1', plural: 'events', kind: 'Event', namespaced: true },
} as const satisfies Record<string, ResourceType>;

/**
 * REST path of a collection (name undefined) or of one object. Namespaced resources with no namespace give the
 * all-namespaces collection path.
 */
export function resourcePath(r: ResourceType, namespace?: string, name?: string, subresource?: string): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  let p = base;
  if (r.namespaced && namespace) p += `/namespaces/${encodeURIComponent(namespace)}`;
  p += `/${r.plural}`;
  if (name !== undefined) p += `/${encodeURIComponent(name)}`;
  if (subresource) p += `/${subresource}`;
  return p;
}
