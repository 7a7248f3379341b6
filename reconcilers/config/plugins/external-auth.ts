// external-auth (nginx-assets/lua/portico/plugins/external_auth.lua): asks an auth Service whether the request may
// pass (a Plugin object's, or ingress-nginx's auth-url: reconcilers/annotations/groups/external-auth.ts).
import { z } from 'zod';
import { duration, durationMs, port, serviceName, urlPath } from '../../../crds/schema/common.ts';
import { definePlugin, headerList, lowerAll } from './plugin.ts';
import type { SnippetStatement } from './snippet.ts';

export type Instance = {
  type: 'external-auth';
  /** Backend (DataPlane.backends) of the auth Service; the subrequest goes there through the balancer. */
  backendId: string;
  /** Path (and optional query) requested on the auth service. */
  path: string;
  method: 'GET' | 'POST' | 'HEAD';
  /** Client request headers sent to the auth service (lower-case); empty = all of them. */
  forwardHeaders: string[];
  /** Auth response headers copied onto the proxied request on success (lower-case). */
  upstreamHeaders: string[];
  /** Auth response headers copied onto the client's response on denial (e.g. www-authenticate, location). */
  clientHeaders: string[];
  timeoutMs: number;
  /**
   * ingress-nginx's auth-url (from annotations or the ConfigMap's global-auth-url), with nginx auth_request's
   * semantics instead of the Plugin's: the subrequest carries X-Original-URL/-Method, X-Auth-Request-Redirect,
   * X-Sent-From, X-Real-IP, X-Forwarded-For (X-Forwarded-Proto removed); 2xx passes, 401/403 are answered
   * (401 with WWW-Authenticate, or the sign-in redirect), anything else is 500. `forwardHeaders` is empty (every
   * client header goes), `upstreamHeaders` are auth-response-headers, `clientHeaders` unused.
   */
  ingressNginx?: IngressNginxAuth;
  /**
   * Gateway API's HTTP ExternalAuth (a listener filter): the auth request has the client's method, and its path is
   * `path` (a prefix, "" for none) followed by the client's path and query; Host, Authorization and the
   * `forwardHeaders` go along; allUpstreamHeaders: every auth response header but Host (and framing ones) is set on
   * the request (the API's default when it lists none).
   */
  gatewayApi?: { allUpstreamHeaders: boolean };
};

/** Request-time text: literal strings and variables of an allowlist ({ v: name }), see annotations/auth-url.ts. */
export type AuthTemplatePart = string | { v: string };

export interface IngressNginxAuth {
  /** Scheme of the auth URL (https: TLS with the URL's host as server name, the certificate not verified). */
  scheme: 'http' | 'https';
  /** The auth URL's host: the Host header sent, and the TLS server name ("" with ownHost: the request's Host). */
  host: string;
  /**
   * The auth URL's path and query with variables ($request_uri, $arg_x…), filled in per request and
   * percent-encoded; absent: the instance's `path` as it is.
   */
  uri?: AuthTemplatePart[];
  /**
   * The auth URL's host is the request's own ($host): the subrequest goes to the backend of the route this host
   * serves the auth path with (the router's lookup), over plain HTTP with X-Forwarded-Proto set to `scheme`; it
   * fails closed when there is none, when that route requires authentication itself, or when its backend is not of
   * `namespace` (absent: any namespace — the ConfigMap's global-auth-url, or allow-cross-namespace-auth).
   */
  ownHost?: true;
  namespace?: string;
  /** auth-method (proxy_method); absent = GET. */
  method?: string;
  /** X-Auth-Request-Redirect; absent = the request URI. */
  requestRedirect?: AuthTemplatePart[];
  /** The Location of the 302 answered instead of a 401 (auth-signin; `{ v: "rd" }` = the request's own URL). */
  signin?: AuthTemplatePart[];
  /** auth-cache-key / -duration: answers kept per key in shared memory, seconds per status ("any": the rest). */
  cache?: { key: AuthTemplatePart[]; ttl: Record<string, number> };
  /** Send the auth response's Set-Cookie with every answer (else only with 200, 201, 204, 206, 301-304, 307, 308). */
  alwaysSetCookie: boolean;
  /** proxy timeouts of the subrequest, seconds (the ConfigMap's, as ingress-nginx's auth location inherits). */
  timeouts: { connect: number; send: number; read: number };
  /** auth-proxy-set-headers: headers set on the subrequest (lower-case names; values: text and any nginx variable). */
  setHeaders?: { name: string; value: AuthTemplatePart[] }[];
  /**
   * auth-snippet, compiled from its allowlist (reconcilers/annotations/snippets.ts, kind "auth"): set, if and the
   * request-header directives, run on the subrequest's headers after setHeaders (snippet.lua's run_auth).
   */
  snippet?: SnippetStatement[];
}

export const externalAuthConfigSchema = z.strictObject({
  type: z.literal('external-auth'),
  service: z.strictObject({ name: serviceName(), port: port() }),
  path: urlPath().default('/'),
  method: z.enum(['GET', 'POST', 'HEAD']).default('GET'),
  forwardHeaders: headerList(64).optional(),
  upstreamHeaders: headerList(64).optional(),
  clientHeaders: headerList(64).optional(),
  timeout: duration().default('5s'),
});

export const plugin = definePlugin<Instance>()({
  name: 'external-auth',
  crd: {
    rank: 7,
    schema: externalAuthConfigSchema,
    toInstance: (c) => ({
      type: 'external-auth',
      backendId: '',
      path: c.path,
      method: c.method,
      forwardHeaders: lowerAll(c.forwardHeaders),
      upstreamHeaders: lowerAll(c.upstreamHeaders),
      clientHeaders: lowerAll(c.clientHeaders),
      timeoutMs: durationMs(c.timeout),
    }),
    authService: (c) => ({ service: c.service.name, port: c.service.port }),
  },
});
