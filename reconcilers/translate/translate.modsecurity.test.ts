// ModSecurity (ingress-nginx's enable-modsecurity, enable-owasp-core-rules, modsecurity-transaction-id,
// modsecurity-snippet and the ConfigMap's enable-modsecurity, enable-owasp-modsecurity-crs, modsecurity-snippet):
// which routes get it, in which profile, and when an Ingress's paths fail closed instead.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { translate, type TranslateOptions } from './translate.ts';
import { OPTS, ing, modelOf, rule, svc, svcRef } from './fixtures.test-helpers.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../model/global-config.ts';
import type { Model } from '../model/model.ts';
import type { ModsecuritySettings } from '../config/types.ts';

const A = 'nginx.ingress.kubernetes.io/';
const INSTALLED: TranslateOptions = { ...OPTS, modsecurity: { crs: true } };
const SNIPPETS_OK = { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' };

function model(hosts: Record<string, Record<string, string>>, config: Record<string, string> = {}): Model {
  const m = modelOf({
    services: [svc('web', [{ port: 80 }])],
    ingresses: Object.entries(hosts).map(([h, annotations], i) => ing(`i${i}`, { rules: [rule(h, [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations })),
  });
  const r = parseGlobalConfig(config, defaultGlobalConfig());
  assert.deepEqual(r.errors, []);
  m.setGlobalConfig(r.values);
  return m;
}

function run(m: Model, o: TranslateOptions = INSTALLED) {
  const out = translate(m.snapshot(), o);
  const route = (h: string) => out.config.data.routes[h]!.rules[0]!.route;
  const waf = (h: string): ModsecuritySettings | undefined => out.config.structure.profiles.find((p) => p.name === route(h).profile)?.modsecurity;
  const warnings = (i: number) => out.events.filter((e) => e.ref === `Ingress/default/i${i}` && e.type === 'Warning').map((e) => `${e.reason}: ${e.message}`);
  return { out, route, waf, warnings };
}

test('enable-modsecurity: a profile with the recommended configuration; CRS, transaction id and snippet as asked; hosts without it untouched', () => {
  const { out, route, waf, warnings } = run(
    model(
      {
        'plain.example.com': {},
        'det.example.com': { [`${A}enable-modsecurity`]: 'true' },
        'block.example.com': { [`${A}enable-modsecurity`]: 'true', [`${A}enable-owasp-core-rules`]: 'true', [`${A}modsecurity-transaction-id`]: '$request_id', [`${A}modsecurity-snippet`]: 'SecRuleEngine On\nSecRuleRemoveById 920350' },
        'same.example.com': { [`${A}modsecurity-snippet`]: 'SecRuleEngine On\nSecRuleRemoveById 920350', [`${A}modsecurity-transaction-id`]: '$request_id', [`${A}enable-owasp-core-rules`]: 'true', [`${A}enable-modsecurity`]: 'true' },
        'alone.example.com': { [`${A}enable-owasp-core-rules`]: 'true', [`${A}modsecurity-transaction-id`]: '$request_id' },
      },
      SNIPPETS_OK,
    ),
  );
  assert.equal(route('plain.example.com').profile, undefined);
  assert.equal(route('alone.example.com').profile, undefined, 'the CRS and a transaction id alone do nothing (as in ingress-nginx)');
  assert.deepEqual(waf('det.example.com'), { crs: false, rules: [] });
  assert.deepEqual(waf('block.example.com'), { crs: true, rules: [{ directive: 'SecRuleEngine', value: 'On' }, { directive: 'SecRuleRemoveById', value: ['920350'] }], transactionId: '$request_id' });
  assert.equal(route('same.example.com').profile, route('block.example.com').profile, 'equal settings share one profile (one reload for both)');
  assert.equal(out.config.structure.profiles.length, 2);
  for (let i = 0; i < 5; i++) assert.deepEqual(warnings(i), [], `i${i}`);
});

test('the ConfigMap: enable-modsecurity for every Ingress (opt-out with "false"), its CRS and snippet before the Ingress\'s', () => {
  const { route, waf } = run(
    model(
      {
        'a.example.com': {},
        'off.example.com': { [`${A}enable-modsecurity`]: 'false' },
        'own.example.com': { [`${A}modsecurity-snippet`]: 'SecRuleEngine Off', [`${A}enable-owasp-core-rules`]: 'false' },
      },
      { ...SNIPPETS_OK, 'enable-modsecurity': 'true', 'enable-owasp-modsecurity-crs': 'true', 'modsecurity-snippet': 'SecRuleEngine On\nSecAuditEngine Off' },
    ),
  );
  const global = [{ directive: 'SecRuleEngine', value: 'On' }, { directive: 'SecAuditEngine', value: 'Off' }];
  assert.deepEqual(waf('a.example.com'), { crs: true, rules: global });
  assert.equal(route('off.example.com').profile, undefined);
  // enable-owasp-core-rules "false" does not take the ConfigMap's CRS away (ingress-nginx loads it for the whole http block).
  assert.deepEqual(waf('own.example.com'), { crs: true, rules: [...global, { directive: 'SecRuleEngine', value: 'Off' }] });
  // The ConfigMap's CRS key also applies where an Ingress turns ModSecurity on.
  const r2 = run(model({ 'b.example.com': { [`${A}enable-modsecurity`]: 'true' } }, { 'enable-owasp-modsecurity-crs': 'true' }));
  assert.deepEqual(r2.waf('b.example.com'), { crs: true, rules: [] });
});

test('fail closed: no module, no CRS, a refused snippet (allowlist or ConfigMap) → 503 with a ModSecurityUnavailable Warning', () => {
  const hosts = {
    'plain.example.com': {},
    'waf.example.com': { [`${A}enable-modsecurity`]: 'true' },
    'crs.example.com': { [`${A}enable-modsecurity`]: 'true', [`${A}enable-owasp-core-rules`]: 'true' },
  };
  // Without the module: every path asking for ModSecurity answers 503; the others are served.
  const none = run(model(hosts), OPTS);
  assert.equal(none.route('plain.example.com').action, undefined);
  for (const h of ['waf.example.com', 'crs.example.com']) {
    assert.equal(none.route(h).action, 'unavailable', h);
    assert.equal(none.route(h).backendId, null, h);
    assert.equal(none.route(h).profile, undefined, h);
  }
  assert.match(none.warnings(1).join('\n'), /ModSecurityUnavailable: ModSecurity is asked for \(nginx.ingress.kubernetes.io\/enable-modsecurity\) but nginx's ModSecurity module is not installed on this controller \(Debian package libnginx-mod-http-modsecurity\); failing closed/);
  assert.equal(none.out.status.get('Ingress/default/i1')?.programmed, false);
  // The ConfigMap's enable-modsecurity without the module: every Ingress (but the one opting out) fails closed.
  const cm = run(model({ 'a.example.com': {}, 'b.example.com': { [`${A}enable-modsecurity`]: 'false' } }, { 'enable-modsecurity': 'true' }), OPTS);
  assert.equal(cm.route('a.example.com').action, 'unavailable');
  assert.match(cm.warnings(0).join(), /asked for \(the ConfigMap's enable-modsecurity\)/);
  assert.equal(cm.route('b.example.com').action, undefined);
  // The module without the CRS: only the path asking for the CRS.
  const noCrs = run(model(hosts), { ...OPTS, modsecurity: { crs: false } });
  assert.ok(noCrs.route('waf.example.com').profile && noCrs.route('waf.example.com').action === undefined);
  assert.equal(noCrs.route('crs.example.com').action, 'unavailable');
  assert.match(noCrs.warnings(2).join(), /the OWASP Core Rule Set is asked for \(nginx.ingress.kubernetes.io\/enable-owasp-core-rules\) but it is not installed on this controller \(Debian package modsecurity-crs\)/);

  // A snippet off the allowlist: refused with the line (InvalidSnippet); with ModSecurity on, the paths fail closed.
  const bad = { [`${A}modsecurity-snippet`]: 'SecRuleEngine On\nSecRule ARGS "@rx x" "id:1,phase:1,exec:/bin/sh"' };
  const r = run(model({ 'on.example.com': { ...bad, [`${A}enable-modsecurity`]: 'true' }, 'off.example.com': bad }, SNIPPETS_OK));
  assert.equal(r.route('on.example.com').action, 'unavailable');
  assert.match(r.warnings(0).join('\n'), /InvalidSnippet: annotation nginx.ingress.kubernetes.io\/modsecurity-snippet is refused: line 2: directive "SecRule"/);
  assert.match(r.warnings(0).join('\n'), /ModSecurityUnavailable: ModSecurity is on \(nginx.ingress.kubernetes.io\/enable-modsecurity\) but nginx.ingress.kubernetes.io\/modsecurity-snippet is refused \(line 2/);
  // Without ModSecurity the snippet does nothing either way: a Warning, the path is served.
  assert.equal(r.route('off.example.com').action, undefined);
  assert.match(r.warnings(1).join(), /InvalidSnippet: .*line 2: directive "SecRule"/);

  // The ConfigMap's default (snippets not allowed, risk level High): the snippet is refused, the paths fail closed.
  const gated = run(model({ 'on.example.com': { [`${A}enable-modsecurity`]: 'true', [`${A}modsecurity-snippet`]: 'SecRuleEngine On' }, 'off.example.com': { [`${A}modsecurity-snippet`]: 'SecRuleEngine On' } }));
  assert.equal(gated.route('on.example.com').action, 'unavailable');
  assert.match(gated.warnings(0).join('\n'), /RiskyAnnotation: annotation nginx.ingress.kubernetes.io\/modsecurity-snippet \(risk Critical\) is refused and not applied: the ConfigMap does not set allow-snippet-annotations: "true"/);
  assert.match(gated.warnings(0).join('\n'), /ModSecurityUnavailable: .*modsecurity-snippet is refused by the ConfigMap/);
  assert.equal(gated.route('off.example.com').action, undefined);
  // Critical allowed but not snippets, and the reverse: refused both ways.
  for (const cfg of [{ 'annotations-risk-level': 'Critical' }, { 'allow-snippet-annotations': 'true' }] as Record<string, string>[]) {
    const g = run(model({ 'on.example.com': { [`${A}enable-modsecurity`]: 'true', [`${A}modsecurity-snippet`]: 'SecRuleEngine On' } }, cfg));
    assert.equal(g.route('on.example.com').action, 'unavailable', JSON.stringify(cfg));
  }
  // modsecurity-transaction-id (High) refused by a lower risk level is only left out: ModSecurity still applies.
  const medium = run(model({ 't.example.com': { [`${A}enable-modsecurity`]: 'true', [`${A}modsecurity-transaction-id`]: '$request_id' } }, { 'annotations-risk-level': 'Medium' }));
  assert.deepEqual(medium.waf('t.example.com'), { crs: false, rules: [] });
  assert.match(medium.warnings(0).join(), /RiskyAnnotation: annotation nginx.ingress.kubernetes.io\/modsecurity-transaction-id \(risk High\)/);
});

test('a canary\'s ModSecurity annotations are not its own (its traffic goes through the main Ingress\'s profile)', () => {
  const m = modelOf({
    services: [svc('web', [{ port: 80 }]), svc('next', [{ port: 80 }])],
    ingresses: [
      ing('main', { rules: [rule('c.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { [`${A}enable-modsecurity`]: 'true' } }),
      ing('canary', { rules: [rule('c.example.com', [{ path: '/', backend: svcRef('next', 80) }])] }, { created: '2026-02-01T00:00:00Z', annotations: { [`${A}canary`]: 'true', [`${A}canary-weight`]: '50', [`${A}enable-modsecurity`]: 'false' } }),
    ],
  });
  const out = translate(m.snapshot(), OPTS);
  // Without the module the main fails closed; the canary's own "false" changes nothing.
  assert.equal(out.config.data.routes['c.example.com']!.rules[0]!.route.action, 'unavailable');
  const ok = translate(m.snapshot(), INSTALLED);
  const p = ok.config.structure.profiles.find((x) => x.name === ok.config.data.routes['c.example.com']!.rules[0]!.route.profile);
  assert.deepEqual(p?.modsecurity, { crs: false, rules: [] });
});
