// The incremental translation of HTTPRoute changes must give exactly what the full translation gives. Random
// sequences of HTTPRoute and Ingress changes (creations, edits, deletions; several at once sometimes) over Gateways
// with several listeners — any host, a wildcard hostname, an HTTPS listener with its certificate, routes from the
// same namespace only, from namespaces a selector picks, a Gateway of another controller — are applied one by one;
// after each, the merged result is compared with a full translation of the same model (routes, backends,
// certificates, plugins, structure, every status and event), and the Gateway API state updated in place with one
// computed anew (route parents, listeners' attachedRoutes). Routes share hostnames and Services with each other and
// with Ingresses; some attach nowhere (a listener that does not allow their namespace, hostnames no listener has, a
// Gateway that is not Portico's), some name Services of another namespace with and without a ReferenceGrant.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../operator/kube/object.ts';
import type { Model } from '../model/model.ts';
import { normalizeIngress, normalizeService } from '../model/normalize.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../model/global-config.ts';
import { normalizeGateway } from '../kinds/gateway/normalize.ts';
import { normalizeGatewayClass } from '../kinds/gatewayclass/index.ts';
import { normalizeHttpRoute } from '../kinds/httproute/normalize.ts';
import { normalizeNamespace } from '../kinds/namespace/index.ts';
import { normalizeReferenceGrant } from '../kinds/referencegrant/index.ts';
import { IncrementalTranslator } from './incremental.ts';
import { translate, type TranslateMemo, type TranslateOptions, type TranslateResult } from './translate.ts';
import { diffConfig } from './diff.ts';
import { gatewayApiState, gatewayApiStateAnew, listenerHost, type GatewayApiOptions } from './gateway-api/attach.ts';
import { OPTS, ing, modelOf, rng, rule, slice, svc, svcRef } from './fixtures.test-helpers.ts';

const GA: GatewayApiOptions = { controllerName: 'portico.dev/gateway-controller', reservedPorts: [8080, 8443, 10246] };
const O: TranslateOptions = { ...OPTS, gatewayApi: GA };

const NAMESPACES = ['apps', 'team', 'infra', 'shared'];
const SERVICES = ['s0', 's1', 's2', 's3'];
const ROUTE_HOSTS = ['a.example.com', 'b.example.com', 'c.example.com', 'x.other.org', '*.example.com'];
const INGRESS_HOSTS = ['a.example.com', 'b.example.com', 'i.example.com'];
const PATHS = ['/', '/api', '/api/v1', '/x'];
const PARENTS: Record<string, unknown>[] = [
  { name: 'gw1' },
  { name: 'gw1', sectionName: 'http' },
  { name: 'gw1', sectionName: 'web' },
  { name: 'gw1', sectionName: 'tls' },
  { name: 'gw1', port: 80 },
  { name: 'gw1', sectionName: 'nosuch' },
  { name: 'gw2' },
  { name: 'gw2', sectionName: 'sel' },
  { name: 'gw3' },
  { name: 'nogw' },
];

const meta = (name: string, ns: string | undefined, created: string) => ({ name, ...(ns ? { namespace: ns } : {}), uid: `uid-${ns ?? ''}-${name}`, generation: 1, creationTimestamp: created });
const gwObj = (kind: string, name: string, spec: unknown, ns?: string, extra: Record<string, unknown> = {}) =>
  ({ apiVersion: 'gateway.networking.k8s.io/v1', kind, metadata: { ...meta(name, ns, '2025-06-01T00:00:00Z'), ...extra }, spec }) as KubeObject;
const day = (d: number) => `2026-01-${String(d).padStart(2, '0')}T00:00:00Z`;

function ok<T>(r: { ok: true; record: T } | { ok: false; reason: string }): T {
  if (!r.ok) throw new Error(r.reason);
  return r.record;
}

