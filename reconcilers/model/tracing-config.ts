// ingress-nginx's OpenTelemetry ConfigMap keys (enable-opentelemetry, otlp-collector-*, otel-*, opentelemetry-*),
// as rows of the controller ConfigMap table (global-config.ts spreads them into CONFIG_KEYS), and the settings the
// translation makes of them (tracingSettingsOf). Portico has no nginx OpenTelemetry module: spans are made and
// exported by Lua (nginx-assets/lua/portico/tracing.lua) over OTLP/HTTP with JSON bodies, so there is no TOML file
// and no gRPC.
import { z } from 'zod';
import type { TracingSettings } from '../config/types.ts';
import { boolSchema, intSchema } from '../values/safe.ts';
import { forbiddenAddressReason, parseIp } from '../values/addresses.ts';

export type OtelSampler = 'AlwaysOn' | 'AlwaysOff' | 'TraceIdRatioBased';

export interface OtelConfigValues {
  otelEnabled: boolean;
  otelTrustIncomingSpan: boolean;
  otelOperationName: string;
  otelConfigPath: string;
  otlpCollectorHost: string;
  otlpCollectorPort: number;
  otelServiceName: string;
  otelSampler: OtelSampler;
  otelSamplerRatio: number;
  otelSamplerParentBased: boolean;
  otelMaxQueueSize: number;
  otelScheduleDelayMillis: number;
  otelMaxExportBatchSize: number;
}

/** ingress-nginx's default opentelemetry-config: the only value accepted (Portico writes no such file). */
export const OTEL_CONFIG_PATH = '/etc/ingress-controller/telemetry/opentelemetry.toml';

/** Variables an operation name may use: the request's, and those of the route (tracing.lua fills them in). */
export const OPERATION_NAME_VARIABLES = ['request_method', 'uri', 'host', 'scheme', 'server_port', 'namespace', 'ingress_name', 'service_name', 'location_path'] as const;

/**
 * opentelemetry-operation-name (ConfigMap): literal text of letters, digits, space and _ . : / - and the variables
 * above ("HTTP $request_method $uri"), at most 128 characters.
 */
export const operationNameTemplateSchema = z
  .string()
  .trim()
  .max(128, 'at most 128 characters')
  .superRefine((v, ctx) => {
    const rest = v.replace(/\$([a-z_]+)/g, (m, name: string) => ((OPERATION_NAME_VARIABLES as readonly string[]).includes(name) ? '' : `\u0000${name}`));
    const unknown = /\u0000([a-z_]+)/.exec(rest);
    if (unknown) ctx.addIssue({ code: 'custom', message: `$${unknown[1]} is not a variable an operation name may use (${OPERATION_NAME_VARIABLES.map((n) => `$${n}`).join(', ')})` });
    else if (!/^[A-Za-z0-9_.:/ -]*$/.test(rest)) ctx.addIssue({ code: 'custom', message: 'expected letters, digits, spaces, "_", ".", ":", "/", "-" and $variables' });
  });

/**
 * otlp-collector-host: "" (tracing off), an IP address Portico may send to, or a DNS name (lower case, a trailing dot
 * allowed), which the gateway resolves (nginx-driver/externalnames.ts) and whose addresses pass the same checks.
 */
export const collectorHostSchema = z
  .string()
  .trim()
  .transform((v) => v.toLowerCase().replace(/\.$/, ''))
  .superRefine((v, ctx) => {
    if (v === '') return;
    if (!parseIp(v)) {
      if (v.length > 253 || !/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(v)) {
        ctx.addIssue({ code: 'custom', message: 'expected an IP address or a DNS name (e.g. otel-collector.observability.svc.cluster.local), without scheme or port' });
      } else if (v === 'localhost' || v.endsWith('.localhost')) {
        ctx.addIssue({ code: 'custom', message: 'the collector cannot be loopback' });
      }
      return;
    }
    const why = forbiddenAddressReason(v);
    if (why) ctx.addIssue({ code: 'custom', message: `the collector cannot be ${why}` });
  });

/** Whether the collector host is a DNS name the gateway must resolve (not an IP address). */
export const collectorIsName = (host: string): boolean => host !== '' && !parseIp(host);

/** otlp-collector-port: 4317 (ingress-nginx's default, OTLP/gRPC) is read as 4318, OTLP/HTTP on the same collector. */
const collectorPortSchema = intSchema(1, 65535).transform((n) => (n === 4317 ? 4318 : n));

const samplerSchema = z
  .string()
  .trim()
  .refine((v): v is OtelSampler => v === 'AlwaysOn' || v === 'AlwaysOff' || v === 'TraceIdRatioBased', {
    message: 'expected AlwaysOn, AlwaysOff or TraceIdRatioBased (the samplers ingress-nginx\'s module accepts)',
  })
  .transform((v) => v as OtelSampler);

const ratioSchema = z
  .string()
  .trim()
  .regex(/^(0(\.\d{1,9})?|1(\.0{1,9})?|\.\d{1,9})$/, 'expected a number between 0 and 1')
  .transform((v) => Number(v));

const serviceNameSchema = z.string().trim().regex(/^[A-Za-z0-9_.-]{1,128}$/, 'expected letters, digits, "_", "." and "-" (at most 128)');

const configPathSchema = z
  .string()
  .trim()
  .refine((v) => v === OTEL_CONFIG_PATH, { message: `Portico writes no OpenTelemetry configuration file (tracing is configured from the otel-* and otlp-* keys directly): only ingress-nginx's default ${OTEL_CONFIG_PATH} is accepted` });

