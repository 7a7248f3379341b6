// Portico's command-line flags and PORTICO_* environment variables (parsed by operator/flags.ts). Flags win over
// the environment. A bad value is reported in one line and the process exits with status 2.
import { z } from 'zod';
import { LOG_LEVELS } from '../operator/log.ts';
import { ConfigError, flagTableMarkdown, flagTypes, parseFlags, type FlagTable, type FlagValues } from '../operator/flags.ts';
import { COMPAT_BOOL_FLAGS, COMPAT_FLAGS, INGRESS_NGINX_FLAGS, givenFlags, ingressNginxFlagsMarkdown, isIngressNginxProgram, refusedFlagHint, withIngressNginxDefaults } from './ingress-nginx-flags.ts';

export { ConfigError };

const { duration, secondsOrDuration, bool, port, nsName, hostPort } = flagTypes;
/** Histogram bounds: comma-separated, strictly ascending, finite (ingress-nginx's Float64Slice flags). */
const buckets = z
  .string()
  .regex(/^[0-9.eE+-]+(,[0-9.eE+-]+)*$/, 'expected comma-separated numbers')
  .transform((v, ctx) => {
    const out = v.split(',').map(Number);
    if (out.some((n) => !Number.isFinite(n)) || out.some((n, i) => i > 0 && n <= (out[i - 1] as number)) || out.length > 64) {
      ctx.addIssue({ code: 'custom', message: 'expected at most 64 finite numbers in ascending order' });
      return z.NEVER;
    }
    return out;
  })
  .or(z.array(z.number()));
const ENV_PREFIX = 'PORTICO';

