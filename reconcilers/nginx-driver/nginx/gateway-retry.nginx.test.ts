// Gateway API's HTTPRoute retry through the whole data plane: normalized, translated, rendered, checked by nginx -t,
// loaded into a real nginx, routes pushed as data; the backend (one endpoint, in this file's own network namespace,
// subnet 198.19.213.0/30) fails the first n requests of an id with a status, then answers 200. What is observed:
// with `attempts: 2` on 500, a request failing twice is retried on the same (only) endpoint and the client gets 200
// after 3 attempts; failing three times it gets the third 500 (3 attempts, no more); a status the rule does not list
// (503) is not retried; a rule without retry makes one attempt. The attempts are counted at the backend.
// Ports 38500-38509 belong to this file: nginx 38500-38502, the backend (in the namespace) 38503.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { translate } from '../../translate/translate.ts';
import { modelOf, OPTS, slice, svc } from '../../translate/fixtures.test-helpers.ts';
import { gatewayApiState, type GatewayApiOptions } from '../../translate/gateway-api/attach.ts';
import { normalizeGateway } from '../../kinds/gateway/normalize.ts';
import { normalizeGatewayClass } from '../../kinds/gatewayclass/index.ts';
import { normalizeHttpRoute } from '../../kinds/httproute/normalize.ts';
import { TestNet } from './testnet.test-helpers.ts';
import { capturingLogger, liveNginx, startLive, stopLive } from './live.test-helpers.ts';

const LISTEN = { httpPort: 38500, httpsPort: 38501, statusPort: 38502, address: '127.0.0.1' };
const BACKEND = 38503;
const GA: GatewayApiOptions = { controllerName: 'portico.dev/gateway-controller', reservedPorts: [LISTEN.httpPort, LISTEN.httpsPort, LISTEN.statusPort] };

const tnet = new TestNet(213);
const { logger } = capturingLogger();
const { dynamic, nginx } = liveNginx('portico-gateway-retry-', logger);
let gatewayPort = 0;

const obj = (kind: string, name: string, spec: unknown, ns: string | undefined = 'infra'): KubeObject =>
  ({ apiVersion: 'gateway.networking.k8s.io/v1', kind, metadata: { name, ...(ns ? { namespace: ns } : {}), uid: `uid-${name}`, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' }, spec }) as KubeObject;

before(async () => {
  tnet.up();
  await tnet.start('flaky', BACKEND, 'flaky');
  const m = modelOf({ services: [svc('flaky', [{ port: 8080, targetPort: BACKEND }], 'infra')], slices: [slice('flaky-x', 'flaky', [{ port: BACKEND }], [{ ip: tnet.ip }], 'infra')] });
  const route = normalizeHttpRoute(
    obj('HTTPRoute', 'retry', {
      parentRefs: [{ name: 'gw-retry' }],
      rules: [
        { matches: [{ path: { type: 'PathPrefix', value: '/retry' } }], backendRefs: [{ name: 'flaky', port: 8080 }], retry: { codes: [500], attempts: 2 } },
        { matches: [{ path: { type: 'PathPrefix', value: '/once' } }], backendRefs: [{ name: 'flaky', port: 8080 }] },
      ],
    }),
  );
  for (const [kind, n] of [
    ['GatewayClass', normalizeGatewayClass(obj('GatewayClass', 'portico', { controllerName: GA.controllerName }, undefined))],
    ['Gateway', normalizeGateway(obj('Gateway', 'gw-retry', { gatewayClassName: 'portico', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] }))],
    ['HTTPRoute', route],
  ] as const) {
    assert.ok(n.ok, `${kind}: ${n.ok ? '' : n.reason}`);
    m.setCrd(kind, n.record as never);
  }
  gatewayPort = gatewayApiState(m.snapshot(), GA).gateways.get('infra/gw-retry')!.listeners[0]!.podPort!;
  await startLive(nginx, dynamic, translate(m.snapshot(), { ...OPTS, listen: LISTEN, gatewayApi: GA }).config);
});
after(() => stopLive(nginx, dynamic, tnet));

function get(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: gatewayPort, path, headers: { host: 'gw.test' }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    }).on('error', reject);
  });
}
const attempts = async (id: string) => (await tnet.requests('flaky')).filter((r) => r.url.includes(`id=${id}&`)).length;

test('attempts 2 on 500: two failures are retried on the only endpoint and the client gets 200 (3 attempts)', async () => {
  assert.equal(await get('/retry/a?id=r1&fail=2'), 200);
  assert.equal(await attempts('r1'), 3);
});

test('three failures: the third 500 reaches the client, after 3 attempts and no more', async () => {
  assert.equal(await get('/retry/a?id=r2&fail=3'), 500);
  assert.equal(await attempts('r2'), 3);
});

test('a status the rule does not list (503) is not retried; a rule without retry makes one attempt', async () => {
  assert.equal(await get('/retry/a?id=r3&fail=1&code=503'), 503);
  assert.equal(await attempts('r3'), 1);
  assert.equal(await get('/once/a?id=r4&fail=1'), 500);
  assert.equal(await attempts('r4'), 1);
});
