// BackendTLSPolicy semantics, pure: which policy holds for a Service port, each policy's conditions, and the
// Gateways it is reported to (its ancestors). A policy targets Services of its own namespace, a whole Service or one
// port by name (sectionName); the port's own policy wins over the Service's. Among policies with the same target the
// oldest (then the first by name) holds; the others are Conflicted. A policy that holds but cannot be applied (no
// usable CA certificate, or something Portico does not serve) makes its targets fail closed: the backend's share of
// the requests is answered 500, never sent without the TLS the policy asks for. TLSRoutes on Terminate listeners use
// it too (streams.ts: their share of the connections fails instead); passthrough TLSRoutes carry the client's own TLS.
import type { BackendTlsPolicyRecord } from '../../model/gateway-api.ts';
import { recordsOf, type ModelSnapshot } from '../../model/model.ts';
import { terminatesTls, type Cond, type GatewayApiState } from './attach.ts';

export interface BackendTlsPolicyState {
  accepted: Cond;
  resolvedRefs: Cond;
}

export interface BackendTlsState {
  /** Per policy ("namespace/name"). */
  policies: Map<string, BackendTlsPolicyState>;
  /** The policy holding for "namespace/service#port-name" ("#" alone: the whole Service). */
  holding: Map<string, BackendTlsPolicyRecord>;
}

type Snap = Pick<ModelSnapshot, 'crds' | 'services'> & { revision?: number };
// Per snapshot, and its revision (a snapshot's maps are the model's own, live).
const memo = new WeakMap<object, { rev: number | undefined; st: BackendTlsState }>();

const older = (a: BackendTlsPolicyRecord, b: BackendTlsPolicyRecord) =>
  a.creationTimestamp < b.creationTimestamp ? -1 : a.creationTimestamp > b.creationTimestamp ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0;

/** Whether a policy can be applied: a CA bundle to verify with, and nothing asked that Portico does not serve. */
export const policyUsable = (p: BackendTlsPolicyRecord): boolean => !p.unsupported && !!p.caPem;

export function backendTlsState(snap: Snap): BackendTlsState {
  const cached = memo.get(snap);
  if (cached && cached.rev === snap.revision) return cached.st;
  const policies = new Map<string, BackendTlsPolicyState>();
  const holding = new Map<string, BackendTlsPolicyRecord>();
  const lost = new Map<string, string>();
  const all = [...recordsOf(snap, 'BackendTLSPolicy').values()].sort(older);
  for (const p of all) {
    for (const t of p.targets) {
      const k = `${p.namespace}/${t.name}#${t.sectionName ?? ''}`;
      const h = holding.get(k);
      if (!h) holding.set(k, p);
      else if (h !== p && !lost.has(p.key)) lost.set(p.key, `${t.sectionName ? `port ${t.sectionName} of ` : ''}Service ${p.namespace}/${t.name} already has BackendTLSPolicy ${h.name} (older)`);
    }
  }
  for (const p of all) {
    const problems = p.refProblems;
    const resolvedRefs: Cond = problems.length ? { status: 'False', reason: problems[0]!.reason, message: problems.map((x) => x.message).join('; ') } : { status: 'True', reason: 'ResolvedRefs', message: '' };
    let accepted: Cond;
    if (p.unsupported) accepted = { status: 'False', reason: 'Invalid', message: `${p.unsupported}; the Service ports it targets answer 500 (their traffic is never sent without the TLS asked for)` };
    else if (lost.has(p.key)) accepted = { status: 'False', reason: 'Conflicted', message: lost.get(p.key)! };
    else if (!p.caPem) accepted = { status: 'False', reason: 'NoValidCACertificate', message: `no CA certificate Portico can use (${resolvedRefs.message}); the Service ports it targets answer 500` };
    else accepted = { status: 'True', reason: 'Accepted', message: '' };
    policies.set(p.key, { accepted, resolvedRefs });
  }
  const st = { policies, holding };
  memo.set(snap, { rev: snap.revision, st });
  return st;
}

/** The policy holding for a backend (a Service port by number), if any. */
export function policyFor(snap: Snap, ns: string, service: string, port: number | undefined): BackendTlsPolicyRecord | undefined {
  const st = backendTlsState(snap);
  if (!st.holding.size) return undefined;
  const name = snap.services.get(`${ns}/${service}`)?.ports.find((p) => p.port === port)?.name;
  return (name ? st.holding.get(`${ns}/${service}#${name}`) : undefined) ?? st.holding.get(`${ns}/${service}#`);
}

/**
 * Each policy's ancestors: the Gateways ("namespace/name") of Portico's with an accepted HTTPRoute or GRPCRoute, or a
 * TLSRoute attached to a Terminate listener, whose backendRefs name a Service port the policy targets (whether or not
 * the policy holds there).
 */
export function policyAncestors(snap: Snap, gw: GatewayApiState): Map<string, string[]> {
  // "namespace/service" → port names used ("" when the port has no name) → Gateways.
  const used = new Map<string, Map<string, Set<string>>>();
  const use = (b: { group: string; kind: string; namespace: string; name: string; port?: number | undefined }, gws: readonly string[]) => {
    if (b.group !== '' || b.kind !== 'Service') return;
    const svc = `${b.namespace}/${b.name}`;
    const portName = snap.services.get(svc)?.ports.find((p) => p.port === b.port)?.name ?? '';
    let m = used.get(svc);
    if (!m) used.set(svc, (m = new Map()));
    let s = m.get(portName);
    if (!s) m.set(portName, (s = new Set()));
    for (const g of gws) s.add(g);
  };
  for (const [stateKey, parents] of gw.streamRoutes) {
    if (!stateKey.startsWith('TLSRoute/')) continue;
    const rt = recordsOf(snap, 'TLSRoute').get(stateKey.slice('TLSRoute/'.length));
    if (!rt) continue;
    // The Gateways the route is attached to (a ListenerSet parent's is its Gateway's), not the parentRefs' names.
    const gws = parents.filter((p) => p.accepted.status === 'True').flatMap((p) => p.attached.filter((a) => terminatesTls(a.listener)).map((a) => a.gateway));
    if (gws.length) for (const b of rt.backends) use(b, gws);
  }
  // gw.routes: HTTPRoutes by key, GRPCRoutes by "GRPCRoute/" + key (attach.ts).
  for (const [stateKey, parents] of gw.routes) {
    const grpc = stateKey.startsWith('GRPCRoute/');
    const rt = grpc ? recordsOf(snap, 'GRPCRoute').get(stateKey.slice('GRPCRoute/'.length)) : recordsOf(snap, 'HTTPRoute').get(stateKey);
    if (!rt) continue;
    // The Gateways the route is attached to (a ListenerSet parent's is its Gateway's), not the parentRefs' names.
    const gws = [...new Set(parents.filter((p) => p.accepted.status === 'True').flatMap((p) => p.attached.map((a) => a.gateway)))];
    if (!gws.length) continue;
    for (const rule of rt.rules) for (const b of rule.backends) use(b, gws);
  }
  const out = new Map<string, string[]>();
  for (const p of recordsOf(snap, 'BackendTLSPolicy').values()) {
    const gws = new Set<string>();
    for (const t of p.targets) {
      for (const [portName, s] of used.get(`${p.namespace}/${t.name}`) ?? []) if (t.sectionName === undefined || t.sectionName === portName) for (const g of s) gws.add(g);
    }
    if (gws.size) out.set(p.key, [...gws].sort());
  }
  return out;
}
