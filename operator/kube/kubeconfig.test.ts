import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadKubeConfig } from './client.ts';

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
