// Table tests in the spirit of Contour's dag builder tests: Kubernetes objects in, gateway configuration out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { translate } from './translate.ts';
import { diffConfig } from './diff.ts';
import { OPTS, ing, modelOf, portico, rule, slice, svc, svcRef } from './fixtures.test-helpers.ts';

const web = svc('web', [{ name: 'http', port: 80, targetPort: 'http' }]);
const webSlice = slice('web-abc', 'web', [{ name: 'http', port: 8080 }], [{ ip: '10.0.0.2' }, { ip: '10.0.0.1' }]);

const locs = (r: ReturnType<typeof translate>, host: string) =>
  r.config.data.routes[host]?.rules.map((l) => `${l.match} ${l.path} -> ${l.route.backendId}`);

test('exact and prefix paths, named service port resolved through the slice port', () => {
  const r = translate(
    modelOf({
      services: [web],
      slices: [webSlice],
      ingresses: [ing('a', { rules: [rule('a.example.com', [{ path: '/api/', backend: svcRef('web', 'http') }, { path: '/exact', pathType: 'Exact', backend: svcRef('web', 80) }])] })],
    }).snapshot(),
    OPTS,
  );
  // A Prefix written with a trailing slash is the element-wise prefix "/api" (Ingress spec: "/api" itself matches).
  assert.deepEqual(locs(r, 'a.example.com'), ['exact /exact -> default_web_80', 'prefix /api -> default_web_http']);
  assert.deepEqual(r.config.data.backends.default_web_http?.endpoints, [
    { address: '10.0.0.1', port: 8080, weight: 1 },
    { address: '10.0.0.2', port: 8080, weight: 1 },
  ]);
  assert.equal(r.status.get('Ingress/default/a')?.programmed, true);
});

test('servers sorted: exact hosts, wildcards, then the catch-all; locations exact, longest prefix first', () => {
  const r = translate(
    modelOf({
      services: [web],
      ingresses: [
        ing('a', {
          rules: [
            rule(undefined, [{ path: '/', backend: svcRef('web', 80) }]),
            rule('*.example.com', [{ path: '/', backend: svcRef('web', 80) }]),
            rule('b.example.com', [{ path: '/a', backend: svcRef('web', 80) }, { path: '/a/b/c', backend: svcRef('web', 80) }, { path: '/a/b', pathType: 'Exact', backend: svcRef('web', 80) }]),
          ],
        }),
      ],
    }).snapshot(),
    OPTS,
  );
  assert.deepEqual(Object.keys(r.config.data.routes), ['b.example.com', '*.example.com', '_']);
  assert.deepEqual(locs(r, 'b.example.com'), ['exact /a/b -> default_web_80', 'prefix /a/b/c -> default_web_80', 'prefix /a -> default_web_80']);
});

test('same host+path in two Ingresses: the older wins and the newer gets a Conflict event naming it', () => {
  const other = svc('other', [{ port: 80 }]);
  const r = translate(
    modelOf({
      services: [web, other],
      ingresses: [
        ing('newer', { rules: [rule('x.example.com', [{ path: '/p', backend: svcRef('other', 80) }])] }, { created: '2026-02-01T00:00:00Z' }),
        ing('older', { rules: [rule('x.example.com', [{ path: '/p', backend: svcRef('web', 80) }, { path: '/q', backend: svcRef('web', 80) }])] }, { created: '2026-01-01T00:00:00Z' }),
      ],
    }).snapshot(),
    OPTS,
  );
  assert.deepEqual(locs(r, 'x.example.com'), ['prefix /p -> default_web_80', 'prefix /q -> default_web_80']);
  const ev = r.events.find((e) => e.reason === 'Conflict');
  assert.equal(ev?.ref, 'Ingress/default/newer');
  assert.match(ev?.message ?? '', /already served by Ingress default\/older/);
  assert.equal(r.events.filter((e) => e.ref === 'Ingress/default/older').length, 0);
});

test('paths for one host merge across Ingresses', () => {
  const r = translate(
    modelOf({
      services: [web],
      ingresses: [
        ing('one', { rules: [rule('m.example.com', [{ path: '/one', backend: svcRef('web', 80) }])] }),
        ing('two', { rules: [rule('m.example.com', [{ path: '/two', backend: svcRef('web', 80) }])] }),
      ],
    }).snapshot(),
    OPTS,
  );
  assert.deepEqual(locs(r, 'm.example.com'), ['prefix /one -> default_web_80', 'prefix /two -> default_web_80']);
});

