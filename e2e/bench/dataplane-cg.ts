// The instruction counts of dataplane.ts (callgrind, per proxied request) without the cluster: plain nginx, plain
// nginx with the same access log, and Portico's nginx rendered from the pure translation of one Ingress with what the
// controller always adds (per-request metrics, the installation's loop id), same static backend (standalone.ts).
// Callgrind counts do not move with other load on the machine, so this runs anywhere: the backend is in network
// namespace subnet 217 of testnet.test-helpers.ts; the counted nginx listens on 31970-31979.
// PORTICO_CG_ONLY=portico skips the two plain references; PORTICO_KEEP keeps the callgrind outputs (the directory is
// printed) for callgrind_annotate --inclusive=yes; PORTICO_CG_EDIT counts a changed configuration (standalone.ts).
// Usage: node e2e/bench/dataplane-cg.ts [many=2200] [few=200] [routes=0]   (routes: other hosts in the router table)
import { haveValgrind, instructionsPerRequest } from './instructions.ts';
import { standaloneBench, type BenchServer } from './standalone.ts';

const many = Number(process.argv[2] ?? 2200);
const few = Number(process.argv[3] ?? 200);
const extraHosts = Number(process.argv[4] ?? 0);
const only = process.env.PORTICO_CG_ONLY?.split(',');
if (!haveValgrind()) throw new Error('valgrind is not installed (make deps)');
await standaloneBench({ tag: 'dataplane-cg', subnet: 217, backendPort: 31979, httpPort: 31970 }, async (b) => {
  const results: [string, number][] = [];
  const count = async (s: BenchServer) => results.push([s.name, await instructionsPerRequest({ ...s, few, many })]);
  if (!only || only.includes('plain')) await count(b.plain('plain', 31975, () => 'access_log off;'));
  if (!only || only.includes('plain+log')) await count(b.plain('plain+log', 31976, (d) => `access_log ${d}/access.log l buffer=64k flush=1s;`));
  if (!only || only.includes('portico')) await count(await b.portico(extraHosts));
  console.log(`[dataplane-cg] instructions per proxied request (callgrind, ${many} - ${few} requests): ${results.map(([n, v]) => `${n} ${v}`).join(', ')}`);
});
