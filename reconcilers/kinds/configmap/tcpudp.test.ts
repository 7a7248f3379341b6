import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseStreamServices, reservedPorts, streamValueSchema, TcpUdpReconciler } from './tcpudp.ts';
import { Model } from '../../model/model.ts';
import type { EventRecorder } from '../../../operator/events.ts';
import type { Informer } from '../../../operator/informer.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';

const RESERVED = new Set([8080, 8443, 10246, 10254]);

test('value schema: ingress-nginx format, port number or name, PROXY flags (case-insensitive, empty field allowed)', () => {
  const ok = (v: string) => {
    const r = streamValueSchema.safeParse(v);
    assert.ok(r.success, `${v}: ${r.success ? '' : r.error.issues[0]?.message}`);
    return r.data;
  };
  assert.deepEqual(ok('default/example-go:8080'), { namespace: 'default', service: 'example-go', servicePort: 8080, decodeProxy: false, encodeProxy: false });
  assert.deepEqual(ok('db/pg:postgres:PROXY'), { namespace: 'db', service: 'pg', servicePort: 'postgres', decodeProxy: true, encodeProxy: false });
  assert.deepEqual(ok('db/pg:5432:proxy:PROXY'), { namespace: 'db', service: 'pg', servicePort: 5432, decodeProxy: true, encodeProxy: true });
  assert.deepEqual(ok('db/pg:5432::PROXY'), { namespace: 'db', service: 'pg', servicePort: 5432, decodeProxy: false, encodeProxy: true });
  // Service port names are DNS-1123 labels: kubectl create service names them "8080-8080".
  assert.deepEqual(ok('default/web:8080-8080'), { namespace: 'default', service: 'web', servicePort: '8080-8080', decodeProxy: false, encodeProxy: false });
});

test('value schema: refuses anything else, including nginx.conf injection payloads', () => {
  const bad = [
    '', 'default/svc', 'svc:80', 'a/b/c:80', 'default/svc:80:PROXY:PROXY:PROXY', 'default/svc:0', 'default/svc:65536', 'default/svc:080',
    'default/svc:80:PROX', 'Default/svc:80', 'default/Svc:80', 'default/svc:Http', `default/svc:${'p'.repeat(64)}`, 'default/svc:123-', 'default/svc:0123',
    'default/svc:80;', 'default/svc:80; include /etc/passwd', 'default/svc:80}', 'default/svc:80 }', 'default/svc:80\nserver {', 'default/svc:80#',
    'default/svc:$remote_addr', 'default/svc:80:$x', 'default/"svc":80', "default/'svc':80", 'default/svc:80\u0000', 'default/sv\u0000c:80',
    ' default/svc:80', 'default/svc:80 ', 'default/svc\t:80', `default/${'a'.repeat(64)}:80`, `${'a'.repeat(64)}/svc:80`,
  ];
  for (const v of bad) assert.equal(streamValueSchema.safeParse(v).success, false, JSON.stringify(v));
  assert.equal(streamValueSchema.safeParse(42).success, false);
});

test('parse: bad keys and values are left out by key, the rest kept; reserved ports refused; PROXY ignored on UDP', () => {
  const r = parseStreamServices('TCP', 'ingress/tcp', {
    '9000': 'default/example-go:8080',
    '5432': 'db/pg:postgres:PROXY:PROXY',
    '8080': 'default/web:80', // Portico's HTTP port
    '0': 'default/x:1',
    '70000': 'default/x:1',
    '09': 'default/x:1',
    'abc': 'default/x:1',
    '9001': 'default/x:1;}',
    '9002': 'default/x:1\n#',
  }, RESERVED);
  assert.deepEqual(r.entries.map((e) => [e.port, e.namespace, e.service, e.servicePort, e.decodeProxy, e.encodeProxy, e.key]), [
    [5432, 'db', 'pg', 'postgres', true, true, '5432'],
    [9000, 'default', 'example-go', 8080, false, false, '9000'],
  ]);
  assert.deepEqual(r.errors.map((e) => e.key).sort(), ['0', '09', '70000', '8080', '9001', '9002', 'abc']);
  assert.match(r.errors.find((e) => e.key === '8080')?.message ?? '', /Portico's own listeners/);
  for (const e of r.errors) assert.ok(e.message.includes(JSON.stringify(e.key)), `the message names the key: ${e.message}`);
  const u = parseStreamServices('UDP', 'ingress/udp', { '53': 'kube-system/dns:53:PROXY' }, RESERVED);
  assert.equal(u.entries.length, 1);
  assert.equal(u.entries[0]?.decodeProxy, false);
  assert.equal(u.warnings.length, 1);
});

test('reservedPorts: HTTP, HTTPS, status, health and (when on) webhook ports', () => {
  const cfg = { 'http-port': 1, 'https-port': 2, 'status-port': 3, 'health-addr': { port: 4 }, 'webhook-port': 0 };
  assert.deepEqual(reservedPorts(cfg), [1, 2, 3, 4]);
  assert.deepEqual(reservedPorts({ ...cfg, 'webhook-port': 5 }), [1, 2, 3, 4, 5]);
});

test('reconciler: entries into the model, a Warning Event on the ConfigMap per bad key, deletion empties the model', async () => {
  const model = new Model();
  const changes: string[] = [];
  model.onChange((cs) => changes.push(...cs.map((c) => `${c.kind}/${c.key}`)));
  const events: { reason: string; note: string; name: string }[] = [];
  const recorder = { event: (o: KubeObject, _t: string, reason: string, _a: string, note: string) => events.push({ reason, note, name: o.metadata.name ?? '' }) } as unknown as EventRecorder;
  const store = new Map<string, KubeObject & { data?: Record<string, string> }>();
  const informer = { store: { get: (k: string) => store.get(k) } } as unknown as Informer<KubeObject & { data?: Record<string, string> }>;
  const rec = new TcpUdpReconciler({ protocol: 'TCP', informer, model, events: recorder, key: 'ingress/tcp', reservedPorts: RESERVED });
  store.set('ingress/tcp', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'tcp', namespace: 'ingress' }, data: { '9000': 'default/a:80', '9001': 'default/b:80;' } });
  await rec.reconcile({} as never, 'ingress/tcp');
  assert.deepEqual(model.streamServices().map((e) => e.port), [9000]);
  assert.deepEqual(events.map((e) => [e.reason, e.name]), [['InvalidServiceEntry', 'tcp']]);
  assert.match(events[0]?.note ?? '', /"9001"/);
  assert.deepEqual(changes, ['Stream/TCP']);
  await rec.reconcile({} as never, 'ingress/tcp'); // unchanged: no model change
  assert.deepEqual(changes, ['Stream/TCP']);
  store.delete('ingress/tcp');
  await rec.reconcile({} as never, 'ingress/tcp');
  assert.deepEqual(model.streamServices(), []);
  assert.deepEqual(changes, ['Stream/TCP', 'Stream/TCP']);
});
