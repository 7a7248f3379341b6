// BackendTLSPolicy with subjectAltNames through the whole data plane: the policies, an HTTPRoute and a Gateway are
// normalized, translated, rendered (the CA bundle written by digest), checked by nginx -t and loaded into a real
// nginx (Debian's) with Portico's module portico_upstream_ssl. The backends are HTTPS echo servers in this file's own
// network namespace (testnet.test-helpers.ts, subnet 198.19.211.0/30), as in the conformance test
// BackendTLSPolicySANValidation: one certificate, signed by the test CA, whose subjectAltNames are the DNS names
// abc.example.com, other.example.com and *.wild.example.com and the URI spiffe://abc.example.com/test-identity; the
// same names signed by another CA; and a certificate whose only name is its subject's CN. Each policy targets a
// Service of its own in front of one of them. What is observed: a listed DNS or URI SAN the certificate carries →
// 200, one it does not → 502 (the request never reaches the backend); several SANs, one matching → 200, none → 502;
// the certificate's wildcard stands for one label; the policy's hostname is the SNI the backend sees, and is not
// checked when SANs are listed; another CA → 502 even with a matching SAN; a CN is no SAN.
// Ports 35400-35409 belong to this file: nginx 35400-35402, the backends (in the namespace) 35403-35405; the
// Gateway's port is the pod port the translation allocates to it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { translate } from '../../translate/translate.ts';
import { modelOf, OPTS, slice, svc } from '../../translate/fixtures.test-helpers.ts';
import { issue, makeCa } from '../../translate/pki.test-helpers.ts';
import { gatewayApiState, type GatewayApiOptions } from '../../translate/gateway-api/attach.ts';
import { backendTlsState } from '../../translate/gateway-api/backend-tls.ts';
import { normalizeBackendTlsPolicy, policyReads } from '../../kinds/backendtlspolicy/normalize.ts';
import { normalizeGateway } from '../../kinds/gateway/normalize.ts';
import { normalizeGatewayClass } from '../../kinds/gatewayclass/index.ts';
import { normalizeHttpRoute } from '../../kinds/httproute/normalize.ts';
import { TestNet, type Seen } from './testnet.test-helpers.ts';
import { capturingLogger, liveNginx, sendTo, startLive, stopLive } from './live.test-helpers.ts';
import { writeTrustedCas } from './render.ts';
import { UPSTREAM_SSL_MODULE } from './runtime.ts';

const LISTEN = { httpPort: 35400, httpsPort: 35401, statusPort: 35402, address: '127.0.0.1' };
const PORTS = { good: 35403, stranger: 35404, cnonly: 35405 } as const;
type Backend = keyof typeof PORTS;
const GA: GatewayApiOptions = { controllerName: 'portico.dev/gateway-controller', reservedPorts: [LISTEN.httpPort, LISTEN.httpsPort, LISTEN.statusPort] };
const HOST = 'abc.example.com';

const tnet = new TestNet(211);
const { logger, lines } = capturingLogger();
const { dir: rtDir, dynamic, nginx } = liveNginx('portico-btls-san-', logger);
const pki = mkdtempSync(path.join(tmpdir(), 'portico-btls-san-pki-'));
const ca = makeCa(pki, 'san-ca');
const otherCa = makeCa(pki, 'other-ca');
const SANS = { dns: [HOST, 'other.example.com', '*.wild.example.com'], uris: ['spiffe://abc.example.com/test-identity'] };
const good = issue(pki, ca, 'good', SANS.dns, SANS.uris);
const stranger = issue(pki, otherCa, 'stranger', SANS.dns, SANS.uris);
/** No subjectAltName at all: its CN is the only name it has. */
const cnOnly = issue(pki, ca, 'cn-only.example.com');

