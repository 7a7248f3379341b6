// A small Kubernetes REST client on undici, authenticated by Credentials (credentials.ts: Portico's own reading of
// the pod's ServiceAccount and of plain kubeconfigs; client-node's KubeConfig for the rest, loaded only then).
// We use raw paths instead of the generated API classes because the framework is generic over kinds, needs the
// HTTP status of every failure (409 conflicts, 410 Gone, 403 RBAC denials) and streams watches itself.
import { Agent, fetch, type Dispatcher } from 'undici';
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import type { Metrics } from '../metrics.ts';
import { TokenBucket, type TokenBucketOptions } from './ratelimit.ts';
import { sleep } from '../backoff.ts';
import type { Credentials } from './credentials.ts';

export class ApiError extends Error {
  readonly status: number;
  readonly reason: string;
  readonly method: string;
  readonly path: string;
  constructor(method: string, path: string, status: number, reason: string, message: string) {
    super(`${method} ${path}: ${status} ${reason}: ${message}`);
    this.name = 'ApiError';
    this.status = status;
    this.reason = reason;
    this.method = method;
    this.path = path;
  }
}

export const isNotFound = (e: unknown): boolean => e instanceof ApiError && e.status === 404;
export const isConflict = (e: unknown): boolean => e instanceof ApiError && e.status === 409;
export const isAlreadyExists = (e: unknown): boolean =>
  e instanceof ApiError && e.status === 409 && e.reason === 'AlreadyExists';
export const isGone = (e: unknown): boolean => e instanceof ApiError && e.status === 410;
export const isForbidden = (e: unknown): boolean => e instanceof ApiError && e.status === 403;

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Defaults to application/json; use application/merge-patch+json etc. for PATCH. */
  contentType?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Retries of a 429 Too Many Requests (default 5). */
  maxRetries?: number;
}

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: unknown;
}

/**
 * Client-side rate limit applied to every request except watches (which are long-running: one request per
 * connection, and their reconnects already back off with jitter). 20 QPS / burst 30 are controller-runtime's
 * defaults: client-go's 5/10 predate API Priority and Fairness and would make a 10k-object start-up (status
 * writes, Secret reads) crawl, while 20/30 still bounds what one replica can do to a shared API server.
 */
export const DEFAULT_KUBE_API_RATE: TokenBucketOptions = { qps: 20, burst: 30 };

export interface KubeClientOptions {
  /** Token bucket for requests; false disables it (test harnesses that seed thousands of objects). */
  rateLimit?: TokenBucketOptions | false;
  metrics?: Metrics;
  /** Clock for the token bucket (ms); tests pass Date.now so mock timers drive it. */
  now?: () => number;
}

/** How often the TLS material (CA, client certificate) is re-read to notice a rotation. */
const TLS_RECHECK_MS = 60_000;

/** State shared by a client and the clients derived from it with withRateLimit(): one connection pool, one record. */
interface Shared {
  calls: Set<string>;
  agent?: { key: string; dispatcher: Agent };
  tlsCheckedAt?: number;
  tlsRefresh?: Promise<void>;
  metrics?: Metrics;
}

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

export class KubeClient {
  readonly credentials: Credentials;
  readonly server: string;
  /** Distinct RBAC (verb, group, resource) triples this client has used, as "verb group/resource". */
  readonly calls: Set<string>;
  /** undefined when requests are not rate limited. */
  readonly limiter: TokenBucket | undefined;
  private readonly shared: Shared;
  private readonly now: (() => number) | undefined;

  constructor(credentials: Credentials, o: KubeClientOptions = {}, shared?: Shared) {
    this.credentials = credentials;
    this.server = credentials.server.replace(/\/+$/, '');
    this.shared = shared ?? { calls: new Set(), metrics: o.metrics };
    if (o.metrics) this.shared.metrics = o.metrics;
    this.calls = this.shared.calls;
    this.now = o.now;
    const rate = o.rateLimit ?? DEFAULT_KUBE_API_RATE;
    this.limiter = rate === false ? undefined : new TokenBucket(rate, o.now);
  }

  /**
   * A client with the same credentials, connection pool and metrics but its own token bucket (or none), as
   * client-go gives each consumer its own rest.Config copy: leader election and event writes must never queue
   * behind a burst of status writes, and vice versa.
   */
  withRateLimit(rateLimit: TokenBucketOptions | false): KubeClient {
    return new KubeClient(this.credentials, { rateLimit, ...(this.now ? { now: this.now } : {}) }, this.shared);
  }

  /** Attaches metrics after construction (the process creates its client before its registry). */
  instrument(metrics: Metrics): void {
    this.shared.metrics = metrics;
  }

