// What the access log and X-Request-ID cost inside nginx: instructions per proxied request (callgrind) of the pure
// translation of one Ingress, same backend, with variants of the rendered configuration:
//   before        Portico's earlier default: its own short log format, X-Request-ID "$msec-$connection-$connection_requests"
//   format        ingress-nginx's default log format, the earlier X-Request-ID
//   after         ingress-nginx's default log format and the 32-hex X-Request-ID the router makes (today's default)
//   after+rand    the same with nginx's $request_id as the id instead (16 random bytes from OpenSSL per request)
//   after+client  the default, the client sends its own X-Request-ID (no id made)
//   after+nogen   generate-request-id "false", no client id (nothing generated)
//   after+json    a JSON format with escape=json reading every ingress-nginx variable (route labels sent)
// Callgrind counts do not move with other load, so this runs anywhere (no cluster): the backend is a test server in a
// network namespace of its own (subnet 238 of testnet.test-helpers.ts), nginx listens on 31960.
// The total moves by several thousand instructions between runs (the Lua collector's timing), so the parts that
// matter are also counted exactly, from callgrind_annotate (Debian's nginx is stripped: only exported functions have
// names): RAND_bytes (OpenSSL; $request_id's random bytes) and ngx_http_get_indexed_variable, inclusive — every
// variable nginx evaluates for the request (headers sent upstream, the log line and what its maps read).
// Usage: node e2e/bench/log-cost.ts [requests=1200]
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
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
import { defaultGlobalConfig, parseGlobalConfig } from '../../reconcilers/model/global-config.ts';
import { haveValgrind, instructionsPerRequest } from './instructions.ts';

const many = Number(process.argv[2] ?? 1200);
// PORTICO_LOG_COST_ONLY=before,after: only these variants.
const only = process.env.PORTICO_LOG_COST_ONLY?.split(',');
const LISTEN = { httpPort: 31960, httpsPort: 31961, statusPort: 31962, address: '127.0.0.1' };
const OLD_FORMAT = `'$remote_addr - [$time_local] "$request" $status $body_bytes_sent "$http_user_agent" $request_time [$portico_backend] $upstream_addr $upstream_status $upstream_response_time'`;
const OLD_ID = '"" "$msec-$connection-$connection_requests";';
const JSON_FORMAT =
  '{"time": "$time_iso8601", "status": $status, "uri": "$request_uri", "upstream": "$proxy_upstream_name", "alt": "$proxy_alternative_upstream_name", "req_id": "$req_id", "namespace": "$namespace", "ingress": "$ingress_name", "service": "$service_name", "port": "$service_port", "path": "$location_path"}';
