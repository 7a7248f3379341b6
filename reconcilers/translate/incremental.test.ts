// The incremental translator must give exactly what the full translation gives. Random sequences of Ingress
// changes (shared hosts and Services, conflicts, canaries, default backends, TLS, rules without host, other
// classes, fail-closed and invalid Ingresses) are applied one by one; after each, the merged result is compared
// with a full translation of the same model: every route, backend, certificate, profile, status and event.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../operator/kube/object.ts';
import { normalizeIngress } from '../model/normalize.ts';
import { normalizeConsumer, normalizePlugin, normalizeRoute, normalizeUpstream } from '../crds/normalize.ts';
import { IncrementalTranslator } from './incremental.ts';
import { translate, type TranslateResult } from './translate.ts';
import { diffConfig } from './diff.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../model/global-config.ts';
import { OPTS, ing, modelOf, rng, rule, slice, svc, svcRef } from './fixtures.test-helpers.ts';

const HOSTS = ['a.example.com', 'b.example.com', 'c.example.com', 'd.example.com', 'e.example.com', 'f.example.com', 'g.example.com', '*.w.example.com', '*.v.example.com', undefined];
const SERVICES = ['s0', 's1', 's2', 's3', 's4', 's5', 's6', 's7', 's8', 's9'];
const PATHS = ['/', '/api', '/api/v1', '/x'];

function randomIngress(r: () => number, name: string, created: string): KubeObject {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const rules = Array.from({ length: 1 + Math.floor(r() * 2) }, () =>
    rule(r() < 0.05 ? undefined : pick(HOSTS.slice(0, -1)), Array.from({ length: 1 + Math.floor(r() * 2) }, () => ({ path: pick(PATHS), pathType: r() < 0.3 ? 'Exact' : 'Prefix', backend: svcRef(pick(SERVICES), 80) }))),
  );
  const annotations: Record<string, string> = {};
  const roll = r();
  if (roll < 0.15) Object.assign(annotations, { 'nginx.ingress.kubernetes.io/canary': 'true', 'nginx.ingress.kubernetes.io/canary-weight': String(Math.floor(r() * 100)) });
  else if (roll < 0.25) annotations['nginx.ingress.kubernetes.io/proxy-body-size'] = pick(['8m', '16m']);
  else if (roll < 0.3) annotations['nginx.ingress.kubernetes.io/auth-tls-verify-client'] = 'on';
  else if (roll < 0.4) annotations['nginx.ingress.kubernetes.io/load-balance'] = 'ewma';
  else if (roll < 0.45) annotations['nginx.ingress.kubernetes.io/proxy-read-timeout'] = '120';
  const spec: Record<string, unknown> = { rules };
  if (r() < 0.15) spec.defaultBackend = svcRef(pick(SERVICES), 80);
  if (r() < 0.2) spec.tls = [{ hosts: ['a.example.com', 'b.example.com'].filter(() => r() < 0.7), secretName: 'tls' }];
  if (r() < 0.08) spec.ingressClassName = 'other';
  if (r() < 0.04) (spec.rules as unknown[]).push(rule('a.example.com', [{ path: 'no-slash', backend: svcRef('s0', 80) }]));
  return ing(name, spec, { created, annotations });
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
  assert.deepStrictEqual(inc.config.structure, full.config.structure, `${where}: structure`);
  assert.deepStrictEqual(new Map([...inc.status].sort()), new Map([...full.status].sort()), `${where}: status`);
  assert.deepStrictEqual(new Map([...eventsByKey(inc)].sort()), new Map([...eventsByKey(full)].sort()), `${where}: events`);
}

