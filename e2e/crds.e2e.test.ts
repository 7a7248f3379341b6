// Portico's CRDs against the real apiserver: installed by `kubectl apply -k kustomize/`, Established, explained,
// listed by category with their printer columns; the apiserver and the zod schemas they are generated from
// accept the same objects, default them the same way, and refuse the same mistakes with the same messages.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { z } from 'zod';
import { ADMIN_KUBECONFIG, ensureCluster, uniqueNamespace } from './harness/cluster.ts';
import { deleteNamespace } from './harness/pods.ts';
import { until } from './harness/http.ts';
import { installPorticoRbac } from './harness/portico.ts';
import { crdFor } from '../crds/structural.ts';
import { CRDS as crdDefinitions } from '../reconcilers/kinds/registry.ts';
import { API_VERSION, consumerSpecSchema, pluginSpecSchema, routeSpecSchema, upstreamSpecSchema } from '../crds/schema/index.ts';

// kubectl keeps discovery and OpenAPI caches; a fresh cache directory makes it see CRDs as soon as they exist.
const cacheDir = mkdtempSync(path.join(os.tmpdir(), 'crd-e2e-kubectl-'));
let ns: string;

/** kubectl with a fresh cache; never throws: ok + stdout, or the error text (stderr). */
function k(args: string[], input?: string): { ok: boolean; out: string } {
  try {
    const out = execFileSync('kubectl', ['--cache-dir', cacheDir, ...args], {
      env: { ...process.env, KUBECONFIG: ADMIN_KUBECONFIG },
      input,
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    return { ok: true, out };
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    return { ok: false, out: err.stderr || err.message };
  }
}
const must = (args: string[], input?: string): string => {
  const r = k(args, input);
  assert.ok(r.ok, `kubectl ${args.join(' ')}: ${r.out}`);
  return r.out;
};

const SCHEMAS: Record<string, z.ZodType> = { Route: routeSpecSchema, Upstream: upstreamSpecSchema, Plugin: pluginSpecSchema, Consumer: consumerSpecSchema };
const PLURAL: Record<string, string> = Object.fromEntries(crdDefinitions.map((d) => [d.kind, d.plural]));
const manifest = (kind: string, name: string, spec: unknown) => JSON.stringify({ apiVersion: API_VERSION, kind, metadata: { name, namespace: ns }, spec });

before(async () => {
  await ensureCluster();
  await installPorticoRbac(); // kubectl apply -k kustomize/ (which includes ../crds)
  ns = await uniqueNamespace('crd-e2e');
});
after(async () => {
  if (ns) await deleteNamespace(ns);
  rmSync(cacheDir, { recursive: true, force: true });
});

test('kubectl apply -k kustomize/ installs the four CRDs and they become Established', async () => {
  for (const def of crdDefinitions) {
    const name = `${def.plural}.portico.dev`;
    await until(`${name} Established`, () => {
      const r = k(['get', 'crd', name, '-o', 'json']);
      if (!r.ok) return false;
      const conds = (JSON.parse(r.out) as { status?: { conditions?: { type: string; status: string }[] } }).status?.conditions ?? [];
      return ['Established', 'NamesAccepted'].every((t) => conds.some((c) => c.type === t && c.status === 'True'));
    }, 30_000);
  }
  // The API is discoverable under the group, with the short names.
  await until('portico.dev in discovery', () => {
    const r = k(['api-resources', '--api-group=portico.dev', '-o', 'wide']);
    return r.ok && ['proute', 'pupstream', 'pplugin', 'pconsumer'].every((s) => r.out.includes(s)) && r.out.includes('portico');
  });
});

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

test('kubectl explain shows the descriptions written in the zod schemas', async () => {
  const crd = crdFor(crdDefinitions[0]!) as { spec: { versions: { schema: { openAPIV3Schema: { properties: { spec: { properties: Record<string, { description: string }> } } } } }[] } };
  const rulesDescription = crd.spec.versions[0]!.schema.openAPIV3Schema.properties.spec.properties.rules!.description;
  const out = await until('kubectl explain routes.spec.rules', () => {
    const r = k(['explain', 'routes.spec.rules', `--api-version=${API_VERSION}`]);
    return r.ok && squash(r.out).includes(squash(rulesDescription)) ? r.out : false;
  }, 30_000);
  assert.match(out, /matches\s+<\[\]Object>/, 'fields of the rules are listed');
  assert.match(out, /backends\s+<\[\]Object>/);
  const path = must(['explain', 'routes.spec.rules.matches.path.type', `--api-version=${API_VERSION}`]);
  assert.match(squash(path), /RegularExpression: value is a PCRE regular expression/);
  const config = must(['explain', 'plugins.spec.config', `--api-version=${API_VERSION}`]);
  assert.match(squash(config), /Portico validates them against the type/);
});

const VALID: [kind: string, name: string, spec: unknown][] = [
  ['Route', 'shop', {
    hosts: ['shop.example.com'],
    tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }],
    rules: [
      { name: 'api', matches: [{ path: { type: 'Prefix', value: '/api' }, methods: ['GET'], headers: [{ name: 'X-Canary', value: 'yes' }] }], backends: [{ service: { name: 'api', port: 8080 } }, { service: { name: 'api-v2', port: 8080 }, weight: 9 }], plugins: ['limit'], timeouts: { read: '30s' }, retries: { attempts: 2, on: ['error', 'http_503'] } },
      { matches: [{ path: {} }], backends: [{ service: { name: 'web', port: 80 } }] },
      { name: 'regex', matches: [{ path: { type: 'RegularExpression', value: '^/v[0-9]+/' }, queryParams: [{ name: 'debug', type: 'RegularExpression', value: '^(1|true)$' }] }] },
    ],
    plugins: ['cors'],
  }],
  ['Route', 'any-host', { rules: [{}] }],
  ['Upstream', 'web', { service: { name: 'web' }, ports: [80], loadBalancer: { algorithm: 'ConsistentHash', hashOn: { header: 'X-User' } }, healthCheck: { passive: {} } }],
  ['Upstream', 'secure', { service: { name: 'secure' }, loadBalancer: { algorithm: 'Cookie', cookie: { name: 'route', maxAge: '30m' } }, protocol: 'HTTPS', tls: { caSecret: 'ca', verify: true } }],
  ['Plugin', 'limit', { type: 'rate-limit', config: { requestsPerSecond: 10, burst: 20, nested: { kept: [1, 'two'] } } }],
  ['Plugin', 'auth', { type: 'external-auth', configFrom: { secretKeyRef: { name: 'auth-config', key: 'config.yaml' } } }],
  ['Consumer', 'alice', { username: 'alice@example.com', credentials: [{ type: 'key-auth', secretRef: { name: 'alice-key' } }], plugins: ['limit'] }],
];

