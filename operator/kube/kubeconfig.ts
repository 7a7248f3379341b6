// Credentials through @kubernetes/client-node's KubeConfig: for kubeconfigs Portico does not read itself (exec and
// auth-provider plugins, proxies, impersonation, merged files) and for tests that build a KubeConfig. Importing
// this module loads client-node's generated API (tens of MB), so the controller imports it only when needed
// (credentials.ts).
import { HttpMethod, KubeConfig, RequestContext } from '@kubernetes/client-node';
import type https from 'node:https';
import { existsSync } from 'node:fs';
import type { Dispatcher } from 'undici';
import type { ApiserverOverride, Credentials, TlsOptions } from './credential-types.ts';

const METHODS: Record<string, HttpMethod> = {
  GET: HttpMethod.GET,
  POST: HttpMethod.POST,
  PUT: HttpMethod.PUT,
  PATCH: HttpMethod.PATCH,
  DELETE: HttpMethod.DELETE,
};

/** KubeClient credentials backed by a client-node KubeConfig (its current context). */
export function kubeConfigCredentials(kc: KubeConfig): Credentials & { kubeConfig: KubeConfig } {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const server = cluster.server.replace(/\/+$/, '');
  const context = (url: string, method: string) => {
    const m = METHODS[method];
    if (m === undefined) throw new Error(`unsupported method ${method}`);
    return new RequestContext(url, m);
  };
  const creds: Credentials & { kubeConfig: KubeConfig } = {
    kubeConfig: kc,
    server,
    source: `kubeconfig (context ${kc.getCurrentContext()})`,
    headers: async () => {
      const ctx = context(`${server}/`, 'GET');
      // Per request, so that rotated tokens (projected service-account tokens, exec plugins) are picked up.
      await kc.applySecurityAuthentication(ctx);
      return ctx.getHeaders();
    },
    tls: async () => {
      const opts: https.RequestOptions = {};
      await kc.applyToHTTPSOptions(opts);
      const spec = kc.createDispatcherOptions(kc.getCurrentCluster(), {
        ca: opts.ca,
        cert: opts.cert,
        key: opts.key,
        pfx: opts.pfx,
        passphrase: opts.passphrase,
        ...(opts.rejectUnauthorized !== undefined ? { rejectUnauthorized: opts.rejectUnauthorized } : {}),
        ...(opts.servername !== undefined ? { servername: opts.servername } : {}),
      });
      if (spec.type !== 'agent') return undefined;
      const { keepAlive: _k, keepAliveInitialDelay: _d, ...tls } = spec.connect as Record<string, unknown>;
      return tls as TlsOptions;
    },
    exportConfig: () => kc.exportConfig(),
  };
  // Proxied clusters keep client-node's own dispatcher (HTTP and SOCKS proxies).
  if (cluster.proxyUrl) {
    creds.dispatcher = async (url, method) => {
      const ctx = context(url, method);
      await kc.applySecurityAuthentication(ctx);
      return ctx.getDispatcher() as Dispatcher | undefined;
    };
  }
  return creds;
}

/** A client-node KubeConfig from a file, $KUBECONFIG / ~/.kube/config, or the pod; `override`: --apiserver-host. */
export function loadKubeConfig(file?: string, override?: ApiserverOverride): KubeConfig {
  const kc = new KubeConfig();
  if (override && !file) {
    const cluster = { name: 'apiserver', server: override.server, skipTLSVerify: false, ...(override.caFile ? { caFile: override.caFile } : {}) };
    kc.loadFromOptions({ clusters: [cluster], users: [{ name: 'anonymous' }], contexts: [{ name: 'apiserver', cluster: 'apiserver', user: 'anonymous' }], currentContext: 'apiserver' });
    return kc;
  }
  if (file) kc.loadFromFile(file);
  else if (process.env.KUBERNETES_SERVICE_HOST) kc.loadFromCluster();
  else {
    // loadFromDefault silently falls back to http://localhost:8080 when it finds nothing; refuse instead.
    const candidates = (process.env.KUBECONFIG ?? '').split(':').filter(Boolean);
    if (process.env.HOME) candidates.push(`${process.env.HOME}/.kube/config`);
    if (!candidates.some((f) => existsSync(f))) throw new Error('no kubeconfig found ($KUBECONFIG, ~/.kube/config) and not running in a pod');
    kc.loadFromDefault();
  }
  const current = kc.getCurrentCluster();
  if (!current) throw new Error('no cluster in kubeconfig');
  if (override) {
    const replaced = { ...current, server: override.server, ...(override.caFile ? { caFile: override.caFile, caData: undefined } : {}) };
    kc.loadFromOptions({ clusters: kc.clusters.map((c) => (c.name === current.name ? replaced : c)), users: kc.users, contexts: kc.contexts, currentContext: kc.currentContext });
  }
  return kc;
}
