// Gateway spec.tls.frontend inside a real nginx: the configuration comes from the pure translation of a Gateway whose
// HTTPS port 443 requires client certificates of CA A (the default validation, AllowValidOnly) and whose port 8443
// asks for CA B's but lets every client in (a per-port AllowInsecureFallback), with HTTPRoutes to an echo backend.
// Proven here, with real TLS clients (node:https and openssl s_client): on the strict port a CA-A certificate is
// served (200) while no certificate or another CA's fails the TLS handshake itself — no HTTP answer at all, which
// is what the conformance suite counts as a refusal; the fallback port serves all three; each port asks with its own
// CA whatever the server name; a session made on the fallback port without a certificate is not resumed on the
// strict one.
// The echo backend runs in this file's network namespace (testnet.test-helpers.ts, subnet 224).
// Ports 33430-33433 belong to this file: nginx 33430-33432, the echo backend 33433; the Gateway's pod ports are the
// ones Portico allocates for it (20000-29999, fixed by the Gateway's name and ports).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { normalizeGateway, gatewayReads } from '../../kinds/gateway/normalize.ts';
import { normalizeGatewayClass } from '../../kinds/gatewayclass/index.ts';
import { normalizeHttpRoute } from '../../kinds/httproute/normalize.ts';
import { translate } from '../../translate/translate.ts';
import { gatewayApiState } from '../../translate/gateway-api/attach.ts';
import { OPTS, modelOf, slice, svc } from '../../translate/fixtures.test-helpers.ts';
import { issue, makeCa } from '../../translate/pki.test-helpers.ts';
import { TestNet } from './testnet.test-helpers.ts';
import { liveNginx, startLive, stopLive } from './live.test-helpers.ts';
import winston from 'winston';

const LISTEN = { httpPort: 33430, httpsPort: 33431, statusPort: 33432, address: '127.0.0.1' };
const ECHO_PORT = 33433;
const GA = { controllerName: 'portico.dev/gateway-controller', reservedPorts: [LISTEN.httpPort, LISTEN.httpsPort, LISTEN.statusPort] };
const net = new TestNet(224);
const logger = winston.createLogger({ level: 'error', transports: [new winston.transports.Console({ silent: true })] });
const { dir, dynamic, nginx } = liveNginx('portico-gw-clientcert-', logger);

const CA_A = makeCa(dir, 'ca-a');
const CA_B = makeCa(dir, 'ca-b');
const SERVER = issue(dir, makeCa(dir, 'server-ca'), 'server', ['example.org', 'second-example.org']);
const CLIENT_A = issue(dir, CA_A, 'client-a');
const CLIENT_B = issue(dir, CA_B, 'client-b');

const meta = (name: string, ns?: string) => ({ name, ...(ns ? { namespace: ns } : {}), uid: name, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' });
const cm = (name: string) => ({ group: '', kind: 'ConfigMap', name });

function config() {
  const m = modelOf({ services: [svc('echo', [{ name: 'http', port: 8080 }], 'infra')], slices: [slice('echo-1', 'echo', [{ name: 'http', port: ECHO_PORT }], [{ ip: net.ip }], 'infra')] });
  const c = normalizeGatewayClass({ metadata: meta('portico'), spec: { controllerName: GA.controllerName } } as never);
  assert.ok(c.ok);
  m.setCrd('GatewayClass', c.record);
  const configMaps: Record<string, string> = { 'infra/ca-a': CA_A.cert, 'infra/ca-b': CA_B.cert };
  const g = normalizeGateway(
    {
      metadata: meta('gw', 'infra'),
      spec: {
        gatewayClassName: 'portico',
        tls: { frontend: { default: { validation: { caCertificateRefs: [cm('ca-a')] } }, perPort: [{ port: 8443, tls: { validation: { mode: 'AllowInsecureFallback', caCertificateRefs: [cm('ca-b')] } } }] } },
        listeners: [
          { name: 'https', port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'server' }] } },
          { name: 'https-with-hostname', port: 8443, protocol: 'HTTPS', hostname: 'second-example.org', tls: { certificateRefs: [{ name: 'server' }] } },
        ],
      },
    } as unknown as KubeObject,
    (k) => (configMaps[k] ? { data: { 'ca.crt': configMaps[k] } } : undefined),
  );
  assert.ok(g.ok, JSON.stringify(g));
  m.setCrd('Gateway', g.record, gatewayReads(g.record));
  m.setSecret({ key: 'infra/server', ok: true, cert: SERVER.cert, privateKey: SERVER.key, hosts: ['example.org', 'second-example.org'], notAfter: '2099-01-01T00:00:00.000Z', fingerprint: 'server' });
  const route = (name: string, spec: Record<string, unknown>) => {
    const r = normalizeHttpRoute({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: meta(name, 'infra'), spec: { rules: [{ backendRefs: [{ name: 'echo', port: 8080 }] }], ...spec } } as unknown as KubeObject);
    assert.ok(r.ok, JSON.stringify(r));
    m.setCrd('HTTPRoute', r.record);
  };
  route('first', { parentRefs: [{ name: 'gw' }], hostnames: ['example.org'] });
  route('second', { parentRefs: [{ name: 'gw', sectionName: 'https-with-hostname' }] });
  const o = { ...OPTS, listen: LISTEN, gatewayApi: GA };
  const listeners = gatewayApiState(m.snapshot(), GA).gateways.get('infra/gw')!.listeners;
  const r = translate(m.snapshot(), o);
  assert.deepEqual(r.events.filter((e) => e.type === 'Warning'), []);
  return { config: r.config, strict: listeners.find((l) => l.port === 443)!.podPort!, fallback: listeners.find((l) => l.port === 8443)!.podPort! };
}

