// Routes are data: adding, changing and removing Ingresses (hosts, paths, per-request settings such as timeouts)
// must never reload nginx, and traffic to other hosts must not notice. Real apiserver (RBAC on), Portico
// in-process as its ServiceAccount, real nginx, two echo pods behind one Service.
//
// Isolation: the Ingresses use an IngressClass of this run (its own controller value, passed to Portico with
// --controller-class/--ingress-class) and Portico reads a ConfigMap of this test's namespace (absent: defaults).
// So a reload caused by something else on a shared cluster — another test's Ingress with a new directive profile,
// an edit of the shared portico-system/portico ConfigMap, Ingresses of a namespace still being deleted — cannot
// be blamed on routes here (and cannot hide in this test's counts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, ensureCluster, ownIngressClass, uniqueNamespace } from './harness/cluster.ts';
import { addPod, deleteNamespace } from './harness/pods.ts';
import { request, resetConnections, until } from './harness/http.ts';
import { startPortico, type RunningPortico } from './harness/portico.ts';

let p: RunningPortico;
let ns: string;
// Hosts and the class are unique per run so leftovers of an earlier run in a reused cluster cannot interfere.
const RUN = Date.now().toString(36);
const SUF = `rnr${RUN}.test`;
let CLASS = '';
let removeClass: (() => Promise<void>) | undefined;
const ingPath = (name = '') => `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses${name ? `/${name}` : ''}`;
const get = (host: string, path: string) => request(p.httpPort, host, path);
const status = async (host: string, path: string) => (await get(host, path)).status;

type Path = { path: string; pathType: 'Prefix' | 'Exact' };
function rule(host: string, paths: Path[]) {
  return { host, http: { paths: paths.map((x) => ({ ...x, backend: { service: { name: 'echo', port: { number: 80 } } } })) } };
}
function ingress(name: string, rules: ReturnType<typeof rule>[], annotations?: Record<string, string>) {
  return { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, ...(annotations ? { annotations } : {}) }, spec: { ingressClassName: CLASS, rules } };
}
// API calls are async on purpose (no kubectl): an execFileSync would stall this process — Portico and the load
// loop included — for the duration of each kubectl run.
const create = (body: ReturnType<typeof ingress>) => admin().request('POST', ingPath(), { body });
const remove = (name: string) => admin().request('DELETE', ingPath(name));
const reloads = () => p.metric('portico_nginx_reloads_total', { result: 'success' });

before(async () => {
  await ensureCluster();
  ns = await uniqueNamespace('rnr');
  const cls = await ownIngressClass('rnr');
  CLASS = cls.name;
  removeClass = cls.remove;
  p = await startPortico(52080, [...cls.flags, '--configmap', `${ns}/portico`]);
  await until('portico ready', async () => (await request(p.healthPort, 'x', '/readyz')).status === 200);
});

after(async () => {
  await p?.stop();
  if (ns) await deleteNamespace(ns);
  await removeClass?.();
});

