// A small Kubernetes REST client on top of @kubernetes/client-node's KubeConfig (authentication, TLS) and undici.
// We use raw paths instead of the generated API classes because the framework is generic over kinds, needs the
// HTTP status of every failure (409 conflicts, 410 Gone, 403 RBAC denials) and streams watches itself.
import { HttpMethod, KubeConfig, RequestContext } from '@kubernetes/client-node';
import { fetch, type Dispatcher } from 'undici';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { existsSync } from 'node:fs';

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
}

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: unknown;
}

/** One API call as RBAC sees it: verb and group/resource. Recorded so tests can compare with the ClusterRole. */
export interface ApiCall {
  verb: string;
  group: string;
  resource: string;
}

const METHODS: Record<string, HttpMethod> = {
  GET: HttpMethod.GET,
  POST: HttpMethod.POST,
  PUT: HttpMethod.PUT,
  PATCH: HttpMethod.PATCH,
  DELETE: HttpMethod.DELETE,
};

export class KubeClient {
  readonly kubeConfig: KubeConfig;
  readonly server: string;
  /** Distinct RBAC (verb, group, resource) triples this client has used, as "verb group/resource". */
  readonly calls = new Set<string>();

  constructor(kc: KubeConfig) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    this.kubeConfig = kc;
    this.server = cluster.server.replace(/\/+$/, '');
  }

  private async prepare(method: string, path: string, query: RequestOptions['query']) {
    const url = new URL(this.server + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const m = METHODS[method];
    if (m === undefined) throw new Error(`unsupported method ${method}`);
    const ctx = new RequestContext(url.toString(), m);
    await this.kubeConfig.applySecurityAuthentication(ctx);
    this.record(method, url);
    return { url, headers: ctx.getHeaders(), dispatcher: ctx.getDispatcher() as Dispatcher | undefined };
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

  /** Sends one request; resolves with the decoded JSON body, rejects with ApiError on a non-2xx status. */
  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const { url, headers, dispatcher } = await this.prepare(method, path, opts.query);
    const signals: AbortSignal[] = [AbortSignal.timeout(opts.timeoutMs ?? 30_000)];
    if (opts.signal) signals.push(opts.signal);
    const hdrs: Record<string, string> = { ...headers, Accept: 'application/json' };
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      hdrs['Content-Type'] = opts.contentType ?? 'application/json';
    }
    const res = await fetch(url, {
      method,
      headers: hdrs,
      body,
      signal: AbortSignal.any(signals),
      ...(dispatcher ? { dispatcher } : {}),
    });
    const text = await res.text();
    if (res.status < 200 || res.status >= 300) throw toApiError(method, url.pathname, res.status, text);
    return (text ? JSON.parse(text) : undefined) as T;
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
export function loadKubeConfig(file?: string): KubeConfig {
  const kc = new KubeConfig();
  if (file) kc.loadFromFile(file);
  else if (process.env.KUBERNETES_SERVICE_HOST) kc.loadFromCluster();
  else {
    // loadFromDefault silently falls back to http://localhost:8080 when it finds nothing; refuse instead.
    const candidates = (process.env.KUBECONFIG ?? '').split(':').filter(Boolean);
    if (process.env.HOME) candidates.push(`${process.env.HOME}/.kube/config`);
    if (!candidates.some((f) => existsSync(f))) throw new Error('no kubeconfig found ($KUBECONFIG, ~/.kube/config) and not running in a pod');
    kc.loadFromDefault();
  }
  if (!kc.getCurrentCluster()) throw new Error('no cluster in kubeconfig');
  return kc;
}