test('valid objects are admitted and the apiserver defaults them exactly as zod does', async () => {
  for (const [kind, name, spec] of VALID) {
    const zodParsed = SCHEMAS[kind]!.safeParse(spec);
    assert.ok(zodParsed.success, `zod accepts ${kind}/${name}: ${zodParsed.error?.message}`);
    must(['create', '-f', '-'], manifest(kind, name, spec));
    const stored = JSON.parse(must(['-n', ns, 'get', `${PLURAL[kind]}.portico.dev`, name, '-o', 'json'])) as { spec: unknown };
    assert.deepEqual(stored.spec, zodParsed.data, `${kind}/${name}: apiserver defaults = zod defaults`);
  }
});

test('kubectl get portico lists every kind; printer columns show hosts, type, username and conditions', async () => {
  const all = must(['get', 'portico', '-A']);
  for (const [kind, name] of VALID) assert.match(all, new RegExp(`^${ns}\\s+${kind.toLowerCase()}\\.portico\\.dev/${name}\\s`, 'm'), `${kind}/${name} listed by category`);
  const byShortName = must(['-n', ns, 'get', 'proute,pupstream,pplugin,pconsumer', '-o', 'name']);
  assert.equal(byShortName.trim().split('\n').length, VALID.length);

  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const status = { status: { observedGeneration: 1, conditions: [
    { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'ok', lastTransitionTime: now, observedGeneration: 1 },
    { type: 'Programmed', status: 'False', reason: 'Pending', message: 'not yet', lastTransitionTime: now },
  ] } };
  must(['-n', ns, 'patch', 'routes.portico.dev', 'shop', '--subresource=status', '--type=merge', '-p', JSON.stringify(status)]);
  const routes = must(['-n', ns, 'get', 'routes.portico.dev']);
  assert.match(routes, /^NAME\s+HOSTS\s+ACCEPTED\s+PROGRAMMED\s+AGE$/m);
  assert.match(routes, /^shop\s+\["shop\.example\.com"\]\s+True\s+False\s+\d+\w$/m);
  assert.match(must(['-n', ns, 'get', 'upstreams.portico.dev', 'web']), /^web\s+web\s+ConsistentHash\s+\d+\w$/m);
  assert.match(must(['-n', ns, 'get', 'plugins.portico.dev', 'limit']), /^NAME\s+TYPE\s+ACCEPTED\s+AGE\n^limit\s+rate-limit\s+/m);
  assert.match(must(['-n', ns, 'get', 'consumers.portico.dev', 'alice']), /^alice\s+alice@example\.com\s+/m);
  // The status subresource guards the spec: a status write cannot change it, and status is validated too.
  const bad = k(['-n', ns, 'patch', 'routes.portico.dev', 'shop', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { conditions: [{ type: 'Accepted', status: 'Maybe', reason: 'X', message: '', lastTransitionTime: now }] } })]);
  assert.ok(!bad.ok);
  assert.match(bad.out, /status\.conditions\[0\]\.status: Unsupported value: "Maybe"/);
});

