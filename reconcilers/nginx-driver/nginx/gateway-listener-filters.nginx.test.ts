// Gateway API listener filters (GatewayListenerFilters) inside a real nginx: the configuration comes from the pure
// translation of a Gateway with three HTTP listeners on one port — "deny.example.org" with an ExtensionRef to a
// Portico Plugin that refuses every client (ip-restriction), "auth.example.org" with an HTTP ExternalAuth filter to
// an auth Service, and "open.example.org" without filters — each with an HTTPRoute for /app to an echo backend.
// Proven here: the deny listener refuses every path, the one its route serves and one nothing serves, with the same
// answer (no 404 tells a path exists) and nothing reaches the backend; the auth listener lets through only what
// the auth service allows (its headers reach the backend; the auth request carries the client's method and path
// behind http.path), refuses the rest before routing (unmatched paths too: 401, not 404); the listener without
// filters is served as before.
// The backends run in this file's network namespace (testnet.test-helpers.ts, subnet 229).
// Ports 38410-38413 belong to this file: nginx 38410-38412, the backends 38413 (echo) and 38414 (auth); the
// Gateway's pod port is the one Portico allocates for it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { normalizeGateway, gatewayReads } from '../../kinds/gateway/normalize.ts';
import { normalizeGatewayClass } from '../../kinds/gatewayclass/index.ts';
import { normalizeHttpRoute } from '../../kinds/httproute/normalize.ts';
import { normalizePlugin } from '../../crds/normalize.ts';
import { translate } from '../../translate/translate.ts';
import { gatewayApiState } from '../../translate/gateway-api/attach.ts';
import { OPTS, modelOf, slice, svc } from '../../translate/fixtures.test-helpers.ts';
import { TestNet } from './testnet.test-helpers.ts';
import { liveNginx, sendTo, startLive, stopLive } from './live.test-helpers.ts';
import winston from 'winston';

const LISTEN = { httpPort: 38410, httpsPort: 38411, statusPort: 38412, address: '127.0.0.1' };
const ECHO_PORT = 38413;
const AUTH_PORT = 38414;
const GA = { controllerName: 'portico.dev/gateway-controller', reservedPorts: [LISTEN.httpPort, LISTEN.httpsPort, LISTEN.statusPort] };
const net = new TestNet(229);
const logger = winston.createLogger({ level: 'error', transports: [new winston.transports.Console({ silent: true })] });
const { dynamic, nginx } = liveNginx('portico-gw-lfilters-', logger);