test('missing Service or port: backend without endpoints (503) plus an event; other paths unaffected', () => {
  const r = translate(
    modelOf({
      services: [web],
      slices: [webSlice],
      ingresses: [ing('a', { rules: [rule('a.example.com', [{ path: '/ok', backend: svcRef('web', 80) }, { path: '/gone', backend: svcRef('gone', 80) }, { path: '/badport', backend: svcRef('web', 81) }])] })],
    }).snapshot(),
    OPTS,
  );
  assert.equal(r.config.data.backends.default_gone_80?.endpoints.length, 0);
  assert.match(r.config.data.backends.default_gone_80?.unavailableReason ?? '', /service default\/gone not found/);
  assert.match(r.config.data.backends.default_web_81?.unavailableReason ?? '', /has no port 81/);
  assert.equal(r.config.data.backends.default_web_80?.endpoints.length, 2);
  assert.equal(r.events.filter((e) => e.reason === 'BackendNotFound').length, 2);
});

test('only ready endpoints get traffic; terminating (even if serving) and not-ready ones do not; several slices merge', () => {
  const r = translate(
    modelOf({
      services: [web],
      slices: [
        slice('s1', 'web', [{ name: 'http', port: 8080 }], [{ ip: '10.0.0.1' }, { ip: '10.0.0.2', ready: false, serving: true, terminating: true }]),
        slice('s2', 'web', [{ name: 'http', port: 8080 }], [{ ip: '10.0.0.3' }, { ip: '10.0.0.4', ready: false }]),
        slice('s3', 'web', [{ name: 'other', port: 9090 }], [{ ip: '10.0.0.5' }]),
      ],
      ingresses: [ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 'http') }])] })],
    }).snapshot(),
    OPTS,
  );
  assert.deepEqual(r.config.data.backends.default_web_http?.endpoints.map((e) => e.address), ['10.0.0.1', '10.0.0.3']);
});

