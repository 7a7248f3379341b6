// TLS passthrough in the stream section and nginx.conf: the translation's passthrough hosts resolved to endpoints
// (filtered like HTTP ones, one upstream per set of endpoints, closed when a Service, port or endpoint is missing,
// with Warning Events on the Ingress), which Services' endpoint changes reload nginx, the rendering (SNI maps,
// the unix-socket hop with the PROXY protocol, the HTTP server's TLS listener moved there with real_ip from it),
// escaping of values that bypassed the schema, `nginx -t` with the realip variants, and nginx.conf unchanged by the
// feature when the flag is off.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KubeObject } from '../../operator/kube/object.ts';
import type { EventRecorder } from '../../operator/events.ts';
import type { Logger } from '../../operator/log.ts';
import { Model } from '../model/model.ts';
import { normalizeEndpointSlice, normalizeService } from '../model/normalize.ts';
import { STREAM_MODULE, StreamServices, streamSection } from './stream.ts';
import { renderNginxConf, runtimePaths, type RuntimePaths } from './nginx/render.ts';
import { UnsafeValueError } from './nginx/escape.ts';
import { translate } from '../translate/translate.ts';
import { diffConfig, structureChecksum } from '../translate/diff.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from '../translate/fixtures.test-helpers.ts';
import type { PassthroughHost, Structure } from '../config/types.ts';

const OWN = new Set(['10.0.0.9']);
const O = { own: OWN, address: '127.0.0.1', modulePath: STREAM_MODULE };
const PT = { 'nginx.ingress.kubernetes.io/ssl-passthrough': 'true' };
const ON = { ...OPTS, sslPassthrough: true };

const host = (h: string, service: string, servicePort: number | string, ingress = 'vault'): PassthroughHost => ({ host: h, source: `Ingress/default/${ingress}`, namespace: 'default', service, servicePort });

function model(): Model {
  const m = new Model();
  m.setService(normalizeService(svc('vault', [{ name: 'https', port: 8200 }, { name: 'dns', port: 53 }])));
  m.setService(normalizeService({ metadata: { name: 'ext', namespace: 'default' }, spec: { type: 'ExternalName', externalName: 'example.com', ports: [{ port: 443 }] } } as KubeObject));
  m.setService(normalizeService(svc('empty', [{ port: 443 }])));
  const sl = normalizeEndpointSlice(slice('vault-1', 'vault', [{ name: 'https', port: 18200 }], [{ ip: '10.0.0.2' }, { ip: '10.0.0.1' }, { ip: '127.0.0.1' }, { ip: '169.254.169.254' }, { ip: '10.0.0.9' }, { ip: '10.0.0.3', ready: false }]));
  if (sl) m.setEndpointSlices('default/vault', [sl]);
  return m;
}

test('passthrough hosts: endpoints filtered like HTTP ones, one upstream per set of endpoints, closed hosts reported on their Ingress', () => {
  const pt = {
    port: 8443,
    hosts: [host('vault.example.com', 'vault', 'https'), host('alt.example.com', 'vault', 8200, 'alt'), host('gone.example.com', 'missing', 443), host('x.example.com', 'ext', 443), host('p.example.com', 'vault', 9999), host('e.example.com', 'empty', 443)],
    terminated: ['b.example.com', 'a.example.com'],
  };
  const { section, problems } = streamSection(model(), O, pt);
  assert.ok(section?.passthrough);
  assert.deepEqual(section.servers, [], 'no TCP/UDP service: the stream section exists for the HTTPS port alone');
  assert.deepEqual(section.passthrough, {
    address: '127.0.0.1',
    port: 8443,
    hosts: [
      { host: 'alt.example.com', upstream: 0 },
      { host: 'e.example.com', upstream: null },
      { host: 'gone.example.com', upstream: null },
      { host: 'p.example.com', upstream: null },
      { host: 'vault.example.com', upstream: 0 },
      { host: 'x.example.com', upstream: null },
    ],
    terminated: ['a.example.com', 'b.example.com'],
    upstreams: [{ endpoints: [{ address: '10.0.0.1', port: 18200 }, { address: '10.0.0.2', port: 18200 }] }],
  });
  assert.deepEqual(problems.map((p) => `${p.ingress} ${p.reason}`).sort(), [
    'default/alt ForbiddenEndpoint',
    'default/vault ExternalNameNotSupported',
    'default/vault ForbiddenEndpoint',
    'default/vault NoEndpoints',
    'default/vault ServiceNotFound',
    'default/vault ServicePortNotFound',
  ]);
  const forbidden = problems.find((p) => p.reason === 'ForbiddenEndpoint')?.message ?? '';
  for (const a of ['127.0.0.1', '169.254.169.254', '10.0.0.9']) assert.ok(forbidden.includes(a), forbidden);
  assert.match(problems.find((p) => p.reason === 'ServiceNotFound')?.message ?? '', /^ssl-passthrough for gone\.example\.com \(service default\/missing:443\): the Service does not exist; TLS connections for the host are closed$/);
});

