import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAllYaml } from '@kubernetes/client-node';
import { CATALOGUE, NGINX_PREFIX } from '../reconcilers/annotations/table.ts';
import { analyze, loadManifests, parseMigrateArgs, runMigrate, UsageError, type Input, type Report } from './migrate.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CORPUS = path.join(root, 'app/migrate-corpus');

const corpus = (opts: Parameters<typeof loadManifests>[1] = { ingressClass: 'nginx' }) => loadManifests([CORPUS], opts);
const byName = (r: Report, key: string) => {
  const i = r.ingresses.find((x) => `${x.namespace}/${x.name}` === key);
  assert.ok(i, key);
  return i;
};
const statusOf = (r: Report, key: string) => Object.fromEntries(byName(r, key).annotations.map((a) => [a.name, a.valid === false ? 'invalid' : a.status]));

test('the corpus uses every ingress-nginx annotation of the catalogue at least once', () => {
  const used = new Set<string>();
  for (const f of readdirSync(CORPUS)) {
    for (const d of loadAllYaml(readFileSync(path.join(CORPUS, f), 'utf8')) as { kind?: string; metadata?: { annotations?: Record<string, string> } }[]) {
      if (d?.kind !== 'Ingress') continue;
      for (const k of Object.keys(d.metadata?.annotations ?? {})) if (k.startsWith(NGINX_PREFIX)) used.add(k.slice(NGINX_PREFIX.length));
    }
  }
  const missing = Object.entries(CATALOGUE).filter(([n, r]) => r.origin === 'ingress-nginx' && !used.has(n)).map(([n]) => n);
  assert.deepEqual(missing, []);
});

test('corpus: which Ingresses can move as-is, which need changes, and why', () => {
  const r = analyze(corpus());
  const verdicts = Object.fromEntries(r.ingresses.map((i) => [`${i.namespace}/${i.name}`, i.verdict === 'ready' ? 'ready' : [...new Set(i.issues.map((x) => x.code))].sort().join(',')]));
  assert.deepEqual(verdicts, {
    'api/grpc-api': 'ready',
    'api/legacy-api': 'ready',
    'api/public-api': 'ready',
    'internal/dashboard': 'ready',
    'internal/partner-mtls': 'ready',
    'legacy/erp': 'refused-annotation',
    'legacy/vault': 'ready',
    'legacy/wiki': 'ready',
    'ops/grafana': 'ready',
    'ops/prometheus': 'ready',
    'shop/assets': 'invalid-value',
    'shop/checkout': 'ready',
    'shop/checkout-canary': 'ready',
    'shop/search-canary': 'refused-annotation',
    'shop/storefront': 'ready',
    'web/blog': 'refused-annotation',
    'web/docs': 'ready',
    'web/legacy-admin': 'fails-closed,snippet-refused',
    'web/maintenance': 'ready',
    'web/old-domain': 'ready',
    'web/waf-protected': 'invalid-value,refused-annotation',
  });
  assert.equal(r.summary.ingresses, 21);
  assert.equal(r.summary.ready, 15);
  assert.equal(r.summary.needsChanges, 6);
  assert.equal(r.summary.exitCode, 1);
  assert.ok(r.summary.topReasons.length > 0 && r.summary.topReasons.length <= 10);
  // Client-certificate authentication (auth-tls-*) is applied: no reason names it any more.
  assert.ok(!r.summary.topReasons.some((t) => /auth-tls|client-certificate/.test(t.reason)), JSON.stringify(r.summary.topReasons));
  // Without the class filter every Ingress counts; reasons are sorted by how many Ingresses share them, then by text.
  assert.deepEqual(analyze(corpus({})).summary.topReasons[0], { reason: 'affinity-canary-behavior: not supported: the sticky/legacy choice for canaries with affinity cannot be made', ingresses: 1 });
  // Every annotation of every Ingress carries its table status.
  for (const i of r.ingresses) for (const a of i.annotations) assert.equal(a.status, CATALOGUE[a.name]?.status ?? 'unknown', a.annotation);
});

