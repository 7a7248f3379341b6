// Ingress conformance: an Exact path ending in "/" must not answer the same path without the slash. nginx answers
// "/foo" with a 301 to "/foo/" when a location named "/foo/" proxies (auto-redirect); translation adds a companion
// location for "/foo" that serves what "/foo" gets anyway.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Location } from '../gateway/config-types.ts';
import { slashCompanions, translate } from './translate.ts';
import { OPTS, ing, modelOf, rule, svc, svcRef } from './fixtures.test-helpers.ts';

const services = ['root', 'foo', 'a', 'abc', 'exact'].map((n) => svc(n, [{ port: 80 }]));
type P = { path: string; pathType: string; svc: string };

function locationsFor(paths: P[], annotations: Record<string, string> = {}): Location[] {
  const r = translate(
    modelOf({
      services,
      ingresses: [ing('x', { rules: [rule('h.example.com', paths.map((p) => ({ path: p.path, pathType: p.pathType, backend: svcRef(p.svc, 80) })))] }, { annotations })],
    }).snapshot(),
    OPTS,
  );
  return r.config.structure.servers.find((s) => s.host === 'h.example.com')?.locations ?? [];
}
const show = (l: Location) => `${l.match} ${l.path} -> ${l.notFound ? '404' : l.backendId}${l.slashCompanionOf ? ` (for ${l.slashCompanionOf})` : ''}`;

test('Exact "/x/": the slash-less path is served by what would match it otherwise, never redirected', () => {
  const table: { name: string; paths: P[]; want: string[] }[] = [
    {
      name: 'falls back to the longest matching Prefix',
      paths: [{ path: '/foo/', pathType: 'Exact', svc: 'exact' }, { path: '/', pathType: 'Prefix', svc: 'root' }],
      want: ['exact /foo -> default_root_80 (for /foo/)', 'exact /foo/ -> default_exact_80', 'prefix / -> default_root_80'],
    },
    {
      name: 'nothing else matches: 404, as without the Exact path',
      paths: [{ path: '/foo/', pathType: 'Exact', svc: 'exact' }],
      want: ['exact /foo -> 404 (for /foo/)', 'exact /foo/ -> default_exact_80'],
    },
    {
      name: 'an Exact rule for the slash-less path: no companion',
      paths: [{ path: '/foo/', pathType: 'Exact', svc: 'exact' }, { path: '/foo', pathType: 'Exact', svc: 'foo' }],
      want: ['exact /foo -> default_foo_80', 'exact /foo/ -> default_exact_80'],
    },
    {
      name: 'a Prefix rule for the slash-less path already claims it: no companion',
      paths: [{ path: '/foo/', pathType: 'Exact', svc: 'exact' }, { path: '/foo', pathType: 'Prefix', svc: 'foo' }],
      want: ['exact /foo/ -> default_exact_80', 'prefix /foo -> default_foo_80'],
    },
    {
      name: 'element-wise: Prefix /a matches /a/b, Prefix /a/bc does not',
      paths: [
        { path: '/a/b/', pathType: 'Exact', svc: 'exact' },
        { path: '/a', pathType: 'Prefix', svc: 'a' },
        { path: '/a/bc', pathType: 'Prefix', svc: 'abc' },
        { path: '/', pathType: 'Prefix', svc: 'root' },
      ],
      want: ['exact /a/b -> default_a_80 (for /a/b/)', 'exact /a/b/ -> default_exact_80', 'prefix /a/bc -> default_abc_80', 'prefix /a -> default_a_80', 'prefix / -> default_root_80'],
    },
    {
      name: 'repeated slashes: each shorter form gets a companion',
      paths: [{ path: '/a//', pathType: 'Exact', svc: 'exact' }, { path: '/', pathType: 'Prefix', svc: 'root' }],
      want: ['exact /a -> default_root_80 (for /a/)', 'exact /a/ -> default_root_80 (for /a//)', 'exact /a// -> default_exact_80', 'prefix / -> default_root_80'],
    },
    {
      name: 'Exact "/" has no slash-less form',
      paths: [{ path: '/', pathType: 'Exact', svc: 'exact' }],
      want: ['exact / -> default_exact_80'],
    },
    {
      name: 'Prefix "/foo/" matches "/foo" (Ingress spec): one prefix location, rendered as = /foo and /foo/',
      paths: [{ path: '/foo/', pathType: 'Prefix', svc: 'foo' }],
      want: ['prefix /foo -> default_foo_80'],
    },
  ];
  for (const t of table) assert.deepEqual(locationsFor(t.paths).map(show), t.want, t.name);
});

test('a companion copies the settings of the location it stands in for', () => {
  const locs = locationsFor(
    [{ path: '/foo/', pathType: 'Exact', svc: 'exact' }, { path: '/', pathType: 'Prefix', svc: 'root' }],
    { 'nginx.ingress.kubernetes.io/proxy-read-timeout': '7', 'nginx.ingress.kubernetes.io/force-ssl-redirect': 'true' },
  );
  const c = locs.find((l) => l.path === '/foo');
  assert.equal(c?.proxyReadTimeoutSeconds, 7);
  assert.equal(c?.sslRedirect, true);
  assert.equal(c?.source, 'default/x');
});

test('slashCompanions on its own: regex locations never count as claiming a path', () => {
  const base = { source: 'ns/i', sslRedirect: false };
  const out = slashCompanions([
    { ...base, path: '/x/', match: 'exact', backendId: 'b1' },
    { ...base, path: '/x', match: 'regex', backendId: 'b2' },
  ]);
  assert.deepEqual(out.map(show), ['exact /x -> 404 (for /x/)']);
  assert.equal(out[0]?.backendId, null);
});
