// The ConfigMap's global filters reach nginx.conf as geo/map blocks and server-level 403s (before the router), pass
// `nginx -t`, and an invalid one fails every request closed (503).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderNginxConf } from './render.ts';
import { nginxTest, runtimeDir } from './nginx-t.test-helpers.ts';
import { mapSource, UnsafeValueError } from './escape.ts';
import type { Structure } from '../../config/types.ts';
import { translate } from '../../translate/translate.ts';
import { OPTS, ing, modelOf, rule, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../../model/global-config.ts';

function structureFrom(data: Record<string, string>): Structure {
  const r = parseGlobalConfig(data, defaultGlobalConfig());
  const m = modelOf({ services: [svc('web', [{ port: 80 }])], ingresses: [ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] })] });
  m.setGlobalConfig(r.values);
  return translate(m.snapshot(), OPTS).config.structure;
}
const rt = runtimeDir();

test('block-cidrs / block-user-agents / block-referers: geo and maps, 403 before the router; nginx -t passes', () => {
  const conf = renderNginxConf(structureFrom({ 'block-cidrs': '192.0.2.0/24, 2001:db8::1', 'block-user-agents': 'BadBot/1.0,default,~*(crawler|spider) x,~^curl/\\d', 'block-referers': '~*evil\\.example,https://spam.example/' }), rt, 'c');
  assert.match(conf, /geo \$portico_block_cidr \{\s+default 0;\s+192\.0\.2\.0\/24 1;\s+2001:db8::1 1;\s+\}/);
  assert.match(conf, /map \$http_user_agent \$portico_block_ua \{\s+default 0;\s+"BadBot\/1\.0" 1;\s+"\\\\default" 1;\s+"~\*\(crawler\|spider\) x" 1;\s+"~\^curl\/\\\\d" 1;\s+\}/);
  assert.match(conf, /map \$http_referer \$portico_block_referer \{\s+default 0;\s+"~\*evil\\\\\.example" 1;\s+"https:\/\/spam\.example\/" 1;\s+\}/);
  // Each proxy server checks them before the router runs.
  const server = conf.split('set_by_lua $portico_jump')[0]!;
  for (const v of ['cidr', 'ua', 'referer']) assert.ok(server.includes(`if ($portico_block_${v}) { return 403; }`), v);
  assert.ok(!conf.includes('return 503;\n    if ($portico_block'), 'no fail-closed return when every list is valid');
  nginxTest(rt, conf);
});

test('none set: nothing rendered; an invalid one: every request 503 (fail closed), nginx -t passes', () => {
  const plain = renderNginxConf(structureFrom({}), rt, 'c');
  assert.ok(!plain.includes('portico_block'));
  const bad = renderNginxConf(structureFrom({ 'block-cidrs': '192.0.2.0/24', 'block-user-agents': '~(unclosed' }), rt, 'c');
  assert.match(bad, /# A global filter of the ConfigMap cannot be applied[^\n]*\n\s+return 503;/);
  assert.ok(!bad.includes('$portico_block_ua'), 'the invalid list itself is not rendered');
  nginxTest(rt, bad);
});

test('mapSource refuses what could leave its token', () => {
  for (const p of [{ match: 'exact', value: 'a"b' }, { match: 'exact', value: 'a\\b' }, { match: 'exact', value: '~x' }, { match: 'regex', value: 'a"; deny all; "' }, { match: 'iregex', value: 'a\nb' }, { match: 'glob', value: 'x' }, { match: 'exact', value: '' }]) {
    assert.throws(() => mapSource(p), UnsafeValueError, JSON.stringify(p));
  }
  assert.equal(mapSource({ match: 'regex', value: 'a\\.b' }), '"~a\\\\.b"');
});