/** Services in every namespace, two GatewayClasses, three Gateways, labelled Namespaces, a ReferenceGrant, a certificate. */
function cluster(): Model {
  const m = modelOf({
    services: NAMESPACES.flatMap((ns) => SERVICES.map((s) => svc(s, [{ name: 'http', port: 80, targetPort: 8080 }], ns))),
    slices: NAMESPACES.flatMap((ns, j) => SERVICES.map((s, i) => slice(`${s}-x`, s, [{ name: 'http', port: 8080 }], [{ ip: `192.0.${j + 2}.${i + 1}` }], ns))),
  });
  m.setSecret({ key: 'infra/cert', ok: true, cert: 'CERT', privateKey: 'KEY', hosts: ['a.example.com'], notAfter: '2099-01-01T00:00:00.000Z', fingerprint: 'f' });
  for (const [ns, labels] of [['apps', { env: 'prod' }], ['team', { env: 'dev' }], ['infra', {}], ['shared', {}]] as const) {
    m.setCrd('Namespace', ok(normalizeNamespace({ metadata: { ...meta(ns, undefined, '2025-01-01T00:00:00Z'), labels } } as unknown as KubeObject)));
  }
  m.setCrd('GatewayClass', ok(normalizeGatewayClass(gwObj('GatewayClass', 'portico', { controllerName: GA.controllerName }))));
  m.setCrd('GatewayClass', ok(normalizeGatewayClass(gwObj('GatewayClass', 'other', { controllerName: 'example.com/other' }))));
  const all = { namespaces: { from: 'All' } };
  m.setCrd(
    'Gateway',
    ok(
      normalizeGateway(
        gwObj(
          'Gateway',
          'gw1',
          {
            gatewayClassName: 'portico',
            listeners: [
              { name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: all },
              { name: 'web', port: 80, protocol: 'HTTP', hostname: '*.example.com', allowedRoutes: all },
              { name: 'tls', port: 443, protocol: 'HTTPS', hostname: 'a.example.com', tls: { certificateRefs: [{ name: 'cert' }] }, allowedRoutes: all },
            ],
          },
          'infra',
        ),
      ),
    ),
  );
  m.setCrd(
    'Gateway',
    ok(
      normalizeGateway(
        gwObj(
          'Gateway',
          'gw2',
          {
            gatewayClassName: 'portico',
            listeners: [
              { name: 'same', port: 8081, protocol: 'HTTP' },
              { name: 'sel', port: 9090, protocol: 'HTTP', hostname: 'b.example.com', allowedRoutes: { namespaces: { from: 'Selector', selector: { matchLabels: { env: 'prod' } } } } },
            ],
          },
          'infra',
        ),
      ),
    ),
  );
  m.setCrd('Gateway', ok(normalizeGateway(gwObj('Gateway', 'gw3', { gatewayClassName: 'other', listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: all }] }, 'infra'))));
  m.setCrd('ReferenceGrant', ok(normalizeReferenceGrant(gwObj('ReferenceGrant', 'from-apps', { from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'apps' }], to: [{ group: '', kind: 'Service' }] }, 'shared'))));
  return m;
}

