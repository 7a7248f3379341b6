// ingress-nginx's path and rewrite semantics as translation tables: each test names the ingress-nginx behaviour it
// pins (docs/user-guide/ingress-path-matching.md, annotations.md "Rewrite", "Redirect from/to www", "Server-side
// HTTPS enforcement through redirect", examples/rewrite). The data plane side is in
// reconcilers/nginx-driver/nginx/ingress-nginx-paths.nginx.test.ts and nginx-assets/lua/tests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../operator/kube/object.ts';
import type { HostRoutes, PluginInstance, RouteRule } from '../config/types.ts';
import { OPTS, ing, modelOf, rule, svc, svcRef } from './fixtures.test-helpers.ts';
import { translate } from './translate.ts';

const A = 'nginx.ingress.kubernetes.io/';
const services = [svc('web', [{ port: 80 }]), svc('api', [{ port: 80 }]), svc('blog', [{ port: 80 }])];
const run = (ingresses: KubeObject[], secrets?: (m: ReturnType<typeof modelOf>) => void) => {
  const m = modelOf({ services, ingresses });
  secrets?.(m);
  return translate(m.snapshot(), OPTS);
};
const rulesOf = (h: HostRoutes | undefined): Pick<RouteRule, 'path' | 'match'>[] => (h?.rules ?? []).map((r) => ({ path: r.path, match: r.match }));
const pluginOf = (r: ReturnType<typeof run>, rr: RouteRule | undefined, type: string): PluginInstance | undefined =>
  (rr?.route.plugins ?? []).map((id) => r.config.data.plugins[id]).find((p) => p?.type === type);

test('rewrite-target with captures: the classic "/something(/|$)(.*)" + "/$2" is a start-anchored case-insensitive regex whose rewrite replaces the whole path (ingress-nginx examples/rewrite)', () => {
  const r = run([
    ing('rw', { rules: [rule('rewrite.bar.com', [{ path: '/something(/|$)(.*)', pathType: 'ImplementationSpecific', backend: svcRef('web', 80) }])] }, { annotations: { [`${A}rewrite-target`]: '/$2' } }),
  ]);
  assert.deepEqual(r.events.filter((e) => e.type === 'Warning'), [], 'accepted without a Warning');
  const h = r.config.data.routes['rewrite.bar.com'];
  assert.deepEqual(rulesOf(h), [{ path: '^/something(/|$)(.*)', match: 'regex' }], 'rewrite-target implies use-regex; `~* "^<path>"`');
  assert.deepEqual(pluginOf(r, h?.rules[0], 'rewrite'), { name: 'default/rw (annotations)', type: 'rewrite', regex: { pattern: '/something(/|$)(.*)', replacement: '/$2', nginx: true } });
});

test('rewrite-target rewrites each path of the Ingress with that path\'s own regex (ingress-nginx writes one `rewrite "(?i)<path>"` per location)', () => {
  const r = run([
    ing('rw', { rules: [rule('r.example.com', [
      { path: '/api/(v[0-9]+)/(.*)', pathType: 'ImplementationSpecific', backend: svcRef('api', 80) },
      { path: '/web', pathType: 'Prefix', backend: svcRef('web', 80) },
    ])] }, { annotations: { [`${A}rewrite-target`]: '/$1' } }),
  ]);
  const h = r.config.data.routes['r.example.com'];
  const patterns = (h?.rules ?? []).map((x) => (pluginOf(r, x, 'rewrite') as { regex?: { pattern: string } } | undefined)?.regex?.pattern);
  assert.deepEqual(patterns, ['/api/(v[0-9]+)/(.*)', '/web'], 'a Prefix path is read as a regex too (as written)');
});

test('rewrite-target with nginx variables or an absolute URL is ignored with a Warning (Portico refuses what ingress-nginx would interpolate)', () => {
  for (const target of ['/$host/$1', 'https://other.example.com/$1', '/$request_uri']) {
    const r = run([ing('rw', { rules: [rule('r.example.com', [{ path: '/x/(.*)', pathType: 'ImplementationSpecific', backend: svcRef('web', 80) }])] }, { annotations: { [`${A}rewrite-target`]: target } })]);
    assert.ok(r.events.some((e) => e.type === 'Warning' && e.message.includes('rewrite-target')), target);
    assert.equal(r.config.data.routes['r.example.com']?.rules[0]?.route.plugins, undefined, `${target}: no rewrite`);
  }
});

