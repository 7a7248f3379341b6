// add-headers / proxy-set-headers (global-headers.ts): names and values checked strictly, the headers Portico sets
// itself or that frame a message refused, variables from the allowlist only, injection payloads refused or rendered
// as one quoted token, a missing ConfigMap reported; and the reconcilers: the controller ConfigMap resolves them, a
// change to the named ConfigMap resolves them again, the structure nginx is rendered from changes with them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { globalHeadersOf, headerValue, parseGlobalHeaders } from './global-headers.ts';
import { defaultGlobalConfig, parseGlobalConfig } from './global-config.ts';
import { headerToken, headerValueQuoted, UnsafeValueError } from '../nginx-driver/nginx/escape.ts';
import { Model } from './model.ts';
import { ConfigMapReconciler } from '../kinds/configmap/reconciler.ts';
import { ReferencedConfigMapReconciler, configMapTransform, type ConfigMapObject } from '../kinds/configmap/references.ts';
import type { EventRecorder } from '../../operator/events.ts';
import type { Informer } from '../../operator/informer.ts';
import type { KubeClient } from '../../operator/kube/client.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import { translate } from '../translate/translate.ts';
import { structureChecksum } from '../translate/diff.ts';
import { OPTS, modelOf } from '../translate/fixtures.test-helpers.ts';

const PAYLOADS = [';', '}', '{', '\n', '\r', '#', '$', '"', "'", '\\', ' ', '\u0000', '\u2028', '\t', ' *_by_lua_block { os.exit() }', '; include /etc/passwd', '`', '${', '$portico_backend', '$request_body'];

test('the keys: "namespace/name" or empty; anything else keeps the previous value', () => {
  const r = parseGlobalConfig({ 'add-headers': 'ingress/resp', 'proxy-set-headers': ' ingress/req ' }, defaultGlobalConfig());
  assert.deepEqual(r.errors, []);
  assert.equal(r.values.addHeaders, 'ingress/resp');
  assert.equal(r.values.proxySetHeaders, 'ingress/req');
  for (const bad of ['resp', 'Ingress/resp', 'a/b/c', 'ns/', '/x', 'ns/x;', 'ns/x y', 'ns/$x']) {
    const b = parseGlobalConfig({ 'add-headers': bad }, r.values);
    assert.equal(b.errors.length, 1, bad);
    assert.equal(b.values.addHeaders, 'ingress/resp', `${bad} keeps the previous value`);
  }
  assert.equal(defaultGlobalConfig().addHeaders, '');
  assert.equal(defaultGlobalConfig().proxySetHeaders, '');
});

test('header names: letters, digits and "-"; framing and Portico\'s own refused per direction; each refusal named', () => {
  const r = parseGlobalHeaders('proxy', {
    'X-Team': 'payments', 'x-b': '', 'X_Under': '1', '1x': '1', 'Host': 'evil', 'Content-Length': '0', 'X-Forwarded-For': '1.2.3.4',
    'X-Request-ID': 'x', 'x-team': 'twice', ['a'.repeat(65)]: 'long',
  });
  assert.deepEqual(r.headers, [{ name: 'X-Team', value: 'payments' }, { name: 'x-b', value: '' }]);
  for (const n of ['X_Under', '1x', 'Host', 'Content-Length', 'X-Forwarded-For', 'X-Request-ID', 'x-team', 'aaaa']) assert.ok(r.errors.some((e) => e.includes(n)), `${n} named: ${r.errors.join(' | ')}`);
  const a = parseGlobalHeaders('add', { 'X-Frame-Options': 'DENY', 'Content-Type': 'text/plain', 'Strict-Transport-Security': 'max-age=1', 'Server': 'x', 'Transfer-Encoding': 'chunked', 'Host': 'fine-on-a-response' });
  assert.deepEqual(a.headers.map((h) => h.name), ['Host', 'X-Frame-Options']);
  assert.equal(a.errors.length, 4);
  const many = Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`X-H${String(i).padStart(2, '0')}`, 'v']));
  const m = parseGlobalHeaders('add', many);
  assert.equal(m.headers.length, 64);
  assert.equal(m.errors.length, 6);
});

