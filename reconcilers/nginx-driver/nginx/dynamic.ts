// Client for the Lua configuration API. nginx serves it only on a unix socket in a 0700 directory of the runtime
// dir (RuntimePaths.apiSocket), so nothing that reaches nginx over TCP — a tenant's backend pointing at loopback
// included — can talk to it. Every call reports the bytes it sent, so benchmarks can show that an endpoint change
// costs a payload proportional to what changed. Answers are parsed with zod.
import { createHash } from 'node:crypto';
import { Pool } from 'undici';
import { z } from 'zod';
import type { DataDelta } from '../../translate/diff.ts';
import type { Certificate, OcspResponder } from '../../config/types.ts';

const liveConfigSchema = z.object({
  checksum: z.string(),
  backendsVersion: z.number(),
  pid: z.number(),
  /** Random per shared-memory zone lifetime: a new value means nginx lost that zone's data (restart, resize). */
  epochs: z.object({ data: z.string(), certs: z.string() }),
  /** Writes refused because a zone was full (cumulative since nginx started; each one is also in nginx's log). */
  dictFailures: z.object({ data: z.number(), certs: z.number(), metrics: z.number().default(0) }),
  /** OpenTelemetry spans dropped (queue full, export failed) since nginx started (tracing.lua). */
  tracingDropped: z.number().default(0),
  /** Requests whose rate limit (policy redis) could not ask Redis, let through (open) or answered 503 (closed). */
  rateLimitStoreFailures: z.object({ open: z.number(), closed: z.number() }).default({ open: 0, closed: 0 }),
  /** Endpoints refused by the Lua side (loopback, link-local, unspecified, not an IP); cumulative. */
  rejectedEndpoints: z.number(),
});
export type LiveConfig = z.infer<typeof liveConfigSchema>;

const versionSchema = z.object({ version: z.number() });
const hostListSchema = z.union([z.array(z.string()), z.object({}).strict().transform(() => [] as string[])]);
/** POST /portico/certificates: the version, and what a full certificate zone could not store (the rest is applied). */
const certificatesAnswerSchema = versionSchema.extend({
  error: z.string().optional(),
  notStored: z.object({ hosts: hostListSchema, clientHosts: hostListSchema }).optional(),
});

/** What a push did: bytes sent, and the hosts whose certificate (or client CA) the Lua side could not store. */
export interface PushResult {
  bytes: number;
  notStored?: { hosts: string[]; clientHosts: string[]; error: string };
}
const recordSchema = z.record(z.string(), z.unknown());
// cjson encodes an empty table as {}; an empty listing may also come back as [].
const listingSchema = z.union([recordSchema, z.array(z.never()).transform(() => ({}))]);

/** Id under which Lua stores a certificate once, however many hosts use it: a fingerprint of its content. */
export function certificateId(c: Certificate): string {
  const h = createHash('sha256').update(c.cert).update('\0').update(c.key);
  // The OCSP responder is stored with the certificate: another responder (address) is another entry.
  if (c.ocsp) h.update('\0').update(JSON.stringify([c.ocsp.host, c.ocsp.address, c.ocsp.port, c.ocsp.path]));
  // So is a host's cipher list (ssl-ciphers): the same certificate with another list is another entry.
  if (c.ciphers) h.update('\0ciphers\0').update(c.ciphers);
  return h.digest('hex');
}

export interface CertificateBody {
  certificates: Record<string, { cert: string; key: string; source: string; ocsp?: OcspResponder; ciphers?: string }>;
  hosts: Record<string, string>;
  remove: string[];
  default?: string | null;
  /** Client-certificate CAs (ClientAuth), each once by id; hosts point at one, or at "-" (ask for nothing). */
  clientCas?: Record<string, { ca: string; depth: number; source: string; strict?: true }>;
  clientHosts?: Record<string, string>;
  clientRemove?: string[];
}

/** The wire form of a certificate delta: each distinct certificate once, hosts pointing at it by id. */
export function certificateBody(c: DataDelta['certificates'], clientAuth?: DataDelta['clientAuth']): CertificateBody {
  const body: CertificateBody = { certificates: {}, hosts: {}, remove: c.remove };
  const add = (x: Certificate): string => {
    const id = certificateId(x);
    body.certificates[id] ??= { cert: x.cert, key: x.key, source: x.source, ...(x.ocsp ? { ocsp: x.ocsp } : {}), ...(x.ciphers ? { ciphers: x.ciphers } : {}) };
    return id;
  };
  for (const [host, x] of Object.entries(c.upsert)) body.hosts[host] = add(x);
  if (c.defaultChanged) body.default = c.default ? add(c.default) : null;
  if (clientAuth && (Object.keys(clientAuth.upsert).length || clientAuth.remove.length)) {
    const cas: NonNullable<CertificateBody['clientCas']> = {};
    const hosts: Record<string, string> = {};
    for (const [host, a] of Object.entries(clientAuth.upsert)) {
      if ('off' in a) hosts[host] = '-';
      else {
        cas[a.id] ??= { ca: a.ca, depth: a.depth, source: a.source, ...(a.strict ? { strict: true as const } : {}) };
        hosts[host] = a.id;
      }
    }
    body.clientCas = cas;
    body.clientHosts = hosts;
    body.clientRemove = clientAuth.remove;
  }
  return body;
}

export class DynamicClient {
  private socket = '';
  private pool: Pool | undefined;
  bytesSent = 0;

  /** socketPath: RuntimePaths.apiSocket. NginxProcess also points the client at its own runtime's socket. */
  constructor(socketPath?: string) {
    if (typeof socketPath === 'string') this.socket = socketPath;
  }

