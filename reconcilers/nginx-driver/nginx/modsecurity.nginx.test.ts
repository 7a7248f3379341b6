// ModSecurity inside a real nginx (Debian's connector module, libmodsecurity3 and the OWASP CRS): the configuration
// is the pure translation of Ingresses carrying ingress-nginx's ModSecurity annotations, its rules files written as the
// gateway writes them, rendered, checked by nginx -t and loaded; the backend ("echo" kind of testnet-backend.test-helpers.ts) lives
// in this file's own network namespace (testnet.test-helpers.ts subnet 241). What is observed: blocking with the CRS and
// `SecRuleEngine On` (403 for an SQL injection and a <script>, 200 for a normal request, with the transaction id in
// nginx's log), DetectionOnly (200, and the audit record in the controller's log), a host without the annotations left
// alone, and SecRuleRemoveById letting exactly the removed rules' matches through.
// Ports 32500-32509 belong to this file: nginx 32500-32502, the backend 32503.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import winston from 'winston';
import { translate } from '../../translate/translate.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../../model/global-config.ts';
import { DynamicClient } from './dynamic.ts';
import { NginxProcess } from './process.ts';
import { runtimePaths } from './render.ts';
import { detectModsecurity, writeModsecurityRules } from './modsecurity.ts';
import { TestNet } from './testnet.test-helpers.ts';
import { startLive, stopLive } from './live.test-helpers.ts';

const LISTEN = { httpPort: 32500, httpsPort: 32501, statusPort: 32502, address: '127.0.0.1' };
const BACKEND_PORT = 32503;
const net = new TestNet(241);
const dir = mkdtempSync(path.join(tmpdir(), 'portico-modsec-live-'));
const dynamic = new DynamicClient();
/** What nginx wrote to its stderr, as the controller logs it (level, source, message). */
const logged: { level: string; source?: string; message: string }[] = [];
const sink = new Writable({
  objectMode: true,
  write(info: { level: string; source?: string; message: string }, _enc, cb) {
    logged.push({ level: info.level, source: info.source, message: info.message });
    cb();
  },
});
const logger = winston.createLogger({ level: 'info', transports: [new winston.transports.Stream({ stream: sink })] });
const nginx = new NginxProcess({ binary: '/usr/sbin/nginx', runtime: runtimePaths(path.join(dir, 'rt')), shutdownTimeoutMs: 2_000 }, dynamic, logger);

const A = 'nginx.ingress.kubernetes.io/';
const WAF = { [`${A}enable-modsecurity`]: 'true', [`${A}enable-owasp-core-rules`]: 'true' };
const HOSTS: Record<string, Record<string, string>> = {
  'plain.example.com': {},
  'block.example.com': { ...WAF, [`${A}modsecurity-snippet`]: 'SecRuleEngine On', [`${A}modsecurity-transaction-id`]: 'tx-block-$request_id' },
  'detect.example.com': { ...WAF },
  'removed.example.com': { ...WAF, [`${A}modsecurity-snippet`]: '# the XSS rules of the CRS are removed\nSecRuleEngine On\nSecRuleRemoveById 941000-941999' },
};

const SQLI = "/search?q=1'%20OR%20'1'='1";
const XSS = (marker: string) => `/search?${marker}=<script>alert(1)</script>`;

