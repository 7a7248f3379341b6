import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadKubeConfig } from './kubeconfig.ts';
import { inClusterCredentials, leanKubeconfig, loadCredentials } from './credentials.ts';

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: { server: https://a.example:6443, certificate-authority-data: Zm9v }
- name: b
  cluster: { server: https://b.example:6443 }
users:
- name: u
  user: { token: secret-token }
contexts:
- name: ctx
  context: { cluster: a, user: u }
current-context: ctx
`;

test('--apiserver-host with a kubeconfig replaces the current cluster\'s server (and CA), keeping its user', () => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'kc-')), 'config');
  writeFileSync(file, KUBECONFIG);
  const plain = loadKubeConfig(file);
  assert.equal(plain.getCurrentCluster()?.server, 'https://a.example:6443');
  const kc = loadKubeConfig(file, { server: 'https://10.0.0.1:6443', caFile: '/etc/ca.crt' });
  assert.equal(kc.getCurrentCluster()?.server, 'https://10.0.0.1:6443');
  assert.equal(kc.getCurrentCluster()?.caFile, '/etc/ca.crt');
  assert.equal(kc.getCurrentCluster()?.caData, undefined);
  assert.equal(kc.getCurrentUser()?.token, 'secret-token');
  assert.equal(kc.clusters.find((c) => c.name === 'b')?.server, 'https://b.example:6443', 'other clusters untouched');
  assert.equal(loadKubeConfig(file, { server: 'https://10.0.0.1:6443' }).getCurrentCluster()?.caData, 'Zm9v', 'the CA is kept without --certificate-authority');
});

test('--apiserver-host alone: that URL, no credentials', () => {
  const kc = loadKubeConfig(undefined, { server: 'https://10.0.0.2:6443', caFile: '/etc/ca.crt' });
  assert.equal(kc.getCurrentCluster()?.server, 'https://10.0.0.2:6443');
  assert.equal(kc.getCurrentCluster()?.caFile, '/etc/ca.crt');
  assert.equal(kc.getCurrentUser()?.token, undefined);
});

// Portico's own kubeconfig reader (credentials.ts): the controller runs without client-node's generated API.
const dir = () => mkdtempSync(path.join(tmpdir(), 'kc-'));

test('lean reader: token, CA data, server of the current context; --apiserver-host replaces server and CA', async () => {
  const c = leanKubeconfig(KUBECONFIG, '/x/config');
  assert.ok(c);
  assert.equal(c.server, 'https://a.example:6443');
  assert.deepEqual(await c.headers(), { Authorization: 'Bearer secret-token' });
  assert.deepEqual(await c.tls(), { ca: Buffer.from('foo') });
  const d = dir();
  writeFileSync(path.join(d, 'ca.crt'), 'the-ca');
  const o = leanKubeconfig(KUBECONFIG, '/x/config', { server: 'https://10.0.0.1:6443/', caFile: path.join(d, 'ca.crt') });
  assert.ok(o);
  assert.equal(o.server, 'https://10.0.0.1:6443');
  assert.deepEqual(await o.tls(), { ca: Buffer.from('the-ca') });
  assert.deepEqual(await o.headers(), { Authorization: 'Bearer secret-token' }, 'the user is kept');
  const keepCa = leanKubeconfig(KUBECONFIG, '/x/config', { server: 'https://10.0.0.1:6443' });
  assert.deepEqual(await keepCa?.tls(), { ca: Buffer.from('foo') }, 'the CA is kept without --certificate-authority');
});

test('lean reader: client certificate files relative to the kubeconfig, tokenFile re-read, skip-verify, tls-server-name, basic', async () => {
  const d = dir();
  writeFileSync(path.join(d, 'c.pem'), 'CERT');
  writeFileSync(path.join(d, 'k.pem'), 'KEY');
  writeFileSync(path.join(d, 'tok'), 'tok-1\n');
  const text = `apiVersion: v1
clusters: [{ name: c, cluster: { server: https://h:6443, insecure-skip-tls-verify: true, tls-server-name: api.internal } }]
users:
- { name: cert, user: { client-certificate: c.pem, client-key: k.pem } }
- { name: file, user: { tokenFile: tok } }
- { name: basic, user: { username: u, password: p } }
contexts: [{ name: cert, context: { cluster: c, user: cert } }, { name: file, context: { cluster: c, user: file } }, { name: basic, context: { cluster: c, user: basic } }]
current-context: cert
`;
  const cert = leanKubeconfig(text, path.join(d, 'config'));
  assert.deepEqual(await cert?.tls(), { cert: Buffer.from('CERT'), key: Buffer.from('KEY'), rejectUnauthorized: false, servername: 'api.internal' });
  assert.deepEqual(await cert?.headers(), {});
  const file = leanKubeconfig(text.replace('current-context: cert', 'current-context: file'), path.join(d, 'config'));
  assert.deepEqual(await file?.headers(), { Authorization: 'Bearer tok-1' }, 'the token file, trimmed');
  const basic = leanKubeconfig(text.replace('current-context: cert', 'current-context: basic'), path.join(d, 'config'));
  assert.deepEqual(await basic?.headers(), { Authorization: `Basic ${Buffer.from('u:p').toString('base64')}` });
});

test('lean reader: exec plugins, auth providers, proxies and impersonation go to client-node; no context is an error', async () => {
  const withUser = (user: string) => KUBECONFIG.replace('user: { token: secret-token }', `user: ${user}`);
  assert.equal(leanKubeconfig(withUser('{ exec: { command: aws, apiVersion: client.authentication.k8s.io/v1 } }'), 'f'), undefined);
  assert.equal(leanKubeconfig(withUser('{ auth-provider: { name: oidc } }'), 'f'), undefined);
  assert.equal(leanKubeconfig(withUser('{ token: t, as: admin }'), 'f'), undefined);
  assert.equal(leanKubeconfig(KUBECONFIG.replace('certificate-authority-data: Zm9v', 'proxy-url: http://proxy:3128'), 'f'), undefined);
  assert.throws(() => leanKubeconfig(KUBECONFIG.replace('current-context: ctx', 'current-context: nope'), 'f'), /no current context named nope/);
  assert.throws(() => leanKubeconfig(KUBECONFIG.replace('http://', '').replace('https://a.example:6443', 'http://a.example:8080'), 'f'), /plain http .* needs insecure-skip-tls-verify/);
  // loadCredentials takes client-node for those (its exec plugin is only run on a request, not here).
  const d = dir();
  const f = path.join(d, 'config');
  writeFileSync(f, withUser('{ exec: { command: /bin/false, apiVersion: client.authentication.k8s.io/v1 } }'));
  const c = await loadCredentials(f);
  assert.equal(c.server, 'https://a.example:6443');
  assert.equal(typeof c.exportConfig, 'function', 'client-node credentials');
  writeFileSync(f, KUBECONFIG);
  assert.equal((await loadCredentials(f)).exportConfig, undefined, 'a token kubeconfig is read by Portico itself');
});

test('in a pod: the ServiceAccount token is read from its file (IPv6 service address bracketed)', async () => {
  const d = dir();
  writeFileSync(path.join(d, 'token'), 'sa-token');
  writeFileSync(path.join(d, 'ca.crt'), 'CA');
  const c = inClusterCredentials(d, { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' });
  assert.equal(c.server, 'https://[fd00::1]:443');
  assert.deepEqual(await c.headers(), { Authorization: 'Bearer sa-token' });
  assert.deepEqual(await c.tls(), { ca: Buffer.from('CA') });
  assert.throws(() => inClusterCredentials(d, {}), /KUBERNETES_SERVICE_HOST/);
});