for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
  test(`incremental translation equals the full one after every change (seed ${seed})`, () => {
    const r = rng(seed);
    const m = modelOf({
      services: SERVICES.map((s) => svc(s, [{ name: 'http', port: 80, targetPort: 8080 }])),
      slices: SERVICES.map((s, i) => slice(`${s}-x`, s, [{ name: 'http', port: 8080 }], [{ ip: `192.0.2.${i + 1}` }])),
    });
    const t = new IncrementalTranslator({ maxClosureShare: 1 });
    let prev = t.translate(m.snapshot(), OPTS, null);
    const live = new Set<string>();
    let scoped = 0;
    let partial = 0;
    for (let step = 0; step < 60; step++) {
      const name = `i${Math.floor(r() * 30)}`;
      const key = `default/${name}`;
      if (live.has(key) && r() < 0.3) {
        m.deleteIngress(key);
        live.delete(key);
      } else {
        const created = `2026-01-${String(1 + Math.floor(r() * 28)).padStart(2, '0')}T00:00:00Z`;
        const n = normalizeIngress(randomIngress(r, name, created));
        if (n.ok) m.setIngress(n.ingress);
        else m.rejectIngress({ key: n.key, reason: n.reason });
        live.add(key);
      }
      const before = t.stats.scoped;
      const inc = t.translate(m.snapshot(), OPTS, new Set([key]));
      scoped += t.stats.scoped - before;
      if (t.stats.lastTranslated < m.snapshot().ingresses.size) partial++;
      assertSame(inc, translate(m.snapshot(), OPTS), `seed ${seed} step ${step} (${key})`);
      // The diff limited to what the change touched finds exactly what the whole diff finds.
      assert.deepStrictEqual(diffConfig(prev.config, inc.config, inc.touched).delta, diffConfig(prev.config, inc.config).delta, `seed ${seed} step ${step}: scoped diff`);
      prev = inc;
    }
    assert.equal(scoped, 60, 'every step took the scoped path');
    assert.ok(partial >= 5, `the closure was a strict part of the cluster in ${partial} of 60 steps`);
  });
}

test('a change far from the others translates only its closure; other hosts keep their objects', () => {
  const ingresses = Array.from({ length: 400 }, (_, i) => ing(`i${i}`, { rules: [rule(`h${i}.example.com`, [{ path: '/', backend: svcRef(`s${i}`, 80) }])] }));
  const m = modelOf({ services: Array.from({ length: 401 }, (_, i) => svc(`s${i}`, [{ port: 80 }])), ingresses });
  const t = new IncrementalTranslator();
  const first = t.translate(m.snapshot(), OPTS, null);
  const n = normalizeIngress(ing('new', { rules: [rule('new.example.com', [{ path: '/', backend: svcRef('s400', 80) }])] }));
  assert.ok(n.ok);
  m.setIngress(n.ingress);
  const next = t.translate(m.snapshot(), OPTS, new Set(['default/new']));
  assert.equal(t.stats.lastTranslated, 1, 'one Ingress translated');
  assert.equal(next.config.data.routes['h7.example.com'], first.config.data.routes['h7.example.com'], 'same object: the diff skips it');
  assert.ok(next.config.data.routes['new.example.com']);
  assert.equal(t.translate(m.snapshot(), OPTS, new Set()), next, 'nothing changed: the previous result');
});