function get(host: string, p: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: LISTEN.httpPort, path: p, headers: { host, 'user-agent': 'portico-test' }, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The controller-log lines matching `pred`, once one appears within the deadline (nginx writes them asynchronously). */
async function loggedWithin(pred: (l: { level: string; source?: string; message: string }) => boolean, ms = 10_000): Promise<{ level: string; source?: string; message: string }[]> {
  const end = Date.now() + ms;
  for (;;) {
    const hits = logged.filter(pred);
    if (hits.length || Date.now() > end) return hits;
    await sleep(50);
  }
}

before(async () => {
  const install = detectModsecurity();
  assert.deepEqual(install, { crs: true }, 'libnginx-mod-http-modsecurity and modsecurity-crs are installed (e2e/setup/install-deps.sh)');
  net.up();
  await net.start('app', BACKEND_PORT, 'echo');
  const m = modelOf({
    services: [svc('app', [{ name: 'http', port: 80, targetPort: BACKEND_PORT }])],
    slices: [slice('app-1', 'app', [{ name: 'http', port: BACKEND_PORT }], [{ ip: net.ip }])],
    ingresses: Object.entries(HOSTS).map(([h, annotations], i) => ing(`i${i}`, { rules: [rule(h, [{ path: '/', backend: svcRef('app', 80) }])] }, { annotations })),
  });
  m.setGlobalConfig(parseGlobalConfig({ 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' }, defaultGlobalConfig()).values);
  const out = translate(m.snapshot(), { ...OPTS, listen: LISTEN, modsecurity: install });
  assert.deepEqual(out.events.filter((e) => e.type === 'Warning'), []);
  assert.equal(out.config.structure.profiles.length, 3, 'one profile per distinct ModSecurity combination; the plain host needs none');
  // As the gateway does before nginx -t: the rules files, named by their digest.
  writeModsecurityRules(out.config.structure, nginx.runtime);
  await startLive(nginx, dynamic, out.config);
});
after(() => stopLive(nginx, dynamic, net));

test('CRS + SecRuleEngine On: an SQL injection and a <script> get 403, a normal request 200; the block is logged with the transaction id', async () => {
  assert.equal((await get('block.example.com', '/search?q=shoes')).status, 200);
  const sqli = await get('block.example.com', SQLI);
  assert.equal(sqli.status, 403, sqli.body);
  assert.equal((await get('block.example.com', XSS('blockmark'))).status, 403);
  // nginx logs the intervention (error level → the controller's warn), with CRS's blocking rule and the transaction id.
  const hits = await loggedWithin((l) => l.source === 'modsecurity' && l.message.includes('ModSecurity: Access denied with code 403') && l.message.includes('blockmark'));
  assert.equal(hits.length, 1, JSON.stringify(logged.slice(-5)));
  assert.match(hits[0]!.message, /\[id "949110"\]/);
  assert.match(hits[0]!.message, /\[unique_id "tx-block-[0-9a-f]{32}"\]/);
  assert.equal(hits[0]!.level, 'warn');
});

test('DetectionOnly (enable-modsecurity without a snippet): the request is served, and each CRS match is in the controller\'s log', async () => {
  const r = await get('detect.example.com', XSS('detectmark'));
  assert.equal(r.status, 200, r.body);
  // The anomaly evaluation comes last: once it is logged, so are the XSS rules' matches before it.
  const evaluation = await loggedWithin((l) => l.source === 'modsecurity' && l.message.includes('detectmark') && l.message.includes('[id "949110"]'));
  assert.equal(evaluation.length, 1, JSON.stringify(logged.slice(-5)));
  assert.match(evaluation[0]!.message, /^\[info\] \d+#\d+: \*\d+ ModSecurity: Warning\. .*Inbound Anomaly Score Exceeded/);
  const matches = logged.filter((l) => l.source === 'modsecurity' && l.message.includes('detectmark') && /\[id "941\d{3}"\]/.test(l.message));
  assert.ok(matches.length >= 1, JSON.stringify(logged.slice(-5)));
  for (const m of [...matches, ...evaluation]) assert.equal(m.level, 'warn');
  // Nothing was blocked, and no audit log is written unless a snippet asks for one.
  assert.ok(!logged.some((l) => l.message.includes('detectmark') && l.message.includes('Access denied')));
});

test('a host without the annotations is left alone: served, inspected by nothing', async () => {
  assert.equal((await get('plain.example.com', XSS('plainmark'))).status, 200);
  assert.equal((await get('plain.example.com', SQLI)).status, 200);
  // A detection on another host after it: once that one is logged, the plain host's would have been too.
  assert.equal((await get('detect.example.com', XSS('afterplain'))).status, 200);
  assert.ok((await loggedWithin((l) => l.message.includes('afterplain') && l.message.includes('[id "949110"]'))).length > 0);
  assert.deepEqual(logged.filter((l) => l.message.includes('plainmark')), []);
});

test('SecRuleRemoveById 941000-941999: the <script> goes through, the SQL injection is still blocked', async () => {
  assert.equal((await get('removed.example.com', XSS('removedmark'))).status, 200);
  assert.equal((await get('removed.example.com', SQLI)).status, 403);
});
