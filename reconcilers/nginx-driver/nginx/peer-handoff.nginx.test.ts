// The router's peer hand-off inside a real nginx (Debian's, with Portico's variables module): for a round-robin
// backend proxied from `location /`, the router picks the first attempt's endpoint and hands it to nginx
// (balancer.peer_handoff → ngx_http_portico_vars_peer.c), and the Lua balancer runs only for retries. The backend has
// three endpoints in this file's network namespace (subnet 214): one answers, two refuse connections (nothing
// listens on their ports). What is observed, request by request, in $upstream_addr (the access log): every request
// is answered 200 by the live endpoint; the first attempts are spread over the endpoints; a retry never goes back to an endpoint the request already tried, so no request makes
// more than three attempts; and requests whose endpoint is chosen per request (a canary by header) are balanced as
// before. A backend whose endpoints all refuse gets exactly three attempts (proxy_next_upstream_tries), each to another
// endpoint, then 502. Ports 38600-38607 belong to this file: nginx 38600-38602, the live backend 38603, the refusing
// 38604, 38605 and 38607, the canary 38606.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultGlobalConfig, parseGlobalConfig } from '../../model/global-config.ts';
import { translate } from '../../translate/translate.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { TestNet } from './testnet.test-helpers.ts';
import { capturingLogger, liveNginx, loggedLines, sendTo, startLive, stopLive } from './live.test-helpers.ts';

const LISTEN = { httpPort: 38600, httpsPort: 38601, statusPort: 38602, address: '127.0.0.1' };
const LIVE = 38603;
const REFUSING = [38604, 38605];
const CANARY = 38606;
/** A backend whose three endpoints all refuse: the two above and this port. */
const DEAD = [...REFUSING, 38607];
const net = new TestNet(214);
const { logger, lines: errorLog } = capturingLogger();
const { dynamic, nginx } = liveNginx('portico-peer-handoff-', logger);

before(async () => {
  net.up();
  await net.start('web', LIVE, 'echo');
  await net.start('canary', CANARY, 'echo');
  const cfg = parseGlobalConfig({ 'log-format-upstream': '$request_uri $status $upstream_addr' }, defaultGlobalConfig());
  assert.deepEqual(cfg.errors, []);
  const m = modelOf({
    services: [svc('web', [{ name: 'http', port: 80, targetPort: 'http' }]), svc('canary', [{ port: 80, targetPort: CANARY }]), svc('dead', [{ name: 'http', port: 80, targetPort: 'http' }])],
    // One endpoint per slice, each with its own number for the named port (as slices of a rollout can have).
    slices: [
      slice('web-live', 'web', [{ name: 'http', port: LIVE }], [{ ip: net.ip }]),
      ...REFUSING.map((p, i) => slice(`web-refusing-${i}`, 'web', [{ name: 'http', port: p }], [{ ip: net.ip }])),
      slice('canary-1', 'canary', [{ port: CANARY }], [{ ip: net.ip }]),
      ...DEAD.map((p, i) => slice(`dead-${i}`, 'dead', [{ name: 'http', port: p }], [{ ip: net.ip }])),
    ],
    ingresses: [
      ing('web', { rules: [rule('handoff.test', [{ path: '/', backend: svcRef('web', 80) }])] }),
      ing('dead', { rules: [rule('dead.test', [{ path: '/', backend: svcRef('dead', 80) }])] }),
      // Another host with a canary: its backend's endpoint is decided per request, never handed over.
      ing('shop', { rules: [rule('canary.test', [{ path: '/', backend: svcRef('web', 80) }])] }),
      ing('shop-canary', { rules: [rule('canary.test', [{ path: '/', backend: svcRef('canary', 80) }])] }, {
        annotations: { 'nginx.ingress.kubernetes.io/canary': 'true', 'nginx.ingress.kubernetes.io/canary-by-header': 'x-canary' },
      }),
    ],
  });
  m.setGlobalConfig(cfg.values);
  await startLive(nginx, dynamic, translate(m.snapshot(), { ...OPTS, listen: LISTEN }).config);
});
after(() => stopLive(nginx, dynamic, net));

