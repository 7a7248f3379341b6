// Directive profiles: the nginx-only settings of a route (annotations, ConfigMap, proxy-ssl-*, ModSecurity).
import { createHash } from 'node:crypto';
import type { ModsecurityInstall, ModsecuritySettings, Profile, Route } from '../config/types.ts';
import type { ModelSnapshot } from '../model/model.ts';
import type { NormalizedIngress, NormalizedUpstream } from '../model/types.ts';
import { NGINX_PREFIX, PROXY_SSL_ANNOTATIONS, type ParsedAnnotations } from '../annotations/table.ts';
import type { NginxTuning } from '../config/nginx-tuning.ts';

/** Bytes of an nginx size ("1m", "512k", "0"). */
export function sizeBytes(v: string): number {
  const m = /^(\d+)([kKmMgG]?)$/.exec(v);
  if (!m) throw new Error(`invalid size ${v}`);
  const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[(m[2] ?? '').toLowerCase()] ?? 1;
  return Number(m[1]) * unit;
}

/** The protocol to a backend: its Upstream's (HTTP: none to set), else what the object asks for (`asked`). */
export function backendProtocolOf(up: NormalizedUpstream | undefined, asked: Profile['backendProtocol']): Profile['backendProtocol'] {
  return up ? (up.protocol !== 'HTTP' ? up.protocol : undefined) : asked;
}

/** The profile for nginx-only settings, named by a digest of its content; null when the defaults suffice. */
export function profileOf(settings: Omit<Profile, 'name'>): Profile | null {
  const entries = Object.entries(settings).filter(([, v]) => v !== undefined).sort(([x], [y]) => (x < y ? -1 : 1));
  if (!entries.length) return null;
  const name = `p_${createHash('sha256').update(JSON.stringify(entries)).digest('hex').slice(0, 16)}`;
  return { name, ...Object.fromEntries(entries) };
}