const meta = (name: string, ns?: string) => ({ name, ...(ns ? { namespace: ns } : {}), uid: name, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' });

function config() {
  const m = modelOf({
    services: [svc('echo', [{ name: 'http', port: 8080 }], 'infra'), svc('auth', [{ name: 'http', port: 9000 }], 'infra')],
    slices: [slice('echo-1', 'echo', [{ name: 'http', port: ECHO_PORT }], [{ ip: net.ip }], 'infra'), slice('auth-1', 'auth', [{ name: 'http', port: AUTH_PORT }], [{ ip: net.ip }], 'infra')],
  });
  const c = normalizeGatewayClass({ metadata: meta('portico'), spec: { controllerName: GA.controllerName } } as never);
  assert.ok(c.ok);
  m.setCrd('GatewayClass', c.record);
  const p = normalizePlugin({ apiVersion: 'portico.dev/v1alpha1', kind: 'Plugin', metadata: meta('deny-all', 'infra'), spec: { type: 'ip-restriction', config: { deny: ['0.0.0.0/0', '::/0'] } } } as unknown as KubeObject, () => undefined);
  assert.ok(p.ok, JSON.stringify(p));
  m.setCrd('Plugin', p.record);
  const g = normalizeGateway({
    metadata: meta('gw-lfilt', 'infra'),
    spec: {
      gatewayClassName: 'portico',
      listeners: [
        { name: 'deny', port: 80, protocol: 'HTTP', hostname: 'deny.example.org', filters: { requests: [{ type: 'ExtensionRef', extensionRef: { group: 'portico.dev', kind: 'Plugin', name: 'deny-all' } }] } },
        { name: 'auth', port: 80, protocol: 'HTTP', hostname: 'auth.example.org', filters: { requests: [{ type: 'ExternalAuth', externalAuth: { protocol: 'HTTP', backendRef: { name: 'auth', port: 9000 }, http: { path: '/check', allowedResponseHeaders: ['x-user'] } } }] } },
        { name: 'open', port: 80, protocol: 'HTTP', hostname: 'open.example.org' },
      ],
    },
  } as unknown as KubeObject);
  assert.ok(g.ok, JSON.stringify(g));
  m.setCrd('Gateway', g.record, gatewayReads(g.record));
  for (const host of ['deny', 'auth', 'open']) {
    const r = normalizeHttpRoute({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: meta(host, 'infra'), spec: { parentRefs: [{ name: 'gw-lfilt', sectionName: host }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/app' } }], backendRefs: [{ name: 'echo', port: 8080 }] }] } } as unknown as KubeObject);
    assert.ok(r.ok, JSON.stringify(r));
    m.setCrd('HTTPRoute', r.record);
  }
  const o = { ...OPTS, listen: LISTEN, gatewayApi: GA };
  const listeners = gatewayApiState(m.snapshot(), GA).gateways.get('infra/gw-lfilt')!.listeners;
  for (const l of listeners) assert.equal(l.programmed.status, 'True', `${l.name}: ${l.programmed.message}`);
  const r = translate(m.snapshot(), o);
  assert.deepEqual(r.events.filter((e) => e.type === 'Warning'), []);
  return { config: r.config, port: listeners[0]!.podPort! };
}

const { config: running, port: PORT } = config();

before(async () => {
  net.up();
  await net.start('echo', ECHO_PORT, 'echo');
  await net.start('auth', AUTH_PORT, 'auth');
  await startLive(nginx, dynamic, running);
});
after(() => stopLive(nginx, dynamic, net));

test('an ExtensionRef deny filter refuses every path of its listener, served or not, alike; nothing reaches the backend', async () => {
  const before = await net.count('echo');
  const served = await sendTo(PORT, 'deny.example.org', '/app/x');
  const unmatched = await sendTo(PORT, 'deny.example.org', '/nothing/here');
  assert.equal(served.status, 403, served.body);
  assert.equal(unmatched.status, 403, unmatched.body);
  assert.equal(unmatched.body, served.body, 'the same answer: a refusal does not tell whether a path exists');
  assert.equal(await net.count('echo'), before, 'nothing refused was proxied');
});

test('an ExternalAuth filter lets through only what the auth service allows, before routing', async () => {
  const before = await net.count('echo');
  const denied = await sendTo(PORT, 'auth.example.org', '/app/x');
  assert.equal(denied.status, 401, denied.body);
  assert.match(String(denied.headers['www-authenticate']), /portico-test/);
  const unmatched = await sendTo(PORT, 'auth.example.org', '/nothing/here');
  assert.equal(unmatched.status, 401, 'an unmatched path is refused too (not 404)');
  const forbidden = await sendTo(PORT, 'auth.example.org', '/app/x', { headers: { authorization: 'Bearer forbidden' } });
  assert.equal(forbidden.status, 403);
  assert.equal(await net.count('echo'), before, 'nothing refused was proxied');
  const ok = await sendTo(PORT, 'auth.example.org', '/app/x?q=1', { method: 'POST', headers: { authorization: 'Bearer good' }, body: 'payload' });
  assert.equal(ok.status, 200, ok.body);
  const seen = JSON.parse(ok.body) as { url: string; headers: Record<string, string> };
  assert.equal(seen.url, '/app/x?q=1');
  assert.equal(seen.headers['x-user'], 'alice', 'the allowed auth response header reaches the backend');
  assert.equal(seen.headers['x-internal'], undefined, 'a header allowedResponseHeaders does not list does not');
  const asked = (await net.requests('auth')).at(-1)!;
  assert.equal(asked.method, 'POST', 'the auth request has the client\'s method');
  assert.equal(asked.url, '/check/app/x?q=1', 'and its path behind http.path');
  assert.equal(asked.headers.host, 'auth.example.org');
  const unmatchedOk = await sendTo(PORT, 'auth.example.org', '/nothing/here', { headers: { authorization: 'Bearer good' } });
  assert.equal(unmatchedOk.status, 404, 'allowed, then routed: nothing serves that path');
});

test('a listener without filters on the same port is served as before', async () => {
  const r = await sendTo(PORT, 'open.example.org', '/app/x');
  assert.equal(r.status, 200, r.body);
  assert.equal((await sendTo(PORT, 'open.example.org', '/nothing/here')).status, 404);
});
