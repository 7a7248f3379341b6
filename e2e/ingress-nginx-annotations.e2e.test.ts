// ingress-nginx annotations added for the drop-in (issue 11) end to end: through the real apiserver (RBAC on, Portico
// as its ServiceAccount, Secrets read by Portico's own informers), real nginx and echo pods in network namespaces.
// What each test shows is the behaviour ingress-nginx documents for the annotation:
//   auth-tls-*              client certificates checked against the CA of a Secret; a CA change applies without a
//                           reload; SNI ≠ Host refused (421); match-cn (403) and error-page (302)
//   custom-http-errors      a listed backend status is answered by the default-backend Service, with X-Code & co.
//   default-backend         serves the Ingress while its own Service has no ready endpoint
//   limit-connections       a third request in progress from one client gets 503
//   satisfy: any            the allowlisted client needs no password, elsewhere the password alone is enough
//   server-alias            the alias serves what the host serves
// (custom-headers is in gateway.e2e.test.ts; every one of them also has a real-nginx test under reconcilers/.)
//
// Isolation as in crd-plugins: an IngressClass and hosts of this run, Portico on its own ports (53580-53583).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { admin, ensureCluster, ownIngressClass, uniqueNamespace } from './harness/cluster.ts';
import { addPod, deleteNamespace } from './harness/pods.ts';
import { request, tlsRequest, until, type Reply } from './harness/http.ts';
import { startPortico, type RunningPortico } from './harness/portico.ts';
import { createIngress, createService, eventsAbout } from './harness/objects.ts';
import { Pki } from './harness/pki.ts';

let p: RunningPortico;
let ns: string;
const RUN = Date.now().toString(36);
const H = (name: string) => `${name}.inx${RUN}.test`;
const N = 'nginx.ingress.kubernetes.io/';
let CLASS = '';
let removeClass: (() => Promise<void>) | undefined;
const b64 = (s: string) => Buffer.from(s).toString('base64');
const reloads = () => p.metric('portico_nginx_reloads_total', { result: 'success' });

const service = (name: string, app: string) => createService(ns, name, app);
const secret = (name: string, data: Record<string, string>, type = 'Opaque') =>
  admin().request('POST', `/api/v1/namespaces/${ns}/secrets`, { body: { apiVersion: 'v1', kind: 'Secret', type, metadata: { name }, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])) } });
const replaceSecret = (name: string, data: Record<string, string>) =>
  admin().request('PATCH', `/api/v1/namespaces/${ns}/secrets/${name}`, { body: { data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])) }, contentType: 'application/merge-patch+json' });
const ingress = (name: string, host: string, annotations: Record<string, string>, o: { svc?: string; tls?: string; path?: string } = {}) => createIngress(ns, CLASS, name, host, annotations, o);
const get = (host: string, p0: string, headers?: Record<string, string>): Promise<Reply> => request(p.httpPort, host, p0, { headers });
const eventsFor = (name: string) => eventsAbout(ns, 'Ingress', name);

// ---- a small PKI: two client CAs, a client certificate of each, a server certificate ----------------------------
const pki = new Pki();
const read = (n: string) => pki.read(n);

const tlsGet = (servername: string, host: string, client?: string) =>
  tlsRequest(p.httpsPort, servername, { host, ...(client ? { cert: read(`${client}.crt`), key: read(`${client}.key`) } : {}) });

before(async () => {
  await ensureCluster();
  ns = await uniqueNamespace('inx');
  const cls = await ownIngressClass('inx');
  CLASS = cls.name;
  removeClass = cls.remove;
  p = await startPortico(53580, cls.flags);
  await until('portico ready', async () => (await request(p.healthPort, 'x', '/readyz')).status === 200);
  await service('echo', 'echo');
  await service('errors', 'errors');
  await service('empty', 'nobody');
  await addPod(ns, 'echo-1', { labels: { app: 'echo' } });
  await addPod(ns, 'errors-1', { labels: { app: 'errors' } });
  pki.ca('ca-a').ca('ca-b').client('client-a', 'ca-a', 'client-a').client('client-b', 'ca-b', 'client-b');
  pki.ca('server-ca').server('server', 'server-ca', H('mtls'));
});