test('many hosts on one Service: a new Ingress brings in the backend owner only, unless it is older than the owner', () => {
  const created = (d: number) => `2026-02-${String(d).padStart(2, '0')}T00:00:00Z`;
  const ingresses = Array.from({ length: 300 }, (_, i) => ing(`i${i}`, { rules: [rule(`h${i}.example.com`, [{ path: '/', backend: svcRef('shared', 80) }])] }, { created: created(10) }));
  const m = modelOf({ services: [svc('shared', [{ port: 80 }])], ingresses });
  const t = new IncrementalTranslator();
  t.translate(m.snapshot(), OPTS, null);
  const add = (name: string, day: number, annotations: Record<string, string> = {}) => {
    const n = normalizeIngress(ing(name, { rules: [rule(`${name}.example.com`, [{ path: '/', backend: svcRef('shared', 80) }])] }, { created: created(day), annotations }));
    assert.ok(n.ok);
    m.setIngress(n.ingress);
    const r = t.translate(m.snapshot(), OPTS, new Set([n.ingress.key]));
    assertSame(r, translate(m.snapshot(), OPTS), name);
    return r;
  };
  const r = add('newer', 20, { 'nginx.ingress.kubernetes.io/load-balance': 'ewma' });
  assert.ok(t.stats.lastTranslated <= 2, `${t.stats.lastTranslated} Ingresses translated (itself and the owner)`);
  assert.equal(r.config.data.backends.default_shared_80?.balance, 'round_robin', "the owner's settings stay");
  assert.ok(r.events.some((e) => e.ref === 'Ingress/default/newer' && e.reason === 'BackendSettingsConflict'));
  add('older', 1, { 'nginx.ingress.kubernetes.io/load-balance': 'ewma' });
  assert.ok(t.stats.lastTranslated > 300, 'a new owner: every user of the backend is translated again');
  assert.equal(t.translate(m.snapshot(), OPTS, new Set()).config.data.backends.default_shared_80?.balance, 'ewma');
  // The owner moves to another class: the next oldest user's settings apply again.
  const moved = normalizeIngress(ing('older', { ingressClassName: 'other', rules: [rule('older.example.com', [{ path: '/', backend: svcRef('shared', 80) }])] }, { created: created(1) }));
  assert.ok(moved.ok);
  m.setIngress(moved.ingress);
  const after = t.translate(m.snapshot(), OPTS, new Set(['default/older']));
  assertSame(after, translate(m.snapshot(), OPTS), 'owner left');
  assert.equal(after.config.data.backends.default_shared_80?.balance, 'round_robin');
});

// With Portico's own objects in the model — a Route sharing hosts and a Service with the Ingresses, an Upstream on
// another Service, a Plugin some Ingresses name, a Consumer — every change still gives the full translation's
// answer (plugins and consumers included), and changes that none of them reach still take the scoped path.
for (const seed of [11, 12, 13, 14]) {
  test(`incremental translation equals the full one with Routes, Upstreams, Plugins and Consumers present (seed ${seed})`, () => {
    const r = rng(seed);
    const m = modelOf({
      services: SERVICES.map((s) => svc(s, [{ name: 'http', port: 80, targetPort: 8080 }])),
      slices: SERVICES.map((s, i) => slice(`${s}-x`, s, [{ name: 'http', port: 8080 }], [{ ip: `192.0.2.${i + 1}` }])),
    });
    const cr = (kind: string, name: string, spec: unknown) =>
      ({ apiVersion: 'portico.dev/v1alpha1', kind, metadata: { name, namespace: 'default', uid: `u-${name}`, generation: 1, creationTimestamp: '2026-01-15T00:00:00Z' }, spec }) as KubeObject;
    const route = normalizeRoute(cr('Route', 'rt', { hosts: ['g.example.com', 'z.example.com'], rules: [{ matches: [{ path: { value: '/api' } }], backends: [{ service: { name: 's8', port: 80 } }], plugins: ['lim'] }] }));
    const up = normalizeUpstream(cr('Upstream', 'up', { service: { name: 's9' }, loadBalancer: { algorithm: 'EWMA' } }));
    const lim = normalizePlugin(cr('Plugin', 'lim', { type: 'rate-limit', config: { requestsPerSecond: 10 } }), () => undefined);
    const cons = normalizeConsumer(cr('Consumer', 'c', { username: 'c' }), () => undefined);
    assert.ok(route.ok && up.ok && lim.ok && cons.ok);
    m.setCrd('Route', route.record);
    m.setCrd('Upstream', up.record);
    m.setCrd('Plugin', lim.record);
    m.setCrd('Consumer', cons.record);
    const t = new IncrementalTranslator({ maxClosureShare: 1 });
    t.translate(m.snapshot(), OPTS, null);
    let scoped = 0;
    for (let step = 0; step < 60; step++) {
      const name = `i${Math.floor(r() * 30)}`;
      const key = `default/${name}`;
      const created = `2026-01-${String(1 + Math.floor(r() * 28)).padStart(2, '0')}T00:00:00Z`;
      const obj = randomIngress(r, name, created);
      if (r() < 0.2) obj.metadata.annotations = { ...(obj.metadata.annotations ?? {}), 'portico.dev/plugins': 'lim' };
      const n = normalizeIngress(obj);
      if (n.ok) m.setIngress(n.ingress);
      else m.rejectIngress({ key: n.key, reason: n.reason });
      const before = t.stats.scoped;
      const inc = t.translate(m.snapshot(), OPTS, new Set([key]));
      scoped += t.stats.scoped - before;
      const full = translate(m.snapshot(), OPTS);
      assertSame(inc, full, `seed ${seed} step ${step} (${key})`);
      assert.deepStrictEqual(inc.config.data.plugins, full.config.data.plugins, `seed ${seed} step ${step}: plugins`);
      assert.deepStrictEqual(inc.config.data.consumers, full.config.data.consumers, `seed ${seed} step ${step}: consumers`);
    }
    // (This small, densely shared cluster mostly reaches the CRDs: exactness is what this test is for; the scoped
    // path with CRDs present is checked by the next test.)
    assert.ok(scoped >= 0);
  });
}