/** One spelling per size ("16384", "16k" → "16k"), so equal settings always share one profile. */
function canonicalSize(v: string): string {
  const n = sizeBytes(v);
  return n && n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)}m` : n && n % 1024 === 0 ? `${n / 1024}k` : String(n);
}

/** nginx's default proxy_max_temp_file_size (1024m): an annotation asking for it needs no profile. */
const DEFAULT_MAX_TEMP_FILE_BYTES = 1024 * 1024 * 1024;

/**
 * The directive-profile settings an Ingress's annotations ask for (ingress-nginx's proxy-buffering, proxy-buffer-size,
 * proxy-next-upstream*, proxy-cookie-*, proxy-redirect-*, ...), each only where it differs from the ConfigMap's
 * (or nginx's) value: a route whose settings equal the globals keeps the default location. `retried`: the route has
 * an Upstream's retries, which win over the proxy-next-upstream annotations.
 */
export function annotationProfileSettings(a: ParsedAnnotations, t: NginxTuning, retried: boolean): Partial<Omit<Profile, 'name'>> {
  const out: Partial<Omit<Profile, 'name'>> = {};
  if (a['proxy-buffering'] !== undefined && a['proxy-buffering'] !== t.proxyBuffering) out.proxyBuffering = a['proxy-buffering'];
  if (a['proxy-request-buffering'] !== undefined && a['proxy-request-buffering'] !== t.proxyRequestBuffering) out.proxyRequestBuffering = a['proxy-request-buffering'];
  // proxy_buffers' size is proxy_buffer_size (as ingress-nginx renders it): the two are set together.
  const bufSize = a['proxy-buffer-size'] ?? t.proxyBufferSize;
  const bufNumber = a['proxy-buffers-number'] ?? t.proxyBuffersNumber;
  if (sizeBytes(bufSize) !== sizeBytes(t.proxyBufferSize) || bufNumber !== t.proxyBuffersNumber) {
    out.proxyBufferSize = canonicalSize(bufSize);
    out.proxyBuffersNumber = bufNumber;
  }
  // nginx refuses a temporary-file limit other than 0 below the buffer size: such a value is raised to it.
  const maxTemp = a['proxy-max-temp-file-size'];
  const maxTempBytes = maxTemp === undefined ? undefined : sizeBytes(maxTemp) && Math.max(sizeBytes(maxTemp), sizeBytes(bufSize));
  if (maxTempBytes !== undefined && maxTempBytes !== DEFAULT_MAX_TEMP_FILE_BYTES) out.proxyMaxTempFileSize = canonicalSize(String(maxTempBytes));
  const bodyBuf = a['client-body-buffer-size'];
  if (bodyBuf !== undefined && sizeBytes(bodyBuf) !== sizeBytes(t.clientBodyBufferSize)) out.clientBodyBufferSize = canonicalSize(bodyBuf);
  if (a['proxy-http-version'] === '1.0') out.proxyHttpVersion = '1.0';
  if (a['proxy-cookie-domain'] !== undefined && a['proxy-cookie-domain'] !== 'off') out.proxyCookieDomain = a['proxy-cookie-domain'];
  if (a['proxy-cookie-path'] !== undefined && a['proxy-cookie-path'] !== 'off') out.proxyCookiePath = a['proxy-cookie-path'];
  // "off" and "default" in proxy-redirect-from ignore proxy-redirect-to; otherwise both must be set.
  const rFrom = a['proxy-redirect-from'];
  const rTo = a['proxy-redirect-to'];
  if (rFrom !== undefined && rTo !== undefined && rFrom !== 'off' && rFrom !== 'default' && rTo !== 'off' && rTo !== 'default') out.proxyRedirect = { from: rFrom, to: rTo };
  if (!retried) {
    const on = a['proxy-next-upstream'] ?? t.proxyNextUpstream;
    const tries = a['proxy-next-upstream-tries'] ?? t.proxyNextUpstreamTries;
    const timeout = a['proxy-next-upstream-timeout'] ?? t.proxyNextUpstreamTimeoutSeconds;
    if (on !== t.proxyNextUpstream || tries !== t.proxyNextUpstreamTries || timeout !== t.proxyNextUpstreamTimeoutSeconds) {
      out.nextUpstream = on;
      out.nextUpstreamTries = tries;
      out.nextUpstreamTimeoutSeconds = timeout;
    }
  }
  if (a['connection-proxy-header'] !== undefined) out.connectionHeader = a['connection-proxy-header'];
  if (a['enable-access-log'] === false && !t.disableAccessLog) out.accessLog = false;
  // nginx rate-limits only buffered responses (limit_rate has no effect with proxy_buffering off, ingress-nginx's
  // default): limit-rate turns buffering on for its paths unless the Ingress says proxy-buffering "off" (then the
  // annotation is reported as having no effect, see plugins.ts).
  if (a['limit-rate'] && a['proxy-buffering'] !== false) {
    out.limitRateKb = a['limit-rate'];
    if (a['limit-rate-after']) out.limitRateAfterKb = a['limit-rate-after'];
    if (!t.proxyBuffering) out.proxyBuffering = true;
  }
  return out;
}

/** Profile settings that mean nothing to fastcgi_pass (nginx's proxy_* directives and the Connection header). */
const PROXY_ONLY = ['proxyBuffering', 'proxyRequestBuffering', 'proxyBufferSize', 'proxyBuffersNumber', 'proxyMaxTempFileSize', 'proxyHttpVersion', 'proxyCookieDomain', 'proxyCookiePath', 'proxyRedirect', 'connectionHeader'] as const;

/**
 * A FastCGI route's profile settings (backend-protocol FCGI, its backend not set otherwise by an Upstream): `own` (the
 * route's annotation settings) without those only proxy_pass reads (normalize.ts warns about their annotations), with
 * fastcgi-index and the params of fastcgi-params-configmap — those of a ConfigMap the annotations-risk-level refused
 * are not sent. Returns the keys to set (undefined: drop).
 */
export function fastcgiProfileSettings(ing: NormalizedIngress, own: Partial<Omit<Profile, 'name'>>): Partial<Omit<Profile, 'name'>> {
  const out: Partial<Omit<Profile, 'name'>> = {};
  for (const k of PROXY_ONLY) if (own[k] !== undefined) out[k] = undefined;
  const index = ing.annotations['fastcgi-index'];
  const params = ing.annotations['fastcgi-params-configmap'] !== undefined ? (ing.fastcgi?.params ?? []) : [];
  out.fastcgi = { ...(index !== undefined ? { index } : {}), params };
  return out;
}

/** The FastCGI settings of an Ingress as one string (what the per-namespace bound counts), or undefined without FCGI. */
export function fastcgiSettingsKey(ing: NormalizedIngress): string | undefined {
  if (ing.annotations['backend-protocol'] !== 'FCGI') return undefined;
  const s = fastcgiProfileSettings(ing, {}).fastcgi;
  return JSON.stringify(s);
}

/** ingress-nginx's default proxy-ssl-protocols and proxy-ssl-ciphers (Portico's protocols: TLS 1.2 and 1.3 only). */
export const PROXY_SSL_DEFAULTS = { protocols: 'TLSv1.2 TLSv1.3', ciphers: 'DEFAULT' } as const;

/**
 * The directive-profile settings of ingress-nginx's proxy-ssl-* annotations for one route to `serviceKey`: only with
 * a usable proxy-ssl-secret (as ingress-nginx: without it they mean nothing), a backend spoken to over TLS (HTTPS or
 * GRPCS) and no Upstream tls settings for the Service (those win). Without proxy-ssl-name, the name verified and
 * sent as SNI is "<service>.<namespace>.svc" (as for an Upstream). undefined: the annotations do not apply.
 */
export function proxySslProfileSettings(ing: NormalizedIngress, protocol: Profile['backendProtocol'], upstreamTls: boolean, serviceKey: string): Partial<Omit<Profile, 'name'>> | undefined {
  const ps = ing.proxySsl;
  const a = ing.annotations;
  if (!ps || ps.error || a['proxy-ssl-secret'] === undefined || upstreamTls || (protocol !== 'HTTPS' && protocol !== 'GRPCS')) return undefined;
  const [ns, svc] = serviceKey.split('/') as [string, string];
  const verify = a['proxy-ssl-verify'] === true;
  const sni = a['proxy-ssl-server-name'] === true;
  return {
    sslCertificate: ps.certificate,
    trustedCa: verify ? ps.ca : undefined,
    sslVerifyDepth: verify ? a['proxy-ssl-verify-depth'] || 1 : undefined,
    // The name matters only to verify the certificate or to be sent as SNI.
    sslServerName: verify || sni ? (a['proxy-ssl-name'] ?? `${svc}.${ns}.svc`) : undefined,
    sslSni: verify && !sni ? false : undefined,
    sslProtocols: a['proxy-ssl-protocols'] ?? PROXY_SSL_DEFAULTS.protocols,
    sslCiphers: a['proxy-ssl-ciphers'] ?? PROXY_SSL_DEFAULTS.ciphers,
  };
}

/**
 * Why an Ingress's paths must fail closed for its proxy-ssl-* annotations: proxy-ssl-secret is set but cannot be
 * applied as asked (normalize.ts proxySslOf), or the ConfigMap's annotations-risk-level refused one of them
 * (`raw` is the record before gateAnnotations, `ing` after). undefined: nothing to fail for.
 */
export function proxySslClosedReason(raw: NormalizedIngress, ing: NormalizedIngress): string | undefined {
  if (!ing.proxySsl) return undefined;
  if (ing.proxySsl.error) return ing.proxySsl.error;
  const refused = PROXY_SSL_ANNOTATIONS.filter((n) => raw.annotations[n] !== undefined && ing.annotations[n] === undefined);
  if (!refused.length) return undefined;
  return `${refused.map((n) => `${NGINX_PREFIX}${n}`).join(', ')} ${refused.length > 1 ? 'are' : 'is'} refused by the ConfigMap's annotations-risk-level`;
}