const { config: running, strict: STRICT, fallback: FALLBACK } = config();

interface Answer {
  status: number;
  body: string;
  reused: boolean;
  session?: Buffer;
}
/** One HTTPS request on a new connection to pod port `port`, server name and Host `host`; rejects when no HTTP answer comes. */
function get(port: number, host: string, o: { client?: { cert: string; key: string }; session?: Buffer } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let session: Buffer | undefined;
    const req = https.request(
      { host: '127.0.0.1', port, path: '/hello', headers: { host }, servername: host, ca: SERVER.cert, rejectUnauthorized: false, agent: false, ...(o.client ? { cert: o.client.cert, key: o.client.key } : {}), ...(o.session ? { session: o.session } : {}) },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => {
          const s = session ?? (res.socket as TLSSocket).getSession();
          resolve({ status: res.statusCode ?? 0, body, reused: (res.socket as TLSSocket).isSessionReused(), ...(s ? { session: s } : {}) });
        });
      },
    );
    req.on('socket', (s) => s.on('session', (b: Buffer) => (session = b)));
    req.on('error', reject);
    req.end();
  });
}

/** The CA names a port's handshake asks client certificates of ("none" when it asks for none). */
function certificateRequest(port: number, sni: string): string {
  const r = spawnSync('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-servername', sni], { input: '', encoding: 'utf8', timeout: 10_000 });
  const out = r.stdout ?? '';
  if (out.includes('No client certificate CA names sent')) return 'none';
  const m = /Acceptable client certificate CA names\n([^\n]+)/.exec(out);
  assert.ok(m, out);
  return (m[1] as string).replace(/\s/g, '');
}

before(async () => {
  net.up();
  await net.start('echo', ECHO_PORT, 'echo');
  await startLive(nginx, dynamic, running);
});
after(() => stopLive(nginx, dynamic, net));

test('AllowValidOnly: a certificate of the ConfigMap\'s CA is served; none, or another CA\'s, fails the TLS handshake (no HTTP answer)', async () => {
  const ok = await get(STRICT, 'example.org', { client: CLIENT_A });
  assert.equal(ok.status, 200, ok.body);
  const before = await net.count('echo');
  await assert.rejects(get(STRICT, 'example.org'), (e: NodeJS.ErrnoException) => /certificate required|handshake|ECONNRESET|socket hang up/i.test(`${e.code} ${e.message}`), 'no certificate: refused in the handshake');
  await assert.rejects(get(STRICT, 'example.org', { client: CLIENT_B }), (e: NodeJS.ErrnoException) => /unknown ca|bad certificate|certificate|ECONNRESET|socket hang up/i.test(`${e.code} ${e.message}`), 'another CA: refused in the handshake');
  assert.equal(await net.count('echo'), before, 'nothing refused reached the backend');
});

test('AllowInsecureFallback (per port): served with the right certificate, another CA\'s, or none', async () => {
  for (const client of [CLIENT_B, CLIENT_A, undefined]) {
    const r = await get(FALLBACK, 'second-example.org', client ? { client } : {});
    assert.equal(r.status, 200, `${client === CLIENT_B ? 'CA B' : client ? 'CA A' : 'none'}: ${r.body}`);
  }
});

test('each port asks with its own CA, whatever the server name; Portico\'s own HTTPS port asks for none', () => {
  assert.equal(certificateRequest(STRICT, 'example.org'), 'CN=ca-a');
  assert.equal(certificateRequest(STRICT, 'unknown.test'), 'CN=ca-a');
  assert.equal(certificateRequest(FALLBACK, 'second-example.org'), 'CN=ca-b');
  assert.equal(certificateRequest(LISTEN.httpsPort, 'example.org'), 'none');
});

test('TLS sessions: resumed on the strict port only when made there with a valid certificate; a fallback session without one is not', async () => {
  const first = await get(STRICT, 'example.org', { client: CLIENT_A });
  assert.ok(first.session);
  const again = await get(STRICT, 'example.org', { client: CLIENT_A, session: first.session });
  assert.equal(again.reused, true, 'resumed on the same port (not vacuous)');
  const loose = await get(FALLBACK, 'second-example.org');
  assert.equal(loose.status, 200);
  assert.ok(loose.session);
  await assert.rejects(get(STRICT, 'example.org', { session: loose.session }), 'not resumed without a certificate: a full handshake, refused');
});
