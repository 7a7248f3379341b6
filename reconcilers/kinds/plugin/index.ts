// The Plugin kind (portico.dev): one configured Lua plugin (rate limit, auth, CORS...) Routes refer to.
import { pluginCrd } from '../../../crds/schema/plugin.ts';
import type { NormalizedPlugin } from '../../model/types.ts';
import { clip } from '../admission.ts';
import { crdKind } from '../crd.ts';
import { normalizePlugin } from './normalize.ts';
import { pluginConditions } from './status.ts';

export const plugin = crdKind({
  kind: 'Plugin',
  crd: pluginCrd,
  normalize: (o, s) => normalizePlugin(o, s),
  problem: (r) => {
    const p = r as NormalizedPlugin;
    return p.error ? { reason: p.unresolved ? 'RefNotFound' : 'InvalidConfig', message: `${p.error}; routes using this plugin answer 503 (fail closed)` } : null;
  },
  conditions: pluginConditions,
  // Its configFrom Secret.
  reads: (r) => {
    const p = r as NormalizedPlugin;
    return { secrets: p.secretKey ? [p.secretKey] : [] };
  },
  review: (r) => {
    const p = r as NormalizedPlugin;
    // A configuration error is this object's fault; a configFrom Secret (not read: `unresolved`) is the controller's.
    if (p.error && !p.unresolved) return { allowed: false, message: clip(p.error), warnings: [] };
    return { allowed: true, warnings: [] };
  },
});