test('with CRDs present, an Ingress change they do not reach is translated alone; one on a Route\'s host is not', () => {
  const m = modelOf({
    services: [svc('web', [{ port: 80 }]), svc('tuned', [{ port: 80 }])],
    ingresses: Array.from({ length: 50 }, (_, i) => ing(`i${i}`, { rules: [rule(`h${i}.example.com`, [{ path: '/', backend: svcRef('web', 80) }])] }, { created: `2026-01-01T00:00:${String(i).padStart(2, '0')}Z` })),
  });
  const cr = (kind: string, name: string, spec: unknown) =>
    ({ apiVersion: 'portico.dev/v1alpha1', kind, metadata: { name, namespace: 'default', uid: `u-${name}`, generation: 1, creationTimestamp: '2025-12-01T00:00:00Z' }, spec }) as KubeObject;
  const route = normalizeRoute(cr('Route', 'rt', { hosts: ['route.example.com'], rules: [{ backends: [{ service: { name: 'tuned', port: 80 } }], plugins: ['lim'] }] }));
  const up = normalizeUpstream(cr('Upstream', 'up', { service: { name: 'tuned' }, loadBalancer: { algorithm: 'EWMA' } }));
  const lim = normalizePlugin(cr('Plugin', 'lim', { type: 'rate-limit', config: { requestsPerSecond: 10 } }), () => undefined);
  assert.ok(route.ok && up.ok && lim.ok);
  m.setCrd('Route', route.record);
  m.setCrd('Upstream', up.record);
  m.setCrd('Plugin', lim.record);
  const t = new IncrementalTranslator();
  t.translate(m.snapshot(), OPTS, null);
  const add = (name: string, host: string, svcName = 'web') => {
    const n = normalizeIngress(ing(name, { rules: [rule(host, [{ path: '/new', backend: svcRef(svcName, 80) }])] }, { created: '2026-02-01T00:00:00Z' }));
    assert.ok(n.ok);
    m.setIngress(n.ingress);
    return t.translate(m.snapshot(), OPTS, new Set([n.ingress.key]));
  };
  let scopedBefore = t.stats.scoped;
  let r = add('far', 'far.example.com');
  assert.equal(t.stats.scoped, scopedBefore + 1, 'not reached by any CRD: scoped');
  assert.ok(t.stats.lastTranslated <= 2, `${t.stats.lastTranslated} Ingresses translated`);
  assertSame(r, translate(m.snapshot(), OPTS), 'far');
  assert.deepStrictEqual(r.config.data.plugins, translate(m.snapshot(), OPTS).config.data.plugins, 'plugins kept');
  scopedBefore = t.stats.scoped;
  r = add('near', 'route.example.com');
  assert.equal(t.stats.scoped, scopedBefore, "on a Route's host: the full translation");
  assertSame(r, translate(m.snapshot(), OPTS), 'near');
  scopedBefore = t.stats.scoped;
  r = add('tuned', 'tuned.example.com', 'tuned');
  assert.equal(t.stats.scoped, scopedBefore, 'on a Service an Upstream tunes: the full translation');
  assertSame(r, translate(m.snapshot(), OPTS), 'tuned');
});

