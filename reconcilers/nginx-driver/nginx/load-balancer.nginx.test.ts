// Portico behind a load balancer, as ingress-nginx behaves there: a real TLS-terminating nginx (a second, plain nginx
// configured here, the "load balancer") in front of Portico's real nginx, which serves Ingresses translated with the
// ConfigMap keys use-forwarded-headers, proxy-real-ip-cidr, force-ssl-redirect and use-proxy-protocol. Pinned:
//   - no redirect loop: a request the load balancer received over HTTPS (X-Forwarded-Proto: https) is proxied, not
//     redirected again (ssl-redirect of a TLS host, and the ConfigMap's force-ssl-redirect on a host without TLS);
//   - the backend sees the client's address (X-Real-IP, X-Forwarded-For) and scheme from the trusted load balancer;
//   - a peer outside proxy-real-ip-cidr cannot set them (its X-Forwarded-* are replaced, it is redirected);
//   - the headers ingress-nginx adds (X-Scheme, X-Forwarded-Scheme, X-Original-Forwarded-For/-Host) arrive, a
//     client's Proxy header does not (httpoxy);
//   - use-proxy-protocol: the client address and, with destination port 443, the scheme come from a trusted PROXY
//     header, never from an untrusted one.
// Addresses: the load balancer connects to Portico from 127.0.0.2 (proxy_bind), the only trusted peer; clients
// connect from 127.0.0.1 (directly: untrusted) or 127.0.0.9 (through the load balancer). The echo backend runs in
// this file's network namespace (testnet.test-helpers.ts, subnet 234: 198.19.234.0/30).
// Ports 32900-32908 belong to this file: Portico "fwd" (use-forwarded-headers) 32900-32902, Portico "pp"
// (use-proxy-protocol) 32903-32905, the echo backend 32906, the load balancer 32907 (HTTPS) and 32908 (HTTP).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { nullLogger } from '../../../operator/log.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../../model/global-config.ts';
import { parseTlsSecret } from '../../model/normalize.ts';
import { translate } from '../../translate/translate.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { b64, issue, makeCa } from '../../translate/pki.test-helpers.ts';
import { DynamicClient } from './dynamic.ts';
import { NginxProcess } from './process.ts';
import { runtimePaths } from './render.ts';
import { TestNet, type Seen } from './testnet.test-helpers.ts';
import { sendTo, startLive, stopLive, type Answer } from './live.test-helpers.ts';
import { until } from '../../../e2e/harness/http.ts';

const FWD = { httpPort: 32900, httpsPort: 32901, statusPort: 32902, address: '127.0.0.1' };
const PP = { httpPort: 32903, httpsPort: 32904, statusPort: 32905, address: '127.0.0.1' };
const WEB_PORT = 32906;
const LB_HTTPS = 32907;
const LB_HTTP = 32908;
const LB_ADDR = '127.0.0.2';
const CLIENT = '127.0.0.9';
const A = 'nginx.ingress.kubernetes.io/';
const tnet = new TestNet(234);

const dir = mkdtempSync(path.join(tmpdir(), 'portico-lb-'));
const ca = makeCa(dir, 'lb-ca');
const tlsHost = issue(dir, ca, 'tls-test', ['tls.test']);
const lbCert = issue(dir, ca, 'lb', ['tls.test', 'force.test']);

function portico(name: string): { dynamic: DynamicClient; nginx: NginxProcess } {
  const dynamic = new DynamicClient();
  const nginx = new NginxProcess({ binary: '/usr/sbin/nginx', runtime: runtimePaths(mkdtempSync(path.join(tmpdir(), `portico-lb-${name}-`))), shutdownTimeoutMs: 2_000 }, dynamic, nullLogger());
  return { dynamic, nginx };
}
const fwd = portico('fwd');
const pp = portico('pp');

