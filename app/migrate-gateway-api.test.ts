import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAllYaml } from '@kubernetes/client-node';
import type { KubeObject } from '../operator/kube/object.ts';
import { CATALOGUE, NGINX_PREFIX } from '../reconcilers/annotations/table.ts';
import { normalizeConsumer } from '../reconcilers/kinds/consumer/normalize.ts';
import { normalizeGateway } from '../reconcilers/kinds/gateway/normalize.ts';
import { normalizeHttpRoute } from '../reconcilers/kinds/httproute/normalize.ts';
import { normalizePlugin } from '../reconcilers/kinds/plugin/normalize.ts';
import { normalizeReferenceGrant } from '../reconcilers/kinds/referencegrant/index.ts';
import { loadManifests, migrateToGatewayApi, parseMigrateArgs, runMigrate, UsageError, type Input } from './migrate.ts';
import { type Conversion, type GatewayApiOptions, type Outcome } from './migrate-gateway-api.ts';
import { appliedAnnotations, conversionCounts, conversionsMarkdown, CONVERSIONS, type ConversionKind } from './migrate-gateway-api-table.ts';
import { caseless, hasTopLevelAlternation, wholePathPattern } from './migrate-gateway-api-regex.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CORPUS = path.join(root, 'app/migrate-corpus');

// ---- fixtures -----------------------------------------------------------------------------------------------------

type Path = { path?: string; pathType?: string; service?: string; port?: number | string };
interface IngressOpts {
  ns?: string;
  host?: string | null;
  paths?: Path[];
  tls?: string | null;
  created?: string;
  defaultBackend?: { service: string; port: number };
}
let seq = 0;
function ingress(name: string, annotations: Record<string, string> = {}, o: IngressOpts = {}): KubeObject {
  const host = o.host === undefined ? 'app.example.com' : o.host;
  const paths = (o.paths ?? [{}]).map((p) => ({
    path: p.path ?? '/',
    pathType: p.pathType ?? 'Prefix',
    backend: { service: { name: p.service ?? 'echo', port: typeof p.port === 'string' ? { name: p.port } : { number: p.port ?? 80 } } },
  }));
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name,
      namespace: o.ns ?? 'web',
      creationTimestamp: o.created ?? `2026-01-01T00:00:${String(seq++ % 60).padStart(2, '0')}Z`,
      annotations: Object.fromEntries(Object.entries(annotations).map(([k, v]) => [k.includes('/') ? k : `${NGINX_PREFIX}${k}`, v])),
    },
    spec: {
      ingressClassName: 'nginx',
      ...(o.tls && host ? { tls: [{ hosts: [host], secretName: o.tls }] } : {}),
      ...(o.defaultBackend ? { defaultBackend: { service: { name: o.defaultBackend.service, port: { number: o.defaultBackend.port } } } } : {}),
      rules: [{ ...(host ? { host } : {}), http: { paths } }],
    },
  } as KubeObject;
}

interface InputExtras {
  configMap?: Record<string, string>;
  secrets?: Record<string, Record<string, string>>;
  configMaps?: Record<string, Record<string, string>>;
  services?: Record<string, { name?: string; port: number }[]>;
}
function inputOf(ingresses: KubeObject[], x: InputExtras = {}): Input {
  const b64 = (v: string) => Buffer.from(v).toString('base64');
  return {
    source: { kind: 'manifests', files: [] },
    ingresses,
    configMap: x.configMap ? { namespace: 'ingress-nginx', name: 'ingress-nginx-controller', data: x.configMap } : null,
    secrets: new Map(Object.entries(x.secrets ?? {}).map(([k, d]) => [k, { data: Object.fromEntries(Object.entries(d).map(([n, v]) => [n, b64(v)])) }])),
    missingSecrets: new Set(),
    services: new Map(Object.entries(x.services ?? {}).map(([k, ports]) => [k, { ports }])),
    configMaps: new Map(Object.entries(x.configMaps ?? {}).map(([k, data]) => [k, { data }])),
  };
}

/**
 * Converts and checks what is written the way Portico and the API server would take it: every HTTPRoute passes
 * Portico's HTTPRoute normalizer and the CRD's rules on filters (no repeated filter, no redirect with backends, at
 * most 16 rules), every Plugin Portico's Plugin normalizer (with an instance, no error), every Consumer the Consumer
 * normalizer (its Secret read), every Gateway and ReferenceGrant theirs.
 */
function convert(ingresses: KubeObject[], x: InputExtras = {}, opts: GatewayApiOptions = {}): Conversion {
  return checked(migrateToGatewayApi(inputOf(ingresses, x), opts));
}
function checked(c: Conversion): Conversion {
  const secrets = new Map(c.objects.filter((o) => o.kind === 'Secret').map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o as { data?: Record<string, string> }]));
  for (const o of c.objects) {
    const id = `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`;
    if (o.kind === 'HTTPRoute') {
      const r = normalizeHttpRoute(o);
      assert.ok(r.ok, `${id}: ${!r.ok ? r.reason : ''}`);
      const rules = (o as unknown as { spec: { rules: { filters?: { type: string }[]; backendRefs?: unknown[] }[] } }).spec.rules;
      assert.ok(rules.length <= 16, `${id}: ${rules.length} rules`);
      for (const rule of rules) {
        const types = (rule.filters ?? []).map((f) => f.type);
        for (const t of ['CORS', 'RequestHeaderModifier', 'ResponseHeaderModifier', 'RequestRedirect', 'URLRewrite']) assert.ok(types.filter((y) => y === t).length <= 1, `${id}: ${t} repeated`);
        assert.ok(!(types.includes('RequestRedirect') && types.includes('URLRewrite')), `${id}: RequestRedirect with URLRewrite`);
        assert.ok(!(types.includes('RequestRedirect') && rule.backendRefs?.length), `${id}: RequestRedirect with backendRefs`);
      }
    } else if (o.kind === 'Plugin') {
      const r = normalizePlugin(o, (k) => secrets.get(k));
      assert.ok(r.ok && !r.record.error && r.record.instance, `${id}: ${r.ok ? r.record.error : r.reason}`);
    } else if (o.kind === 'Consumer') {
      const r = normalizeConsumer(o, (k) => secrets.get(k));
      assert.ok(r.ok && !r.record.problems.length && r.record.basic.length === 1, `${id}: ${r.ok ? r.record.problems : r.reason}`);
    } else if (o.kind === 'Gateway') {
      const r = normalizeGateway(o);
      assert.ok(r.ok, `${id}: ${!r.ok ? r.reason : ''}`);
    } else if (o.kind === 'ReferenceGrant') {
      const r = normalizeReferenceGrant(o);
      assert.ok(r.ok, `${id}: ${!r.ok ? r.reason : ''}`);
    } else assert.equal(o.kind, 'Secret', id);
  }
  return c;
}

