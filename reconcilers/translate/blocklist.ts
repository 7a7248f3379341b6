// ingress-nginx's annotation-value-word-blocklist (ConfigMap): an Ingress whose nginx.ingress.kubernetes.io/ (or
// portico.dev/) annotation value contains one of the words is not served, as ingress-nginx skips it. Case-sensitive
// substrings, as there.
import type { NormalizedIngress } from '../model/types.ts';

/** The first annotation (in name order) whose value contains a word of the blocklist, and that word. */
export function blockedWord(ing: NormalizedIngress, words: readonly string[]): { annotation: string; word: string } | null {
  const text = ing.annotationText;
  if (!text) return null;
  for (const name of Object.keys(text).sort()) {
    const value = text[name] as string;
    const word = words.find((w) => value.includes(w));
    if (word !== undefined) return { annotation: name, word };
  }
  return null;
}