test('corpus: per-annotation statuses, differences and values Portico cannot use', () => {
  const r = analyze(corpus());
  assert.deepEqual(statusOf(r, 'shop/storefront'), {
    'force-ssl-redirect': 'supported', 'load-balance': 'supported', 'proxy-body-size': 'supported', 'proxy-connect-timeout': 'supported',
    'proxy-read-timeout': 'supported', 'proxy-send-timeout': 'supported', 'ssl-redirect': 'supported',
  });
  assert.equal(statusOf(r, 'shop/assets')['proxy-body-size'], 'invalid');
  assert.equal(statusOf(r, 'api/public-api')['cors-allow-credentials'], 'difference');
  assert.match(byName(r, 'api/public-api').annotations.find((a) => a.name === 'cors-allow-credentials')?.note ?? '', /never sent with cors-allow-origin "\*"/);
  assert.equal(statusOf(r, 'api/legacy-api')['whitelist-source-range'], 'supported');
  assert.equal(statusOf(r, 'api/legacy-api')['global-rate-limit'], 'difference');
  assert.equal(statusOf(r, 'api/legacy-api')['global-rate-limit-window'], 'supported');
  assert.match(byName(r, 'api/legacy-api').notes.join('\n'), /set the ConfigMap's global-rate-limit-redis-host/, 'counted in Redis: the ConfigMap must name one');
  // External auth: auth-url itself is applied, auth-proxy-set-headers (its ConfigMap is read by the controller) and,
  // with the ConfigMap's switches on, auth-snippet (compiled for the auth subrequest); with them off (ingress-nginx's
  // defaults) auth-snippet is refused and the Ingress fails closed.
  const dash = byName(r, 'internal/dashboard');
  assert.equal(dash.issues.find((i) => i.annotation === `${NGINX_PREFIX}auth-url`), undefined);
  assert.equal(statusOf(r, 'internal/dashboard')['auth-url'], 'difference');
  assert.equal(statusOf(r, 'internal/dashboard')['enable-global-auth'], 'supported');
  assert.equal(statusOf(r, 'internal/dashboard')['auth-proxy-set-headers'], 'difference');
  assert.equal(dash.issues.find((i) => i.annotation === `${NGINX_PREFIX}auth-proxy-set-headers`), undefined);
  assert.equal(statusOf(r, 'internal/dashboard')['auth-snippet'], 'difference');
  assert.deepEqual(dash.issues, []);
  const dashOff = byName(analyze({ ...corpus(), configMap: null }), 'internal/dashboard');
  assert.deepEqual([...new Set(dashOff.issues.filter((i) => i.annotation === `${NGINX_PREFIX}auth-snippet`).map((i) => i.code))].sort(), ['fails-closed', 'refused-by-configmap']);
  // Client certificates: the CA Secret of the manifests is checked; without it in the input, a note says so (a
  // Secret known not to exist fails closed).
  const mtls = byName(r, 'internal/partner-mtls');
  assert.deepEqual([mtls.verdict, mtls.notes], ['ready', []]);
  assert.equal(statusOf(r, 'internal/partner-mtls')['auth-tls-secret'], 'difference');
  const input = corpus();
  input.secrets.delete('internal/partner-ca');
  const noSecret = byName(analyze(input), 'internal/partner-mtls');
  assert.deepEqual([noSecret.verdict, noSecret.notes], ['ready', ['Secret internal/partner-ca is not in the input: the auth-tls CA (ca.crt) was not checked']]);
  input.missingSecrets.add('internal/partner-ca');
  assert.match(byName(analyze(input), 'internal/partner-mtls').issues.find((i) => i.code === 'fails-closed')?.message ?? '', /Secret internal\/partner-ca not found/);
  // Basic and digest auth: the htpasswd and htdigest Secrets of the manifests are checked (digest used to be refused
  // and failed closed; Portico's digest-auth plugin now serves it).
  assert.deepEqual(byName(r, 'ops/grafana').notes, []);
  assert.deepEqual([byName(r, 'ops/prometheus').issues, byName(r, 'ops/prometheus').notes], [[], []]);
  assert.equal(statusOf(r, 'ops/prometheus')['auth-type'], 'difference');
  // An htpasswd Secret given to digest: no usable user, the Ingress fails closed and says why.
  const htpasswd = corpus();
  const prom = htpasswd.ingresses.find((i) => i.metadata.name === 'prometheus');
  assert.ok(prom?.metadata.annotations);
  prom.metadata.annotations[`${NGINX_PREFIX}auth-secret`] = 'admin-users';
  const wrong = byName(analyze(htpasswd), 'ops/prometheus');
  assert.match(wrong.issues.find((i) => i.code === 'fails-closed')?.message ?? '', /digest authentication that cannot be applied \(Secret ops\/admin-users holds no usable user/);
  // Redirects: a URL with a query of its own is served as written (ingress-nginx's `return 307 <url>`).
  const m = byName(r, 'web/maintenance').annotations.find((a) => a.name === 'temporal-redirect');
  assert.equal(m?.valid, true);
  assert.equal(m?.error ?? null, null);
  // FastCGI (backend-protocol FCGI): applied; its params ConfigMap is not among the manifests, so not checked.
  assert.equal(statusOf(r, 'legacy/wiki')['backend-protocol'], 'difference');
  assert.equal(statusOf(r, 'legacy/wiki')['fastcgi-params-configmap'], 'difference');
  assert.deepEqual(byName(r, 'legacy/wiki').notes, ['ConfigMap legacy/wiki-fastcgi is not in the input: the FastCGI params (fastcgi-params-configmap) were not checked']);
  assert.equal(statusOf(r, 'legacy/erp')['erp-legacy-flag'], 'unknown');
  // Backend TLS from annotations is applied (some with a difference); the Secret is not among the manifests.
  assert.equal(statusOf(r, 'legacy/erp')['proxy-ssl-secret'], 'difference');
  assert.equal(statusOf(r, 'legacy/erp')['proxy-ssl-verify-depth'], 'supported');
  assert.ok(byName(r, 'legacy/erp').notes.includes('Secret legacy/erp-client-cert is not in the input: the proxy-ssl-secret client certificate and CA were not checked'));
  // TLS passthrough is applied with the controller flag, as in ingress-nginx: a note says so.
  const vault = byName(r, 'legacy/vault');
  assert.equal(statusOf(r, 'legacy/vault')['ssl-passthrough'], 'difference');
  assert.deepEqual([vault.verdict, vault.issues], ['ready', []]);
  assert.ok(vault.notes.some((n) => n.includes('--enable-ssl-passthrough')), JSON.stringify(vault.notes));
  // The classic rewrite example (regex path with capture groups + rewrite-target) is served as ingress-nginx does.
  assert.equal(statusOf(r, 'web/blog')['rewrite-target'], 'difference');
  assert.equal(byName(r, 'web/blog').issues.find((i) => i.code === 'not-served'), undefined);
});

test('proxy-ssl-secret: an unusable Secret among the manifests fails closed; a missing one (cluster 404) too', () => {
  const erp = corpus().ingresses.find((i) => i.metadata.name === 'erp');
  assert.ok(erp);
  const one = (secrets: Input['secrets'], missingSecrets = new Set<string>()): Report => analyze({ source: { kind: 'manifests', files: [] }, ingresses: [erp], configMap: null, secrets, missingSecrets });
  const junk = byName(one(new Map([['legacy/erp-client-cert', { data: { 'ca.crt': Buffer.from('junk').toString('base64') } }]])), 'legacy/erp');
  const closed = junk.issues.find((i) => i.code === 'fails-closed' && i.annotation === `${NGINX_PREFIX}proxy-ssl-secret`);
  assert.match(closed?.message ?? '', /ca\.crt of Secret legacy\/erp-client-cert must hold only PEM certificates; every path answers 503/);
  assert.equal(closed?.reason, 'proxy-ssl-secret: the Ingress fails closed');
  const gone = byName(one(new Map(), new Set(['legacy/erp-client-cert'])), 'legacy/erp');
  assert.match(gone.issues.find((i) => i.code === 'fails-closed')?.message ?? '', /Secret legacy\/erp-client-cert \(proxy-ssl-secret\) not found/);
  assert.deepEqual(gone.notes, []);
});

test('snippets: compiled with the ConfigMap\'s switches; unsafe ones refused with why, access rules fail closed', () => {
  const r = analyze(corpus());
  assert.deepEqual(r.settings, { allowSnippetAnnotations: true, annotationsRiskLevel: 'Critical' });
  assert.equal(byName(r, 'web/docs').verdict, 'ready');
  const admin = byName(r, 'web/legacy-admin');
  assert.match(admin.issues.find((i) => i.code === 'snippet-refused' && i.annotation?.endsWith('configuration-snippet'))?.message ?? '', /access_by_lua_block/);
  assert.match(admin.issues.find((i) => i.code === 'snippet-refused' && i.annotation?.endsWith('server-snippet'))?.message ?? '', /"location" blocks/);
  assert.match(admin.issues.find((i) => i.code === 'fails-closed')?.message ?? '', /access rules in a snippet/);
  // Without the ConfigMap (ingress-nginx's defaults: snippets off, risk level High) the safe snippet is refused too.
  const defaults = analyze({ ...corpus(), configMap: null });
  assert.deepEqual(defaults.settings, { allowSnippetAnnotations: false, annotationsRiskLevel: 'High' });
  const docs = byName(defaults, 'web/docs');
  assert.deepEqual([...new Set(docs.issues.map((i) => i.code))], ['refused-by-configmap']);
  assert.match(docs.issues[0]?.message ?? '', /allow-snippet-annotations/);
  // annotations-risk-level Medium refuses upstream-hash-by (High) on shop/assets.
  const input: Input = { ...corpus(), configMap: { namespace: 'ingress-nginx', name: 'c', data: { 'annotations-risk-level': 'Medium' } } };
  const assets = byName(analyze(input), 'shop/assets');
  assert.match(assets.issues.find((i) => i.code === 'refused-by-configmap')?.message ?? '', /upstream-hash-by \(risk High\).*annotations-risk-level is Medium/);
});

test('the ConfigMap: known keys with the same meaning, differences, invalid values, keys Portico ignores', () => {
  const r = analyze(corpus());
  const cm = r.configMap;
  assert.ok(cm);
  assert.equal(cm.keys.length, 27);
  const st = Object.fromEntries(cm.keys.map((k) => [k.key, k.valid === false ? 'invalid' : k.status]));
  assert.equal(st['proxy-body-size'], 'supported');
  assert.equal(st['worker-shutdown-timeout'], 'supported');
  assert.equal(st['proxy-real-ip-cidr'], 'difference');
  assert.equal(st['log-format-upstream'], 'invalid');
  assert.equal(st['use-gzip'], 'supported');
  assert.equal(st['enable-real-ip'], 'supported');
  assert.equal(st['ssl-protocols'], 'difference');
  assert.equal(st['http-snippet'], 'refused');
  assert.match(cm.keys.find((k) => k.key === 'http-snippet')?.note ?? '', /snippets in the ConfigMap are not supported/);
  assert.equal(st['custom-http-errors'], 'supported');
  assert.equal(st['global-auth-url'], 'supported');
  assert.equal(cm.verdict, 'needs-changes');
  assert.equal(st['server-tokens'], 'difference');
  assert.deepEqual(r.summary.configMap, { supported: 20, difference: 6, refused: 1, invalid: 1 });
  // ingress-nginx's memcached keys of global rate limits: refused by name, pointing to Portico's Redis keys.
  const input = corpus();
  const mem = analyze({ ...input, configMap: { ...input.configMap!, data: { 'global-rate-limit-memcached-host': 'memcached.cache', 'global-rate-limit-status-code': '429', 'global-rate-limit-redis-host': '10.96.0.20' } } }).configMap!;
  const k = Object.fromEntries(mem.keys.map((x) => [x.key, x]));
  assert.equal(k['global-rate-limit-memcached-host']?.status, 'refused');
  assert.match(k['global-rate-limit-memcached-host']?.note ?? '', /Redis, not memcached: set global-rate-limit-redis-host/);
  assert.equal(k['global-rate-limit-status-code']?.status, 'difference');
  assert.equal(k['global-rate-limit-redis-host']?.status, 'supported');
  assert.equal(mem.verdict, 'needs-changes');
});

test('--ingress-class filters; without it every Ingress is read', () => {
  assert.equal(analyze(corpus({})).summary.ingresses, 22);
  assert.equal(analyze(corpus({ ingressClass: 'traefik' })).summary.ingresses, 1);
});

const capture = async (argv: string[], stdin?: string) => {
  let out = '';
  let err = '';
  const code = await runMigrate(argv, { stdout: async (s) => void (out += s), stderr: async (s) => void (err += s), ...(stdin !== undefined ? { stdin: () => stdin } : {}) });
  return { code, out, err };
};

test('exit status: 0 when everything moves as-is (stdin), 1 when something needs changes, 2 on usage errors', async () => {
  const ready = readFileSync(path.join(CORPUS, '02-canary.yaml'), 'utf8').split(/^---$/m).slice(0, 2).join('---\n');
  const ok = await capture(['-f', '-'], ready);
  assert.equal(ok.code, 0, ok.out);
  assert.match(ok.out, /2 Ingress\(es\): 2 ready to move as-is, 0 need changes/);
  assert.match(ok.out, /everything can move as-is/);
  const needs = await capture(['-f', CORPUS, '--ingress-class', 'nginx']);
  assert.equal(needs.code, 1);
  assert.match(needs.out, /21 Ingress\(es\): 15 ready to move as-is, 6 need changes/);
  assert.match(needs.out, /top reasons/);
  for (const bad of [['--bogus'], ['-o', 'yaml', '-f', CORPUS], ['-f'], ['-f', '/nonexistent/x.yaml'], ['-f', CORPUS, '--configmap', 'nope'], ['-f', CORPUS, '--configmap', 'ingress-nginx/absent'], ['-f', CORPUS, '--kubeconfig', '/x']]) {
    const r = await capture(bad);
    assert.equal(r.code, 2, bad.join(' '));
    assert.match(r.err, /^portico migrate: /, bad.join(' '));
  }
  const broken = await capture(['-f', '-'], 'kind: Ingress\n  bad: [indent');
  assert.equal(broken.code, 2);
  assert.match(broken.err, /not valid YAML/);
  assert.throws(() => parseMigrateArgs(['--configmap', 'a']), UsageError);
  assert.deepEqual(parseMigrateArgs(['-f', 'a', '--filename=b', '--configmap=ns/cm', '-o', 'json']), { files: ['a', 'b'], configmap: { namespace: 'ns', name: 'cm' }, output: 'json' });
});

test('`portico migrate` through the binary: JSON for CI (stable schema), no cluster needed with -f', () => {
  const run = (args: string[]) =>
    spawnSync(path.join(root, 'node_modules/.bin/node'), [path.join(root, 'app/main.ts'), 'migrate', ...args], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent-home' },
      timeout: 30_000,
    });
  const r = run(['-f', CORPUS, '--ingress-class', 'nginx', '-o', 'json']);
  assert.equal(r.status, 1, r.stderr);
  const j = JSON.parse(r.stdout) as Report;
  assert.equal(j.schemaVersion, 1);
  assert.deepEqual(Object.keys(j), ['schemaVersion', 'source', 'settings', 'ingresses', 'configMap', 'sharedHosts', 'summary']);
  assert.deepEqual(Object.keys(j.summary), ['ingresses', 'ready', 'needsChanges', 'annotations', 'configMap', 'topReasons', 'exitCode']);
  assert.deepEqual(Object.keys(j.ingresses[0] ?? {}), ['namespace', 'name', 'ingressClass', 'verdict', 'annotations', 'issues', 'notes']);
  assert.deepEqual(Object.keys(j.ingresses[0]?.annotations[0] ?? {}), ['annotation', 'name', 'value', 'status', 'note', 'risk', 'valid', 'error']);
  assert.equal(j.summary.exitCode, 1);
  // Without -f it reads a cluster: none here, so a usage error (2) — the controller's flags are not involved.
  const noCluster = run([]);
  assert.equal(noCluster.status, 2);
  assert.match(noCluster.stderr, /^portico migrate: cannot load a kubeconfig/);
});

test('hosts shared across namespaces are listed with their namespaces and the owner namespace-exclusive-hosts would keep', async () => {
  const yaml = (ns: string, name: string, host: string, created: string) =>
    `apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: { name: ${name}, namespace: ${ns}, creationTimestamp: "${created}" }\nspec:\n  ingressClassName: nginx\n  rules:\n    - host: ${host}\n      http: { paths: [ { path: /${name}, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } } ] }\n`;
  const docs = [yaml('shop', 'front', 'shop.example', '2025-01-01T00:00:00Z'), yaml('payments', 'pay', 'shop.example', '2024-06-01T00:00:00Z'), yaml('shop', 'admin', 'shop.example', '2025-02-01T00:00:00Z'), yaml('blog', 'blog', 'blog.example', '2025-01-01T00:00:00Z')].join('---\n');
  const r = await capture(['-f', '-', '-o', 'json'], docs);
  const report = JSON.parse(r.out) as Report;
  assert.deepEqual(report.sharedHosts, [{ host: 'shop.example', namespaces: ['payments', 'shop'], ingresses: ['payments/pay', 'shop/admin', 'shop/front'], owner: 'payments' }]);
  const text = await capture(['-f', '-'], docs);
  assert.match(text.out, /Hosts shared across namespaces \(1\)/);
  assert.match(text.out, /shop\.example: namespaces payments, shop .*owner payments/);
});
