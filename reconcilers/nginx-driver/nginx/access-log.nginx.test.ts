// The access log inside a real nginx (Debian's): the configuration comes from the pure translation (an Ingress, a
// canary by header on the same path), real backends answer in this file's network namespace (subnet 239), and the
// lines nginx writes to the runtime directory's access.log are checked field by field against the requests sent:
// ingress-nginx's default format, a JSON format (escape=json, parsed with JSON.parse), skip-access-log-urls, and
// X-Request-ID (32 lower-case hex characters, or the client's own; generate-request-id "false" sends the client's
// only). Ports 31850-31855 belong to this file: nginx 31850-31852, backends 31853 (api), 31854 (canary), the syslog
// server 31855.
import { after, before, test } from 'node:test';
import { createSocket } from 'node:dgram';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { defaultGlobalConfig, parseGlobalConfig } from '../../model/global-config.ts';
import { translate } from '../../translate/translate.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { until } from '../../../e2e/harness/http.ts';
import { TestNet } from './testnet.test-helpers.ts';
import { capturingLogger, liveNginx, sendTo, startLive } from './live.test-helpers.ts';

const LISTEN = { httpPort: 31850, httpsPort: 31851, statusPort: 31852, address: '127.0.0.1' };
/** The test's syslog server (UDP, loopback). */
const SYSLOG_PORT = 31855;
const net = new TestNet(239);
const { logger } = capturingLogger();

function config(data: Record<string, string>, loopId?: string) {
  const cfg = parseGlobalConfig(data, defaultGlobalConfig());
  assert.deepEqual(cfg.errors, []);
  const svcs = [['api', 31853], ['api-v2', 31854]] as const;
  const m = modelOf({
    services: svcs.map(([n, p]) => svc(n, [{ port: 80, targetPort: p }])),
    slices: svcs.map(([n, p]) => slice(`${n}-1`, n, [{ port: p }], [{ ip: net.ip }])),
    ingresses: [
      ing('web', { rules: [rule('shop.example.com', [{ path: '/api', backend: svcRef('api', 80) }])] }),
      ing('web-canary', { rules: [rule('shop.example.com', [{ path: '/api', backend: svcRef('api-v2', 80) }])] }, {
        annotations: { 'nginx.ingress.kubernetes.io/canary': 'true', 'nginx.ingress.kubernetes.io/canary-by-header': 'x-canary' },
      }),
    ],
  });
  m.setGlobalConfig(cfg.values);
  return translate(m.snapshot(), { ...OPTS, listen: LISTEN, ...(loopId ? { loopId } : {}) }).config;
}

/** Runs one nginx with `data` as the ConfigMap, and gives `fn` a reader of the access log's new lines. */
async function withNginx(data: Record<string, string>, fn: (lines: (n: number) => Promise<string[]>, file: string) => Promise<void>, loopId?: string): Promise<void> {
  const { dynamic, nginx } = liveNginx('portico-access-log-', logger);
  await startLive(nginx, dynamic, config(data, loopId));
  let seen = 0;
  // Lines are buffered (buffer=64k flush=1s for a file): wait for the next `n` of them, with a deadline.
  const lines = async (n: number) => {
    const got = await until(`${n} access-log lines`, async () => {
      let text = '';
      try {
        text = readFileSync(nginx.runtime.accessLog, 'utf8');
      } catch {
        return false;
      }
      const all = text.split('\n').filter(Boolean);
      return all.length >= seen + n && all.slice(seen);
    });
    seen += got.length;
    return got;
  };
  try {
    await fn(lines, nginx.runtime.accessLog);
  } finally {
    await nginx.stop();
    await dynamic.close();
  }
}

before(async () => {
  net.up();
  await net.start('api', 31853, 'echo');
  await net.start('api-v2', 31854, 'echo');
});
after(() => net.close());

// ingress-nginx's format: $remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent
// "$http_referer" "$http_user_agent" $request_length $request_time [$proxy_upstream_name]
// [$proxy_alternative_upstream_name] $upstream_addr $upstream_response_length $upstream_response_time
// $upstream_status $req_id
const LINE =
  /^(\S+) - (\S+) \[(\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4})\] "([^"]*)" (\d{3}) (\d+) "([^"]*)" "([^"]*)" (\d+) (\d+\.\d{3}) \[([^\]]*)\] \[([^\]]*)\] (\S+) (\S+) (\S+) (\S+) (\S*)$/;
