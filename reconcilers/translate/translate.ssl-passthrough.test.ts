// ingress-nginx's ssl-passthrough in the pure translation: without --enable-ssl-passthrough the annotation is refused
// with a Warning naming the flag (and nothing changes); with it, which host passes its TLS to which Service port (the
// "/" path, else the defaultBackend, else the first path), conflicts (the oldest Ingress serving a host decides),
// the routes of passthrough hosts (plain HTTP kept, marked for the 421 over HTTPS), exact hosts left terminated under
// a passthrough wildcard, and the incremental translation giving what the full one gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../operator/kube/object.ts';
import { normalizeIngress } from '../model/normalize.ts';
import { IncrementalTranslator } from './incremental.ts';
import { passthroughTarget, translate, type TranslateResult } from './translate.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from './fixtures.test-helpers.ts';

const PT = { 'nginx.ingress.kubernetes.io/ssl-passthrough': 'true' };
const ON = { ...OPTS, sslPassthrough: true };
const services = [svc('vault', [{ name: 'https', port: 8200 }]), svc('web', [{ port: 80 }]), svc('other', [{ port: 443 }])];
const slices = [slice('vault-1', 'vault', [{ name: 'https', port: 8200 }], [{ ip: '10.0.0.5' }]), slice('web-1', 'web', [{ port: 8080 }], [{ ip: '10.0.0.6' }])];
const warnings = (r: TranslateResult, ref: string) => r.events.filter((e) => e.ref === ref && e.type === 'Warning').map((e) => `${e.reason}: ${e.message}`);
const hostsOf = (r: TranslateResult) => r.config.structure.passthrough?.hosts.map((h) => `${h.host} → ${h.namespace}/${h.service}:${h.servicePort} (${h.source})`);