function randomRoute(r: () => number, name: string, ns: string, created: string): KubeObject {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const some = <T>(xs: readonly T[], max: number): T[] => [...new Set(Array.from({ length: Math.floor(r() * (max + 1)) }, () => pick(xs)))];
  const backendRef = () => {
    const roll = r();
    const name = roll < 0.05 ? 'missing' : pick(SERVICES);
    // A backendRef's own filter (a plugin of its share only, or of the route when it is the only backend).
    const own = r() < 0.2 ? { filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'backend', value: name }] } }] } : {};
    return { name, port: 80, weight: 1 + Math.floor(r() * 3), ...(roll > 0.85 ? { namespace: 'shared' } : {}), ...own };
  };
  const rules = Array.from({ length: 1 + Math.floor(r() * 2) }, () => {
    const matches = Array.from({ length: Math.floor(r() * 3) }, () => ({
      path: { type: r() < 0.3 ? 'Exact' : 'PathPrefix', value: pick(PATHS) },
      ...(r() < 0.15 ? { headers: [{ name: 'x-v', value: pick(['1', '2']) }] } : {}),
      ...(r() < 0.1 ? { method: 'GET' } : {}),
    }));
    const filters: unknown[] = [];
    if (r() < 0.25) filters.push({ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-a', value: pick(['1', '2']) }] } });
    if (r() < 0.1) filters.push({ type: 'RequestMirror', requestMirror: { backendRef: { name: pick(SERVICES), port: 80 } } });
    if (r() < 0.05) filters.push({ type: 'URLRewrite', urlRewrite: { hostname: 'rewritten.example.com' } });
    // A Plugin object that does not exist: the rule fails closed (and the change is translated in full).
    if (r() < 0.01) filters.push({ type: 'ExtensionRef', extensionRef: { group: 'portico.dev', kind: 'Plugin', name: 'lim' } });
    // A filter Portico does not serve: the route is refused by its normalizer.
    if (r() < 0.03) filters.push({ type: 'Unknown' });
    return {
      ...(matches.length ? { matches } : {}),
      ...(filters.length ? { filters } : {}),
      backendRefs: Array.from({ length: Math.floor(r() * 3) }, backendRef),
      ...(r() < 0.1 ? { timeouts: { request: '5s' } } : {}),
    };
  });
  const parentRefs = some(PARENTS, 2).map((p) => ({ ...p, namespace: 'infra' }));
  return { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: meta(name, ns, created), spec: { parentRefs, hostnames: some(ROUTE_HOSTS, 2), rules } } as KubeObject;
}

function randomIngress(r: () => number, name: string, ns: string, created: string): KubeObject {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const annotations: Record<string, string> = {};
  const roll = r();
  if (roll < 0.2) annotations['nginx.ingress.kubernetes.io/load-balance'] = 'ewma';
  else if (roll < 0.3) annotations['nginx.ingress.kubernetes.io/proxy-body-size'] = '8m';
  else if (roll < 0.36) Object.assign(annotations, { 'nginx.ingress.kubernetes.io/canary': 'true', 'nginx.ingress.kubernetes.io/canary-weight': '20' });
  const rules = [rule(pick(INGRESS_HOSTS), [{ path: pick(PATHS), backend: svcRef(pick(SERVICES), 80) }])];
  return ing(name, { rules }, { ns, created, annotations });
}

function eventsByKey(r: TranslateResult): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const e of r.events) out.set(e.ref, [...(out.get(e.ref) ?? []), `${e.type} ${e.reason} ${e.message}`]);
  for (const v of out.values()) v.sort();
  return out;
}

function assertSame(inc: TranslateResult, full: TranslateResult, where: string): void {
  assert.deepStrictEqual(inc.config.data.routes, full.config.data.routes, `${where}: routes`);
  assert.deepStrictEqual(inc.config.data.backends, full.config.data.backends, `${where}: backends`);
  assert.deepStrictEqual(inc.config.data.certificates, full.config.data.certificates, `${where}: certificates`);
  assert.deepStrictEqual(inc.config.data.plugins, full.config.data.plugins, `${where}: plugins`);
  assert.deepStrictEqual(inc.config.data.consumers, full.config.data.consumers, `${where}: consumers`);
  assert.deepStrictEqual(inc.config.structure, full.config.structure, `${where}: structure`);
  assert.deepStrictEqual(new Map([...inc.status].sort()), new Map([...full.status].sort()), `${where}: status`);
  assert.deepStrictEqual(new Map([...eventsByKey(inc)].sort()), new Map([...eventsByKey(full)].sort()), `${where}: events`);
}

/** A change of one object: an HTTPRoute (75%) or an Ingress, set or deleted. Returns its kind and key. */
function change(r: () => number, m: Model, live: Set<string>): { kind: 'HTTPRoute' | 'Ingress'; key: string } {
  const route = r() < 0.75;
  const i = Math.floor(r() * (route ? 24 : 10));
  const ns = NAMESPACES[i % NAMESPACES.length] as string;
  const name = `${route ? 'r' : 'i'}${i}`;
  const key = `${ns}/${name}`;
  const id = `${route ? 'HTTPRoute' : 'Ingress'}/${key}`;
  const created = day(1 + Math.floor(r() * 28));
  if (live.has(id) && r() < 0.25) {
    if (route) m.deleteCrd('HTTPRoute', key);
    else m.deleteIngress(key);
    live.delete(id);
  } else if (route) {
    const n = normalizeHttpRoute(randomRoute(r, name, ns, created));
    if (n.ok) m.setCrd('HTTPRoute', n.record);
    else m.rejectCrd('HTTPRoute', { key, generation: 1, reason: n.reason });
    live.add(id);
  } else {
    const n = normalizeIngress(randomIngress(r, name, ns, created));
    if (n.ok) m.setIngress(n.ingress);
    else m.rejectIngress({ key: n.key, reason: n.reason });
    live.add(id);
  }
  return { kind: route ? 'HTTPRoute' : 'Ingress', key };
}