/** The Ingresses both Porticos serve, with the ConfigMap `data`, translated for `listen`. */
function configFor(listen: typeof FWD, data: Record<string, string>) {
  const m = modelOf({
    services: [svc('web', [{ port: 80, targetPort: WEB_PORT }])],
    slices: [slice('web-1', 'web', [{ port: WEB_PORT }], [{ ip: tnet.ip }])],
    ingresses: [
      // ssl-redirect (the default) on a host with TLS.
      ing('tls', { tls: [{ hosts: ['tls.test'], secretName: 'tls-test' }], rules: [rule('tls.test', [{ path: '/', backend: svcRef('web', 80) }])] }),
      // No TLS section: redirected only by the ConfigMap's force-ssl-redirect.
      ing('force', { rules: [rule('force.test', [{ path: '/', backend: svcRef('web', 80) }])] }),
      // The annotation "false" opts out of the ConfigMap's force-ssl-redirect.
      ing('open', { rules: [rule('open.test', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { [`${A}force-ssl-redirect`]: 'false' } }),
    ],
  });
  const secret = { metadata: { name: 'tls-test', namespace: 'default' }, type: 'kubernetes.io/tls', data: { 'tls.crt': b64(tlsHost.cert), 'tls.key': b64(tlsHost.key) } };
  m.setSecret(parseTlsSecret(secret as KubeObject & { type: string; data: Record<string, string> }, new Date()));
  const g = parseGlobalConfig(data, defaultGlobalConfig());
  assert.deepEqual(g.errors, []);
  m.setGlobalConfig(g.values);
  return translate(m.snapshot(), { ...OPTS, listen }).config;
}

/** The load balancer: Debian's nginx terminating TLS and proxying to Portico's HTTP port from 127.0.0.2. */
let lb: ChildProcess | undefined;
let lbExit: string | undefined;
let lbStderr = '';
async function startLoadBalancer(): Promise<void> {
  const d = path.join(dir, 'lb');
  mkdirSync(path.join(d, 'tmp'), { recursive: true });
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${path.join(d, 'tmp', t)};`).join('\n');
  const conf = `daemon off;
worker_processes 1;
pid ${path.join(d, 'nginx.pid')};
error_log stderr notice;
events { worker_connections 64; }
http {
  access_log off;
${temp}
  server {
    listen 127.0.0.1:${LB_HTTPS} ssl;
    listen 127.0.0.1:${LB_HTTP};
    ssl_certificate ${lbCert.certFile};
    ssl_certificate_key ${lbCert.keyFile};
    location / {
      proxy_pass http://127.0.0.1:${FWD.httpPort};
      proxy_bind ${LB_ADDR};
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $host;
      proxy_set_header X-Forwarded-Port $server_port;
    }
  }
}
`;
  const file = path.join(d, 'nginx.conf');
  writeFileSync(file, conf);
  lb = spawn('/usr/sbin/nginx', ['-p', d, '-c', file, '-e', 'stderr'], { stdio: ['ignore', 'ignore', 'pipe'] });
  lb.stderr?.setEncoding('utf8');
  lb.stderr?.on('data', (s: string) => (lbStderr = (lbStderr + s).slice(-4_000)));
  lb.on('exit', (code, signal) => (lbExit = signal ?? `code ${code}`));
  await until(`the load balancer on ${LB_HTTP}`, async () => {
    if (lbExit) throw new Error(`load balancer exited (${lbExit}): ${lbStderr}`);
    return (await sendTo(LB_HTTP, 'open.test', '/ready')).status === 200;
  }, 10_000);
}

async function stopLoadBalancer(): Promise<void> {
  if (!lb || lbExit) return;
  const child = lb;
  const gone = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  await gone;
}

before(async () => {
  tnet.up(); // throws (the tests fail) when the namespace cannot be made
  await tnet.start('web', WEB_PORT, 'echo');
  await startLive(fwd.nginx, fwd.dynamic, configFor(FWD, { 'use-forwarded-headers': 'true', 'proxy-real-ip-cidr': `${LB_ADDR}/32`, 'force-ssl-redirect': 'true' }));
  await startLive(pp.nginx, pp.dynamic, configFor(PP, { 'use-proxy-protocol': 'true', 'proxy-real-ip-cidr': `${LB_ADDR}/32`, 'force-ssl-redirect': 'true' }));
  await startLoadBalancer();
});
after(async () => {
  try {
    await stopLoadBalancer();
    await stopLive(pp.nginx, pp.dynamic);
  } finally {
    await stopLive(fwd.nginx, fwd.dynamic, tnet);
  }
});

/** A request to the load balancer over HTTPS, from 127.0.0.9. */
function viaLoadBalancer(host: string, p: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port: LB_HTTPS, localAddress: CLIENT, path: p, servername: host, rejectUnauthorized: false, agent: false, headers: { host, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** What the echo backend received (its answer is the request it saw). */
function seen(a: Answer): Seen {
  assert.equal(a.status, 200, `proxied to the backend (${a.status} ${a.body.slice(0, 200)})`);
  return JSON.parse(a.body) as Seen;
}

/** A raw HTTP/1.0 request (an answer without chunks) on a connection from `localAddress`, after `preamble` (a PROXY protocol header). */
function raw(port: number, localAddress: string, preamble: string, host: string, p: string, extra = ''): Promise<{ status: number; location: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port, localAddress });
    let data = '';
    s.setEncoding('utf8');
    s.setTimeout(5_000, () => s.destroy(new Error('timeout')));
    s.on('connect', () => s.write(`${preamble}GET ${p} HTTP/1.0\r\nHost: ${host}\r\n${extra}\r\n`));
    s.on('data', (c: string) => (data += c));
    s.on('error', reject);
    s.on('close', () => {
      const [head = '', ...rest] = data.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
      resolve({ status, location: /\r\nLocation: ([^\r]*)/i.exec(head)?.[1], body: rest.join('\r\n\r\n') });
    });
  });
}

test('no redirect loop behind a TLS-terminating load balancer: X-Forwarded-Proto "https" from the trusted peer is proxied (ssl-redirect of a TLS host, ConfigMap force-ssl-redirect without TLS); "http" is redirected to the forwarded host', async () => {
  for (const host of ['tls.test', 'force.test']) {
    const got = seen(await viaLoadBalancer(host, '/app?x=1'));
    assert.equal(got.url, '/app?x=1', host);
    assert.equal(got.headers['x-forwarded-proto'], 'https', host);
    // Plain HTTP at the load balancer: the redirect names the load balancer's host, without a port.
    const plain = await sendTo(LB_HTTP, host, '/app?x=1');
    assert.equal(plain.status, 308, `${host} over plain HTTP: ${plain.status}`);
    assert.equal(plain.headers.location, `https://${host}/app?x=1`);
  }
  assert.equal(seen(await sendTo(LB_HTTP, 'open.test', '/x')).headers['x-forwarded-proto'], 'http', 'force-ssl-redirect "false" on the Ingress opts out');
});

