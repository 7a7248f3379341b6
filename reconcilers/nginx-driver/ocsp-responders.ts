// enable-ocsp: the OCSP responder of each certificate, for the stapling done in Lua (ocsp.lua). The responder URL
// comes from a tenant's certificate (Authority Information Access), so it is treated as any tenant-controlled
// address: only http:// URLs; a host name is resolved here (the resolver Portico uses for ExternalName Services,
// never by nginx), and the address Lua may connect to must not be loopback, link-local, unspecified, metadata,
// Portico's own (forbiddenAddressReason), a pod's (an EndpointSlice endpoint) or a Service's virtual IP. A certificate
// whose responder is refused or does not resolve (yet) is sent without one: it is simply not stapled (logged once per
// responder and reason). Lua checks the address again (peers.lua) before connecting.
import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import type { Model } from '../model/model.ts';
import type { Certificate, GatewayConfig, OcspResponder } from '../config/types.ts';
import { addressKey, forbiddenAddressReason } from '../values/addresses.ts';
import { clusterIpIndex, serviceOfAddress } from '../translate/cluster-ips.ts';
import type { ExternalNameResolver } from './resolver.ts';

/** A responder as named in a certificate: host (name or IP literal), port and path; or why it cannot be used. */
export type NamedResponder = { host: string; port: number; path: string } | { error: string } | null;

/** The first OCSP responder the leaf of a PEM chain names (null: none). */
export function responderOf(pem: string): NamedResponder {
  try {
    const info = new X509Certificate(pem).infoAccess ?? '';
    const m = /^OCSP - URI:(\S+)$/m.exec(info);
    return m ? parseResponderUrl(m[1] as string) : null;
  } catch (e) {
    return { error: `the certificate cannot be parsed: ${String(e)}` };
  }
}

// Parsed once per certificate object (the translation keeps a Secret's Certificate object while it is unchanged);
// entries go with their certificates.
const parsed = new WeakMap<Certificate, NamedResponder>();
function responderOfCertificate(c: Certificate): NamedResponder {
  let r = parsed.get(c);
  if (r === undefined) {
    r = responderOf(c.cert);
    parsed.set(c, r);
  }
  return r;
}

/** An http:// responder URL: host, port (default 80) and path (default "/"), all plain ASCII. */
export function parseResponderUrl(raw: string): NamedResponder {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { error: `invalid OCSP responder URL ${JSON.stringify(raw.slice(0, 100))}` };
  }
  if (u.protocol !== 'http:') return { error: `OCSP responder ${JSON.stringify(raw.slice(0, 100))} is not http:// (only plain HTTP responders are used)` };
  if (u.username || u.password) return { error: 'an OCSP responder URL with credentials is not used' };
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  const path = `${u.pathname || '/'}${u.search}`;
  if (!/^[A-Za-z0-9.:-]{1,253}$/.test(host) || !/^\/[\x21-\x7e]{0,1023}$/.test(path)) return { error: `invalid OCSP responder URL ${JSON.stringify(raw.slice(0, 100))}` };
  return { host, port: u.port ? Number(u.port) : 80, path };
}

/** Host names of the responders the configuration's certificates name (to be resolved), when enable-ocsp is on. */
export function ocspNames(desired: GatewayConfig): Set<string> {
  const out = new Set<string>();
  if (!desired.structure.global.enableOcsp) return out;
  for (const c of certificatesOf(desired)) {
    const r = responderOfCertificate(c);
    if (r && 'host' in r && !isIP(r.host)) out.add(r.host.toLowerCase());
  }
  return out;
}

function certificatesOf(desired: GatewayConfig): Certificate[] {
  const d = desired.data;
  return [...Object.values(d.certificates), ...(d.defaultCertificate ? [d.defaultCertificate] : [])];
}

/** Why an address must not be an OCSP responder's, or null. */
export function responderAddressRefusal(address: string, own: ReadonlySet<string>, pods: ReadonlySet<string>, vips: ReadonlyMap<string, string>): string | null {
  const forbidden = forbiddenAddressReason(address, own);
  if (forbidden) return forbidden;
  const key = addressKey(address);
  if (key && pods.has(key)) return 'the address of a pod';
  const svc = serviceOfAddress(vips, address);
  if (svc) return `the virtual IP of Service ${svc}`;
  return null;
}

const logged = new Set<string>();

/**
 * Adds the vetted responder to each certificate of `desired` (copies: the translation's result is shared), when
 * enable-ocsp is on; the names were resolved with the ExternalName resolver (ocspNames went into its `use`).
 */
export function applyOcspResponders(desired: GatewayConfig, resolver: Pick<ExternalNameResolver, 'get'>, model: Model, own: ReadonlySet<string>, log: { warn(message: string, meta?: Record<string, unknown>): unknown }): void {
  if (!desired.structure.global.enableOcsp) return;
  const snap = model.snapshot();
  let pods: Set<string> | undefined;
  let vips: Map<string, string> | undefined;
  const vet = (address: string): string | null => {
    if (!pods) {
      pods = new Set();
      for (const slices of snap.slices.values()) for (const s of slices) for (const e of s.endpoints) pods.add(addressKey(e.address) ?? e.address);
    }
    vips ??= clusterIpIndex(snap.services.values());
    return responderAddressRefusal(address, own, pods, vips);
  };
  const withResponder = (c: Certificate): Certificate => {
    const r = responderOfCertificate(c);
    if (!r) return c;
    const refuse = (why: string): Certificate => {
      const k = `${c.source} ${why}`;
      if (!logged.has(k)) {
        if (logged.size > 10_000) logged.clear();
        logged.add(k);
        log.warn('enable-ocsp: no OCSP stapling for this certificate', { secret: c.source, reason: why });
      }
      return c;
    };
    if ('error' in r) return refuse(r.error);
    let address = r.host;
    if (!isIP(r.host)) {
      const e = resolver.get(r.host.toLowerCase());
      if (!e) return c; // being resolved: the resolver's answer triggers a new sync
      if (e.error || !e.addresses.length) return refuse(`OCSP responder ${r.host} ${e.error ? `does not resolve: ${e.error}` : `resolves only to refused addresses (${e.refused.map((x) => `${x.address}: ${x.reason}`).join(', ')})`}`);
      const ok = e.addresses.find((a) => !vet(a));
      if (!ok) return refuse(`OCSP responder ${r.host} resolves to ${e.addresses.map((a) => `${a}: ${vet(a)}`).join(', ')}`);
      address = ok;
    } else {
      const why = vet(r.host);
      if (why) return refuse(`OCSP responder ${r.host} is ${why}`);
    }
    const ocsp: OcspResponder = { host: r.host, address, port: r.port, path: r.path };
    return { ...c, ocsp };
  };
  const d = desired.data;
  const certificates: Record<string, Certificate> = {};
  for (const [host, c] of Object.entries(d.certificates)) certificates[host] = withResponder(c);
  desired.data = { ...d, certificates, defaultCertificate: d.defaultCertificate ? withResponder(d.defaultCertificate) : null };
}