if (!haveValgrind()) throw new Error('valgrind is not installed (make deps)');
const net = new TestNet(238);
const root = mkdtempSync(path.join(tmpdir(), 'portico-log-cost-'));
try {
  net.up();
  await net.start('web', 31963, 'echo');
  const configOf = (data: Record<string, string>) => {
    const cfg = parseGlobalConfig(data, defaultGlobalConfig());
    if (cfg.errors.length) throw new Error(JSON.stringify(cfg.errors));
    const model = modelOf({
      services: [svc('web', [{ port: 80, targetPort: 31963 }])],
      slices: [slice('web-1', 'web', [{ port: 31963 }], [{ ip: net.ip }])],
      ingresses: [ing('web', { rules: [rule('bench.test', [{ path: '/', backend: svcRef('web', 80) }])] })],
    });
    model.setGlobalConfig(cfg.values);
    return translate(model.snapshot(), { ...OPTS, listen: LISTEN }).config;
  };
  /** Inclusive instructions of one function in a callgrind output (0 when it never ran). */
  const inclusive = (file: string, fn: string): number => {
    const out = spawnSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', file], { encoding: 'utf8', maxBuffer: 64 << 20 }).stdout;
    const line = out.split('\n').find((l) => new RegExp(`[ :]${fn}( |'|$)`).test(l));
    if (process.env.PORTICO_DEBUG_ANNOTATE) console.log(out.split('\n').slice(0, 40).join('\n'));
    return line ? Number((/^\s*([\d,]+)/.exec(line)?.[1] ?? '0').replace(/,/g, '')) : 0;
  };
  const count = async (name: string, data: Record<string, string>, edit: (conf: string) => string, headers?: Record<string, string>): Promise<{ total: number; log: number; requestId: number }> => {
    const config = configOf(data);
    const dir = path.join(root, name);
    mkdirSync(dir, { recursive: true });
    // The access log is a file of the runtime directory (buffer=64k flush=1s, as the controller writes one).
    const runtime = runtimePaths(dir);
    const client = new DynamicClient(runtime.apiSocket);
    new NginxProcess({ binary: '/usr/sbin/nginx', runtime, shutdownTimeoutMs: 2_000 }, client, capturingLogger().logger).prepare();
    const conf = edit(renderNginxConf(config.structure, runtime, structureChecksum(config.structure)));
    try {
      const total = await instructionsPerRequest({ dir, conf, port: LISTEN.httpPort, host: 'bench.test', few: 200, many, ...(headers ? { headers } : {}), ready: () => client.push(diffConfig(null, config).delta).then(() => undefined) });
      const per = (fn: string) => Math.round((inclusive(path.join(dir, `callgrind.${many}.out`), fn) - inclusive(path.join(dir, 'callgrind.200.out'), fn)) / (many - 200));
      return { total, log: per('ngx_http_get_indexed_variable'), requestId: per('RAND_bytes') };
    } finally {
      await client.close();
    }
  };
  const oldFormat = (c: string) => {
    const r = c.replace(/log_format portico_upstream [^;]*;/, `log_format portico_upstream ${OLD_FORMAT};`);
    if (r === c) throw new Error('log-cost: the configuration has no log_format portico_upstream to replace');
    return r;
  };
  // The variants with another id: $req_id a map again, whose empty key takes that id ($portico_rid, the variables
  // module's, is then never read, so never made).
  const GEN = 'portico_coalesce $req_id $http_x_request_id $portico_rid;';
  const withId = (id: string) => (c: string) => {
    if (!c.includes(GEN)) throw new Error(`log-cost: the configuration has no "${GEN}" line to replace`);
    return c.replace(GEN, `map $http_x_request_id $req_id { default $http_x_request_id; ${id} }`);
  };
  const oldId = withId(OLD_ID);
  const randId = withId('"" $request_id;');
  const same = (c: string) => c;
  const results: [string, { total: number; log: number; requestId: number }][] = [];
  if (!only || only.includes('before')) results.push(['before', await count('before', {}, (c) => oldId(oldFormat(c)))]);
  if (!only || only.includes('format')) results.push(['format', await count('format', {}, oldId)]);
  if (!only || only.includes('after')) results.push(['after', await count('after', {}, same)]);
  if (!only || only.includes('after+rand')) results.push(['after+rand', await count('rand', {}, randId)]);
  if (!only || only.includes('after+client')) results.push(['after+client', await count('client', {}, same, { 'x-request-id': 'client-supplied-request-id-000001' })]);
  if (!only || only.includes('after+nogen')) results.push(['after+nogen', await count('nogen', { 'generate-request-id': 'false' }, same)]);
  if (!only || only.includes('after+json')) results.push(['after+json', await count('json', { 'log-format-upstream': JSON_FORMAT, 'log-format-escape-json': 'true' }, same)]);
  const base = results[0]![1].total;
  for (const [name, n] of results) {
    console.log(`[log-cost] ${name.padEnd(13)} ${n.total} instructions per proxied request (${n.total - base >= 0 ? '+' : ''}${n.total - base} vs before), variables ${n.log} (${n.log - results[0]![1].log >= 0 ? '+' : ''}${n.log - results[0]![1].log}), RAND_bytes ${n.requestId} (callgrind, ${many - 200} requests)`);
  }
} finally {
  await net.close();
  rmSync(root, { recursive: true, force: true });
}
