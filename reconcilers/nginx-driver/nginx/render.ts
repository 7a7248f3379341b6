// Renders nginx.conf from the Handlebars templates in nginx-assets/templates. Handlebars runs with noEscape and
// strict mode, and the templates are checked at load time: every {{value}} must go through one of the escaping
// helpers below — a bare {{x}} makes loading fail, so a raw value can never slip into the config.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import Handlebars from 'handlebars';
import type { Structure } from '../../config/types.ts';
import { PRIVATE_KEY_PEM, backendServerNameSchema, caBundleProblem } from '../../values/safe.ts';
import { UnsafeValueError, accessLogParams, errorLogLevel, cidr, fastcgiParam, loopId, mapSource, headerToken, headerValueQuoted, headerVariable, host, integer, nextUpstream, listenAddress, luaNumber, luaPeer, luaString, luaText, onOff, profileName, upstreamName, quote, quoteFormat, quoteRegex, serverName, size, sslVerifyName, unixListen, words, workers } from './escape.ts';
import { fullNginxTuning } from '../../config/nginx-tuning.ts';
import { ASSETS_DIR, H2C_MODULE, METRICS_MODULE, UPSTREAM_SSL_MODULE, VARS_MODULE, gatewayTlsSocket, type RuntimePaths } from './runtime.ts';
import { MODSECURITY_FILES, modsecurityRules, modsecurityRulesFile, transactionIdValue } from './modsecurity.ts';
import { geoip2Lookup, geoip2Variable, optionalModules } from './optional-modules.ts';
import { fastcgiNextUpstream, fastcgiParamsOf } from './fastcgi.ts';

export { ASSETS_DIR, hardOpenFilesLimit, runtimePaths, type RuntimeOptions, type RuntimePaths } from './runtime.ts';

/** Helpers that emit values, and the block/sub-expression helpers that only compute. */
const VALUE_HELPERS = ['q', 'qre', 'qfmt', 'luastr', 'luatext', 'luapeer', 'luanum', 'num', 'size', 'host', 'servername', 'listen', 'workers', 'cidr', 'mapsrc', 'unix', 'name', 'nextup', 'onoff', 'hdr', 'hvar', 'hval', 'words', 'txid', 'upstream', 'loopid', 'loglevel', 'logparams', 'geovar', 'geoname', 'fcgiparam', 'sslname'] as const;
const LOGIC_HELPERS = ['eq', 'if', 'unless', 'each', 'else'] as const;

function assertOnlyHelpers(name: string, source: string): void {
  const allowed = new Set<string>([...VALUE_HELPERS, ...LOGIC_HELPERS]);
  const visit = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    const n = node as { type?: string; path?: { original?: string }; params?: unknown[] };
    if (n.type === 'MustacheStatement') {
      const helper = n.path?.original ?? '';
      if (!allowed.has(helper) || !(n.params && n.params.length > 0)) {
        throw new Error(`template ${name}: {{${helper}}} emits a value without an escaping helper`);
      }
    }
    for (const v of Object.values(node)) {
      if (Array.isArray(v)) v.forEach(visit);
      else if (v && typeof v === 'object') visit(v);
    }
  };
  visit(Handlebars.parse(source));
}

