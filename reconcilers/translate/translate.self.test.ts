// Portico itself as a backend: its published Service and its pods are refused like loopback (ExternalName by name
// or address, hand-written EndpointSlices, service-upstream, auth-url and mirror-target), and every proxied
// request carries the installation's loop id so a loop through anything else ends at the first repeat (508).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loopIdOf, namesService, selfAddressesOf } from './self.ts';
import { translate } from './translate.ts';
import { structureChecksum } from './diff.ts';
import { ing, modelOf, OPTS, rule, slice, svc, svcRef } from './fixtures.test-helpers.ts';
import { normalizeEndpointSlice, normalizeService } from '../model/normalize.ts';
import type { NormalizedSlice } from '../model/types.ts';
import { renderNginxConf } from '../nginx-driver/nginx/render.ts';
import { nginxTest, runtimeDir } from '../nginx-driver/nginx/nginx-t.test-helpers.ts';
import { NGINX_PREFIX } from '../annotations/table.ts';

const SELF = 'portico-system/portico';
const selfSvc = svc('portico', [{ name: 'http', port: 80 }], 'portico-system', { clusterIP: '198.19.0.10', clusterIPs: ['198.19.0.10', 'fd00::10'], externalIPs: ['203.0.113.5'], type: 'LoadBalancer' });
(selfSvc.metadata as { uid?: string }).uid = 'a3c1f1d2-0000-4000-8000-000000000001';
(selfSvc as { status?: unknown }).status = { loadBalancer: { ingress: [{ ip: '203.0.113.9' }, { hostname: 'lb.example.com' }] } };
const selfSlice = slice('portico-1', 'portico', [{ name: 'http', port: 8080 }], [{ ip: '198.51.100.11' }, { ip: '198.51.100.12', ready: false }], 'portico-system');

test('selfAddressesOf: cluster IPs, external and load-balancer IPs, and every pod of the Service whatever its condition', () => {
  const n = normalizeService(selfSvc);
  const slices = [normalizeEndpointSlice(selfSlice)].filter((s): s is NormalizedSlice => s !== null);
  assert.deepEqual(selfAddressesOf(n, slices), ['198.19.0.10', '198.51.100.11', '198.51.100.12', '203.0.113.5', '203.0.113.9', 'fd00::10']);
  assert.deepEqual(selfAddressesOf(undefined, []), []);
  assert.deepEqual(selfAddressesOf(normalizeService(svc('h', [{ port: 80 }], 'x', { clusterIP: 'None' })), []), [], 'a headless Service has no address of its own');
});

test('namesService: every cluster DNS spelling of the Service, nothing else', () => {
  for (const h of ['portico.portico-system', 'portico.portico-system.svc', 'portico.portico-system.svc.cluster.local', 'PORTICO.portico-system.svc.cluster.local.', 'portico.portico-system.svc.corp.example']) {
    assert.equal(namesService(h, SELF), true, h);
  }
  for (const h of ['portico', 'portico.other', 'xportico.portico-system', 'portico.portico-system.example.com', 'web.portico-system.svc']) assert.equal(namesService(h, SELF), false, h);
});

test('loopIdOf: 16 hex digits, the same for the same Service and class, different otherwise', () => {
  const a = loopIdOf('uid-1', 'portico.dev/ingress-controller');
  assert.match(a, /^[0-9a-f]{16}$/);
  assert.equal(loopIdOf('uid-1', 'portico.dev/ingress-controller'), a);
  assert.notEqual(loopIdOf('uid-2', 'portico.dev/ingress-controller'), a);
  assert.notEqual(loopIdOf('uid-1', 'example.com/other'), a);
});