function fields(line: string) {
  const m = LINE.exec(line);
  assert.ok(m, `not ingress-nginx's format: ${line}`);
  const [, addr, user, time, request, status, bytes, referer, ua, reqLen, reqTime, upstream, alt, upAddr, upLen, upTime, upStatus, reqId] = m;
  return { addr, user, time, request, status, bytes, referer, ua, reqLen, reqTime, upstream, alt, upAddr, upLen, upTime, upStatus, reqId };
}

test('the default format, field by field: a proxied request, the canary, the client\'s own X-Request-ID, an unknown host; skip-access-log-urls', async () => {
  await withNginx({ 'skip-access-log-urls': '/api/healthz,~^/api/skip/', 'enable-access-log-for-default-backend': 'true' }, async (lines) => {
    const a = await sendTo(LISTEN.httpPort, 'shop.example.com', '/api/x?q=1', { headers: { 'user-agent': 'portico-test/1', referer: 'http://ref.example/' } });
    assert.equal(a.status, 200);
    const sentId = (JSON.parse(a.body) as { headers: Record<string, string> }).headers['x-request-id'] ?? '';
    assert.match(sentId, /^[0-9a-f]{32}$/, 'a generated X-Request-ID is 32 lower-case hex characters');
    const [l1] = await lines(1);
    const f = fields(l1 as string);
    assert.equal(f.addr, '127.0.0.1');
    assert.equal(f.user, '-');
    assert.ok(Math.abs(Date.parse(f.time!.replace(/^(\d+)\/(\w+)\/(\d+):/, '$2 $1 $3 ')) - Date.now()) < 60_000, f.time);
    assert.equal(f.request, 'GET /api/x?q=1 HTTP/1.1');
    assert.equal(f.status, '200');
    // The body as sent to the client: the backend's chunked framing included.
    const chunked = a.headers['transfer-encoding'] === 'chunked' ? 12 : 0;
    assert.equal(Number(f.bytes), Buffer.byteLength(a.body) + chunked, l1);
    assert.equal(f.referer, 'http://ref.example/');
    assert.equal(f.ua, 'portico-test/1');
    assert.ok(Number(f.reqLen) > 40, f.reqLen);
    assert.equal(f.upstream, 'default-api-80');
    assert.equal(f.alt, '');
    assert.equal(f.upAddr, `${net.ip}:31853`);
    assert.equal(Number(f.upLen), Buffer.byteLength(a.body) + chunked, l1);
    assert.match(f.upTime!, /^\d+\.\d{3}$/);
    assert.equal(f.upStatus, '200');
    assert.equal(f.reqId, sentId, '$req_id is the id sent upstream');

    // Two requests: two different ids.
    const b = await sendTo(LISTEN.httpPort, 'shop.example.com', '/api/y');
    const id2 = (JSON.parse(b.body) as { headers: Record<string, string> }).headers['x-request-id'];
    assert.match(id2 ?? '', /^[0-9a-f]{32}$/);
    assert.notEqual(id2, sentId);
    assert.equal(fields((await lines(1))[0] as string).reqId, id2);

    // The client's own id is sent on and logged, whatever it looks like.
    const c = await sendTo(LISTEN.httpPort, 'shop.example.com', '/api/z', { headers: { 'x-request-id': 'client-id-1' } });
    assert.equal((JSON.parse(c.body) as { headers: Record<string, string> }).headers['x-request-id'], 'client-id-1');
    assert.equal(fields((await lines(1))[0] as string).reqId, 'client-id-1');

    // The canary served: the main upstream stays $proxy_upstream_name, the canary's is the alternative.
    const d = await sendTo(LISTEN.httpPort, 'shop.example.com', '/api/c', { headers: { 'x-canary': 'always' } });
    assert.equal(d.status, 200);
    const fc = fields((await lines(1))[0] as string);
    assert.deepEqual([fc.upstream, fc.alt, fc.upAddr], ['default-api-80', 'default-api-v2-80', `${net.ip}:31854`]);

    // No route: ingress-nginx's default backend name, no upstream ("-").
    const e = await sendTo(LISTEN.httpPort, 'unknown.example.org', '/nothing');
    assert.equal(e.status, 404);
    const fu = fields((await lines(1))[0] as string);
    assert.deepEqual([fu.status, fu.upstream, fu.alt, fu.upAddr, fu.upLen, fu.upTime, fu.upStatus], ['404', 'upstream-default-backend', '', '-', '-', '-', '-']);
    assert.match(fu.reqId!, /^[0-9a-f]{32}$/);

    // skip-access-log-urls: $request_uri as sent, exact strings exactly, regexes as nginx's map.
    for (const p of ['/api/healthz', '/api/skip/1', '/api/skip/2?x=1']) assert.equal((await sendTo(LISTEN.httpPort, 'shop.example.com', p)).status, 200);
    assert.equal((await sendTo(LISTEN.httpPort, 'shop.example.com', '/api/healthz?full=1')).status, 200);
    const [logged] = await lines(1);
    assert.equal(fields(logged as string).request, 'GET /api/healthz?full=1 HTTP/1.1', 'only the request no entry matched is logged');
  });
});