test('header values: printable text and allowed variables, written ${name}; the rest refused', () => {
  assert.deepEqual(headerValue('$http_x_team-$remote_addr'), { value: '${http_x_team}-${remote_addr}' });
  assert.deepEqual(headerValue('${scheme}://${host}x'), { value: '${scheme}://${host}x' });
  assert.deepEqual(headerValue('max-age=0, "quoted"; {braces} #hash'), { value: 'max-age=0, "quoted"; {braces} #hash' });
  // nginx reads every letter, digit and "_" after "$" as the name: "$hostX" is $hostX (unknown), not $host + "X".
  for (const bad of ['$hostX', '$portico_backend', '${portico_auth_uri}', '$request_body', '$nosuch', '$', 'a$', '${host', '$ {host}', 'a\\nb', 'x\ny', 'x\u0000', 'é', 'x'.repeat(1025)]) {
    assert.ok('error' in headerValue(bad), JSON.stringify(bad));
  }
});

test('injection payloads in names and values: refused, or rendered as one quoted token nginx reads back as written', () => {
  for (const kind of ['add', 'proxy'] as const) {
    for (const p of PAYLOADS) {
      for (const s of [p, `X-A${p}`, `${p}X-A`, `X-A${p}X-B`]) {
        const r = parseGlobalHeaders(kind, { [s]: 'v', 'X-Ok': s, 'X-Ok2': `before${s}after` });
        for (const h of r.headers) {
          assert.equal(headerToken(h.name), h.name);
          const q = headerValueQuoted(h.value);
          // One double-quoted token: no unescaped quote inside, no backslash but the quote escapes, no control
          // character, and every "$" a braced allowed variable.
          assert.match(q, /^"([^"\\\u0000-\u001f\u007f]|\\")*"$/, `${kind} ${JSON.stringify(s)} → ${q}`);
          for (const v of h.value.matchAll(/\$\{([a-z0-9_]+)\}/g)) assert.ok(!v[1]?.startsWith('portico_'), q);
        }
      }
    }
  }
  assert.throws(() => headerValueQuoted('$host'), UnsafeValueError, 'the helper refuses an unbraced variable');
  assert.throws(() => headerValueQuoted('a\\'), UnsafeValueError);
  assert.throws(() => headerValueQuoted('a\nb'), UnsafeValueError);
});

test('resolution: a missing ConfigMap is a Warning and no headers; a pending one waits silently; both keys at once', () => {
  const v = { addHeaders: 'ingress/resp', proxySetHeaders: 'ingress/req' };
  const none = globalHeadersOf(v, () => undefined);
  assert.equal(none.headers, undefined);
  assert.equal(none.warnings.length, 2);
  assert.match(none.warnings[0] ?? '', /^add-headers: ConfigMap ingress\/resp not found/);
  assert.deepEqual(globalHeadersOf(v, () => 'pending'), { warnings: [] });
  const data: Record<string, Record<string, string>> = { 'ingress/resp': { 'X-Frame-Options': 'DENY', 'Host': 'x' }, 'ingress/req': { 'X-Team': '$http_x_team', 'Host': 'x' } };
  const both = globalHeadersOf(v, (k) => ({ data: data[k] ?? {} }));
  assert.deepEqual(both.headers, { add: [{ name: 'Host', value: 'x' }, { name: 'X-Frame-Options', value: 'DENY' }], proxy: [{ name: 'X-Team', value: '${http_x_team}' }] });
  assert.deepEqual(both.warnings.map((w) => w.split(':')[0]), ['proxy-set-headers']);
});

function cm(ns: string, name: string, data?: Record<string, string>): ConfigMapObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, ...(data ? { data } : {}) };
}

