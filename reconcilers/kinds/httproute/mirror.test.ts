// HTTPRoute's RequestMirror with several mirrors per rule and shares of the requests (Gateway API's
// HTTPRouteRequestMultipleMirrors and HTTPRouteRequestPercentageMirror): what normalize.ts accepts and refuses, what
// the processor makes of it (Route.mirrors, the profile's mirror slots, the mirrors' backends), and the rendered
// nginx.conf (one `mirror` per slot; nginx -t accepts it). Table tests, no cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../operator/kube/object.ts';
import type { Model } from '../../model/model.ts';
import type { HttpFilterN } from '../../model/gateway-api.ts';
import { normalizeGateway } from '../gateway/normalize.ts';
import { normalizeGatewayClass } from '../gatewayclass/index.ts';
import { normalizeHttpRoute } from './normalize.ts';
import { routeMirrors } from './processor.ts';
import { modelOf, OPTS, slice, svc } from '../../translate/fixtures.test-helpers.ts';
import { translate, type TranslateOptions } from '../../translate/translate.ts';
import { structureChecksum } from '../../translate/diff.ts';
import { gatewayApiState, listenerHost, type GatewayApiOptions } from '../../translate/gateway-api/attach.ts';
import { renderNginxConf } from '../../nginx-driver/nginx/render.ts';
import { nginxTest, runtimeDir } from '../../nginx-driver/nginx/nginx-t.test-helpers.ts';
import type { Profile, Route } from '../../config/types.ts';

const GA: GatewayApiOptions = { controllerName: 'portico.dev/gateway-controller', reservedPorts: [8080, 8443, 10246] };
const O: TranslateOptions = { ...OPTS, gatewayApi: GA };