/** Every flag: name → schema with its default. The flag table in docs/reference/flags.md is generated from this. */
export const FLAGS = {
  kubeconfig: { schema: z.string().min(1).optional(), help: 'kubeconfig file; default: in-cluster config, then $KUBECONFIG / ~/.kube/config' },
  namespace: { schema: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/).default('portico-system'), help: 'namespace Portico runs in (leader Lease, events about cluster-scoped objects)' },
  'controller-class': { schema: z.string().default('portico.dev/ingress-controller'), help: 'IngressClass spec.controller value served' },
  'ingress-class': { schema: z.string().default('portico'), help: 'class name also accepted in the legacy kubernetes.io/ingress.class annotation' },
  'watch-ingress-without-class': { schema: bool.default(false), help: 'serve Ingresses without a class even when Portico is not the default class' },
  'ingress-class-by-name': { schema: bool.default(false), help: 'also serve Ingresses whose spec.ingressClassName is --ingress-class, whatever that IngressClass\'s controller (as ingress-nginx)' },
  'watch-namespace': { schema: z.string().regex(/^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$/, 'expected a namespace name').default(''), help: 'serve only the Ingresses (and Routes, Upstreams, Plugins, Consumers) of this namespace; empty = all namespaces' },
  'annotations-prefix': { schema: z.literal('nginx.ingress.kubernetes.io', { error: () => 'Portico reads ingress-nginx\'s annotations under nginx.ingress.kubernetes.io (and its own under portico.dev) only' }).default('nginx.ingress.kubernetes.io'), help: 'prefix of ingress-nginx annotations; only the default is supported (accepted for drop-in compatibility)' },
  configmap: { schema: nsName.optional(), help: 'ConfigMap with global settings (namespace/name)' },
  'tcp-services-configmap': { schema: nsName.optional(), help: 'ConfigMap of TCP services (namespace/name), ingress-nginx format: key = port to listen on, value = namespace/service:port[:PROXY][:PROXY]' },
  'udp-services-configmap': { schema: nsName.optional(), help: 'ConfigMap of UDP services (namespace/name), same format (PROXY ignored)' },
  'default-ssl-certificate': { schema: nsName.optional(), help: 'TLS Secret served for unknown SNI (default: a generated self-signed certificate)' },
  'publish-service': { schema: nsName.optional(), help: 'Service whose address (LoadBalancer status, else externalIPs, else clusterIP) is published in Ingress status' },
  'update-status': { schema: bool.default(true), help: 'write the published addresses into the status of the Ingresses Portico serves (needs --publish-service or --publish-status-address)' },
  'update-status-on-shutdown': { schema: bool.default(false), help: 'on shutdown, the leader removes its addresses from Ingress status. Off by default (ingress-nginx: on): a rolling update would otherwise withdraw every address and make external-dns flap' },
  'publish-status-address': { schema: z.string().regex(/^[A-Za-z0-9.:,-]+$/, 'expected comma-separated IPs or host names').optional(), help: 'comma-separated addresses published in Ingress status (wins over --publish-service)' },
  'http-port': { schema: port.default(8080), help: 'nginx HTTP listener port' },
  'https-port': { schema: port.default(8443), help: 'nginx HTTPS listener port' },
  'listen-address': { schema: z.string().regex(/^[0-9a-fA-F.:]+$/).default('127.0.0.1'), help: 'address the nginx listeners bind (0.0.0.0 in a pod)' },
  'status-port': { schema: port.default(10246), help: 'nginx health port, 127.0.0.1, /healthz only (the configuration API is a unix socket in <runtime-dir>/api, mode 0700)' },
  'published-http-port': { schema: port.default(80), help: 'port clients use for HTTP (sent as X-Forwarded-Port instead of --http-port)' },
  'published-https-port': { schema: port.default(443), help: 'port clients use for HTTPS (sent as X-Forwarded-Port instead of --https-port)' },
  'access-log-path': { schema: z.string().regex(/^\/[A-Za-z0-9._/-]*$/, 'expected an absolute path').default('/dev/stdout'), help: 'nginx access log: /dev/stdout (one write per line, straight to the controller\'s stdout) or a file (buffered)' },
  'health-addr': { schema: hostPort.default({ host: '127.0.0.1', port: 10254 }), help: 'host:port for /healthz, /readyz and /metrics' },
  'healthz-port': { schema: port.optional(), help: 'ingress-nginx\'s name for the port of --health-addr: sets that port, the host stays --health-addr\'s' },
  'runtime-dir': { schema: z.string().default('/tmp/portico'), help: 'directory for nginx.conf, pid file and temp files' },
  'nginx-binary': { schema: z.string().default('/usr/sbin/nginx'), help: 'nginx executable' },
  'leader-elect': { schema: bool.default(true), help: 'use a Lease so only one replica writes status' },
  'election-id': { schema: z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/).default('portico-leader'), help: 'name of the leader Lease' },
  'lease-duration': { schema: duration.default(15_000), help: 'leader lease duration' },
  'renew-deadline': { schema: duration.default(10_000), help: 'leader renew deadline' },
  'retry-period': { schema: duration.default(2_000), help: 'leader election retry period' },
  'sync-quiet': { schema: duration.default(0), help: 'gateway debounce: quiet window after the last change (0: sync at once; changes arriving during a sync are coalesced into the next one)' },
  'sync-max-wait': { schema: duration.default(250), help: 'gateway debounce: maximum wait after the first change' },
  'shutdown-grace-period': { schema: secondsOrDuration.default(5_000), help: 'whole seconds (as ingress-nginx) or a duration. On SIGTERM: /readyz fails at once, nginx keeps serving this long (so endpoints and load balancers stop sending new connections), then nginx drains' },
  'worker-shutdown-timeout': { schema: duration.default(240_000), help: 'nginx worker_shutdown_timeout on reload/stop' },
  'webhook-port': { schema: z.coerce.number().int().min(0).max(65535).default(0), help: 'HTTPS port of the validating admission webhook (POST /validate), bound on --listen-address; 0 = no webhook' },
  'webhook-secret': { schema: z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/).default('portico-webhook-tls'), help: 'Secret (in --namespace) holding the webhook\'s CA and serving certificate; created and rotated by the leader' },
  'webhook-service': { schema: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/).default('portico-webhook'), help: 'Service (in --namespace) the API server calls the webhook through: the certificate is issued for its DNS names' },
  'webhook-configuration': { schema: z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/).default('portico'), help: 'ValidatingWebhookConfiguration whose caBundle the leader keeps current' },
  'webhook-extra-hosts': { schema: z.string().regex(/^[A-Za-z0-9.:,-]*$/, 'expected comma-separated DNS names or IPs').default('').transform((v) => v.split(',').filter(Boolean)), help: 'extra DNS names / IPs in the webhook certificate (a webhook reached by URL, e.g. from outside the cluster)' },
  'webhook-client-ca': { schema: z.string().default(''), help: 'PEM file of CA certificates: when set, the webhook requires a client certificate they issued (the API server presents one when its AdmissionConfiguration gives it a kubeconfig for this webhook) and refuses other callers during the TLS handshake; empty = any caller (the webhook reads no Secret either way)' },
  'enable-ssl-passthrough': { schema: bool.default(false), help: 'TLS passthrough for Ingresses with the ssl-passthrough annotation (off by default, as ingress-nginx): the HTTPS port reads the SNI of each connection and passes a passthrough host\'s connection undecrypted to its Service\'s endpoints; every other connection goes on to Portico\'s TLS termination (an extra local hop, the client address kept with the PROXY protocol). Without it the annotation is ignored with a Warning' },
  'enable-test-hooks': { schema: bool.default(false), help: 'TESTS ONLY: honour portico.dev/test-invalid-directive, which makes an Ingress render an invalid directive (to exercise fault isolation)' },
  'kube-api-qps': { schema: z.coerce.number().positive().max(10_000).default(20), help: 'client-side limit on API server requests per second (watches excluded; controller-runtime default)' },
  'kube-api-burst': { schema: z.coerce.number().int().min(1).max(10_000).default(30), help: 'requests allowed at once above --kube-api-qps' },
  'enable-metrics': { schema: bool.default(true), help: 'per-request metrics under ingress-nginx\'s names (nginx_ingress_controller_requests, the duration and size histograms), counted inside nginx and served on /metrics. On by default (ingress-nginx: off); the reload, certificate and nginx process metrics are always served' },
  'metrics-per-host': { schema: bool.default(true), help: 'give per-request metrics a host label: the rule\'s host as written ("_" for rules without a host, the wildcard for a wildcard rule), so clients cannot create series' },
  'metrics-per-undefined-host': { schema: bool.default(false), help: 'also count requests for hosts no rule names (all under host "_"); needs --metrics-per-host' },
  'report-status-classes': { schema: bool.default(false), help: 'per-request metrics carry the status class ("2xx") instead of the status code' },
  'exclude-socket-metrics': { schema: z.string().regex(/^[a-z_,]*$/, 'expected comma-separated metric names').default('').transform((v) => v.split(',').filter(Boolean).map((n) => n.replace(/^nginx_ingress_controller_/, ''))), help: 'per-request metrics not to export, e.g. nginx_ingress_controller_bytes_sent,header_duration_seconds (names without the prefix accepted)' },
  'time-buckets': { schema: buckets.default([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]), help: 'bucket bounds (seconds) of the *_duration_seconds histograms, comma-separated ascending' },
  'length-buckets': { schema: buckets.default([10, 20, 30, 40, 50, 60, 70, 80, 90, 100]), help: 'bucket bounds of request_size and response_size' },
  'size-buckets': { schema: buckets.default([10, 100, 1000, 10000, 100000, 1000000, 10000000]), help: 'bucket bounds of bytes_sent' },
  'bucket-factor': { schema: z.coerce.number().min(0).default(0), help: 'ingress-nginx: above 1, native histograms besides the classic buckets. Portico serves the classic buckets only (the text format has no native histograms); a value above 1 is accepted and logged at start' },
  'max-buckets': { schema: z.coerce.number().int().min(0).default(100), help: 'ingress-nginx: the native-histogram bucket limit (with --bucket-factor); accepted, no effect without native histograms' },
  'monitor-max-batch-size': { schema: z.coerce.number().int().min(1).default(10000), help: 'ingress-nginx: the Lua batch size of its per-request metrics socket. Portico sends nothing per request (nginx aggregates in shared memory): accepted, no effect' },
  'log-level': { schema: z.enum(LOG_LEVELS).default('info'), help: 'error | warn | info | debug' },
  'enable-gateway-api': { schema: z.enum(['auto', 'true', 'false'], { error: () => 'expected auto, true or false' }).default('auto'), help: 'serve Gateway API (GatewayClass, Gateway, HTTPRoute, ReferenceGrant): auto = when the API server serves gateway.networking.k8s.io/v1 at start (installing its CRDs later needs a restart); true = required (start fails without it)' },
  'gateway-controller-name': { schema: z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[A-Za-z0-9\/\-._~%!$&'()*+,;=:]+$/, 'expected a domain-prefixed path, e.g. portico.dev/gateway-controller').max(253).default('portico.dev/gateway-controller'), help: 'GatewayClass spec.controllerName Portico serves' },
} as const satisfies FlagTable;

/** Flags that may be given without a value ("--flag" = "--flag=true"). */
const BOOL_FLAGS = new Set<string>(['enable-metrics', 'metrics-per-host', 'metrics-per-undefined-host', 'report-status-classes', 'leader-elect', 'watch-ingress-without-class', 'enable-test-hooks', 'ingress-class-by-name', 'update-status', 'update-status-on-shutdown', 'enable-ssl-passthrough', ...COMPAT_BOOL_FLAGS]);

export type Config = FlagValues<typeof FLAGS> &
  FlagValues<typeof COMPAT_FLAGS> & {
    /** Started as /nginx-ingress-controller: ingress-nginx's defaults apply (app/ingress-nginx-flags.ts). */
    ingressNginxProgram: boolean;
    /** ingress-nginx flags given that change nothing, with why: logged at start by name. */
    noEffect: { flag: string; why: string }[];
    /** Address the admission webhook binds (--validating-webhook's host, every address when empty; else --listen-address). */
    webhookAddress: string;
  };

/**
 * Parses argv (without node and script) and env. Throws ConfigError with a one-line reason. A first argument naming
 * ingress-nginx's program (/nginx-ingress-controller, as the ingress-nginx chart passes it) is dropped and switches
 * the shared flags' defaults to ingress-nginx's.
 */
export function parseConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): Config {
  const ingressNginxProgram = isIngressNginxProgram(argv[0]);
  const args = ingressNginxProgram ? argv.slice(1) : argv;
  const environment = ingressNginxProgram ? withIngressNginxDefaults(env, ENV_PREFIX) : env;
  const table = { ...FLAGS, ...COMPAT_FLAGS };
  const parsed = parseFlags({ flags: table, envPrefix: ENV_PREFIX, boolFlags: BOOL_FLAGS, unknownFlagHint: refusedFlagHint }, args, environment);
  const given = givenFlags(args, env, Object.keys(table), ENV_PREFIX);
  const cfg: Config = { ...parsed, ingressNginxProgram, noEffect: [], webhookAddress: parsed['listen-address'] };
  applyIngressNginxFlags(cfg, given);
  if (!(cfg['lease-duration'] > cfg['renew-deadline'] && cfg['renew-deadline'] > cfg['retry-period'])) {
    throw new ConfigError('leader election needs --lease-duration > --renew-deadline > --retry-period');
  }
  if (cfg['metrics-per-undefined-host'] && !cfg['metrics-per-host']) throw new ConfigError('--metrics-per-undefined-host needs --metrics-per-host');
  if (cfg['sync-max-wait'] < cfg['sync-quiet']) throw new ConfigError('--sync-max-wait must be >= --sync-quiet');
  const wp = cfg['webhook-port'];
  if (wp > 0 && (wp === cfg['http-port'] || wp === cfg['https-port'])) throw new ConfigError(`the admission webhook's port ${wp} is also nginx's --http-port or --https-port`);
  return cfg;
}

