// Costs a tenant chooses are bounded (issue 19, tenant isolation), end to end: through the real apiserver (RBAC on,
// Portico as its ServiceAccount, Secrets read by its own informers), real nginx and echo pods in network namespaces.
//   - an htpasswd line whose hash costs more than the bound (bcrypt 31, sha512-crypt 999,999,999 rounds) is refused
//     with a Warning naming the Secret and line (never the user or hash); its other users are served, and a request for that user is
//     answered at once instead of blocking an nginx worker for hours;
//   - a valid certificate padded to 900 KB is refused with a Warning (Secret and Ingress) while another tenant's
//     certificate keeps serving;
//   - when one tenant's certificates fill the certificate zone, nothing of the others is evicted and their routing
//     changes are still programmed (a Warning and a metric say what was not stored).
//
// Isolation: namespaces, an IngressClass and hosts of this run, a ConfigMap of its own (a 1 MB certificate zone),
// Portico on its own ports (52380-52383); everything is deleted (and waited for) afterwards.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, ensureCluster, ownIngressClass, uniqueNamespace } from './harness/cluster.ts';
import { addPod, deleteNamespace } from './harness/pods.ts';
import { request, tlsRequest, until } from './harness/http.ts';
import { startPortico, type RunningPortico } from './harness/portico.ts';
import { createIngress, createService, eventsAbout, type EventRecord } from './harness/objects.ts';
import { Pki } from './harness/pki.ts';
import { isNotFound } from '../operator/kube/client.ts';

let p: RunningPortico;
let CLASS = '';
let removeClass: (() => Promise<void>) | undefined;
const namespaces: string[] = [];
const RUN = Date.now().toString(36);
const H = (name: string) => `${name}.cost${RUN}.test`;
const N = 'nginx.ingress.kubernetes.io/';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const pki = new Pki();

async function tenant(prefix: string): Promise<string> {
  const ns = await uniqueNamespace(prefix);
  namespaces.push(ns);
  await createService(ns, 'echo', 'echo');
  await addPod(ns, 'echo-1', { labels: { app: 'echo' } });
  return ns;
}
const secret = (ns: string, name: string, data: Record<string, string>, type = 'Opaque') =>
  admin().request('POST', `/api/v1/namespaces/${ns}/secrets`, { body: { apiVersion: 'v1', kind: 'Secret', type, metadata: { name }, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])) } });
const warning = (ns: string, kind: string, name: string, reason: string) =>
  until(`${reason} Warning on ${kind} ${ns}/${name}`, async () => (await eventsAbout(ns, kind, name)).find((e) => e.type === 'Warning' && e.reason === reason));

before(async () => {
  await ensureCluster();
  const cls = await ownIngressClass('cost');
  CLASS = cls.name;
  removeClass = cls.remove;
  const ops = await uniqueNamespace('cost-ops');
  namespaces.push(ops);
  // A small certificate zone, so that one tenant can fill it in a test (the default is 32 MB).
  await admin().request('POST', `/api/v1/namespaces/${ops}/configmaps`, {
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'portico' }, data: { 'lua-shared-dicts': 'certificate_data: 1m' } },
  });
  p = await startPortico(52380, [...cls.flags, '--configmap', `${ops}/portico`]);
  await until('portico ready', async () => (await request(p.healthPort, 'x', '/readyz')).status === 200);
});

after(async () => {
  await p?.stop();
  for (const ns of namespaces) await deleteNamespace(ns);
  for (const ns of namespaces) {
    await until(`namespace ${ns} deleted`, async () => {
      try {
        await admin().request('GET', `/api/v1/namespaces/${ns}`);
        return false;
      } catch (e) {
        return isNotFound(e);
      }
    }, 120_000, 500);
  }
  await removeClass?.();
});

