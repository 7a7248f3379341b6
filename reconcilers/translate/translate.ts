// Pure translation: model snapshot → desired gateway configuration (structure + data), per-Ingress status and the
// events to report. No I/O, no clock. Deterministic: same snapshot, same output, byte for byte.
//
// Semantics (Ingress API + ingress-nginx's documented behaviour):
//   - paths of one host merge across Ingresses; for the same host + path + match type the Ingress with the oldest
//     creationTimestamp wins (ties: namespace/name); the loser gets a Warning event naming the winner;
//   - TLS for a host: oldest Ingress wins the same way;
//   - rules without host go to the catch-all server "_"; an Ingress's defaultBackend serves "/" on its hosts and on
//     "_" wherever no rule claims "/" (oldest first);
//   - Prefix is element-wise ("/foo" matches "/foo" and "/foo/bar", not "/foobar"); Exact beats Prefix;
//   - service ports resolve by number or name, target ports through the EndpointSlices' port names; only ready
//     endpoints receive new requests (terminating ones, even if still serving, get none);
//   - a missing Service or port gives a backend with no endpoints: that path answers 503, nothing else changes;
//   - endpoints no tenant may reach (loopback, link-local, Portico's own addresses...) are dropped with a Warning;
//   - an Ingress with an access-control annotation Portico cannot apply fails closed: its paths are claimed but
//     answer 503 (location without backend), so nothing protected is served and nothing falls through;
//   - every other unsupported annotation raises a Warning; none is ignored silently;
//   - hosts and paths become routes (data for the Lua router); what only nginx directives can do becomes a directive
//     profile shared by every route with the same settings (see profileOf), so nginx.conf does not grow with Ingresses;
//   - ssl-passthrough (with --enable-ssl-passthrough): TLS for a host goes undecrypted to one Service port, chosen as
//     ingress-nginx does (see passthroughTarget); the oldest Ingress serving a host decides, its routes stay plain HTTP.
//
// translate() runs the phases below in order over one draft (draft.ts): each phase reads what the earlier ones put
// there and adds its own part, the way Contour's DAG builder runs its processors. The order is part of the output
// (Events, and which object wins what), so a phase moves only with what it reads and writes. What differs between
// the kinds whose objects claim paths (Ingress, Route) is their claim processor's (kinds/<kind>/processor.ts,
// listed in kinds/processors.ts): the phases call its hooks and never ask which kind an object is.
import type { GlobalSettings, HostRoutes, Structure } from '../config/types.ts';
import { tracingSettingsOf } from '../model/tracing-config.ts';
import type { ModelSnapshot } from '../model/model.ts';
import type { TlsMaterial } from '../model/types.ts';
import { nginxTuningOf } from '../config/nginx-tuning.ts';
import type { TranslateOptions, TranslateResult } from './types.ts';
import type { TranslateMemo } from './memo.ts';
import { Draft, type Phase } from './draft.ts';
import { wildcardCovers } from './matching.ts';
import { admitObjects, failClosedObjects } from './phases/objects.ts';
import { claimPaths } from './phases/claims.ts';
import { chooseClientCertificates } from './phases/client-certs.ts';
import { attachCanaries } from './phases/canaries.ts';
import { applySslCiphers, chooseTlsOwners, loadCertificates } from './phases/tls.ts';
import { choosePassthrough } from './phases/passthrough.ts';
import { indexUpstreams } from './phases/upstreams.ts';
import { resolveCanaryBackends, resolvePathBackends } from './phases/backends.ts';
import { collectConsumers } from './phases/consumers.ts';
import { resolveSideBackends } from './phases/side-backends.ts';
import { resolveAuthBackends } from './phases/auth-backends.ts';
import { applyListenerFilters } from './phases/listener-filters.ts';
import { buildRoutes } from './phases/routes.ts';
import { redirectWww } from './phases/www-redirect.ts';
import { addServerAliases } from './phases/server-alias.ts';
import { warnObjects } from './phases/object-warnings.ts';
import { warnOwnHostAuth } from './phases/own-host-auth.ts';
import { askClientCertificates } from './phases/client-auth.ts';
import { PROCESSORS } from '../kinds/processors.ts';
import { gatewayApiState } from './gateway-api/attach.ts';
import { gatewayStreams } from './gateway-api/streams.ts';
import { policyFor } from './gateway-api/backend-tls.ts';
import { askGatewayClientCertificates, loadGatewayCertificates } from './gateway-api/certificates.ts';