test('use-regex on ONE Ingress makes every path of that host, of every Ingress, a start-anchored regex ordered longest first — no Warning (ingress-path-matching.md IMPORTANT NOTES)', () => {
  const r = run([
    ing('plain', { rules: [rule('test.com', [
      { path: '/foo/bar', pathType: 'Prefix', backend: svcRef('web', 80) },
      { path: '/foo/bar/', pathType: 'ImplementationSpecific', backend: svcRef('api', 80) },
      { path: '/exact', pathType: 'Exact', backend: svcRef('api', 80) },
    ])] }, { created: '2026-01-01T00:00:00Z' }),
    ing('regex', { rules: [rule('test.com', [{ path: '/foo/bar/(.+)', pathType: 'ImplementationSpecific', backend: svcRef('blog', 80) }])] }, { created: '2026-01-02T00:00:00Z', annotations: { [`${A}use-regex`]: 'true' } }),
    ing('other', { rules: [rule('other.com', [{ path: '/foo', pathType: 'Prefix', backend: svcRef('web', 80) }])] }),
  ]);
  assert.deepEqual(r.events.filter((e) => e.type === 'Warning'), []);
  // The documented example: ^/foo/bar/(.+), then ^/foo/bar/, then ^/foo/bar (and the Exact path, a regex too).
  assert.deepEqual(rulesOf(r.config.data.routes['test.com']), [
    { path: '^/foo/bar/(.+)', match: 'regex' },
    { path: '^/foo/bar/', match: 'regex' },
    { path: '^/foo/bar', match: 'regex' },
    { path: '^/exact', match: 'regex' },
  ]);
  assert.deepEqual(rulesOf(r.config.data.routes['other.com']), [{ path: '/foo', match: 'prefix' }], 'another host keeps Prefix semantics');
});

test('rewrite-target on one Ingress also turns the whole host into regexes; a literal that is no valid regex is escaped (ingress-nginx: "use-regex OR rewrite-target")', () => {
  const r = run([
    ing('a', { rules: [rule('h.com', [{ path: '/a(b', pathType: 'Prefix', backend: svcRef('web', 80) }, { path: '/v1.0', pathType: 'Prefix', backend: svcRef('web', 80) }])] }),
    ing('b', { rules: [rule('h.com', [{ path: '/x', pathType: 'ImplementationSpecific', backend: svcRef('api', 80) }])] }, { annotations: { [`${A}rewrite-target`]: '/' } }),
  ]);
  assert.deepEqual(rulesOf(r.config.data.routes['h.com']), [
    { path: '^/v1.0', match: 'regex' },
    { path: '^/a\\(b', match: 'regex' },
    { path: '^/x', match: 'regex' },
  ]);
});

test('regex ties keep ingress-nginx\'s order: same length in reverse alphabetical order (its two stable sorts)', () => {
  const r = run([
    ing('re', { rules: [rule('t.com', [
      { path: '/aa', pathType: 'ImplementationSpecific', backend: svcRef('web', 80) },
      { path: '/ab', pathType: 'ImplementationSpecific', backend: svcRef('web', 80) },
      { path: '/[a-z]{3}', pathType: 'ImplementationSpecific', backend: svcRef('api', 80) },
    ])] }, { annotations: { [`${A}use-regex`]: 'true' } }),
  ]);
  assert.deepEqual(rulesOf(r.config.data.routes['t.com']).map((x) => x.path), ['^/[a-z]{3}', '^/ab', '^/aa']);
});

