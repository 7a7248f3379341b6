// Portico's CRDs (portico.dev/v1alpha1): one entry per kind, with the zod schema of its spec. crds/generate.ts
// writes crds/<plural>.yaml from these; the controller validates `obj.spec` with the same schemas
// (`routeSpecSchema.safeParse(obj.spec)`), so what the apiserver admits and what Portico accepts cannot drift.
import type { z } from 'zod';
import { routeSpecSchema } from './route.ts';
import { upstreamSpecSchema } from './upstream.ts';
import { pluginSpecSchema } from './plugin.ts';
import { consumerSpecSchema } from './consumer.ts';
import { statusSchema } from './common.ts';

export { routeSpecSchema, type RouteSpec, type RouteSpecInput, type RouteRule, type RouteMatch, type RouteBackend, PATH_MATCH_TYPES, VALUE_MATCH_TYPES } from './route.ts';
export { upstreamSpecSchema, type UpstreamSpec, type UpstreamSpecInput, type LoadBalancer, type HashOn, LB_ALGORITHMS, HASH_VARIABLES, UPSTREAM_PROTOCOLS } from './upstream.ts';
export { pluginSpecSchema, type PluginSpec, type PluginSpecInput, type PluginType, PLUGIN_TYPES } from './plugin.ts';
export { consumerSpecSchema, type ConsumerSpec, type ConsumerSpecInput, type Credential, CREDENTIAL_TYPES } from './consumer.ts';
export {
  pluginConfigSchema,
  parsePluginConfig,
  isCidr,
  type ParsedPluginConfig,
  type PluginConfig,
  type PluginConfigOf,
} from './plugin-config.ts';
export { statusSchema, conditionSchema, type Status, type Condition, type Timeouts, type Retries, type CelRule, CONDITION_TYPES, HTTP_METHODS, RETRY_ON, durationMs } from './common.ts';

export const GROUP = 'portico.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const CATEGORY = 'portico';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
}

export interface CrdDefinition {
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  /** Top-level description of the resource (kubectl explain <kind>). */
  description: string;
  spec: z.ZodType;
  status: z.ZodType;
  printerColumns: PrinterColumn[];
}

const condition = (type: string): PrinterColumn => ({
  name: type,
  type: 'string',
  jsonPath: `.status.conditions[?(@.type=="${type}")].status`,
  description: `Status of the ${type} condition`,
});
const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

export const crdDefinitions: CrdDefinition[] = [
  {
    kind: 'Route',
    plural: 'routes',
    singular: 'route',
    shortNames: ['proute'],
    description: 'Route sends requests for some hosts and paths to Services, through Portico plugins. An Ingress with more matching (methods, headers, query parameters), weighted backends, retries and plugins.',
    spec: routeSpecSchema,
    status: statusSchema,
    printerColumns: [
      { name: 'Hosts', type: 'string', jsonPath: '.spec.hosts', description: 'Hosts the Route serves (empty: every host)' },
      condition('Accepted'),
      condition('Programmed'),
      AGE,
    ],
  },
  {
    kind: 'Upstream',
    plural: 'upstreams',
    singular: 'upstream',
    shortNames: ['pupstream'],
    description: 'Upstream tunes how Portico talks to one Service: load-balancing algorithm, retries, timeouts, protocol, TLS to the backend and passive health checks.',
    spec: upstreamSpecSchema,
    status: statusSchema,
    printerColumns: [
      { name: 'Service', type: 'string', jsonPath: '.spec.service.name', description: 'The Service configured' },
      { name: 'Algorithm', type: 'string', jsonPath: '.spec.loadBalancer.algorithm', description: 'Load-balancing algorithm (empty: RoundRobin)' },
      condition('Accepted'),
      AGE,
    ],
  },
  {
    kind: 'Plugin',
    plural: 'plugins',
    singular: 'plugin',
    shortNames: ['pplugin'],
    description: 'Plugin is a configured request-processing step (rate limiting, authentication, CORS, header changes, redirects, rewrites) that Routes and Consumers reference by name.',
    spec: pluginSpecSchema,
    status: statusSchema,
    printerColumns: [{ name: 'Type', type: 'string', jsonPath: '.spec.type', description: 'Plugin type' }, condition('Accepted'), AGE],
  },
  {
    kind: 'Consumer',
    plural: 'consumers',
    singular: 'consumer',
    shortNames: ['pconsumer'],
    description: 'Consumer is an API client known to the key-auth and basic-auth plugins, with its credentials (in Secrets) and its own plugins.',
    spec: consumerSpecSchema,
    status: statusSchema,
    printerColumns: [{ name: 'Username', type: 'string', jsonPath: '.spec.username', description: 'Consumer name' }, condition('Accepted'), AGE],
  },
];