  get socketPath(): string {
    return this.socket;
  }

  /** Points the client at a socket (NginxProcess does this with its runtime's apiSocket). */
  attach(socketPath: string): void {
    if (socketPath === this.socket) return;
    void this.pool?.close();
    this.pool = undefined;
    this.socket = socketPath;
  }

  private connection(): Pool {
    if (!this.socket) throw new Error('nginx configuration API: no socket path (the client is not attached to an nginx)');
    this.pool ??= new Pool('http://portico.invalid', { socketPath: this.socket, connections: 2, keepAliveTimeout: 10_000 });
    return this.pool;
  }

  private async call<T>(schema: z.ZodType<T>, method: 'GET' | 'POST', path: string, body?: unknown, timeoutMs = 10_000): Promise<{ data: T; bytes: number }> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const res = await this.connection().request({
      path,
      method,
      body: payload,
      headers: payload ? { 'content-type': 'application/json' } : {},
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.body.text();
    if (res.statusCode < 200 || res.statusCode >= 300) throw new Error(`nginx configuration API ${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`);
    const bytes = payload ? Buffer.byteLength(payload) : 0;
    this.bytesSent += bytes;
    return { data: schema.parse(JSON.parse(text)), bytes };
  }

  /** A plain-text answer of the configuration socket (per-request metric totals, nginx's stub_status). */
  async getText(path: '/portico/metrics' | '/nginx_status', timeoutMs = 5_000): Promise<string> {
    const res = await this.connection().request({ path, method: 'GET', signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`nginx configuration API GET ${path}: ${res.statusCode} ${text.slice(0, 300)}`);
    return text;
  }

  /**
   * A plain-text answer as it arrives, in pieces (the per-request metrics dump: MBs at thousands of Ingresses, never
   * held whole). The timeout covers the whole answer.
   */
  async *streamText(path: '/portico/metrics', timeoutMs = 10_000): AsyncGenerator<string> {
    const res = await this.connection().request({ path, method: 'GET', signal: AbortSignal.timeout(timeoutMs) });
    if (res.statusCode !== 200) {
      const text = await res.body.text();
      throw new Error(`nginx configuration API GET ${path}: ${res.statusCode} ${text.slice(0, 300)}`);
    }
    res.body.setEncoding('utf8');
    for await (const piece of res.body) yield piece as string;
  }

  async getConfig(timeoutMs = 2_000): Promise<LiveConfig> {
    return (await this.call(liveConfigSchema, 'GET', '/portico/config', undefined, timeoutMs)).data;
  }

  async getBackends(): Promise<Record<string, unknown>> {
    return (await this.call(listingSchema, 'GET', '/portico/backends')).data;
  }

  /** host → Secret ("namespace/name") of the certificate it is served. */
  async getCertificates(): Promise<Record<string, unknown>> {
    return (await this.call(listingSchema, 'GET', '/portico/certificates')).data;
  }

  /** host → its routes as the Lua side holds them. */
  async getRoutes(): Promise<Record<string, unknown>> {
    return (await this.call(listingSchema, 'GET', '/portico/routes')).data;
  }

  /**
   * Sends one data delta; returns the bytes sent (0 when there was nothing to send). Certificates go first, so a
   * new TLS host has its certificate before its routes exist; backends and routes go together, published by Lua
   * under one version, so no worker sees a route before its backend.
   */
  async push(delta: DataDelta): Promise<number> {
    return (await this.pushData(delta)).bytes;
  }

  /**
   * push, also telling which certificates the Lua side could not store (its zone is full: it refuses them and keeps
   * every other tenant's). The rest of the delta — routes, backends — is sent anyway: one tenant's certificates
   * filling the zone must not hold back everybody's routing changes.
   */
  async pushData(delta: DataDelta): Promise<PushResult> {
    let bytes = 0;
    let notStored: PushResult['notStored'];
    const c = delta.certificates;
    const ca = delta.clientAuth;
    if (Object.keys(c.upsert).length || c.remove.length || c.defaultChanged || Object.keys(ca.upsert).length || ca.remove.length) {
      const r = await this.call(certificatesAnswerSchema, 'POST', '/portico/certificates', certificateBody(c, ca));
      bytes += r.bytes;
      if (r.data.notStored || r.data.error) notStored = { hosts: r.data.notStored?.hosts ?? [], clientHosts: r.data.notStored?.clientHosts ?? [], error: r.data.error ?? '' };
    }
    const b = delta.backends;
    const r = delta.routes;
    const body: { backends?: unknown; routes?: unknown; plugins?: unknown; consumers?: unknown } = {};
    if (Object.keys(b.upsert).length || b.remove.length) body.backends = { upsert: b.upsert, remove: b.remove };
    if (Object.keys(r.upsert).length || r.remove.length) body.routes = { upsert: r.upsert, remove: r.remove };
    // Plugins and consumers travel with the routes naming them: one version, so no route sees a missing plugin.
    const p = delta.plugins;
    const k = delta.consumers;
    if (Object.keys(p.upsert).length || p.remove.length) body.plugins = { upsert: p.upsert, remove: p.remove };
    if (Object.keys(k.upsert).length || k.remove.length) body.consumers = { upsert: k.upsert, remove: k.remove };
    if (body.backends || body.routes || body.plugins || body.consumers) bytes += (await this.call(versionSchema, 'POST', '/portico/data', body)).bytes;
    return notStored ? { bytes, notStored } : { bytes };
  }

  async close(): Promise<void> {
    await this.pool?.close();
    this.pool = undefined;
  }
}
