// Client certificates (ingress-nginx's auth-tls-*) inside a real nginx: the configuration comes from the pure
// translation of Ingresses with auth-tls annotations and their CA Secrets (what the controller renders and pushes),
// and real TLS clients (node:https with a key and certificate, and openssl s_client) connect with a server name.
// Proven here: the handshake asks for a certificate only where an Ingress wants one, a valid one is proxied with
// the ssl-client-* headers, none / another CA's → 400, optional lets a client without one through, match-cn → 403,
// the error page → 302, a certificate verified for host A does not open host B (421), TLS sessions are resumed only
// under the CA they were verified with, and a changed CA applies without an nginx reload.
// The echo backend runs in this file's network namespace (testnet.test-helpers.ts, subnet 244).
// Ports 32200-32209 belong to this file: nginx 32200-32202, the echo backend 32203.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import winston from 'winston';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { normalizeIngress } from '../../model/normalize.ts';
import { translate } from '../../translate/translate.ts';
import { diffConfig } from '../../translate/diff.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { DynamicClient } from './dynamic.ts';
import { NginxProcess } from './process.ts';
import { runtimePaths } from './render.ts';
import { TestNet } from './testnet.test-helpers.ts';
import { startLive, stopLive } from './live.test-helpers.ts';

const LISTEN = { httpPort: 32200, httpsPort: 32201, statusPort: 32202, address: '127.0.0.1' };
const ECHO_PORT = 32203;
const net = new TestNet(244);
const dir = mkdtempSync(path.join(tmpdir(), 'portico-authtls-'));
const dynamic = new DynamicClient();
const logger = winston.createLogger({ level: 'error', transports: [new winston.transports.Console({ silent: true })] });
const nginx = new NginxProcess({ binary: '/usr/sbin/nginx', runtime: runtimePaths(path.join(dir, 'rt')), shutdownTimeoutMs: 2_000 }, dynamic, logger);