const find = (c: Conversion, kind: string, name: string, ns = 'web') => {
  const o = c.objects.find((x) => x.kind === kind && x.metadata.name === name && x.metadata.namespace === ns);
  assert.ok(o, `${kind} ${ns}/${name} among ${c.objects.map((x) => `${x.kind} ${x.metadata.namespace}/${x.metadata.name}`).join(', ')}`);
  return o as KubeObject & { spec: Record<string, unknown> };
};
const specOf = (c: Conversion, name: string, ns = 'web') => find(c, 'HTTPRoute', name, ns).spec as { parentRefs: unknown[]; hostnames?: string[]; rules: Record<string, unknown>[] };
const report = (c: Conversion, name: string, ns = 'web') => {
  const r = c.report.ingresses.find((i) => i.name === name && i.namespace === ns);
  assert.ok(r, name);
  return r;
};
const outcomes = (c: Conversion, name: string, ns = 'web') => Object.fromEntries(report(c, name, ns).annotations.map((a) => [a.name, a.outcome]));
const ext = (name: string) => ({ type: 'ExtensionRef', extensionRef: { group: 'portico.dev', kind: 'Plugin', name } });
const echo = [{ name: 'echo', port: 80 }];
const sha = (pw: string) => `{SHA}${createHash('sha1').update(pw).digest('base64')}`;
const BCRYPT = `$2y$05$${'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZa'}`;
const SNIPPETS_ON = { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' };

// ---- the table: every applied annotation, and what the conversion counts ------------------------------------------

test('every annotation Portico applies has a conversion or an explicit reason; the count is the table\'s', () => {
  const applied = appliedAnnotations();
  assert.deepEqual(applied.filter((n) => !CONVERSIONS[n]), [], 'applied annotations without a row');
  assert.deepEqual(Object.keys(CONVERSIONS).filter((n) => !applied.includes(n)), [], 'rows for annotations Portico does not apply');
  for (const [n, r] of Object.entries(CONVERSIONS)) assert.ok(r.detail.length > 10, n);
  // 65 of the 137 annotations Portico applies convert (55 to a field, filter or Plugin, 10 need nothing in the usual
  // case); 72 are not convertible, each with its reason. Of ingress-nginx's own: 64 of 135.
  assert.deepEqual(conversionCounts(), { applied: 137, converted: 65, standard: 31, plugin: 24, unneeded: 10, none: 72 });
  const nginxOnes = applied.filter((n) => CATALOGUE[n]?.origin === 'ingress-nginx');
  assert.deepEqual([nginxOnes.length, nginxOnes.filter((n) => CONVERSIONS[n]?.kind !== 'none').length], [135, 64]);
  assert.match(conversionsMarkdown(), /^Of the 137 annotations Portico applies, `--to gateway-api` converts \*\*65\*\*/);
});

/**
 * A sample for every convertible row: the annotations (with what they need besides) of an Ingress on which the
 * annotation converts as the table says. The test fails for a row without a sample, so a claim cannot be added
 * to the table without the conversion doing it.
 */
const TLS = { tls: 'app-tls' };
interface Sample {
  ann: Record<string, string>;
  o?: IngressOpts;
  x?: InputExtras;
  /** A canary sample: the canary Ingress's annotations (the main one is plain). */
  canary?: boolean;
}
const AUTH_URL = { 'auth-url': 'http://auth.web.svc.cluster.local/check' };
const SAMPLES: Record<string, Sample> = {
  'use-regex': { ann: { 'use-regex': 'true' }, o: { paths: [{ path: '/api/v[0-9]+', pathType: 'ImplementationSpecific' }] } },
  'rewrite-target': { ann: { 'rewrite-target': '/' }, o: { paths: [{ path: '/old' }] } },
  'app-root': { ann: { 'app-root': '/app' } },
  'x-forwarded-prefix': { ann: { 'x-forwarded-prefix': '/x' } },
  'upstream-vhost': { ann: { 'upstream-vhost': 'internal.example.com' } },
  'ssl-redirect': { ann: { 'ssl-redirect': 'true' }, o: TLS },
  'force-ssl-redirect': { ann: { 'force-ssl-redirect': 'true' } },
  'preserve-trailing-slash': { ann: { 'preserve-trailing-slash': 'true' }, o: TLS },
  'from-to-www-redirect': { ann: { 'from-to-www-redirect': 'true' } },
  'use-port-in-redirects': { ann: { 'use-port-in-redirects': 'true' }, o: { paths: [{ path: '/docs/', pathType: 'ImplementationSpecific' }] } },
  'permanent-redirect': { ann: { 'permanent-redirect': 'https://new.example.com/x', 'permanent-redirect-code': '308' } },
  'permanent-redirect-code': { ann: { 'permanent-redirect': 'https://new.example.com/x', 'permanent-redirect-code': '308' } },
  'temporal-redirect': { ann: { 'temporal-redirect': 'https://new.example.com/x', 'temporal-redirect-code': '307' } },
  'temporal-redirect-code': { ann: { 'temporal-redirect': 'https://new.example.com/x', 'temporal-redirect-code': '307' } },
  'server-alias': { ann: { 'server-alias': 'alias.example.com' } },
  'proxy-connect-timeout': { ann: { 'proxy-connect-timeout': '5' } },
  'proxy-read-timeout': { ann: { 'proxy-read-timeout': '30', 'proxy-send-timeout': '30' } },
  'proxy-send-timeout': { ann: { 'proxy-read-timeout': '30', 'proxy-send-timeout': '30' } },
  'backend-protocol': { ann: { 'backend-protocol': 'HTTP' } },
  canary: { ann: { canary: 'true', 'canary-weight': '10' }, canary: true },
  'canary-weight': { ann: { canary: 'true', 'canary-weight': '10' }, canary: true },
  'canary-weight-total': { ann: { canary: 'true', 'canary-weight': '10', 'canary-weight-total': '1000' }, canary: true },
  'canary-by-header': { ann: { canary: 'true', 'canary-by-header': 'X-Canary' }, canary: true },
  'canary-by-header-value': { ann: { canary: 'true', 'canary-by-header': 'X-Canary', 'canary-by-header-value': 'yes' }, canary: true },
  'canary-by-header-pattern': { ann: { canary: 'true', 'canary-by-header': 'X-Canary', 'canary-by-header-pattern': '^(yes|1)$' }, canary: true },
  'canary-by-cookie': { ann: { canary: 'true', 'canary-by-cookie': 'beta' }, canary: true },
  'whitelist-source-range': { ann: { 'whitelist-source-range': '10.0.0.0/8' } },
  'allowlist-source-range': { ann: { 'allowlist-source-range': '10.0.0.0/8' } },
  'denylist-source-range': { ann: { 'denylist-source-range': '10.1.0.0/16' } },
  satisfy: { ann: { satisfy: 'all', 'whitelist-source-range': '10.0.0.0/8' } },
  'enable-cors': { ann: { 'enable-cors': 'true' } },
  ...Object.fromEntries(['cors-allow-origin', 'cors-allow-methods', 'cors-allow-headers', 'cors-expose-headers', 'cors-allow-credentials', 'cors-max-age'].map((n) => [n, { ann: { 'enable-cors': 'true', 'cors-allow-origin': 'https://a.example', 'cors-allow-methods': 'GET, POST', 'cors-allow-headers': 'X-Token', 'cors-expose-headers': 'X-Id', 'cors-allow-credentials': 'true', 'cors-max-age': '600' } }])),
  ...Object.fromEntries(['limit-rps', 'limit-burst-multiplier', 'limit-whitelist'].map((n) => [n, { ann: { 'limit-rps': '5', 'limit-burst-multiplier': '2', 'limit-whitelist': '10.0.0.0/8' } }])),
  'limit-rpm': { ann: { 'limit-rpm': '300', 'limit-allowlist': '10.0.0.0/8' } },
  'limit-allowlist': { ann: { 'limit-rpm': '300', 'limit-allowlist': '10.0.0.0/8' } },
  ...Object.fromEntries(['global-rate-limit', 'global-rate-limit-window', 'global-rate-limit-key', 'global-rate-limit-ignored-cidrs'].map((n) => [n, { ann: { 'global-rate-limit': '100', 'global-rate-limit-window': '1m', 'global-rate-limit-key': '${http_x_api_key}', 'global-rate-limit-ignored-cidrs': '10.0.0.0/8' } }])),
  ...Object.fromEntries(['auth-type', 'auth-secret', 'auth-realm'].map((n) => [n, { ann: { 'auth-type': 'basic', 'auth-secret': 'users', 'auth-realm': 'Staff' }, x: { secrets: { 'web/users': { auth: `alice:${sha('wonderland')}\n` } } } }])),
  'auth-secret-type': { ann: { 'auth-type': 'basic', 'auth-secret': 'users', 'auth-secret-type': 'auth-map' }, x: { secrets: { 'web/users': { bob: BCRYPT } } } },
  ...Object.fromEntries(['auth-url', 'auth-method', 'auth-response-headers', 'auth-keepalive', 'auth-keepalive-requests', 'auth-keepalive-share-vars', 'auth-keepalive-timeout'].map((n) => [n, { ann: { ...AUTH_URL, 'auth-method': 'POST', 'auth-response-headers': 'X-User', 'auth-keepalive': '10', 'auth-keepalive-requests': '100', 'auth-keepalive-share-vars': 'false', 'auth-keepalive-timeout': '60' } }])),
  'enable-global-auth': { ann: { 'enable-global-auth': 'false' } },
  'configuration-snippet': { ann: { 'configuration-snippet': 'more_set_headers "X-Frame-Options: DENY";\nproxy_set_header X-Team web;' }, x: { configMap: SNIPPETS_ON } },
  'server-snippet': { ann: { 'server-snippet': 'add_header X-Served-By portico always;' }, x: { configMap: SNIPPETS_ON } },
  'custom-headers': { ann: { 'custom-headers': 'extra' }, x: { configMap: { 'global-allowed-response-headers': 'X-Env' }, configMaps: { 'web/extra': { 'X-Env': 'prod' } } } },
  'mirror-target': { ann: { 'mirror-target': 'http://shadow.web.svc$request_uri' } },
  'mirror-host': { ann: { 'mirror-target': 'http://shadow.web.svc$request_uri', 'mirror-host': 'shadow.web.svc' } },
  'mirror-request-body': { ann: { 'mirror-target': 'http://shadow.web.svc$request_uri', 'mirror-request-body': 'on' } },
  plugins: { ann: { 'portico.dev/plugins': 'my-limit' } },
};
const OUTCOME_OF: Record<Exclude<ConversionKind, 'none'>, Outcome> = { standard: 'standard', plugin: 'plugin', unneeded: 'unneeded' };

test('each convertible row converts as the table says (a sample per annotation; every object passes Portico\'s normalizers)', () => {
  const convertible = Object.entries(CONVERSIONS).filter(([, r]) => r.kind !== 'none');
  assert.deepEqual(convertible.map(([n]) => n).filter((n) => !SAMPLES[n]), [], 'convertible rows without a sample');
  for (const [name, row] of convertible) {
    const s = SAMPLES[name] as Sample;
    const objs = s.canary ? [ingress('main'), ingress('app', s.ann, { paths: [{ service: 'echo-v2' }] })] : [ingress('app', s.ann, s.o)];
    const c = convert(objs, s.x);
    const got = report(c, 'app').annotations.find((a) => a.name === name);
    assert.equal(got?.outcome, OUTCOME_OF[row.kind as Exclude<ConversionKind, 'none'>], `${name}: ${JSON.stringify(got)}`);
  }
});

test('the rows that are not convertible never convert: each, with a value from the corpus, is reported with why', () => {
  const values = new Map<string, string>();
  for (const f of ['01-web-tls.yaml', '02-canary.yaml', '03-api.yaml', '04-basic-auth.yaml', '05-oauth2-proxy.yaml', '06-snippets.yaml', '07-rewrite-redirect.yaml', '08-tuning.yaml']) {
    for (const d of loadAllYaml(readFileSync(path.join(CORPUS, f), 'utf8')) as { kind?: string; metadata?: { annotations?: Record<string, string> } }[]) {
      for (const [k, v] of Object.entries(d?.metadata?.annotations ?? {})) if (k.startsWith(NGINX_PREFIX) && !values.has(k.slice(NGINX_PREFIX.length))) values.set(k.slice(NGINX_PREFIX.length), v);
    }
  }
  const none = Object.entries(CONVERSIONS).filter(([, r]) => r.kind === 'none').map(([n]) => n);
  values.set('session-cookie-partitioned', 'true'); // Portico's own: not in ingress-nginx's corpus
  for (const name of none) {
    const v = values.get(name);
    assert.ok(v !== undefined, `${name}: no value in the corpus`);
    const c = convert([ingress('app', { [name]: v })], { configMap: SNIPPETS_ON });
    const got = report(c, 'app').annotations.find((a) => a.name === name);
    assert.equal(got?.outcome, 'not-convertible', `${name}: ${JSON.stringify(got)}`);
    assert.ok((got?.detail.length ?? 0) > 10, name);
    assert.equal(c.report.summary.exitCode, 1, name);
  }
});

// ---- representative Ingresses → the exact objects -----------------------------------------------------------------

test('paths, hosts and TLS: Exact, Prefix, ImplementationSpecific; the HTTPS listener per TLS host and the redirect on HTTP', () => {
  const c = convert([
    ingress('site', {}, { tls: 'site-tls', paths: [{ path: '/exact', pathType: 'Exact' }, { path: '/prefix/', pathType: 'Prefix', service: 'api' }, { path: '/docs/', pathType: 'ImplementationSpecific', service: 'docs' }] }),
  ]);
  assert.deepEqual(specOf(c, 'site'), {
    parentRefs: [{ name: 'portico', sectionName: 'https-app-example-com' }],
    hostnames: ['app.example.com'],
    rules: [
      { matches: [{ path: { type: 'Exact', value: '/exact' } }], backendRefs: echo },
      { matches: [{ path: { type: 'PathPrefix', value: '/prefix' } }], backendRefs: [{ name: 'api', port: 80 }] },
      // nginx's `location /docs/` answers "/docs" with 301 to "/docs/": PathPrefix "/docs/" would match "/docs" itself.
      { matches: [{ path: { type: 'Exact', value: '/docs' } }], filters: [{ type: 'RequestRedirect', requestRedirect: { path: { type: 'ReplaceFullPath', replaceFullPath: '/docs/' }, statusCode: 301 } }] },
      { matches: [{ path: { type: 'PathPrefix', value: '/docs/' } }], backendRefs: [{ name: 'docs', port: 80 }] },
    ],
  });
  const redirect = { type: 'RequestRedirect', requestRedirect: { scheme: 'https', statusCode: 308 } };
  assert.deepEqual(specOf(c, 'site-http'), {
    parentRefs: [{ name: 'portico', sectionName: 'http' }],
    hostnames: ['app.example.com'],
    rules: [
      { matches: [{ path: { type: 'Exact', value: '/exact' } }], filters: [redirect] },
      { matches: [{ path: { type: 'PathPrefix', value: '/prefix' } }], filters: [redirect] },
      { matches: [{ path: { type: 'Exact', value: '/docs' } }], filters: [{ type: 'RequestRedirect', requestRedirect: { path: { type: 'ReplaceFullPath', replaceFullPath: '/docs/' }, statusCode: 301 } }] },
      { matches: [{ path: { type: 'PathPrefix', value: '/docs/' } }], filters: [redirect] },
    ],
  });
  assert.deepEqual(c.report.gateways, [{ namespace: 'web', name: 'portico', listeners: [
    { name: 'http', protocol: 'HTTP', port: 80, routeNamespaces: [] },
    { name: 'https-app-example-com', protocol: 'HTTPS', port: 443, hostname: 'app.example.com', certificate: 'web/site-tls', routeNamespaces: [] },
  ] }]);
  assert.deepEqual([report(c, 'site').verdict, c.report.summary.exitCode], ['converted', 0]);
  // ssl-redirect "false": one route on both listeners; a host without TLS: the HTTP listener only.
  const off = convert([ingress('site', { 'ssl-redirect': 'false' }, { tls: 'site-tls' }), ingress('plain', {}, { host: 'plain.example.com' })]);
  assert.deepEqual(specOf(off, 'site').parentRefs, [{ name: 'portico', sectionName: 'http' }, { name: 'portico', sectionName: 'https-app-example-com' }]);
  assert.deepEqual(specOf(off, 'plain').parentRefs, [{ name: 'portico', sectionName: 'http' }]);
  assert.equal(off.objects.some((o) => o.metadata.name === 'site-http'), false);
});

test('use-regex and rewrite-target: regex paths "^<path>" host-wide in the namespace; URLRewrite without captures, a rewrite Plugin with', () => {
  const c = convert([
    ingress('blog', { 'rewrite-target': '/$2' }, { paths: [{ path: '/blog(/|$)(.*)', pathType: 'ImplementationSpecific' }] }),
    ingress('other', {}, { paths: [{ path: '/static', pathType: 'Prefix', service: 'static' }] }),
    ingress('old', { 'rewrite-target': '/new' }, { host: 'old.example.com', paths: [{ path: '/old', pathType: 'Prefix' }] }),
  ]);
  assert.deepEqual(specOf(c, 'blog').rules, [{ matches: [{ path: { type: 'RegularExpression', value: '^/blog(/|$)(.*)' } }], filters: [ext('blog-rewrite')], backendRefs: echo }]);
  // The other Ingress's Prefix path on the same host, same namespace, is a regex too (ingress-nginx's quirk).
  assert.deepEqual(specOf(c, 'other').rules, [{ matches: [{ path: { type: 'RegularExpression', value: '^/static' } }], backendRefs: [{ name: 'static', port: 80 }] }]);
  assert.deepEqual(find(c, 'Plugin', 'blog-rewrite').spec, { type: 'rewrite', config: { regex: { pattern: '^/[bB][lL][oO][gG](/|$)(.*)[\\s\\S]*$', replacement: '/$2' } } });
  assert.deepEqual(specOf(c, 'old').rules, [{ matches: [{ path: { type: 'RegularExpression', value: '^/old' } }], filters: [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplaceFullPath', replaceFullPath: '/new' } } }], backendRefs: echo }]);
  assert.deepEqual([outcomes(c, 'blog')['rewrite-target'], outcomes(c, 'old')['rewrite-target']], ['plugin', 'standard']);
  // A query in the target: not convertible, and the path is not written (a path that is the target itself is).
  const q = convert([ingress('q', { 'rewrite-target': '/x?a=1' }, { paths: [{ path: '/q' }, { path: '/x?a=1', pathType: 'ImplementationSpecific' }] })]);
  assert.equal(outcomes(q, 'q')['rewrite-target'], 'not-convertible');
  assert.match(report(q, 'q').problems.join('\n'), /path \/q on app\.example\.com is not converted: rewrite-target has a query/);
  assert.deepEqual(specOf(q, 'q').rules.map((r) => (r.matches as { path: { value: string } }[])[0]!.path.value), ['^/x?a=1']);
  assert.deepEqual([report(q, 'q').verdict, q.report.summary.exitCode], ['partly-converted', 1]);
});

test('the rewrite Plugin\'s pattern gives ingress-nginx\'s rewrite result (case-insensitive first match, whole path replaced)', () => {
  // ingress-nginx: `rewrite "(?i)<path>" <target> break`; the Plugin: the first match of the pattern replaced
  // (ngx.re.sub, case-sensitive). JavaScript's RegExp reads Portico's regex subset as PCRE does.
  const nginx = (re: string, target: string, uri: string) => {
    const m = new RegExp(re, 'i').exec(uri);
    if (!m) return uri;
    const out = target.replace(/\$(\d)/g, (_, d: string) => m[Number(d)] ?? '');
    return out.startsWith('/') ? out : `/${out}`;
  };
  const plugin = (re: string, target: string, uri: string) => {
    const out = uri.replace(new RegExp(wholePathPattern(re) as string), target);
    return out.startsWith('/') ? out : `/${out}`;
  };
  const cases: [string, string, string[]][] = [
    ['/blog(/|$)(.*)', '/$2', ['/blog', '/blog/', '/blog/2024/x', '/BLOG/Post', '/blogger']],
    ['/api/v[0-9]+/(.*)', '/$1', ['/api/v1/users', '/API/V22/a/b', '/api/v1/']],
    ['^/(en|de)/(?<rest>.*)', '/$2?', ['/en/home', '/DE/x/y']],
    ['/shop/(\\w+)-(\\d+)$', '/item/$2/$1', ['/shop/Red-42', '/shop/a-1']],
    ['/a([x-z]+)', '/z/$1', ['/aXy/1', '/az']],
  ];
  for (const [re, target0, uris] of cases) {
    const target = target0.replace('?', '');
    for (const uri of uris) {
      // Only requests the route chose (its "^<path>", case-insensitive) reach the Plugin.
      if (!new RegExp(`^${re.replace(/^\^/, '')}`, 'i').test(uri)) continue;
      assert.equal(plugin(re, target, uri), nginx(re, target, uri), `${re} ${target} ${uri}`);
    }
  }
  assert.equal(hasTopLevelAlternation('/a|/b'), true);
  assert.equal(hasTopLevelAlternation('/(a|b)[|]\\|'), false);
  assert.equal(wholePathPattern('/a|/b'), null);
  assert.equal(caseless('/a(?<nm>b)[^c-d_]{2}\\w\\d(?:e)'), '/[aA](?<nm>[bB])[^c-d_C-D]{2}\\w\\d(?:[eE])');
});

test('canaries: header, cookie and weight rules in ingress-nginx\'s order on the main Ingress\'s route', () => {
  const c = convert([
    ingress('shop', {}, { paths: [{ service: 'v1' }] }),
    ingress('shop-canary', { canary: 'true', 'canary-by-header': 'X-Canary', 'canary-by-cookie': 'beta', 'canary-weight': '10' }, { paths: [{ service: 'v2' }] }),
  ]);
  const v1 = { name: 'v1', port: 80 };
  const v2 = { name: 'v2', port: 80 };
  const m = (headers?: unknown[]) => [{ path: { type: 'PathPrefix', value: '/' }, ...(headers ? { headers } : {}) }];
  assert.deepEqual(specOf(c, 'shop').rules, [
    { matches: m([{ type: 'Exact', name: 'X-Canary', value: 'always' }]), backendRefs: [v2] },
    { matches: m([{ type: 'Exact', name: 'X-Canary', value: 'never' }]), backendRefs: [v1] },
    { matches: m([{ type: 'RegularExpression', name: 'Cookie', value: '(^|\\s)beta=always(?![\\w!%&*+.:=@~/()?|-])' }]), backendRefs: [v2] },
    { matches: m([{ type: 'RegularExpression', name: 'Cookie', value: '(^|\\s)beta=never(?![\\w!%&*+.:=@~/()?|-])' }]), backendRefs: [v1] },
    { matches: m(), backendRefs: [{ ...v1, weight: 90 }, { ...v2, weight: 10 }] },
  ]);
  assert.deepEqual([report(c, 'shop-canary').verdict, report(c, 'shop-canary').objects], ['converted', []]);
  // The cookie regex: the cookie's own value only.
  const re = new RegExp('(^|\\s)beta=always(?![\\w!%&*+.:=@~/()?|-])');
  assert.deepEqual(['beta=always', 'a=1; beta=always', 'beta=always; x=2', 'beta=always2', 'xbeta=always', 'beta=always-x'].map((h) => re.test(h)), [true, true, true, false, false, false]);
  // A pattern outside the regex subset of Portico's header matches: that rule is not written, and said.
  const pat = convert([ingress('shop', {}, { paths: [{ service: 'v1' }] }), ingress('beta', { canary: 'true', 'canary-by-header': 'X-Beta', 'canary-by-header-pattern': 'on$x' }, { paths: [{ service: 'v2' }] })]);
  assert.deepEqual(specOf(pat, 'shop').rules, [{ matches: m(), backendRefs: [v1] }]);
  assert.match(report(pat, 'beta').annotations.find((a) => a.name === 'canary-by-header-pattern')?.detail ?? '', /outside the regular expressions/);
  // A canary whose main is in another namespace, or absent: Portico sends it nothing, so it is not converted.
  const lone = convert([ingress('lone', { canary: 'true', 'canary-weight': '50' })]);
  assert.deepEqual([report(lone, 'lone').verdict, outcomes(lone, 'lone').canary], ['not-converted', 'not-convertible']);
});

test('CORS, headers, custom-headers, snippets, timeouts, app-root, upstream-vhost and redirects as standard filters', () => {
  const c = convert(
    [
      ingress('api', {
        'enable-cors': 'true',
        'cors-allow-origin': 'https://a.example, https://*.b.example',
        'cors-allow-credentials': 'true',
        'x-forwarded-prefix': '/api',
        'upstream-vhost': 'api.internal',
        'custom-headers': 'hdrs',
        'configuration-snippet': 'more_set_headers "X-Frame-Options: DENY";\nmore_clear_headers Server;\nproxy_set_header X-Team api;',
        'proxy-read-timeout': '30',
        'app-root': '/app',
      }),
    ],
    { configMap: { ...SNIPPETS_ON, 'global-allowed-response-headers': 'X-Env' }, configMaps: { 'web/hdrs': { 'X-Env': 'prod' } } },
  );
  assert.deepEqual(specOf(c, 'api').rules, [
    { matches: [{ path: { type: 'Exact', value: '/' } }], filters: [{ type: 'RequestRedirect', requestRedirect: { path: { type: 'ReplaceFullPath', replaceFullPath: '/app' }, statusCode: 302 } }] },
    {
      matches: [{ path: { type: 'PathPrefix', value: '/' } }],
      filters: [
        { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-Forwarded-Prefix', value: '/api' }, { name: 'X-Team', value: 'api' }] } },
        { type: 'ResponseHeaderModifier', responseHeaderModifier: { set: [{ name: 'X-Env', value: 'prod' }, { name: 'X-Frame-Options', value: 'DENY' }], remove: ['Server'] } },
        { type: 'URLRewrite', urlRewrite: { hostname: 'api.internal' } },
        {
          type: 'CORS',
          cors: {
            allowOrigins: ['https://a.example', 'https://*.b.example'],
            allowMethods: ['GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS'],
            allowHeaders: ['DNT', 'Keep-Alive', 'User-Agent', 'X-Requested-With', 'If-Modified-Since', 'Cache-Control', 'Content-Type', 'Range', 'Authorization'],
            allowCredentials: true,
            maxAge: 1728000,
          },
        },
      ],
      backendRefs: echo,
      timeouts: { backendRequest: '30s' },
    },
  ]);
  const o = outcomes(c, 'api');
  assert.deepEqual(Object.values(o).filter((x) => x !== 'standard'), [], JSON.stringify(o));
  assert.equal(c.report.summary.exitCode, 0);
  // A snippet that is more than header changes; a connect timeout HTTPRoutes cannot set; a value Portico refuses.
  const no = convert([ingress('api', { 'configuration-snippet': 'return 403;', 'proxy-connect-timeout': '10', 'proxy-body-size': '20MB' })], { configMap: SNIPPETS_ON });
  assert.deepEqual(outcomes(no, 'api'), { 'configuration-snippet': 'not-convertible', 'proxy-body-size': 'not-convertible', 'proxy-connect-timeout': 'not-convertible' });
  assert.match(report(no, 'api').annotations.find((a) => a.name === 'proxy-body-size')?.detail ?? '', /Portico does not apply it as written \(invalid-value\)/);
  assert.deepEqual([report(no, 'api').verdict, no.report.summary.exitCode], ['partly-converted', 1]);
});

test('Plugins: IP lists, rate limits (with the ConfigMap\'s status), redirects, external auth; portico.dev/plugins by name', () => {
  const c = convert(
    [ingress('api', { 'whitelist-source-range': '10.0.0.0/8', 'denylist-source-range': '10.9.0.0/16', 'limit-rps': '5', 'limit-allowlist': '10.1.0.0/16', ...AUTH_URL, 'auth-response-headers': 'X-User', 'portico.dev/plugins': 'mine' }, { paths: [{ path: '/' }, { path: '/.well-known/acme-challenge', service: 'acme' }] })],
    { configMap: { 'limit-req-status-code': '429' } },
  );
  assert.deepEqual(find(c, 'Plugin', 'api-ip').spec, { type: 'ip-restriction', config: { allow: ['10.0.0.0/8'], deny: ['10.9.0.0/16'], status: 403 } });
  assert.deepEqual(find(c, 'Plugin', 'api-rps').spec, { type: 'rate-limit', config: { policy: 'local', requestsPerSecond: 5, burst: 25, by: 'ip', status: 429, exempt: ['10.1.0.0/16'] } });
  assert.deepEqual(find(c, 'Plugin', 'api-external-auth').spec, { type: 'external-auth', config: { service: { name: 'auth', port: 80 }, path: '/check', method: 'GET', upstreamHeaders: ['x-user'], clientHeaders: ['WWW-Authenticate'], timeout: '60s' } });
  const rules = specOf(c, 'api').rules;
  assert.deepEqual(rules.find((r) => (r.backendRefs as { name: string }[])[0]!.name === 'echo')?.filters, [ext('api-ip'), ext('api-rps'), ext('api-external-auth'), ext('mine')]);
  // No authentication on the ConfigMap's no-auth-locations (ACME challenges), as Portico serves the Ingress.
  assert.deepEqual(rules.find((r) => (r.backendRefs as { name: string }[])[0]!.name === 'acme')?.filters, [ext('api-ip'), ext('api-rps'), ext('mine')]);
  const o = outcomes(c, 'api');
  assert.deepEqual([o['whitelist-source-range'], o['limit-rps'], o['auth-url'], o.plugins], ['plugin', 'plugin', 'plugin', 'plugin']);
  assert.match(report(c, 'api').annotations.find((a) => a.name === 'auth-url')?.difference ?? '', /X-Forwarded-Method/);
  const r = convert([ingress('moved', { 'permanent-redirect': 'https://new.example.com/x?y=1', 'permanent-redirect-code': '308' })]);
  assert.deepEqual(find(r, 'Plugin', 'moved-redirect').spec, { type: 'redirect', config: { statusCode: 308, scheme: 'https', hostname: 'new.example.com', path: '/x', keepQuery: false, query: 'y=1' } });
});

test('access control that cannot be converted: the rules refer to a Plugin that is not written (503), never served open', () => {
  const c = convert([
    ingress('oauth', { 'auth-url': 'https://$host/oauth2/auth', 'auth-signin': 'https://$host/oauth2/start?rd=$escaped_request_uri' }),
    ingress('digest', { 'auth-type': 'digest', 'auth-secret': 'users' }, { host: 'd.example.com' }),
    ingress('mtls', { 'auth-tls-secret': 'web/ca', 'auth-tls-verify-client': 'on' }, { host: 'm.example.com', tls: 'm-tls' }),
  ], { secrets: { 'web/ca': { 'ca.crt': 'x' } } });
  for (const [name, route] of [['oauth', 'oauth'], ['digest', 'digest'], ['mtls', 'mtls']] as const) {
    for (const rule of specOf(c, route).rules) assert.deepEqual((rule.filters as unknown[]).slice(0, 1), [ext(`${name}-not-converted`)], name);
    assert.equal(c.objects.some((o) => o.metadata.name === `${name}-not-converted`), false, 'the placeholder is never written');
    assert.match(report(c, name).problems.join('\n'), /Portico answers 503 until one doing the same exists/);
    assert.equal(report(c, name).verdict, 'partly-converted');
  }
  assert.match(report(c, 'oauth').annotations.find((a) => a.name === 'auth-url')?.detail ?? '', /the request's own host \(\$host\)/);
  // Digest authentication is served by Portico for the Ingress, but no Plugin object carries it: not convertible.
  const digest = report(c, 'digest').annotations.find((a) => a.name === 'auth-type');
  assert.equal(digest?.outcome, 'not-convertible');
  assert.match(digest?.detail ?? '', /digest authentication has no Plugin object/);
  // The ConfigMap's global-auth-url protects Ingresses, never HTTPRoutes: an external-auth Plugin of the route's own.
  const g = convert([ingress('app', {}), ingress('free', { 'enable-global-auth': 'false' }, { host: 'free.example.com' })], { configMap: { 'global-auth-url': 'http://auth.web.svc.cluster.local/verify' } });
  assert.deepEqual(specOf(g, 'app').rules[0]!.filters, [ext('app-global-auth')]);
  assert.equal(specOf(g, 'free').rules[0]!.filters, undefined);
  assert.match(report(g, 'app').notes.join('\n'), /global-auth-url protects this Ingress on Portico: Plugin app-global-auth/);
});

test('basic auth: a basic-auth Plugin with a Consumer and Secret per user whose hash a Consumer keeps; the rest reported', () => {
  const c = convert([ingress('staff', { 'auth-type': 'basic', 'auth-secret': 'users', 'auth-realm': 'Staff only' })], {
    secrets: { 'web/users': { auth: `alice:${sha('wonderland')}\nbob:${BCRYPT}\ncarol:$apr1$abcdefgh$abcdefghijklmnopqrstuv\n` } },
  });
  assert.deepEqual(find(c, 'Plugin', 'staff-basic-auth').spec, { type: 'basic-auth', config: { realm: 'Staff only', hideCredentials: false } });
  assert.deepEqual(find(c, 'Consumer', 'users-alice').spec, { username: 'alice', credentials: [{ type: 'basic-auth', secretRef: { name: 'users-alice' } }] });
  const secret = find(c, 'Secret', 'users-bob') as unknown as { data: Record<string, string> };
  assert.deepEqual(Object.fromEntries(Object.entries(secret.data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()])), { username: 'bob', password: BCRYPT });
  assert.equal(c.objects.some((o) => o.metadata.name === 'users-carol'), false);
  assert.deepEqual(specOf(c, 'staff').rules[0]!.filters, [ext('staff-basic-auth')]);
  const a = report(c, 'staff').annotations.find((x) => x.name === 'auth-type');
  assert.deepEqual([a?.outcome, report(c, 'staff').verdict], ['plugin', 'partly-converted']);
  assert.match(a?.difference ?? '', /accepts every Consumer of namespace web/);
  assert.match(report(c, 'staff').problems.join('\n'), /users carol of Secret web\/users have a hash a Consumer does not keep/);
  // Two auth-secrets in one namespace: the Plugin would accept both lists: neither is converted (503).
  const two = convert([
    ingress('a', { 'auth-type': 'basic', 'auth-secret': 'ua' }, { host: 'a.example.com' }),
    ingress('b', { 'auth-type': 'basic', 'auth-secret': 'ub' }, { host: 'b.example.com' }),
  ], { secrets: { 'web/ua': { auth: `x:${sha('1')}\n` }, 'web/ub': { auth: `y:${sha('2')}\n` } } });
  for (const n of ['a', 'b']) {
    assert.deepEqual(specOf(two, n).rules[0]!.filters, [ext(`${n}-not-converted`)]);
    assert.match(report(two, n).annotations.find((x) => x.name === 'auth-type')?.detail ?? '', /use different auth-secrets/);
  }
});

test('backends: a port by name is resolved from the Service; unresolved, the path is reported and not written; defaultBackend', () => {
  const c = convert(
    [ingress('app', {}, { paths: [{ path: '/a', port: 'http' }, { path: '/b', service: 'gone', port: 'http' }], defaultBackend: { service: 'fallback', port: 8080 } })],
    { services: { 'web/echo': [{ name: 'http', port: 8080 }] } },
  );
  assert.deepEqual(specOf(c, 'app').rules.map((r) => [(r.matches as { path: unknown }[])[0]!.path, r.backendRefs]), [
    [{ type: 'PathPrefix', value: '/a' }, [{ name: 'echo', port: 8080 }]],
    [{ type: 'PathPrefix', value: '/' }, [{ name: 'fallback', port: 8080 }]],
  ]);
  // The defaultBackend on any host: a route without hostnames.
  assert.deepEqual(specOf(c, 'app-any-host'), { parentRefs: [{ name: 'portico', sectionName: 'http' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: [{ name: 'fallback', port: 8080 }] }] });
  assert.match(report(c, 'app').problems.join('\n'), /path \/b on app\.example\.com is not converted: Service web\/gone is not in the input/);
  assert.equal(c.report.summary.exitCode, 1);
});

test('--gateway in another namespace, --gateway-class: parentRefs with the namespace, allowedRoutes, ReferenceGrants for certificates and mirrors', () => {
  const c = convert(
    [ingress('app', { 'mirror-target': 'http://shadow.tools.svc$request_uri' }, { tls: 'app-tls' })],
    { configMap: { 'allow-cross-namespace-auth': 'true' } },
    { gateway: { namespace: 'infra', name: 'edge' }, gatewayClass: 'portico' },
  );
  assert.deepEqual(specOf(c, 'app').parentRefs, [{ name: 'edge', namespace: 'infra', sectionName: 'https-app-example-com' }]);
  assert.deepEqual((specOf(c, 'app').rules[0]!.filters as unknown[])[0], { type: 'RequestMirror', requestMirror: { backendRef: { name: 'shadow', namespace: 'tools', port: 80 } } });
  assert.deepEqual(find(c, 'Gateway', 'edge', 'infra').spec, {
    gatewayClassName: 'portico',
    listeners: [
      { name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'Selector', selector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['infra', 'web'] }] } } } },
      { name: 'https-app-example-com', port: 443, protocol: 'HTTPS', hostname: 'app.example.com', tls: { mode: 'Terminate', certificateRefs: [{ kind: 'Secret', name: 'app-tls', namespace: 'web' }] }, allowedRoutes: { namespaces: { from: 'Selector', selector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['infra', 'web'] }] } } } },
    ],
  });
  assert.deepEqual(find(c, 'ReferenceGrant', 'from-infra-gateway').spec, { from: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra' }], to: [{ group: '', kind: 'Secret', name: 'app-tls' }] });
  assert.deepEqual(find(c, 'ReferenceGrant', 'from-web-httproute', 'tools').spec, { from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'web' }], to: [{ group: '', kind: 'Service', name: 'shadow' }] });
  // --section-name: one listener for everything; the redirect to HTTPS cannot be made then.
  const one = convert([ingress('app', {}, { tls: 'app-tls' })], {}, { sectionName: 'web' });
  assert.deepEqual(specOf(one, 'app').parentRefs, [{ name: 'portico', sectionName: 'web' }]);
  assert.match(report(one, 'app').problems.join('\n'), /--section-name attaches every route to one listener/);
});

