// What a global rate limit (global-rate-limit annotations → rate-limit with policy redis) costs per request: req/s of
// one nginx worker through three Ingresses of the same backend, in alternated rounds of wrk (-t1 -c32, pinned to the
// second core), median per variant:
//   none    no limit
//   local   limit-rps (the per-node limit: shared memory, run in the router)
//   redis   global-rate-limit 1,000,000,000 per 1h (never reached: every request is counted in Redis — one pipelined
//           GET + INCR + EXPIRE on a pooled connection — and proxied); the chain runs in the access phase
// No cluster: Portico's translation of the Ingresses and the ConfigMap, rendered and pushed to Debian's nginx as the
// controller does; a real redis-server on loopback (its own temporary directory, no persistence); the backend is a
// test server in a network namespace (subnet 228, shared with global-rate-limit.nginx.test.ts: redis.test-helpers.ts).
// Ports 31910-31914.
// Usage: node e2e/bench/global-rate-limit.ts [seconds per run=5] [rounds=3]
import { translate } from '../../reconcilers/translate/translate.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from '../../reconcilers/translate/fixtures.test-helpers.ts';
import { capturingLogger, liveNginx, sendTo, startLive, stopLive } from '../../reconcilers/nginx-driver/nginx/live.test-helpers.ts';
import { globalRateLimitNet, redisCommand, startRedis } from '../../reconcilers/nginx-driver/nginx/redis.test-helpers.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../../reconcilers/model/global-config.ts';
import { wrk, type WrkResult } from './wrk.ts';

const seconds = Number(process.argv[2] ?? 5);
const rounds = Number(process.argv[3] ?? 3);
const REDIS_PORT = 31910;
const LISTEN = { httpPort: 31911, httpsPort: 31912, statusPort: 31913, address: '127.0.0.1' };
const ECHO_PORT = 31914;
const N = 'nginx.ingress.kubernetes.io/';
const VARIANTS: Record<string, Record<string, string>> = {
  none: {},
  local: { [`${N}limit-rps`]: '1000000' },
  redis: { [`${N}global-rate-limit`]: '1000000000', [`${N}global-rate-limit-window`]: '1h' },
};

// (The real-nginx test's subnet: the two never run at the same time.)
const tnet = globalRateLimitNet();
const redis = await startRedis(REDIS_PORT);
const { logger } = capturingLogger();
const { dynamic, nginx } = liveNginx('portico-bench-grl-nginx-', logger);
try {
  tnet.up();
  await tnet.start('web', ECHO_PORT, 'echo');
  const cfg = parseGlobalConfig({ 'worker-processes': '1', 'global-rate-limit-redis-host': '127.0.0.1', 'global-rate-limit-redis-port': String(REDIS_PORT) }, defaultGlobalConfig());
  if (cfg.errors.length) throw new Error(JSON.stringify(cfg.errors));
  const model = modelOf({
    services: [svc('web', [{ port: 80, targetPort: ECHO_PORT }])],
    slices: [slice('web-1', 'web', [{ port: ECHO_PORT }], [{ ip: tnet.ip }])],
    ingresses: Object.entries(VARIANTS).map(([name, annotations]) => ing(name, { rules: [rule(`${name}.test`, [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations })),
  });
  model.setGlobalConfig(cfg.values);
  await startLive(nginx, dynamic, translate(model.snapshot(), { ...OPTS, listen: LISTEN }).config);
  for (const v of Object.keys(VARIANTS)) {
    const a = await sendTo(LISTEN.httpPort, `${v}.test`, '/');
    if (a.status !== 200) throw new Error(`${v}.test answered ${a.status}`);
  }
  const results: Record<string, WrkResult[]> = Object.fromEntries(Object.keys(VARIANTS).map((v) => [v, []]));
  for (let r = 0; r < rounds; r++) {
    // Alternate the order each round, so drift on the machine falls on every variant alike.
    const order = r % 2 ? Object.keys(VARIANTS).reverse() : Object.keys(VARIANTS);
    for (const v of order) results[v]!.push(wrk(LISTEN.httpPort, seconds, { Host: `${v}.test` }));
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const base = median(results.none!.map((x) => x.rps));
  console.log(`global rate limit cost: one nginx worker, wrk -t1 -c32, ${rounds} alternated rounds of ${seconds}s, median`);
  for (const [v, rs] of Object.entries(results)) {
    const rps = median(rs.map((x) => x.rps));
    const errors = rs.reduce((n, x) => n + x.errors, 0);
    console.log(`  ${v.padEnd(6)} ${rps.toFixed(0).padStart(7)} req/s  (${(rps / base).toFixed(3)} of none)  p99 ${median(rs.map((x) => x.p99)).toFixed(2)} ms  non-2xx ${errors}`);
  }
  const counted = await redisCommand(REDIS_PORT, 'DBSIZE');
  console.log(`  Redis keys after the runs: ${counted.trim().replace(/^:/, '')} (one counter per window and client)`);
} finally {
  try {
    await stopLive(nginx, dynamic, tnet);
  } finally {
    await redis.close();
  }
}