test('the backend sees the client\'s address and scheme from the trusted load balancer, and the headers ingress-nginx adds', async () => {
  const got = seen(await viaLoadBalancer('force.test', '/who', { 'x-forwarded-for': '203.0.113.50', proxy: 'http://198.51.100.1:3128' }));
  const h = got.headers;
  assert.equal(h['x-real-ip'], CLIENT, 'the client, not the load balancer (127.0.0.2) and not the address the client claimed');
  assert.equal(h['x-forwarded-for'], CLIENT);
  assert.equal(h['x-forwarded-proto'], 'https');
  assert.equal(h['x-forwarded-scheme'], 'https');
  assert.equal(h['x-scheme'], 'https');
  assert.equal(h['x-forwarded-host'], 'force.test');
  assert.equal(h['x-forwarded-port'], String(LB_HTTPS), 'the load balancer\'s port');
  assert.equal(h['x-original-forwarded-for'], `203.0.113.50, ${CLIENT}`, 'the X-Forwarded-For as it arrived');
  assert.equal(h['x-original-forwarded-host'], 'force.test', 'the X-Forwarded-Host as it arrived');
  assert.equal(h.proxy, undefined, 'httpoxy: the Proxy header is cleared');
  assert.equal(h['x-original-uri'], undefined, 'only with proxy-add-original-uri-header');
});