test('a JSON format with escape=json: every line parses with JSON.parse; ingress-nginx\'s variables without per-request metrics; generate-request-id "false"', async () => {
  const format =
    '{"time": "$time_iso8601", "status": $status, "bytes": $body_bytes_sent, "uri": "$request_uri", "ua": "$http_user_agent", "upstream": "$proxy_upstream_name", "alt": "$proxy_alternative_upstream_name", "req_id": "$req_id", "namespace": "$namespace", "ingress": "$ingress_name", "service": "$service_name", "port": "$service_port", "path": "$location_path", "upstream_status": "$upstream_status"}';
  await withNginx({ 'log-format-upstream': format, 'log-format-escape-json': 'true', 'generate-request-id': 'false', 'enable-access-log-for-default-backend': 'true' }, async (lines) => {
    const a = await sendTo(LISTEN.httpPort, 'shop.example.com', '/api/j', { headers: { 'user-agent': 'quote " backslash \\ tab\there' } });
    assert.equal(a.status, 200);
    assert.equal((JSON.parse(a.body) as { headers: Record<string, string> }).headers['x-request-id'], undefined, 'no id generated: none sent');
    const j = JSON.parse((await lines(1))[0] as string) as Record<string, unknown>;
    assert.equal(j.status, 200);
    assert.equal(j.bytes, Buffer.byteLength(a.body) + (a.headers['transfer-encoding'] === 'chunked' ? 12 : 0));
    assert.equal(j.uri, '/api/j');
    assert.equal(j.ua, 'quote " backslash \\ tab\there');
    assert.deepEqual([j.upstream, j.alt, j.req_id, j.namespace, j.ingress, j.service, j.port, j.path, j.upstream_status], ['default-api-80', '', '', 'default', 'web', 'api', '80', '/api', '200']);
    assert.ok(!Number.isNaN(Date.parse(j.time as string)));

    await sendTo(LISTEN.httpPort, 'shop.example.com', '/api/j2', { headers: { 'x-canary': 'always', 'x-request-id': 'mine' } });
    const c = JSON.parse((await lines(1))[0] as string) as Record<string, unknown>;
    assert.deepEqual([c.upstream, c.alt, c.req_id, c.namespace, c.ingress, c.service, c.port, c.path], ['default-api-80', 'default-api-v2-80', 'mine', 'default', 'web', 'api', '80', '/api'], 'the canary keeps the main Ingress and Service, as ingress-nginx');

    // A known host, no path: the host's first Ingress and "/", as ingress-nginx's root location; an unknown host: empty.
    assert.equal((await sendTo(LISTEN.httpPort, 'shop.example.com', '/other')).status, 404);
    const h = JSON.parse((await lines(1))[0] as string) as Record<string, unknown>;
    assert.deepEqual([h.status, h.upstream, h.namespace, h.ingress, h.service, h.port, h.path, h.upstream_status], [404, 'upstream-default-backend', 'default', 'web', '', '', '/', '']);
    assert.equal((await sendTo(LISTEN.httpPort, 'nobody.example.org', '/')).status, 404);
    const u = JSON.parse((await lines(1))[0] as string) as Record<string, unknown>;
    assert.deepEqual([u.upstream, u.alt, u.namespace, u.ingress, u.service, u.port, u.path], ['upstream-default-backend', '', '', '', '', '', '']);
  });
});

test('requests no host or path matched are not logged unless enable-access-log-for-default-backend (ingress-nginx\'s default backend)', async () => {
  await withNginx({}, async (lines) => {
    assert.equal((await sendTo(LISTEN.httpPort, 'unknown.example.org', '/nothing')).status, 404);
    assert.equal((await sendTo(LISTEN.httpPort, 'shop.example.com', '/elsewhere')).status, 404);
    assert.equal((await sendTo(LISTEN.httpPort, 'shop.example.com', '/api/after')).status, 200);
    const [first] = await lines(1);
    assert.equal(fields(first as string).request, 'GET /api/after HTTP/1.1', 'the two unmatched requests left no line');
  });
});