test('a deleted Ingress that won a path hands it to an older user of a backend: every user of the backend hears of its new owner', () => {
  const created = (d: number) => `2026-03-${String(d).padStart(2, '0')}T00:00:00Z`;
  const add = (m: ReturnType<typeof modelOf>, name: string, host: string, service: string, d: number, annotations: Record<string, string> = {}) => {
    const n = normalizeIngress(ing(name, { rules: [rule(host, [{ path: '/', backend: svcRef(service, 80) }])] }, { created: created(d), annotations }));
    assert.ok(n.ok);
    m.setIngress(n.ingress);
  };
  const m = modelOf({ services: [svc('b', [{ port: 80 }]), svc('y', [{ port: 80 }])] });
  add(m, 'y', 'h.example.com', 'y', 1); // the oldest: wins h.example.com "/"
  add(m, 'x', 'h.example.com', 'b', 2); // loses it, so does not use b
  add(m, 'o', 'o.example.com', 'b', 3, { 'nginx.ingress.kubernetes.io/load-balance': 'ewma' }); // b's owner
  add(m, 'z', 'z.example.com', 'b', 4); // another user of b: its settings differ from the owner's
  const t = new IncrementalTranslator({ maxClosureShare: 1 });
  const before = t.translate(m.snapshot(), OPTS, null);
  assert.ok(before.events.some((e) => e.ref === 'Ingress/default/z' && e.reason === 'BackendSettingsConflict'));
  // y goes: x wins "/" and, older than o, owns b; z's settings are x's, so its Warning goes.
  m.deleteIngress('default/y');
  const after = t.translate(m.snapshot(), OPTS, new Set(['default/y']));
  assert.equal(t.stats.scoped, 1);
  assertSame(after, translate(m.snapshot(), OPTS), 'y deleted');
  assert.ok(!after.events.some((e) => e.ref === 'Ingress/default/z' && e.reason === 'BackendSettingsConflict'));
});

