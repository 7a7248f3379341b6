// ingress-nginx's server-alias: more names for the hosts of an Ingress's rules, serving exactly what the host serves
// (ingress-nginx adds them to the host's server_name). Pure translation, no cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ing, modelOf, OPTS, rule, svc, svcRef } from './fixtures.test-helpers.ts';
import { translate } from './translate.ts';

const web = svc('web', [{ port: 80 }]);
const api = svc('api', [{ port: 80 }]);
const N = 'nginx.ingress.kubernetes.io/';

test('an alias serves every path of the host, of every Ingress on it', () => {
  const r = translate(
    modelOf({
      services: [web, api],
      ingresses: [
        ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { [`${N}server-alias`]: 'alias.example.com, *.wild.example.com' } }),
        ing('b', { rules: [rule('a.example.com', [{ path: '/api', backend: svcRef('api', 80) }])] }),
      ],
    }).snapshot(),
    OPTS,
  );
  const routes = r.config.data.routes;
  assert.deepEqual(routes['alias.example.com'], routes['a.example.com']);
  assert.deepEqual(routes['*.wild.example.com'], routes['a.example.com']);
  assert.deepEqual(routes['alias.example.com']?.rules.map((x) => [x.path, x.route.backendId]), [['/api', 'default_api_80'], ['/', 'default_web_80']]);
  assert.equal(r.events.filter((e) => e.type === 'Warning').length, 0, JSON.stringify(r.events));
});

test('an alias that is a host of its own keeps its rules (AliasSkipped), as ingress-nginx skips it', () => {
  const r = translate(
    modelOf({
      services: [web, api],
      ingresses: [
        ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { [`${N}server-alias`]: 'b.example.com' } }),
        ing('b', { rules: [rule('b.example.com', [{ path: '/', backend: svcRef('api', 80) }])] }),
      ],
    }).snapshot(),
    OPTS,
  );
  assert.equal(r.config.data.routes['b.example.com']?.rules[0]?.route.backendId, 'default_api_80');
  const ev = r.events.filter((e) => e.reason === 'AliasSkipped');
  assert.equal(ev.length, 1);
  assert.match(ev[0]?.message ?? '', /b\.example\.com.*a host with rules of its own/);
  assert.equal(ev[0]?.ref, 'Ingress/default/a');
});

test('the same alias on two hosts: the first keeps it, the second is told', () => {
  const r = translate(
    modelOf({
      services: [web, api],
      ingresses: [
        ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { [`${N}server-alias`]: 'x.example.com' }, created: '2026-01-01T00:00:00Z' }),
        ing('b', { rules: [rule('b.example.com', [{ path: '/', backend: svcRef('api', 80) }])] }, { annotations: { [`${N}server-alias`]: 'x.example.com' }, created: '2026-01-02T00:00:00Z' }),
      ],
    }).snapshot(),
    OPTS,
  );
  const x = r.config.data.routes['x.example.com'];
  const owner = x === r.config.data.routes['a.example.com'] ? 'a' : x === r.config.data.routes['b.example.com'] ? 'b' : 'none';
  assert.notEqual(owner, 'none');
  const ev = r.events.filter((e) => e.reason === 'AliasSkipped');
  assert.equal(ev.length, 1);
  assert.equal(ev[0]?.ref, `Ingress/default/${owner === 'a' ? 'b' : 'a'}`);
});

test('an invalid alias list is refused whole with a Warning naming the annotation; nothing is aliased', () => {
  for (const bad of ['b.example.com;evil.com', 'b.example.com\nserver_name x', 'B_.example.com', '$host', 'b.example.com }', '']) {
    const r = translate(
      modelOf({ services: [web], ingresses: [ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { [`${N}server-alias`]: bad } })] }).snapshot(),
      OPTS,
    );
    assert.deepEqual(Object.keys(r.config.data.routes), ['a.example.com'], JSON.stringify(bad));
    assert.ok(r.events.some((e) => e.type === 'Warning' && /server-alias/.test(e.message)), JSON.stringify(bad));
  }
});