describe('routes are data', () => {
  test('create / edit / delete Ingresses (and a per-route timeout) under load on another host: zero reloads, zero failed requests', async () => {
    await admin().request('POST', `/api/v1/namespaces/${ns}/services`, {
      body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'echo' }, spec: { selector: { app: 'echo' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } },
    });
    await addPod(ns, 'echo-1', { labels: { app: 'echo' } });
    await addPod(ns, 'echo-2', { labels: { app: 'echo' } });
    const a = `a.${SUF}`;
    await create(ingress('a', [rule(a, [{ path: '/', pathType: 'Prefix' }])]));
    await until('a served', async () => (await status(a, '/')) === 200);
    await until('both pods in the backend', async () => {
      const b = (await p.gateway.dynamic.getBackends())[`${ns}_echo_80`] as { endpoints: unknown[] } | undefined;
      return b?.endpoints.length === 2;
    });
    // Start from a settled gateway (nothing structural pending or running) and fresh connections.
    await until('no structural sync pending', () => p.gateway.structural.state === 'idle' && !p.gateway.structural.dirty);
    resetConnections();
    const mark = Date.now();
    const reloads0 = await reloads();

    // ---- the load on host a: sequential, until stopped ----------------------------------------------------------
    let stop = false;
    let total = 0;
    let failures = 0;
    const failureDetail: string[] = [];
    const pods = new Map<string, number>();
    const load = (async () => {
      while (!stop) {
        total++;
        const r = await get(a, '/');
        if (r.status < 200 || r.status > 299) {
          failures++;
          if (failureDetail.length < 10) failureDetail.push(`${r.status} ${r.error ?? r.body.slice(0, 120)}`);
          continue;
        }
        const pod = r.json().pod;
        pods.set(pod, (pods.get(pod) ?? 0) + 1);
      }
    })();

    try {
      // ---- B: a new host with a Prefix and an Exact path ----------------------------------------------------------
      // (The Prefix path is /app, not /: a "/" Prefix would also answer /x and /y, and the edit below could not be
      // seen. The "/" Prefix is covered by the host the edit adds.)
      const b = `b.${SUF}`;
      const b2 = `b2.${SUF}`;
      await create(ingress('b', [rule(b, [{ path: '/app', pathType: 'Prefix' }, { path: '/x', pathType: 'Exact' }])]));
      await until('b served', async () => (await status(b, '/app')) === 200 && (await status(b, '/x')) === 200);
      assert.equal(await status(b, '/app/deeper'), 200, 'Prefix matches below itself');
      assert.equal(await status(b, '/x/deeper'), 404, 'Exact does not match below itself');
      assert.equal(await status(b, '/y'), 404, 'no route for /y yet');
      assert.equal(await status(b2, '/'), 404, 'second host not served yet');

      // ---- edit B: the Exact path becomes /y, and a second host appears ------------------------------------------
      await admin().request('PATCH', ingPath('b'), {
        contentType: 'application/merge-patch+json',
        body: { spec: { rules: [rule(b, [{ path: '/app', pathType: 'Prefix' }, { path: '/y', pathType: 'Exact' }]), rule(b2, [{ path: '/', pathType: 'Prefix' }])] } },
      });
      await until('edit of b visible', async () => (await status(b, '/y')) === 200 && (await status(b, '/x')) === 404 && (await status(b2, '/anything')) === 200);
      assert.equal(await status(b, '/app'), 200, 'the unchanged path still served');

      // ---- delete B ---------------------------------------------------------------------------------------------
      await remove('b');
      await until('b gone', async () => (await status(b, '/app')) === 404 && (await status(b, '/y')) === 404 && (await status(b2, '/')) === 404);

      // ---- C: a per-route timeout (request data, not a directive profile) ---------------------------------------
      const c = `c.${SUF}`;
      await create(ingress('c', [rule(c, [{ path: '/', pathType: 'Prefix' }])], { 'nginx.ingress.kubernetes.io/proxy-read-timeout': '120' }));
      await until('c served', async () => (await status(c, '/')) === 200);
      await remove('c');
      await until('c gone', async () => (await status(c, '/')) === 404);
      // Everything above has been applied; wait until nothing is pending either, so a late reload would be counted.
      await until('no structural sync pending', () => p.gateway.structural.state === 'idle' && !p.gateway.structural.dirty);
    } finally {
      stop = true;
      await load;
    }

    const reloadRecords = p.gateway.history.filter((r) => r.at >= mark && r.reload);
    const syncs = p.gateway.history.filter((r) => r.at >= mark);
    console.log(`[routes-no-reload] ${total} requests on ${a} (per pod ${JSON.stringify(Object.fromEntries(pods))}), failures ${failures}; ${syncs.length} syncs since the mark: ${syncs.map((r) => `${r.lane}${r.reload ? '+RELOAD' : ''}${r.ok ? '' : '(failed)'} ${r.ms.toFixed(0)}ms`).join(', ')}`);
    assert.equal((await reloads()) - reloads0, 0, 'portico_nginx_reloads_total{result="success"} must not move: routes are pushed to Lua, never reloaded');
    assert.deepEqual(reloadRecords.map((r) => r.reasons), [], 'no sync since the mark reloaded nginx');
    assert.equal(failures, 0, `no failed request on ${a} (${[...new Set(failureDetail)].join(' | ')})`);
    assert.ok(total > 50, `the load loop ran (${total} requests)`);
    assert.equal(pods.size, 2, 'both pods answered host a');
  });
});
