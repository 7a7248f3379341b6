// ingress-nginx's controller flags (v1.15.1, pkg/flags/flags.go: 72 flags) and what Portico does with each, so an
// ingress-nginx Deployment's arguments start Portico unchanged or stop it with one line saying why:
//   implemented — a Portico flag of the same name and meaning (app/flags.ts FLAGS);
//   mapped      — accepted and turned into Portico's own setting (applyIngressNginxFlags);
//   no-effect   — accepted, changes nothing, and is logged at start by name (the note says why that is harmless);
//   refused     — exits 2 with the note as the hint (some accept the value that is ingress-nginx's default, "false",
//                 since that is what Portico does anyway).
// Started as /nginx-ingress-controller (the first argument the ingress-nginx chart passes) the flags Portico shares
// with ingress-nginx default to ingress-nginx's values (INGRESS_NGINX_DEFAULTS).
import { z } from 'zod';
import { envName, flagTypes, type FlagTable } from '../operator/flags.ts';

export type FlagStatus = 'implemented' | 'mapped' | 'no-effect' | 'refused';
export interface IngressNginxFlag {
  status: FlagStatus;
  /** Why, and what to use instead (the hint of a refused flag). */
  note: string;
}

const { duration, bool, port, nsName } = flagTypes;
const int = z.string().regex(/^-?\d+$/, 'expected an integer').transform(Number);
const float = z.coerce.number().refine(Number.isFinite, 'expected a number');
const path = z.string().min(1, 'expected a file path');
const ipAddress = z.string().regex(/^[0-9a-fA-F.:]+$/, 'expected an IP address');
const hostPortAny = z.string().regex(/^[0-9a-zA-Z.:[\]-]*:\d{1,5}$/, 'expected host:port or :port');
/** A refused boolean whose ingress-nginx default (false) is what Portico does: "false" passes, "true" gets the hint. */
const falseOnly = (name: string) => z.enum(['false', 'f', 'F', 'FALSE', 'False', '0'], { error: () => refusedFlagHint(name) ?? 'not supported' }).transform(() => false as const);

/** Accepted ingress-nginx flags that are not Portico flags of the same name: their value syntax (undefined = not given). */
export const COMPAT_FLAGS = {
  'apiserver-host': { schema: z.string().regex(/^https?:\/\/[^\s/]+\/?$/, 'expected a URL like https://10.0.0.1:6443').optional(), help: '' },
  'certificate-authority': { schema: path.optional(), help: '' },
  'default-backend-service': { schema: nsName.optional(), help: '' },
  'sync-period': { schema: duration.optional(), help: '' },
  profiling: { schema: bool.optional(), help: '' },
  'health-check-path': { schema: z.literal('/healthz', { error: () => 'Portico\'s health endpoints are /healthz and /readyz on --health-addr: only /healthz can be given' }).optional(), help: '' },
  'health-check-timeout': { schema: int.optional(), help: '' },
  'election-ttl': { schema: duration.optional(), help: '' },
  'report-node-internal-ip-address': { schema: falseOnly('report-node-internal-ip-address').optional(), help: '' },
  version: { schema: bool.optional(), help: '' },
  'enable-ssl-chain-completion': { schema: falseOnly('enable-ssl-chain-completion').optional(), help: '' },
  'disable-leader-election': { schema: bool.optional(), help: '' },
  'disable-svc-external-name': { schema: falseOnly('disable-svc-external-name').optional(), help: '' },
  'enable-annotation-validation': { schema: bool.optional(), help: '' },
  'sync-rate-limit': { schema: float.optional(), help: '' },
  'ssl-passthrough-proxy-port': { schema: port.optional(), help: '' },
  'default-server-port': { schema: port.optional(), help: '' },
  'healthz-host': { schema: z.string().regex(/^[0-9a-zA-Z.:-]*$/, 'expected an address').optional(), help: '' },
  'disable-catch-all': { schema: falseOnly('disable-catch-all').optional(), help: '' },
  'validating-webhook': { schema: hostPortAny.optional(), help: '' },
  'validating-webhook-certificate': { schema: path.optional(), help: '' },
  'validating-webhook-key': { schema: path.optional(), help: '' },
  'disable-full-test': { schema: bool.optional(), help: '' },
  'stream-port': { schema: port.optional(), help: '' },
  'internal-logger-address': { schema: hostPortAny.optional(), help: '' },
  'profiler-port': { schema: port.optional(), help: '' },
  'profiler-address': { schema: ipAddress.optional(), help: '' },
  'status-update-interval': { schema: int.optional(), help: '' },
  'post-shutdown-grace-period': { schema: int.optional(), help: '' },
  'deep-inspect': { schema: bool.optional(), help: '' },
  'dynamic-configuration-retries': { schema: int.optional(), help: '' },
  'disable-sync-events': { schema: falseOnly('disable-sync-events').optional(), help: '' },
  'enable-topology-aware-routing': { schema: falseOnly('enable-topology-aware-routing').optional(), help: '' },
  'maxmind-edition-ids': { schema: z.string().optional(), help: '' },
  'maxmind-retries-count': { schema: int.optional(), help: '' },
  'maxmind-retries-timeout': { schema: duration.optional(), help: '' },
} as const satisfies FlagTable;