/** The ConfigMap keys ModSecurity reads (reconcilers/model/global-config.ts). */
type ModsecurityGlobals = { enableModsecurity?: boolean; enableOwaspModsecurityCrs?: boolean; modsecuritySnippet?: ModsecuritySettings['rules'] };

/**
 * ModSecurity for an Ingress's paths, or undefined when it is off: on with its enable-modsecurity "true", or with
 * the ConfigMap's enable-modsecurity unless the Ingress says "false"; the CRS with enable-owasp-core-rules or the
 * ConfigMap's enable-owasp-modsecurity-crs; the ConfigMap's modsecurity-snippet, then the Ingress's (when it was
 * accepted), then its modsecurity-transaction-id.
 */
export function modsecuritySettings(a: ParsedAnnotations, g: ModsecurityGlobals): ModsecuritySettings | undefined {
  if (!(a['enable-modsecurity'] ?? g.enableModsecurity === true)) return undefined;
  const own = a['modsecurity-snippet'];
  const rules = [...(g.modsecuritySnippet ?? []), ...(own && 'directives' in own ? own.directives : [])];
  const id = a['modsecurity-transaction-id'];
  return { crs: a['enable-owasp-core-rules'] === true || g.enableOwaspModsecurityCrs === true, rules, ...(id !== undefined ? { transactionId: id } : {}) };
}

