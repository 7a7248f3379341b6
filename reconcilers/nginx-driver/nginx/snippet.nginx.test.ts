// ingress-nginx snippets through the real data plane: an Ingress with configuration-snippet and server-snippet
// annotations and a ConfigMap that allows them go through the translation (compiled by
// reconcilers/annotations/snippets.ts), are pushed to a real nginx (Debian's, as in production) over the
// configuration socket, and real requests show the effect: response and request headers set, a conditional return
// answered by Portico, a rewrite seen by the backend, a redirect, and $1 from an if regex.
// The backend is the echo server of testnet.test-helpers.ts in this file's own network namespace (subnet 198.19.251.0/30).
// Ports 31500-31503 belong to this file: nginx 31500-31502, the echo backend 31503.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import winston from 'winston';
import { translate } from '../../translate/translate.ts';
import { diffConfig } from '../../translate/diff.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../../model/global-config.ts';
import { DynamicClient } from './dynamic.ts';
import { NginxProcess } from './process.ts';
import { runtimePaths } from './render.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { TestNet, type Seen } from './testnet.test-helpers.ts';
import { startLive, stopLive } from './live.test-helpers.ts';

const LISTEN = { httpPort: 31500, httpsPort: 31501, statusPort: 31502, address: '127.0.0.1' };
const ECHO_PORT = 31503;
const net = new TestNet(251);

const nginxLines: string[] = [];
const logger = winston.createLogger({
  level: 'info',
  format: winston.format.json(),
  transports: [new winston.transports.Stream({ stream: new Writable({ write(chunk: Buffer, _e, cb) { nginxLines.push(chunk.toString()); cb(); } }) })],
});
const dir = mkdtempSync(path.join(tmpdir(), 'portico-snippet-'));
const dynamic = new DynamicClient();
const nginx = new NginxProcess({ binary: '/usr/sbin/nginx', runtime: runtimePaths(dir), shutdownTimeoutMs: 2_000 }, dynamic, logger);

const CONFIGURATION_SNIPPET = `
more_set_headers "X-Frame-Options: DENY" "X-Served-Host: $host";
add_header X-Always "yes" always;
more_set_input_headers "X-Tenant: $tenant";
proxy_set_header X-Original-Uri $request_uri;
if ($http_x_block = "1") {
  add_header X-Why "blocked by snippet" always;
  return 403 "blocked\\n";
}
if ($uri ~ ^/users/([a-z]+)$) {
  more_set_headers "X-User: $1";
}
rewrite ^/old/(.*)$ /new/$1 break;
rewrite ^/go/(.*)$ https://docs.example.com/$1? permanent;
`;
const SERVER_SNIPPET = 'set $tenant "acme";';

function config(): GatewayConfig {
  const m = modelOf({
    services: [svc('web', [{ port: 80, targetPort: ECHO_PORT }])],
    slices: [slice('web-1', 'web', [{ port: ECHO_PORT }], [{ ip: net.ip }])],
    ingresses: [
      ing('app', { rules: [rule('snip.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }, {
        annotations: {
          'nginx.ingress.kubernetes.io/configuration-snippet': CONFIGURATION_SNIPPET,
          'nginx.ingress.kubernetes.io/server-snippet': SERVER_SNIPPET,
        },
      }),
    ],
  });
  const g = parseGlobalConfig({ 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' }, defaultGlobalConfig());
  m.setGlobalConfig(g.values);
  const r = translate(m.snapshot(), { ...OPTS, listen: LISTEN });
  const refused = r.events.filter((e) => e.reason === 'InvalidSnippet' || e.reason === 'RiskyAnnotation');
  assert.deepEqual(refused, [], 'the snippets compile');
  assert.ok(r.config.data.plugins['ing.default.app.snippet'], 'the snippet plugin is in the configuration');
  return r.config;
}

before(async () => {
  net.up(); // throws (the tests fail) when the namespace cannot be made
  await net.start('echo', ECHO_PORT, 'echo');
  const running = config();
  await startLive(nginx, dynamic, running);
});
after(() => stopLive(nginx, dynamic, net));

interface Answer { status: number; headers: http.IncomingHttpHeaders; body: string }
function send(p: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: LISTEN.httpPort, path: p, headers: { host: 'snip.example.com', ...headers }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}
function seen(a: Answer): Seen {
  assert.equal(a.status, 200, `proxied to the backend: ${a.status} ${a.body}\n${nginxLines.slice(-5).join('')}`);
  return JSON.parse(a.body) as Seen;
}

test('headers: response headers from more_set_headers / add_header, request headers from more_set_input_headers / proxy_set_header', async () => {
  const a = await send('/page?x=1');
  const got = seen(a);
  assert.equal(a.headers['x-frame-options'], 'DENY');
  assert.equal(a.headers['x-served-host'], 'snip.example.com');
  assert.equal(a.headers['x-always'], 'yes');
  assert.equal(got.headers['x-tenant'], 'acme', 'the server-snippet variable reaches the configuration-snippet');
  assert.equal(got.headers['x-original-uri'], '/page?x=1');
  assert.equal(a.headers['x-why'], undefined);
});

test('if + return: a matching condition is answered by Portico with the text and the headers; the backend sees nothing', async () => {
  const before = (await net.requests('echo')).length;
  const a = await send('/page', { 'x-block': '1' });
  assert.equal(a.status, 403);
  assert.equal(a.body, 'blocked\n');
  assert.equal(a.headers['x-why'], 'blocked by snippet');
  assert.equal(a.headers['x-always'], 'yes');
  assert.equal((await net.requests('echo')).length, before, 'not proxied');
  // Any other value of the header is proxied.
  assert.equal((await send('/page', { 'x-block': '0' })).status, 200);
});

test('rewrite: the backend receives the rewritten path (query kept); a permanent rewrite to a URL redirects', async () => {
  const got = seen(await send('/old/a/b?q=1'));
  assert.equal(got.url, '/new/a/b?q=1');
  const r = await send('/go/intro?drop=me');
  assert.equal(r.status, 301);
  assert.equal(r.headers.location, 'https://docs.example.com/intro');
});

test('if regex: $1 of the condition in a response header', async () => {
  const a = await send('/users/alice');
  seen(a);
  assert.equal(a.headers['x-user'], 'alice');
  const b = await send('/users/Alice1');
  assert.equal(b.headers['x-user'], undefined);
});