// Besides the defaults: per-request metrics (route labels), namespace-exclusive-hosts (the first namespace to
// claim a host keeps it), --default-backend-service (every host's routes name its backend).
const VARIANTS: { name: string; o: TranslateOptions; exclusive?: boolean }[] = [
  { name: 'defaults', o: O },
  { name: 'metrics', o: { ...O, metrics: { undefinedHosts: false, buckets: { time: [0.1, 1], length: [100], size: [1000] } } } },
  { name: 'namespace-exclusive-hosts', o: O, exclusive: true },
  { name: 'default-backend-service', o: { ...O, defaultBackendService: 'apps/s3' } },
];

for (const [seed, variant] of [21, 22, 23, 24, 25, 26, 27, 28, 29].map((s, i) => [s, VARIANTS[i % VARIANTS.length]!] as const)) {
  test(`incremental translation of HTTPRoute and Ingress changes equals the full one after every change (seed ${seed}, ${variant.name})`, () => {
    const O = variant.o;
    const r = rng(seed);
    const m = cluster();
    if (variant.exclusive) m.setGlobalConfig(parseGlobalConfig({ 'namespace-exclusive-hosts': 'true' }, defaultGlobalConfig()).values);
    const t = new IncrementalTranslator({ maxClosureShare: 1 });
    let prev = t.translate(m.snapshot(), O, null);
    const live = new Set<string>();
    let scoped = 0;
    let partial = 0;
    const STEPS = 80;
    for (let step = 0; step < STEPS; step++) {
      const ingresses = new Set<string>();
      const routes = new Set<string>();
      const n = r() < 0.15 ? 2 + Math.floor(r() * 2) : 1;
      for (let j = 0; j < n; j++) {
        const c = change(r, m, live);
        (c.kind === 'HTTPRoute' ? routes : ingresses).add(c.key);
      }
      const snap = m.snapshot();
      const before = t.stats.scoped;
      const inc = t.translate(snap, O, ingresses, routes);
      scoped += t.stats.scoped - before;
      if (t.stats.lastTranslated < snap.ingresses.size + (snap.crds.HTTPRoute?.size ?? 0)) partial++;
      const where = `seed ${seed} step ${step} (${[...ingresses, ...routes].join(', ')})`;
      assertSame(inc, translate(snap, O), where);
      assert.deepStrictEqual(gatewayApiState(snap, GA), gatewayApiStateAnew(snap, GA), `${where}: Gateway API state`);
      // The diff limited to what the change touched finds exactly what the whole diff finds.
      assert.deepStrictEqual(diffConfig(prev.config, inc.config, inc.touched).delta, diffConfig(prev.config, inc.config).delta, `${where}: scoped diff`);
      prev = inc;
    }
    // Changes the merge cannot follow (a Plugin object named) run the full translation; the others are scoped.
    assert.ok(scoped >= STEPS * 0.6, `${scoped} of ${STEPS} steps took the scoped path`);
    assert.ok(partial >= 10, `the closure was a strict part of the cluster in ${partial} of ${STEPS} steps`);
  });
}

/** N routes on gw1's "http" listener, each with its own hostname and Service (the routes are older than what comes next). */
function many(n: number): Model {
  const m = cluster();
  for (let i = 0; i < n; i++) {
    const o = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: meta(`r${i}`, 'apps', day(1)), spec: { parentRefs: [{ name: 'gw1', namespace: 'infra', sectionName: 'http' }], hostnames: [`h${i}.example.org`], rules: [{ backendRefs: [{ name: SERVICES[i % SERVICES.length], port: 80 }] }] } };
    m.setCrd('HTTPRoute', ok(normalizeHttpRoute(o as unknown as KubeObject)));
  }
  return m;
}