// What other modules import from here (the translation's parts live in the modules above).
export type { IngressStatus, TranslateEvent, TranslateOptions, TranslateResult } from './types.ts';
export { endpointsFor, endpointsOf, type ForbiddenEndpoint } from './endpoints.ts';
export { retainMemo, TranslateMemo } from './memo.ts';
export { byAge, ingressKeyOf, ingressRef, isIngressServed, routeRef } from './objects.ts';
export type { PathClaim } from './claims.ts';
export type { ClaimProcessor, KindClaim, Owner } from './draft.ts';
export { annotationProfileSettings, modsecurityClosedReason, modsecuritySettings, profileOf, PROXY_SSL_DEFAULTS, proxySslClosedReason, proxySslProfileSettings, sizeBytes } from './profiles.ts';
export { annotationInstances, authBackendId, externalAuthInstance, GLOBAL_ALLOW_ID, GLOBAL_AUTH_ID, GLOBAL_DENY_ID, pluginId, type AnnotationInstance, type AuthTimeouts } from './plugin-instances.ts';
export { passthroughTarget } from './matching.ts';

/** The phases of a translation, in the order they run. */
export const PHASES: readonly Phase[] = [
  admitObjects, // which objects are served, oldest first
  failClosedObjects, // Ingresses whose every path fails closed (Ingress annotations)
  claimPaths, // host → path → the oldest claim, with its plugins and closed reasons
  chooseClientCertificates, // one client CA per host (auth-tls-*)
  attachCanaries, // canary Ingresses onto their main's backends
  chooseTlsOwners, // who configures TLS for a host
  loadCertificates, // their certificates
  loadGatewayCertificates, // Gateway API: the certificates of HTTPS listeners
  choosePassthrough, // ssl-passthrough hosts
  applySslCiphers, // ssl-ciphers: a host's cipher list, with its certificate
  indexUpstreams, // Upstreams by Service
  resolvePathBackends, // the backends of the winning paths (oldest first)
  resolveCanaryBackends, // canary backends and splits
  collectConsumers, // Consumers and their plugins
  resolveSideBackends, // default-backend and mirror-target
  applyListenerFilters, // Gateway API: the plugin chains of listeners with filters
  resolveAuthBackends, // external authentication and mirror targets
  buildRoutes, // per host: route rules and directive profiles
  redirectWww, // from-to-www-redirect servers
  addServerAliases, // server-alias names
  warnObjects, // Warnings about each object as a whole
  warnOwnHostAuth, // auth-url on the request's own host without a usable route for its path
  askClientCertificates, // what each server name's handshake asks for
  askGatewayClientCertificates, // Gateway API: what each HTTPS Gateway port's handshake asks for
];

export function translate(snap: ModelSnapshot, o: TranslateOptions, memo?: TranslateMemo): TranslateResult {
  const d = new Draft(snap, o, PROCESSORS, memo);
  for (const phase of PHASES) phase(d);
  return assemble(d);
}

/** The ConfigMap's block-cidrs, block-user-agents and block-referers for nginx.conf (structural: a reload). */
function blocksOf(g: ModelSnapshot['global']): Pick<GlobalSettings, 'blocks'> {
  const lists = [g.blockCidrs, g.blockUserAgents, g.blockReferers];
  if (lists.every((l) => !l || (l.items && !l.items.length))) return {};
  const invalid = lists.some((l) => l?.error !== undefined);
  return {
    blocks: {
      cidrs: g.blockCidrs?.items ?? [],
      userAgents: g.blockUserAgents?.items ?? [],
      referers: g.blockReferers?.items ?? [],
      ...(invalid ? { invalid: true as const } : {}),
    },
  };
}

/** Gateway API's TCP, UDP and TLS listeners (nginx's stream section: a change reloads). */
function gatewayStreamsOf(snap: ModelSnapshot, o: TranslateOptions): Pick<Structure, 'gatewayStreams'> {
  const streams = gatewayStreams(gatewayApiState(snap, o.gatewayApi), { secret: (k) => snap.secrets.get(k), policy: (ns, svc, port) => policyFor(snap, ns, svc, port) });
  return streams.length ? { gatewayStreams: streams } : {};
}