const obj = (kind: string, name: string, spec: unknown, ns: string | undefined = 'infra'): KubeObject =>
  ({ apiVersion: 'gateway.networking.k8s.io/v1', kind, metadata: { name, ...(ns ? { namespace: ns } : {}), uid: `uid-${name}`, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' }, spec }) as KubeObject;
const dns = (hostname: string) => ({ type: 'Hostname', hostname });
const uri = (u: string) => ({ type: 'URI', uri: u });

/** Each case: a Service of its own (named as the path), the backend behind it, its policy's hostname and SANs. */
const CASES: { name: string; backend: Backend; hostname?: string; sans: unknown[] }[] = [
  { name: 'san-dns', backend: 'good', sans: [dns(HOST)] },
  { name: 'san-dns-mismatch', backend: 'good', sans: [dns('dce.example.com')] },
  { name: 'san-uri', backend: 'good', sans: [uri('spiffe://abc.example.com/test-identity')] },
  { name: 'san-uri-mismatch', backend: 'good', sans: [uri('spiffe://def.example.com/test-identity')] },
  { name: 'san-uri-prefix', backend: 'good', sans: [uri('spiffe://abc.example.com/test')] },
  { name: 'multiple-sans', backend: 'good', sans: [uri('spiffe://def.example.com/test-identity'), dns('def.example.com'), dns('other.example.com')] },
  { name: 'multiple-mismatch-sans', backend: 'good', sans: [uri('spiffe://def.example.com/test-identity'), dns('def.example.com')] },
  { name: 'wildcard-cert', backend: 'good', sans: [dns('one.wild.example.com')] },
  { name: 'wildcard-cert-two-labels', backend: 'good', sans: [dns('a.b.wild.example.com')] },
  { name: 'wildcard-asked', backend: 'good', sans: [dns('*.wild.example.com')] },
  { name: 'wildcard-asked-not-carried', backend: 'good', sans: [dns('*.example.com')] },
  { name: 'sni-only', backend: 'good', hostname: 'sni-only.example.net', sans: [dns(HOST)] },
  { name: 'other-ca', backend: 'stranger', sans: [dns(HOST)] },
  { name: 'cn-only', backend: 'cnonly', sans: [dns('cn-only.example.com')] },
];

let gatewayPort = 0;

function desired() {
  const cm = { 'infra/ca': { 'ca.crt': ca.cert } } as Record<string, Record<string, string>>;
  const readCm = (k: string) => (cm[k] ? { data: cm[k] } : undefined);
  const m = modelOf({
    services: CASES.map((c) => svc(c.name, [{ name: 'btls', port: 443, targetPort: PORTS[c.backend] }], 'infra')),
    slices: CASES.map((c) => slice(`${c.name}-x`, c.name, [{ name: 'btls', port: PORTS[c.backend] }], [{ ip: tnet.ip }], 'infra')),
  });
  const put = (kind: string, n: ReturnType<typeof normalizeGateway> | ReturnType<typeof normalizeBackendTlsPolicy> | ReturnType<typeof normalizeHttpRoute> | ReturnType<typeof normalizeGatewayClass>, o?: KubeObject) => {
    assert.ok(n.ok, `${kind}: ${n.ok ? '' : n.reason}`);
    m.setCrd(kind as 'Gateway', n.record as never, o ? policyReads(o) : undefined);
  };
  put('GatewayClass', normalizeGatewayClass(obj('GatewayClass', 'portico', { controllerName: GA.controllerName }, undefined)));
  put('Gateway', normalizeGateway(obj('Gateway', 'gw-san', { gatewayClassName: 'portico', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] })));
  for (const c of CASES) {
    const p = obj('BackendTLSPolicy', c.name, {
      targetRefs: [{ group: '', kind: 'Service', name: c.name, sectionName: 'btls' }],
      validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }], hostname: c.hostname ?? HOST, subjectAltNames: c.sans },
    });
    put('BackendTLSPolicy', normalizeBackendTlsPolicy(p, readCm, { subjectAltNames: true }), p);
  }
  put('HTTPRoute', normalizeHttpRoute(obj('HTTPRoute', 'san', {
    parentRefs: [{ name: 'gw-san' }],
    hostnames: [HOST],
    rules: CASES.map((c) => ({ matches: [{ path: { type: 'Exact', value: `/${c.name}` } }], backendRefs: [{ name: c.name, port: 443 }] })),
  })));
  const snap = m.snapshot();
  gatewayPort = gatewayApiState(snap, GA).gateways.get('infra/gw-san')!.listeners[0]!.podPort!;
  for (const c of CASES) assert.equal(backendTlsState(snap).policies.get(`infra/${c.name}`)?.accepted.status, 'True', `policy ${c.name} is accepted`);
  return translate(snap, { ...OPTS, listen: LISTEN, gatewayApi: GA });
}

