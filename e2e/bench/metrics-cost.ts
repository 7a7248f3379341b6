// What ingress-nginx's per-request metrics cost inside nginx: instructions per proxied request (callgrind) with
// --enable-metrics on and off, same configuration otherwise (the pure translation of one Ingress), same backend.
// Callgrind counts do not move with other load on the machine, so this runs anywhere (no cluster): the backend is
// a test server in a network namespace of its own (subnet 235 of testnet.test-helpers.ts), nginx listens on 31950.
// Usage: node e2e/bench/metrics-cost.ts [requests=2000]
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { translate } from '../../reconcilers/translate/translate.ts';
import { diffConfig, structureChecksum } from '../../reconcilers/translate/diff.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from '../../reconcilers/translate/fixtures.test-helpers.ts';
import { renderNginxConf, runtimePaths } from '../../reconcilers/nginx-driver/nginx/render.ts';
import { DynamicClient } from '../../reconcilers/nginx-driver/nginx/dynamic.ts';
import { NginxProcess } from '../../reconcilers/nginx-driver/nginx/process.ts';
import { capturingLogger } from '../../reconcilers/nginx-driver/nginx/live.test-helpers.ts';
import { TestNet } from '../../reconcilers/nginx-driver/nginx/testnet.test-helpers.ts';
import { DEFAULT_BUCKETS } from '../../reconcilers/nginx-driver/compat-metrics.ts';
import { haveValgrind, inclusivePerRequest, instructionsPerRequest } from './instructions.ts';

const many = Number(process.argv[2] ?? 2000);
const LISTEN = { httpPort: 31950, httpsPort: 31951, statusPort: 31952, address: '127.0.0.1' };
if (!haveValgrind()) throw new Error('valgrind is not installed (make deps)');
const net = new TestNet(235);
const root = mkdtempSync(path.join(tmpdir(), 'portico-metrics-cost-'));
try {
  net.up();
  await net.start('web', 31953, 'echo');
  const model = modelOf({
    services: [svc('web', [{ port: 80, targetPort: 31953 }])],
    slices: [slice('web-1', 'web', [{ port: 31953 }], [{ ip: net.ip }])],
    ingresses: [ing('web', { rules: [rule('bench.test', [{ path: '/', backend: svcRef('web', 80) }])] })],
  });
  const count = async (name: string, metrics: boolean): Promise<number> => {
    const config = translate(model.snapshot(), { ...OPTS, listen: LISTEN, ...(metrics ? { metrics: { undefinedHosts: false, buckets: DEFAULT_BUCKETS } } : {}) }).config;
    const dir = path.join(root, name);
    mkdirSync(dir, { recursive: true });
    const runtime = runtimePaths(dir);
    const client = new DynamicClient(runtime.apiSocket);
    // The runtime directory as the controller prepares it (temp and API directories, the placeholder certificate).
    new NginxProcess({ binary: '/usr/sbin/nginx', runtime, shutdownTimeoutMs: 2_000 }, client, capturingLogger().logger).prepare();
    let conf = renderNginxConf(config.structure, runtime, structureChecksum(config.structure));
    // PORTICO_JIT_LOG=<file>: LuaJIT's trace log (jit.v) of the counted nginx, to see which code runs interpreted.
    if (process.env.PORTICO_JIT_LOG) conf = conf.replace('init_by_lua_block {', `init_by_lua_block {\n    package.path = "/usr/share/luajit-2.1.0-beta3/?.lua;" .. package.path; require("jit.v").on(${JSON.stringify(`${process.env.PORTICO_JIT_LOG}.${name}`)})`);
    try {
      return await instructionsPerRequest({ dir, conf, port: LISTEN.httpPort, host: 'bench.test', few: 200, many, ready: () => client.push(diffConfig(null, config).delta).then(() => undefined) });
    } finally {
      await client.close();
    }
  };
  const off = await count('off', false);
  const on = await count('on', true);
  console.log(`[metrics-cost] instructions per proxied request (callgrind, ${many - 200} requests): metrics off ${off}, on ${on} (+${on - off}, ${((100 * (on - off)) / off).toFixed(1)} %)`);
  // The parts, each counted inclusively (they do not drift with LuaJIT's collector as the totals do): the module's
  // log-phase handler, and the router's one extra nginx variable write ($portico_mk, the labels).
  const part = (name: string, fn: RegExp) => inclusivePerRequest(path.join(root, name), fn, 200, many);
  const module = part('on', /:ngx_http_pm_log_handler\b/);
  const varSet = part('on', /:ngx_http_lua_ffi_var_set\b/) - part('off', /:ngx_http_lua_ffi_var_set\b/);
  console.log(`[metrics-cost] where it goes: the metrics module's log handler ${module} instructions per request, the router's $portico_mk write ${varSet} (nginx's variable setter); the rest of the difference is LuaJIT's drift between the two runs`);
} finally {
  await net.close();
  if (process.env.PORTICO_KEEP) console.log(`[metrics-cost] kept ${root}`);
  else rmSync(root, { recursive: true, force: true });
}
