// TCP/UDP services in nginx: the model's entries (tcpudp.ts) with their Services' endpoints, as the stream section
// of the structure. Debian packages no stream-lua module, so the endpoints are rendered into `upstream` blocks and
// an endpoint change of a Service behind a TCP/UDP entry reloads nginx (HTTP routes and endpoints stay dynamic).
// Those reloads go through the structural lane, so its debounce coalesces bursts of endpoint changes into one.
// Endpoints are filtered exactly like HTTP ones (values/addresses.ts: no loopback, link-local, unspecified or
// Portico's own addresses). A Service that is missing, has no such port or no allowed endpoint keeps its listener,
// which then accepts connections and closes them at once (UDP datagrams get no answer).
// TLS passthrough (--enable-ssl-passthrough) is resolved here the same way: the translation decides which host
// goes to which Service port (Structure.passthrough), and its endpoints become upstreams of the stream section that
// takes over the HTTPS port; a host whose Service, port or endpoints are missing has its connections closed.
import { existsSync } from 'node:fs';
import type { EventRecorder } from '../../operator/events.ts';
import type { Logger } from '../../operator/log.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import type { GatewayStream, GatewayStreamSection, PassthroughHosts, StreamPassthrough, StreamSection, StreamServer, Structure } from '../config/types.ts';
import type { NormalizedService, NormalizedSlice, StreamEntry } from '../model/types.ts';
import { forbiddenAddressReason } from '../values/addresses.ts';
import { backendServerNameSchema, caBundleProblem, servingCertificateSchema, zodMessage } from '../values/safe.ts';

/** Where Debian's libnginx-mod-stream puts the module. */
export const STREAM_MODULE = '/usr/lib/nginx/modules/ngx_stream_module.so';

export interface StreamProblem {
  /** The ConfigMap ("namespace/name") and key the problem is about (TCP/UDP services). */
  configMap?: string;
  key?: string;
  /** The Ingress ("namespace/name") the problem is about (TLS passthrough); neither: the controller's own. */
  ingress?: string;
  /** The Gateway API route ("TCPRoute/namespace/name", UDPRoute, TLSRoute) the problem is about. */
  route?: string;
  reason: string;
  message: string;
}

/** What the stream section reads from the model. */
export interface StreamModelView {
  streamServices(): readonly StreamEntry[];
  service(key: string): NormalizedService | undefined;
  slicesOf(serviceKey: string): readonly NormalizedSlice[];
}

/** Ready, not terminating, allowed endpoints of one Service port of the given protocol (sorted, deduplicated). */
export function streamEndpoints(slices: readonly NormalizedSlice[], portName: string, protocol: 'TCP' | 'UDP', own: ReadonlySet<string>): { endpoints: StreamServer['endpoints']; forbidden: string[] } {
  const seen = new Set<string>();
  const endpoints: StreamServer['endpoints'] = [];
  const forbidden = new Set<string>();
  for (const slice of slices) {
    const port = slice.ports.find((p) => p.name === portName && p.protocol === protocol);
    if (!port) continue;
    for (const e of slice.endpoints) {
      if (!e.ready || e.terminating) continue;
      const why = forbiddenAddressReason(e.address, own);
      if (why) {
        forbidden.add(`${e.address} (${why})`);
        continue;
      }
      const k = `${e.address} ${port.port}`;
      if (seen.has(k)) continue;
      seen.add(k);
      endpoints.push({ address: e.address, port: port.port });
    }
  }
  endpoints.sort((x, y) => (x.address < y.address ? -1 : x.address > y.address ? 1 : x.port - y.port));
  return { endpoints, forbidden: [...forbidden].sort() };
}

/** The TLS passthrough hosts the translation decided, and the HTTPS listener they take over. */
export interface PassthroughInput extends PassthroughHosts {
  /** The public HTTPS port (--https-port); the address is the stream section's (--listen-address). */
  port: number;
}

/**
 * The stream section for the model's entries and the passthrough hosts (null when there is neither, or the module
 * is missing), and what to report. Pure apart from checking that the module file exists.
 */