const simple = (name: string, hostname: string, service: string, created = day(10), extra: Record<string, unknown> = {}) =>
  ok(normalizeHttpRoute({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: meta(name, 'apps', created), spec: { parentRefs: [{ name: 'gw1', namespace: 'infra', sectionName: 'http' }], hostnames: [hostname], rules: [{ backendRefs: [{ name: service, port: 80 }], ...extra }] } } as unknown as KubeObject));

test('a new, an edited and a deleted HTTPRoute far from the others translate only themselves; the others keep their objects', () => {
  const m = many(300);
  const t = new IncrementalTranslator();
  const first = t.translate(m.snapshot(), O, null);
  const port = gatewayApiState(m.snapshot(), GA).gateways.get('infra/gw1')!.listeners[0]!.podPort!;
  const attached = () => gatewayApiState(m.snapshot(), GA).gateways.get('infra/gw1')!.listeners[0]!.attachedRoutes;
  assert.equal(attached(), 300);
  // The Services are shared by 75 routes each: a new route is translated with the Service's owner, nothing more.
  m.setCrd('HTTPRoute', simple('new', 'new.example.org', 's1', day(20), { filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-new', value: '1' }] } }] }));
  let next = t.translate(m.snapshot(), O, new Set(), new Set(['apps/new']));
  assert.equal(t.stats.scoped, 1);
  assert.ok(t.stats.lastTranslated <= 2, `${t.stats.lastTranslated} objects translated (the route and its backend's owner)`);
  assertSame(next, translate(m.snapshot(), O), 'new');
  assert.equal(next.config.data.routes[listenerHost(port, 'h7.example.org')], first.config.data.routes[listenerHost(port, 'h7.example.org')], 'same object: the diff skips it');
  const added = next.config.data.routes[listenerHost(port, 'new.example.org')];
  assert.ok(added?.rules[0]?.route.plugins?.length, 'its filter is a plugin of its own');
  assert.equal(next.status.get('HTTPRoute/apps/new')?.programmed, true);
  assert.equal(attached(), 301, 'the listener counts it');
  // Edited: another hostname (the old one goes), another filter value (its old plugin goes).
  m.setCrd('HTTPRoute', simple('new', 'moved.example.org', 's1', day(20), { filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-new', value: '2' }] } }] }));
  next = t.translate(m.snapshot(), O, new Set(), new Set(['apps/new']));
  assert.equal(t.stats.scoped, 2);
  assertSame(next, translate(m.snapshot(), O), 'edited');
  assert.equal(next.config.data.routes[listenerHost(port, 'new.example.org')], undefined);
  assert.ok(next.config.data.routes[listenerHost(port, 'moved.example.org')]);
  assert.equal(Object.keys(next.config.data.plugins).length, 1, 'one plugin: the edited filter\'s');
  // Deleted: its host, its plugin, its status go; the count goes down.
  m.deleteCrd('HTTPRoute', 'apps/new');
  next = t.translate(m.snapshot(), O, new Set(), new Set(['apps/new']));
  assert.equal(t.stats.scoped, 3);
  assertSame(next, translate(m.snapshot(), O), 'deleted');
  assert.deepEqual(next.config.data.plugins, {});
  assert.equal(next.status.has('HTTPRoute/apps/new'), false);
  assert.equal(attached(), 300);
  assert.equal(t.stats.full, 1, 'no full translation after the first');
});

test('routes sharing a hostname are translated together; the older one keeps a path both claim', () => {
  const m = many(50);
  const t = new IncrementalTranslator();
  t.translate(m.snapshot(), O, null);
  m.setCrd('HTTPRoute', simple('twin', 'h3.example.org', 's2', day(20)));
  const r = t.translate(m.snapshot(), O, new Set(), new Set(['apps/twin']));
  assertSame(r, translate(m.snapshot(), O), 'twin');
  assert.equal(t.stats.scoped, 1);
  assert.ok(t.stats.lastTranslated >= 2 && t.stats.lastTranslated < 10, `${t.stats.lastTranslated} objects translated`);
  assert.ok(r.events.some((e) => e.ref === 'HTTPRoute/apps/twin' && e.reason === 'Conflict'), 'the younger route hears that its path is served by the older one');
});

test('an Ingress owning a Service\'s backend keeps its settings when an HTTPRoute on that Service comes and goes', () => {
  const m = many(40);
  const n = normalizeIngress(ing('old', { rules: [rule('i.example.com', [{ path: '/', backend: svcRef('s3', 80) }])] }, { ns: 'apps', created: '2025-01-01T00:00:00Z', annotations: { 'nginx.ingress.kubernetes.io/load-balance': 'ewma' } }));
  assert.ok(n.ok);
  m.setIngress(n.ingress);
  const t = new IncrementalTranslator();
  t.translate(m.snapshot(), O, null);
  m.setCrd('HTTPRoute', simple('on-s3', 'on-s3.example.org', 's3', day(20)));
  let r = t.translate(m.snapshot(), O, new Set(), new Set(['apps/on-s3']));
  assertSame(r, translate(m.snapshot(), O), 'added');
  assert.equal(t.stats.scoped, 1);
  assert.ok(t.stats.lastTranslated <= 2, `${t.stats.lastTranslated} objects translated (the route and the Ingress owning apps_s3_80)`);
  assert.equal(r.config.data.backends.apps_s3_80?.balance, 'ewma');
  m.deleteCrd('HTTPRoute', 'apps/on-s3');
  r = t.translate(m.snapshot(), O, new Set(), new Set(['apps/on-s3']));
  assertSame(r, translate(m.snapshot(), O), 'deleted');
  assert.equal(r.config.data.backends.apps_s3_80?.balance, 'ewma');
});

test('without a translation of their own, HTTPRoute changes are exact in the Gateway API state; a Gateway change recomputes it', () => {
  const m = many(20);
  const s = gatewayApiState(m.snapshot(), GA);
  m.setCrd('HTTPRoute', simple('late', 'late.example.org', 's0'));
  assert.equal(gatewayApiState(m.snapshot(), GA), s, 'updated in place');
  assert.deepStrictEqual(gatewayApiState(m.snapshot(), GA), gatewayApiStateAnew(m.snapshot(), GA));
  assert.equal(s.gateways.get('infra/gw1')!.listeners[0]!.attachedRoutes, 21);
  // A Service a route names goes away: that route's ResolvedRefs changes (the state is computed anew).
  m.deleteService('apps/s0');
  const after = gatewayApiState(m.snapshot(), GA);
  assert.equal(after.routes.get('apps/late')?.[0]?.resolvedRefs.reason, 'BackendNotFound');
  assert.deepStrictEqual(after, gatewayApiStateAnew(m.snapshot(), GA));
  // A Gateway change: a listener less.
  m.setCrd('Gateway', ok(normalizeGateway(gwObj('Gateway', 'gw1', { gatewayClassName: 'portico', listeners: [{ name: 'web', port: 80, protocol: 'HTTP', hostname: '*.example.com', allowedRoutes: { namespaces: { from: 'All' } } }] }, 'infra'))));
  const gw = gatewayApiState(m.snapshot(), GA);
  assert.equal(gw.routes.get('apps/late')?.[0]?.accepted.reason, 'NoMatchingParent');
  assert.deepStrictEqual(gw, gatewayApiStateAnew(m.snapshot(), GA));
});

test('between full translations, the memo forgets the hosts and backends of routes that came and went', () => {
  const m = many(20);
  for (let i = 0; i < 30; i++) m.setService(normalizeService(svc(`churn${i}`, [{ port: 80 }], 'apps')));
  const t = new IncrementalTranslator();
  t.translate(m.snapshot(), O, null);
  // (The memo is the translator's own: looked at here only to see that it does not grow.)
  const memo = (t as unknown as { memo: TranslateMemo }).memo;
  const hosts = memo.hosts.size;
  const backends = memo.backends.size;
  for (let i = 0; i < 30; i++) {
    m.setCrd('HTTPRoute', simple(`churn${i}`, `churn${i}.example.org`, `churn${i}`));
    t.translate(m.snapshot(), O, new Set(), new Set([`apps/churn${i}`]));
    m.deleteCrd('HTTPRoute', `apps/churn${i}`);
    t.translate(m.snapshot(), O, new Set(), new Set([`apps/churn${i}`]));
  }
  assert.equal(t.stats.full, 1, 'every change after the first translation was scoped');
  assert.equal(memo.hosts.size, hosts);
  assert.equal(memo.backends.size, backends);
});
