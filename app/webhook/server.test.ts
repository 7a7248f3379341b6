// The webhook's request path over real HTTPS, with a Kubernetes client that would hand out any Secret it is asked
// for: a forged AdmissionReview (no API server needed to send one) must make it read nothing and learn nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import net from 'node:net';
import type { KubeClient } from '../../operator/kube/client.ts';
import { Metrics } from '../../operator/metrics.ts';
import { nullLogger } from '../../operator/log.ts';
import { modelOf, OPTS, svc } from '../../reconcilers/translate/fixtures.test-helpers.ts';
import { apply, plan, secretDataOf } from './certs.ts';
import { AdmissionWebhook } from './server.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { issue, makeCa } from '../../reconcilers/translate/pki.test-helpers.ts';

const N = 'nginx.ingress.kubernetes.io/';
const b64 = (s: string) => Buffer.from(s).toString('base64');
/** What the client would return for any Secret: an htpasswd line without ":" (a password), key names, a CA-ish blob. */
const LOOT = { auth: b64('T0P-s3cret-token-without-colon\n'), 'db-password': b64('hunter2'), 'ca.crt': b64('-----BEGIN CERTIFICATE-----\nnotacert\n-----END CERTIFICATE-----\n'), config: b64('{"allow": ["l00t-value"]}') };
const LEAKS = ['T0P-s3cret', 'db-password', 'hunter2', 'notacert', 'l00t-value'];

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

function post(port: number, body: unknown, client?: { cert: string; key: string }): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path: '/validate', method: 'POST', rejectUnauthorized: false, headers: { 'content-type': 'application/json' }, timeout: 5000, agent: false, ...(client ?? {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const review = (uid: string, kind: { group: string; version: string; kind: string }, namespace: string, object: unknown) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: { uid, kind, operation: 'CREATE', namespace, object },
});