/** The access log's lines for the given URIs, once all are written. */
async function logged(uris: string[]): Promise<Map<string, { status: number; addrs: string[] }>> {
  const lines = await loggedLines(nginx, uris, (line) => {
    const m = /^(\S+) (\d+) (.*)$/.exec(line);
    return m ? { uri: m[1]!, item: [m[1]!, { status: Number(m[2]), addrs: m[3]!.split(/, | : /).filter((a) => a && a !== '-') }] as const } : null;
  });
  return new Map(lines);
}

const live = () => `${net.ip}:${LIVE}`;
const all = () => [live(), ...REFUSING.map((p) => `${net.ip}:${p}`)];

test('every request is answered by the live endpoint; first attempts are spread over the endpoints; a retry never repeats one', async () => {
  const uris = Array.from({ length: 60 }, (_, i) => `/r/${i}`);
  // Six at a time, each on a connection of its own: a worker interleaves their attempts, so a retry that did not
  // skip the endpoints its request tried would meet the refusing ones again.
  for (let i = 0; i < uris.length; i += 6) {
    const batch = uris.slice(i, i + 6);
    const answers = await Promise.all(batch.map((u) => sendTo(LISTEN.httpPort, 'handoff.test', u)));
    answers.forEach((a, j) => assert.equal(a.status, 200, batch[j]));
  }
  const seen = await logged(uris);
  const firsts: string[] = [];
  for (const u of uris) {
    const { status, addrs } = seen.get(u)!;
    assert.equal(status, 200, `${u}: ${addrs.join(', ')}`);
    assert.equal(addrs.at(-1), live(), `${u} was not answered by the live endpoint: ${addrs.join(', ')}`);
    assert.equal(new Set(addrs).size, addrs.length, `${u} tried an endpoint twice: ${addrs.join(', ')}`);
    assert.ok(addrs.length <= 3, `${u}: more than three attempts: ${addrs.join(', ')}`);
    for (const a of addrs) assert.ok(all().includes(a), `${u}: ${a} is not an endpoint of the backend`);
    firsts.push(addrs[0]!);
  }
  // The first attempts are spread (round-robin; a retry's pick takes a turn too, so not strictly in turn), and the
  // requests whose first attempt was refused were retried to an answer.
  assert.ok(new Set(firsts).size >= 2, `every first attempt went to ${firsts[0]}`);
  assert.ok(firsts.filter((a) => a !== live()).length >= 20, `first attempts: ${firsts.join(' ')}`);
  assert.ok(errorLog.some((l) => l.includes('Connection refused')), 'nginx logged no refused connection');
});

test('a request whose endpoint is decided per request (canary by header) is balanced by the Lua balancer as before', async () => {
  const canary = await sendTo(LISTEN.httpPort, 'canary.test', '/c/1', { headers: { 'x-canary': 'always' } });
  assert.equal(canary.status, 200);
  const plain = await sendTo(LISTEN.httpPort, 'canary.test', '/c/2', { headers: { 'x-canary': 'never' } });
  assert.equal(plain.status, 200);
  const seen = await logged(['/c/1', '/c/2']);
  assert.deepEqual(seen.get('/c/1')!.addrs, [`${net.ip}:${CANARY}`]);
  assert.equal(seen.get('/c/2')!.addrs.at(-1), live());
});

test('every endpoint refusing: three attempts, each to another endpoint (the retry knows the handed one failed), then 502', async () => {
  const uris = Array.from({ length: 6 }, (_, i) => `/d/${i}`);
  for (const u of uris) assert.equal((await sendTo(LISTEN.httpPort, 'dead.test', u)).status, 502, u);
  const seen = await logged(uris);
  const dead = DEAD.map((p) => `${net.ip}:${p}`);
  for (const u of uris) {
    const { status, addrs } = seen.get(u)!;
    assert.equal(status, 502);
    assert.deepEqual([...addrs].sort(), [...dead].sort(), `${u}: attempts ${addrs.join(', ')}`);
  }
});