after(async () => {
  await p?.stop();
  if (ns) await deleteNamespace(ns);
  await removeClass?.();
});

describe('ingress-nginx annotations (drop-in)', () => {
  test('auth-tls: a client certificate of the Secret\'s CA passes (the backend sees the verification), none → 400, another CA → 400; a CA change applies without a reload', async () => {
    await secret('server-tls', { 'tls.crt': read('server.crt'), 'tls.key': read('server.key') }, 'kubernetes.io/tls');
    await secret('client-ca', { 'ca.crt': read('ca-a.crt') });
    await ingress('mtls', H('mtls'), { [`${N}auth-tls-secret`]: `${ns}/client-ca`, [`${N}auth-tls-verify-client`]: 'on', [`${N}auth-tls-pass-certificate-to-upstream`]: 'true' }, { tls: 'server-tls' });
    const ok = await until('client certificate accepted', async () => {
      const r = await tlsGet(H('mtls'), H('mtls'), 'client-a');
      return r.status === 200 && r;
    });
    const seen = JSON.parse(ok.body) as { headers: Record<string, string> };
    assert.equal(seen.headers['ssl-client-verify'], 'SUCCESS');
    assert.match(seen.headers['ssl-client-subject-dn'] ?? '', /CN=client-a/);
    assert.match(decodeURIComponent(seen.headers['ssl-client-cert'] ?? ''), /BEGIN CERTIFICATE/);
    assert.equal((await tlsGet(H('mtls'), H('mtls'))).status, 400, 'no certificate');
    assert.equal((await tlsGet(H('mtls'), H('mtls'), 'client-b')).status, 400, 'a certificate of another CA');
    const before = await reloads();
    await replaceSecret('client-ca', { 'ca.crt': read('ca-b.crt') });
    await until('the new CA applies', async () => (await tlsGet(H('mtls'), H('mtls'), 'client-b')).status === 200);
    assert.equal((await tlsGet(H('mtls'), H('mtls'), 'client-a')).status, 400, 'the old CA no longer opens it');
    assert.equal(await reloads(), before, 'no nginx reload for a CA change');
  });

  test('auth-tls: a request whose Host differs from the TLS server name of the verified connection is refused (421)', async () => {
    await ingress('plain-tls', H('other'), {});
    await until('other host served', async () => (await get(H('other'), '/')).status === 200);
    const r = await tlsGet(H('other'), H('mtls'), 'client-b');
    assert.equal(r.status, 421, r.body);
  });

  test('auth-tls-match-cn: a certificate of the CA whose subject does not match gets 403; auth-tls-error-page: no certificate → 302 to the page', async () => {
    // The CA of client-ca is ca-b by now (the test above changed it).
    await ingress('mtls-cn', H('mtls-cn'), {
      [`${N}auth-tls-secret`]: 'client-ca',
      [`${N}auth-tls-match-cn`]: 'CN=client-b$',
      [`${N}auth-tls-error-page`]: 'https://errors.example.com/certificate',
    }, { tls: 'server-tls' });
    await until('matching CN accepted', async () => (await tlsGet(H('mtls-cn'), H('mtls-cn'), 'client-b')).status === 200);
    pki.client('client-b2', 'ca-b', 'client-b2');
    assert.equal((await tlsGet(H('mtls-cn'), H('mtls-cn'), 'client-b2')).status, 403, 'same CA, CN not matching');
    const none = await tlsGet(H('mtls-cn'), H('mtls-cn'));
    assert.equal(none.status, 302);
    assert.equal(none.location, 'https://errors.example.com/certificate');
  });

  test('custom-http-errors + default-backend: a listed status is answered by the default backend with X-Code; others pass unchanged', async () => {
    await ingress('errs', H('errs'), { [`${N}custom-http-errors`]: '503,404', [`${N}default-backend`]: 'errors' });
    const r = await until('503 intercepted', async () => {
      const x = await get(H('errs'), '/page?status=503');
      return x.status === 503 && x.body.includes('errors-1') && x;
    });
    const seen = r.json<{ pod: string; headers: Record<string, string> }>();
    assert.equal(seen.pod, 'errors-1');
    assert.equal(seen.headers['x-code'], '503');
    assert.equal(seen.headers['x-ingress-name'], 'errs');
    assert.equal(seen.headers['x-namespace'], ns);
    assert.equal(seen.headers['x-service-name'], 'echo');
    const other = await get(H('errs'), '/page?status=500');
    assert.equal(other.status, 500);
    assert.equal(other.json().pod, 'echo-1', 'a status not listed reaches the client from its backend');
  });

  test('default-backend: serves the Ingress while its own Service has no ready endpoint', async () => {
    await ingress('fallback', H('fallback'), { [`${N}default-backend`]: 'errors' }, { svc: 'empty' });
    const r = await until('served by the default backend', async () => {
      const x = await get(H('fallback'), '/');
      return x.status === 200 && x;
    });
    assert.equal(r.json().pod, 'errors-1');
  });

  test('limit-connections: a third request in progress from the same client gets 503; slots are freed when requests end', async () => {
    await ingress('conn', H('conn'), { [`${N}limit-connections`]: '2' });
    await until('conn served', async () => (await get(H('conn'), '/')).status === 200);
    // Two requests held 2.5 s by the pod; while both are in progress a third is refused. A slot is given back in the
    // log phase, just after the client has its answer: if the previous request's slot was still held when a held
    // request arrived, that one is refused instead — then the round is tried again.
    await until('two requests in progress and a third refused', async () => {
      const held = [get(H('conn'), '/?delay=2500'), get(H('conn'), '/?delay=2500')];
      let third = 0;
      const deadline = Date.now() + 2_000;
      while (third !== 503 && Date.now() < deadline) third = (await get(H('conn'), '/')).status;
      const answers = await Promise.all(held);
      return third === 503 && answers.every((r) => r.status === 200);
    }, 30_000);
    await until('slots given back', async () => (await get(H('conn'), '/')).status === 200);
  });

  test('satisfy any: allowlisted client without password, password alone from elsewhere; satisfy all needs both', async () => {
    // htpasswd -nbB is not needed: an {SHA} entry (htpasswd -s) for alice:wonderland.
    await secret('users', { auth: 'alice:{SHA}' + execFileSync('sh', ['-c', "printf wonderland | openssl dgst -binary -sha1 | openssl base64"]).toString().trim() + '\n' });
    const basic = { [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'users' };
    await ingress('any-ip', H('any-ip'), { ...basic, [`${N}satisfy`]: 'any', [`${N}whitelist-source-range`]: '127.0.0.1/32' });
    await ingress('any-pw', H('any-pw'), { ...basic, [`${N}satisfy`]: 'any', [`${N}whitelist-source-range`]: '198.51.100.0/24' });
    await ingress('all', H('all'), { ...basic, [`${N}whitelist-source-range`]: '198.51.100.0/24' });
    const alice = { authorization: `Basic ${b64('alice:wonderland')}` };
    await until('allowlisted client passes without a password', async () => (await get(H('any-ip'), '/')).status === 200);
    await until('a good password passes from elsewhere', async () => (await get(H('any-pw'), '/', alice)).status === 200);
    const none = await get(H('any-pw'), '/');
    assert.equal(none.status, 401);
    assert.match(String(none.headers['www-authenticate']), /^Basic realm=/);
    await until('satisfy all: the password does not make up for the allowlist', async () => (await get(H('all'), '/', alice)).status === 403);
  });

  test('server-alias: the alias serves what the host serves; an alias that is another host is skipped with a Warning', async () => {
    await ingress('alias', H('main'), { [`${N}server-alias`]: `${H('alias')}, ${H('taken')}` });
    await ingress('taken', H('taken'), {}, { svc: 'errors' });
    await until('alias served', async () => (await get(H('alias'), '/x')).status === 200);
    assert.equal((await get(H('alias'), '/x')).json().pod, 'echo-1');
    await until('the taken name keeps its own Ingress', async () => (await get(H('taken'), '/')).json().pod === 'errors-1');
    const ev = await until('AliasSkipped event', async () => (await eventsFor('alias')).find((e) => e.reason === 'AliasSkipped'));
    assert.equal(ev.type, 'Warning');
  });
});