// ---- certificates (openssl) ------------------------------------------------------------------------------------------
const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
const file = (name: string) => path.join(dir, name);
function makeCa(name: string): void {
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', `/CN=${name}`, '-keyout', file(`${name}.key`), '-out', file(`${name}.crt`)]);
}
/** A client certificate for `cn`, signed by `ca`. */
function makeClient(name: string, cn: string, ca: string): { cert: string; key: string } {
  openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', `/CN=${cn}`, '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`)]);
  writeFileSync(file(`${name}.ext`), 'extendedKeyUsage=clientAuth\n');
  openssl(['x509', '-req', '-in', file(`${name}.csr`), '-CA', file(`${ca}.crt`), '-CAkey', file(`${ca}.key`), '-CAcreateserial', '-days', '2', '-extfile', file(`${name}.ext`), '-out', file(`${name}.crt`)]);
  return { cert: readFileSync(file(`${name}.crt`), 'utf8'), key: readFileSync(file(`${name}.key`), 'utf8') };
}
makeCa('ca-a');
makeCa('ca-b');
const CLIENT_A = makeClient('client-a', 'client1', 'ca-a');
const INTRUDER_A = makeClient('intruder-a', 'intruder', 'ca-a');
const CLIENT_B = makeClient('client-b', 'client1', 'ca-b');
const caPem = (name: string) => readFileSync(file(`${name}.crt`), 'utf8');

// ---- the configuration the controller renders -----------------------------------------------------------------------
const N = 'nginx.ingress.kubernetes.io/';
const HOSTS: [string, Record<string, string>][] = [
  ['a.test', { [`${N}auth-tls-secret`]: 'ca-a', [`${N}auth-tls-pass-certificate-to-upstream`]: 'true' }],
  ['b.test', { [`${N}auth-tls-secret`]: 'ca-b' }],
  ['o.test', { [`${N}auth-tls-secret`]: 'ca-a', [`${N}auth-tls-verify-client`]: 'optional' }],
  ['m.test', { [`${N}auth-tls-secret`]: 'ca-a', [`${N}auth-tls-match-cn`]: 'CN=client1' }],
  ['e.test', { [`${N}auth-tls-secret`]: 'ca-a', [`${N}auth-tls-error-page`]: 'https://errors.example.com/cert-error' }],
  ['c.test', {}],
];

/** The configuration for these Ingresses, the Secret ca-a holding `caA` (to change the CA). */
function configWith(caA: string): GatewayConfig {
  const m = modelOf({
    services: [svc('echo', [{ name: 'http', port: 80 }])],
    slices: [slice('echo-1', 'echo', [{ name: 'http', port: ECHO_PORT }], [{ ip: net.ip }])],
  });
  const secrets: Record<string, string> = { 'default/ca-a': caA, 'default/ca-b': caPem('ca-b') };
  const read = (k: string) => (secrets[k] ? { data: { 'ca.crt': Buffer.from(secrets[k] as string).toString('base64') } } : undefined);
  for (const [host, annotations] of HOSTS) {
    const n = normalizeIngress(ing(host.replace('.', '-'), { rules: [rule(host, [{ path: '/', backend: svcRef('echo', 80) }])] }, { annotations }) as KubeObject, read);
    assert.ok(n.ok && n.ingress.accessControl.length === 0, JSON.stringify(n));
    m.setIngress(n.ingress);
  }
  const r = translate(m.snapshot(), { ...OPTS, listen: LISTEN });
  assert.deepEqual(r.events.filter((e) => e.type === 'Warning'), []);
  return r.config;
}

// ---- clients ---------------------------------------------------------------------------------------------------------
interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The backend's view (echo), when proxied. */
  seen?: { headers: Record<string, string> };
  reused: boolean;
  session?: Buffer;
}

/** One HTTPS request on a new connection: server name `sni`, Host `host`, optional client certificate and session. */
function get(o: { sni?: string; host: string; client?: { cert: string; key: string }; session?: Buffer; path?: string }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let session: Buffer | undefined;
    const req = https.request(
      {
        host: '127.0.0.1',
        port: LISTEN.httpsPort,
        path: o.path ?? '/hello',
        headers: { host: o.host, 'ssl-client-verify': 'SUCCESS', 'ssl-client-subject-dn': 'CN=forged' },
        servername: o.sni ?? o.host,
        rejectUnauthorized: false,
        agent: false,
        ...(o.client ? { cert: o.client.cert, key: o.client.key } : {}),
        ...(o.session ? { session: o.session } : {}),
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => {
          let seen: Answer['seen'];
          try {
            seen = JSON.parse(body) as Answer['seen'];
          } catch {
            seen = undefined;
          }
          // TLS 1.3 tickets arrive after the handshake; by the end of the response the client has them.
          const s = session ?? (res.socket as import('node:tls').TLSSocket).getSession();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, seen, reused: (res.socket as import('node:tls').TLSSocket).isSessionReused(), ...(s ? { session: s } : {}) });
        });
      },
    );
    req.on('socket', (s) => s.on('session', (b: Buffer) => (session = b)));
    req.on('error', reject);
    req.end();
  });
}

/** What openssl s_client reports of the server's certificate request for a server name. */
function certificateRequest(sni: string): string {
  const r = spawnSync('openssl', ['s_client', '-connect', `127.0.0.1:${LISTEN.httpsPort}`, '-servername', sni], { input: '', encoding: 'utf8', timeout: 10_000 });
  const out = r.stdout ?? '';
  if (out.includes('No client certificate CA names sent')) return 'none';
  const m = /Acceptable client certificate CA names\n([^\n]+)/.exec(out);
  assert.ok(m, out);
  return (m[1] as string).replace(/\s/g, '');
}

/** nginx's worker processes: a reload replaces every one of them. */
function workers(): string {
  return execFileSync('ps', ['--ppid', String(nginx.pid), '-o', 'pid='], { encoding: 'utf8' }).split('\n').map((s) => s.trim()).filter(Boolean).sort().join(',');
}

let running: GatewayConfig;
before(async () => {
  net.up();
  await net.start('echo', ECHO_PORT, 'echo');
  running = configWith(caPem('ca-a'));
  await startLive(nginx, dynamic, running);
});
after(() => stopLive(nginx, dynamic, net));

test('a valid client certificate is proxied: the backend sees ssl-client-verify SUCCESS, the DNs and the escaped PEM (never the client\'s own)', async () => {
  const r = await get({ host: 'a.test', client: CLIENT_A });
  assert.equal(r.status, 200, r.body);
  const h = r.seen?.headers ?? {};
  assert.equal(h['ssl-client-verify'], 'SUCCESS');
  assert.equal(h['ssl-client-subject-dn'], 'CN=client1');
  assert.equal(h['ssl-client-issuer-dn'], 'CN=ca-a');
  assert.equal(decodeURIComponent(h['ssl-client-cert'] ?? '').trim(), CLIENT_A.cert.trim(), 'the PEM, URL-encoded');
  // Without pass-certificate the PEM is not sent (and a forged one would be removed).
  const b = await get({ host: 'b.test', client: CLIENT_B });
  assert.equal(b.status, 200, b.body);
  assert.equal(b.seen?.headers['ssl-client-cert'], undefined);
  assert.equal(b.seen?.headers['ssl-client-issuer-dn'], 'CN=ca-b');
});

test('no certificate → 400; a certificate of another CA → 400; nothing reaches the backend', async () => {
  const before = await net.count('echo');
  const none = await get({ host: 'a.test' });
  assert.equal(none.status, 400);
  assert.match(none.body, /No required SSL certificate was sent/);
  const other = await get({ host: 'a.test', client: CLIENT_B });
  assert.equal(other.status, 400);
  assert.match(other.body, /The SSL certificate error/);
  // Plain HTTP has no certificate: refused too (ingress-nginx would serve it unchecked).
  const plain = await new Promise<number>((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: LISTEN.httpPort, path: '/hello', headers: { host: 'a.test', 'ssl-client-verify': 'SUCCESS' }, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', reject);
  });
  assert.equal(plain, 400);
  assert.equal(await net.count('echo'), before);
});

test('optional: served without a certificate (ssl-client-verify NONE, the client\'s forged headers removed)', async () => {
  const r = await get({ host: 'o.test' });
  assert.equal(r.status, 200, r.body);
  assert.equal(r.seen?.headers['ssl-client-verify'], 'NONE');
  assert.equal(r.seen?.headers['ssl-client-subject-dn'], undefined);
  const withCert = await get({ host: 'o.test', client: CLIENT_A });
  assert.equal(withCert.seen?.headers['ssl-client-verify'], 'SUCCESS');
});

test('match-cn: CN=client1 is served, another CN of the same CA → 403', async () => {
  assert.equal((await get({ host: 'm.test', client: CLIENT_A })).status, 200);
  const r = await get({ host: 'm.test', client: INTRUDER_A });
  assert.equal(r.status, 403);
});

test('error page: a request without a valid certificate is redirected (302) to it', async () => {
  const r = await get({ host: 'e.test' });
  assert.equal(r.status, 302);
  assert.equal(r.headers.location, 'https://errors.example.com/cert-error');
  assert.equal((await get({ host: 'e.test', client: CLIENT_A })).status, 200);
});

test('a certificate verified for host A (CA A) does not open host B (CA B) on the same connection: 421', async () => {
  // The handshake is for a.test, so the client's CA-A certificate is verified — then it asks for b.test.
  const r = await get({ sni: 'a.test', host: 'b.test', client: CLIENT_A });
  assert.equal(r.status, 421);
  // The host B itself, with its own CA, works (the test above is not vacuous).
  assert.equal((await get({ host: 'b.test', client: CLIENT_B })).status, 200);
  // No server name at all: nothing was asked, nothing is let through.
  assert.equal((await get({ sni: '', host: 'a.test', client: CLIENT_A })).status, 421);
});

test('only hosts with auth-tls ask for a certificate, with their own CA', () => {
  assert.equal(certificateRequest('c.test'), 'none');
  assert.equal(certificateRequest('unknown.test'), 'none');
  assert.equal(certificateRequest('a.test'), 'CN=ca-a');
  assert.equal(certificateRequest('b.test'), 'CN=ca-b');
});

test('TLS sessions: resumed under the CA they were verified with, never onto a host of another CA or one that asks for none', async () => {
  const first = await get({ host: 'a.test', client: CLIENT_A });
  assert.equal(first.status, 200);
  assert.ok(first.session, 'the server gave a session');
  const again = await get({ host: 'a.test', client: CLIENT_A, session: first.session });
  assert.equal(again.reused, true, 'resumed on the same host');
  assert.equal(again.seen?.headers['ssl-client-verify'], 'SUCCESS', 'the resumed session keeps its verified certificate');
  // The session of CA A offered to b.test (CA B), without a certificate this time: a full handshake, no certificate.
  const cross = await get({ host: 'b.test', session: first.session });
  assert.equal(cross.reused, false, 'not resumed under another CA');
  assert.equal(cross.status, 400);
  // A session of a host that asks for nothing is not resumed on one that asks.
  const plain = await get({ host: 'c.test' });
  assert.equal((await get({ host: 'c.test', session: plain.session })).reused, true, 'sessions work for c.test (not vacuous)');
  const onto = await get({ host: 'a.test', client: CLIENT_A, session: plain.session });
  assert.equal(onto.reused, false);
  assert.equal(onto.status, 200, 'a full handshake asked for the certificate');
});

test('a changed CA applies without an nginx reload: the old CA\'s certificates are refused, the new one\'s accepted', async () => {
  const pids = workers();
  const old = await get({ host: 'a.test', client: CLIENT_A });
  assert.equal(old.status, 200);
  const next = configWith(caPem('ca-b'));
  const d = diffConfig(running, next);
  assert.equal(d.reload, false, 'data only');
  assert.ok(Object.keys(d.delta.clientAuth.upsert).includes('a.test'));
  await dynamic.push(d.delta);
  running = next;
  assert.equal((await get({ host: 'a.test', client: CLIENT_A })).status, 400);
  assert.equal((await get({ host: 'a.test', client: CLIENT_B })).status, 200);
  // A session verified against the old CA is not resumed any more.
  assert.equal((await get({ host: 'a.test', client: CLIENT_B, session: old.session })).reused, false);
  assert.equal(certificateRequest('a.test'), 'CN=ca-b');
  assert.equal(workers(), pids, 'the same nginx workers: no reload');
});