const N = NGINX_PREFIX;
function run(extra: { ingresses: ReturnType<typeof ing>[]; services?: ReturnType<typeof svc>[]; slices?: ReturnType<typeof slice>[] }) {
  const m = modelOf({ services: [selfSvc, svc('web', [{ name: 'http', port: 80 }], 'team'), ...(extra.services ?? [])], slices: [selfSlice, slice('web-1', 'web', [{ name: 'http', port: 8080 }], [{ ip: '10.0.0.1' }], 'team'), ...(extra.slices ?? [])], ingresses: extra.ingresses });
  const snap = m.snapshot();
  const own = selfAddressesOf(snap.services.get(SELF), snap.slices.get(SELF) ?? []);
  return translate(snap, { ...OPTS, ownAddresses: own, selfService: SELF, loopId: loopIdOf('uid', OPTS.controllerClass) });
}
const app = (name: string, backend: string, annotations: Record<string, string> = {}) =>
  ing(name, { rules: [rule(`${name}.example`, [{ path: '/', backend: svcRef(backend, 80) }])] }, { ns: 'team', annotations: Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${N}${k}`, v])) });

test("an ExternalName naming Portico's own Service (any spelling) or its cluster IP is refused with a ForbiddenEndpoint Warning", () => {
  const r = run({
    services: [
      svc('loop-dns', [{ name: 'http', port: 80 }], 'team', { type: 'ExternalName', externalName: 'portico.portico-system.svc.cluster.local' }),
      svc('loop-short', [{ name: 'http', port: 80 }], 'team', { type: 'ExternalName', externalName: 'portico.portico-system' }),
      svc('loop-ip', [{ name: 'http', port: 80 }], 'team', { type: 'ExternalName', externalName: '198.19.0.10' }),
    ],
    ingresses: [app('a', 'loop-dns'), app('b', 'loop-short'), app('c', 'loop-ip'), app('ok', 'web')],
  });
  for (const [name, id] of [['a', 'team_loop-dns_80'], ['b', 'team_loop-short_80'], ['c', 'team_loop-ip_80']] as const) {
    const b = r.config.data.backends[id];
    assert.equal(b?.externalName, undefined, `${id} is never resolved`);
    assert.deepEqual(b?.endpoints, []);
    const ev = r.events.find((e) => e.ref === `Ingress/team/${name}` && e.reason === 'ForbiddenEndpoint');
    assert.ok(ev, `a ForbiddenEndpoint Warning on ${name}`);
    assert.match(ev.message, name === 'c' ? /198\.19\.0\.10, one of Portico's own/ : /Portico's own Service portico-system\/portico/);
  }
  assert.deepEqual(r.config.data.backends['team_web_80']?.endpoints.map((e) => e.address), ['10.0.0.1'], 'the valid Ingress keeps being served');
});

test("a hand-written EndpointSlice listing Portico's pods (ready or not) or its external IP is refused; service-upstream to its cluster IP too", () => {
  const r = run({
    services: [svc('evil', [{ name: 'http', port: 80 }], 'team'), svc('vip', [{ name: 'http', port: 80 }], 'team', { clusterIP: '198.19.0.10' })],
    slices: [slice('evil-1', 'evil', [{ name: 'http', port: 8080 }], [{ ip: '198.51.100.12' }, { ip: '203.0.113.5' }, { ip: '10.0.0.9' }], 'team')],
    ingresses: [app('e', 'evil'), app('v', 'vip', { 'service-upstream': 'true' })],
  });
  assert.deepEqual(r.config.data.backends['team_evil_80']?.endpoints.map((e) => e.address), ['10.0.0.9']);
  const ev = r.events.find((e) => e.ref === 'Ingress/team/e' && e.reason === 'ForbiddenEndpoint');
  assert.match(ev?.message ?? '', /198\.51\.100\.12 \(one of Portico's own.*203\.0\.113\.5 \(one of Portico's own/);
  assert.deepEqual(r.config.data.backends['team_vip_80']?.endpoints, []);
  assert.match(r.config.data.backends['team_vip_80']?.unavailableReason ?? '', /cluster IP 198\.19\.0\.10 .*Portico's own/);
});

test("auth-url and mirror-target naming Portico's own Service are refused (the Ingress fails closed / is not mirrored)", () => {
  const r = run({
    ingresses: [
      app('auth', 'web', { 'auth-url': 'http://portico.portico-system.svc.cluster.local/auth' }),
      app('authshort', 'web', { 'auth-url': 'http://portico.portico-system:80/auth' }),
      app('mirror', 'web', { 'mirror-target': 'http://portico.portico-system.svc:80$request_uri' }),
      app('authip', 'web', { 'auth-url': 'http://198.51.100.11:8080/auth' }),
    ],
  });
  for (const name of ['auth', 'authshort', 'authip']) {
    assert.match((r.status.get(`Ingress/team/${name}`)?.problems ?? []).join(' '), /Portico's own|Portico never proxies to/, name);
    assert.equal(r.config.data.routes[`${name}.example`]?.rules[0]?.route.backendId ?? null, null, `${name} fails closed`);
  }
  const m = r.events.find((e) => e.ref === 'Ingress/team/mirror' && e.reason === 'MirrorUnavailable');
  assert.match(m?.message ?? '', /Portico's own Service portico-system\/portico/);
  assert.equal(r.config.data.routes['mirror.example']?.rules[0]?.route.mirrors, undefined);
});

test('the loop id reaches nginx.conf: X-Portico-Hop appended on every proxied request, 508 for one that came back; nginx -t passes', () => {
  const r = run({ ingresses: [app('ok', 'web')] });
  const id = loopIdOf('uid', OPTS.controllerClass);
  assert.equal(r.config.structure.global.loopId, id);
  const rt = runtimeDir();
  const conf = renderNginxConf(r.config.structure, rt, structureChecksum(r.config.structure));
  assert.ok(conf.includes(`portico_hop $portico_hop $portico_loop $http_x_portico_hop ${id};`));
  assert.match(conf, /if \(\$portico_loop\) \{ return 508; \}\n(?:\s+#.*\n)*\s+if \(\$portico_route_declined\) \{\n\s+set_by_lua \$portico_jump/, 'before the router runs');
  // Written by the variables module on requests proxied from the http level's locations; every location with
  // proxy_set_header of its own restates it (auth, mirror x2, mirror slots x2, error page).
  assert.equal(conf.match(/\n  portico_proxy_header X-Portico-Hop \$portico_hop;/g)?.length, 1);
  assert.equal(conf.match(/\n      proxy_set_header X-Portico-Hop \$portico_hop;/g)?.length, 6);
  nginxTest(rt, conf);
  const bad = { ...r.config.structure, global: { ...r.config.structure.global, loopId: 'x"; return 200; #' } };
  assert.throws(() => renderNginxConf(bad, rt, 'c'), /invalid loop id/);
});
