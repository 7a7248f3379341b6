// How an annotation's reference to a Secret or ConfigMap is read (auth-tls-secret, auth-secret, custom-headers,
// auth-proxy-set-headers, proxy-ssl-secret).
import { z } from 'zod';

/** custom-headers, auth-proxy-set-headers: a ConfigMap name, optionally "namespace/" first (DNS-1123 names). */
export const configMapRefSchema = z
  .string()
  .trim()
  .regex(/^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\/)?[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, 'expected a ConfigMap name or namespace/name');

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
