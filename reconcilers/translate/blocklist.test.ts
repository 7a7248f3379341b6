// annotation-value-word-blocklist (ConfigMap): an Ingress with a listed word in an annotation value is not served
// (as ingress-nginx skips it), with a Warning naming the annotation and the word; the others are untouched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { translate } from './translate.ts';
import { IncrementalTranslator } from './incremental.ts';
import { OPTS, ing, modelOf, rule, svc, svcRef } from './fixtures.test-helpers.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../model/global-config.ts';

const P = 'nginx.ingress.kubernetes.io/';
function model(blocklist: string) {
  const m = modelOf({
    services: [svc('web', [{ port: 80 }])],
    ingresses: [
      ing('bad', { rules: [rule('bad.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { [`${P}rewrite-target`]: '/', [`${P}configuration-snippet`]: 'more_set_headers "X-A: b"; alias /etc;' } }),
      ing('good', { rules: [rule('good.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { [`${P}rewrite-target`]: '/' } }),
    ],
  });
  const r = parseGlobalConfig({ 'annotation-value-word-blocklist': blocklist }, defaultGlobalConfig());
  assert.deepEqual(r.errors, []);
  m.setGlobalConfig(r.values);
  return m;
}

test('an Ingress with a blocked word is not served, with why; the others are; an empty list blocks nothing', () => {
  const on = translate(model('load_module, alias ,serviceaccount').snapshot(), OPTS);
  assert.deepEqual(Object.keys(on.config.data.routes).sort(), ['good.example.com']);
  const w = on.events.find((e) => e.reason === 'BlockedAnnotationValue');
  assert.ok(w, 'a Warning');
  assert.match(w.message, /annotation nginx\.ingress\.kubernetes\.io\/configuration-snippet contains the word "alias"/);
  assert.equal(w.ref, 'Ingress/default/bad');
  const off = translate(model('').snapshot(), OPTS);
  assert.deepEqual(Object.keys(off.config.data.routes).sort(), ['bad.example.com', 'good.example.com']);
  assert.ok(!off.events.some((e) => e.reason === 'BlockedAnnotationValue'));
  // Case-sensitive, as ingress-nginx: "ALIAS" is another word.
  assert.deepEqual(Object.keys(translate(model('ALIAS').snapshot(), OPTS).config.data.routes).sort(), ['bad.example.com', 'good.example.com']);
});

test('the incremental translator agrees: a blocked Ingress changed alone stays unserved', () => {
  const m = model('alias');
  const inc = new IncrementalTranslator();
  inc.translate(m.snapshot(), OPTS, null);
  const again = inc.translate(m.snapshot(), OPTS, new Set(['default/bad']));
  assert.deepEqual(Object.keys(again.config.data.routes).sort(), ['good.example.com']);
});