/** The pod ports of the Gateways' listeners (Gateway API): nginx listens on them (a new one reloads). */
function gatewayPortsOf(snap: ModelSnapshot, o: TranslateOptions, chains: ReadonlyMap<number, Record<string, string[]>>): Pick<GlobalSettings, 'gatewayPorts'> {
  const ports = gatewayApiState(snap, o.gatewayApi).ports;
  return ports.length ? { gatewayPorts: ports.map((p) => { const f = chains.get(p.port); return f ? { ...p, filters: f } : { ...p }; }) } : {};
}

/** The result of a finished draft: the structure (globals, profiles, passthrough) and the data (routes, backends, ...). */
function anyRouteTraces(routes: Record<string, HostRoutes>): boolean {
  for (const h of Object.values(routes)) for (const r of h.rules) if (r.route.tracing?.enabled) return true;
  return false;
}

function assemble(d: Draft): TranslateResult {
  const { snap, o, memo, events, status, passthrough, routes, profiles, backends, certificates, plugins, consumers, clientAuth } = d;
  const g = snap.global;
  const global: GlobalSettings = {
    workerProcesses: g.workerProcesses,
    workerShutdownTimeoutSeconds: g.workerShutdownTimeoutSeconds,
    keepAliveSeconds: g.keepAliveSeconds,
    keepAliveRequests: g.keepAliveRequests,
    proxyBodySize: g.proxyBodySize,
    proxyConnectTimeoutSeconds: g.proxyConnectTimeoutSeconds,
    proxyReadTimeoutSeconds: g.proxyReadTimeoutSeconds,
    proxySendTimeoutSeconds: g.proxySendTimeoutSeconds,
    useForwardedHeaders: g.useForwardedHeaders,
    logFormatUpstream: g.logFormatUpstream,
    sslRedirect: g.sslRedirect,
    hsts: g.hsts,
    hstsMaxAgeSeconds: g.hstsMaxAgeSeconds,
    hstsIncludeSubdomains: g.hstsIncludeSubdomains,
    hstsPreload: g.hstsPreload,
    luaSharedDicts: g.luaSharedDicts,
    proxyRealIpCidr: g.proxyRealIpCidr,
    ...blocksOf(g),
    ...(g.globalHeaders ? { headers: g.globalHeaders } : {}),
    ...nginxTuningOf(g),
    listen: o.listen,
    ...gatewayPortsOf(snap, o, d.listenerChains),
    ...(o.metrics ? { metrics: o.metrics } : {}),
    ...(o.loopId ? { loopId: o.loopId } : {}),
  };
  // OpenTelemetry: in nginx.conf only when a collector is named and some route traces (the ConfigMap, or an
  // Ingress's enable-opentelemetry "true").
  const tracing = g.otlpCollectorHost ? tracingSettingsOf(g, g.otelEnabled || anyRouteTraces(routes), new Set(o.ownAddresses ?? [])) : undefined;
  if (tracing) global.tracing = tracing;
  // Passthrough wildcards: the exact names under them that Portico serves itself stay terminated (an exact host wins).
  const terminated: string[] = [];
  const wildcards = [...passthrough.keys()].filter((h) => h.startsWith('*.'));
  if (wildcards.length) {
    for (const h of Object.keys(routes)) {
      if (h !== '_' && !h.startsWith('*.') && !passthrough.has(h) && wildcards.some((w) => wildcardCovers(w, h))) terminated.push(h);
    }
  }
  const def: TlsMaterial | null = snap.defaultCertificate;
  return {
    config: {
      structure: {
        global,
        profiles: [...profiles.values()].sort((a, b) => (a.name < b.name ? -1 : 1)),
        ...(o.sslPassthrough ? { passthrough: { hosts: [...passthrough.values()].sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0)), terminated: terminated.sort() } } : {}),
        ...gatewayStreamsOf(snap, o),
      },
      data: {
        routes,
        // In a deterministic order already (hosts sorted, claims by age, canaries sorted); not re-sorted, which
        // would cost more than everything else at 10k backends.
        backends,
        certificates,
        defaultCertificate: def && def.ok ? (memo?.certificates.get(def) ?? { cert: def.cert, key: def.privateKey, source: def.key, notAfter: def.notAfter }) : null,
        plugins,
        consumers,
        ...(Object.keys(clientAuth).length ? { clientAuth } : {}),
      },
    },
    status,
    events,
  };
}