const obj = (kind: string, name: string, spec: unknown, ns: string | undefined = 'infra'): KubeObject =>
  ({ apiVersion: 'gateway.networking.k8s.io/v1', kind, metadata: { name, ...(ns ? { namespace: ns } : {}), uid: `uid-${name}`, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' }, spec }) as KubeObject;
const mirror = (name: string, extra: Record<string, unknown> = {}) => ({ type: 'RequestMirror', requestMirror: { backendRef: { name, port: 8080 }, ...extra } });
const filtersOf = (spec: unknown): HttpFilterN[] | string => {
  const n = normalizeHttpRoute(obj('HTTPRoute', 'r', spec));
  return n.ok ? n.record.rules[0]!.filters : n.reason;
};
const backendN = (name: string) => ({ group: '', kind: 'Service', name, namespace: 'infra', port: 8080, weight: 1 });

test('normalize: several RequestMirrors per rule, each with its share (percent, fraction with denominator 100 by default)', () => {
  const f = filtersOf({ rules: [{ filters: [mirror('v2'), mirror('v3', { percent: 20 }), mirror('v4', { fraction: { numerator: 25, denominator: 50 } }), mirror('v5', { fraction: { numerator: 3 } }), mirror('v6', { percent: 0 })] }] });
  assert.deepEqual(f, [
    { type: 'RequestMirror', backend: backendN('v2') },
    { type: 'RequestMirror', backend: backendN('v3'), share: { numerator: 20, denominator: 100 } },
    { type: 'RequestMirror', backend: backendN('v4'), share: { numerator: 25, denominator: 50 } },
    { type: 'RequestMirror', backend: backendN('v5'), share: { numerator: 3, denominator: 100 } },
    { type: 'RequestMirror', backend: backendN('v6'), share: { numerator: 0, denominator: 100 } },
  ]);
  // Every request: no share.
  assert.deepEqual(filtersOf({ rules: [{ filters: [mirror('a', { percent: 100 }), mirror('b', { fraction: { numerator: 7, denominator: 7 } })] }] }), [
    { type: 'RequestMirror', backend: backendN('a') },
    { type: 'RequestMirror', backend: backendN('b') },
  ]);
});

test('normalize: what the API server refuses is refused by name (both forms, numerator above denominator, out of range)', () => {
  assert.match(String(filtersOf({ rules: [{ filters: [mirror('a', { percent: 10, fraction: { numerator: 1, denominator: 10 } })] }] })), /spec\.rules\.0\.filters\.0\.requestMirror: percent and fraction are exclusive/);
  assert.match(String(filtersOf({ rules: [{ filters: [mirror('a', { fraction: { numerator: 11, denominator: 10 } })] }] })), /spec\.rules\.0\.filters\.0\.requestMirror\.fraction: numerator must be less than or equal to denominator/);
  for (const extra of [{ percent: 101 }, { percent: -1 }, { percent: 2.5 }, { fraction: { numerator: -1 } }, { fraction: { numerator: 1, denominator: 0 } }, { fraction: { numerator: 1, denominator: 2 ** 31 } }]) {
    assert.equal(typeof filtersOf({ rules: [{ filters: [mirror('a', extra)] }] }), 'string', JSON.stringify(extra));
  }
  const seventeen = Array.from({ length: 17 }, (_, i) => mirror(`m${i}`));
  assert.equal(typeof filtersOf({ rules: [{ filters: seventeen }] }), 'string', 'at most 16 filters per rule');
});

test('routeMirrors: one entry per copy in order, shares kept; a share of 0 and a backend the route may not use are left out', () => {
  const rule = (filters: HttpFilterN[]) => ({ matches: [], backends: [], filters, plugins: [] });
  const usable = { backends: [{ service: 'v2', port: { number: 8080 } }, { service: 'v3', port: { number: 8080 } }, { service: 'v4', port: { number: 8080 } }] };
  const m = (name: string, share?: { numerator: number; denominator: number }): HttpFilterN => ({ type: 'RequestMirror', backend: backendN(name), ...(share ? { share } : {}) });
  const target = (name: string, share?: { numerator: number; denominator: number }) => ({ backendId: `infra_${name}_8080`, scheme: 'http', host: '', serverName: `${name}.infra.svc`, requestUri: true, ...(share ? { share } : {}) });
  assert.deepEqual(routeMirrors(rule([m('v2')]), usable, 'infra'), { route: [target('v2')], profile: { body: true } }, 'one whole copy: nginx\'s one mirror, no slots');
  assert.deepEqual(routeMirrors(rule([m('v2', { numerator: 1, denominator: 5 })]), usable, 'infra'), { route: [target('v2', { numerator: 1, denominator: 5 })], profile: { body: true, slots: 1 } }, 'one copy of a share: a slot');
  assert.deepEqual(routeMirrors(rule([m('v2'), m('ghost'), m('v3', { numerator: 0, denominator: 100 }), m('v4', { numerator: 35, denominator: 100 })]), usable, 'infra'), {
    route: [target('v2'), target('v4', { numerator: 35, denominator: 100 })],
    profile: { body: true, slots: 2 },
  });
  assert.equal(routeMirrors(rule([m('v2', { numerator: 0, denominator: 1 }), m('ghost')]), usable, 'infra'), undefined, 'no copy left: nothing mirrored');
});

function model(routeSpec: Record<string, unknown>): Model {
  const names = ['v1', 'v2', 'v3', 'v4'];
  const m = modelOf({
    services: names.map((n) => svc(n, [{ port: 8080 }], 'infra')),
    slices: names.map((n, i) => slice(`${n}-1`, n, [{ port: 8080 }], [{ ip: `198.18.0.${10 + i}` }], 'infra')),
  });
  const gc = normalizeGatewayClass(obj('GatewayClass', 'portico', { controllerName: GA.controllerName }, undefined));
  const gw = normalizeGateway(obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] }));
  const rt = normalizeHttpRoute(obj('HTTPRoute', 'r', { parentRefs: [{ name: 'gw' }], ...routeSpec }));
  assert.ok(gc.ok && gw.ok && rt.ok, JSON.stringify([gc, gw, rt].map((x) => (x.ok ? 'ok' : x.reason))));
  m.setCrd('GatewayClass', gc.record as never);
  m.setCrd('Gateway', gw.record as never);
  m.setCrd('HTTPRoute', rt.record as never);
  return m;
}