/** The boolean flags of COMPAT_FLAGS ("--flag" alone = true, as pflag). */
export const COMPAT_BOOL_FLAGS = ['profiling', 'version', 'disable-leader-election', 'enable-annotation-validation', 'disable-full-test', 'deep-inspect', 'report-node-internal-ip-address', 'enable-ssl-chain-completion', 'disable-svc-external-name', 'disable-catch-all', 'disable-sync-events', 'enable-topology-aware-routing'];

const GEOIP = 'Portico downloads no MaxMind database: mount the .mmdb files (e.g. kept current by geoipupdate) into geoip2-database-directory and set use-geoip2 in the ConfigMap';
const NO_GO = 'Portico is not a Go program';

/** Every flag of ingress-nginx v1.15.1, in its order of declaration, with what Portico does with it. */
export const INGRESS_NGINX_FLAGS: Readonly<Record<string, IngressNginxFlag>> = {
  'apiserver-host': { status: 'implemented', note: 'API server URL; with --kubeconfig it replaces the kubeconfig\'s server, alone it is used without credentials' },
  'certificate-authority': { status: 'implemented', note: 'CA file for the API server\'s certificate; read only with --apiserver-host (as ingress-nginx)' },
  kubeconfig: { status: 'implemented', note: 'same' },
  'default-backend-service': { status: 'implemented', note: 'this Service\'s first port gets what no path matches (unknown hosts too) and the errors custom-http-errors lists for Ingresses without their own default-backend. A missing Service does not stop the start: Portico answers 404 itself' },
  'ingress-class': { status: 'implemented', note: 'same (Portico\'s default: portico)' },
  'controller-class': { status: 'implemented', note: 'same (Portico\'s default: portico.dev/ingress-controller)' },
  'watch-ingress-without-class': { status: 'implemented', note: 'same' },
  'ingress-class-by-name': { status: 'implemented', note: 'same' },
  configmap: { status: 'implemented', note: 'same' },
  'publish-service': { status: 'implemented', note: 'same' },
  'tcp-services-configmap': { status: 'implemented', note: 'same' },
  'udp-services-configmap': { status: 'implemented', note: 'same' },
  'sync-period': { status: 'no-effect', note: 'Portico watches (with bookmarks and resume) and reconciles on every change; there is no periodic resync to set' },
  'watch-namespace': { status: 'implemented', note: 'same' },
  'watch-namespace-selector': { status: 'refused', note: 'not supported: use --watch-namespace (one namespace) or all namespaces' },
  profiling: { status: 'no-effect', note: `${NO_GO}: there is no pprof endpoint` },
  'default-ssl-certificate': { status: 'implemented', note: 'same' },
  'health-check-path': { status: 'implemented', note: 'only /healthz, the path Portico serves on --health-addr' },
  'health-check-timeout': { status: 'no-effect', note: 'Portico\'s /healthz answers from its own state (it does not probe nginx over HTTP), so there is no probe to time out' },
  'update-status': { status: 'implemented', note: 'same' },
  'election-id': { status: 'implemented', note: 'same: the name of the leader Lease' },
  'election-ttl': { status: 'mapped', note: 'sets --lease-duration to it, --renew-deadline to half and --retry-period to a quarter, as ingress-nginx derives them' },
  'update-status-on-shutdown': { status: 'implemented', note: 'same, but off by default (see --update-status-on-shutdown)' },
  'report-node-internal-ip-address': { status: 'refused', note: 'Portico does not publish node addresses: use --publish-status-address or --publish-service ("false" is accepted)' },
  version: { status: 'implemented', note: 'prints the version and exits' },
  'enable-ssl-passthrough': { status: 'implemented', note: 'same' },
  'disable-leader-election': { status: 'mapped', note: '--leader-elect=false' },
  'disable-svc-external-name': { status: 'refused', note: 'ExternalName Services are always served ("false" is accepted)' },
  'annotations-prefix': { status: 'implemented', note: 'only the default, nginx.ingress.kubernetes.io' },
  'enable-annotation-validation': { status: 'no-effect', note: 'Portico always checks every annotation value against its closed syntax; it cannot be turned off' },
  'enable-ssl-chain-completion': { status: 'refused', note: 'certificates are served as given: put the chain into tls.crt ("false" is accepted)' },
  'sync-rate-limit': { status: 'no-effect', note: 'Portico coalesces changes with --sync-quiet and --sync-max-wait, and most changes are data (no reload)' },
  'publish-status-address': { status: 'implemented', note: 'same' },
  'enable-metrics': { status: 'implemented', note: 'same, but on by default' },
  'metrics-per-host': { status: 'implemented', note: 'same' },
  'metrics-per-undefined-host': { status: 'implemented', note: 'same' },
  'report-status-classes': { status: 'implemented', note: 'same' },
  'time-buckets': { status: 'implemented', note: 'same' },
  'length-buckets': { status: 'implemented', note: 'same' },
  'size-buckets': { status: 'implemented', note: 'same' },
  'bucket-factor': { status: 'no-effect', note: 'native histograms are not served (the text format has none); classic buckets only' },
  'max-buckets': { status: 'no-effect', note: 'a native-histogram setting; native histograms are not served' },
  'exclude-socket-metrics': { status: 'implemented', note: 'same' },
  'monitor-max-batch-size': { status: 'no-effect', note: 'nginx counts in shared memory: nothing is sent per request, so there is no batch' },
  'http-port': { status: 'implemented', note: 'same (Portico\'s default: 8080)' },
  'https-port': { status: 'implemented', note: 'same (Portico\'s default: 8443)' },
  'ssl-passthrough-proxy-port': { status: 'no-effect', note: 'the hop from the passthrough reader to TLS termination is a unix socket in --runtime-dir: there is no port' },
  'default-server-port': { status: 'no-effect', note: 'Portico has no default server: it answers unmatched requests itself' },
  'healthz-port': { status: 'implemented', note: 'the port of --health-addr' },
  'healthz-host': { status: 'implemented', note: 'the host of --health-addr (empty: every address)' },
  'disable-catch-all': { status: 'refused', note: 'Ingresses with only a default backend are always served ("false" is accepted)' },
  'validating-webhook': { status: 'mapped', note: 'starts Portico\'s admission webhook on this [host]:port; the webhook also answers ingress-nginx\'s path /networking/v1/ingresses' },
  'validating-webhook-certificate': { status: 'mapped', note: 'with --validating-webhook: the webhook serves this PEM certificate (re-read when it changes) instead of managing its own in --webhook-secret' },
  'validating-webhook-key': { status: 'mapped', note: 'the key of --validating-webhook-certificate' },
  'disable-full-test': { status: 'no-effect', note: 'Portico checks an Ingress by translating it with the current model, never by running nginx -t' },
  'status-port': { status: 'mapped', note: 'Portico\'s nginx status port (127.0.0.1, /healthz only); its configuration API is a unix socket, not this port' },
  'stream-port': { status: 'no-effect', note: 'TCP and UDP services are configured over the unix socket: there is no stream port' },
  'internal-logger-address': { status: 'no-effect', note: 'nginx logs to --access-log-path directly: there is no internal syslog listener' },
  'profiler-port': { status: 'no-effect', note: `${NO_GO}: there is no profiler` },
  'profiler-address': { status: 'no-effect', note: `${NO_GO}: there is no profiler` },
  'status-update-interval': { status: 'no-effect', note: 'Portico writes Ingress status when the published addresses or the Ingresses change, not on a timer' },
  'shutdown-grace-period': { status: 'implemented', note: 'same: whole seconds, or a duration' },
  'post-shutdown-grace-period': { status: 'no-effect', note: 'Portico exits as soon as nginx has drained; nothing is left to wait for' },
  'deep-inspect': { status: 'no-effect', note: 'Portico always inspects: annotation values have closed syntaxes and risky annotations pass its risk gate' },
  'dynamic-configuration-retries': { status: 'no-effect', note: 'a failed push to nginx is retried by Portico\'s configuration lane until it succeeds' },
  'disable-sync-events': { status: 'refused', note: 'sync Events cannot be turned off ("false" is accepted)' },
  'enable-topology-aware-routing': { status: 'refused', note: 'not supported yet ("false" is accepted)' },
  'maxmind-mirror': { status: 'refused', note: GEOIP },
  'maxmind-license-key': { status: 'refused', note: GEOIP },
  'maxmind-edition-ids': { status: 'no-effect', note: `${GEOIP}; without --maxmind-license-key or --maxmind-mirror this names files nobody reads` },
  'maxmind-retries-count': { status: 'no-effect', note: `${GEOIP}; a download setting` },
  'maxmind-retries-timeout': { status: 'no-effect', note: `${GEOIP}; a download setting` },
};