function makeEnv(): typeof Handlebars {
  const hb = Handlebars.create();
  hb.registerHelper('q', (v: unknown) => quote(v));
  hb.registerHelper('qre', (v: unknown) => quoteRegex(v));
  hb.registerHelper('qfmt', (v: unknown) => quoteFormat(v));
  hb.registerHelper('loglevel', (v: unknown) => errorLogLevel(v));
  hb.registerHelper('logparams', (v: unknown) => accessLogParams(v));
  hb.registerHelper('luastr', (v: unknown) => luaString(v));
  // A Gateway listener hostname for Lua: "*.example.com" as ".example.com" (luastr takes no "*").
  hb.registerHelper('wildsuffix', (v: unknown) => (typeof v === 'string' && v.startsWith('*.') ? v.slice(1) : v));
  hb.registerHelper('luatext', (v: unknown) => luaText(v));
  hb.registerHelper('luapeer', (v: unknown) => luaPeer(v));
  hb.registerHelper('cidr', (v: unknown) => cidr(v));
  hb.registerHelper('mapsrc', (v: unknown) => mapSource(v));
  hb.registerHelper('unix', (v: unknown) => unixListen(v));
  hb.registerHelper('num', (v: unknown) => integer(v));
  hb.registerHelper('luanum', (v: unknown) => luaNumber(v));
  hb.registerHelper('size', (v: unknown) => size(v));
  hb.registerHelper('host', (v: unknown) => host(v));
  hb.registerHelper('servername', (v: unknown) => serverName(v));
  hb.registerHelper('listen', (a: unknown, p: unknown) => listenAddress(a, p));
  hb.registerHelper('workers', (v: unknown) => workers(v));
  hb.registerHelper('name', (v: unknown) => profileName(v));
  hb.registerHelper('upstream', (v: unknown) => upstreamName(v));
  hb.registerHelper('nextup', (v: unknown) => nextUpstream(v));
  hb.registerHelper('onoff', (v: unknown) => onOff(v));
  hb.registerHelper('hdr', (v: unknown) => headerToken(v));
  hb.registerHelper('hvar', (v: unknown) => headerVariable(v));
  hb.registerHelper('hval', (v: unknown) => headerValueQuoted(v));
  hb.registerHelper('words', (v: unknown) => words(v));
  hb.registerHelper('loopid', (v: unknown) => loopId(v));
  hb.registerHelper('txid', (v: unknown) => transactionIdValue(v));
  hb.registerHelper('geovar', (v: unknown) => geoip2Lookup(v));
  hb.registerHelper('geoname', (v: unknown) => geoip2Variable(v));
  hb.registerHelper('fcgiparam', (v: unknown) => fastcgiParam(v));
  hb.registerHelper('sslname', (v: unknown) => sslVerifyName(v));
  hb.registerHelper('eq', (a: unknown, b: unknown) => a === b);
  return hb;
}

let compiled: Handlebars.TemplateDelegate | undefined;
let env: typeof Handlebars | undefined;

function load(): Handlebars.TemplateDelegate {
  if (compiled) return compiled;
  env = makeEnv();
  const dir = path.join(ASSETS_DIR, 'templates');
  for (const partial of ['forwarded', 'http', 'stream', 'modules']) {
    const src = readFileSync(path.join(dir, `${partial}.hbs`), 'utf8');
    assertOnlyHelpers(`${partial}.hbs`, src);
    env.registerPartial(partial, src);
  }
  const main = readFileSync(path.join(dir, 'nginx.conf.hbs'), 'utf8');
  assertOnlyHelpers('nginx.conf.hbs', main);
  compiled = env.compile(main, { noEscape: true, strict: true, preventIndent: true });
  return compiled;
}

/** Exposed for tests of the template guard. */
export function checkTemplate(name: string, source: string): void {
  assertOnlyHelpers(name, source);
}

export function hstsValue(s: Structure): string {
  const g = s.global;
  return `max-age=${g.hstsMaxAgeSeconds}${g.hstsIncludeSubdomains ? '; includeSubDomains' : ''}${g.hstsPreload ? '; preload' : ''}`;
}

/** Defaults of the optional GlobalSettings fields (ConfigMap lua-shared-dicts, flags --published-http(s)-port). */
/** ingress-nginx's default access-log format (log-format-upstream unset), byte for byte. */
export const DEFAULT_LOG_FORMAT_UPSTREAM =
  '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_length $request_time [$proxy_upstream_name] [$proxy_alternative_upstream_name] $upstream_addr $upstream_response_length $upstream_response_time $upstream_status $req_id';
