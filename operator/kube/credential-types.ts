// What KubeClient needs of credentials (credentials.ts reads them; kubeconfig.ts adapts client-node's KubeConfig).
import type { Dispatcher } from 'undici';

/** TLS options of the connection to the API server (undici's `connect`). */
export interface TlsOptions {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  rejectUnauthorized?: boolean;
  servername?: string;
}

export interface Credentials {
  /** The API server's URL, without a trailing slash. */
  readonly server: string;
  /** A description for logs and errors ("in-cluster", "kubeconfig /path (context x)"). */
  readonly source: string;
  /** Headers that authenticate one request (called per request: tokens rotate). */
  headers(): Promise<Record<string, string>>;
  /** TLS material for the connection pool (re-read periodically to notice a rotation); undefined for plain http. */
  tls(): Promise<TlsOptions | undefined>;
  /** Set when requests need a dispatcher of their own (a proxy): KubeClient then uses it instead of its pool. */
  dispatcher?(url: string, method: string): Promise<Dispatcher | undefined>;
  /** The kubeconfig as YAML (only when the credentials came through client-node's KubeConfig). */
  exportConfig?(): string;
}

export interface ApiserverOverride {
  /** ingress-nginx's --apiserver-host: replaces the server. */
  server: string;
  /** --certificate-authority (read only with --apiserver-host): replaces the CA. */
  caFile?: string;
}