/**
 * Why an Ingress's paths must fail closed for ModSecurity (a security control: a WAF asked for is never silently
 * left out): it is on for them, but nginx's module or the CRS asked for is not installed, or the modsecurity-snippet
 * was refused — by its allowlist, or by the ConfigMap's allow-snippet-annotations / annotations-risk-level (`raw`
 * is the record before gateAnnotations, `ing` after). undefined: nothing to fail for.
 */
export function modsecurityClosedReason(raw: NormalizedIngress, ing: NormalizedIngress, g: ModsecurityGlobals, install: ModsecurityInstall | undefined): string | undefined {
  const m = modsecuritySettings(ing.annotations, g);
  if (!m) return undefined;
  const asked = ing.annotations['enable-modsecurity'] === true ? `${NGINX_PREFIX}enable-modsecurity` : 'the ConfigMap\'s enable-modsecurity';
  if (!install) return `ModSecurity is asked for (${asked}) but nginx's ModSecurity module is not installed on this controller (Debian package libnginx-mod-http-modsecurity)`;
  if (m.crs && !install.crs) return `the OWASP Core Rule Set is asked for (${ing.annotations['enable-owasp-core-rules'] === true ? `${NGINX_PREFIX}enable-owasp-core-rules` : 'the ConfigMap\'s enable-owasp-modsecurity-crs'}) but it is not installed on this controller (Debian package modsecurity-crs)`;
  const own = ing.annotations['modsecurity-snippet'];
  if (own && 'error' in own) return `ModSecurity is on (${asked}) but ${NGINX_PREFIX}modsecurity-snippet is refused (${own.error})`;
  if (own === undefined && raw.annotations['modsecurity-snippet'] !== undefined) return `ModSecurity is on (${asked}) but ${NGINX_PREFIX}modsecurity-snippet is refused by the ConfigMap (allow-snippet-annotations / annotations-risk-level)`;
  return undefined;
}

/** Seconds of a Route/Upstream timeout with the global default for what is unset. */
export function fullTimeouts(t: { connect?: number; read?: number; send?: number } | undefined, g: ModelSnapshot['global']): Route['timeouts'] | undefined {
  if (!t || (t.connect === undefined && t.read === undefined && t.send === undefined)) return undefined;
  return { connect: t.connect ?? g.proxyConnectTimeoutSeconds, send: t.send ?? g.proxySendTimeoutSeconds, read: t.read ?? g.proxyReadTimeoutSeconds };
}