export function streamSection(model: StreamModelView, o: { own: ReadonlySet<string>; address: string; modulePath: string }, pt?: PassthroughInput, gw?: readonly GatewayStream[]): { section: StreamSection | null; problems: StreamProblem[] } {
  const entries = model.streamServices();
  const problems: StreamProblem[] = [];
  if (!entries.length && !pt && !gw?.length) return { section: null, problems };
  if (!existsSync(o.modulePath)) {
    const seen = new Set<string>();
    const missing = `nginx's stream module ${o.modulePath} is not installed (Debian package libnginx-mod-stream)`;
    for (const e of entries) {
      if (seen.has(e.configMap)) continue;
      seen.add(e.configMap);
      problems.push({
        configMap: e.configMap,
        key: e.key,
        reason: 'StreamModuleMissing',
        message: `TCP/UDP services are not served: ${missing}; HTTP keeps working`,
      });
    }
    if (pt) {
      const message = `TLS passthrough (--enable-ssl-passthrough) cannot work: ${missing}; Portico terminates TLS on the HTTPS port as without the flag, and HTTPS requests for passthrough hosts are answered 421`;
      const ingresses = [...new Set(pt.hosts.map((h) => h.source.replace(/^Ingress\//, '')))].sort();
      if (!ingresses.length) problems.push({ reason: 'StreamModuleMissing', message });
      for (const ingress of ingresses) problems.push({ ingress, reason: 'StreamModuleMissing', message });
    }
    for (const route of new Set(gw?.flatMap((s) => s.targets.map((t) => t.route)) ?? [])) {
      problems.push({ route, reason: 'StreamModuleMissing', message: `the route is not served: ${missing}` });
    }
    return { section: null, problems };
  }
  const servers: StreamServer[] = [];
  for (const e of entries) {
    const svcKey = `${e.namespace}/${e.service}`;
    const report = (reason: string, message: string) => problems.push({ configMap: e.configMap, key: e.key, reason, message: `${e.protocol} service ${e.key} (${svcKey}:${e.servicePort}): ${message}` });
    let endpoints: StreamServer['endpoints'] = [];
    const svc = model.service(svcKey);
    if (!svc) report('ServiceNotFound', 'the Service does not exist; the listener closes every connection');
    else if (svc.type === 'ExternalName') report('ExternalNameNotSupported', 'ExternalName Services are not supported for TCP/UDP services; the listener closes every connection');
    else {
      const sp = svc.ports.find((p) => p.protocol === e.protocol && (typeof e.servicePort === 'number' ? p.port === e.servicePort : p.name === e.servicePort));
      if (!sp) report('ServicePortNotFound', `the Service has no ${e.protocol} port ${e.servicePort}; the listener closes every connection`);
      else {
        const r = streamEndpoints(model.slicesOf(svcKey), sp.name, e.protocol, o.own);
        endpoints = r.endpoints;
        if (r.forbidden.length) report('ForbiddenEndpoint', `endpoint addresses refused: ${r.forbidden.join(', ')}`);
      }
    }
    servers.push({ udp: e.protocol === 'UDP', address: o.address, port: e.port, decodeProxy: e.decodeProxy, encodeProxy: e.encodeProxy, endpoints });
  }
  servers.sort((a, b) => Number(a.udp) - Number(b.udp) || a.port - b.port);
  const section: StreamSection = { modulePath: o.modulePath, servers };
  if (pt) section.passthrough = passthroughSection(model, o, pt, problems);
  if (gw?.length) section.gateway = gatewaySection(model, o, gw, problems);
  return { section, problems };
}

const canonicalEndpoints = (eps: StreamServer['endpoints']) => eps.map((e) => `${e.address} ${e.port}`).join(',');

/** The passthrough hosts with their endpoints: one upstream per set of endpoints, shared by the hosts that use it. */
function passthroughSection(model: StreamModelView, o: { own: ReadonlySet<string>; address: string }, pt: PassthroughInput, problems: StreamProblem[]): StreamPassthrough {
  const upstreams: StreamPassthrough['upstreams'] = [];
  /** Per Service port: its upstream (null: none) and what is wrong with it, worked out once for every host using it. */
  const byTarget = new Map<string, { up: number | null; issues: [string, string][] }>();
  const byEndpoints = new Map<string, number>();
  const hosts: StreamPassthrough['hosts'] = [];
  const closes = 'TLS connections for the host are closed';
  for (const h of [...pt.hosts].sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0))) {
    const svcKey = `${h.namespace}/${h.service}`;
    const target = `${svcKey}:${h.servicePort}`;
    let t = byTarget.get(target);
    if (!t) {
      const issues: [string, string][] = [];
      let endpoints: StreamServer['endpoints'] = [];
      const svc = model.service(svcKey);
      if (!svc) issues.push(['ServiceNotFound', `the Service does not exist; ${closes}`]);
      else if (svc.type === 'ExternalName') issues.push(['ExternalNameNotSupported', `ExternalName Services are not supported for TLS passthrough; ${closes}`]);
      else {
        const sp = svc.ports.find((p) => p.protocol === 'TCP' && (typeof h.servicePort === 'number' ? p.port === h.servicePort : p.name === h.servicePort));
        if (!sp) issues.push(['ServicePortNotFound', `the Service has no TCP port ${h.servicePort}; ${closes}`]);
        else {
          const r = streamEndpoints(model.slicesOf(svcKey), sp.name, 'TCP', o.own);
          endpoints = r.endpoints;
          if (r.forbidden.length) issues.push(['ForbiddenEndpoint', `endpoint addresses refused: ${r.forbidden.join(', ')}`]);
          if (!endpoints.length) issues.push(['NoEndpoints', `the Service has no ready endpoint Portico may connect to; ${closes}`]);
        }
      }
      // Two hosts naming one Service port (by number and by name) share its upstream.
      const key = canonicalEndpoints(endpoints);
      let up: number | null = null;
      if (endpoints.length) {
        up = byEndpoints.get(key) ?? upstreams.push({ endpoints }) - 1;
        byEndpoints.set(key, up);
      }
      t = { up, issues };
      byTarget.set(target, t);
    }
    const ingress = h.source.replace(/^Ingress\//, '');
    for (const [reason, message] of t.issues) problems.push({ ingress, reason, message: `ssl-passthrough for ${h.host} (service ${target}): ${message}` });
    hosts.push({ host: h.host, upstream: t.up });
  }
  return { address: o.address, port: pt.port, hosts, terminated: [...pt.terminated].sort(), upstreams };
}

const gcd = (a: number, b: number): number => (b ? gcd(b, a % b) : a);
const lcm = (a: number, b: number): number => (a / gcd(a, b)) * b;

/**
 * Gateway API's Layer-4 listeners with their endpoints. A backend's weight is shared by its endpoints (each gets
 * weight × L / n, L the least common multiple of the endpoint counts, kept ≤ 1000 by rounding); a backend that
 * cannot take traffic (missing, not permitted, no endpoint) keeps its share, which goes to a socket nothing listens
 * on, so that share of the connections fails as the spec asks instead of silently going elsewhere.
 *
 * A terminated TLS server name (a Terminate listener's) becomes a hop: a stream server on a unix socket that ends
 * TLS with the listener's certificate and proxies to the route's upstream (with TLS again under a BackendTLSPolicy).
 * Targets sharing certificate, backend TLS and upstream share a hop. The certificate, key and CA bundle are checked
 * here (servingCertificateSchema: PEM only, a pair OpenSSL loads), so a bad one closes that name's connections
 * with a Warning on its route and never reaches `nginx -t`, where it would fail the configuration of everyone.
 */
function gatewaySection(model: StreamModelView, o: { own: ReadonlySet<string>; address: string }, gw: readonly GatewayStream[], problems: StreamProblem[]): GatewayStreamSection {
  const upstreams: GatewayStreamSection['upstreams'] = [];
  const byKey = new Map<string, number>();
  const servers: GatewayStreamSection['servers'] = [];
  const hops: NonNullable<GatewayStreamSection['hops']> = [];
  const hopByKey = new Map<string, number>();
  for (const s of gw) {
    const protocol = s.protocol === 'UDP' ? 'UDP' : 'TCP';
    const targets: GatewayStreamSection['servers'][number]['targets'] = [];
    /** Per certificate index: the checked certificate, or why it cannot be served. */
    const certs = new Map<number, { cert: string; key: string } | string>();
    for (const t of s.targets) {
      let certificate: { cert: string; key: string } | null = null;
      let backendTls: { hostname: string; ca: string } | undefined;
      if (t.terminate !== undefined) {
        let c = certs.get(t.terminate);
        const src = s.certificates?.[t.terminate];
        if (c === undefined) {
          const r = servingCertificateSchema.safeParse(src ?? {});
          c = r.success ? { cert: r.data.cert, key: r.data.key } : zodMessage(r.error);
          certs.set(t.terminate, c);
        }
        if (typeof c === 'string') {
          problems.push({ route: t.route, reason: 'InvalidCertificate', message: `TLS for ${t.host} is not terminated: the certificate of Secret ${src?.source ?? '(missing)'} cannot be served (${c}); connections for ${t.host} are closed` });
          targets.push({ host: t.host, upstream: null });
          continue;
        }
        certificate = c;
        if (t.backendTls) {
          const name = backendServerNameSchema.safeParse(t.backendTls.hostname);
          const ca = caBundleProblem(t.backendTls.ca);
          if (!name.success || ca) {
            problems.push({ route: t.route, reason: 'BackendTLSPolicyNotUsable', message: `TLS for ${t.host}: BackendTLSPolicy ${t.backendTls.policy} cannot be applied (${!name.success ? zodMessage(name.error) : ca}); connections for ${t.host} are closed rather than sent without the TLS it asks for` });
            targets.push({ host: t.host, upstream: null });
            continue;
          }
          backendTls = { hostname: name.data, ca: t.backendTls.ca };
        }
      }
      const shares: { weight: number; endpoints: StreamServer['endpoints'] }[] = [];
      for (const b of t.backends) {
        const where = `backend ${b.namespace}/${b.service}:${b.port}`;
        if (b.problem) problems.push({ route: t.route, reason: b.problem.reason, message: b.problem.message });
        let endpoints: StreamServer['endpoints'] = [];
        if (b.ok) {
          const svc = model.service(`${b.namespace}/${b.service}`);
          const sp = svc?.ports.find((p) => p.protocol === protocol && p.port === b.port);
          if (!svc || svc.type === 'ExternalName') problems.push({ route: t.route, reason: 'BackendNotServed', message: `${where}: ${svc ? 'ExternalName Services are not served for TCP, UDP and TLS routes' : 'the Service does not exist'}; its share of the connections fails` });
          else if (!sp) problems.push({ route: t.route, reason: 'ServicePortNotFound', message: `${where}: the Service has no ${protocol} port ${b.port}; its share of the connections fails` });
          else {
            const r = streamEndpoints(model.slicesOf(`${b.namespace}/${b.service}`), sp.name, protocol, o.own);
            endpoints = r.endpoints;
            if (r.forbidden.length) problems.push({ route: t.route, reason: 'ForbiddenEndpoint', message: `${where}: endpoint addresses refused: ${r.forbidden.join(', ')}` });
          }
        }
        shares.push({ weight: b.weight, endpoints });
      }
      let l = 1;
      for (const sh of shares) if (sh.endpoints.length) l = Math.min(1000, lcm(l, sh.endpoints.length));
      const out: GatewayStreamSection['upstreams'][number] = { servers: [], failWeight: 0 };
      for (const sh of shares) {
        if (!sh.endpoints.length) out.failWeight += sh.weight * l;
        else for (const e of sh.endpoints) out.servers.push({ address: e.address, port: e.port, weight: Math.max(1, Math.round((sh.weight * l) / sh.endpoints.length)) });
      }
      const g = [...out.servers.map((x) => x.weight), ...(out.failWeight ? [out.failWeight] : [])].reduce(gcd, 0) || 1;
      for (const x of out.servers) x.weight /= g;
      out.failWeight /= g;
      let upstream: number | null = null;
      if (out.servers.length || out.failWeight) {
        const key = JSON.stringify(out);
        upstream = byKey.get(key) ?? upstreams.push(out) - 1;
        byKey.set(key, upstream);
      }
      if (certificate) {
        const hop = { port: s.port, certificate, ...(backendTls ? { backendTls } : {}), upstream, retry: upstream === null || !upstreams[upstream]!.failWeight };
        const key = JSON.stringify(hop);
        let i = hopByKey.get(key);
        if (i === undefined) {
          i = hops.push(hop) - 1;
          hopByKey.set(key, i);
        }
        targets.push({ host: t.host, upstream, hop: i });
      } else targets.push({ host: t.host, upstream });
    }
    // Retrying another endpoint when a connection fails is kept unless a share must fail (it would land elsewhere).
    // A terminated name's front connection goes to its hop (a local socket), which decides on retrying for itself.
    const retry = targets.every((t) => t.hop !== undefined || t.upstream === null || !upstreams[t.upstream]!.failWeight);
    servers.push({ port: s.port, udp: s.protocol === 'UDP', tls: s.protocol === 'TLS', retry, targets });
  }
  return { address: o.address, servers, upstreams, ...(hops.length ? { hops } : {}) };
}

/** The gateway's side: adds the stream section to a structure, reports problems once, knows which Services matter. */
export class StreamServices {
  private readonly model: StreamModelView;
  private readonly o: { own: ReadonlySet<string>; address: string; modulePath: string };
  private readonly events: EventRecorder;
  private readonly log: Logger;
  private readonly objectFor: (ref: string) => KubeObject | undefined;
  /** Problems reported last time (only new ones are reported again). */
  private reported = new Set<string>();
  /** Services behind the passthrough hosts of the last structure applied. */
  private passthroughServices = new Set<string>();
  /** Services behind the Gateway API TCP, UDP and TLS listeners of the last structure applied. */
  private gatewayServices = new Set<string>();

  constructor(model: StreamModelView, events: EventRecorder, log: Logger, o: { own: ReadonlySet<string>; address: string; modulePath?: string; objectFor?: (ref: string) => KubeObject | undefined }) {
    this.model = model;
    this.events = events;
    this.log = log;
    this.o = { own: o.own, address: o.address, modulePath: o.modulePath ?? STREAM_MODULE };
    this.objectFor = o.objectFor ?? (() => undefined);
  }

  /** Whether a Service's endpoints are rendered into nginx.conf (their change needs a reload). */
  uses(serviceKey: string): boolean {
    return this.passthroughServices.has(serviceKey) || this.gatewayServices.has(serviceKey) || this.model.streamServices().some((e) => `${e.namespace}/${e.service}` === serviceKey);
  }

  /** The structure with the stream section (the same object when there is none). */
  apply(structure: Structure): Structure {
    const pt = structure.passthrough;
    this.passthroughServices = new Set(pt?.hosts.map((h) => `${h.namespace}/${h.service}`) ?? []);
    const gw = structure.gatewayStreams;
    this.gatewayServices = new Set(gw?.flatMap((s) => s.targets.flatMap((t) => t.backends.map((b) => `${b.namespace}/${b.service}`))) ?? []);
    const { section, problems } = streamSection(this.model, this.o, pt ? { ...pt, port: structure.global.listen.httpsPort } : undefined, gw);
    const now = new Set<string>();
    for (const p of problems) {
      const about = p.route ?? (p.ingress ? `Ingress/${p.ingress}` : p.configMap ? `ConfigMap/${p.configMap}` : '');
      const id = `${about}\u0000${p.reason}\u0000${p.message}`;
      now.add(id);
      if (this.reported.has(id)) continue;
      if (p.route) {
        this.log.warn('Gateway API route problem', { route: p.route, reason: p.reason, message: p.message });
        const [kind, namespace, name] = p.route.split('/') as [string, string, string];
        const obj = this.objectFor(p.route) ?? { apiVersion: 'gateway.networking.k8s.io/v1', kind, metadata: { namespace, name } };
        this.events.event(obj, 'Warning', p.reason, 'Sync', p.message);
      } else if (p.ingress) {
        this.log.warn('TLS passthrough problem', { ingress: p.ingress, reason: p.reason, message: p.message });
        const [namespace, name] = p.ingress.split('/') as [string, string];
        const obj = this.objectFor(`Ingress/${p.ingress}`) ?? { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { namespace, name } };
        this.events.event(obj, 'Warning', p.reason, 'Sync', p.message);
      } else if (p.configMap) {
        this.log.warn('TCP/UDP service problem', { configMap: p.configMap, key: p.key, reason: p.reason, message: p.message });
        const [namespace, name] = p.configMap.split('/') as [string, string];
        this.events.event({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace, name } }, 'Warning', p.reason, 'Sync', p.message);
      } else this.log.error(p.message, { reason: p.reason });
    }
    this.reported = now;
    return section ? { ...structure, stream: section } : structure;
  }
}
