// Where nginx's runtime files live: the runtime directory's layout (pid, temp, sockets, placeholder certificate),
// the Lua package paths and the assets directory. render.ts writes the configuration against these paths; process.ts
// and modsecurity.ts use them too.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ASSETS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../nginx-assets');
/** Portico's own nginx module: the per-request metrics (nginx-assets/modules/portico_metrics, built by build.sh). */
export const METRICS_MODULE = '/usr/lib/nginx/modules/ngx_http_portico_metrics_module.so';
/** Portico's own nginx module: HTTP/1.x and HTTP/2 prior knowledge (h2c) on one plaintext port, the ports named by
 * portico_h2c_ports (nginx-assets/modules/portico_h2c, built by build.sh). */
export const H2C_MODULE = '/usr/lib/nginx/modules/ngx_http_portico_h2c_module.so';
/** Portico's own nginx module: a backend's certificate checked against a list of subject alternative names, the SNI
 * apart (BackendTLSPolicy subjectAltNames; nginx-assets/modules/portico_upstream_ssl, built by build.sh). */
export const UPSTREAM_SSL_MODULE = '/usr/lib/nginx/modules/ngx_http_portico_upstream_ssl_module.so';
/** Portico's own nginx module: the variables derived on every proxied request (portico_coalesce, portico_if,
 * portico_hop) without a map each (nginx-assets/modules/portico_vars, built by build.sh). Always loaded. */
export const VARS_MODULE = '/usr/lib/nginx/modules/ngx_http_portico_vars_module.so';

export interface RuntimePaths {
  /** nginx prefix / runtime directory (pid, temp, logs, placeholder cert). */
  dir: string;
  pidFile: string;
  tempDir: string;
  temp: { client_body: string; proxy: string; fastcgi: string; uwsgi: string; scgi: string };
  /**
   * Access log: "/dev/stdout" (containers: nginx writes straight to the controller's stdout, one write per line)
   * or a file (buffered; tests and benchmarks keep their output clean this way).
   */
  accessLog: string;
  placeholderCert: string;
  placeholderKey: string;
  luaPackagePath: string;
  luaPackageCpath: string;
  /** Mode 0700: only the controller's user may enter it, which is what protects the sockets inside. */
  apiDir: string;
  /** The configuration API (unix socket; no TCP listener serves it). */
  apiSocket: string;
  /** Internal socket answering 503 for backends without usable endpoints (workers connect to it). */
  unavailableSocket: string;
  /** TLS passthrough: the HTTP server's TLS listener (PROXY protocol), which the stream section's HTTPS port feeds. */
  httpsSocket: string;
  /** TLS passthrough: the stream hop that sends a passthrough host's connections to its Service's endpoints. */
  passthroughSocket: string;
  /**
   * A unix socket path nothing ever listens on: the share of a Gateway TCP/UDP/TLS route's connections that must
   * fail (a backend that is missing or has no endpoint) is sent there and refused at once.
   */
  closedSocket: string;
  /**
   * The start of the unix socket paths of Gateway TLS listeners' terminating hops (`<prefix>-<n>.sock`, see
   * gatewayTlsSocket): the stream section's front server sends a terminated server name's connection there.
   */
  gatewayTlsSocketPrefix: string;
  /** Hard RLIMIT_NOFILE nginx inherits (null = unknown): worker_connections and worker_rlimit_nofile stay below it. */
  maxOpenFiles: number | null;
}

export interface RuntimeOptions {
  /** See RuntimePaths.accessLog; default: access.log in the runtime directory. */
  accessLog?: string;
}

/** The hard limit on open files of this process (nginx, its child, inherits it), from /proc/self/limits. */
export function hardOpenFilesLimit(): number | null {
  try {
    const m = /^Max open files\s+\S+\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** The unix socket of the n-th terminating hop of the Gateway TLS listeners (GatewayStreamSection.hops). */
export function gatewayTlsSocket(runtime: Pick<RuntimePaths, 'gatewayTlsSocketPrefix'>, n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`invalid hop number ${n}`);
  return `${runtime.gatewayTlsSocketPrefix}-${n}.sock`;
}

export function runtimePaths(dir: string, o: RuntimeOptions = {}): RuntimePaths {
  return {
    dir,
    pidFile: path.join(dir, 'nginx.pid'),
    tempDir: path.join(dir, 'tmp'),
    temp: {
      client_body: path.join(dir, 'tmp', 'client_body'),
      proxy: path.join(dir, 'tmp', 'proxy'),
      fastcgi: path.join(dir, 'tmp', 'fastcgi'),
      uwsgi: path.join(dir, 'tmp', 'uwsgi'),
      scgi: path.join(dir, 'tmp', 'scgi'),
    },
    accessLog: o.accessLog ?? path.join(dir, 'access.log'),
    placeholderCert: path.join(dir, 'placeholder.crt'),
    placeholderKey: path.join(dir, 'placeholder.key'),
    luaPackagePath: `${path.join(ASSETS_DIR, 'lua')}/?.lua;/usr/share/lua/5.1/?.lua;;`,
    luaPackageCpath: '/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;;',
    apiDir: path.join(dir, 'api'),
    apiSocket: path.join(dir, 'api', 'config.sock'),
    unavailableSocket: path.join(dir, 'unavailable.sock'),
    httpsSocket: path.join(dir, 'https.sock'),
    passthroughSocket: path.join(dir, 'passthrough.sock'),
    closedSocket: path.join(dir, 'closed.sock'),
    gatewayTlsSocketPrefix: path.join(dir, 'gwtls'),
    maxOpenFiles: hardOpenFilesLimit(),
  };
}