  private async prepare(method: string, path: string, query: RequestOptions['query']) {
    const url = new URL(this.server + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    if (!METHODS.has(method)) throw new Error(`unsupported method ${method}`);
    // Per request, so that rotated tokens (projected service-account tokens, exec plugins) are picked up.
    const headers = await this.credentials.headers();
    this.record(method, url);
    return { url, headers, dispatcher: await this.dispatcher(url, method) };
  }

  /**
   * client-node builds a new undici Agent for every request, so every request would open (and leave open for
   * the keep-alive period) its own TCP + TLS connection: thousands of handshakes against the API server during
   * a start-up. This client keeps one Agent per TLS identity and replaces it only when the CA or client certificate
   * changes. Proxied clusters keep client-node's own dispatcher.
   */
  private async dispatcher(url: URL, method: string): Promise<Dispatcher | undefined> {
    if (this.credentials.dispatcher) return this.credentials.dispatcher(url.toString(), method);
    const s = this.shared;
    const t = performance.now();
    if (s.tlsCheckedAt === undefined || t - s.tlsCheckedAt > TLS_RECHECK_MS) {
      s.tlsRefresh ??= this.refreshAgent().finally(() => {
        s.tlsCheckedAt = performance.now();
        s.tlsRefresh = undefined;
      });
      await s.tlsRefresh;
    }
    return s.agent?.dispatcher;
  }

  private async refreshAgent(): Promise<void> {
    const tls = await this.credentials.tls();
    if (!tls || !Object.keys(tls).length) {
      // Plain HTTP (or no TLS settings at all): undici's global dispatcher already pools connections.
      this.replaceAgent(undefined);
      return;
    }
    // undici defaults to a 60 s keep-alive probe delay, which can race a cloud load balancer's idle timeout:
    // 30 s as client-go.
    const connect = { ...tls, keepAlive: true, keepAliveInitialDelay: 30_000 };
    const key = tlsFingerprint(connect);
    if (this.shared.agent?.key === key) return;
    this.replaceAgent({ key, dispatcher: new Agent({ connect }) });
  }

  private replaceAgent(next: Shared['agent']): void {
    const old = this.shared.agent;
    this.shared.agent = next;
    // close() lets requests and watches in flight on the old pool finish.
    if (old) void old.dispatcher.close().catch(() => undefined);
  }

  private record(method: string, url: URL): void {
    const parts = url.pathname.split('/').filter(Boolean);
    // /api/v1/... or /apis/group/version/...
    let rest: string[];
    let group: string;
    if (parts[0] === 'api') {
      group = '';
      rest = parts.slice(2);
    } else if (parts[0] === 'apis') {
      group = parts[1] ?? '';
      rest = parts.slice(3);
    } else return;
    if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
    const resource = rest[0];
    if (!resource) return;
    const hasName = rest.length >= 2;
    const sub = rest[2];
    const isWatch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
    const verb =
      method === 'GET'
        ? isWatch
          ? 'watch'
          : hasName
            ? 'get'
            : 'list'
        : method === 'POST'
          ? 'create'
          : method === 'PUT'
            ? 'update'
            : method === 'PATCH'
              ? 'patch'
              : 'delete';
    this.calls.add(`${verb} ${group}/${resource}${sub ? `/${sub}` : ''}`);
  }

  /**
   * Sends one request; resolves with the decoded JSON body, rejects with ApiError on a non-2xx status. Waits for
   * the rate limiter first (abortable through opts.signal); the timeout covers each HTTP exchange only.
   * A 429 (API Priority and Fairness or max-in-flight shedding load: the request was not processed) is retried
   * after the server's Retry-After, as client-go does, up to `maxRetries` times, each retry taking a token again.
   */
  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const maxRetries = opts.maxRetries ?? 5;
    for (let attempt = 0; ; attempt++) {
      if (this.limiter) {
        const waited = await this.limiter.wait(opts.signal);
        this.shared.metrics?.kubeRateLimiterWait.observe({ method }, waited / 1000);
      }
      const { url, headers, dispatcher } = await this.prepare(method, path, opts.query);
      const signals: AbortSignal[] = [AbortSignal.timeout(opts.timeoutMs ?? 30_000)];
      if (opts.signal) signals.push(opts.signal);
      const hdrs: Record<string, string> = { ...headers, Accept: 'application/json' };
      let body: string | undefined;
      if (opts.body !== undefined) {
        body = JSON.stringify(opts.body);
        hdrs['Content-Type'] = opts.contentType ?? 'application/json';
      }
      let res: Awaited<ReturnType<typeof fetch>>;
      try {
        res = await fetch(url, {
          method,
          headers: hdrs,
          body,
          signal: AbortSignal.any(signals),
          ...(dispatcher ? { dispatcher } : {}),
        });
      } catch (e) {
        this.shared.metrics?.kubeRequests.inc({ method, code: 'error' });
        // A pooled connection the server closed meanwhile (an API server restart: HTTP/2 GOAWAY, or a reset
        // keep-alive socket) fails the request before it was processed: retry once on a fresh connection. Only
        // idempotent methods are retried on a plain reset; GOAWAY means the server did not take the stream at all.
        if (attempt === 0 && !opts.signal?.aborted && isStaleConnection(e, method)) continue;
        throw e;
      }
      this.shared.metrics?.kubeRequests.inc({ method, code: String(res.status) });
      const text = await res.text();
      if (res.status === 429 && attempt < maxRetries) {
        await sleep(retryAfterMs(res.headers.get('retry-after')), opts.signal);
        if (opts.signal?.aborted) throw opts.signal.reason;
        continue;
      }
      if (res.status < 200 || res.status >= 300) throw toApiError(method, url.pathname, res.status, text);
      return (text ? JSON.parse(text) : undefined) as T;
    }
  }

