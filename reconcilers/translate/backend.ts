// A Service port as a backend: balancing (annotations, or the Upstream that wins over them), endpoints, what cannot be used.
import type { Backend } from '../config/types.ts';
import type { NormalizedService, NormalizedUpstream, ServiceBackendRef } from '../model/types.ts';
import type { ParsedAnnotations } from '../annotations/table.ts';
import { forbiddenAddressReason, parseIp } from '../values/addresses.ts';
import { namesService } from './self.ts';
import { endpointsOf } from './endpoints.ts';
import { sameInputs } from './memo.ts';
import { type Draft, describe } from './draft.ts';

/** The annotations that decide how a backend is balanced (per Service port: its oldest user's apply). */
const LB_KEYS = ['load-balance', 'upstream-hash-by', 'affinity', 'affinity-mode', 'session-cookie-name', 'session-cookie-max-age', 'session-cookie-path', 'session-cookie-domain', 'session-cookie-samesite', 'session-cookie-conditional-samesite-none', 'session-cookie-secure', 'session-cookie-expires', 'session-cookie-change-on-failure', 'service-upstream'];

/** The Upstream for a Service port: the oldest that names the port, or names no port. */
export function upstreamFor(d: Draft, svcKey: string, port: number | undefined): NormalizedUpstream | undefined {
  return d.upstreamsBySvc.get(svcKey)?.find((u) => !u.ports || (port !== undefined && u.ports.includes(port)));
}


/** The Warning about refused endpoint addresses of a backend, once per object using it. */
export function noteForbidden(d: Draft, ref: string, id: string): void {
  const { warn, reported, forbiddenNote } = d;
  const note = forbiddenNote.get(id);
  if (!note || reported.has(`forbidden ${ref} ${id}`)) return;
  reported.add(`forbidden ${ref} ${id}`);
  warn(ref, 'ForbiddenEndpoint', note);
}

/** An Upstream's TLS settings win over an Ingress's proxy-ssl-*: said once per object and backend. */
export function noteUpstreamTls(d: Draft, ownerRef: string, ann: ParsedAnnotations | undefined, id: string, up: NormalizedUpstream | undefined): void {
  const { events, reported } = d;
  if (!up?.tls || ann?.['proxy-ssl-secret'] === undefined || ann.canary === true || reported.has(`upssl ${ownerRef} ${id}`)) return;
  reported.add(`upssl ${ownerRef} ${id}`);
  events.push({ ref: ownerRef, type: 'Normal', reason: 'UpstreamOverrides', message: `Upstream ${up.key} sets the TLS to service backend ${id}; this Ingress's proxy-ssl-* annotations do not apply to it` });
}

/** One object's use of a backend: what is reported to it, and (for the first user) what the backend is made of. */
interface BackendUse {
  ownerRef: string;
  ann: ParsedAnnotations | undefined;
  id: string;
  svcKey: string;
}

type Unavailable = 'BackendNotFound' | 'ForbiddenEndpoint';

/**
 * The backend of a Service port, made once (its first user, the oldest, decides its balancing settings) or reused from
 * the memo; what each user must hear about it (not found, refused endpoints, settings that do not apply) is reported.
 */
export function resolveBackend(d: Draft, ownerRef: string, ann: ParsedAnnotations | undefined, ns: string, ref: ServiceBackendRef, id: string, svcKey = `${ns}/${ref.service}`): void {
  const { snap, memo, ownKey, upstreamOf, backends, backendOwner, forbiddenNote } = d;
  const use: BackendUse = { ownerRef, ann, id, svcKey };
  const prevOwner = backendOwner.get(id);
  if (prevOwner) return reportSharedBackend(d, use, prevOwner);
  backendOwner.set(id, { ref: ownerRef, ann });
  const svcRecord = snap.services.get(svcKey);
  const portNumber = 'number' in ref.port ? ref.port.number : svcRecord?.ports.find((p) => p.name === (ref.port as { name: string }).name)?.port;
  const up = upstreamFor(d, svcKey, portNumber);
  if (up) upstreamOf.set(id, up);
  const inputs: unknown[] = [svcRecord, snap.slices.get(svcKey), ann, snap.global.loadBalance, ownKey, up];
  const cached = memo?.backends.get(id);
  if (cached && !cached.result.externalName && sameInputs(cached.inputs, inputs)) {
    backends[id] = cached.result;
    if (cached.forbidden) forbiddenNote.set(id, cached.forbidden);
    reportBackend(d, use, cached.result, cached.kind, svcRecord, up);
    return;
  }
  const b = balancedBackend(d, id, ann, up);
  const unavailableKind = addEndpoints(d, use, b, ref, svcRecord, up);
  if (up?.tls?.verify && (up.protocol === 'HTTPS' || up.protocol === 'GRPCS') && !up.tls.caPem) {
    // Asked to verify the backend but without a CA to verify against: fail closed, never unverified.
    b.endpoints = [];
    b.unavailableReason = `${up.tls.caError ?? 'no CA bundle'} (Upstream ${up.key} verifies the backend's certificate)`;
  }
  backends[id] = b;
  memo?.backends.set(id, { inputs, result: b, forbidden: forbiddenNote.get(id), kind: unavailableKind });
  reportBackend(d, use, b, unavailableKind, svcRecord, up);
}