test('a forged AdmissionReview naming Secrets of another namespace: no Secret is read, and nothing of one is in the answer', async () => {
  const asked: string[] = [];
  const client = {
    request: async (method: string, path: string) => {
      asked.push(`${method} ${path}`);
      if (path.includes('/secrets/')) return { apiVersion: 'v1', kind: 'Secret', metadata: { name: path.split('/').pop() }, data: LOOT };
      throw new Error(`unexpected ${method} ${path}`);
    },
  } as unknown as KubeClient;
  const model = modelOf({ services: [svc('web', [{ port: 80 }], 'kube-system')] });
  const wh = new AdmissionWebhook(
    { port: await freePort(), address: '127.0.0.1', namespace: 'portico-system', secretName: 'portico-webhook-tls', serviceName: 'portico-webhook', configurationName: 'portico', extraHosts: ['127.0.0.1'] },
    { client, log: nullLogger(), metrics: new Metrics({ prefix: 'portico' }), model, translate: OPTS, isLeader: () => false },
  );
  const pki = apply(plan(null, wh.dnsNames, wh.ips, Date.now()), null, wh.dnsNames, wh.ips, Date.now())!;
  wh.onSecret({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'portico-webhook-tls', namespace: 'portico-system' }, data: secretDataOf(pki) });
  const port = (wh as unknown as { o: { port: number } }).o.port;
  try {
    const ingress = (name: string, annotations: Record<string, string>) => ({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name, annotations },
      spec: { ingressClassName: 'portico', rules: [{ host: `${name}.example.com`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }], tls: [{ hosts: [`${name}.example.com`], secretName: 'db-creds' }] },
    });
    const ING = { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' };
    const PLUGIN = { group: 'portico.dev', version: 'v1alpha1', kind: 'Plugin' };
    const CONSUMER = { group: 'portico.dev', version: 'v1alpha1', kind: 'Consumer' };
    const UPSTREAM = { group: 'portico.dev', version: 'v1alpha1', kind: 'Upstream' };
    const answers: string[] = [];
    for (const [i, body] of [
      review('1', ING, 'kube-system', ingress('a', { [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'db-creds' })),
      review('2', ING, 'kube-system', ingress('b', { [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'db-creds', [`${N}auth-secret-type`]: 'auth-map' })),
      review('3', ING, 'kube-system', ingress('c', { [`${N}auth-tls-secret`]: 'kube-system/db-creds' })),
      review('4', ING, 'kube-system', ingress('d', { [`${N}backend-protocol`]: 'HTTPS', [`${N}proxy-ssl-secret`]: 'db-creds', [`${N}proxy-ssl-verify`]: 'on' })),
      review('5', PLUGIN, 'kube-system', { apiVersion: 'portico.dev/v1alpha1', kind: 'Plugin', metadata: { name: 'p' }, spec: { type: 'ip-restriction', configFrom: { secretKeyRef: { name: 'db-creds', key: 'config' } } } }),
      review('6', CONSUMER, 'kube-system', { apiVersion: 'portico.dev/v1alpha1', kind: 'Consumer', metadata: { name: 'c' }, spec: { username: 'u', credentials: [{ type: 'basic-auth', secretRef: { name: 'db-creds' } }] } }),
      review('7', UPSTREAM, 'kube-system', { apiVersion: 'portico.dev/v1alpha1', kind: 'Upstream', metadata: { name: 'u' }, spec: { service: { name: 'web' }, protocol: 'HTTPS', tls: { verify: true, caSecret: 'db-creds' } } }),
    ].entries()) {
      const r = await post(port, body);
      assert.equal(r.status, 200, `review ${i + 1}: ${r.text}`);
      const parsed = JSON.parse(r.text) as { response: { uid: string } };
      assert.equal(parsed.response.uid, String(i + 1));
      answers.push(r.text);
    }
    if (process.env.SHOW) console.log(answers.join("\n"));
    assert.deepEqual(asked, [], 'the webhook asked the API server for Secrets');
    const all = answers.join('\n');
    for (const l of LEAKS) assert.ok(!all.includes(l), `${JSON.stringify(l)} of the Secret is in an answer:\n${all}`);
  } finally {
    await wh.stop();
  }
});

test('--webhook-client-ca: only a caller with a client certificate of that CA gets an answer; others fail the TLS handshake', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-whca-'));
  const ca = makeCa(dir, 'apiserver-ca');
  const apiserver = issue(dir, ca, 'kube-apiserver');
  const stranger = issue(dir, makeCa(dir, 'other-ca'), 'stranger');
  const client = { request: async () => { throw new Error('no API call expected'); } } as unknown as KubeClient;
  const wh = new AdmissionWebhook(
    { port: await freePort(), address: '127.0.0.1', namespace: 'portico-system', secretName: 'portico-webhook-tls', serviceName: 'portico-webhook', configurationName: 'portico', extraHosts: ['127.0.0.1'], clientCa: ca.cert },
    { client, log: nullLogger(), metrics: new Metrics({ prefix: 'portico' }), model: modelOf({}), translate: OPTS, isLeader: () => false },
  );
  const pki = apply(plan(null, wh.dnsNames, wh.ips, Date.now()), null, wh.dnsNames, wh.ips, Date.now())!;
  wh.onSecret({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'portico-webhook-tls', namespace: 'portico-system' }, data: secretDataOf(pki) });
  const port = (wh as unknown as { o: { port: number } }).o.port;
  const body = review('u1', { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' }, 'default', { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'x' }, spec: {} });
  try {
    const ok = await post(port, body, { cert: apiserver.cert, key: apiserver.key });
    assert.equal(ok.status, 200, ok.text);
    assert.equal((JSON.parse(ok.text) as { response: { uid: string } }).response.uid, 'u1');
    await assert.rejects(post(port, body), 'no client certificate');
    await assert.rejects(post(port, body, { cert: stranger.cert, key: stranger.key }), 'a certificate of another CA');
    // A certificate reload keeps requiring the client CA.
    wh.onSecret({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'portico-webhook-tls', namespace: 'portico-system' }, data: secretDataOf(apply({ action: 'create', why: '' }, null, wh.dnsNames, wh.ips, Date.now())!) });
    await assert.rejects(post(port, body), 'still refused after a certificate reload');
    assert.equal((await post(port, body, { cert: apiserver.cert, key: apiserver.key })).status, 200);
  } finally {
    await wh.stop();
  }
});