test('without --enable-ssl-passthrough: the annotation is refused with a Warning naming the flag; TLS is terminated as before', () => {
  const m = modelOf({
    services,
    slices,
    ingresses: [
      ing('vault', { tls: [{ hosts: ['vault.example.com'] }], rules: [rule('vault.example.com', [{ path: '/', backend: svcRef('vault', 'https') }])] }, { annotations: PT }),
      ing('off', { rules: [rule('off.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { 'nginx.ingress.kubernetes.io/ssl-passthrough': 'false' } }),
    ],
  });
  const r = translate(m.snapshot(), OPTS);
  assert.deepEqual(warnings(r, 'Ingress/default/vault'), [
    'UnsupportedAnnotation: annotation nginx.ingress.kubernetes.io/ssl-passthrough needs the controller flag --enable-ssl-passthrough (off by default, as in ingress-nginx): it is ignored and Portico terminates TLS for this Ingress\'s hosts',
  ]);
  assert.deepEqual(warnings(r, 'Ingress/default/off'), [], '"false" says nothing');
  assert.equal(r.config.structure.passthrough, undefined, 'no passthrough section at all: nginx.conf is what it was');
  assert.equal(r.config.data.routes['vault.example.com']?.passthrough, undefined);
  assert.equal(r.config.data.routes['vault.example.com']?.tls, true);
  assert.equal(r.status.get('Ingress/default/vault')?.programmed, true);
  // The same model with the flag: only the annotation's meaning changes.
  const on = translate(m.snapshot(), ON);
  assert.deepEqual(warnings(on, 'Ingress/default/vault'), []);
  assert.deepEqual(hostsOf(on), ['vault.example.com → default/vault:https (Ingress/default/vault)']);
});

test('with the flag: TLS of each host goes to its "/" path\'s Service port; plain HTTP keeps the routes, marked passthrough', () => {
  const m = modelOf({
    services,
    slices,
    ingresses: [
      ing('vault', {
        rules: [
          rule('vault.example.com', [{ path: '/ui', backend: svcRef('web', 80) }, { path: '/', backend: svcRef('vault', 'https') }]),
          rule('*.pt.example.com', [{ path: '/', pathType: 'Exact', backend: svcRef('vault', 8200) }]),
        ],
      }, { annotations: { ...PT, 'nginx.ingress.kubernetes.io/force-ssl-redirect': 'true' } }),
    ],
  });
  const r = translate(m.snapshot(), ON);
  assert.deepEqual(hostsOf(r), ['*.pt.example.com → default/vault:8200 (Ingress/default/vault)', 'vault.example.com → default/vault:https (Ingress/default/vault)']);
  assert.deepEqual(r.config.structure.passthrough?.terminated, []);
  const routes = r.config.data.routes['vault.example.com'];
  assert.equal(routes?.passthrough, true);
  assert.deepEqual(routes?.rules.map((x) => [x.path, x.route.backendId, x.route.sslRedirect]), [['/ui', 'default_web_80', true], ['/', 'default_vault_https', true]], 'plain HTTP: the Ingress as usual (force-ssl-redirect sends it to HTTPS, which is passed through)');
  assert.equal(r.config.data.routes['*.pt.example.com']?.passthrough, true);
  const normal = r.events.filter((e) => e.type === 'Normal' && e.reason === 'Passthrough').map((e) => e.message);
  assert.deepEqual(normal, [
    'TLS connections for vault.example.com go undecrypted to service default/vault port https (its "/" path); its other paths (/ui) are served over plain HTTP only',
    'TLS connections for *.pt.example.com go undecrypted to service default/vault port 8200 (its "/" path)',
  ]);
  assert.deepEqual(warnings(r, 'Ingress/default/vault'), []);
});

test('the target without a "/" path: the defaultBackend, else the first path; a host with neither is refused', () => {
  const withDefault = normalizeIngress(ing('d', { defaultBackend: svcRef('other', 443), rules: [rule('d.example.com', [{ path: '/a', backend: svcRef('web', 80) }])] }, { annotations: PT }));
  const firstPath = normalizeIngress(ing('f', { rules: [rule('f.example.com', [{ path: '/b', backend: svcRef('web', 80) }, { path: '/c', backend: svcRef('vault', 8200) }])] }, { annotations: PT }));
  assert.ok(withDefault.ok && firstPath.ok);
  assert.deepEqual(passthroughTarget(withDefault.ingress, 'd.example.com'), { ref: { service: 'other', port: { number: 443 } }, via: 'the Ingress\'s defaultBackend (no "/" path)', paths: ['/a'] });
  assert.deepEqual(passthroughTarget(firstPath.ingress, 'f.example.com'), { ref: { service: 'web', port: { number: 80 } }, via: 'its first path /b (no "/" path, no defaultBackend)', paths: ['/c'] });
  assert.equal(passthroughTarget(firstPath.ingress, 'nothing.example.com'), null);
  const m = modelOf({ services, slices, ingresses: [ing('d', { defaultBackend: svcRef('other', 443), rules: [rule('d.example.com', [{ path: '/a', backend: svcRef('web', 80) }])] }, { annotations: PT })] });
  assert.deepEqual(hostsOf(translate(m.snapshot(), ON)), ['d.example.com → default/other:443 (Ingress/default/d)']);
});

test('conflicts: the oldest Ingress serving a host decides; the younger one gets a Warning saying what happens', () => {
  const m = modelOf({
    services,
    slices,
    ingresses: [
      // Oldest: passes a.example.com through.
      ing('pt-old', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('vault', 8200) }])] }, { created: '2026-01-01T00:00:00Z', annotations: PT }),
      // Younger passthrough on the same host: refused, its other host is passed through.
      ing('pt-young', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('other', 443) }]), rule('c.example.com', [{ path: '/', backend: svcRef('other', 443) }])] }, { created: '2026-01-03T00:00:00Z', annotations: PT }),
      // Older terminated Ingress on b.example.com: a younger passthrough Ingress cannot take it.
      ing('web', { tls: [{ hosts: ['b.example.com'] }], rules: [rule('b.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { created: '2026-01-01T00:00:00Z' }),
      ing('pt-b', { rules: [rule('b.example.com', [{ path: '/', backend: svcRef('vault', 8200) }])] }, { created: '2026-01-02T00:00:00Z', annotations: PT }),
      // Younger terminated Ingress on a passthrough host: its paths are plain HTTP only.
      ing('late', { rules: [rule('a.example.com', [{ path: '/late', backend: svcRef('web', 80) }])] }, { created: '2026-01-05T00:00:00Z' }),
      // Rules without host cannot be passed through; neither can a canary.
      ing('nohost', { rules: [rule(undefined, [{ path: '/', backend: svcRef('web', 80) }])] }, { created: '2026-01-06T00:00:00Z', annotations: PT }),
      ing('canary', { rules: [rule('c.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { created: '2026-01-07T00:00:00Z', annotations: { ...PT, 'nginx.ingress.kubernetes.io/canary': 'true', 'nginx.ingress.kubernetes.io/canary-weight': '10' } }),
    ],
  });
  const r = translate(m.snapshot(), ON);
  assert.deepEqual(hostsOf(r), ['a.example.com → default/vault:8200 (Ingress/default/pt-old)', 'c.example.com → default/other:443 (Ingress/default/pt-young)']);
  assert.ok(warnings(r, 'Ingress/default/pt-young').includes('PassthroughConflict: ssl-passthrough: host a.example.com is already passed through by Ingress default/pt-old, which is older; this Ingress\'s rules for a.example.com are served over plain HTTP only'), warnings(r, 'Ingress/default/pt-young').join('\n'));
  assert.ok(warnings(r, 'Ingress/default/pt-b').includes('PassthroughConflict: ssl-passthrough: host b.example.com is already served by Ingress default/web, which is older and does not pass TLS through; Portico terminates TLS for b.example.com and the annotation is ignored for it'), warnings(r, 'Ingress/default/pt-b').join('\n'));
  assert.equal(r.config.data.routes['b.example.com']?.passthrough, undefined, 'b.example.com stays terminated');
  assert.deepEqual(warnings(r, 'Ingress/default/late'), ['PassthroughHost: host a.example.com is passed through by Ingress default/pt-old (ssl-passthrough, older): its TLS connections go undecrypted to that Ingress\'s backend, and the paths of Ingress default/late on a.example.com are served over plain HTTP only']);
  assert.deepEqual(r.config.data.routes['a.example.com']?.rules.map((x) => x.path), ['/late', '/'], 'both Ingresses keep their plain-HTTP paths');
  assert.deepEqual(warnings(r, 'Ingress/default/nohost'), ['PassthroughIgnored: ssl-passthrough: rules without a host cannot be passed through (the server name of the TLS connection decides); they are served as usual']);
  assert.deepEqual(warnings(r, 'Ingress/default/canary'), ['PassthroughIgnored: annotation nginx.ingress.kubernetes.io/ssl-passthrough is ignored on a canary Ingress (its traffic is the main Ingress\'s)']);
  for (const k of ['pt-old', 'pt-young', 'web', 'late', 'nohost']) assert.equal(r.status.get(`Ingress/default/${k}`)?.programmed, true, k);
});

test('a passthrough wildcard leaves exact hosts with routes of their own terminated; an alias of a passthrough host is not passed through', () => {
  const m = modelOf({
    services,
    slices,
    ingresses: [
      ing('wild', { rules: [rule('*.w.example.com', [{ path: '/', backend: svcRef('vault', 8200) }])] }, { created: '2026-01-02T00:00:00Z', annotations: PT }),
      ing('exact', { rules: [rule('x.w.example.com', [{ path: '/', backend: svcRef('web', 80) }]), rule('y.z.w.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { created: '2026-01-03T00:00:00Z' }),
      ing('pt', { rules: [rule('p.example.com', [{ path: '/', backend: svcRef('vault', 8200) }])] }, { created: '2026-01-04T00:00:00Z', annotations: { ...PT, 'nginx.ingress.kubernetes.io/server-alias': 'alias.example.com' } }),
    ],
  });
  const r = translate(m.snapshot(), ON);
  assert.deepEqual(r.config.structure.passthrough?.terminated, ['x.w.example.com'], 'one label under the wildcard only (y.z.w is not covered)');
  assert.equal(r.config.data.routes['p.example.com']?.passthrough, true);
  assert.equal(r.config.data.routes['alias.example.com']?.passthrough, undefined);
  assert.deepEqual(r.config.data.routes['alias.example.com']?.rules, r.config.data.routes['p.example.com']?.rules);
});

test('access control of a passthrough Ingress applies to plain HTTP only: a Warning says so (as ingress-nginx, TLS passes untouched)', () => {
  const m = modelOf({
    services,
    slices,
    ingresses: [
      ing('guarded', { rules: [rule('g.example.com', [{ path: '/', backend: svcRef('vault', 8200) }]), rule('h.example.com', [{ path: '/', backend: svcRef('vault', 8200) }])] }, {
        annotations: { ...PT, 'nginx.ingress.kubernetes.io/whitelist-source-range': '10.0.0.0/8', 'nginx.ingress.kubernetes.io/auth-type': 'digest' },
      }),
    ],
  });
  const r = translate(m.snapshot(), ON);
  assert.deepEqual(hostsOf(r), ['g.example.com → default/vault:8200 (Ingress/default/guarded)', 'h.example.com → default/vault:8200 (Ingress/default/guarded)']);
  const w = warnings(r, 'Ingress/default/guarded').filter((x) => x.startsWith('PassthroughAccessControl'));
  assert.deepEqual(w, ['PassthroughAccessControl: ssl-passthrough: the access control of nginx.ingress.kubernetes.io/auth-type, nginx.ingress.kubernetes.io/whitelist-source-range does not apply to the TLS connections passed through (they are never decrypted; ingress-nginx ignores it there too), only to plain-HTTP requests'], 'once per Ingress');
  // Plain HTTP still fails closed for the access control Portico cannot apply (digest authentication without an
  // auth-secret).
  assert.equal(r.config.data.routes['g.example.com']?.rules[0]?.route.action, 'unavailable');
});

test('the flag without any passthrough Ingress: an empty passthrough section (every HTTPS connection is checked first)', () => {
  const r = translate(modelOf({ services, ingresses: [ing('web', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] })] }).snapshot(), ON);
  assert.deepEqual(r.config.structure.passthrough, { hosts: [], terminated: [] });
  assert.equal(r.config.data.routes['a.example.com']?.passthrough, undefined);
});

/** A small deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

for (const seed of [11, 12, 13]) {
  test(`incremental translation with passthrough Ingresses equals the full one after every change (seed ${seed})`, () => {
    const r = rng(seed);
    const hosts = ['a.example.com', 'b.example.com', 'x.w.example.com', '*.w.example.com', 'c.example.com'];
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
    const m = modelOf({ services, slices });
    const t = new IncrementalTranslator({ maxClosureShare: 1 });
    t.translate(m.snapshot(), ON, null);
    let passthroughSeen = 0;
    for (let step = 0; step < 40; step++) {
      const name = `i${Math.floor(r() * 10)}`;
      const key = `default/${name}`;
      if (r() < 0.2) m.deleteIngress(key);
      else {
        const obj: KubeObject = ing(name, { rules: [rule(pick(hosts), [{ path: pick(['/', '/x']), backend: svcRef(pick(['web', 'vault', 'other']), pick([80, 8200, 443])) }])] }, {
          created: `2026-01-${String(1 + Math.floor(r() * 20)).padStart(2, '0')}T00:00:00Z`,
          annotations: r() < 0.4 ? PT : {},
        });
        const n = normalizeIngress(obj);
        assert.ok(n.ok);
        m.setIngress(n.ingress);
      }
      const inc = t.translate(m.snapshot(), ON, new Set([key]));
      const full = translate(m.snapshot(), ON);
      if (full.config.structure.passthrough?.hosts.length) passthroughSeen++;
      assert.deepStrictEqual(inc.config.structure, full.config.structure, `seed ${seed} step ${step}: structure`);
      assert.deepStrictEqual(inc.config.data.routes, full.config.data.routes, `seed ${seed} step ${step}: routes`);
      const ev = (x: TranslateResult) => x.events.map((e) => `${e.ref} ${e.reason} ${e.message}`).sort();
      assert.deepStrictEqual(ev(inc), ev(full), `seed ${seed} step ${step}: events`);
    }
    assert.ok(passthroughSeen >= 5, `passthrough hosts existed in ${passthroughSeen} of 40 steps`);
  });
}
