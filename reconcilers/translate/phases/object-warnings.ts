// Phase: the Warnings about each object as a whole.
import { NGINX_PREFIX, PROXY_SSL_ANNOTATIONS } from '../../annotations/table.ts';
import { FASTCGI_NO_EFFECT } from '../../annotations/groups/fastcgi.ts';
import { annotationRefusals } from '../risk.ts';
import { ingressRef } from '../objects.ts';
import type { Draft } from '../draft.ts';

/** The Warnings about each object as a whole (its problems, refused annotations, why it fails closed). */
export function warnObjects(d: Draft): void {
  const { snap, status, warn, unresolved, served, closedReason, sslClosed, wafClosed, fcgiClosed, hosts } = d;
  for (const ing of served) {
    const iref = ingressRef(ing.key);
    for (const p of ing.problems) warn(iref, 'InvalidConfiguration', p);
    for (const r of annotationRefusals(ing)) warn(iref, r.reason, r.message);
    const closed = closedReason.get(ing.key);
    if (closed) {
      const them = ing.accessControl.length > 1 ? 'these annotations are' : 'the annotation is';
      warn(iref, 'UnsupportedAccessControl', `${closed}; failing closed: every path of this Ingress answers 503 until ${them} supported or removed`);
    }
    const ssl = sslClosed.get(ing.key);
    if (ssl) {
      warn(iref, 'BackendTLSUnavailable', `${ssl}; failing closed: every path of this Ingress answers 503 rather than being proxied without the backend TLS it asks for`);
      if (ing.proxySsl?.missing && ing.proxySsl.secretKey) unresolved(iref, `Secret ${ing.proxySsl.secretKey}`);
    } else if (!ing.proxySsl) {
      const alone = PROXY_SSL_ANNOTATIONS.filter((n) => ing.annotations[n] !== undefined);
      if (alone.length) warn(iref, 'InvalidConfiguration', `annotation ignored: ${alone.map((n) => `${NGINX_PREFIX}${n}`).join(', ')} ${alone.length > 1 ? 'have' : 'has'} no effect without ${NGINX_PREFIX}proxy-ssl-secret (as in ingress-nginx)`);
    }
    // FastCGI: fastcgi-* without FCGI, and proxy_* annotations with it, do nothing (said, never ignored silently).
    const list = (names: readonly string[]) => `${names.map((n) => `${NGINX_PREFIX}${n}`).join(', ')} ${names.length > 1 ? 'have' : 'has'}`;
    if (ing.annotations['backend-protocol'] !== 'FCGI') {
      const alone = (['fastcgi-index', 'fastcgi-params-configmap'] as const).filter((n) => ing.annotations[n] !== undefined);
      if (alone.length) warn(iref, 'InvalidConfiguration', `annotation ignored: ${list(alone)} no effect without ${NGINX_PREFIX}backend-protocol "FCGI"`);
    } else if (ing.annotations.canary !== true) {
      const proxyOnly = FASTCGI_NO_EFFECT.filter((n) => ing.annotations[n] !== undefined);
      if (proxyOnly.length) warn(iref, 'InvalidConfiguration', `annotation ignored: ${list(proxyOnly)} no effect with ${NGINX_PREFIX}backend-protocol "FCGI" (nginx's proxy_* directives and headers sent by proxy_pass; a FastCGI server gets nginx's fastcgi_* defaults, as in ingress-nginx) unless an Upstream object sets another protocol for the Service`);
    }
    const fcgi = fcgiClosed.get(ing.key);
    if (fcgi) {
      warn(iref, 'FastCGIUnavailable', `${fcgi}; failing closed: every path of this Ingress answers 503 rather than being passed to the FastCGI server with other params than asked`);
      if (ing.fastcgi?.missing && ing.fastcgi.configMapKey) unresolved(iref, `ConfigMap ${ing.fastcgi.configMapKey}`);
    }
    const waf = wafClosed.get(ing.key);
    if (waf) warn(iref, 'ModSecurityUnavailable', `${waf}; failing closed: every path of this Ingress answers 503 rather than being served without the ModSecurity it asks for`);
    const msnip = ing.annotations['modsecurity-snippet'];
    if (msnip && 'error' in msnip) warn(iref, 'InvalidSnippet', `annotation ${NGINX_PREFIX}modsecurity-snippet is refused: ${msnip.error}; nothing of this snippet is applied`);
    const ac = new Set(ing.accessControl.map((a) => a.annotation));
    for (const a of ing.unsupportedAnnotations) {
      if (!ac.has(a)) warn(iref, 'UnsupportedAnnotation', `annotation ${a} is not supported by Portico and is ignored`);
    }
  }
  // Paths failing closed for a plugin reason: one Warning per object.
  const closedSeen = new Set<string>();
  for (const locs of hosts.values()) {
    for (const c of locs.values()) {
      // Reasons of the object's own (an Ingress's access control, proxy-ssl-*, ModSecurity) have their Warnings above.
      const own = c.owner.proc.closedReasons?.(d, c.owner).join('; ') ?? '';
      if (!c.closed || c.reported || closedSeen.has(c.owner.ref) || c.closed === own) continue;
      closedSeen.add(c.owner.ref);
      warn(c.owner.ref, 'PluginUnavailable', `${c.closed}; failing closed: the paths using it answer 503 until it is fixed`);
    }
  }
  // Objects of a kind with paths that their schema refused: not served (Ingresses: see their processor's admit).
  const withPaths = new Set(d.processors.map((p) => p.kind));
  for (const [ref, r] of snap.rejectedCrds) {
    if (withPaths.has(ref.slice(0, ref.indexOf('/')))) status.set(ref, { served: false, programmed: false, problems: [r.reason] });
  }
}
