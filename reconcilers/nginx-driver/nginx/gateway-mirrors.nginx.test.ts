// Gateway API's RequestMirror with several mirrors per rule and shares of the requests, through the whole data
// plane: an HTTPRoute is normalized, translated, rendered, checked by nginx -t and loaded into a real nginx
// (Debian's, as in production), the routes pushed as data. The backends run in this file's own network namespace
// (testnet.test-helpers.ts, subnet 198.19.218.0/30). What is observed: two whole mirrors each receive a copy of
// every request (with its URI and Host) while the client gets the primary's answer; mirrors of 20 % and 50 % in one
// rule receive about those shares of 1,000 requests, drawn independently; a mirror of 0 % receives nothing.
// Copies are counted once they are certain to have arrived: nginx closes a client connection (Connection: close)
// only when the request's mirror subrequests are finished, i.e. the mirror backend has answered.
// Ports 34100-34109 belong to this file: nginx 34100-34102, the backends (in the namespace) 34103-34106; the
// Gateway's port is the pod port the translation allocates to it (20000-29999, named in the test).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { translate, type TranslateResult } from '../../translate/translate.ts';
import { modelOf, OPTS, slice, svc } from '../../translate/fixtures.test-helpers.ts';
import { gatewayApiState, type GatewayApiOptions } from '../../translate/gateway-api/attach.ts';
import { normalizeGateway } from '../../kinds/gateway/normalize.ts';
import { normalizeGatewayClass } from '../../kinds/gatewayclass/index.ts';
import { normalizeHttpRoute } from '../../kinds/httproute/normalize.ts';
import { TestNet } from './testnet.test-helpers.ts';
import { capturingLogger, liveNginx, startLive, stopLive } from './live.test-helpers.ts';

const LISTEN = { httpPort: 34100, httpsPort: 34101, statusPort: 34102, address: '127.0.0.1' };
const PORTS = { v1: 34103, v2: 34104, v3: 34105, v4: 34106 } as const;
type Name = keyof typeof PORTS;
const GA: GatewayApiOptions = { controllerName: 'portico.dev/gateway-controller', reservedPorts: [LISTEN.httpPort, LISTEN.httpsPort, LISTEN.statusPort] };

const tnet = new TestNet(218);
const { logger } = capturingLogger();
const { dynamic, nginx } = liveNginx('portico-gateway-mirrors-', logger);

const obj = (kind: string, name: string, spec: unknown, ns: string | undefined = 'infra'): KubeObject =>
  ({ apiVersion: 'gateway.networking.k8s.io/v1', kind, metadata: { name, ...(ns ? { namespace: ns } : {}), uid: `uid-${name}`, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' }, spec }) as KubeObject;
const mirror = (name: Name, extra: Record<string, unknown> = {}) => ({ type: 'RequestMirror', requestMirror: { backendRef: { name, port: 8080 }, ...extra } });
const rule = (path: string, filters: unknown[]) => ({ matches: [{ path: { type: 'PathPrefix', value: path } }], filters, backendRefs: [{ name: 'v1', port: 8080 }] });

let result: TranslateResult;
let gatewayPort = 0;

function desired(): TranslateResult {
  const names = Object.keys(PORTS) as Name[];
  const m = modelOf({
    services: names.map((n) => svc(n, [{ port: 8080, targetPort: PORTS[n] }], 'infra')),
    slices: names.map((n) => slice(`${n}-x`, n, [{ port: PORTS[n] }], [{ ip: tnet.ip }], 'infra')),
  });
  const records = [
    ['GatewayClass', normalizeGatewayClass(obj('GatewayClass', 'portico', { controllerName: GA.controllerName }, undefined))],
    ['Gateway', normalizeGateway(obj('Gateway', 'gw', { gatewayClassName: 'portico', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] }))],
    [
      'HTTPRoute',
      normalizeHttpRoute(
        obj('HTTPRoute', 'mirrors', {
          parentRefs: [{ name: 'gw' }],
          rules: [
            rule('/multi', [mirror('v2'), mirror('v3')]),
            rule('/share', [mirror('v2', { percent: 20 }), mirror('v3', { fraction: { numerator: 25, denominator: 50 } })]),
            rule('/zero', [mirror('v4', { percent: 0 })]),
          ],
        }),
      ),
    ],
  ] as const;
  for (const [kind, n] of records) {
    assert.ok(n.ok, `${kind}: ${n.ok ? '' : n.reason}`);
    m.setCrd(kind, n.record as never);
  }
  gatewayPort = gatewayApiState(m.snapshot(), GA).gateways.get('infra/gw')!.listeners[0]!.podPort!;
  return translate(m.snapshot(), { ...OPTS, listen: LISTEN, gatewayApi: GA });
}

before(async () => {
  tnet.up();
  for (const n of Object.keys(PORTS) as Name[]) await tnet.start(n, PORTS[n], 'echo');
  result = desired();
  assert.ok(gatewayPort >= 20000 && gatewayPort < 30000, `the Gateway's pod port ${gatewayPort}`);
  await startLive(nginx, dynamic, result.config);
});
after(() => stopLive(nginx, dynamic, tnet));

/**
 * A GET on a connection of its own (Connection: close) to the Gateway's port; resolves with the status once nginx has
 * closed the connection — which it does only after the request's mirror subrequests have finished.
 */
function get(path: string, host = 'gw.test'): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port: gatewayPort });
    let got = '';
    s.setEncoding('latin1');
    s.on('data', (c: string) => {
      got += c;
    });
    s.on('error', reject);
    s.on('close', () => {
      const m = /^HTTP\/1\.1 (\d{3}) /.exec(got);
      if (m) resolve(Number(m[1]));
      else reject(new Error(`no HTTP answer for ${path}: ${JSON.stringify(got.slice(0, 200))}`));
    });
    s.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  });
}