test('server-alias, from-to-www-redirect and force-ssl-redirect without TLS (the https-default listener, a certificate to choose)', () => {
  const c = convert([ingress('app', { 'server-alias': 'alias.example.com', 'from-to-www-redirect': 'true', 'force-ssl-redirect': 'true' })], {}, { gatewayClass: 'portico' });
  assert.deepEqual(specOf(c, 'app').hostnames, ['app.example.com', 'alias.example.com']);
  assert.deepEqual(specOf(c, 'app').parentRefs, [{ name: 'portico', sectionName: 'https-default' }]);
  assert.deepEqual(specOf(c, 'app-www-app-example-com-redirect'), {
    parentRefs: [{ name: 'portico', sectionName: 'http' }],
    hostnames: ['www.app.example.com'],
    rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }], filters: [{ type: 'RequestRedirect', requestRedirect: { hostname: 'app.example.com', statusCode: 308 } }] }],
  });
  assert.deepEqual(c.report.gateways[0]?.listeners.find((l) => l.name === 'https-default'), { name: 'https-default', protocol: 'HTTPS', port: 443, certificate: null, routeNamespaces: [] });
  // The Gateway written leaves that listener out: its certificate must be chosen (said in the notes).
  assert.deepEqual((find(c, 'Gateway', 'portico').spec.listeners as { name: string }[]).map((l) => l.name), ['http']);
  assert.match(report(c, 'app').notes.join('\n'), /https-default needs a certificate/);
});