test('a missing stream module: no stream section (TLS terminated as without the flag, passthrough hosts 421), a Warning on each passthrough Ingress', () => {
  const r = streamSection(model(), { ...O, modulePath: '/nonexistent/ngx_stream_module.so' }, { port: 8443, hosts: [host('vault.example.com', 'vault', 'https')], terminated: [] });
  assert.equal(r.section, null);
  assert.deepEqual(r.problems.map((p) => [p.ingress, p.reason]), [['default/vault', 'StreamModuleMissing']]);
  assert.match(r.problems[0]?.message ?? '', /libnginx-mod-stream.*terminates TLS.*421/);
  const none = streamSection(model(), { ...O, modulePath: '/nonexistent/ngx_stream_module.so' }, { port: 8443, hosts: [], terminated: [] });
  assert.deepEqual(none.problems.map((p) => [p.ingress, p.reason]), [[undefined, 'StreamModuleMissing']], 'without hosts the controller logs it');
});

test('StreamServices: passthrough problems are Warning Events on the Ingress, once; its Services\' endpoint changes reload', () => {
  const m = model();
  const events: string[] = [];
  const rec = { event: (o: KubeObject, t: string, reason: string) => events.push(`${o.kind}/${o.metadata.namespace}/${o.metadata.name} ${t} ${reason}`) } as unknown as EventRecorder;
  const log = { warn: () => undefined, error: () => undefined } as unknown as Logger;
  const s = new StreamServices(m, rec, log, { own: OWN, address: '127.0.0.1' });
  const base: Structure = translate(m.snapshot(), ON).config.structure;
  assert.deepEqual(base.passthrough, { hosts: [], terminated: [] });
  const empty = s.apply(base);
  assert.ok(empty.stream?.passthrough, 'the flag alone makes the HTTPS port the stream section\'s');
  assert.deepEqual(empty.stream.passthrough.hosts, []);
  assert.equal(s.uses('default/vault'), false);
  const withHosts: Structure = { ...base, passthrough: { hosts: [host('vault.example.com', 'vault', 'https'), host('gone.example.com', 'missing', 443)], terminated: [] } };
  const a = s.apply(withHosts);
  s.apply(withHosts);
  assert.deepEqual(events.sort(), ['Ingress/default/vault Warning ForbiddenEndpoint', 'Ingress/default/vault Warning ServiceNotFound']);
  assert.equal(s.uses('default/vault'), true);
  assert.equal(s.uses('default/missing'), true, 'a Service that appears later is rendered too');
  assert.equal(s.uses('default/other'), false);
  // An endpoint change of a passthrough Service is a structure change: a reload, with a reason saying why.
  const sl = normalizeEndpointSlice(slice('vault-1', 'vault', [{ name: 'https', port: 18200 }], [{ ip: '10.0.0.7' }]));
  if (sl) m.setEndpointSlices('default/vault', [sl]);
  const b = s.apply(withHosts);
  assert.deepEqual(b.stream?.passthrough?.upstreams, [{ endpoints: [{ address: '10.0.0.7', port: 18200 }] }]);
  const data = { routes: {}, backends: {}, certificates: {}, defaultCertificate: null, plugins: {}, consumers: {} };
  const d = diffConfig({ structure: a, data }, { structure: b, data });
  assert.equal(d.reload, true);
  assert.deepEqual(d.reasons, ['TLS passthrough hosts or their endpoints changed']);
});

