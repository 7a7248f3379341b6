// add-headers and proxy-set-headers in a real nginx (Debian's): the headers of the ConfigMaps they name, resolved
// as the controller does (model/global-headers.ts), are on every response — a backend's header of the same name
// replaced, nginx's own 404 included — and on every request the echo backend receives (variables read per
// request); a header that does not pass is left out and the rest applies; without the keys nothing changes.
// Backends live in this file's network namespace (subnet 230). Ports 32986-32989 belong to this file: nginx
// 32986-32988, the echo backend 32989.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultGlobalConfig, parseGlobalConfig } from '../../model/global-config.ts';
import { globalHeadersOf } from '../../model/global-headers.ts';
import { translate } from '../../translate/translate.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { TestNet } from './testnet.test-helpers.ts';
import { capturingLogger, liveNginx, sendTo, startLive, stopLive } from './live.test-helpers.ts';

const LISTEN = { httpPort: 32986, httpsPort: 32987, statusPort: 32988, address: '127.0.0.1' };
const BACKEND = 32989;
const net = new TestNet(230);
const { logger, lines } = capturingLogger();

function config(cm: Record<string, string>, referenced: Record<string, Record<string, string>>) {
  const cfg = parseGlobalConfig(cm, defaultGlobalConfig());
  assert.deepEqual(cfg.errors, []);
  const h = globalHeadersOf(cfg.values, (k) => (referenced[k] ? { data: referenced[k] } : undefined));
  if (h.headers) cfg.values.globalHeaders = h.headers;
  const m = modelOf({
    services: [svc('echo', [{ port: 80, targetPort: BACKEND }])],
    slices: [slice('echo-1', 'echo', [{ port: BACKEND }], [{ ip: net.ip }])],
    ingresses: [ing('web', { rules: [rule('shop.example.com', [{ path: '/', backend: svcRef('echo', 80) }])] })],
  });
  m.setGlobalConfig(cfg.values);
  return { config: translate(m.snapshot(), { ...OPTS, listen: LISTEN }).config, warnings: h.warnings };
}

before(async () => {
  net.up();
  await net.start('echo', BACKEND, 'echo');
});
after(() => net.close());

async function withNginx(cm: Record<string, string>, referenced: Record<string, Record<string, string>>, fn: (warnings: string[]) => Promise<void>): Promise<void> {
  const { dynamic, nginx } = liveNginx('portico-global-headers-', logger);
  const c = config(cm, referenced);
  await startLive(nginx, dynamic, c.config);
  try {
    await fn(c.warnings);
  } finally {
    await stopLive(nginx, dynamic);
  }
}

const KEYS = { 'add-headers': 'ingress/response-headers', 'proxy-set-headers': 'ingress/request-headers' };
const REFERENCED = {
  'ingress/response-headers': { 'X-Frame-Options': 'DENY', 'X-Powered-By': 'portico-test', 'X-Served-Scheme': '$scheme', 'X-Quoted': 'a "b"; c {d} #e', 'Content-Length': '1' },
  'ingress/request-headers': { 'X-Team': 'payments', 'X-Client-Said': '${http_x_client}-seen', 'X-Empty': '', 'X-Bad': '$portico_backend' },
};

test('add-headers and proxy-set-headers: on every response and every proxied request; refused headers left out', async () => {
  await withNginx(KEYS, REFERENCED, async (warnings) => {
    assert.equal(warnings.length, 2, warnings.join(' | '));
    const r = await sendTo(LISTEN.httpPort, 'shop.example.com', '/x', { headers: { 'x-client': 'abc', 'x-empty': 'from-client' } });
    assert.equal(r.status, 200, r.body);
    assert.equal(r.headers['x-frame-options'], 'DENY');
    assert.equal(r.headers['x-powered-by'], 'portico-test', "the backend's own X-Powered-By (node) is replaced, not repeated");
    assert.equal(r.headers['x-served-scheme'], 'http', 'variables are read per request');
    assert.equal(r.headers['x-quoted'], 'a "b"; c {d} #e', 'quotes, ";", braces and "#" are text');
    const seen = (JSON.parse(r.body) as { headers: Record<string, string> }).headers;
    assert.equal(seen['x-team'], 'payments');
    assert.equal(seen['x-client-said'], 'abc-seen');
    assert.equal(seen['x-empty'], undefined, "an empty value removes the client's header");
    assert.equal(seen['x-bad'], undefined, 'a refused header is left out');
    assert.ok(seen['x-forwarded-for'], "Portico's own headers are still sent");
    // nginx's own answer (no route): the response headers are there too.
    const miss = await sendTo(LISTEN.httpPort, 'nowhere.example.com', '/');
    assert.equal(miss.status, 404);
    assert.equal(miss.headers['x-frame-options'], 'DENY');
  });
  assert.ok(!lines.some((l) => /\[emerg\]/.test(l)), 'nginx accepted the configuration');
});

test('without the keys, or with a ConfigMap that does not exist: no headers, nginx runs as before', async () => {
  await withNginx({ 'add-headers': 'ingress/gone' }, {}, async (warnings) => {
    assert.match(warnings.join(''), /add-headers: ConfigMap ingress\/gone not found/);
    const r = await sendTo(LISTEN.httpPort, 'shop.example.com', '/');
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-frame-options'], undefined);
    assert.equal(r.headers['x-powered-by'], 'node', "the backend's header passes untouched");
    assert.equal((JSON.parse(r.body) as { headers: Record<string, string> }).headers['x-team'], undefined);
  });
});
