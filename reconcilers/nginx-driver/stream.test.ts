import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Model } from '../model/model.ts';
import { normalizeEndpointSlice, normalizeService } from '../model/normalize.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import type { EventRecorder } from '../../operator/events.ts';
import type { Logger } from '../../operator/log.ts';
import { parseStreamServices } from '../tcpudp.ts';
import { STREAM_MODULE, StreamServices, streamSection } from './stream.ts';
import { renderNginxConf } from './nginx/render.ts';
import { nginxTest, runtimeDir } from './nginx/nginx-t.test-helpers.ts';
import { UnsafeValueError } from './nginx/escape.ts';
import { translate } from '../translate/translate.ts';
import { diffConfig, structureChecksum } from '../translate/diff.ts';
import { OPTS } from '../translate/fixtures.test-helpers.ts';
import type { Structure } from '../config/types.ts';
import { STREAM_VARIABLES } from '../values/nginx-variables.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../model/global-config.ts';

const svc = (name: string, ports: { name?: string; port: number; protocol?: string }[], extra: Record<string, unknown> = {}): KubeObject =>
  ({ metadata: { name, namespace: 'default' }, spec: { ports, ...extra } }) as KubeObject;
const slice = (name: string, service: string, ports: { name?: string; port: number; protocol: string }[], ips: { ip: string; ready?: boolean }[]): KubeObject =>
  ({
    metadata: { name, namespace: 'default', labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    ports,
    endpoints: ips.map((e) => ({ addresses: [e.ip], conditions: { ready: e.ready ?? true, serving: e.ready ?? true, terminating: false } })),
  }) as KubeObject;

function model(tcp: Record<string, string>, udp: Record<string, string> = {}): Model {
  const m = new Model();
  m.setService(normalizeService(svc('db', [{ name: 'pg', port: 5432 }, { name: 'dns', port: 53, protocol: 'UDP' }])));
  m.setService(normalizeService(svc('ext', [{ port: 80 }], { type: 'ExternalName', externalName: 'example.com' })));
  const sl = normalizeEndpointSlice(
    slice('db-1', 'db', [{ name: 'pg', port: 15432, protocol: 'TCP' }, { name: 'dns', port: 1053, protocol: 'UDP' }], [
      { ip: '10.0.0.2' }, { ip: '10.0.0.1' }, { ip: '127.0.0.1' }, { ip: '169.254.169.254' }, { ip: '10.0.0.9' }, { ip: '10.0.0.3', ready: false },
    ]),
  );
  if (sl) m.setEndpointSlices('default/db', [sl]);
  const reserved = new Set([8080]);
  m.setStreamServices('TCP', parseStreamServices('TCP', 'ingress/tcp', tcp, reserved).entries);
  m.setStreamServices('UDP', parseStreamServices('UDP', 'ingress/udp', udp, reserved).entries);
  return m;
}

const OWN = new Set(['10.0.0.9']);
const O = { own: OWN, address: '127.0.0.1', modulePath: STREAM_MODULE };

test('stream section: endpoints filtered like HTTP ones (loopback, link-local, own addresses, not ready), per protocol', () => {
  const m = model({ '5000': 'default/db:pg:PROXY:PROXY', '5001': 'default/db:5432', '5002': 'default/missing:1', '5003': 'default/db:53', '5004': 'default/ext:80' }, { '5000': 'default/db:dns' });
  const { section, problems } = streamSection(m, O);
  assert.ok(section);
  const eps = [{ address: '10.0.0.1', port: 15432 }, { address: '10.0.0.2', port: 15432 }];
  assert.deepEqual(section.servers.map((s) => [s.udp, s.port, s.decodeProxy, s.encodeProxy, s.endpoints]), [
    [false, 5000, true, true, eps],
    [false, 5001, false, false, eps],
    [false, 5002, false, false, []],
    [false, 5003, false, false, []], // port 53 of db is UDP: no TCP port 53
    [false, 5004, false, false, []],
    [true, 5000, false, false, [{ address: '10.0.0.1', port: 1053 }, { address: '10.0.0.2', port: 1053 }]],
  ]);
  const reasons = problems.map((p) => `${p.key}:${p.reason}`).sort();
  assert.deepEqual(reasons, ['5000:ForbiddenEndpoint', '5000:ForbiddenEndpoint', '5001:ForbiddenEndpoint', '5002:ServiceNotFound', '5003:ServicePortNotFound', '5004:ExternalNameNotSupported']);
  const forbidden = problems.find((p) => p.reason === 'ForbiddenEndpoint')?.message ?? '';
  for (const a of ['127.0.0.1', '169.254.169.254', '10.0.0.9']) assert.ok(forbidden.includes(a), forbidden);
});

test('stream section: none without entries; a missing module gives one clear problem per ConfigMap and no section', () => {
  assert.deepEqual(streamSection(model({}), O), { section: null, problems: [] });
  const r = streamSection(model({ '5000': 'default/db:pg', '5001': 'default/db:pg' }, { '5000': 'default/db:dns' }), { ...O, modulePath: '/nonexistent/ngx_stream_module.so' });
  assert.equal(r.section, null);
  assert.deepEqual(r.problems.map((p) => [p.configMap, p.reason]), [['ingress/tcp', 'StreamModuleMissing'], ['ingress/udp', 'StreamModuleMissing']]);
  assert.match(r.problems[0]?.message ?? '', /libnginx-mod-stream/);
});

test('StreamServices: reports each problem once (as a Warning Event on the ConfigMap), knows which Services it renders', () => {
  const m = model({ '5002': 'default/missing:1', '5000': 'default/db:pg' });
  const events: string[] = [];
  const rec = { event: (o: KubeObject, t: string, reason: string) => events.push(`${o.kind}/${o.metadata.namespace}/${o.metadata.name} ${t} ${reason}`) } as unknown as EventRecorder;
  const log = { warn: () => undefined } as unknown as Logger;
  const s = new StreamServices(m, rec, log, { own: OWN, address: '127.0.0.1' });
  const base: Structure = translate(m.snapshot(), OPTS).config.structure;
  const a = s.apply(base);
  const b = s.apply(base);
  assert.ok(a.stream && b.stream);
  assert.deepEqual(events, ['ConfigMap/ingress/tcp Warning ForbiddenEndpoint', 'ConfigMap/ingress/tcp Warning ServiceNotFound']);
  assert.equal(s.uses('default/db'), true);
  assert.equal(s.uses('default/other'), false);
  // Without entries the structure is the very same object (nothing changes for clusters without TCP/UDP services).
  const empty = new StreamServices(model({}), rec, log, { own: OWN, address: '127.0.0.1' });
  assert.equal(empty.apply(base), base);
  // An endpoint change is a structure change: a reload, with a reason saying why.
  const moved: Structure = { ...a, stream: { ...a.stream, servers: a.stream.servers.map((x) => ({ ...x, endpoints: [] })) } };
  const d = diffConfig({ structure: a, data: { routes: {}, backends: {}, certificates: {}, defaultCertificate: null, plugins: {}, consumers: {} } }, { structure: moved, data: { routes: {}, backends: {}, certificates: {}, defaultCertificate: null, plugins: {}, consumers: {} } });
  assert.equal(d.reload, true);
  assert.deepEqual(d.reasons, ['TCP/UDP services or their endpoints changed']);
});

test('render: stream section with load_module, upstreams, PROXY flags, UDP, closing listeners; passes nginx -t', () => {
  const m = model({ '5000': 'default/db:pg:PROXY:PROXY', '5002': 'default/missing:1' }, { '5000': 'default/db:dns' });
  const base = translate(m.snapshot(), OPTS).config.structure;
  const noStream = renderNginxConf(base, runtimeDir(), structureChecksum(base));
  assert.ok(!/ngx_stream_module|^stream \{/m.test(noStream), 'no TCP/UDP services: no stream module, no stream section');
  const s = { ...base, stream: streamSection(m, O).section ?? undefined };
  const rt = runtimeDir();
  const conf = renderNginxConf(s, rt, structureChecksum(s));
  assert.match(conf, new RegExp(`load_module "${STREAM_MODULE}";`));
  assert.match(conf, /upstream portico_tcp_5000 \{\n\s+server 10\.0\.0\.1:15432;\n\s+server 10\.0\.0\.2:15432;\n\s+\}/);
  assert.match(conf, /listen 127\.0\.0\.1:5000 proxy_protocol;\n[^}]*set_real_ip_from 0\.0\.0\.0\/0;\n[^}]*proxy_pass portico_tcp_5000;/);
  assert.equal(conf.match(/set_real_ip_from/g)?.length, 2, 'only the listener that decodes PROXY trusts its header');
  assert.match(conf, /proxy_protocol on;/);
  assert.match(conf, /listen 127\.0\.0\.1:5002;\n\s+return "";/);
  assert.match(conf, /upstream portico_udp_5000 \{\n\s+server 10\.0\.0\.1:1053;/);
  assert.match(conf, /listen 127\.0\.0\.1:5000 udp;\n\s+proxy_pass portico_udp_5000;\n[^}]*proxy_responses 1;/);
  assert.ok(!conf.includes('127.0.0.1:15432') && !conf.includes('169.254'), 'refused endpoints never reach nginx.conf');
  nginxTest(rt, conf);
});

