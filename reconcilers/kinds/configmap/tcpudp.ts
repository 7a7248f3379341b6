// TCP and UDP services (--tcp-services-configmap / --udp-services-configmap), in ingress-nginx's format: every key
// of the ConfigMap is a port Portico listens on, every value names the Service behind it:
//   "<port>": "<namespace>/<service>:<service port number or name>[:PROXY][:PROXY]"
// The first PROXY makes the listener expect a PROXY protocol header from the client (decode), the second sends one
// to the backend (encode); an empty field ("ns/svc:5432::PROXY") leaves that side off, as in ingress-nginx. Both
// are TCP only: on a UDP entry they are ignored with a Warning (ingress-nginx ignores them silently).
// Each entry is checked on its own by a strict schema: a bad one gets a Warning Event on the ConfigMap naming its
// key and is left out; every other entry keeps working. The normalized entries go into the model; the gateway
// turns them into nginx's stream section (see nginx-driver/stream.ts).
import { z } from 'zod';
import type { Reconciler, ReconcileContext } from '../../../operator/controller.ts';
import type { EventRecorder } from '../../../operator/events.ts';
import type { Informer } from '../../../operator/informer.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { Model } from '../../model/model.ts';
import type { StreamEntry, StreamProtocol } from '../../model/types.ts';

export interface StreamParseResult {
  entries: StreamEntry[];
  /** Entries left out, by key. */
  errors: { key: string; message: string }[];
  /** Entries kept, with something the user should know (PROXY on UDP). */
  warnings: { key: string; message: string }[];
}

/** DNS-1123 label (namespaces, Service names). */
const LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** A Service port name: the API server checks it as a DNS-1123 label (digits alone allowed; a number is read as a port first). */
const PORT_NAME = LABEL;
const PORT_NUMBER = /^[1-9][0-9]{0,4}$/;

const portNumber = (what: string) =>
  z
    .string()
    .regex(PORT_NUMBER, `${what} must be a port number 1-65535`)
    .transform(Number)
    .pipe(z.number().int().min(1, `${what} must be 1-65535`).max(65535, `${what} must be 1-65535`));

/** The ConfigMap key: a port, not one of Portico's own. */
export function streamKeySchema(reserved: ReadonlySet<number>) {
  return portNumber('the key (the port to listen on)').refine((p) => !reserved.has(p), {
    message: "the port is one of Portico's own listeners (HTTP, HTTPS, status, health or webhook port)",
  });
}

/** The value: namespace/service:port[:PROXY][:PROXY], nothing else (no spaces, no other characters). */
export const streamValueSchema = z
  .string()
  .max(200, 'value longer than 200 characters')
  .transform((v, ctx) => {
    const fields = v.split(':');
    const fail = (message: string) => {
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    };
    if (fields.length < 2 || fields.length > 4) return fail('expected <namespace>/<service>:<port>[:PROXY][:PROXY]');
    const [ref, port, decode = '', encode = ''] = fields as [string, string, string?, string?];
    const slash = ref.split('/');
    if (slash.length !== 2) return fail('expected <namespace>/<service> before the first ":"');
    const [namespace, service] = slash as [string, string];
    if (!LABEL.test(namespace)) return fail(`namespace ${JSON.stringify(namespace)} is not a DNS-1123 label`);
    if (!LABEL.test(service)) return fail(`service ${JSON.stringify(service)} is not a DNS-1123 label`);
    let servicePort: number | string;
    if (PORT_NUMBER.test(port)) {
      servicePort = Number(port);
      if (servicePort > 65535) return fail('the service port must be 1-65535');
    } else if (PORT_NAME.test(port) && !/^\d+$/.test(port)) servicePort = port; // digits alone are a (bad) number
    else return fail(`service port ${JSON.stringify(port)} is neither a port number nor a port name`);
    for (const f of [decode, encode]) if (f !== '' && f.toUpperCase() !== 'PROXY') return fail(`${JSON.stringify(f)} is not "PROXY" (or empty)`);
    return { namespace, service, servicePort, decodeProxy: decode !== '', encodeProxy: encode !== '' };
  });

