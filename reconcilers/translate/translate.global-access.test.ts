// The ConfigMap's global access lists (ingress-nginx's whitelist-source-range, denylist-source-range, block-cidrs,
// block-user-agents, block-referers): strict parsing, and an invalid value fails closed instead of being ignored or
// keeping an older (possibly empty) list.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { translate, GLOBAL_ALLOW_ID, GLOBAL_DENY_ID } from './translate.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../model/global-config.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from './fixtures.test-helpers.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import { normalizeRoute } from '../crds/normalize.ts';

const N = 'nginx.ingress.kubernetes.io/';
const web = svc('web', [{ name: 'http', port: 80 }]);
const slices = [slice('web-1', 'web', [{ name: 'http', port: 8080 }], [{ ip: '10.0.0.1' }])];

function run(data: Record<string, string>, annotations: Record<string, string> = {}, route?: KubeObject) {
  const m = modelOf({ services: [web], slices, ingresses: [ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations })] });
  const parsed = parseGlobalConfig(data, defaultGlobalConfig());
  m.setGlobalConfig(parsed.values);
  if (route) {
    const r = normalizeRoute(route);
    assert.ok(r.ok, r.ok ? '' : r.reason);
    m.setCrd('Route', r.record);
  }
  const r = translate(m.snapshot(), OPTS);
  const rt = (h: string) => r.config.data.routes[h]?.rules[0]?.route;
  return { parsed, r, route: rt('a.example.com'), rt };
}

test('parsing: CIDR lists and map patterns are strict; an invalid value is reported and fails closed (never the previous value)', () => {
  const ok = parseGlobalConfig({ 'whitelist-source-range': ' 10.0.0.0/8, 192.0.2.7 ,2001:db8::/32', 'block-user-agents': 'curl/7.0,~*bot,~^Mozilla/4\\.0 \\(compatible', 'block-referers': '~*evil\\.example' }, defaultGlobalConfig());
  assert.deepEqual(ok.errors, []);
  assert.deepEqual(ok.values.whitelistSourceRange, { items: ['10.0.0.0/8', '192.0.2.7', '2001:db8::/32'] });
  assert.deepEqual(ok.values.blockUserAgents, { items: [{ match: 'exact', value: 'curl/7.0' }, { match: 'iregex', value: 'bot' }, { match: 'regex', value: '^Mozilla/4\\.0 \\(compatible' }] });
  assert.deepEqual(ok.values.blockReferers, { items: [{ match: 'iregex', value: 'evil\\.example' }] });
  assert.deepEqual(ok.unknown, [], 'the five keys are known');
  // A previous good value is not kept: an allowlist that cannot be applied must not let everyone in.
  for (const [key, value, why] of [
    ['whitelist-source-range', '10.0.0.0/8, 300.0.0.1', /"300\.0\.0\.1" is not an IP address or CIDR/],
    ['denylist-source-range', '10.0.0.0/33', /not an IP address or CIDR/],
    ['block-cidrs', 'all', /"all" is not an IP address or CIDR/],
    ['block-user-agents', '~*(?<=a)b', /lookbehind|not allowed|\(\?</],
    ['block-user-agents', '~(a', /regular expression/],
    ['block-user-agents', 'x"; return 200; #', /printable ASCII without quotes/],
    ['block-referers', '~*(*LIMIT_MATCH=1)a', /regular expression/],
    ['block-referers', Array.from({ length: 1025 }, (_, i) => `r${i}`).join(','), /at most 1024/],
  ] as const) {
    const r = parseGlobalConfig({ [key]: value }, ok.values);
    assert.equal(r.errors.length, 1, key);
    assert.match(r.errors[0]!.message, why, key);
    assert.match(r.errors[0]!.message, /failing closed: .*503/, key);
    const field = ({ 'whitelist-source-range': 'whitelistSourceRange', 'denylist-source-range': 'denylistSourceRange', 'block-cidrs': 'blockCidrs', 'block-user-agents': 'blockUserAgents', 'block-referers': 'blockReferers' } as const)[key];
    assert.equal(typeof r.values[field].error, 'string', `${key}: the value is the error, not the previous list`);
  }
});

test('whitelist-source-range / denylist-source-range: every Ingress path without its own annotation gets them; the annotation replaces each, as in ingress-nginx', () => {
  const g = run({ 'whitelist-source-range': '10.0.0.0/8', 'denylist-source-range': '10.9.0.0/16' });
  assert.deepEqual(g.route?.plugins, [GLOBAL_ALLOW_ID, GLOBAL_DENY_ID]);
  assert.deepEqual(g.r.config.data.plugins[GLOBAL_ALLOW_ID], { name: 'ConfigMap whitelist-source-range', type: 'ip-restriction', status: 403, allow: ['10.0.0.0/8'] });
  assert.deepEqual(g.r.config.data.plugins[GLOBAL_DENY_ID], { name: 'ConfigMap denylist-source-range', type: 'ip-restriction', status: 403, deny: ['10.9.0.0/16'] });
  // The Ingress's own allowlist replaces the global one; the global denylist still applies.
  const own = run({ 'whitelist-source-range': '10.0.0.0/8', 'denylist-source-range': '10.9.0.0/16' }, { [`${N}whitelist-source-range`]: '192.0.2.0/24' });
  assert.ok(!own.route?.plugins?.includes(GLOBAL_ALLOW_ID));
  assert.ok(own.route?.plugins?.includes(GLOBAL_DENY_ID));
  assert.ok(own.route?.plugins?.some((p) => p.endsWith('.ip')));
  const ownDeny = run({ 'denylist-source-range': '10.9.0.0/16' }, { [`${N}denylist-source-range`]: '192.0.2.0/24' });
  assert.ok(!ownDeny.route?.plugins?.includes(GLOBAL_DENY_ID));
  // Nothing set: nothing added.
  assert.equal(run({}).route?.plugins, undefined);
});

test('a Route gets the global lists too (it has no annotation to replace them)', () => {
  const route = { apiVersion: 'portico.dev/v1alpha1', kind: 'Route', metadata: { name: 'r', namespace: 'default', uid: 'u-r', creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { ingressClassName: 'portico', hosts: ['r.example.com'], rules: [{ matches: [{ path: { type: 'Prefix', value: '/' } }], backends: [{ service: { name: 'web', port: 80 } }] }] } } as KubeObject;
  const g = run({ 'whitelist-source-range': '10.0.0.0/8' }, {}, route);
  assert.deepEqual(g.rt('r.example.com')?.plugins, [GLOBAL_ALLOW_ID]);
});

test('an invalid whitelist-source-range or denylist-source-range: the paths it applies to fail closed (503), the others are served', () => {
  for (const key of ['whitelist-source-range', 'denylist-source-range']) {
    const bad = run({ [key]: '10.0.0.0/8,nope' });
    assert.equal(bad.route?.action, 'unavailable', key);
    assert.equal(bad.route?.backendId, null, key);
    assert.match(bad.route?.closedReason ?? '', new RegExp(`ConfigMap's ${key} cannot be applied`));
    // An Ingress with its own list is not governed by the global one.
    const own = run({ [key]: 'nope' }, { [`${N}${key === 'whitelist-source-range' ? 'whitelist-source-range' : 'denylist-source-range'}`]: '192.0.2.0/24' });
    assert.equal(own.route?.backendId, 'default_web_80', key);
  }
});