test('class selection: other class ignored, no class served only when portico is default or watch-without-class, legacy annotation', () => {
  const objs = {
    services: [web],
    ingresses: [
      ing('other', { ingressClassName: 'nginx', rules: [rule('o.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }),
      ing('none', { ingressClassName: undefined, rules: [rule('n.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }),
      ing('legacy', { ingressClassName: undefined, rules: [rule('l.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { 'kubernetes.io/ingress.class': 'portico' } }),
    ],
  };
  const hosts = (r: ReturnType<typeof translate>) => Object.keys(r.config.data.routes).sort();
  assert.deepEqual(hosts(translate(modelOf(objs).snapshot(), OPTS)), ['l.example.com', 'n.example.com']);
  const notDefault = modelOf({ ...objs, classes: [portico(false)] }).snapshot();
  assert.deepEqual(hosts(translate(notDefault, OPTS)), ['l.example.com']);
  assert.deepEqual(hosts(translate(notDefault, { ...OPTS, watchWithoutClass: true })), ['l.example.com', 'n.example.com']);
});

test('defaultBackend serves "/" on the catch-all and on its hosts where no rule claims "/"', () => {
  const r = translate(
    modelOf({
      services: [web, svc('fallback', [{ port: 80 }])],
      ingresses: [ing('a', { defaultBackend: svcRef('fallback', 80), rules: [rule('a.example.com', [{ path: '/api', backend: svcRef('web', 80) }])] })],
    }).snapshot(),
    OPTS,
  );
  assert.deepEqual(locs(r, 'a.example.com'), ['prefix /api -> default_web_80', 'prefix / -> default_fallback_80']);
  assert.deepEqual(locs(r, '_'), ['prefix / -> default_fallback_80']);
});

test('bad annotation and bad path: event, the rest of the Ingress still served; resource backend rejected with reason', () => {
  const m = modelOf({
    services: [web],
    ingresses: [
      ing('a', { rules: [rule('a.example.com', [{ path: '/ok', backend: svcRef('web', 80) }, { path: '/bad"; return 200; #', backend: svcRef('web', 80) }])] }, { annotations: { 'nginx.ingress.kubernetes.io/proxy-body-size': '10m; evil' } }),
      ing('res', { rules: [rule('r.example.com', [{ path: '/', backend: { resource: { kind: 'Bucket', name: 'b' } } as never }])] }),
    ],
  });
  const r = translate(m.snapshot(), OPTS);
  assert.deepEqual(locs(r, 'a.example.com'), ['prefix /ok -> default_web_80']);
  const problems = r.status.get('Ingress/default/a')?.problems.join('\n') ?? '';
  assert.match(problems, /proxy-body-size/);
  assert.match(problems, /path may only contain/);
  assert.match(r.status.get('Ingress/default/res')?.problems[0] ?? '', /resource backends .* not supported/);
});

test('annotations override per location; use-regex turns ImplementationSpecific into regex', () => {
  const r = translate(
    modelOf({
      services: [web],
      ingresses: [
        ing('a', { rules: [rule('a.example.com', [{ path: '/v[0-9]+/items', pathType: 'ImplementationSpecific', backend: svcRef('web', 80) }])] }, {
          annotations: { 'nginx.ingress.kubernetes.io/use-regex': 'true', 'nginx.ingress.kubernetes.io/proxy-read-timeout': '120', 'portico.dev/proxy-body-size': '8m' },
        }),
      ],
    }).snapshot(),
    OPTS,
  );
  const l = r.config.data.routes['a.example.com']?.rules[0];
  assert.equal(l?.match, 'regex');
  assert.deepEqual(l?.route.timeouts, { connect: 5, send: 60, read: 120 }, 'the others stay global');
  // A body size other than the global one is a directive profile: named by its content, shared, in nginx.conf.
  const profile = r.config.structure.profiles[0];
  assert.deepEqual(r.config.structure.profiles, [{ name: l?.route.profile, proxyBodySize: '8m' }]);
  assert.match(profile?.name ?? '', /^p_[0-9a-f]{16}$/);
  assert.equal(l?.route.maxBodyBytes, 8 * 1024 * 1024);
});

test('deterministic: same objects in any order give byte-identical output', () => {
  const objs = [
    ing('b', { rules: [rule('b.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }),
    ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }),
  ];
  const one = JSON.stringify(translate(modelOf({ services: [web], slices: [webSlice], ingresses: objs }).snapshot(), OPTS).config);
  const two = JSON.stringify(translate(modelOf({ services: [web], slices: [webSlice], ingresses: [...objs].reverse() }).snapshot(), OPTS).config);
  assert.equal(one, two);
});

test('diff: endpoint changes and new hosts are data (one entry each in the delta); only a new directive profile reloads', () => {
  const base = { services: [web, svc('api', [{ port: 80 }])], slices: [webSlice], ingresses: [ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }, { path: '/api', backend: svcRef('api', 80) }])] })] };
  const before = translate(modelOf(base).snapshot(), OPTS).config;
  const scaled = translate(modelOf({ ...base, slices: [slice('web-abc', 'web', [{ name: 'http', port: 8080 }], [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }, { ip: '10.0.0.3' }])] }).snapshot(), OPTS).config;
  const d = diffConfig(before, scaled);
  assert.equal(d.reload, false);
  assert.deepEqual(Object.keys(d.delta.backends.upsert), ['default_web_80']);
  assert.deepEqual(d.delta.backends.remove, []);
  const more = translate(modelOf({ ...base, ingresses: [...base.ingresses, ing('b', { rules: [rule('new.example.com', [{ path: '/', backend: svcRef('web', 80) }])] })] }).snapshot(), OPTS).config;
  const d2 = diffConfig(before, more);
  assert.equal(d2.reload, false, 'a new Ingress is data');
  assert.deepEqual(Object.keys(d2.delta.routes.upsert), ['new.example.com']);
  assert.deepEqual(Object.keys(d2.delta.backends.upsert), [], 'its backend already exists');
  const gone = diffConfig(more, before);
  assert.equal(gone.reload, false);
  assert.deepEqual(gone.delta.routes.remove, ['new.example.com']);
  const big = { 'nginx.ingress.kubernetes.io/proxy-body-size': '20m' };
  const withProfile = translate(modelOf({ ...base, ingresses: [...base.ingresses, ing('b', { rules: [rule('new.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: big })] }).snapshot(), OPTS).config;
  const d3 = diffConfig(before, withProfile);
  assert.equal(d3.reload, true);
  assert.match(d3.reasons[0] ?? '', /^directive profiles added: p_[0-9a-f]{16}$/);
  const sameProfile = translate(
    modelOf({
      ...base,
      ingresses: [
        ...base.ingresses,
        ing('b', { rules: [rule('new.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: big }),
        ing('c', { rules: [rule('third.example.com', [{ path: '/', backend: svcRef('api', 80) }])] }, { annotations: big }),
      ],
    }).snapshot(),
    OPTS,
  ).config;
  assert.equal(diffConfig(withProfile, sameProfile).reload, false, 'a second route with a profile that exists is data');
  assert.equal(diffConfig(before, before).reload, false);
  assert.equal(diffConfig(null, before).reasons[0], 'initial configuration');
});

test('canary Ingress attaches to the main location instead of conflicting; weight and header go to the main backend data', () => {
  const r = translate(
    modelOf({
      services: [web, svc('web-v2', [{ port: 80 }])],
      ingresses: [
        ing('main', { rules: [rule('c.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }),
        ing('canary', { rules: [rule('c.example.com', [{ path: '/', backend: svcRef('web-v2', 80) }])] }, {
          created: '2026-03-01T00:00:00Z',
          annotations: { 'nginx.ingress.kubernetes.io/canary': 'true', 'nginx.ingress.kubernetes.io/canary-weight': '10', 'nginx.ingress.kubernetes.io/canary-by-header': 'X-Canary' },
        }),
      ],
    }).snapshot(),
    OPTS,
  );
  assert.deepEqual(locs(r, 'c.example.com'), ['prefix / -> default_web_80']);
  assert.deepEqual(r.config.data.backends.default_web_80?.canary, { backendId: 'default_web-v2_80', weight: 10, weightTotal: 100, header: 'X-Canary' });
  assert.ok(r.config.data.backends['default_web-v2_80']);
  assert.equal(r.events.filter((e) => e.reason === 'Conflict').length, 0);
  assert.equal(r.status.get('Ingress/default/canary')?.programmed, true);
});