  /**
   * Opens a watch and yields its events. The iterator ends when the server closes the stream; it throws ApiError
   * when the server refuses the watch (including 410 Gone). `onActivity` is called for every line received, for
   * stall detection.
   */
  async *watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    signal: AbortSignal,
    onActivity?: () => void,
  ): AsyncGenerator<WatchEvent> {
    const { url, headers, dispatcher } = await this.prepare('GET', path, { ...query, watch: 'true' });
    const res = await fetch(url, {
      method: 'GET',
      headers: { ...headers, Accept: 'application/json' },
      signal,
      ...(dispatcher ? { dispatcher } : {}),
    });
    this.shared.metrics?.kubeRequests.inc({ method: 'WATCH', code: String(res.status) });
    if (res.status !== 200 || !res.body) {
      const text = await res.text();
      throw toApiError('WATCH', url.pathname, res.status, text);
    }
    const body = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream);
    // Errors (including the AbortError of our own abort) surface through the line iterator below; without this
    // listener a late error on an already-abandoned stream would be an uncaught exception.
    body.on('error', () => undefined);
    const lines = createInterface({ input: body, crlfDelay: Infinity });
    try {
      for await (const line of lines) {
        onActivity?.();
        if (!line.trim()) continue;
        yield JSON.parse(line) as WatchEvent;
      }
    } finally {
      lines.close();
      body.destroy();
    }
  }
}

/** The wait a 429's Retry-After asks for (seconds), bounded to 1 ms .. 10 s; 1 s when absent or unreadable. */
export function retryAfterMs(header: string | null): number {
  const secs = header === null ? Number.NaN : Number(header);
  if (!Number.isFinite(secs) || secs < 0) return 1_000;
  return Math.min(10_000, Math.max(1, secs * 1000));
}

/** A stable digest of the TLS settings of a connection pool, to notice a rotated CA or client certificate. */
function tlsFingerprint(connect: object): string {
  const h = createHash('sha256');
  for (const [k, v] of Object.entries(connect).sort(([a], [b]) => (a < b ? -1 : 1))) {
    h.update(k);
    h.update('\u0000');
    const parts: unknown[] = Array.isArray(v) ? v : [v];
    for (const p of parts) {
      if (Buffer.isBuffer(p) || typeof p === 'string') h.update(p);
      else h.update(JSON.stringify(p) ?? 'undefined');
      h.update('\u0001');
    }
  }
  return h.digest('hex');
}

function toApiError(method: string, path: string, status: number, text: string): ApiError {
  let reason = 'Unknown';
  let message = text.slice(0, 500);
  try {
    const s = JSON.parse(text) as { reason?: string; message?: string };
    if (s.reason) reason = s.reason;
    if (s.message) message = s.message;
  } catch {
    /* not a Status object */
  }
  return new ApiError(method, path, status, reason, message);
}

/** Loads a kubeconfig: an explicit file, else in-cluster when running in a pod, else the default locations. */
/**
 * The kubeconfig: the file, else in-cluster, else $KUBECONFIG / ~/.kube/config. With `server` (ingress-nginx's
 * --apiserver-host) the current cluster's server is replaced (and its CA with `caFile`); with `server` and no file,
 * a bare cluster at that URL, without credentials, is used (as client-go's BuildConfigFromFlags does).
 */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE']);

/** True when a failed fetch never reached the server's handler, so sending it again is safe. */
export function isStaleConnection(e: unknown, method: string): boolean {
  if (!(e instanceof Error) || e.name === 'AbortError' || e.name === 'TimeoutError') return false;
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code ?? '';
  const msg = `${e.message} ${cause?.message ?? ''}`;
  if (/GOAWAY/.test(msg)) return true;
  return IDEMPOTENT.has(method) && ['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE', 'UND_ERR_CLOSED'].includes(code);
}
