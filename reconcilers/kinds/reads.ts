// Following what objects read (the Secrets, the ConfigMaps): a kind that serves such objects to the others (Secret,
// ConfigMap) keeps their data only while something reads them, so when an object that reads some changes in the
// model, what it read before and what it reads now must both be checked again (a reference that appears is loaded,
// one that goes is dropped). Each kind declares what one of its objects reads (KindDescriptor.secretsRead,
// configMapsRead); this follows the model's changes with those declarations.
import type { Model } from '../model/model.ts';
import type { KindDescriptor } from './kind.ts';

type Reader<T> = (model: Model, key: string) => T;

export interface Follow<T> {
  /** What the kinds' objects read (a kind without a reader is not followed). */
  read: (k: KindDescriptor) => Reader<T> | undefined;
  /** What reading nothing is, and whether a reading is empty (then it is not kept). */
  none: T;
  isEmpty: (t: T) => boolean;
  /** After a change of an object: what it read before (`none` the first time) and what it reads now. */
  changed: (before: T, now: T) => void;
}

export function followReads<T>(model: Model, kinds: readonly KindDescriptor[], f: Follow<T>): void {
  const readers = new Map<string, Reader<T>>();
  for (const k of kinds) {
    const r = f.read(k);
    if (r) readers.set(k.kind, r);
  }
  /** Kind-qualified ref → what it read at its last change (only non-empty readings are kept). */
  const last = new Map<string, T>();
  model.onChange((changes) => {
    for (const c of changes) {
      const read = readers.get(c.kind);
      if (!read) continue;
      const ref = `${c.kind}/${c.key}`;
      const now = read(model, c.key);
      f.changed(last.get(ref) ?? f.none, now);
      if (f.isEmpty(now)) last.delete(ref);
      else last.set(ref, now);
    }
  });
}