test('reconcilers: the controller ConfigMap resolves the headers, a change to the named ConfigMap resolves them again, deletion warns', async () => {
  const model = new Model();
  const events: { reason: string; note: string }[] = [];
  const recorder = { event: (_o: KubeObject, _t: string, reason: string, _a: string, note: string) => events.push({ reason, note }) } as unknown as EventRecorder;
  const ctlStore = new Map<string, ConfigMapObject>([['ingress/portico', cm('ingress', 'portico', { 'add-headers': 'team/resp', 'proxy-set-headers': 'team/missing' })]]);
  const refStore = new Map<string, ConfigMapObject>();
  const transform = configMapTransform(model);
  const put = (o: ConfigMapObject) => refStore.set(`${o.metadata.namespace}/${o.metadata.name}`, transform(o));
  put(cm('team', 'resp', { 'X-Frame-Options': 'DENY' })); // cached before anything names it: without its data
  assert.equal(refStore.get('team/resp')?.data, undefined);
  const gets: string[] = [];
  const client = { request: async (_m: string, p: string) => (gets.push(p), cm('team', 'resp', { 'X-Frame-Options': 'DENY' })) } as unknown as KubeClient;
  let globalQueued = 0;
  const refs = new ReferencedConfigMapReconciler({ model, informer: { store: { get: (k: string) => refStore.get(k) } } as unknown as Informer<ConfigMapObject>, client, enqueueIngress: () => {}, enqueueGlobal: () => globalQueued++ });
  const refQueue: string[] = [];
  const ctl = new ConfigMapReconciler({ store: { get: (k: string) => ctlStore.get(k) } } as unknown as Informer<KubeObject & { data?: Record<string, string> }>, model, recorder, 'ingress/portico', { read: refs.state, watch: (keys) => refQueue.push(...keys) });

  await ctl.reconcile({} as never, 'ingress/portico');
  assert.equal(model.globalConfig().globalHeaders, undefined, 'team/resp is being read: nothing yet');
  assert.deepEqual(events.map((e) => e.reason), ['InvalidConfiguration'], 'the missing one is reported at once');
  assert.match(events[0]?.note ?? '', /proxy-set-headers: ConfigMap team\/missing not found/);
  assert.deepEqual(refQueue.sort(), ['team/missing', 'team/resp']);
  for (const k of refQueue.splice(0)) await refs.reconcile({} as never, k);
  assert.equal(gets.length, 1, 'the ConfigMap cached without data is fetched once');
  assert.equal(globalQueued, 1, 'its arrival resolves the controller ConfigMap again');
  await ctl.reconcile({} as never, 'ingress/portico');
  assert.deepEqual(model.globalConfig().globalHeaders, { add: [{ name: 'X-Frame-Options', value: 'DENY' }], proxy: [] });
  const structure = () => structureChecksum(translate(model.snapshot(), OPTS).config.structure);
  const before = structure();

  // The named ConfigMap changes: now cached with its data (the controller ConfigMap names it).
  put(cm('team', 'resp', { 'X-Frame-Options': 'SAMEORIGIN', 'Bad Name': 'x' }));
  assert.ok(refStore.get('team/resp')?.data);
  await refs.reconcile({} as never, 'team/resp');
  assert.equal(globalQueued, 2);
  events.length = 0;
  await ctl.reconcile({} as never, 'ingress/portico');
  assert.deepEqual(model.globalConfig().globalHeaders?.add, [{ name: 'X-Frame-Options', value: 'SAMEORIGIN' }]);
  assert.ok(events.some((e) => /add-headers: ConfigMap team\/resp: "Bad Name" is not a header name.*left out/.test(e.note)), events.map((e) => e.note).join(' | '));
  assert.notEqual(structure(), before, 'nginx.conf changes with them (a reload)');

  // Deleted: a Warning, and no headers (not a broken configuration).
  refStore.delete('team/resp');
  await refs.reconcile({} as never, 'team/resp');
  assert.equal(globalQueued, 3);
  events.length = 0;
  await ctl.reconcile({} as never, 'ingress/portico');
  assert.equal(model.globalConfig().globalHeaders, undefined);
  assert.ok(events.some((e) => /add-headers: ConfigMap team\/resp not found/.test(e.note)));

  // No longer named: its reader is asked once more, to drop it.
  refQueue.length = 0;
  ctlStore.set('ingress/portico', cm('ingress', 'portico', {}));
  await ctl.reconcile({} as never, 'ingress/portico');
  assert.deepEqual([...new Set(refQueue)].sort(), ['team/missing', 'team/resp']);
  refQueue.length = 0;
  await ctl.reconcile({} as never, 'ingress/portico');
  assert.deepEqual(refQueue, [], 'then no more');
  assert.equal(transform(cm('team', 'resp', { a: 'b' })).data, undefined, 'no longer cached with its data');
});

test('translation: the resolved headers reach nginx.conf\'s structure only when there are some', () => {
  const m = modelOf({});
  assert.equal(translate(m.snapshot(), OPTS).config.structure.global.headers, undefined);
  m.setGlobalConfig({ ...m.globalConfig(), globalHeaders: { add: [], proxy: [{ name: 'X-Team', value: 'a' }] } });
  assert.deepEqual(translate(m.snapshot(), OPTS).config.structure.global.headers, { add: [], proxy: [{ name: 'X-Team', value: 'a' }] });
});