test('enable-syslog: the access log goes to the syslog server over UDP (RFC 3164 lines, ingress-nginx\'s format), not to the file', async () => {
  const sock = createSocket('udp4');
  const got: string[] = [];
  sock.on('message', (m) => got.push(m.toString('utf8')));
  await new Promise<void>((r) => sock.bind(SYSLOG_PORT, '127.0.0.1', () => r()));
  try {
    await withNginx({ 'enable-syslog': 'true', 'syslog-host': '127.0.0.1', 'syslog-port': String(SYSLOG_PORT) }, async (_lines, file) => {
      assert.equal((await sendTo(LISTEN.httpPort, 'shop.example.com', '/api/to-syslog')).status, 200);
      const line = await until('the syslog message', () => got.find((m) => m.includes('/api/to-syslog')), 10_000);
      // "<priority>timestamp host tag: message": nginx's syslog framing around the usual line.
      assert.match(line, /^<\d+>[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \S+ nginx: /);
      fields(line.replace(/^.*? nginx: /, ''));
      // Nothing in the file: a later request with the file log would show up there; syslog replaces it.
      assert.equal((await sendTo(LISTEN.httpPort, 'shop.example.com', '/api/second')).status, 200);
      await until('the second message', () => got.some((m) => m.includes('/api/second')), 10_000);
      let text = '';
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        text = '';
      }
      assert.ok(!text.includes('/api/to-syslog'), 'the access log file has no line of it');
    });
  } finally {
    sock.close();
  }
});

test('loop detection: this installation\'s id in X-Portico-Hop gets 508, logged as a request no route answered (with the client\'s X-Request-ID, else a generated one, as every line); another id is proxied with ours appended; checked before the global filters', async () => {
  const loopId = '0123456789abcdef';
  const hopSent = (a: { body: string }) => (JSON.parse(a.body) as { headers: Record<string, string> }).headers['x-portico-hop'];
  const looped = async (lines: (n: number) => Promise<string[]>, headers: Record<string, string>) => {
    const a = await sendTo(LISTEN.httpPort, 'shop.example.com', '/api/x', { headers });
    assert.equal(a.status, 508);
    const f = fields((await lines(1))[0] as string);
    // $req_id as ingress-nginx's: the client's X-Request-ID, else an id made when the line is written.
    const id = headers['x-request-id'] ?? (/^[0-9a-f]{32}$/.test(f.reqId ?? '') ? f.reqId : 'a generated id');
    assert.deepEqual([f.status, f.request, f.upstream, f.alt, f.upAddr, f.upLen, f.upTime, f.upStatus, f.reqId], ['508', 'GET /api/x HTTP/1.1', 'upstream-default-backend', '', '-', '-', '-', '-', id]);
    assert.equal(Number(f.bytes), Buffer.byteLength(a.body));
  };
  await withNginx({}, async (lines) => {
    await looped(lines, { 'x-portico-hop': `fedcba9876543210, ${loopId}` });
    await looped(lines, { 'x-portico-hop': `${loopId},x` });
    await looped(lines, { 'x-portico-hop': loopId, 'x-request-id': 'client-id-2' });
    for (const other of ['', `x${loopId}`, `${loopId}0`, loopId.toUpperCase(), 'fedcba9876543210']) {
      const a = await sendTo(LISTEN.httpPort, 'shop.example.com', '/api/x', { headers: other ? { 'x-portico-hop': other } : {} });
      assert.equal(a.status, 200, other);
      assert.equal(hopSent(a), other ? `${other}, ${loopId}` : loopId);
      assert.equal(fields((await lines(1))[0] as string).upstream, 'default-api-80');
    }
  }, loopId);
  // The check comes before the ConfigMap's global filters: a blocked client that loops gets 508.
  await withNginx({ 'block-user-agents': 'blocked-agent' }, async (lines) => {
    await looped(lines, { 'x-portico-hop': loopId, 'user-agent': 'blocked-agent' });
    assert.equal((await sendTo(LISTEN.httpPort, 'shop.example.com', '/api/x', { headers: { 'user-agent': 'blocked-agent' } })).status, 403);
    await lines(1);
    const a = await sendTo(LISTEN.httpPort, 'shop.example.com', '/api/x', { headers: { 'x-portico-hop': 'fedcba9876543210' } });
    assert.equal(hopSent(a), `fedcba9876543210, ${loopId}`);
    await lines(1);
  }, loopId);
});
