// Smoke check of the Traefik harness (e2e/harness/traefik.ts), for the peer benchmark: against the running test
// cluster (make cluster-up; this script does not bring it up), one echo pod behind a Service and one Ingress of class
// "traefik"; Traefik serves it with a 200 from the pod. Prints the flags, the time from start to the first 200, the
// time an Ingress created while it runs takes to be served, and Traefik's resident memory.
// Usage: node e2e/bench/peers/traefik-smoke.ts
import { admin, kubectl, uniqueNamespace } from '../../harness/cluster.ts';
import { createIngress, createService } from '../../harness/objects.ts';
import { addPod, deleteNamespace } from '../../harness/pods.ts';
import { request, until } from '../../harness/http.ts';
import { startTraefik, TRAEFIK_INGRESS_CLASS, type RunningTraefik } from '../../harness/traefik.ts';

try {
  kubectl(['get', 'ns', 'default', '-o', 'name']);
} catch (e) {
  console.error(`[traefik-smoke] the test cluster does not answer (make cluster-up first): ${String(e).split('\n')[0]}`);
  process.exit(2);
}
const ns = await uniqueNamespace('traefik-smoke');
let t: RunningTraefik | undefined;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
try {
  await createService(ns, 'echo', 'echo');
  const ip = await addPod(ns, 'echo-1', { labels: { app: 'echo' } });
  await createIngress(ns, TRAEFIK_INGRESS_CLASS, 'echo', 'echo.traefik.smoke', {});
  const t0 = performance.now();
  t = await startTraefik({ ns, waitFor: { host: 'echo.traefik.smoke' } });
  console.log(`[traefik-smoke] start → first 200: ${(performance.now() - t0).toFixed(0)} ms (pid ${t.pid}, http://127.0.0.1:${t.port})`);
  console.log(`[traefik-smoke] flags: ${t.args.join(' ')}`);
  const r = await request(t.port, 'echo.traefik.smoke', '/hello');
  const seen = r.json();
  console.log(`[traefik-smoke] GET echo.traefik.smoke/hello → ${r.status}, answered by pod ${seen.pod} (${seen.ip}; pod IP ${ip}), path ${seen.path}`);
  if (r.status !== 200 || seen.pod !== 'echo-1') throw new Error('not served by the echo pod');
  const other = await request(t.port, 'nobody.traefik.smoke', '/');
  console.log(`[traefik-smoke] unknown host → ${other.status}`);

  // A second Ingress while it runs (no throttle: applied on the provider's next event).
  const t1 = performance.now();
  await createIngress(ns, TRAEFIK_INGRESS_CLASS, 'echo-2', 'echo2.traefik.smoke', {});
  await until('echo2 served', async () => (await request(t!.port, 'echo2.traefik.smoke', '/')).status === 200, 20_000, 5);
  console.log(`[traefik-smoke] create Ingress → first 200 through Traefik: ${(performance.now() - t1).toFixed(0)} ms`);

  // Status: Traefik publishes its ingressEndpoint.ip on the Ingresses it serves.
  const status = await until('Ingress status', async () => {
    const ing = await admin().request<{ status?: { loadBalancer?: { ingress?: { ip?: string }[] } } }>('GET', `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses/echo`);
    return ing.status?.loadBalancer?.ingress?.[0]?.ip;
  }, 10_000, 100).catch(() => '(none)');
  console.log(`[traefik-smoke] Ingress status address written by Traefik: ${status}`);

  await sleep(2000);
  console.log(`[traefik-smoke] Traefik RSS, idle with 2 Ingresses: ${t.rssMB().toFixed(1)} MB`);
  for (let i = 0; i < 2000; i++) await request(t.port, 'echo.traefik.smoke', '/');
  console.log(`[traefik-smoke] Traefik RSS after 2,000 sequential requests: ${t.rssMB().toFixed(1)} MB`);
  console.log(`[traefik-smoke] log: ${t.logPath}`);
  console.log('[traefik-smoke] ok');
} finally {
  await t?.stop();
  await deleteNamespace(ns);
}
process.exit(0);