const INVALID: [kind: string, spec: unknown, apiserver: RegExp, zod: RegExp][] = [
  ['Route', { rules: [{ matches: [{ path: { type: 'Bogus', value: '/' } }] }] }, /spec\.rules\[0\]\.matches\[0\]\.path\.type: Unsupported value: "Bogus"/, /rules\.0\.matches\.0\.path\.type/],
  ['Route', { hosts: ['a.example.com'], tls: [{ hosts: ['b.example.com'], secretName: 's' }], rules: [{}] }, /spec\.tls: Invalid value: .*every tls\[\]\.hosts entry must also be listed in spec\.hosts/, /every tls\[\]\.hosts entry must also be listed in spec\.hosts/],
  ['Route', { rules: [{ matches: [{ path: { type: 'Exact', value: 'api' } }] }] }, /spec\.rules\[0\]\.matches\[0\]\.path\.value: Invalid value: .*an Exact or Prefix path must start with "\/"/, /an Exact or Prefix path must start with "\/"/],
  ['Route', { rules: [{ name: 'a' }, { name: 'a' }] }, /spec\.rules: Invalid value: .*rule names must be unique within the Route/, /rule names must be unique within the Route/],
  ['Route', { hosts: ['Shop.Example.com'], rules: [{}] }, /spec\.hosts\[0\]: Invalid value: "Shop\.Example\.com": spec\.hosts\[0\] in body should match/, /hosts\.0/],
  ['Route', { rules: [{ matches: [{ headers: [{ name: 'X-A', value: 'a\r\nInjected: 1' }] }] }] }, /spec\.rules\[0\]\.matches\[0\]\.headers\[0\]\.value: Invalid value/, /must be printable ASCII/],
  ['Route', { rules: [{ matches: [{ headers: [{ name: 'x', value: '1' }, { name: 'x', value: '2' }] }] }] }, /spec\.rules\[0\]\.matches\[0\]\.headers\[1\]: Duplicate value/, /duplicate name "x"/],
  ['Route', { rules: [{ timeouts: { read: '5h' } }] }, /spec\.rules\[0\]\.timeouts\.read: Invalid value: "5h"/, /must be a duration/],
  ['Route', { rules: [{ backends: [{ service: { name: 'web', port: 70000 } }] }] }, /spec\.rules\[0\]\.backends\[0\]\.service\.port: Invalid value: 70000: .*less than or equal to 65535/, /Too big/],
  ['Route', { rules: [] }, /spec\.rules: Invalid value: 0: spec\.rules in body should have at least 1 items/, /Too small/],
  ['Upstream', { service: { name: 'web' }, loadBalancer: { algorithm: 'ConsistentHash' } }, /spec\.loadBalancer\.hashOn: Invalid value: .*hashOn is required with algorithm ConsistentHash/, /hashOn is required/],
  ['Upstream', { service: { name: 'web' }, loadBalancer: { algorithm: 'ConsistentHash', hashOn: { header: 'a', cookie: 'b' } } }, /set exactly one of header, cookie, query, variable/, /set exactly one of header, cookie, query, variable/],
  ['Upstream', { service: { name: 'web' }, loadBalancer: { algorithm: 'EWMA', cookie: { name: 'c' } } }, /spec\.loadBalancer\.cookie: Invalid value: .*cookie is only allowed with algorithm Cookie/, /cookie is only allowed/],
  ['Upstream', { service: { name: 'web' }, tls: { serverName: 'web.internal' } }, /spec\.tls: Invalid value: .*tls is only allowed with protocol HTTPS or GRPCS/, /tls is only allowed/],
  ['Upstream', { service: { name: 'web' }, loadBalancer: { algorithm: 'ConsistentHash', hashOn: { variable: 'ssl_client_cert' } } }, /spec\.loadBalancer\.hashOn\.variable: Unsupported value: "ssl_client_cert"/, /Invalid option/],
  ['Plugin', { type: 'cors', config: { allowOrigins: ['*'] }, configFrom: { secretKeyRef: { name: 'c', key: 'k' } } }, /spec\.configFrom: Invalid value: .*set config or configFrom, not both/, /set config or configFrom, not both/],
  ['Plugin', { type: 'lua' }, /spec\.type: Unsupported value: "lua"/, /Invalid option/],
  ['Consumer', { username: 'alice smith' }, /spec\.username: Invalid value: "alice smith"/, /must be letters, digits/],
];

test('invalid objects are refused by the apiserver and by zod, with the schema\'s messages', () => {
  INVALID.forEach(([kind, spec, apiserver, zod], i) => {
    const r = k(['create', '--dry-run=server', '-f', '-'], manifest(kind, `bad-${i}`, spec));
    assert.ok(!r.ok, `apiserver refuses ${kind} ${JSON.stringify(spec)}`);
    assert.match(r.out, apiserver, `apiserver message for ${kind} ${JSON.stringify(spec)}`);
    const z = SCHEMAS[kind]!.safeParse(spec);
    assert.ok(!z.success, `zod refuses ${kind} ${JSON.stringify(spec)}`);
    assert.match(z.error.issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('\n'), zod, `zod message for ${kind} ${JSON.stringify(spec)}`);
  });
  // Unknown fields: zod refuses them (strict objects); the apiserver's strict field validation does too.
  const r = k(['create', '--dry-run=server', '--validate=strict', '-f', '-'], manifest('Route', 'typo', { rules: [{ backend: [] }] }));
  assert.ok(!r.ok);
  assert.match(r.out, /unknown field "spec\.rules\[0\]\.backend"/);
  assert.ok(!routeSpecSchema.safeParse({ rules: [{ backend: [] }] }).success);
});