/** ingress-nginx's default stream access-log format (log-format-stream unset). */
export const DEFAULT_LOG_FORMAT_STREAM = '[$remote_addr] [$time_local] $protocol $status $bytes_sent $bytes_received $session_time';

export const DEFAULT_SHARED_DICTS = { dataKb: 128 * 1024, certsKb: 32 * 1024, metricsKb: 32 * 1024 } as const;
export const DEFAULT_PUBLISHED_PORTS = { http: 80, https: 443 } as const;
/** ingress-nginx's default max-worker-connections. */
export const WORKER_CONNECTIONS = 16384;

/**
 * worker_connections and worker_rlimit_nofile: a proxied request holds two descriptors, so the limit is twice the
 * connections; both stay within the hard limit nginx inherits (raising past it fails without CAP_SYS_RESOURCE).
 */
export function connectionLimits(maxOpenFiles: number | null, wanted: number = WORKER_CONNECTIONS): { workerConnections: number; workerRlimitNofile: number } {
  // max-worker-connections 0 (ingress-nginx: as many as the open-files limit allows).
  let workerConnections = wanted > 0 ? wanted : maxOpenFiles !== null ? Math.min(1_048_576, Math.floor(maxOpenFiles / 2)) : WORKER_CONNECTIONS;
  if (maxOpenFiles !== null && maxOpenFiles < 2 * workerConnections) workerConnections = Math.max(512, Math.floor(maxOpenFiles / 2));
  return { workerConnections, workerRlimitNofile: 2 * workerConnections };
}

/** Where a profile's CA bundle lives: named by its digest, so a file nginx uses is never rewritten. */
export function trustedCaFile(runtime: RuntimePaths, pem: string): string {
  return path.join(runtime.dir, 'ca', `${createHash('sha256').update(pem).digest('hex').slice(0, 32)}.pem`);
}

/**
 * Writes the CA bundles the structure's profiles verify backends against (before `nginx -t` reads them). Each is
 * checked again to be PEM certificates only. Files no profile uses any more are left (a running nginx may use them;
 * they are small and named by content).
 */
export function writeTrustedCas(structure: Structure, runtime: RuntimePaths): void {
  for (const p of structure.profiles) {
    if (!p.trustedCa) continue;
    const problem = caBundleProblem(p.trustedCa);
    if (problem) throw new UnsafeValueError(`profile ${p.name}: ${problem}`);
    const file = trustedCaFile(runtime, p.trustedCa);
    if (existsSync(file)) continue;
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, p.trustedCa, { mode: 0o600 });
  }
}

/**
 * Where a profile's client certificate and key live (proxy-ssl-secret): named by the digest of both, so a file nginx
 * uses is never rewritten and a new certificate gets new files.
 */
export function clientCertificateFiles(runtime: RuntimePaths, c: { cert: string; key: string }): { cert: string; key: string } {
  const base = path.join(runtime.dir, 'client', createHash('sha256').update(c.cert).update('\0').update(c.key).digest('hex').slice(0, 32));
  return { cert: `${base}.crt`, key: `${base}.key` };
}


/**
 * Writes the client certificates the structure's profiles present to backends (before `nginx -t` reads them): the
 * chain and the key, each checked again to be PEM of its kind only, mode 0600 in a directory of mode 0700. Nothing
 * of the key is logged or put in nginx.conf (only the file's path is). Files no profile uses any more are left, as
 * for CA bundles.
 */