test('with a collector and tracing asked by one Ingress only, a change elsewhere keeps tracing on in nginx.conf', () => {
  const m = modelOf({
    services: [svc('api', [{ port: 80 }]), svc('web', [{ port: 80 }])],
    ingresses: [ing('traced', { rules: [rule('t.example.com', [{ path: '/', backend: svcRef('api', 80) }])] }, { annotations: { 'nginx.ingress.kubernetes.io/enable-opentelemetry': 'true' } })],
  });
  m.setGlobalConfig(parseGlobalConfig({ 'otlp-collector-host': '10.96.0.20' }, defaultGlobalConfig()).values);
  const t = new IncrementalTranslator({ maxClosureShare: 1 });
  assert.ok(t.translate(m.snapshot(), OPTS, null).config.structure.global.tracing);
  const n = normalizeIngress(ing('plain', { rules: [rule('p.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { created: '2026-02-01T00:00:00Z' }));
  assert.ok(n.ok);
  m.setIngress(n.ingress);
  const r = t.translate(m.snapshot(), OPTS, new Set(['default/plain']));
  assert.equal(t.stats.scoped, 1);
  assert.equal(t.stats.lastTranslated, 1, 'the traced Ingress is not in the closure');
  assertSame(r, translate(m.snapshot(), OPTS), 'plain added');
  // The traced Ingress goes: tracing goes off with it.
  m.deleteIngress('default/traced');
  const off = t.translate(m.snapshot(), OPTS, new Set(['default/traced']));
  assertSame(off, translate(m.snapshot(), OPTS), 'traced deleted');
  assert.equal(off.config.structure.global.tracing, undefined);
});

test('the ConfigMap\'s IP lists are plugins every path shares: changes under them are translated in full', () => {
  const m = modelOf({ services: [svc('api', [{ port: 80 }])] });
  m.setGlobalConfig(parseGlobalConfig({ 'whitelist-source-range': '10.0.0.0/8' }, defaultGlobalConfig()).values);
  const t = new IncrementalTranslator({ maxClosureShare: 1 });
  t.translate(m.snapshot(), OPTS, null);
  const n = normalizeIngress(ing('first', { rules: [rule('f.example.com', [{ path: '/', backend: svcRef('api', 80) }])] }));
  assert.ok(n.ok);
  m.setIngress(n.ingress);
  const r = t.translate(m.snapshot(), OPTS, new Set(['default/first']));
  const full = translate(m.snapshot(), OPTS);
  assertSame(r, full, 'first Ingress');
  assert.deepStrictEqual(r.config.data.plugins, full.config.data.plugins, 'the list\'s plugin is there');
  assert.ok(Object.keys(r.config.data.plugins).length > 0);
});

test('--default-backend-service\'s backend keeps its owner\'s settings when a change elsewhere is translated alone', () => {
  const o = { ...OPTS, defaultBackendService: 'default/fallback' };
  const m = modelOf({
    services: [svc('fallback', [{ port: 80 }]), svc('web', [{ port: 80 }])],
    ingresses: [ing('owner', { rules: [rule('f.example.com', [{ path: '/', backend: svcRef('fallback', 80) }])] }, { annotations: { 'nginx.ingress.kubernetes.io/load-balance': 'ewma' } })],
  });
  const t = new IncrementalTranslator({ maxClosureShare: 1 });
  assert.equal(t.translate(m.snapshot(), o, null).config.data.backends.default_fallback_80?.balance, 'ewma');
  const n = normalizeIngress(ing('far', { rules: [rule('far.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { created: '2026-02-01T00:00:00Z' }));
  assert.ok(n.ok);
  m.setIngress(n.ingress);
  const r = t.translate(m.snapshot(), o, new Set(['default/far']));
  assert.equal(t.stats.scoped, 1);
  assertSame(r, translate(m.snapshot(), o), 'far added');
  assert.equal(r.config.data.backends.default_fallback_80?.balance, 'ewma');
});

test('server-alias names are part of an Ingress\'s closure: an alias comes, moves to another Ingress, and goes', () => {
  const m = modelOf({ services: [svc('a', [{ port: 80 }]), svc('b', [{ port: 80 }])] });
  const t = new IncrementalTranslator({ maxClosureShare: 1 });
  t.translate(m.snapshot(), OPTS, null);
  const set = (name: string, host: string, service: string, day: number, alias?: string) => {
    const n = normalizeIngress(ing(name, { rules: [rule(host, [{ path: '/', backend: svcRef(service, 80) }])] }, { created: `2026-04-0${day}T00:00:00Z`, annotations: alias ? { 'nginx.ingress.kubernetes.io/server-alias': alias } : {} }));
    assert.ok(n.ok);
    m.setIngress(n.ingress);
    const r = t.translate(m.snapshot(), OPTS, new Set([n.ingress.key]));
    assertSame(r, translate(m.snapshot(), OPTS), `${name} ${alias ?? '(no alias)'}`);
    return r;
  };
  assert.ok(set('x', 'x.example.com', 'a', 1, 'alias.example.com').config.data.routes['alias.example.com']);
  // A younger Ingress asks for the same alias: skipped (AliasSkipped); then the older one lets it go.
  const skipped = set('y', 'y.example.com', 'b', 2, 'alias.example.com');
  assert.ok(skipped.events.some((e) => e.ref === 'Ingress/default/y' && e.reason === 'AliasSkipped'));
  set('x', 'x.example.com', 'a', 1);
  const moved = set('y', 'y.example.com', 'b', 2, 'alias.example.com');
  assert.equal(moved.config.data.routes['alias.example.com'], moved.config.data.routes['y.example.com']);
  assert.equal(set('y', 'y.example.com', 'b', 2).config.data.routes['alias.example.com'], undefined);
  assert.equal(t.stats.full, 1, 'every change was scoped');
});
