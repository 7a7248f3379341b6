// The validating admission webhook against the real API server (RBAC on, Portico as its ServiceAccount): Portico
// makes its own certificate, publishes the CA bundle, and `kubectl apply` shows its denials and warnings. Here
// Portico runs as a host process, so the configuration calls it by URL (127.0.0.1); e2e/install.e2e.test.ts covers
// the install's Service-based configuration on the real node.
//
// Isolation: the configuration only selects this run's namespace (namespaceSelector), and Portico serves only this
// run's IngressClass, so other suites' deliberately broken objects never meet this webhook.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadAllYaml } from '@kubernetes/client-node';
import { deleteNamespace } from './harness/pods.ts';
import { admin, ADMIN_KUBECONFIG, ensureCluster, ownIngressClass, uniqueNamespace } from './harness/cluster.ts';
import { request, until } from './harness/http.ts';
import { installPorticoRbac, REPO_ROOT, startPortico, type RunningPortico } from './harness/portico.ts';
import { isNotFound } from '../operator/kube/client.ts';

const BASE = 53180;
const WEBHOOK_PORT = BASE + 5;
const SECRET = '/api/v1/namespaces/portico-system/secrets/portico-webhook-tls';
const CONFIG = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/portico';
let p: RunningPortico | undefined;
let ns = '';
let CLASS = '';
let removeClass: (() => Promise<void>) | undefined;
const N = 'nginx.ingress.kubernetes.io/';

/**
 * kubectl apply of one object, asynchronously: Portico runs in this very process, so a synchronous child process
 * would block the event loop that must answer the API server's admission call. Returns the exit status and the
 * combined output (kubectl prints admission warnings and denials on stderr).
 */
function apply(obj: unknown): Promise<{ ok: boolean; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = execFile('kubectl', ['--kubeconfig', ADMIN_KUBECONFIG, 'apply', '-f', '-'], { encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ ok: !error, out: `${stdout}${stderr}`, err: `${stdout}${stderr}` });
    });
    child.stdin?.end(JSON.stringify(obj));
  });
}

const ingress = (name: string, host: string, p0: string, annotations: Record<string, string> = {}, pathType = 'Prefix') => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { name, namespace: ns, annotations },
  spec: { ingressClassName: CLASS, rules: [{ host, http: { paths: [{ path: p0, pathType, backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
});

async function secretData(): Promise<Record<string, string> | undefined> {
  try {
    return (await admin().request<{ data?: Record<string, string> }>('GET', SECRET)).data;
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}
const caBundles = async () => (await admin().request<{ webhooks: { clientConfig: { caBundle?: string } }[] }>('GET', CONFIG)).webhooks.map((w) => w.clientConfig.caBundle ?? '');

before(async () => {
  await ensureCluster();
  await installPorticoRbac(); // kubectl apply -k kustomize/: the portico-system namespace, RBAC, CRDs
  ns = await uniqueNamespace('whk');
  await admin().request('PATCH', `/api/v1/namespaces/${ns}`, { contentType: 'application/merge-patch+json', body: { metadata: { labels: { 'portico-webhook-e2e': ns } } } });
  const cls = await ownIngressClass('whk');
  CLASS = cls.name;
  removeClass = cls.remove;
  // A Secret with garbage in it: the leader must replace it (an update), never serve it.
  try {
    await admin().request('DELETE', SECRET);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  await admin().request('POST', '/api/v1/namespaces/portico-system/secrets', { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'portico-webhook-tls' }, type: 'Opaque', stringData: { 'tls.crt': 'not a certificate', 'tls.key': 'nope', 'ca.crt': 'x', 'ca.key': 'y' } } });
  const hook = (name: string, rules: unknown) => ({
    name,
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    failurePolicy: 'Ignore',
    timeoutSeconds: 5,
    clientConfig: { url: `https://127.0.0.1:${WEBHOOK_PORT}/validate` },
    namespaceSelector: { matchLabels: { 'portico-webhook-e2e': ns } },
    rules,
  });
  const cfg = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'portico' },
    webhooks: [
      hook('ingresses.portico.dev', [{ apiGroups: ['networking.k8s.io'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['ingresses'], scope: 'Namespaced' }]),
      hook('crds.portico.dev', [{ apiGroups: ['portico.dev'], apiVersions: ['v1alpha1'], operations: ['CREATE', 'UPDATE'], resources: ['routes', 'upstreams', 'plugins', 'consumers'], scope: 'Namespaced' }]),
    ],
  };
  try {
    await admin().request('DELETE', CONFIG);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  await admin().request('POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', { body: cfg });
  await admin().request('POST', `/api/v1/namespaces/${ns}/services`, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] } } });
  p = await startPortico(BASE, [...cls.flags, '--webhook-port', String(WEBHOOK_PORT), '--webhook-extra-hosts', '127.0.0.1']);
  await until('portico ready', async () => (await request(p!.healthPort, 'x', '/readyz')).status === 200, 30_000);
});

