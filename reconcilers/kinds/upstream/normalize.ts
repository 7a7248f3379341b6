// Upstream → its normalized model record; a verified CA bundle is read from the Secret it names.
import { durationMs, upstreamSpecSchema } from '../../../crds/schema/index.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { NormalizedUpstream } from '../../model/types.ts';
import { caBundleProblem } from '../../values/safe.ts';
import { decode, issuesText, metaOf, timeoutsOf, type CrdResult, type SecretLookup } from '../crd-normalize.ts';

const ALGORITHM = { RoundRobin: 'round_robin', EWMA: 'ewma', ConsistentHash: 'chash', Cookie: 'cookie' } as const;

export function normalizeUpstream(obj: KubeObject, secrets: SecretLookup = () => undefined): CrdResult<NormalizedUpstream> {
  const r = upstreamSpecSchema.safeParse((obj as { spec?: unknown }).spec ?? {});
  if (!r.success) return { ok: false, reason: issuesText(r.error) };
  const s = r.data;
  const meta = metaOf(obj);
  const rec: NormalizedUpstream = { ...meta, serviceKey: `${meta.namespace}/${s.service.name}`, ports: s.ports ? [...s.ports] : null, protocol: s.protocol ?? 'HTTP' };
  const lb = s.loadBalancer;
  if (lb) {
    rec.balance = ALGORITHM[lb.algorithm];
    const h = lb.hashOn as { header?: string; cookie?: string; query?: string; variable?: string } | undefined;
    if (h?.header) rec.hashBy = `$http_${h.header.toLowerCase().replace(/-/g, '_')}`;
    else if (h?.cookie) {
      if (!/^[A-Za-z0-9_]+$/.test(h.cookie)) return { ok: false, reason: 'spec.loadBalancer.hashOn.cookie: nginx can hash only on cookies named with letters, digits and "_"' };
      rec.hashBy = `$cookie_${h.cookie}`;
    } else if (h?.query) {
      if (!/^[A-Za-z0-9_]+$/.test(h.query)) return { ok: false, reason: 'spec.loadBalancer.hashOn.query: nginx can hash only on query parameters named with letters, digits and "_"' };
      rec.hashBy = `$arg_${h.query}`;
    } else if (h?.variable) rec.hashBy = `$${h.variable}`;
    if (lb.cookie) {
      rec.cookie = { name: lb.cookie.name, mode: lb.cookie.mode === 'Persistent' ? 'persistent' : 'balanced' };
      if (lb.cookie.maxAge) rec.cookie.maxAgeSeconds = Math.round(durationMs(lb.cookie.maxAge) / 1000);
    }
  }
  if (s.retries) rec.retries = { attempts: s.retries.attempts, on: [...(s.retries.on ?? [])] };
  const t = timeoutsOf(s.timeouts);
  if (t) rec.timeouts = t;
  if (s.tls) {
    rec.tls = { verify: s.tls.verify === true };
    if (s.tls.serverName) rec.tls.serverName = s.tls.serverName;
    if (s.tls.caSecret) rec.tls.caSecret = s.tls.caSecret;
    if (rec.tls.verify && s.tls.caSecret) {
      const key = `${meta.namespace}/${s.tls.caSecret}`;
      const sec = secrets(key);
      const pem = decode(sec?.data?.['ca.crt']);
      const problem = !sec ? `Secret ${key} not found` : pem === undefined ? `Secret ${key} has no ca.crt` : caBundleProblem(pem);
      if (problem) rec.tls.caError = `spec.tls.caSecret: ${problem}`;
      else rec.tls.caPem = (pem as string).trim() + '\n';
    }
  }
  const p = s.healthCheck?.passive;
  if (p) {
    const sts = (p as { httpStatuses?: number[] }).httpStatuses;
    rec.passiveHealth = { failures: p.failures, statuses: sts ? [...sts] : [502, 503, 504], ejectSeconds: Math.max(1, Math.round(durationMs(p.ejectDuration) / 1000)) };
  }
  return { ok: true, record: rec };
}

// The model stores Upstreams with the other CRs, by kind (model.ts CrdRecords): this is their record type there.
declare module '../../model/model.ts' {
  interface CrdRecords {
    Upstream: NormalizedUpstream;
  }
}