test('an ImplementationSpecific path written with a trailing slash is nginx\'s `location /foo/`: "/foo" gets nginx\'s 301 (slashRedirect); a Prefix path ignores its trailing slash (Ingress spec); none on a regex host', () => {
  const r = run([
    ing('a', { rules: [rule('s.com', [
      { path: '/docs/', pathType: 'Prefix', backend: svcRef('web', 80) },
      { path: '/api', pathType: 'Prefix', backend: svcRef('api', 80) },
      { path: '/impl/', pathType: 'ImplementationSpecific', backend: svcRef('api', 80) },
    ])] }),
    ing('b', { rules: [rule('rx.com', [{ path: '/docs/', pathType: 'Prefix', backend: svcRef('web', 80) }, { path: '/z', pathType: 'ImplementationSpecific', backend: svcRef('web', 80) }])] }, { annotations: { [`${A}use-regex`]: 'true' } }),
  ]);
  const s = r.config.data.routes['s.com']?.rules ?? [];
  // Prefix "/docs/" is the element-wise prefix "/docs": it matches "/docs" itself (no 301), "/docs/" and "/docs/x".
  assert.deepEqual(s.map((x) => [x.path, x.match, x.slashRedirect ?? false]), [['/impl/', 'prefix', true], ['/docs', 'prefix', false], ['/api', 'prefix', false]]);
  assert.ok((r.config.data.routes['rx.com']?.rules ?? []).every((x) => x.slashRedirect === undefined));
});

test('Prefix "/foo/" and Prefix "/foo" are the same prefix (Ingress spec): the newer one gets a Conflict naming the older', () => {
  const r = run([
    ing('old', { rules: [rule('p.com', [{ path: '/foo/', pathType: 'Prefix', backend: svcRef('web', 80) }])] }, { created: '2026-01-01T00:00:00Z' }),
    ing('new', { rules: [rule('p.com', [{ path: '/foo', pathType: 'Prefix', backend: svcRef('api', 80) }])] }, { created: '2026-01-02T00:00:00Z' }),
  ]);
  assert.deepEqual((r.config.data.routes['p.com']?.rules ?? []).map((x) => [x.path, x.route.backendId]), [['/foo', 'default_web_80']]);
  const w = r.events.filter((e) => e.type === 'Warning');
  assert.equal(w.length, 1);
  assert.match(w[0]!.message, /default\/old/);
  assert.match(w[0]!.ref, /default\/new/);
});