test('render: the stream access log is ingress-nginx\'s format by default; log-format-stream with every stream variable, access-log-params and disable-access-log pass nginx -t', () => {
  const m = model({ '5000': 'default/db:pg' });
  const base = translate(m.snapshot(), OPTS).config.structure;
  const stream = streamSection(m, O).section ?? undefined;
  const rt = runtimeDir();
  const plain = renderNginxConf({ ...base, stream }, rt, 'c');
  assert.match(plain, /log_format portico_stream '\[\$remote_addr\] \[\$time_local\] \$protocol \$status \$bytes_sent \$bytes_received \$session_time';\n\s+access_log "[^"]+" portico_stream buffer=64k flush=1s;/);
  nginxTest(rt, plain);
  const everything = `{${[...STREAM_VARIABLES].map((v) => `"${v}": "$${v}"`).join(', ')}}`;
  const cfg = parseGlobalConfig({ 'log-format-stream': everything, 'access-log-params': 'buffer=8k gzip=5 flush=2s' }, defaultGlobalConfig());
  assert.deepEqual(cfg.errors, []);
  const s = { ...base, global: { ...base.global, logFormatStream: cfg.values.logFormatStream, accessLogParams: cfg.values.accessLogParams }, stream };
  const conf = renderNginxConf(s, rt, 'c');
  assert.ok(conf.includes(`log_format portico_stream '${everything}';`));
  assert.match(conf, /access_log "[^"]+" portico_stream buffer=8k gzip=5 flush=2s;/);
  nginxTest(rt, conf);
  const off = renderNginxConf({ ...s, global: { ...s.global, disableAccessLog: true } }, rt, 'c');
  assert.equal(off.match(/^  access_log off;$/gm)?.length, 2, 'http and stream');
  nginxTest(rt, off);
});