/** A runtime directory with what nginx -t needs (temp dirs, the API socket directory, a placeholder pair). */
function runtimeDir(): RuntimePaths {
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-pt-'));
  const rt = runtimePaths(dir);
  mkdirSync(rt.tempDir, { recursive: true });
  mkdirSync(rt.apiDir, { recursive: true, mode: 0o700 });
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=t', '-keyout', rt.placeholderKey, '-out', rt.placeholderCert], { stdio: 'ignore' });
  return rt;
}

function nginxTest(rt: RuntimePaths, conf: string): void {
  const file = path.join(rt.dir, 'nginx.conf');
  writeFileSync(file, conf);
  execFileSync('nginx', ['-t', '-q', '-p', rt.dir, '-c', file, '-e', 'stderr'], { stdio: 'pipe' });
}

/** A cluster with a terminated host, a passthrough host and a passthrough wildcard over an exact terminated host. */
function cluster(): Model {
  return modelOf({
    services: [svc('web', [{ port: 80 }]), svc('vault', [{ name: 'https', port: 8200 }])],
    slices: [slice('vault-1', 'vault', [{ name: 'https', port: 18200 }], [{ ip: '10.0.0.5' }]), slice('web-1', 'web', [{ port: 8080 }], [{ ip: '10.0.0.6' }])],
    ingresses: [
      ing('web', { tls: [{ hosts: ['a.example.com'] }], rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }]), rule('x.w.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations: { 'nginx.ingress.kubernetes.io/proxy-body-size': '64m' } }),
      ing('vault', { rules: [rule('vault.example.com', [{ path: '/', backend: svcRef('vault', 'https') }]), rule('*.w.example.com', [{ path: '/', backend: svcRef('vault', 'https') }])] }, { created: '2026-01-02T00:00:00Z', annotations: PT }),
    ],
  });
}

function rendered(o: { flag: boolean; global?: Partial<Structure['global']>; checksum?: string }, rt: RuntimePaths): string {
  const m = cluster();
  const s0 = translate(m.snapshot(), o.flag ? ON : OPTS).config.structure;
  const s1 = { ...s0, global: { ...s0.global, ...o.global } };
  const log = { warn: () => undefined, error: () => undefined } as unknown as Logger;
  const s = new StreamServices(m, { event: () => undefined } as unknown as EventRecorder, log, { own: new Set(), address: '127.0.0.1' }).apply(s1);
  return renderNginxConf(s, rt, o.checksum ?? structureChecksum(s));
}