export function writeClientCertificates(structure: Structure, runtime: RuntimePaths): void {
  for (const p of structure.profiles) {
    if (!p.sslCertificate) continue;
    const problem = caBundleProblem(p.sslCertificate.cert);
    if (problem) throw new UnsafeValueError(`profile ${p.name}: the client certificate: ${problem.replace('the CA bundle', 'it')}`);
    if (!PRIVATE_KEY_PEM.test(p.sslCertificate.key)) throw new UnsafeValueError(`profile ${p.name}: the client certificate's key is not one PEM private key`);
    const files = clientCertificateFiles(runtime, p.sslCertificate);
    mkdirSync(path.dirname(files.key), { recursive: true, mode: 0o700 });
    if (!existsSync(files.key)) writeFileSync(files.key, p.sslCertificate.key, { mode: 0o600 });
    if (!existsSync(files.cert)) writeFileSync(files.cert, p.sslCertificate.cert, { mode: 0o600 });
  }
}

/**
 * Where a Gateway TLS listener's certificate and key live (its terminating hops read them): named by the digest of
 * both, so a file nginx uses is never rewritten and a renewed certificate gets new files.
 */
export function gatewayTlsFiles(runtime: RuntimePaths, c: { cert: string; key: string }): { cert: string; key: string } {
  const base = path.join(runtime.dir, 'gateway-tls', createHash('sha256').update(c.cert).update('\0').update(c.key).digest('hex').slice(0, 32));
  return { cert: `${base}.crt`, key: `${base}.key` };
}

/**
 * Writes the certificates and keys the Gateway TLS listeners' terminating hops serve, and the CA bundles their
 * BackendTLSPolicies verify backends against (before `nginx -t` reads them): each checked again to be PEM of its
 * kind only (the stream section checked them fully and left out what fails), mode 0600 in a directory of mode 0700.
 * Only the files' paths reach nginx.conf; unused files are left, as for CA bundles.
 */
export function writeGatewayTlsFiles(structure: Structure, runtime: RuntimePaths): void {
  for (const [i, h] of (structure.stream?.gateway?.hops ?? []).entries()) {
    const problem = caBundleProblem(h.certificate.cert);
    if (problem) throw new UnsafeValueError(`Gateway TLS hop ${i}: the certificate: ${problem.replace('the CA bundle', 'it')}`);
    if (!PRIVATE_KEY_PEM.test(h.certificate.key)) throw new UnsafeValueError(`Gateway TLS hop ${i}: the key is not one PEM private key`);
    const files = gatewayTlsFiles(runtime, h.certificate);
    mkdirSync(path.dirname(files.key), { recursive: true, mode: 0o700 });
    if (!existsSync(files.key)) writeFileSync(files.key, h.certificate.key, { mode: 0o600 });
    if (!existsSync(files.cert)) writeFileSync(files.cert, h.certificate.cert, { mode: 0o600 });
    if (!h.backendTls) continue;
    const caProblem = caBundleProblem(h.backendTls.ca);
    if (caProblem) throw new UnsafeValueError(`Gateway TLS hop ${i}: the backend CA bundle: ${caProblem}`);
    const ca = trustedCaFile(runtime, h.backendTls.ca);
    if (existsSync(ca)) continue;
    mkdirSync(path.dirname(ca), { recursive: true, mode: 0o700 });
    writeFileSync(ca, h.backendTls.ca, { mode: 0o600 });
  }
}

/** The Gateway stream section as the template reads it: paths in place of key material, optional fields explicit. */
function gatewayStreamView(structure: Structure, runtime: RuntimePaths) {
  const gs = structure.stream?.gateway;
  if (!gs) return null;
  return {
    address: gs.address,
    upstreams: gs.upstreams,
    servers: gs.servers.map((s) => ({ ...s, targets: s.targets.map((t) => ({ host: t.host, upstream: t.upstream, hop: t.hop ?? null })) })),
    hops: (gs.hops ?? []).map((h, i) => {
      if (h.backendTls && !backendServerNameSchema.safeParse(h.backendTls.hostname).success) throw new UnsafeValueError(`Gateway TLS hop ${i}: invalid backend server name ${JSON.stringify(h.backendTls.hostname)}`);
      return {
        socket: gatewayTlsSocket(runtime, i),
        files: gatewayTlsFiles(runtime, h.certificate),
        backendTls: h.backendTls ? { hostname: h.backendTls.hostname, caFile: trustedCaFile(runtime, h.backendTls.ca) } : null,
        upstream: h.upstream,
        retry: h.retry,
      };
    }),
  };
}

