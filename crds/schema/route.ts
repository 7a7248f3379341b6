// Route (portico.dev/v1alpha1): hosts, TLS, and rules matching requests to weighted Service backends, with
// plugins, timeouts and retries.
import { z } from 'zod';
import { AGE, conditionColumn, type CrdDefinition } from './definition.ts';
import {
  crossField,
  headerName,
  host,
  HTTP_METHODS,
  httpMethod,
  mapList,
  objectName,
  dnsLabel,
  PRINTABLE,
  queryParamName,
  retriesSchema,
  servicePortRefSchema,
  setList,
  timeoutsSchema,
  URL_PATH,
  VISIBLE,
  statusSchema,
} from './common.ts';

export const PATH_MATCH_TYPES = ['Exact', 'Prefix', 'RegularExpression'] as const;
export const VALUE_MATCH_TYPES = ['Exact', 'RegularExpression'] as const;

export const pathMatchSchema = crossField(
  z
    .strictObject({
      type: z
        .enum(PATH_MATCH_TYPES)
        .default('Prefix')
        .describe('Exact: the path equals value. Prefix: the path equals value or continues it after a "/" (as Ingress Prefix: /foo matches /foo and /foo/bar, not /foobar). RegularExpression: value is a PCRE regular expression matched against the path (not anchored unless it starts with ^).'),
      value: z
        .string()
        .min(1)
        .max(1024)
        .regex(VISIBLE, 'must be printable ASCII without spaces')
        .default('/')
        .describe('The path, or the regular expression for type RegularExpression. Exact and Prefix values start with "/" and use only URL path characters.'),
    })
    .describe('Which request paths match (default: Prefix "/", i.e. every path).'),
  [
    {
      cel: `self.type == 'RegularExpression' || self.value.matches(r"${URL_PATH.source}")`,
      check: (p) => p.type === 'RegularExpression' || URL_PATH.test(p.value),
      message: 'an Exact or Prefix path must start with "/" and contain only URL path characters',
      path: ['value'],
    },
  ],
);

const valueMatch = (what: string, name: z.ZodString, value: z.ZodString) =>
  z.strictObject({
    name: name.describe(`${what} name${what === 'Header' ? ' (case-insensitive)' : ''}.`),
    type: z.enum(VALUE_MATCH_TYPES).default('Exact').describe('Exact: the value equals value. RegularExpression: value is a PCRE regular expression (not anchored unless it starts with ^).'),
    value: value.describe(`The ${what.toLowerCase()} value, or the regular expression for type RegularExpression.`),
  });

export const headerMatchSchema = valueMatch('Header', headerName(), z.string().max(1024).regex(PRINTABLE, 'must be printable ASCII')).describe(
  'A request header that must be present with a matching value.',
);
export const queryParamMatchSchema = valueMatch('Query parameter', queryParamName(), z.string().max(1024).regex(PRINTABLE, 'must be printable ASCII')).describe(
  'A query parameter that must be present with a matching value.',
);

export const routeMatchSchema = z
  .strictObject({
    path: pathMatchSchema.optional(),
    methods: setList(httpMethod(), HTTP_METHODS.length).optional().describe('Request methods that match (any of them). Absent: every method.'),
    headers: mapList(headerMatchSchema, 'name', 16).optional().describe('Headers that must all match. Absent: no header condition.'),
    queryParams: mapList(queryParamMatchSchema, 'name', 16).optional().describe('Query parameters that must all match. Absent: no query condition.'),
  })
  .describe('Conditions a request must all meet (path, method, headers, query parameters).');

export const backendSchema = z
  .strictObject({
    service: servicePortRefSchema,
    weight: z
      .int()
      .min(0)
      .max(10000)
      .default(1)
      .describe('Share of the requests this backend gets, relative to the other backends of the rule (0 = none).'),
  })
  .describe('A Service receiving the matched requests. An Upstream object with the same Service name tunes load balancing, health checks and upstream TLS.');

