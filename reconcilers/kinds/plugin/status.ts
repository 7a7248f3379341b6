// Plugin: Accepted, ResolvedRefs (its configFrom Secret).
// The conditions of one object from what the model (and the gateway) know; the leader writes them through the
// shared CRD status controller (../crd-status.ts).
import type { ConditionsOf } from '../kind.ts';
import { clip } from '../crd-status.ts';

export const pluginConditions: ConditionsOf = (key, model) => {
  const p = model.crd('Plugin', key);
  if (!p) return null;
  if (p.error && p.unresolved) return [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: `${p.type} plugin` }, { type: 'ResolvedRefs', status: 'False', reason: 'RefNotFound', message: clip(`${p.error}; routes using this plugin answer 503 (fail closed)`) }];
  if (p.error) return [{ type: 'Accepted', status: 'False', reason: 'InvalidConfig', message: clip(`${p.error}; routes using this plugin answer 503 (fail closed)`) }, { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs', message: 'references resolved' }];
  return [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: `${p.type} plugin, configuration valid` }, { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs', message: p.authService ? `calls service ${p.authService.service}:${p.authService.port}` : 'references resolved' }];
};