/** What a later user of a backend hears: its balancing annotations lose to the owner's; refused endpoints; not found. */
function reportSharedBackend(d: Draft, use: BackendUse, prevOwner: { ref: string; ann: ParsedAnnotations | undefined }): void {
  const { warn, unresolved, upstreamOf, backends, reported } = d;
  const { ownerRef, ann, id, svcKey } = use;
  const differs = LB_KEYS.some((k) => (ann as Record<string, unknown> | undefined)?.[k] !== (prevOwner.ann as Record<string, unknown> | undefined)?.[k]);
  if (differs && ann && prevOwner.ann && prevOwner.ref !== ownerRef && !upstreamOf.has(id) && !reported.has(`lb ${ownerRef} ${id}`)) {
    reported.add(`lb ${ownerRef} ${id}`);
    warn(ownerRef, 'BackendSettingsConflict', `balancing annotations for service backend ${id} differ from ${describe(prevOwner.ref)}, which is older and whose settings apply (balancing is per Service port)`);
  }
  noteForbidden(d, ownerRef, id);
  noteUpstreamTls(d, ownerRef, ann, id, upstreamOf.get(id));
  if (backends[id]?.unavailableReason && !reported.has(`${ownerRef} ${id}`)) {
    reported.add(`${ownerRef} ${id}`);
    if (!ownerRef.startsWith('Ingress/')) {
      warn(ownerRef, 'BackendNotFound', `${backends[id]!.unavailableReason}; requests using it answer 503`);
      unresolved(ownerRef, `Service ${svcKey}`);
    }
  }
}

/** What the user of a backend just made (or taken from the memo) hears about it. */
function reportBackend(d: Draft, use: BackendUse, b: Backend, kind: Unavailable, svcRecord: NormalizedService | undefined, up: NormalizedUpstream | undefined): void {
  const { events, warn, unresolved, reported } = d;
  const { ownerRef, ann, id, svcKey } = use;
  noteForbidden(d, ownerRef, id);
  noteUpstreamTls(d, ownerRef, ann, id, up);
  const s = svcRecord;
  if (ann?.['service-upstream'] && !up && s && (s.type === 'ExternalName' || !s.clusterIP || s.clusterIP === 'None') && !reported.has(`su ${ownerRef} ${id}`)) {
    reported.add(`su ${ownerRef} ${id}`);
    const what = s.type === 'ExternalName' ? 'an ExternalName service, its external name is used' : 'a headless service (no cluster IP), its endpoints are used';
    warn(ownerRef, 'UnsupportedAnnotation', `service-upstream ignored for service backend ${id}: ${what}`);
  }
  if (b.unavailableReason && !reported.has(`${ownerRef} ${id}`)) {
    reported.add(`${ownerRef} ${id}`);
    warn(ownerRef, kind, `${b.unavailableReason}; ${ownerRef.startsWith('Ingress/') ? 'paths' : 'requests'} using it answer 503`);
    if (!svcRecord) unresolved(ownerRef, `Service ${svcKey}`);
  }
  if (up && ann && LB_KEYS.some((k) => (ann as Record<string, unknown>)[k] !== undefined) && !reported.has(`up ${ownerRef} ${id}`)) {
    reported.add(`up ${ownerRef} ${id}`);
    events.push({ ref: ownerRef, type: 'Normal', reason: 'UpstreamOverrides', message: `Upstream ${up.key} sets how service backend ${id} is balanced; this Ingress's balancing annotations do not apply to it` });
  }
}

