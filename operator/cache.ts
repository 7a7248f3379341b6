// A read-only object cache with secondary indexes, filled by one informer.
import { keyOf, type KubeObject } from './kube/object.ts';

/** Maps an object to the index values it should be found under (e.g. the Services an Ingress references). */
export type IndexFunc<T> = (obj: T) => string[];

export interface ReadonlyStore<T extends KubeObject> {
  get(key: string): T | undefined;
  has(key: string): boolean;
  list(): T[];
  keys(): string[];
  size(): number;
  byIndex(index: string, value: string): T[];
  indexKeys(index: string, value: string): string[];
}

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const child of Object.values(v as Record<string, unknown>)) deepFreeze(child);
  }
  return v;
}

export class Store<T extends KubeObject> implements ReadonlyStore<T> {
  private readonly items = new Map<string, T>();
  private readonly indexers: Record<string, IndexFunc<T>>;
  /** index name → index value → object keys */
  private readonly indices = new Map<string, Map<string, Set<string>>>();

  constructor(indexers: Record<string, IndexFunc<T>> = {}) {
    this.indexers = { ...indexers };
    for (const name of Object.keys(this.indexers)) this.indices.set(name, new Map());
  }

  addIndexers(indexers: Record<string, IndexFunc<T>>): void {
    for (const [name, fn] of Object.entries(indexers)) {
      if (this.indexers[name]) throw new Error(`indexer ${name} already exists`);
      this.indexers[name] = fn;
      const idx = new Map<string, Set<string>>();
      this.indices.set(name, idx);
      for (const [key, obj] of this.items) for (const v of fn(obj)) addTo(idx, v, key);
    }
  }

  /** Inserts or replaces; returns the previous object. Objects are frozen: the cache is read-only for readers. */
  upsert(obj: T): T | undefined {
    const key = keyOf(obj);
    const old = this.items.get(key);
    if (old) this.unindex(key, old);
    deepFreeze(obj);
    this.items.set(key, obj);
    this.index(key, obj);
    return old;
  }

  remove(key: string): T | undefined {
    const old = this.items.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.items.delete(key);
    return old;
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }
  has(key: string): boolean {
    return this.items.has(key);
  }
  list(): T[] {
    return [...this.items.values()];
  }
  keys(): string[] {
    return [...this.items.keys()];
  }
  size(): number {
    return this.items.size;
  }

  indexKeys(index: string, value: string): string[] {
    const idx = this.indices.get(index);
    if (!idx) throw new Error(`no index named ${index}`);
    return [...(idx.get(value) ?? [])].sort();
  }

  byIndex(index: string, value: string): T[] {
    return this.indexKeys(index, value).map((k) => this.items.get(k) as T);
  }

  private index(key: string, obj: T): void {
    for (const [name, fn] of Object.entries(this.indexers)) {
      const idx = this.indices.get(name) as Map<string, Set<string>>;
      for (const v of fn(obj)) addTo(idx, v, key);
    }
  }

  private unindex(key: string, obj: T): void {
    for (const [name, fn] of Object.entries(this.indexers)) {
      const idx = this.indices.get(name) as Map<string, Set<string>>;
      for (const v of fn(obj)) {
        const set = idx.get(v);
        if (!set) continue;
        set.delete(key);
        if (set.size === 0) idx.delete(v);
      }
    }
  }
}

function addTo(idx: Map<string, Set<string>>, value: string, key: string): void {
  let set = idx.get(value);
  if (!set) idx.set(value, (set = new Set()));
  set.add(key);
}