/** The hint for an ingress-nginx flag Portico refuses outright (undefined for any other name). */
export function refusedFlagHint(name: string): string | undefined {
  // klog's verbosity (ingress-nginx adds klog's flags besides its own).
  if (name === 'v') return 'an ingress-nginx (klog) flag Portico does not support (use --log-level: error, warn, info, debug)';
  const f = Object.hasOwn(INGRESS_NGINX_FLAGS, name) ? INGRESS_NGINX_FLAGS[name] : undefined;
  return f?.status === 'refused' ? `an ingress-nginx flag Portico does not support (${f.note})` : undefined;
}

/** True when argv[0] is ingress-nginx's program (the chart passes "/nginx-ingress-controller" first). */
export const isIngressNginxProgram = (arg: string | undefined): boolean => arg !== undefined && /(^|\/)nginx-ingress-controller$/.test(arg);

/**
 * ingress-nginx's defaults of the flags Portico shares with it, applied when started as /nginx-ingress-controller
 * (as PORTICO_* defaults, so the environment and the flags still win). Left at Portico's defaults on purpose:
 * --update-status-on-shutdown (off, see its help) and --enable-metrics (on).
 */
export function ingressNginxDefaults(env: NodeJS.ProcessEnv): Record<string, string> {
  const d: Record<string, string> = {
    'http-port': '80',
    'https-port': '443',
    'listen-address': '0.0.0.0',
    'health-addr': '0.0.0.0:10254',
    'controller-class': 'k8s.io/ingress-nginx',
    'ingress-class': 'nginx',
    'election-id': 'ingress-controller-leader',
  };
  // ingress-nginx runs in the namespace the Downward API gives it.
  if (env.POD_NAMESPACE) d.namespace = env.POD_NAMESPACE;
  return d;
}