/** A backend balanced as its owner's annotations say (cookie affinity, consistent hash), unless an Upstream says otherwise. */
function balancedBackend(d: Draft, id: string, ann: ParsedAnnotations | undefined, up: NormalizedUpstream | undefined): Backend {
  const a: ParsedAnnotations = ann ?? {};
  const b: Backend = { id, endpoints: [], balance: a['load-balance'] ?? d.snap.global.loadBalance };
  if (a.affinity === 'cookie') {
    b.balance = 'cookie';
    b.cookie = { name: a['session-cookie-name'] ?? 'INGRESSCOOKIE', mode: a['affinity-mode'] ?? 'balanced' };
    if (a['session-cookie-max-age'] !== undefined) b.cookie.maxAgeSeconds = a['session-cookie-max-age'];
    if (a['session-cookie-path'] !== undefined) b.cookie.path = a['session-cookie-path'];
    if (a['session-cookie-domain'] !== undefined) b.cookie.domain = a['session-cookie-domain'];
    if (a['session-cookie-samesite'] !== undefined) b.cookie.sameSite = a['session-cookie-samesite'];
    if (a['session-cookie-conditional-samesite-none']) b.cookie.conditionalSameSiteNone = true;
    if (a['session-cookie-secure']) b.cookie.secure = true;
    if (a['session-cookie-expires'] !== undefined) b.cookie.expiresSeconds = a['session-cookie-expires'];
    if (a['session-cookie-change-on-failure']) b.cookie.changeOnFailure = true;
    if (a['session-cookie-partitioned']) b.cookie.partitioned = true;
  } else if (a['upstream-hash-by']) {
    b.balance = 'chash';
    b.hashBy = a['upstream-hash-by'];
    if (a['upstream-hash-by-subset']) b.hashSubsetSize = a['upstream-hash-by-subset-size'] ?? 3;
  }
  if (up) {
    // The Upstream wins over annotations for this Service port.
    if (up.balance) {
      b.balance = up.balance;
      delete b.cookie;
      delete b.hashBy;
      delete b.hashSubsetSize;
      if (up.balance === 'chash') b.hashBy = up.hashBy ?? '$request_uri';
      if (up.balance === 'cookie') b.cookie = up.cookie ?? { name: 'INGRESSCOOKIE', mode: 'balanced' };
    }
    if (up.passiveHealth) b.passiveHealth = up.passiveHealth;
  }
  return b;
}

/**
 * The endpoints of a backend: its Service's ready endpoints, the cluster IP (service-upstream), or the external name;
 * what cannot be used sets the backend's unavailableReason. Returns what kind of Warning that is.
 */
function addEndpoints(d: Draft, use: BackendUse, b: Backend, ref: ServiceBackendRef, svc: NormalizedService | undefined, up: NormalizedUpstream | undefined): Unavailable {
  const { snap, o, own, forbiddenNote } = d;
  const { id, svcKey } = use;
  const a: ParsedAnnotations = use.ann ?? {};
  const portLabel = 'number' in ref.port ? String(ref.port.number) : ref.port.name;
  let unavailableKind: Unavailable = 'BackendNotFound';
  if (!svc) {
    b.unavailableReason = `service ${svcKey} not found`;
  } else {
    const sp = svc.ports.find((p) => ('number' in ref.port ? p.port === ref.port.number : p.name === ref.port.name));
    const dropped = svc.problems.length ? ` (ignored: ${svc.problems.join('; ')})` : '';
    if (!sp) b.unavailableReason = `service ${svcKey} has no port ${portLabel}${dropped}`;
    else if (svc.type === 'ExternalName') {
      b.externalName = svc.externalName ?? undefined;
      b.externalPort = sp.port;
      const literal = svc.externalName && parseIp(svc.externalName)
        ? forbiddenAddressReason(svc.externalName, own)
        : svc.externalName && o.selfService && namesService(svc.externalName, o.selfService)
          ? `the DNS name of Portico's own Service ${o.selfService} (a request would loop)`
          : null;
      if (!svc.externalName) b.unavailableReason = `ExternalName service ${svcKey} has no valid externalName${dropped}`;
      else if (literal) {
        delete b.externalName;
        unavailableKind = 'ForbiddenEndpoint';
        b.unavailableReason = `ExternalName service ${svcKey} points at ${svc.externalName}, ${literal}, which Portico never proxies to`;
      }
    } else if (a['service-upstream'] && !up && svc.clusterIP && svc.clusterIP !== 'None') {
      // service-upstream: one endpoint, the Service's cluster IP and port (kube-proxy balances), as ingress-nginx.
      const why = forbiddenAddressReason(svc.clusterIP, own);
      if (why) {
        unavailableKind = 'ForbiddenEndpoint';
        b.unavailableReason = `service-upstream: the cluster IP ${svc.clusterIP} of service ${svcKey} is ${why}, which Portico never proxies to`;
      } else b.endpoints = [{ address: svc.clusterIP, port: sp.port, weight: 1 }];
    } else {
      const r = endpointsOf(snap.slices.get(svcKey) ?? [], sp.name, own);
      b.endpoints = r.endpoints;
      if (r.forbidden.length) {
        const list = r.forbidden.slice(0, 5).map((f) => `${f.address} (${f.reason})`).join(', ');
        const more = r.forbidden.length > 5 ? ` and ${r.forbidden.length - 5} more` : '';
        forbiddenNote.set(id, `service ${svcKey}: endpoint addresses no tenant may reach were dropped: ${list}${more}`);
      }
    }
  }
  return unavailableKind;
}