/** `n` requests, `parallel` at a time; every answer must be the primary's 200. */
async function getMany(n: number, path: (i: number) => string, parallel = 8): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      assert.equal(await get(path(i)), 200, path(i));
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

const urls = async (name: Name, prefix: string): Promise<string[]> => (await tnet.requests(name)).filter((r) => r.url.startsWith(prefix)).map((r) => r.url);

test('two mirrors: each gets a copy of every request, with its URI and Host; the client gets the primary\'s answer', async () => {
  await getMany(20, (i) => `/multi/${i}?q=${i}`, 4);
  const want = Array.from({ length: 20 }, (_, i) => `/multi/${i}?q=${i}`).sort();
  assert.deepEqual((await urls('v1', '/multi/')).sort(), want, 'the primary served each request once');
  assert.deepEqual((await urls('v2', '/multi/')).sort(), want, 'mirror v2: one copy of each');
  assert.deepEqual((await urls('v3', '/multi/')).sort(), want, 'mirror v3: one copy of each');
  const copy = (await tnet.requests('v3')).find((r) => r.url === '/multi/0?q=0');
  assert.equal(copy?.headers.host, 'gw.test', 'the copy carries the request\'s Host');
  assert.equal(copy?.method, 'GET');
});

test('shares: mirrors of 20 % and 50 % in one rule get about those shares of 1,000 requests, drawn independently; 0 % gets nothing', async () => {
  const N = 1000;
  await getMany(N, (i) => `/share/${i}`);
  const v2 = new Set(await urls('v2', '/share/'));
  const v3 = new Set(await urls('v3', '/share/'));
  assert.equal((await urls('v1', '/share/')).length, N, 'the primary served every request');
  // Binomial counts: 20 % of 1,000 has a standard deviation of 12.6, 50 % of 15.8; the bounds are about ±4.7
  // deviations (a false failure about once in a million runs) and fail for a share of 0, 100 % or the other's.
  assert.ok(v2.size >= 140 && v2.size <= 260, `20 %: ${v2.size} copies of ${N}`);
  assert.ok(v3.size >= 425 && v3.size <= 575, `50 %: ${v3.size} copies of ${N}`);
  // Independent draws: about 10 % of the requests are copied to both (standard deviation 9.5); one draw for both
  // mirrors would make it 20 %.
  const both = [...v2].filter((u) => v3.has(u)).length;
  assert.ok(both >= 55 && both <= 145, `copied to both: ${both} of ${N}`);
  for (const u of [...v2, ...v3]) assert.match(u, /^\/share\/\d+$/, 'each copy is one of the requests, once');
  assert.equal(v2.size, (await urls('v2', '/share/')).length, 'no request copied twice to v2');

  await getMany(50, (i) => `/zero/${i}`, 4);
  assert.equal((await urls('v1', '/zero/')).length, 50);
  assert.deepEqual(await tnet.requests('v4'), [], 'a mirror of 0 % receives nothing');
});