/** The environment with ingressNginxDefaults under Portico's prefix, below what the environment already sets. */
export function withIngressNginxDefaults(env: NodeJS.ProcessEnv, prefix: string): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  for (const [k, v] of Object.entries(ingressNginxDefaults(env))) out[envName(prefix, k)] ??= v;
  return out;
}

/** The flags given on the command line or in the environment (names, without "--"). */
export function givenFlags(argv: readonly string[], env: NodeJS.ProcessEnv, names: readonly string[], prefix: string): Set<string> {
  const out = new Set<string>();
  for (const a of argv) if (a.startsWith('--')) out.add(a.slice(2).split('=')[0] as string);
  for (const n of names) if (env[envName(prefix, n)] !== undefined) out.add(n);
  return out;
}

/** The Markdown table of every ingress-nginx flag and its status (docs/reference/flags.md). */
export function ingressNginxFlagsMarkdown(): string {
  const rows = Object.entries(INGRESS_NGINX_FLAGS).map(([n, f]) => `| \`--${n}\` | ${f.status} | ${f.note} |`);
  const counts = (['implemented', 'mapped', 'no-effect', 'refused'] as const).map((s) => `${Object.values(INGRESS_NGINX_FLAGS).filter((f) => f.status === s).length} ${s}`);
  return [`${rows.length} flags: ${counts.join(', ')}.`, '', '| ingress-nginx flag | status | in Portico |', '|---|---|---|', ...rows].join('\n');
}