test('preserve-trailing-slash is carried on routes that redirect to HTTPS (ingress-nginx drops the final "/" otherwise)', () => {
  const r = run([
    ing('keep', { rules: [rule('k.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { [`${A}force-ssl-redirect`]: 'true', [`${A}preserve-trailing-slash`]: 'true' } }),
    ing('drop', { rules: [rule('d.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { [`${A}force-ssl-redirect`]: 'true' } }),
  ]);
  assert.equal(r.config.data.routes['k.com']?.rules[0]?.route.preserveTrailingSlash, true);
  assert.equal(r.config.data.routes['d.com']?.rules[0]?.route.preserveTrailingSlash, undefined);
});

test('ConfigMap force-ssl-redirect: every Ingress path redirects to HTTPS, hosts without TLS included; an Ingress\'s force-ssl-redirect "false" opts out (ingress-nginx: the annotation\'s default)', () => {
  const ingresses = [
    ing('plain', { rules: [rule('plain.com', [{ path: '/', backend: svcRef('web', 80) }])] }),
    ing('optout', { rules: [rule('out.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { [`${A}force-ssl-redirect`]: 'false' } }),
  ];
  const off = run(ingresses);
  assert.equal(off.config.data.routes['plain.com']?.rules[0]?.route.sslRedirect, false, 'default "false": no TLS, no redirect');
  const on = run(ingresses, (m) => m.setGlobalConfig({ ...m.globalConfig(), forceSslRedirect: true }));
  assert.equal(on.config.data.routes['plain.com']?.rules[0]?.route.sslRedirect, true);
  assert.equal(on.config.data.routes['out.com']?.rules[0]?.route.sslRedirect, false);
});

test('app-root: "/" on the host is answered 302 to <scheme>://<Host header><app-root> before any path (ingress-nginx\'s server-level `if ($uri = /)`)', () => {
  const r = run([
    ing('app', { rules: [rule('approot.bar.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { [`${A}app-root`]: '/app1', [`${A}force-ssl-redirect`]: 'true' } }),
    ing('bad', { rules: [rule('bad.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { [`${A}app-root`]: 'https://evil.example.com/' } }),
  ]);
  const h = r.config.data.routes['approot.bar.com'];
  assert.deepEqual(h?.rules[0]?.path, '/');
  assert.equal(h?.rules[0]?.match, 'exact');
  assert.equal(h?.rules[0]?.route.sslRedirect, false, 'before the HTTPS redirect');
  assert.deepEqual(pluginOf(r, h?.rules[0], 'redirect'), { name: 'default/app (annotations)', type: 'redirect', status: 302, path: '/app1', keepQuery: false, hostFromRequest: true });
  assert.equal(h?.rules[1]?.route.backendId, 'default_web_80', 'other paths as before');
  assert.equal(r.config.data.routes['bad.com']?.rules.length, 1, 'an absolute URL is refused, as ingress-nginx does');
  assert.ok(r.events.some((e) => e.type === 'Warning' && e.message.includes('app-root')));
});

test('from-to-www-redirect: www.<host> answers 308 to <host> with the request URI (last "/" dropped) unless www.<host> has rules; and the reverse for a www host', () => {
  const r = run([
    ing('www', { rules: [rule('foo.com', [{ path: '/', backend: svcRef('web', 80) }]), rule('www.bar.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { [`${A}from-to-www-redirect`]: 'true' } }),
    ing('taken', { rules: [rule('taken.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { [`${A}from-to-www-redirect`]: 'true' } }),
    ing('own', { rules: [rule('www.taken.com', [{ path: '/', backend: svcRef('api', 80) }])] }),
  ]);
  const w = r.config.data.routes['www.foo.com'];
  assert.deepEqual(rulesOf(w), [{ path: '/', match: 'prefix' }]);
  assert.deepEqual(pluginOf(r, w?.rules[0], 'redirect'), { name: 'default/www (annotations)', type: 'redirect', status: 308, host: 'foo.com', keepQuery: true, requestUri: true, stripTrailingSlash: true });
  assert.equal((pluginOf(r, r.config.data.routes['bar.com']?.rules[0], 'redirect') as { host?: string } | undefined)?.host, 'www.bar.com', 'bar.com → www.bar.com');
  assert.equal(r.config.data.routes['www.taken.com']?.rules[0]?.route.backendId, 'default_api_80', 'a name with rules of its own is not redirected');
  assert.ok(r.events.some((e) => e.reason === 'RedirectSkipped' && e.type === 'Normal'));
});

test('from-to-www-redirect and TLS: the host\'s certificate serves www.<host> only when it covers that name; otherwise a Warning (ingress-nginx: the certificate must name both)', () => {
  const mat = (key: string, hosts: string[]) => ({ key, ok: true as const, cert: `C ${key}`, privateKey: 'K', hosts, notAfter: '2099-01-01T00:00:00.000Z', fingerprint: key });
  const r = run(
    [
      ing('both', { rules: [rule('a.com', [{ path: '/', backend: svcRef('web', 80) }])], tls: [{ hosts: ['a.com'], secretName: 'both' }] }, { annotations: { [`${A}from-to-www-redirect`]: 'true' } }),
      ing('one', { rules: [rule('b.com', [{ path: '/', backend: svcRef('web', 80) }])], tls: [{ hosts: ['b.com'], secretName: 'one' }] }, { annotations: { [`${A}from-to-www-redirect`]: 'true' } }),
    ],
    (m) => {
      m.setSecret(mat('default/both', ['a.com', 'www.a.com']));
      m.setSecret(mat('default/one', ['b.com']));
    },
  );
  const certs = r.config.data.certificates;
  assert.equal(certs['www.a.com'], certs['a.com']);
  assert.equal(certs['www.b.com'], undefined);
  assert.ok(r.events.some((e) => e.reason === 'TLSHostMismatch' && e.message.includes('www.b.com')));
});

test('the matched URI is nginx\'s normalized $uri: Portico stores paths as written and never matches on the raw request line (router.lua reads ngx.var.uri)', () => {
  const r = run([ing('n', { rules: [rule('n.com', [{ path: '/admin', pathType: 'Prefix', backend: svcRef('api', 80) }, { path: '/', pathType: 'Prefix', backend: svcRef('web', 80) }])] })]);
  assert.deepEqual(rulesOf(r.config.data.routes['n.com']), [{ path: '/admin', match: 'prefix' }, { path: '/', match: 'prefix' }]);
});