test('translation: the conformance routes — two whole mirrors, shares by percent and fraction, a share of 0 — with the mirrors\' backends resolved; nginx -t accepts the profiles', () => {
  const m = model({
    rules: [
      { matches: [{ path: { type: 'PathPrefix', value: '/multi-mirror' } }], filters: [mirror('v2'), mirror('v3')], backendRefs: [{ name: 'v1', port: 8080 }] },
      { matches: [{ path: { type: 'PathPrefix', value: '/percent-mirror' } }], filters: [mirror('v2', { percent: 20 })], backendRefs: [{ name: 'v1', port: 8080 }] },
      { matches: [{ path: { type: 'PathPrefix', value: '/percent-mirror-fraction' } }], filters: [mirror('v2', { fraction: { numerator: 25, denominator: 50 } })], backendRefs: [{ name: 'v1', port: 8080 }] },
      { matches: [{ path: { type: 'PathPrefix', value: '/zero' } }], filters: [mirror('v4', { percent: 0 })], backendRefs: [{ name: 'v1', port: 8080 }] },
      {
        matches: [{ path: { type: 'PathPrefix', value: '/mixed' } }],
        filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-Header-Set', value: 'v' }] } }, mirror('v2', { percent: 35 }), mirror('v4', { percent: 0 }), mirror('v3')],
        backendRefs: [{ name: 'v1', port: 8080 }],
      },
    ],
  });
  const port = gatewayApiState(m.snapshot(), GA).gateways.get('infra/gw')!.listeners[0]!.podPort!;
  const r = translate(m.snapshot(), O);
  const rules = r.config.data.routes[listenerHost(port, '_')]!.rules;
  const at = (p: string): Route => rules.find((x) => x.path === p)!.route;
  const profileOf = (p: string): Profile | undefined => r.config.structure.profiles.find((x) => x.name === at(p).profile);
  const target = (name: string, share?: { numerator: number; denominator: number }) => ({ backendId: `infra_${name}_8080`, scheme: 'http', host: '', serverName: `${name}.infra.svc`, requestUri: true, ...(share ? { share } : {}) });

  assert.deepEqual(at('/multi-mirror').mirrors, [target('v2'), target('v3')]);
  assert.deepEqual(profileOf('/multi-mirror')?.mirror, { body: true, slots: 2 });
  assert.equal(at('/multi-mirror').split, undefined, 'the mirrors are not part of the split');
  assert.deepEqual(at('/percent-mirror').mirrors, [target('v2', { numerator: 20, denominator: 100 })]);
  assert.deepEqual(profileOf('/percent-mirror')?.mirror, { body: true, slots: 1 });
  assert.deepEqual(at('/percent-mirror-fraction').mirrors, [target('v2', { numerator: 25, denominator: 50 })]);
  assert.equal(at('/percent-mirror-fraction').profile, at('/percent-mirror').profile, 'the share is route data: one profile for both');
  assert.equal(at('/zero').mirrors, undefined, 'a share of 0: no copy');
  assert.equal(profileOf('/zero')?.mirror, undefined, '…and no mirror directive');
  assert.deepEqual(at('/mixed').mirrors, [target('v2', { numerator: 35, denominator: 100 }), target('v3')], 'the 0 % copy in between is left out');
  assert.equal(at('/mixed').profile, at('/multi-mirror').profile);
  for (const n of ['v2', 'v3']) assert.equal(r.config.data.backends[`infra_${n}_8080`]?.endpoints.length, 1, `${n} is resolved`);
  assert.equal(r.status.get('HTTPRoute/infra/r')?.problems.length ?? 0, 0);

  const rt = runtimeDir();
  const conf = renderNginxConf(r.config.structure, rt, structureChecksum(r.config.structure));
  const loc = (p: string) => new RegExp(`location @portico_${at(p).profile} \\{[\\s\\S]*?\\n    \\}`).exec(conf)?.[0] ?? '';
  const two = loc('/multi-mirror');
  for (const d of ['mirror /_portico_internal/mirror/0;', 'mirror /_portico_internal/mirror/1;', 'mirror_request_body on;']) assert.ok(two.includes(`\n      ${d}\n`), `${d} in\n${two}`);
  assert.ok(!two.includes('mirror /_portico_internal/mirror/2;') && !two.includes('mirror /_portico_internal/mirror;'), two);
  const one = loc('/percent-mirror');
  assert.ok(one.includes('\n      mirror /_portico_internal/mirror/0;\n') && !one.includes('/mirror/1;'), one);
  assert.match(conf, /location \^~ \/_portico_internal\/mirror\/ \{\n      internal;[\s\S]*?rewrite_by_lua_block \{ require\("portico.balancer"\).mirror_pick\(\) \}/);
  nginxTest(rt, conf);
});

test('render: mirror slots outside 1-16 are refused, not written', () => {
  const m = model({ rules: [{ filters: [mirror('v2'), mirror('v3')], backendRefs: [{ name: 'v1', port: 8080 }] }] });
  const r = translate(m.snapshot(), O);
  const p = r.config.structure.profiles.find((x) => x.mirror)!;
  for (const slots of [0, 17, 1.5, '2; return 200' as unknown as number]) {
    assert.throws(() => renderNginxConf({ ...r.config.structure, profiles: [{ ...p, mirror: { body: true, slots } }] }, runtimeDir(), 'c'), /invalid mirror slots/, String(slots));
  }
  const conf = renderNginxConf({ ...r.config.structure, profiles: [{ ...p, mirror: { body: false, slots: 16 } }] }, runtimeDir(), 'c');
  assert.ok(conf.includes('mirror /_portico_internal/mirror_nobody/15;') && conf.includes('mirror_request_body off;'), 'without the body: the _nobody slots');
});