test('X-Forwarded-Host from the trusted peer listing several names: the first counts (the redirect\'s host, X-Forwarded-Host upstream), as ingress-nginx', async () => {
  const names = 'X-Forwarded-Host: front.example:8443, inner.example\r\n';
  const r = await raw(FWD.httpPort, LB_ADDR, '', 'force.test', '/a/', `${names}X-Forwarded-Proto: http\r\n`);
  assert.equal(r.status, 308);
  assert.equal(r.location, 'https://front.example/a', 'the first name without its port; the final "/" dropped');
  const ok = await raw(FWD.httpPort, LB_ADDR, '', 'force.test', '/a', `${names}X-Forwarded-Proto: https\r\n`);
  const h = seen({ status: ok.status, headers: {}, body: ok.body }).headers;
  assert.equal(h['x-forwarded-host'], 'front.example:8443');
  assert.equal(h['x-original-forwarded-host'], 'front.example:8443, inner.example');
});

test('a peer outside proxy-real-ip-cidr cannot set the client address, scheme, host or port: its X-Forwarded-* are replaced and it is redirected', async () => {
  const spoof = { 'x-forwarded-for': '203.0.113.50', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example', 'x-forwarded-port': '443', 'x-real-ip': '203.0.113.50' };
  const redirected = await sendTo(FWD.httpPort, 'force.test', '/app', { headers: spoof });
  assert.equal(redirected.status, 308, 'X-Forwarded-Proto of an untrusted peer does not count');
  assert.equal(redirected.headers.location, 'https://force.test/app', 'nor does its X-Forwarded-Host');
  const h = seen(await sendTo(FWD.httpPort, 'open.test', '/app', { headers: spoof })).headers;
  assert.equal(h['x-real-ip'], '127.0.0.1');
  assert.equal(h['x-forwarded-for'], '127.0.0.1');
  assert.equal(h['x-forwarded-proto'], 'http');
  assert.equal(h['x-scheme'], 'http');
  assert.equal(h['x-forwarded-host'], 'open.test');
  assert.equal(h['x-forwarded-port'], '80', 'the published port');
  assert.equal(h['x-original-forwarded-for'], '203.0.113.50', 'passed on as it came, under its own name (as ingress-nginx)');
});

test('use-proxy-protocol: a trusted PROXY header names the client, and destination port 443 means HTTPS (no redirect); an untrusted one names nobody', async () => {
  const header = (dstPort: number) => `PROXY TCP4 203.0.113.7 127.0.0.1 51000 ${dstPort}\r\n`;
  const tlsAtLb = await raw(PP.httpPort, LB_ADDR, header(443), 'force.test', '/pp');
  const h = seen({ status: tlsAtLb.status, headers: {}, body: tlsAtLb.body }).headers;
  assert.equal(h['x-real-ip'], '203.0.113.7');
  assert.equal(h['x-forwarded-for'], '203.0.113.7');
  assert.equal(h['x-forwarded-proto'], 'https');
  assert.equal(h['x-forwarded-port'], '443');
  const plainAtLb = await raw(PP.httpPort, LB_ADDR, header(80), 'force.test', '/pp');
  assert.equal(plainAtLb.status, 308);
  assert.equal(plainAtLb.location, 'https://force.test/pp');
  // From 127.0.0.1, outside proxy-real-ip-cidr: the connection's own address, its own scheme.
  assert.equal((await raw(PP.httpPort, '127.0.0.1', header(443), 'force.test', '/pp')).status, 308);
  const u = await raw(PP.httpPort, '127.0.0.1', header(443), 'open.test', '/pp');
  const uh = seen({ status: u.status, headers: {}, body: u.body }).headers;
  assert.equal(uh['x-real-ip'], '127.0.0.1');
  assert.equal(uh['x-forwarded-proto'], 'http');
  assert.equal(uh['x-forwarded-port'], '80');
});
