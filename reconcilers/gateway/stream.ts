// TCP/UDP services in nginx: the model's entries (tcpudp.ts) with their Services' endpoints, as the stream section
// of the structure. Debian packages no stream-lua module, so the endpoints are rendered into `upstream` blocks and
// an endpoint change of a Service behind a TCP/UDP entry reloads nginx (HTTP routes and endpoints stay dynamic).
// Those reloads go through the structural lane, so its debounce coalesces bursts of endpoint changes into one.
// Endpoints are filtered exactly like HTTP ones (translate/addresses.ts: no loopback, link-local, unspecified or
// Portico's own addresses). A Service that is missing, has no such port or no allowed endpoint keeps its listener,
// which then accepts connections and closes them at once (UDP datagrams get no answer).
import { existsSync } from 'node:fs';
import type { EventRecorder } from '../../operator/events.ts';
import type { Logger } from '../../operator/log.ts';
import type { StreamSection, StreamServer, Structure } from '../config/types.ts';
import type { NormalizedService, NormalizedSlice } from '../model/types.ts';
import type { StreamEntry } from '../tcpudp.ts';
import { forbiddenAddressReason } from '../translate/addresses.ts';

/** Where Debian's libnginx-mod-stream puts the module. */
export const STREAM_MODULE = '/usr/lib/nginx/modules/ngx_stream_module.so';

export interface StreamProblem {
  /** The ConfigMap ("namespace/name") and key the problem is about. */
  configMap: string;
  key: string;
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

/**
 * The stream section for the model's entries (null when there are none, or the module is missing), and what to
 * report. Pure apart from checking that the module file exists.
 */
export function streamSection(model: StreamModelView, o: { own: ReadonlySet<string>; address: string; modulePath: string }): { section: StreamSection | null; problems: StreamProblem[] } {
  const entries = model.streamServices();
  const problems: StreamProblem[] = [];
  if (!entries.length) return { section: null, problems };
  if (!existsSync(o.modulePath)) {
    const seen = new Set<string>();
    for (const e of entries) {
      if (seen.has(e.configMap)) continue;
      seen.add(e.configMap);
      problems.push({
        configMap: e.configMap,
        key: e.key,
        reason: 'StreamModuleMissing',
        message: `TCP/UDP services are not served: nginx's stream module ${o.modulePath} is not installed (Debian package libnginx-mod-stream); HTTP keeps working`,
      });
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
  return { section: { modulePath: o.modulePath, servers }, problems };
}

/** The gateway's side: adds the stream section to a structure, reports problems once, knows which Services matter. */
export class StreamServices {
  private readonly model: StreamModelView;
  private readonly o: { own: ReadonlySet<string>; address: string; modulePath: string };
  private readonly events: EventRecorder;
  private readonly log: Logger;
  /** Problems reported last time (only new ones are reported again). */
  private reported = new Set<string>();

  constructor(model: StreamModelView, events: EventRecorder, log: Logger, o: { own: ReadonlySet<string>; address: string; modulePath?: string }) {
    this.model = model;
    this.events = events;
    this.log = log;
    this.o = { own: o.own, address: o.address, modulePath: o.modulePath ?? STREAM_MODULE };
  }

  /** Whether a Service's endpoints are rendered into nginx.conf (their change needs a reload). */
  uses(serviceKey: string): boolean {
    return this.model.streamServices().some((e) => `${e.namespace}/${e.service}` === serviceKey);
  }

  /** The structure with the stream section (the same object when there is none). */
  apply(structure: Structure): Structure {
    const { section, problems } = streamSection(this.model, this.o);
    const now = new Set<string>();
    for (const p of problems) {
      const id = `${p.configMap}\u0000${p.reason}\u0000${p.message}`;
      now.add(id);
      if (this.reported.has(id)) continue;
      this.log.warn('TCP/UDP service problem', { configMap: p.configMap, key: p.key, reason: p.reason, message: p.message });
      const [namespace, name] = p.configMap.split('/') as [string, string];
      this.events.event({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace, name } }, 'Warning', p.reason, 'Sync', p.message);
    }
    this.reported = now;
    return section ? { ...structure, stream: section } : structure;
  }
}