test('render: values that bypassed the schema cannot break out of their token', () => {
  const base = translate(new Model().snapshot(), OPTS).config.structure;
  const rt = runtimeDir();
  const server = { udp: false, address: '127.0.0.1', port: 5000, decodeProxy: false, encodeProxy: false, endpoints: [{ address: '10.0.0.1', port: 80 }] };
  const bad: unknown[] = [
    { ...server, address: '127.0.0.1; include /etc/passwd' },
    { ...server, port: '5000;}' },
    { ...server, port: 70000 },
    { ...server, endpoints: [{ address: '10.0.0.1:80;\n}', port: 80 }] },
    { ...server, endpoints: [{ address: '10.0.0.1', port: '80 # x' }] },
    { ...server, endpoints: [{ address: '$remote_addr', port: 80 }] },
  ];
  for (const x of bad) {
    const s = { ...base, stream: { modulePath: STREAM_MODULE, servers: [x] } } as Structure;
    assert.throws(() => renderNginxConf(s, rt, 'c'), UnsafeValueError, JSON.stringify(x));
  }
  for (const mp of ['/x";\nload_module /evil.so', '/x$y']) {
    const s = { ...base, stream: { modulePath: mp, servers: [server] } } as Structure;
    assert.throws(() => renderNginxConf(s, rt, 'c'), UnsafeValueError);
  }
});