before(async () => {
  assert.ok(existsSync(UPSTREAM_SSL_MODULE), `${UPSTREAM_SSL_MODULE} is built (make deps, or bash nginx-assets/modules/build.sh)`);
  tnet.up();
  await tnet.start('good', PORTS.good, 'tls-echo', { cert: good.certFile, key: good.keyFile });
  await tnet.start('stranger', PORTS.stranger, 'tls-echo', { cert: stranger.certFile, key: stranger.keyFile });
  await tnet.start('cnonly', PORTS.cnonly, 'tls-echo', { cert: cnOnly.certFile, key: cnOnly.keyFile });
  const result = desired();
  writeTrustedCas(result.config.structure, nginx.runtime);
  await startLive(nginx, dynamic, result.config);
});
after(() => stopLive(nginx, dynamic, tnet));

let n = 0;
/** A request for `/<name>` (a query of its own); its status and what the backend recorded for it (undefined: nothing). */
async function get(name: string): Promise<{ status: number; seen: Seen | undefined }> {
  const url = `/${name}?n=${++n}`;
  const c = CASES.find((x) => x.name === name)!;
  const r = await sendTo(gatewayPort, HOST, url);
  const seen = (await tnet.requests(c.backend)).find((x) => x.url === url);
  return { status: r.status, seen };
}

test('the rendered location: the names for the module, the hostname as SNI only, no proxy_ssl_verify', () => {
  const conf = readFileSync(path.join(rtDir, 'nginx.conf'), 'utf8');
  assert.match(conf, /load_module "\/usr\/lib\/nginx\/modules\/ngx_http_portico_upstream_ssl_module\.so";/);
  assert.match(conf, /portico_upstream_ssl_verify_names "URI:spiffe:\/\/def\.example\.com\/test-identity" "DNS:def\.example\.com" "DNS:other\.example\.com";/);
  assert.doesNotMatch(conf, /proxy_ssl_verify on/);
  assert.match(conf, /proxy_ssl_name sni-only\.example\.net;/);
});

test('a DNS SAN the certificate carries → 200 with the hostname as SNI; one it does not → 502, the backend sees nothing', async () => {
  const ok = await get('san-dns');
  assert.equal(ok.status, 200);
  assert.equal(ok.seen?.tls?.servername, HOST);
  const bad = await get('san-dns-mismatch');
  assert.equal(bad.status, 502);
  assert.equal(bad.seen, undefined);
});

test('a URI SAN: the exact URI → 200; another one, or a prefix of it → 502', async () => {
  assert.equal((await get('san-uri')).status, 200);
  for (const name of ['san-uri-mismatch', 'san-uri-prefix']) {
    const r = await get(name);
    assert.deepEqual([r.status, r.seen], [502, undefined], name);
  }
});

test('several SANs: one matching → 200; none → 502', async () => {
  assert.equal((await get('multiple-sans')).status, 200);
  const r = await get('multiple-mismatch-sans');
  assert.deepEqual([r.status, r.seen], [502, undefined]);
});

test('wildcards: the certificate\'s *.wild.example.com stands for one label; a wildcard asked for matches that same wildcard only', async () => {
  assert.equal((await get('wildcard-cert')).status, 200);
  assert.equal((await get('wildcard-cert-two-labels')).status, 502);
  assert.equal((await get('wildcard-asked')).status, 200);
  assert.equal((await get('wildcard-asked-not-carried')).status, 502);
});

test('with SANs the hostname is only the SNI: a hostname the certificate does not name still gets 200, and is what the backend sees', async () => {
  const r = await get('sni-only');
  assert.equal(r.status, 200);
  assert.equal(r.seen?.tls?.servername, 'sni-only.example.net');
});

test('a certificate from another CA → 502 even with a matching SAN; a CN is no SAN → 502', async () => {
  for (const name of ['other-ca', 'cn-only']) {
    const r = await get(name);
    assert.deepEqual([r.status, r.seen], [502, undefined], name);
  }
  // nginx logs why (its error log goes to the controller's logger): the names, for the CN-only certificate.
  assert.match(lines.join(''), /upstream SSL certificate has none of the names of portico_upstream_ssl_verify_names/);
});
