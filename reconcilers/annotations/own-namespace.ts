// How an annotation's reference to a Secret or ConfigMap is read (auth-tls-secret, auth-secret, custom-headers,
// proxy-ssl-secret). No imports: auth-tls.ts cannot import plugins.ts at run time (table.ts imports auth-tls.ts).

/**
 * A reference "name" or "namespace/name", resolved against the Ingress's namespace: its cache key
 * ("namespace/name") and what `read` returns for it. Only the Ingress's own namespace is read: a reference to
 * another is `elsewhere`, and then nothing is looked up (nor without `read`).
 */
export function ownNamespaceRef<T>(ref: string, namespace: string, read?: (key: string) => T | undefined): { key: string; elsewhere: boolean; found: T | undefined } {
  const [ns, name] = ref.includes('/') ? (ref.split('/') as [string, string]) : [namespace, ref];
  const key = `${ns}/${name}`;
  const elsewhere = ns !== namespace;
  return { key, elsewhere, found: elsewhere || !read ? undefined : read(key) };
}
