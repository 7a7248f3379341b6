// Phase: Consumers by namespace.
import { recordsOf } from '../../model/model.ts';
import type { Draft } from '../draft.ts';
import { usePlugin } from '../plugin-refs.ts';

/** Consumers (auth plugins look them up by namespace) and the plugins they carry. */
export function collectConsumers(d: Draft): void {
  const { snap, events, consumers } = d;
  for (const c of [...recordsOf(snap, 'Consumer').values()].sort((a, b) => (a.key < b.key ? -1 : 1))) {
    const ids: string[] = [];
    for (const n of c.plugins) {
      const r = usePlugin(d, c.namespace, n);
      if ('id' in r) ids.push(r.id);
      else events.push({ ref: `Consumer/${c.key}`, type: 'Warning', reason: 'PluginNotFound', message: `${r.missing}; this consumer's requests use the route's plugins instead` });
    }
    (consumers[c.namespace] ??= { consumers: [] }).consumers.push({ name: c.name, username: c.username, keys: c.keys, basic: c.basic, plugins: ids });
  }
}