describe('costs a tenant chooses are bounded', () => {
  test('basic auth: an htpasswd line over the hash cost bound is refused with a Warning naming the Secret and line (never the user or hash); the others are served and the worker never blocks', async () => {
    const ns = await tenant('cost-auth');
    // bob:builder, bcrypt cost 5 (htpasswd -B's default), made with python3's crypt (libxcrypt).
    const bob = '$2b$05$0123456789abcdefghijkeDnjTGPpZ0F6yuYtvkmfPq5bmZ7OegB2';
    const mallory = `$2b$31$abcdefghijklmnopqrstuu${'A'.repeat(31)}`; // about 29 hours of one nginx worker
    const mel = `$6$rounds=999999999$saltsalt$${'x'.repeat(86)}`; // about 7 minutes
    await secret(ns, 'users', { auth: `bob:${bob}\nmallory:${mallory}\nmel:${mel}\n` });
    await createIngress(ns, CLASS, 'app', H('auth'), { [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'users' });
    await until('bob passes', async () => (await request(p.httpPort, H('auth'), '/', { headers: { authorization: `Basic ${b64('bob:builder')}` } })).status === 200);
    const t0 = performance.now();
    for (const who of ['mallory:anything', 'mel:anything']) {
      const r = await request(p.httpPort, H('auth'), '/', { headers: { authorization: `Basic ${b64(who)}` }, timeoutMs: 5_000 });
      assert.equal(r.status, 401, `${who.split(':')[0]}: refused at once (${r.error ?? ''})`);
    }
    assert.ok(performance.now() - t0 < 5_000, 'no hash over the bound was computed');
    assert.equal((await request(p.httpPort, H('auth'), '/', { headers: { authorization: `Basic ${b64('bob:builder')}` } })).status, 200, 'the worker still serves');
    const ev: EventRecord[] = await until('both lines reported', async () => {
      const l = (await eventsAbout(ns, 'Ingress', 'app')).filter((e) => e.type === 'Warning');
      return l.some((e) => e.note.includes('line 2 of "auth"')) && l.some((e) => e.note.includes('line 3 of "auth"')) && l;
    });
    const notes = ev.map((e) => e.note).join('\n');
    assert.match(notes, new RegExp(`auth-secret ${ns}/users: line 2 of "auth": bcrypt cost 31 is over Portico's bound of 12`));
    assert.match(notes, new RegExp(`auth-secret ${ns}/users: line 3 of "auth": sha512-crypt rounds=999999999 is over Portico's bound of 500000`));
    assert.ok(!notes.includes('abcdefghijklmnop') && !notes.includes('saltsalt') && !notes.includes('mallory'), 'no hash content or user name in the Events (their readers may not read the Secret)');
  });

  test('TLS: a certificate padded to 900 KB is refused with a Warning on the Secret and the Ingress (default certificate there), while another tenant\'s certificate keeps serving', async () => {
    const a = await tenant('cost-tls-a');
    const b = await tenant('cost-tls-b');
    pki.ca('ca').server('good', 'ca', H('good')).server('padded', 'ca', H('padded'));
    await secret(a, 'tls', { 'tls.crt': pki.read('good.crt'), 'tls.key': pki.read('good.key') }, 'kubernetes.io/tls');
    await createIngress(a, CLASS, 'good', H('good'), {}, { tls: 'tls' });
    await until('tenant A served with its certificate', async () => (await tlsRequest(p.httpsPort, H('good'))).peerCN === H('good'));
    // Valid PEM: the certificate, then 900 KB of comment lines (PEM parsers skip text outside the blocks).
    const padding = `# ${'x'.repeat(97)}\n`.repeat(9216);
    await secret(b, 'tls', { 'tls.crt': pki.read('padded.crt') + padding, 'tls.key': pki.read('padded.key') }, 'kubernetes.io/tls');
    await createIngress(b, CLASS, 'padded', H('padded'), {}, { tls: 'tls' });
    const onSecret = await warning(b, 'Secret', 'tls', 'InvalidTLSSecret');
    assert.match(onSecret.note, /tls\.crt is 90\d KiB; Portico accepts at most 64 KiB/);
    const onIngress = await warning(b, 'Ingress', 'padded', 'TLSSecretInvalid');
    assert.match(onIngress.note, /tls\.crt is 90\d KiB/);
    await until('tenant B routed', async () => H('padded') in (await p.gateway.dynamic.getRoutes()));
    const rb = await tlsRequest(p.httpsPort, H('padded'));
    assert.notEqual(rb.peerCN, H('padded'), 'the padded certificate is not served');
    assert.equal((await tlsRequest(p.httpsPort, H('good'))).peerCN, H('good'), "tenant A's certificate keeps serving");
    const stored = (await p.gateway.dynamic.getCertificates()) as Record<string, string>;
    assert.equal(stored[H('padded')], undefined, 'nothing of it reached shared memory');
  });

  test('certificate zone full: one tenant\'s certificates do not evict another\'s, and the other tenants\' changes are still programmed', async () => {
    const a = await tenant('cost-zone-a');
    const c = await tenant('cost-zone-c');
    pki.ca('zone-ca').server('keep', 'zone-ca', H('keep'));
    await secret(a, 'tls', { 'tls.crt': pki.read('keep.crt'), 'tls.key': pki.read('keep.key') }, 'kubernetes.io/tls');
    await createIngress(a, CLASS, 'keep', H('keep'), {}, { tls: 'tls' });
    await until('tenant A served with its certificate', async () => (await tlsRequest(p.httpsPort, H('keep'))).peerCN === H('keep'));
    // Tenant C: 24 Secrets within every per-Secret bound (a chain of 7 certificates with 120 names each, ~58 KiB),
    // 1.4 MB together — more than the 1 MB zone holds.
    const sans = (i: number) => Array.from({ length: 120 }, (_, n) => `n${n}-of-a-long-enough-name-${i}.cost${RUN}.test`);
    for (let i = 0; i < 24; i++) {
      pki.server(`big${i}`, 'zone-ca', [H(`big${i}`), ...sans(i)]);
      const chain = pki.read(`big${i}.crt`).repeat(7);
      assert.ok(chain.length < 64 * 1024 && chain.length > 50 * 1024, `chain ${i}: ${chain.length} bytes`);
      await secret(c, `big${i}`, { 'tls.crt': chain, 'tls.key': pki.read(`big${i}.key`) }, 'kubernetes.io/tls');
      await createIngress(c, CLASS, `big${i}`, H(`big${i}`), {}, { tls: `big${i}` });
    }
    await until('the zone is full: hosts not stored are counted', async () => (await p.metric('portico_nginx_certificates_not_stored')) > 0, 60_000);
    // Tenant A is unaffected: its certificate is still served, and a new Ingress of it is programmed.
    assert.equal((await tlsRequest(p.httpsPort, H('keep'))).peerCN, H('keep'), "tenant A's certificate was not evicted");
    await createIngress(a, CLASS, 'later', H('later'), {});
    await until("tenant A's new Ingress is served while the zone is full", async () => (await request(p.httpPort, H('later'), '/')).status === 200);
    const ev = await until('CertificateZoneFull Warning', async () => {
      const l = await admin().request<{ items: (EventRecord & { regarding: { kind: string; name: string } })[] }>('GET', '/apis/events.k8s.io/v1/events');
      return l.items.find((e) => e.reason === 'CertificateZoneFull' && e.regarding.name === CLASS);
    });
    assert.equal(ev.type, 'Warning');
    assert.match(ev.note, new RegExp(`portico_certs\\) is full: .*Secrets ${c}/big`));
    // Freed space is used again: once tenant C is gone every certificate is stored.
    await deleteNamespace(c);
    await until('every certificate stored again', async () => (await p.metric('portico_nginx_certificates_not_stored')) === 0, 120_000, 250);
    assert.equal((await tlsRequest(p.httpsPort, H('keep'))).peerCN, H('keep'));
  });
});