test('objects whose names meet (Ingresses "a" with TLS and "a-http") are not written over: reported', () => {
  const c = convert([ingress('a', {}, { tls: 'a-tls' }), ingress('a-http', {}, { host: 'other.example.com' })]);
  assert.deepEqual(specOf(c, 'a-http').hostnames, ['app.example.com']);
  assert.match(report(c, 'a-http').problems.join('\n'), /HTTPRoute web\/a-http is not written: another Ingress's object has that name/);
  assert.equal(c.report.summary.exitCode, 1);
});

test('the Ingress set of the end-to-end test converts entirely (its precondition), into 14 HTTPRoutes and 7 Plugins', () => {
  const c = checked(migrateToGatewayApi(loadManifests([path.join(root, 'e2e/testdata/migrate-gateway-api/ingresses.yaml')], {})));
  assert.deepEqual(c.report.ingresses.filter((i) => i.verdict !== 'converted').map((i) => i.name), []);
  assert.deepEqual([c.report.summary.exitCode, c.report.summary.objects], [0, { Plugin: 7, Secret: 1, Consumer: 1, HTTPRoute: 14 }]);
});

test('the corpus: every Ingress reported, every annotation with an outcome, objects accepted by Portico\'s normalizers', () => {
  const input = loadManifests([CORPUS], { ingressClass: 'nginx' });
  const c = migrateToGatewayApi(input);
  assert.equal(c.report.ingresses.length, 21);
  for (const i of c.report.ingresses) {
    const written = Object.keys(input.ingresses.find((x) => x.metadata.name === i.name && x.metadata.namespace === i.namespace)?.metadata.annotations ?? {}).filter((k) => k.startsWith(NGINX_PREFIX) || k.startsWith('portico.dev/'));
    assert.deepEqual(i.annotations.map((a) => a.annotation).sort(), written.sort(), `${i.namespace}/${i.name}`);
  }
  const counts = c.report.summary.annotations;
  assert.equal(counts.standard + counts.plugin + counts.unneeded + counts['not-convertible'], c.report.ingresses.reduce((n, i) => n + i.annotations.length, 0));
  // The corpus's ConfigMap has a global-auth-url on another host: no Ingress is served open on its routes.
  for (const i of c.report.ingresses.filter((x) => x.objects.some((o) => o.startsWith('HTTPRoute ')))) assert.ok(i.verdict !== 'converted', i.name);
  assert.equal(c.report.summary.exitCode, 1);
  // Everything it writes, Portico takes.
  const again = convert(input.ingresses, { configMap: input.configMap?.data });
  assert.ok(again.objects.length > 20);
});

// ---- the command --------------------------------------------------------------------------------------------------

const capture = async (argv: string[], stdin?: string) => {
  let out = '';
  let err = '';
  const code = await runMigrate(argv, { stdout: async (s) => void (out += s), stderr: async (s) => void (err += s), ...(stdin !== undefined ? { stdin: () => stdin } : {}) });
  return { code, out, err };
};
const yamlOf = (o: KubeObject) => JSON.stringify(o);

test('portico migrate --to gateway-api: YAML on stdout, the report on stderr; exit 0 when everything converted, 1 when not, 2 on usage errors', async () => {
  const ok = await capture(['--to', 'gateway-api', '-f', '-'], [ingress('app', { 'limit-rps': '5' })].map(yamlOf).join('\n---\n'));
  assert.equal(ok.code, 0, ok.err);
  const docs = loadAllYaml(ok.out) as KubeObject[];
  assert.deepEqual(docs.map((d) => `${d.kind} ${d.metadata.name}`), ['Plugin app-rps', 'HTTPRoute app']);
  assert.match(ok.err, /Ingress web\/app: converted → Plugin web\/app-rps, HTTPRoute web\/app/);
  assert.match(ok.err, /Plugin +limit-rps = "5" — Plugin app-rps \(rate-limit/);
  assert.match(ok.err, /everything converted/);
  const partly = await capture(['--to', 'gateway-api', '-f', '-', '-o', 'json'], yamlOf(ingress('app', { affinity: 'cookie' })));
  assert.equal(partly.code, 1);
  const j = JSON.parse(partly.out) as { schemaVersion: number; ingresses: { annotations: { outcome: string; detail: string }[] }[]; objects: KubeObject[]; summary: { exitCode: number } };
  assert.deepEqual(Object.keys(j), ['schemaVersion', 'source', 'gateway', 'sectionName', 'ingresses', 'gateways', 'summary', 'objects']);
  assert.deepEqual([j.schemaVersion, j.summary.exitCode, j.ingresses[0]?.annotations[0]?.outcome], [1, 1, 'not-convertible']);
  assert.match(j.ingresses[0]?.annotations[0]?.detail ?? '', /Upstream object/);
  assert.equal(partly.err, '');
  for (const bad of [['--to', 'gateway'], ['--to', 'gateway-api', '-o', 'text'], ['--gateway', 'a/b'], ['--section-name', 'x'], ['-o', 'yaml'], ['--to', 'gateway-api', '--gateway', 'nope'], ['--to', 'gateway-api', '--section-name', 'Bad_Name']]) {
    const r = await capture(bad);
    assert.equal(r.code, 2, bad.join(' '));
    assert.match(r.err, /^portico migrate: /, bad.join(' '));
  }
  assert.throws(() => parseMigrateArgs(['--gateway-class', 'x']), UsageError);
  assert.deepEqual(parseMigrateArgs(['--to=gateway-api', '--gateway=infra/edge', '--section-name', 'web', '--gateway-class', 'portico']), { files: [], output: 'yaml', to: 'gateway-api', gateway: { namespace: 'infra', name: 'edge' }, sectionName: 'web', gatewayClass: 'portico' });
});