/** ingress-nginx's flags that Portico maps onto its own settings, and the list of those given that change nothing. */
function applyIngressNginxFlags(cfg: Config, given: ReadonlySet<string>): void {
  const both = (a: string, b: string) => {
    if (given.has(a) && given.has(b)) throw new ConfigError(`--${a} and --${b} set the same thing: give one`);
  };
  if (cfg['healthz-port'] !== undefined) cfg['health-addr'] = { ...cfg['health-addr'], port: cfg['healthz-port'] };
  if (cfg['healthz-host'] !== undefined) cfg['health-addr'] = { ...cfg['health-addr'], host: cfg['healthz-host'] || '0.0.0.0' };
  if (cfg['disable-leader-election'] !== undefined) {
    both('disable-leader-election', 'leader-elect');
    cfg['leader-elect'] = !cfg['disable-leader-election'];
  }
  const ttl = cfg['election-ttl'];
  if (ttl !== undefined) {
    for (const f of ['lease-duration', 'renew-deadline', 'retry-period']) both('election-ttl', f);
    // ingress-nginx: a TTL of 0 or less means 30s; the renew deadline is half of it and the retry period a quarter.
    const t = ttl > 0 ? ttl : 30_000;
    Object.assign(cfg, { 'lease-duration': t, 'renew-deadline': Math.round(t / 2), 'retry-period': Math.round(t / 4) });
  }
  const hook = cfg['validating-webhook'];
  if (hook !== undefined) {
    both('validating-webhook', 'webhook-port');
    const i = hook.lastIndexOf(':');
    cfg['webhook-port'] = Number(hook.slice(i + 1));
    if (cfg['webhook-port'] < 1 || cfg['webhook-port'] > 65535) throw new ConfigError(`invalid --validating-webhook=${JSON.stringify(hook)}: the port must be between 1 and 65535`);
    cfg.webhookAddress = hook.slice(0, i).replace(/^\[|\]$/g, '') || '0.0.0.0';
    if ((cfg['validating-webhook-certificate'] === undefined) !== (cfg['validating-webhook-key'] === undefined)) {
      throw new ConfigError('--validating-webhook-certificate and --validating-webhook-key go together');
    }
  }
  for (const [name, f] of Object.entries(INGRESS_NGINX_FLAGS)) {
    if (f.status === 'no-effect' && given.has(name)) cfg.noEffect.push({ flag: name, why: f.note });
  }
  // Without --validating-webhook, ingress-nginx reads neither file: nor does Portico.
  for (const name of ['validating-webhook-certificate', 'validating-webhook-key']) {
    if (hook === undefined && given.has(name)) cfg.noEffect.push({ flag: name, why: 'ingress-nginx and Portico read it only with --validating-webhook' });
  }
}

/** The flag table of docs/reference/flags.md (tools/readme-reference.ts). */
export function flagsMarkdown(): string {
  return flagTableMarkdown(FLAGS, ENV_PREFIX);
}

/** The table of ingress-nginx's flags and their status in Portico (tools/readme-reference.ts). */
export { ingressNginxFlagsMarkdown };