test("ingress-nginx's admission metrics: check_success / check_errors per reviewed Ingress, and the last review's admission_* gauges", async () => {
  const client = { request: async () => { throw new Error('no API call expected'); } } as unknown as KubeClient;
  const metrics = new Metrics({ prefix: 'portico' });
  const labels = { controller_namespace: 'ingress-nginx', controller_class: 'k8s.io/ingress-nginx', controller_pod: 'ctl-0' };
  const wh = new AdmissionWebhook(
    { port: await freePort(), address: '127.0.0.1', namespace: 'portico-system', secretName: 'portico-webhook-tls', serviceName: 'portico-webhook', configurationName: 'portico', extraHosts: ['127.0.0.1'] },
    { client, log: nullLogger(), metrics, model: modelOf({ services: [svc('web', [{ port: 80 }], 'shop')] }), translate: OPTS, isLeader: () => false, compatLabels: labels },
  );
  const pki = apply(plan(null, wh.dnsNames, wh.ips, Date.now()), null, wh.dnsNames, wh.ips, Date.now())!;
  wh.onSecret({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'portico-webhook-tls', namespace: 'portico-system' }, data: secretDataOf(pki) });
  const port = (wh as unknown as { o: { port: number } }).o.port;
  const ING = { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' };
  const ingress = (name: string, path: string, pathType: string) => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace: 'shop' },
    spec: { ingressClassName: 'portico', rules: [{ host: 'shop.example.com', http: { paths: [{ path, pathType, backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
  });
  try {
    for (const [uid, body] of [['1', ingress('good', '/', 'Prefix')], ['2', ingress('good', '/', 'Prefix')], ['3', ingress('bad', 'api', 'Exact')]] as const) {
      const r = await post(port, review(uid, ING, 'shop', body));
      assert.equal(r.status, 200, r.text);
    }
    const text = await metrics.registry.metrics();
    const value = (line: string) => Number(text.split('\n').find((l) => l.startsWith(line))?.split(' ').pop());
    const who = (ing: string) => `{${Object.entries({ ...labels, namespace: 'shop', ingress: ing }).map(([k, v]) => `${k}="${v}"`).join(',')}}`;
    assert.equal(value(`nginx_ingress_controller_check_success${who('good')}`), 2, text);
    assert.equal(value(`nginx_ingress_controller_check_errors${who('bad')}`), 1, text);
    assert.ok(!text.includes(`nginx_ingress_controller_check_success${who('bad')}`), 'a denied Ingress is not a success');
    const c = `{${Object.entries(labels).map(([k, v]) => `${k}="${v}"`).join(',')}}`;
    assert.equal(value(`nginx_ingress_controller_admission_tested_ingresses${c}`), 1);
    const rt = value(`nginx_ingress_controller_admission_roundtrip_duration${c}`);
    const tested = value(`nginx_ingress_controller_admission_tested_duration${c}`);
    assert.ok(rt > 0 && tested > 0 && tested <= rt, `durations: tested ${tested} within the round trip ${rt}`);
  } finally {
    await wh.stop();
  }
});

test('ingress-nginx\'s --validating-webhook-certificate/-key: the files are served (renewed ones too), on ingress-nginx\'s path, without any API call', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-whfiles-'));
  const ca = makeCa(dir, 'chart-ca');
  const name = 'ingress-nginx-controller-admission.ingress-nginx.svc';
  const first = issue(dir, ca, 'first', [name]);
  const certFile = path.join(dir, 'cert');
  const keyFile = path.join(dir, 'key');
  writeFileSync(certFile, first.cert);
  writeFileSync(keyFile, first.key);
  const client = { request: async () => { throw new Error('no API call expected'); } } as unknown as KubeClient;
  const port = await freePort();
  const wh = new AdmissionWebhook(
    { port, address: '127.0.0.1', namespace: 'ingress-nginx', secretName: 'portico-webhook-tls', serviceName: 'portico-webhook', configurationName: 'portico', extraHosts: [] },
    { client, log: nullLogger(), metrics: new Metrics({ prefix: 'portico' }), model: modelOf({}), translate: OPTS, isLeader: () => true },
  );
  const call = (p: string) =>
    new Promise<{ status: number; text: string; serial: string }>((resolve, reject) => {
      const req = https.request({ host: '127.0.0.1', port, path: p, method: 'POST', ca: ca.cert, servername: name, agent: false, timeout: 5000 }, (res) => {
        const serial = (res.socket as import('node:tls').TLSSocket).getPeerCertificate().serialNumber;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), serial }));
      });
      req.on('error', reject);
      req.end(JSON.stringify(review('f1', { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' }, 'default', { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'x' }, spec: {} })));
    });
  try {
    wh.serveFiles(certFile, keyFile, 50);
    assert.equal(wh.serving, true);
    const r = await call('/networking/v1/ingresses');
    assert.equal(r.status, 200, r.text);
    assert.equal((JSON.parse(r.text) as { response: { uid: string } }).response.uid, 'f1');
    assert.equal((await call('/validate')).status, 200);
    assert.equal((await call('/other')).status, 404);
    // A renewed certificate in the files is served without a restart.
    const second = issue(dir, ca, 'second', [name]);
    writeFileSync(keyFile, second.key);
    writeFileSync(certFile, second.cert);
    const before = r.serial;
    let after = before;
    for (let i = 0; i < 100 && after === before; i++) {
      await new Promise((res) => setTimeout(res, 20));
      after = (await call('/validate')).serial;
    }
    assert.notEqual(after, before, 'the renewed certificate is served');
  } finally {
    await wh.stop();
  }
});