export const ruleSchema = z
  .strictObject({
    name: dnsLabel().optional().describe('Name of the rule, unique in the Route; used in status messages, metrics and logs.'),
    matches: z
      .array(routeMatchSchema)
      .min(1)
      .max(16)
      .optional()
      .describe('The rule applies when any of these matches. Absent: every request (path Prefix "/").'),
    backends: z
      .array(backendSchema)
      .min(1)
      .max(16)
      .optional()
      .describe('Services the matched requests are proxied to, split by weight. Absent: only plugins answer (e.g. a redirect); otherwise 503.'),
    plugins: setList(objectName(), 16)
      .optional()
      .describe('Names of Plugin objects in the same namespace applied to this rule, in addition to the Route\'s plugins.'),
    timeouts: timeoutsSchema.optional(),
    retries: retriesSchema.optional(),
    websocket: z.boolean().optional().describe('Whether WebSocket (HTTP Upgrade) requests matching this rule are proxied; false answers them with 400. Absent: spec.websocket.'),
    priority: z
      .int()
      .min(0)
      .max(1000)
      .optional()
      .describe('Order among rules (of any Route) matching the same host and path: the higher priority is tried first, then the rule with more conditions, then the older Route. Absent: spec.priority.'),
  })
  .describe('Requests matching one of matches are sent to backends, through plugins.');

export const routeTlsSchema = z
  .strictObject({
    hosts: setList(host(), 64)
      .min(1)
      .describe('Hosts the certificate is served for (SNI); each must also be listed in spec.hosts when spec.hosts is set.'),
    secretName: objectName().describe('Name of a kubernetes.io/tls Secret in the same namespace holding tls.crt and tls.key.'),
  })
  .describe('A certificate for some of the hosts.');

export const routeSpecSchema = crossField(
  z
    .strictObject({
      ingressClassName: objectName()
        .optional()
        .describe('IngressClass (or Portico controller class) that serves this Route. Absent: the default IngressClass, as for an Ingress without ingressClassName.'),
      hosts: setList(host(), 64)
        .min(1)
        .optional()
        .describe('Host names this Route serves: exact lower-case DNS names or "*.example.com" (a wildcard for exactly one label). Absent: every host, like an Ingress rule without host.'),
      tls: z
        .array(routeTlsSchema)
        .min(1)
        .max(16)
        .optional()
        .describe('TLS certificates for the hosts. Absent: the Route is served over HTTP (and over HTTPS with the default certificate).'),
      rules: crossField(z.array(ruleSchema).min(1).max(64), [
        {
          cel: 'self.all(a, !has(a.name) || self.exists_one(b, has(b.name) && b.name == a.name))',
          check: (rules) => {
            const names = rules.flatMap((r) => (r.name === undefined ? [] : [r.name]));
            return new Set(names).size === names.length;
          },
          message: 'rule names must be unique within the Route',
        },
      ]).describe('Routing rules (1 to 64). A request is handled by the rule with the most specific matching path (Exact, then the longest Prefix, then regular expressions); among equal paths, rules with more conditions (methods, headers, query parameters) are tried first.'),
      plugins: setList(objectName(), 16)
        .optional()
        .describe('Names of Plugin objects in the same namespace applied to every rule of this Route.'),
      timeouts: timeoutsSchema.optional(),
      retries: retriesSchema.optional(),
      websocket: z.boolean().default(true).describe('Whether WebSocket (HTTP Upgrade) requests are proxied; false answers them with 400.'),
      priority: z
        .int()
        .min(0)
        .max(1000)
        .default(0)
        .describe('Breaks ties between Routes matching the same host and path: the higher priority is tried first (then the older Route).'),
    })
    .describe('What a Route serves: hosts, TLS, and rules sending matching requests to Services.'),
  [
    {
      cel: '!has(self.tls) || !has(self.hosts) || self.tls.all(t, t.hosts.all(h, h in self.hosts))',
      check: (s) => !s.tls || !s.hosts || s.tls.every((t) => t.hosts.every((h) => s.hosts!.includes(h))),
      message: 'every tls[].hosts entry must also be listed in spec.hosts',
      path: ['tls'],
    },
  ],
);
export type RouteSpec = z.output<typeof routeSpecSchema>;
export type RouteSpecInput = z.input<typeof routeSpecSchema>;
export type RouteRule = z.output<typeof ruleSchema>;
export type RouteMatch = z.output<typeof routeMatchSchema>;
export type RouteBackend = z.output<typeof backendSchema>;

/** The Route CRD (crds/routes.yaml). */
export const routeCrd: CrdDefinition = {
  kind: 'Route',
  plural: 'routes',
  singular: 'route',
  shortNames: ['proute'],
  description: 'Route sends requests for some hosts and paths to Services, through Portico plugins. An Ingress with more matching (methods, headers, query parameters), weighted backends, retries and plugins.',
  spec: routeSpecSchema,
  status: statusSchema,
  printerColumns: [
    { name: 'Hosts', type: 'string', jsonPath: '.spec.hosts', description: 'Hosts the Route serves (empty: every host)' },
    conditionColumn('Accepted'),
    conditionColumn('Programmed'),
    AGE,
  ],
};
