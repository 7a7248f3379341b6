// The TCP/UDP and TLS-passthrough part of the configuration (the nginx stream section), as the translation and
// the gateway build it. Re-exported by types.ts.

/** ssl-passthrough as the translation decides it (no endpoints: those are the gateway's, see StreamPassthrough). */
export interface PassthroughHosts {
  /** Sorted by host. */
  hosts: PassthroughHost[];
  /**
   * Exact hosts with routes of their own (TLS terminated by Portico) under a passthrough wildcard: an exact name wins
   * over a wildcard, as in the HTTP routing. Sorted.
   */
  terminated: string[];
}

export interface PassthroughHost {
  /** A DNS name, or a "*." wildcard of exactly one label (as the HTTP routing's). */
  host: string;
  /** Kind-qualified reference of the Ingress whose backend it is ("Ingress/namespace/name"): Events name it. */
  source: string;
  namespace: string;
  service: string;
  /** Service port: its number, or its name. */
  servicePort: number | string;
}

/** nginx's stream section: one listener per TCP/UDP service entry, its endpoints rendered into an upstream. */
export interface StreamSection {
  /** The stream module nginx loads (load_module). */
  modulePath: string;
  /** Sorted by protocol, then port. */
  servers: StreamServer[];
  /**
   * TLS passthrough (--enable-ssl-passthrough): the HTTPS listener is the stream's, which reads the SNI and sends the
   * connection either to a passthrough backend or, with a PROXY protocol header naming the client, to the HTTP
   * server's TLS listener on a unix socket (RuntimePaths.httpsSocket).
   */
  passthrough?: StreamPassthrough;
  /** Gateway API TCP, UDP and TLS (passthrough and terminated) listeners, sorted by port; absent when there are none. */
  gateway?: GatewayStreamSection;
}

/**
 * Gateway API's Layer-4 listeners as the translation decides them (translate/gateway-api/streams.ts): per pod port,
 * what its connections go to. No endpoints: the gateway resolves them (nginx-driver/stream.ts).
 */
export interface GatewayStream {
  /** The pod port nginx listens on. */
  port: number;
  protocol: 'TCP' | 'UDP' | 'TLS';
  /**
   * TCP/UDP: at most one target, host "_" (the oldest route attached). TLS: one per server name (exact or "*."
   * wildcard), the oldest route naming it, sorted by host. None: every connection is closed.
   */
  targets: GatewayStreamTarget[];
  /**
   * TLS ports with Terminate listeners: the certificate each of those listeners serves (its first certificateRef,
   * as for HTTPS listeners), in listener order; a target's `terminate` indexes it. Absent: passthrough only.
   */
  certificates?: GatewayStreamCertificate[];
}

/** A Terminate listener's certificate: the Secret's chain and key as the Secret normalizer re-encoded them (PEM). */
export interface GatewayStreamCertificate {
  /** The Secret ("namespace/name"), for messages. */
  source: string;
  cert: string;
  key: string;
}

export interface GatewayStreamTarget {
  host: string;
  /** "TCPRoute/namespace/name" (UDPRoute, TLSRoute): Events about its backends go there. */
  route: string;
  /**
   * Weighted backendRefs; `ok` false: its share of the connections must fail (missing, not permitted...);
   * `problem`: why, when the translation refused it (reported as a Warning on the route).
   */
  backends: { namespace: string; service: string; port: number; weight: number; ok: boolean; problem?: { reason: string; message: string } }[];
  /** TLS ends here (a Terminate listener's server name): the index of its certificate in the stream's `certificates`. */
  terminate?: number;
  /**
   * A terminated target whose backends a BackendTLSPolicy covers: TLS again to them, with the policy's hostname as
   * the server name sent and verified, against its CA bundle (PEM).
   */
  backendTls?: { policy: string; hostname: string; ca: string };
}

export interface GatewayStreamSection {
  /** Listen address (--listen-address). */
  address: string;
  /**
   * `retry`: a failed connection may try another endpoint (no share of its routes must fail). A target with `hop`
   * is terminated: its connections go, still encrypted, to that hop (`hops`), which ends TLS and proxies on.
   */
  servers: { port: number; udp: boolean; tls: boolean; retry: boolean; targets: { host: string; upstream: number | null; hop?: number }[] }[];
  /**
   * Terminating hops: one stream server on a unix socket of its own (RuntimePaths.gatewayTlsSocket) per distinct
   * certificate, backend TLS and upstream of a TLS port's terminated targets. `upstream` null: closed.
   */
  hops?: { port: number; certificate: { cert: string; key: string }; backendTls?: { hostname: string; ca: string }; upstream: number | null; retry: boolean }[];
  /**
   * One per distinct weighted endpoint set: `servers` the endpoints with their weights, `failWeight` the share of
   * connections that must fail (backends that are missing or have no endpoint), sent to a socket nothing listens on.
   */
  upstreams: { servers: { address: string; port: number; weight: number }[]; failWeight: number }[];
}

export interface StreamPassthrough {
  /** The public HTTPS listener (--listen-address, --https-port). */
  address: string;
  port: number;
  /** Passthrough hosts (sorted): `upstream` indexes `upstreams`; null = no allowed endpoint (connections are closed). */
  hosts: { host: string; upstream: number | null }[];
  /** Exact hosts Portico terminates although a passthrough wildcard covers them (PassthroughHosts.terminated). */
  terminated: string[];
  /** One per Service port some host uses, with its allowed endpoints (never empty), sorted. */
  upstreams: { endpoints: { address: string; port: number }[] }[];
}

export interface StreamServer {
  udp: boolean;
  /** Listen address (--listen-address) and port. */
  address: string;
  port: number;
  /** Expect a PROXY protocol header from clients (TCP only). */
  decodeProxy: boolean;
  /** Send a PROXY protocol header to the backend (TCP only). */
  encodeProxy: boolean;
  /** Allowed endpoints, sorted; empty = the listener accepts and closes at once. */
  endpoints: { address: string; port: number }[];
}
