// The hosts an Ingress answers and how their TLS is handled: server-alias, ssl-passthrough (the translation's
// passthrough phase), and the per-server TLS settings Portico refuses.
import { z } from 'zod';
import { refused, row } from '../group.ts';
import { boolSchema, hostSchema } from '../../values/safe.ts';

/** server-alias: comma-separated host names (lower-cased, de-duplicated), at most 32. */
const serverAliasSchema = z
  .string()
  .transform((v) => [...new Set(v.split(',').map((h) => h.trim().toLowerCase()).filter(Boolean))])
  .pipe(z.array(hostSchema).min(1, 'expected one or more host names').max(32, 'at most 32 names'));

export const rows = {
  'server-alias': row(serverAliasSchema, 'ingress', 'high', 'More names for the hosts of this Ingress\'s rules (comma-separated DNS names, "*." wildcards allowed): each serves exactly what the host serves (every path of every Ingress on it, as ingress-nginx\'s server_name), with the host\'s certificate when it covers the name. A name that is a host of its own or another host\'s alias is skipped with an AliasSkipped Event'),
  'ssl-passthrough': row(boolSchema, 'ingress', 'low', 'Only with the controller flag --enable-ssl-passthrough (off by default, as ingress-nginx; without it the annotation is ignored with a Warning). "true": TLS connections whose server name (SNI) is one of the Ingress\'s hosts go undecrypted to the Service of that host\'s "/" path (else the Ingress\'s defaultBackend, else its first path), to its ready endpoints (filtered like HTTP ones); nothing else of the Ingress applies to them (certificate, paths, other annotations, access control included: a PassthroughAccessControl Warning says so). Plain HTTP to the host is routed as usual (e.g. force-ssl-redirect), and an HTTPS request for it that reaches Portico\'s own TLS (another server name) gets 421. A host an older Ingress already serves, or passes through, stays as it is (PassthroughConflict Warning); a younger Ingress on a passthrough host is served over plain HTTP only. A "*." host matches one label, and never an exact host with rules of its own. Every other HTTPS connection goes on to Portico\'s TLS termination through a local hop that keeps the client address (PROXY protocol). Endpoint changes reload nginx', { difference: 'to the endpoints, not the cluster IP (an endpoint change reloads nginx); no "/" path nor defaultBackend: the first path; "*." matches one label only; terminated HTTPS keeps the client address' }),
  'ssl-ciphers': refused('ingress', 'low', 'not supported: TLS ciphers are set for the whole controller, not per Ingress'),
  'ssl-prefer-server-ciphers': refused('ingress', 'low', 'not supported: TLS ciphers are set for the whole controller, not per Ingress'),
  'http2-push-preload': refused('location', 'low', 'not supported: HTTP/2 server push is obsolete (browsers and nginx dropped it)'),
};
