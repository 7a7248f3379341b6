// Client for the Lua configuration API on nginx's loopback status port. Every call reports the bytes it sent, so
// benchmarks can show that an endpoint change costs a payload proportional to what changed.
import type { DataDelta } from '../../translate/diff.ts';

export interface LiveConfig {
  checksum: string;
  backendsVersion: number;
  pid: number;
}

export class DynamicClient {
  private readonly base: string;
  bytesSent = 0;
  constructor(statusPort: number) {
    this.base = `http://127.0.0.1:${statusPort}`;
  }

  private async call<T>(method: string, path: string, body?: unknown, timeoutMs = 10_000): Promise<{ data: T; bytes: number }> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const res = await fetch(`${this.base}${path}`, {
      method,
      body: payload,
      headers: payload ? { 'Content-Type': 'application/json' } : {},
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`nginx status API ${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    const bytes = payload ? Buffer.byteLength(payload) : 0;
    this.bytesSent += bytes;
    return { data: JSON.parse(text) as T, bytes };
  }

  async getConfig(timeoutMs = 2_000): Promise<LiveConfig> {
    return (await this.call<LiveConfig>('GET', '/portico/config', undefined, timeoutMs)).data;
  }

  async getBackends(): Promise<Record<string, unknown>> {
    return (await this.call<Record<string, unknown>>('GET', '/portico/backends')).data;
  }

  async getCertificates(): Promise<Record<string, string>> {
    return (await this.call<Record<string, string>>('GET', '/portico/certificates')).data;
  }

  /** Sends one data delta; returns the bytes sent (0 when there was nothing to send). */
  async push(delta: DataDelta): Promise<number> {
    let bytes = 0;
    const b = delta.backends;
    if (Object.keys(b.upsert).length || b.remove.length) {
      bytes += (await this.call('POST', '/portico/backends', { upsert: b.upsert, remove: b.remove })).bytes;
    }
    const c = delta.certificates;
    if (Object.keys(c.upsert).length || c.remove.length || c.defaultChanged) {
      const body: Record<string, unknown> = { upsert: c.upsert, remove: c.remove };
      if (c.defaultChanged) body.default = c.default ?? null;
      bytes += (await this.call('POST', '/portico/certificates', body)).bytes;
    }
    return bytes;
  }
}
