// What OpenTelemetry tracing costs inside nginx: instructions per proxied request (callgrind) with tracing off, on
// at 1 % sampling (TraceIdRatioBased 0.01, the requests carry no traceparent: the sampler decides) and on at 100 %
// (AlwaysOn: every request makes a span that is exported), same configuration otherwise (the pure translation of
// one Ingress), same backend. The export runs in the counted nginx (its timer POSTs the batches to a stand-in
// collector of this process that answers 200), so the 100 % figure includes the JSON encoding and the sends.
// Callgrind counts do not move with other load on the machine, so this runs anywhere (no cluster): the backend is
// a test server in a network namespace of its own (subnet 236 of testnet.test-helpers.ts), nginx listens on 31970,
// the backend on 31973, the stand-in collector on 31974.
// Usage: node e2e/bench/tracing-cost.ts [requests=2000]
import http from 'node:http';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { translate } from '../../reconcilers/translate/translate.ts';
import { diffConfig, structureChecksum } from '../../reconcilers/translate/diff.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from '../../reconcilers/translate/fixtures.test-helpers.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../../reconcilers/model/global-config.ts';
import { renderNginxConf, runtimePaths } from '../../reconcilers/nginx-driver/nginx/render.ts';
import { DynamicClient } from '../../reconcilers/nginx-driver/nginx/dynamic.ts';
import { NginxProcess } from '../../reconcilers/nginx-driver/nginx/process.ts';
import { capturingLogger } from '../../reconcilers/nginx-driver/nginx/live.test-helpers.ts';
import { TestNet } from '../../reconcilers/nginx-driver/nginx/testnet.test-helpers.ts';
import { haveValgrind, instructionsPerRequest } from './instructions.ts';

const many = Number(process.argv[2] ?? 2000);
const LISTEN = { httpPort: 31970, httpsPort: 31971, statusPort: 31972, address: '127.0.0.1' };
const COLLECTOR = 31974;
if (!haveValgrind()) throw new Error('valgrind is not installed (make deps)');
const net = new TestNet(236);
const root = mkdtempSync(path.join(tmpdir(), 'portico-tracing-cost-'));
let spans = 0;
const collector = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    spans += (Buffer.concat(chunks).toString('utf8').match(/"spanId"/g) ?? []).length;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' }).end('{}');
  });
});
try {
  net.up();
  await net.start('web', 31973, 'echo');
  await new Promise<void>((r) => collector.listen(COLLECTOR, net.hostIp, r));
  const model = modelOf({
    services: [svc('web', [{ port: 80, targetPort: 31973 }])],
    slices: [slice('web-1', 'web', [{ port: 31973 }], [{ ip: net.ip }])],
    ingresses: [ing('web', { rules: [rule('bench.test', [{ path: '/', backend: svcRef('web', 80) }])] })],
  });
  const count = async (name: string, keys: Record<string, string>): Promise<number> => {
    const parsed = parseGlobalConfig(keys, defaultGlobalConfig());
    if (parsed.errors.length) throw new Error(JSON.stringify(parsed.errors));
    model.setGlobalConfig(parsed.values);
    const config = translate(model.snapshot(), { ...OPTS, listen: LISTEN }).config;
    const dir = path.join(root, name);
    mkdirSync(dir, { recursive: true });
    const runtime = runtimePaths(dir);
    const client = new DynamicClient(runtime.apiSocket);
    new NginxProcess({ binary: '/usr/sbin/nginx', runtime, shutdownTimeoutMs: 2_000 }, client, capturingLogger().logger).prepare();
    const conf = renderNginxConf(config.structure, runtime, structureChecksum(config.structure));
    try {
      return await instructionsPerRequest({ dir, conf, port: LISTEN.httpPort, host: 'bench.test', few: 200, many, ready: () => client.push(diffConfig(null, config).delta).then(() => undefined) });
    } finally {
      await client.close();
    }
  };
  const on = { 'enable-opentelemetry': 'true', 'otlp-collector-host': net.hostIp, 'otlp-collector-port': String(COLLECTOR), 'otel-schedule-delay-millis': '200' };
  const off = await count('off', {});
  const one = await count('ratio-1', { ...on, 'otel-sampler': 'TraceIdRatioBased', 'otel-sampler-ratio': '0.01' });
  const spansAtOne = spans;
  const all = await count('always-on', on);
  const pct = (x: number) => `${x >= off ? '+' : ''}${x - off}, ${((100 * (x - off)) / off).toFixed(1)} %`;
  console.log(`[tracing-cost] instructions per proxied request (callgrind, ${many - 200} requests): tracing off ${off}; on, 1 % sampled ${one} (${pct(one)}); on, AlwaysOn with export ${all} (${pct(all)}); spans received: ${spansAtOne} at 1 %, ${spans - spansAtOne} at 100 %`);
} finally {
  collector.close();
  await net.close();
  rmSync(root, { recursive: true, force: true });
}