test('render: SNI maps, the passthrough hop, the HTTP server\'s TLS listener on a unix socket with real_ip from PROXY; passes nginx -t', () => {
  const rt = runtimeDir();
  const conf = rendered({ flag: true }, rt);
  assert.match(conf, new RegExp(`load_module "${STREAM_MODULE}";`));
  // The public HTTPS port is the stream section's; the HTTP server keeps its HTTP port.
  assert.match(conf, /server \{\n\s+listen 127\.0\.0\.1:8080 default_server reuseport backlog=4096;\n\s+server_name _;/);
  assert.ok(!/listen 127\.0\.0\.1:8443 ssl/.test(conf), 'no http listener on the HTTPS port');
  assert.match(conf, /server \{\n\s+listen 127\.0\.0\.1:8443 reuseport backlog=4096;\n\s+# Logged[^\n]*\n\s+access_log off;\n\s+ssl_preread on;\n\s+proxy_pass \$portico_tls_route;\n\s+proxy_protocol on;/);
  // The TLS termination: the same server, on the unix socket, the client address from the stream's PROXY header.
  assert.ok(conf.includes(`listen unix:${rt.httpsSocket} ssl http2 default_server backlog=4096 proxy_protocol;\n    set_real_ip_from unix:;\n    real_ip_header proxy_protocol;\n    server_name _;`));
  assert.equal(conf.match(/set_by_lua \$portico_jump/g)?.length, 2, 'both servers route with the Lua router');
  assert.match(conf, /map \$ssl_preread_server_name \$portico_tls_route \{\n\s+hostnames;\n\s+x\.w\.example\.com portico_https;\n\s+"~\^\[\^\.\]\+\\\.w\\\.example\\\.com\$" portico_passthrough;\n\s+vault\.example\.com portico_passthrough;\n\s+default portico_https;\n\s+\}/);
  assert.match(conf, /map \$ssl_preread_server_name \$portico_passthrough_backend \{\n\s+hostnames;\n\s+"~\^\[\^\.\]\+\\\.w\\\.example\\\.com\$" portico_passthrough_0;\n\s+vault\.example\.com portico_passthrough_0;\n\s+default portico_passthrough_closed;\n\s+\}/);
  assert.match(conf, /upstream portico_passthrough_0 \{\n\s+server 10\.0\.0\.5:18200;\n\s+\}/);
  assert.ok(conf.includes(`upstream portico_https {\n    server unix:${rt.httpsSocket};\n  }`));
  assert.ok(conf.includes(`listen unix:${rt.passthroughSocket} proxy_protocol;\n    set_real_ip_from unix:;\n    ssl_preread on;\n    proxy_pass $portico_passthrough_backend;`));
  assert.ok(!/a\.example\.com/.test(conf.slice(conf.indexOf('stream {'))), 'terminated hosts are data: only those under a passthrough wildcard are named');
  nginxTest(rt, conf);
});

test('render with use-proxy-protocol or use-forwarded-headers: the HTTP port keeps its realip, the TLS listener trusts only the hop; nginx -t', () => {
  const rt = runtimeDir();
  // (compute-full-forwarded-for counts only with use-forwarded-headers, as in ingress-nginx.)
  const pp = rendered({ flag: true, global: { useProxyProtocol: true, useForwardedHeaders: true, proxyRealIpCidr: ['10.0.0.0/8'], computeFullForwardedFor: true } }, rt);
  // The load balancer's PROXY header is decoded on the HTTPS port by the stream section, with the same trust.
  assert.match(pp, /listen 127\.0\.0\.1:8443 reuseport backlog=4096 proxy_protocol;\n[^}]*set_real_ip_from 10\.0\.0\.0\/8;\n[^}]*ssl_preread on;/);
  assert.match(pp, /listen 127\.0\.0\.1:8080 default_server reuseport backlog=4096 proxy_protocol;/);
  assert.match(pp, /\n  set_real_ip_from 10\.0\.0\.0\/8;\n  real_ip_header proxy_protocol;/, 'the HTTP port: as without the flag');
  assert.match(pp, /map \$http_x_forwarded_for \$portico_forwarded_for \{ "" \$proxy_protocol_addr;/);
  nginxTest(rt, pp);
  const fwd = rendered({ flag: true, global: { useForwardedHeaders: true, proxyRealIpCidr: ['10.0.0.0/8'], computeFullForwardedFor: true } }, rt);
  assert.match(fwd, /\n  set_real_ip_from 10\.0\.0\.0\/8;\n  real_ip_header X-Forwarded-For;/);
  assert.match(fwd, /map \$realip_remote_addr \$portico_peer_addr \{ "unix:" \$proxy_protocol_addr; default \$realip_remote_addr; \}/);
  assert.match(fwd, /geo \$portico_peer_addr \$portico_trusted_peer \{/);
  assert.match(fwd, /map \$http_x_forwarded_for \$portico_forwarded_for \{ "" \$portico_peer_addr; default "\$http_x_forwarded_for, \$portico_peer_addr"; \}/);
  nginxTest(rt, fwd);
});

test('nginx.conf without the flag is the one Portico rendered before: the flag adds the passthrough parts and changes nothing else', () => {
  const rt = runtimePaths('/run/portico-pt');
  for (const global of [{}, { useProxyProtocol: true }, { useForwardedHeaders: true, computeFullForwardedFor: true, proxyRealIpCidr: ['10.0.0.0/8'] }, { enableRealIp: true, useHttp2: false }]) {
    const off = rendered({ flag: false, global, checksum: 'c' }, rt);
    const on = rendered({ flag: true, global, checksum: 'c' }, rt);
    for (const x of ['ssl_preread', 'https.sock', 'passthrough.sock', 'portico_peer_addr', 'set_real_ip_from unix:', 'ngx_stream_module']) assert.ok(!off.includes(x), `${x} without the flag`);
    assert.match(off, /\n    listen 127\.0\.0\.1:8443 ssl( http2)? default_server reuseport backlog=4096( proxy_protocol)?;\n    server_name _;/);
    // Take the passthrough parts out of the flag's nginx.conf: what is left is exactly nginx.conf without the flag.
    const httpsListen = /\n    listen 127\.0\.0\.1:8443 ssl[^\n]*/.exec(off)?.[0] ?? '';
    const back = on
      .replace(/\n  # TLS passthrough \(--enable-ssl-passthrough\): the HTTPS port belongs[\s\S]*?\n  server \{\n    listen unix:[\s\S]*?\n    location @portico_https \{ return 308 https:\/\/\$portico_redirect_host\$request_uri; \}\n  \}\n/, '')
      .replace(/\n  # The peer of a connection: [^\n]*\n  # [^\n]*\n  map \$realip_remote_addr \$portico_peer_addr [^\n]*/, '')
      .replace(/\$portico_peer_addr/g, '$realip_remote_addr')
      .replace(/(\n    listen 127\.0\.0\.1:8080 [^\n]*)/, `$1${httpsListen}`)
      .replace(/\nload_module "\/usr\/lib\/nginx\/modules\/ngx_stream_module\.so";/, '')
      .replace(/\n# TCP\/UDP services[\s\S]*$/, '\n');
    assert.equal(back, off, JSON.stringify(global));
  }
});

test('render: passthrough values that bypassed the schema cannot break out of their token', () => {
  const rt = runtimeDir();
  const base = translate(new Model().snapshot(), OPTS).config.structure;
  const good = { address: '127.0.0.1', port: 8443, hosts: [{ host: 'a.example.com', upstream: 0 }], terminated: [], upstreams: [{ endpoints: [{ address: '10.0.0.1', port: 443 }] }] };
  const bad: unknown[] = [
    { ...good, hosts: [{ host: 'a.example.com portico_https; }\nserver { listen 1', upstream: 0 }] },
    { ...good, hosts: [{ host: '~.*', upstream: 0 }] },
    { ...good, hosts: [{ host: 'A.example.com', upstream: 0 }] },
    { ...good, hosts: [{ host: 'a.example.com', upstream: '0; include /etc/passwd' }] },
    { ...good, terminated: ['$ssl_preread_server_name'] },
    { ...good, upstreams: [{ endpoints: [{ address: '10.0.0.1:80;\n}', port: 80 }] }] },
    { ...good, upstreams: [{ endpoints: [{ address: '10.0.0.1', port: '443 down' }] }] },
    { ...good, address: '127.0.0.1; include /etc/passwd' },
    { ...good, port: 70000 },
  ];
  for (const x of bad) {
    const s = { ...base, stream: { modulePath: STREAM_MODULE, servers: [], passthrough: x } } as Structure;
    assert.throws(() => renderNginxConf(s, rt, 'c'), UnsafeValueError, JSON.stringify(x));
  }
  const ok = { ...base, stream: { modulePath: STREAM_MODULE, servers: [], passthrough: good } } as Structure;
  nginxTest(rt, renderNginxConf(ok, rt, 'c'));
});
