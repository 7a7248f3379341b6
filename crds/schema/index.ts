// The schemas of Portico's CRDs (portico.dev/v1alpha1), gathered for the modules that use several: each kind's
// module (crds/schema/<kind>.ts) holds its spec schema and its CRD definition (definition.ts). The controller
// validates `obj.spec` with these schemas (`routeSpecSchema.safeParse(obj.spec)`) and crds/generate.ts writes the
// CRDs from the same ones, so what the apiserver admits and what Portico accepts cannot drift. The list of CRDs is
// the kind registry's (reconcilers/kinds/registry.ts CRDS): a new kind's schema module need not be added here.
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
export { GROUP, VERSION, API_VERSION, CATEGORY, AGE, conditionColumn, type PrinterColumn, type CrdDefinition } from './definition.ts';