after(async () => {
  await p?.stop();
  for (const path0 of [CONFIG, SECRET]) {
    try {
      await admin().request('DELETE', path0);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
  if (ns) await deleteNamespace(ns);
  await removeClass?.();
});

describe('admission webhook', () => {
  test('the leader replaces the unusable Secret with its own CA and certificate and publishes the CA bundle', async () => {
    const data = await until('webhook Secret with a CA', async () => {
      const d = await secretData();
      return d?.['ca-bundle.crt'] && Buffer.from(d['tls.crt'] ?? '', 'base64').toString().includes('BEGIN CERTIFICATE') ? d : undefined;
    });
    await until('CA bundle in both webhooks', async () => (await caBundles()).every((b) => b === data['ca-bundle.crt']));
    await until('webhook serving', () => p!.webhook?.serving);
  });

  test('a forged AdmissionReview (no API server, no credentials) naming a Secret of another namespace: the webhook reads no Secret and its answer holds nothing of one', async () => {
    await until('webhook serving', () => p!.webhook?.serving);
    // A victim namespace with a Secret Portico's ServiceAccount may read (it reads Secrets cluster-wide).
    const victim = await uniqueNamespace('whv');
    const LOOT = { auth: 'T0P-s3cret-token-without-colon\n', 'db-password': 'hunter2-v4lue', 'ca.crt': '-----BEGIN CERTIFICATE-----\nnotacert\n-----END CERTIFICATE-----\n', config: '{"allow": ["l00t-value"]}' };
    await admin().request('POST', `/api/v1/namespaces/${victim}/secrets`, { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db-creds' }, type: 'Opaque', stringData: LOOT } });
    // Every request Portico's client makes from here on is seen (the webhook shares the controller's client).
    const seen: string[] = [];
    const real = p!.client.request.bind(p!.client);
    p!.client.request = ((method: string, path0: string, o?: unknown) => {
      seen.push(`${method} ${path0}`);
      return real(method, path0, o as never);
    }) as RunningPortico['client']['request'];
    try {
      const ing = (name: string, annotations: Record<string, string>) => ({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: { name, annotations },
        spec: { ingressClassName: CLASS, rules: [{ host: `${name}.whv.test`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }], tls: [{ hosts: [`${name}.whv.test`], secretName: 'db-creds' }] },
      });
      const forged = (uid: string, kind: Record<string, string>, object: unknown) => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid, kind, operation: 'CREATE', namespace: victim, object } });
      const ING = { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' };
      const bodies = [
        forged('f1', ING, ing('a', { [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'db-creds' })),
        forged('f2', ING, ing('b', { [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: `${victim}/db-creds`, [`${N}auth-secret-type`]: 'auth-map' })),
        forged('f3', ING, ing('c', { [`${N}auth-tls-secret`]: 'db-creds' })),
        forged('f4', ING, ing('d', { [`${N}backend-protocol`]: 'HTTPS', [`${N}proxy-ssl-secret`]: 'db-creds', [`${N}proxy-ssl-verify`]: 'on' })),
        forged('f5', { group: 'portico.dev', version: 'v1alpha1', kind: 'Plugin' }, { apiVersion: 'portico.dev/v1alpha1', kind: 'Plugin', metadata: { name: 'p' }, spec: { type: 'ip-restriction', configFrom: { secretKeyRef: { name: 'db-creds', key: 'config' } } } }),
        forged('f6', { group: 'portico.dev', version: 'v1alpha1', kind: 'Consumer' }, { apiVersion: 'portico.dev/v1alpha1', kind: 'Consumer', metadata: { name: 'c' }, spec: { username: 'u', credentials: [{ type: 'key-auth', secretRef: { name: 'db-creds' } }] } }),
      ];
      const answers: string[] = [];
      for (const b of bodies) {
        // An attacker does not verify the certificate; it only needs to reach the port.
        const r = await new Promise<{ status: number; text: string }>((resolve, reject) => {
          const req = https.request({ host: '127.0.0.1', port: WEBHOOK_PORT, path: '/validate', method: 'POST', rejectUnauthorized: false, headers: { 'content-type': 'application/json' }, timeout: 10_000 }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          });
          req.on('error', reject);
          req.end(JSON.stringify(b));
        });
        assert.equal(r.status, 200, r.text);
        answers.push(r.text);
      }
      const all = answers.join('\n');
      for (const leak of ['T0P-s3cret', 'hunter2', 'db-password', 'notacert', 'l00t-value']) assert.ok(!all.includes(leak), `${JSON.stringify(leak)} of ${victim}/db-creds is in an answer:\n${all}`);
      assert.deepEqual(seen.filter((s) => s.includes('/secrets')), [], 'the webhook asked the API server for Secrets');
    } finally {
      delete (p!.client as { request?: unknown }).request;
      await admin().request('DELETE', `/api/v1/namespaces/${victim}`);
    }
  });

  test('a bad Ingress is denied by kubectl apply, naming the field and the reason', async () => {
    // The API server may still be loading the configuration with the CA bundle; each try is a new object (a second
    // apply of an admitted one would be a no-op that never reaches the webhook).
    let tries = 0;
    await until('webhook answering', async () => !(await apply(ingress(`probe-${tries++}`, 'probe.whk.test', '/', { [`${N}proxy-body-size`]: 'lots' }))).ok, 20_000, 250);
    const cases: [string, Record<string, string>, string, RegExp][] = [
      ['inject', { [`${N}proxy-body-size`]: '1m; include /etc/passwd' }, '/', /denied the request: Portico: .*proxy-body-size/],
      ['lua', { [`${N}upstream-hash-by`]: '$remote_addr; content_by_lua_block { os.execute("id") }' }, '/', /denied the request: Portico: .*upstream-hash-by/],
      ['regex', { [`${N}use-regex`]: 'true' }, '/a(b', /denied the request: Portico: .*rules\[0\]\.paths\[0\] path "\/a\(b"/],
      ['allow', { [`${N}whitelist-source-range`]: '10.0.0.0/8,300.0.0.1' }, '/', /denied the request: Portico: .*whitelist-source-range/],
    ];
    for (const [name, ann, path0, want] of cases) {
      const r = (await apply(ingress(`bad-${name}`, `${name}.whk.test`, path0, ann, name === 'regex' ? 'ImplementationSpecific' : 'Prefix')));
      assert.equal(r.ok, false, `${name} must be denied: ${r.out}`);
      assert.match(r.err, want);
    }
  });

  test('a conflicting Ingress is admitted with a warning naming the older one', async () => {
    assert.equal((await apply(ingress('first', 'shared.whk.test', '/api'))).ok, true);
    // The webhook judges against what this replica has seen: wait until its model has the first one.
    await until('first Ingress in the model', () => p!.model.ingress(`${ns}/first`));
    const r = (await apply(ingress('second', 'shared.whk.test', '/api')));
    assert.equal(r.ok, true, r.out);
    assert.match(r.out, new RegExp(`Warning: Conflict: host shared\\.whk\\.test path /api \\(Prefix\\) is already served by Ingress ${ns}/first`));
  });

  test('a Plugin whose config only Portico can judge is denied (the CRD schema cannot see into spec.config)', async () => {
    const r = await apply({ apiVersion: 'portico.dev/v1alpha1', kind: 'Plugin', metadata: { name: 'limits', namespace: ns }, spec: { type: 'rate-limit', config: { requestsPerSecond: 5, requestsPerMinute: 100 } } });
    assert.equal(r.ok, false);
    assert.match(r.err, /Portico: .*exactly one of requestsPerSecond and requestsPerMinute/);
    assert.equal((await apply({ apiVersion: 'portico.dev/v1alpha1', kind: 'Plugin', metadata: { name: 'limits', namespace: ns }, spec: { type: 'rate-limit', config: { requestsPerSecond: 5 } } })).ok, true);
  });

  test('the certificate is re-created when its Secret is deleted, and the API server keeps trusting the webhook', async () => {
    const before0 = (await secretData())!['ca.crt'];
    await admin().request('DELETE', SECRET);
    const data = await until('a new CA in a new Secret', async () => {
      const d = await secretData();
      return d?.['ca.crt'] && d['ca.crt'] !== before0 ? d : undefined;
    });
    await until('new CA bundle published', async () => (await caBundles()).every((b) => b === data['ca-bundle.crt']));
    // Served certificate swapped without a restart: denials still come from Portico (not skipped by Ignore).
    let n = 0;
    await until('denied with the new certificate', async () => /Portico: .*proxy-body-size/.test((await apply(ingress(`bad-again-${n++}`, 'again.whk.test', '/', { [`${N}proxy-body-size`]: 'x' }))).err), 20_000, 250);
  });

  test('the install\'s NetworkPolicy (8444 from ipBlock peers only) is accepted by the API server', async () => {
    const r = await new Promise<{ ok: boolean; out: string }>((resolve) => {
      execFile('kubectl', ['--kubeconfig', ADMIN_KUBECONFIG, 'apply', '--dry-run=server', '-n', ns, '-f', path.join(REPO_ROOT, 'kustomize/networkpolicy.yaml')], { encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => resolve({ ok: !error, out: `${stdout}${stderr}` }));
    });
    assert.equal(r.ok, true, r.out);
    assert.match(r.out, /networkpolicy\.networking\.k8s\.io\/portico created \(server dry run\)/);
  });

  test('the webhook Role and ClusterRole hold exactly what the webhook used', () => {
    const used = new Set(p!.client.calls);
    const granted = new Set<string>();
    for (const doc of loadAllYaml(readFileSync(path.join(REPO_ROOT, 'kustomize/webhook.yaml'), 'utf8'))) {
      const o = doc as { kind: string; rules?: { apiGroups: string[]; resources: string[]; verbs: string[] }[] };
      for (const r of o.rules ?? []) for (const g of r.apiGroups) for (const res of r.resources) for (const v of r.verbs) granted.add(`${v} ${g}/${res}`);
    }
    const unused = [...granted].filter((g) => !used.has(g)).sort();
    assert.deepEqual(unused, [], 'rules the webhook never used');
  });

  test('with Portico stopped (scaled to 0), failurePolicy Ignore admits writes; the controller judges them when back', async () => {
    await p!.stop();
    p = undefined;
    const r = (await apply(ingress('while-down', 'down.whk.test', '/', { [`${N}proxy-body-size`]: 'lots' })));
    assert.equal(r.ok, true, `admitted while the webhook is down: ${r.err}`);
  });
});