type Row<F extends keyof OtelConfigValues> = { field: F; schema: z.ZodType<OtelConfigValues[F], string>; default: OtelConfigValues[F]; description: string };
const row = <F extends keyof OtelConfigValues>(field: F, schema: z.ZodType<OtelConfigValues[F], string>, dflt: OtelConfigValues[F], description: string): Row<F> => ({ field, schema, default: dflt, description });

export const TRACING_KEYS = {
  'enable-opentelemetry': row('otelEnabled', boolSchema, false, 'OpenTelemetry tracing on every route (an Ingress\'s enable-opentelemetry "false" opts out; "true" turns it on for that Ingress when this is false): one SERVER span per request, W3C traceparent continued and sent upstream. Needs otlp-collector-host'),
  'opentelemetry-trust-incoming-span': row('otelTrustIncomingSpan', boolSchema, true, 'Continue the trace of a valid incoming traceparent (its span is the parent); "false": every request starts a new trace and the client\'s traceparent is not passed on. An Ingress\'s annotation overrides it'),
  'opentelemetry-operation-name': row('otelOperationName', operationNameTemplateSchema, '', 'Span name of routes without an opentelemetry-operation-name annotation: text and the variables $request_method, $uri, $host, $scheme, $server_port, $namespace, $ingress_name, $service_name, $location_path (e.g. "HTTP $request_method $uri"). Empty: the route\'s path as written (ingress-nginx: the location, e.g. "/api/")'),
  'opentelemetry-config': row('otelConfigPath', configPathSchema, OTEL_CONFIG_PATH, 'ingress-nginx\'s path of the TOML file it writes for its module. Portico has no module and writes no file (the otel-* and otlp-* keys are read directly), so only the default value is accepted; another one is reported'),
  'otlp-collector-host': row('otlpCollectorHost', collectorHostSchema, '', 'The OpenTelemetry Collector spans are sent to (OTLP/HTTP, POST /v1/traces, JSON): an IP address or a DNS name (resolved by the controller, IPv4, re-checked every minute: use the full name, e.g. otel-collector.observability.svc.cluster.local); never loopback, link-local, unspecified or one of Portico\'s own addresses. Empty: no tracing'),
  'otlp-collector-port': row('otlpCollectorPort', collectorPortSchema, 4318, 'The collector\'s OTLP/HTTP port. Portico exports over HTTP only (Lua has no gRPC): 4317, ingress-nginx\'s default (OTLP/gRPC), is read as 4318, the OTLP/HTTP port of the same collector'),
  'otel-service-name': row('otelServiceName', serviceNameSchema, 'nginx', 'The service.name resource attribute of the spans (ingress-nginx\'s default, "nginx")'),
  'otel-sampler': row('otelSampler', samplerSchema, 'AlwaysOn', 'AlwaysOn, AlwaysOff or TraceIdRatioBased (otel-sampler-ratio of the requests, drawn per request). Others (ingress-nginx\'s docs list "remote", which its module rejects) are refused'),
  'otel-sampler-ratio': row('otelSamplerRatio', ratioSchema, 0.01, 'With TraceIdRatioBased: the share of requests sampled (0 to 1)'),
  'otel-sampler-parent-based': row('otelSamplerParentBased', boolSchema, true, 'A request with a trusted, valid traceparent is sampled when its sampled flag is set (ParentBased); the sampler decides only for the others'),
  'otel-max-queuesize': row('otelMaxQueueSize', intSchema(1, 1_000_000), 2048, 'Spans each nginx worker keeps waiting for export; a span that finds the queue full is dropped and counted (portico_tracing_spans_dropped), never waited for'),
  'otel-schedule-delay-millis': row('otelScheduleDelayMillis', intSchema(10, 3_600_000), 5000, 'How often each worker exports its queued spans (ms); a full batch goes at once'),
  'otel-max-export-batch-size': row('otelMaxExportBatchSize', intSchema(1, 100_000), 512, 'Spans per export request at most'),
} as const;

/**
 * The data plane's tracing settings: present when a collector is named and tracing is on globally or for some
 * route (`anyRoute`), so nginx.conf has no tracing at all otherwise. `own`: Portico's own addresses (the collector
 * may not be one of them).
 */
export function tracingSettingsOf(g: OtelConfigValues, anyRoute: boolean, own?: ReadonlySet<string>): TracingSettings | undefined {
  if (!g.otlpCollectorHost || !(g.otelEnabled || anyRoute)) return undefined;
  // (A DNS name is resolved and its addresses checked by the gateway, which puts an address here.)
  if (!collectorIsName(g.otlpCollectorHost) && forbiddenAddressReason(g.otlpCollectorHost, own)) return undefined;
  return {
    enabled: g.otelEnabled,
    host: g.otlpCollectorHost,
    port: g.otlpCollectorPort,
    serviceName: g.otelServiceName,
    sampler: g.otelSampler,
    ratio: g.otelSamplerRatio,
    parentBased: g.otelSamplerParentBased,
    trustIncomingSpan: g.otelTrustIncomingSpan,
    operationName: g.otelOperationName,
    maxQueueSize: g.otelMaxQueueSize,
    scheduleDelayMillis: g.otelScheduleDelayMillis,
    maxExportBatchSize: g.otelMaxExportBatchSize,
  };
}
