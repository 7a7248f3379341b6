// Plugin (portico.dev/v1alpha1): one configured instance of a request-processing plugin, referenced by name from
// Routes and Consumers. The CRD only checks the envelope; `config` is validated per type by the controller with
// the schemas of plugin-config.ts, which reports the problem in status (Accepted=False, reason InvalidConfig).
import { z } from 'zod';
import { AGE, conditionColumn, type CrdDefinition } from './definition.ts';
import { crossField, objectName, statusSchema } from './common.ts';
import { PLUGIN_TYPES, type PluginType } from './plugin-config.ts';

export { PLUGIN_TYPES, type PluginType };

/** "a, b or c" */
const alternatives = (xs: readonly string[]) => `${xs.slice(0, -1).join(', ')} or ${xs[xs.length - 1]}`;

export const pluginSpecSchema = crossField(
  z
    .strictObject({
      type: z
        .enum(PLUGIN_TYPES)
        .describe(`The plugin: ${alternatives(PLUGIN_TYPES)}. Its settings go in config (or configFrom).`),
      config: z
        .record(z.string(), z.unknown())
        .optional()
        .describe('Settings of the plugin, whose fields depend on type (e.g. rate-limit: {requestsPerSecond: 10, burst: 20}). The apiserver stores them as given; Portico validates them against the type and, when they are invalid, sets condition Accepted=False with reason InvalidConfig and a message naming the field (kubectl describe pplugin shows it). Absent: the type\'s defaults.'),
      configFrom: z
        .strictObject({
          secretKeyRef: z
            .strictObject({
              name: objectName().describe('Name of a Secret in the same namespace.'),
              key: z.string().min(1).max(253).regex(/^[-._a-zA-Z0-9]+$/, 'must be a Secret data key').describe('Key in the Secret\'s data holding the config as a JSON or YAML object.'),
            })
            .describe('The Secret key holding the settings.'),
        })
        .optional()
        .describe('Reads the settings from a Secret instead of config (for credentials such as external-auth secrets); same fields, same validation.'),
    })
    .describe('A plugin instance: its type and settings.'),
  [
    {
      cel: '!(has(self.config) && has(self.configFrom))',
      check: (s) => !(s.config !== undefined && s.configFrom !== undefined),
      message: 'set config or configFrom, not both',
      path: ['configFrom'],
    },
  ],
);
export type PluginSpec = z.output<typeof pluginSpecSchema>;
export type PluginSpecInput = z.input<typeof pluginSpecSchema>;

/** The Plugin CRD (crds/plugins.yaml). */
export const pluginCrd: CrdDefinition = {
  kind: 'Plugin',
  plural: 'plugins',
  singular: 'plugin',
  shortNames: ['pplugin'],
  description: 'Plugin is a configured request-processing step (rate limiting, authentication, CORS, header changes, redirects, rewrites) that Routes and Consumers reference by name.',
  spec: pluginSpecSchema,
  status: statusSchema,
  printerColumns: [{ name: 'Type', type: 'string', jsonPath: '.spec.type', description: 'Plugin type' }, conditionColumn('Accepted'), AGE],
};