/** Parses one ConfigMap's data. Each entry stands on its own: a bad one never affects the others. */
export function parseStreamServices(protocol: StreamProtocol, configMap: string, data: Record<string, string> | undefined, reserved: ReadonlySet<number>): StreamParseResult {
  const out: StreamParseResult = { entries: [], errors: [], warnings: [] };
  const keySchema = streamKeySchema(reserved);
  const show = (k: string) => JSON.stringify(k.length > 40 ? `${k.slice(0, 40)}...` : k);
  for (const key of Object.keys(data ?? {}).sort()) {
    const value = (data ?? {})[key];
    const k = keySchema.safeParse(key);
    if (!k.success) {
      out.errors.push({ key, message: `${protocol} service ${show(key)} left out: ${k.error.issues[0]?.message ?? 'invalid key'}` });
      continue;
    }
    const v = streamValueSchema.safeParse(value);
    if (!v.success) {
      out.errors.push({ key, message: `${protocol} service ${show(key)} left out: ${v.error.issues[0]?.message ?? 'invalid value'}` });
      continue;
    }
    let { decodeProxy, encodeProxy } = v.data;
    if (protocol === 'UDP' && (decodeProxy || encodeProxy)) {
      out.warnings.push({ key, message: `UDP service ${show(key)}: PROXY protocol applies to TCP only and is ignored` });
      decodeProxy = false;
      encodeProxy = false;
    }
    out.entries.push({ protocol, port: k.data, namespace: v.data.namespace, service: v.data.service, servicePort: v.data.servicePort, decodeProxy, encodeProxy, configMap, key });
  }
  return out;
}

type ConfigMapObject = KubeObject & { data?: Record<string, string> };

/** Watches one of the two ConfigMaps and writes its normalized entries into the model. */
export class TcpUdpReconciler implements Reconciler {
  private readonly protocol: StreamProtocol;
  private readonly informer: Informer<ConfigMapObject>;
  private readonly model: Model;
  private readonly events: EventRecorder;
  private readonly key: string;
  private readonly reserved: ReadonlySet<number>;
  constructor(o: { protocol: StreamProtocol; informer: Informer<ConfigMapObject>; model: Model; events: EventRecorder; key: string; reservedPorts: Iterable<number> }) {
    this.protocol = o.protocol;
    this.informer = o.informer;
    this.model = o.model;
    this.events = o.events;
    this.key = o.key;
    this.reserved = new Set(o.reservedPorts);
  }
  async reconcile(_ctx: ReconcileContext, key: string): Promise<void> {
    if (key !== this.key) return;
    const obj = this.informer.store.get(key);
    if (!obj) {
      this.model.setStreamServices(this.protocol, []);
      return;
    }
    const r = parseStreamServices(this.protocol, key, obj.data, this.reserved);
    const ref = { ...obj, apiVersion: 'v1', kind: 'ConfigMap' };
    for (const e of r.errors) this.events.event(ref, 'Warning', 'InvalidServiceEntry', 'Validating', e.message);
    for (const w of r.warnings) this.events.event(ref, 'Warning', 'IgnoredProxyProtocol', 'Validating', w.message);
    this.model.setStreamServices(this.protocol, r.entries);
  }
}

/** Portico's own ports, which no TCP/UDP entry may take. */
export function reservedPorts(cfg: { 'http-port': number; 'https-port': number; 'status-port': number; 'health-addr': { port: number }; 'webhook-port': number }): number[] {
  return [cfg['http-port'], cfg['https-port'], cfg['status-port'], cfg['health-addr'].port, ...(cfg['webhook-port'] > 0 ? [cfg['webhook-port']] : [])];
}
