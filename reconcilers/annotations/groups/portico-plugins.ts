// Portico's own portico.dev/plugins: Plugin objects (portico.dev/v1alpha1) of the Ingress's namespace for every path
// (the translation resolves them: translate/plugin-refs.ts).
import { row } from '../group.ts';
import { pluginListSchema } from '../../values/safe.ts';

export const rows = {
  plugins: row(pluginListSchema, 'location', 'medium', 'Portico Plugin objects (portico.dev/v1alpha1, same namespace) run for every path of this Ingress, e.g. "auth,limit"; a missing or invalid one makes the paths answer 503 (fail closed)', { origin: 'portico' }),
};