/** Gateway API's bound on a rule's filters, so on its copies of a request. */
export const MAX_MIRROR_SLOTS = 16;

/** The slots of a profile's copies, 0…n-1 (n: 1-16, else the structure is refused). */
function mirrorSlots(profile: string, n: unknown): number[] {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_MIRROR_SLOTS) throw new UnsafeValueError(`profile ${profile}: invalid mirror slots ${JSON.stringify(n)}: expected 1-${MAX_MIRROR_SLOTS}`);
  return Array.from({ length: n }, (_, k) => k);
}

export function renderNginxConf(structure: Structure, runtime: RuntimePaths, checksum: string): string {
  const tpl = load();
  const g = structure.global;
  // Strict mode throws on missing fields, so optional profile settings are made explicit (null = not set).
  // BackendTLSPolicy subjectAltNames: Portico's module checks them; without it (or without a CA bundle to verify the
  // chain with) such a profile answers 502 rather than proxy unverified.
  const upstreamSsl = structure.profiles.some((p) => p.sslVerifyNames?.length) && existsSync(UPSTREAM_SSL_MODULE);
  const profiles = structure.profiles.map(({ trustedCa, sslCertificate, modsecurity, fastcgi, sslVerifyNames, ...p }) => ({
    proxyBodySize: null,
    testInvalidDirective: null,
    nextUpstream: null,
    nextUpstreamTries: null,
    backendProtocol: null,
    sslServerName: null,
    sslSni: null,
    sslVerifyDepth: null,
    sslProtocols: null,
    sslCiphers: null,
    nextUpstreamTimeoutSeconds: null,
    proxyBuffering: null,
    proxyBufferSize: null,
    proxyBuffersNumber: null,
    proxyRequestBuffering: null,
    proxyMaxTempFileSize: null,
    clientBodyBufferSize: null,
    proxyHttpVersion: null,
    proxyCookieDomain: null,
    proxyCookiePath: null,
    proxyRedirect: null,
    connectionHeader: null,
    accessLog: null,
    limitRateKb: null,
    limitRateAfterKb: null,
    errorCodes: null,
    interceptErrors: null,
    mirror: null,
    ...p,
    trustedCaFile: trustedCa ? trustedCaFile(runtime, trustedCa) : null,
    sslVerifyNames: sslVerifyNames?.length && trustedCa && upstreamSsl ? sslVerifyNames : null,
    sslVerifyUnavailable: !!sslVerifyNames?.length && !(trustedCa && upstreamSsl),
    // Paths only: the certificate and key are in files (writeClientCertificates), never in nginx.conf.
    sslCertificateFiles: sslCertificate ? clientCertificateFiles(runtime, sslCertificate) : null,
    // The rules are in a file named by their digest (writeModsecurityRules); nginx.conf holds its path only.
    modsecurityRulesFile: modsecurity ? modsecurityRulesFile(runtime, modsecurityRules(modsecurity, runtime)) : null,
    modsecurityTransactionId: modsecurity?.transactionId ?? null,
    // backend-protocol FCGI: fastcgi_index, and the params (the standard ones, then the Ingress's).
    fastcgiIndex: fastcgi?.index ?? null,
    fastcgiParams: p.backendProtocol === 'FCGI' ? fastcgiParamsOf({ ...p, ...(fastcgi ? { fastcgi } : {}) }) : null,
    fastcgiNextUpstream: p.backendProtocol === 'FCGI' ? fastcgiNextUpstream(p.nextUpstream) : null,
    // Request mirroring with slots: one `mirror` per copy (/_portico_internal/mirror/<k>), drawn per request by Lua.
    mirrorSlots: p.mirror?.slots !== undefined ? mirrorSlots(p.name, p.mirror.slots) : null,
    // A profile speaking TLS, HTTP/2 or FastCGI to its backends keeps its connections in an upstream block of its own.
    upstream: p.backendProtocol ? `portico_be_${p.name}` : 'portico_upstream',
  }));
  // handoff: the block is wrapped by portico_peer_handoff (nginx-assets/modules/portico_vars/ngx_http_portico_vars_peer.c),
  // which writes the http level's forwarded headers (portico_proxy_header) into the requests proxied there: every block
  // proxy_pass sends the client's requests to (plain HTTP, and backend-protocol HTTPS). At portico_upstream,
  // where `location /` proxies, the router may also hand the first attempt's endpoint to nginx itself. Never a block
  // another protocol speaks to (gRPC, FastCGI), nor the auth and mirror blocks (their locations list their own).
  const upstreams = [
    { name: 'portico_upstream', mirror: false, handoff: true },
    { name: 'portico_auth_upstream', mirror: false, handoff: false },
    { name: 'portico_mirror_upstream', mirror: true, handoff: false },
    ...profiles.filter((p) => p.upstream !== 'portico_upstream').map((p) => ({ name: p.upstream, mirror: false, handoff: p.backendProtocol === 'HTTPS' })),
  ];
  // custom-http-errors: one @portico_err_<code> location per code some profile sends there (400-599 only).
  const errorCodes = [...new Set(structure.profiles.flatMap((p) => p.errorCodes ?? []))].sort((a, b) => a - b);
  for (const c of errorCodes) if (!Number.isInteger(c) || c < 400 || c > 599) throw new UnsafeValueError(`invalid error code ${JSON.stringify(c)}: expected 400-599`);
  const t = fullNginxTuning(g);
  // The realip module: use-forwarded-headers, enable-real-ip or use-proxy-protocol. With the PROXY protocol and no
  // proxy-real-ip-cidr, every peer is trusted (the listeners accept nothing but PROXY connections); otherwise an
  // empty list trusts nobody.
  const realIp = g.useForwardedHeaders || t.enableRealIp || t.useProxyProtocol;
  const cidrs = g.proxyRealIpCidr ?? [];
  return tpl({
    global: g,
    t,
    profiles,
    upstreams,
    errorCodes,
    hstsValue: hstsValue(structure),
    runtime,
    checksum,
    dicts: { ...DEFAULT_SHARED_DICTS, ...g.luaSharedDicts },
    // Per-request metrics (--enable-metrics): Portico's nginx module and its settings.
    metrics: g.metrics ?? null,
    metricsModule: g.metrics ? METRICS_MODULE : null,
    varsModule: VARS_MODULE,
    upstreamSslModule: upstreamSsl ? UPSTREAM_SSL_MODULE : null,
    // Gateway API: plain HTTP Gateway ports take HTTP/2 with prior knowledge (gRPC clients, GRPCRoute) next to
    // HTTP/1.x, through Portico's portico_h2c module (nginx 1.22 cannot); without the module they stay HTTP/1.x.
    ...h2cOf(g.gatewayPorts),
    // OpenTelemetry (tracing.lua): init_by_lua settings, the traceparent sent upstream, the span's log line.
    tracing: g.tracing ?? null,
    workerInit: !!g.tracing,
    realIp,
    // The geo of trusted peers ($portico_trusted_peer): their X-Forwarded-Proto/-Host/-Port or PROXY header's port count.
    trustedPeer: g.useForwardedHeaders || t.useProxyProtocol,
    // compute-full-forwarded-for counts only with use-forwarded-headers (ingress-nginx).
    fullForwardedFor: g.useForwardedHeaders && t.computeFullForwardedFor,
    realIpHeader: t.useProxyProtocol ? 'proxy_protocol' : t.forwardedForHeader,
    realIpCidrs: cidrs.length || !t.useProxyProtocol ? cidrs : ['0.0.0.0/0', '::/0'],
    logEscape: t.logFormatEscapeNone ? 'none' : t.logFormatEscapeJson ? 'json' : '',
    logFormat: g.logFormatUpstream || DEFAULT_LOG_FORMAT_UPSTREAM,
    // ingress-nginx's default format with the log module's default escaping: the same line, written by the variables
    // module in one pass (portico_access_line).
    accessLine: (g.logFormatUpstream || DEFAULT_LOG_FORMAT_UPSTREAM) === DEFAULT_LOG_FORMAT_UPSTREAM && !t.logFormatEscapeNone && !t.logFormatEscapeJson,
    streamLogFormat: t.logFormatStream || DEFAULT_LOG_FORMAT_STREAM,
    publishedHttpPort: g.listen.publishedHttpPort ?? DEFAULT_PUBLISHED_PORTS.http,
    publishedHttpsPort: g.listen.publishedHttpsPort ?? DEFAULT_PUBLISHED_PORTS.https,
    ...connectionLimits(t.maxWorkerOpenFiles || runtime.maxOpenFiles, t.maxWorkerConnections),
    // proxy-next-upstream, with non_idempotent when retry-non-idempotent says so (and retries are on at all).
    nextUpstream: t.retryNonIdempotent && t.proxyNextUpstream !== 'off' && !t.proxyNextUpstream.split(' ').includes('non_idempotent') ? `${t.proxyNextUpstream} non_idempotent` : t.proxyNextUpstream,
    httpAccessLogOff: t.disableAccessLog || t.disableHttpAccessLog,
    // enable-syslog: "<host>:<port>" (an IPv4 address or DNS name, checked by its schema).
    syslogServer: t.enableSyslog && t.syslogHost ? `${t.syslogHost}:${t.syslogPort}` : null,
    // proxy-redirect-from / -to for every path without the annotations ("off" and "default" leave nginx's default).
    proxyRedirect: t.proxyRedirectFrom !== 'off' && t.proxyRedirectFrom !== 'default' && t.proxyRedirectTo !== 'off' ? { from: t.proxyRedirectFrom, to: t.proxyRedirectTo } : null,
    streamAccessLogOff: t.disableAccessLog || t.disableStreamAccessLog,
    unavailablePeer: `unix:${runtime.unavailableSocket}`,
    // access-log-params, else a buffer for a file (stdout and stderr: one write per line).
    accessLogParams: t.accessLogParams || (runtime.accessLog !== '/dev/stdout' && runtime.accessLog !== '/dev/stderr' ? 'buffer=64k flush=1s' : ''),
    stream: structure.stream ?? null,
    // TLS passthrough: the HTTPS port is the stream section's, the HTTP server's TLS listener a unix socket.
    passthrough: structure.stream?.passthrough ?? null,
    // Gateway API TCP, UDP and TLS (passthrough and terminated) listeners.
    gatewayStream: gatewayStreamView(structure, runtime),
    // ModSecurity's module, loaded only when a profile uses it.
    modsecurityModule: structure.profiles.some((p) => p.modsecurity) ? MODSECURITY_FILES.module : null,
    // brotli and GeoIP2 (optional-modules.ts): loaded only when asked for and installed; their problems are reported
    // by structure-apply.ts.
    ...optionalModules(t),
  });
}

/** The h2c module and the plain Gateway ports it serves (none: no module line, no directive). */
function h2cOf(ports: { port: number; ssl: boolean }[] | undefined): { h2cModule: string | null; h2cPorts: number[] } {
  const plain = (ports ?? []).filter((p) => !p.ssl).map((p) => p.port);
  return plain.length && existsSync(H2C_MODULE) ? { h2cModule: H2C_MODULE, h2cPorts: plain } : { h2cModule: null, h2cPorts: [] };
}
