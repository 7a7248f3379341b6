// The install, for real: `kubectl apply -k` of kustomize/ (through the e2e/overlays/node overlay: a NodePort on
// 127.0.0.1 instead of a cloud load balancer) onto the local real node — kubelet, containerd, runc, CNI bridge and
// kube-proxy (e2e/node) — running the image `make images` built. Both replicas become Ready, one leads, an echo
// app's Ingress is served through the Service; the admission webhook answers through its Service; a rollout restart
// and a drain under steady load fail no request; with Portico scaled to 0 the webhook fails open (Ignore).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { ADMIN_KUBECONFIG, admin, ensureCluster } from './harness/cluster.ts';
import { until } from './harness/http.ts';
import { REPO_ROOT } from './harness/portico.ts';
import { isNotFound } from '../operator/kube/client.ts';

const NODE_PORT = 30080;
const NS = 'portico-system';
const APP_NS = 'install-demo';
const HOST = 'echo.install.test';
const N = 'nginx.ingress.kubernetes.io/';

const kc = (args: string[], input?: string) =>
  execFileSync('kubectl', ['--kubeconfig', ADMIN_KUBECONFIG, ...args], { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], timeout: 300_000 });
/** kubectl with stdout+stderr and the exit status (warnings and denials are on stderr). */
function kcAll(args: string[], input?: string): { ok: boolean; out: string } {
  const r = spawnSync('kubectl', ['--kubeconfig', ADMIN_KUBECONFIG, ...args], { input, encoding: 'utf8', timeout: 300_000 });
  return { ok: r.status === 0, out: `${r.stdout}${r.stderr}` };
}

/** kubectl without blocking the event loop (the load loops run in this process while it waits). */
function kcAsync(args: string[]): Promise<{ ok: boolean; out: string }> {
  return new Promise((resolve) => {
    execFile('kubectl', ['--kubeconfig', ADMIN_KUBECONFIG, ...args], { encoding: 'utf8', timeout: 300_000 }, (error, stdout, stderr) => resolve({ ok: !error, out: `${stdout}${stderr}` }));
  });
}

/** One request through the NodePort on 127.0.0.1 (a new connection each time, as a load balancer's probe does). */
function get(pathname = '/', host = HOST): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: NODE_PORT, path: pathname, headers: { host, connection: 'close' }, agent: false, timeout: 5_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

/** Steady load: `workers` loops of requests until stopped; every failure (error or non-200) is kept. */
function load(workers = 4): { stop: () => Promise<{ ok: number; failed: string[] }> } {
  let running = true;
  let ok = 0;
  const failed: string[] = [];
  const loops = Array.from({ length: workers }, async () => {
    while (running) {
      try {
        const r = await get('/load');
        if (r.status === 200) ok++;
        else failed.push(`status ${r.status}: ${r.body.slice(0, 100)}`);
      } catch (e) {
        failed.push((e as Error).message);
      }
    }
  });
  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return { ok, failed };
    },
  };
}

const podsOf = () =>
  (JSON.parse(kc(['-n', NS, 'get', 'pods', '-l', 'app.kubernetes.io/name=portico,app.kubernetes.io/component=controller', '-o', 'json'])) as {
    items: { metadata: { name: string; deletionTimestamp?: string }; spec: { nodeName?: string }; status: { conditions?: { type: string; status: string }[] } }[];
  }).items;
const readyPods = () => podsOf().filter((p) => !p.metadata.deletionTimestamp && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));

const echoApp = `
apiVersion: v1
kind: Namespace
metadata: { name: ${APP_NS} }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: echo, namespace: ${APP_NS} }
spec:
  replicas: 2
  selector: { matchLabels: { app: echo } }
  template:
    metadata: { labels: { app: echo } }
    spec:
      containers:
        - name: echo
          image: localhost/portico/echo:1
          imagePullPolicy: IfNotPresent
          env: [{ name: POD_NAME, valueFrom: { fieldRef: { fieldPath: metadata.name } } }]
          ports: [{ name: http, containerPort: 8080 }]
          readinessProbe: { httpGet: { path: /healthz, port: http }, periodSeconds: 2 }
          securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, runAsUser: 65532 }
---
apiVersion: v1
kind: Service
metadata: { name: echo, namespace: ${APP_NS} }
spec:
  selector: { app: echo }
  ports: [{ name: http, port: 80, targetPort: http }]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: echo, namespace: ${APP_NS} }
spec:
  ingressClassName: portico
  rules:
    - host: ${HOST}
      http:
        paths:
          - { path: /, pathType: Prefix, backend: { service: { name: echo, port: { number: 80 } } } }
`;

before(async () => {
  await ensureCluster();
  // The images (cached by content) and the node (idempotent); both print what they do.
  execFileSync('make', ['-s', 'images'], { cwd: REPO_ROOT, stdio: 'inherit', timeout: 1_800_000 });
  execFileSync('bash', [path.join(REPO_ROOT, 'e2e/node/up.sh')], { stdio: 'inherit', timeout: 900_000 });
});

after(async () => {
  // The installed Portico serves class "portico", leads with its own Lease and owns the "portico" webhook
  // configuration and its certificate Secret: left running, it would write status on, and judge, the objects of the
  // suites that run Portico as a host process after this one. Remove the running parts (the CRDs, namespace and RBAC
  // stay: every suite applies them again anyway).
  for (const args of [
    ['delete', 'namespace', APP_NS, '--ignore-not-found', '--wait=true', '--timeout=120s'],
    ['-n', NS, 'delete', 'deployment', 'portico', '--ignore-not-found', '--wait=true', '--timeout=120s'],
    ['delete', 'validatingwebhookconfiguration', 'portico', '--ignore-not-found'],
    ['-n', NS, 'delete', 'secret', 'portico-webhook-tls', '--ignore-not-found'],
    ['-n', NS, 'delete', 'lease', 'portico-leader', '--ignore-not-found'],
  ]) {
    try {
      kc(args);
    } catch (e) {
      console.log(`[install] cleanup: kubectl ${args.join(' ')}: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  await until('installed Portico pods gone', () => podsOf().length === 0, 120_000, 500);
  // The real node's kube-proxy rewrites traffic to every Service cluster IP on this machine (its iptables rules
  // REJECT those without endpoints): suites that run after this one fake cluster IPs of their own, so the node goes
  // (the next run of this suite brings it up again).
  execFileSync('bash', [path.join(REPO_ROOT, 'e2e/node/down.sh')], { stdio: 'inherit', timeout: 300_000 });
});

describe('install on a real node', () => {
  test('kubectl apply -k: both replicas Ready, one holds the Lease, the echo app is served through the Service', async () => {
    kc(['apply', '-k', path.join(REPO_ROOT, 'e2e/overlays/node')]);
    kc(['-n', NS, 'rollout', 'status', 'deployment/portico', '--timeout=240s']);
    assert.equal(readyPods().length, 2);
    const lease = await until('leader Lease held by a replica', async () => {
      try {
        const l = await admin().request<{ spec?: { holderIdentity?: string } }>('GET', `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/portico-leader`);
        return l.spec?.holderIdentity;
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
    }, 60_000);
    assert.ok(readyPods().some((p) => lease.startsWith(p.metadata.name)), `Lease holder ${lease} is one of the pods`);
    kc(['apply', '-f', '-'], echoApp);
    kc(['-n', APP_NS, 'rollout', 'status', 'deployment/echo', '--timeout=120s']);
    const r = await until('echo served through the NodePort', async () => {
      try {
        const x = await get('/hello');
        return x.status === 200 ? x : undefined;
      } catch {
        return undefined;
      }
    }, 60_000, 200);
    const echo = JSON.parse(r.body) as { path?: string; pod?: string };
    assert.match(JSON.stringify(echo), /echo-/, 'answered by an echo pod');
    // Status as when Portico runs on the host: the leader publishes the Service's address on the Ingress.
    await until('Ingress status address', () => {
      const ing = JSON.parse(kc(['-n', APP_NS, 'get', 'ingress', 'echo', '-o', 'json'])) as { status?: { loadBalancer?: { ingress?: unknown[] } } };
      return (ing.status?.loadBalancer?.ingress?.length ?? 0) > 0;
    }, 60_000, 500);
  });

  test('the README quick start on the real node: kubectl create deployment + create service clusterip --tcp=8080:8080 + create ingress serves 200', async () => {
    const ns = 'quickstart-demo';
    try {
      // The commands of README.md's quick start, in their own namespace (the image is the test node's echo).
      kc(['create', 'namespace', ns]);
      kc(['-n', ns, 'create', 'deployment', 'web', '--image=localhost/portico/echo:1']);
      kc(['-n', ns, 'create', 'service', 'clusterip', 'web', '--tcp=8080:8080']);
      kc(['-n', ns, 'create', 'ingress', 'web', '--class=portico', '--rule=web.example/*=web:8080']);
      kc(['-n', ns, 'rollout', 'status', 'deployment/web', '--timeout=120s']);
      const r = await until('web.example served through the NodePort', async () => {
        const x = await get('/', 'web.example').catch(() => ({ status: 0, body: '' }));
        return x.status === 200 ? x : undefined;
      }, 60_000, 200);
      assert.match((JSON.parse(r.body) as { pod: string }).pod, /^web-/, 'answered by a pod of the web Deployment (the echo names its pod by hostname)');
    } finally {
      kcAll(['delete', 'namespace', ns, '--ignore-not-found', '--wait=true', '--timeout=120s']);
    }
  });

  test('the webhook answers through its Service: a bad Ingress is denied, a conflicting one admitted with a warning', async () => {
    const bad = (name: string) => `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ${name}
  namespace: ${APP_NS}
  annotations: { ${N}proxy-body-size: "1m; include /etc/passwd" }
spec:
  ingressClassName: portico
  rules: [{ host: bad.install.test, http: { paths: [{ path: /, pathType: Prefix, backend: { service: { name: echo, port: { number: 80 } } } }] } }]
`;
    let n = 0;
    // The leader creates the certificate and publishes the CA bundle shortly after it starts leading.
    const denied = await until('denied by the webhook', () => {
      const r = kcAll(['apply', '-f', '-'], bad(`bad-${n++}`));
      return r.ok ? undefined : r.out;
    }, 90_000, 500);
    assert.match(denied, /denied the request: Portico: .*proxy-body-size/);
    const clash = kcAll(['apply', '-f', '-'], `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: echo-copy, namespace: ${APP_NS} }
spec:
  ingressClassName: portico
  rules: [{ host: ${HOST}, http: { paths: [{ path: /, pathType: Prefix, backend: { service: { name: echo, port: { number: 80 } } } }] } }]
`);
    assert.equal(clash.ok, true, clash.out);
    assert.match(clash.out, new RegExp(`Warning: Conflict: host ${HOST.replace(/\./g, '\\.')} path / \\(Prefix\\) is already served by Ingress ${APP_NS}/echo`));
    kc(['-n', APP_NS, 'delete', 'ingress', 'echo-copy']);
  });

  test('kubectl rollout restart under steady load: 0 failed requests', async () => {
    const before0 = new Set(readyPods().map((p) => p.metadata.name));
    const l = load();
    let r: Awaited<ReturnType<typeof l.stop>>;
    try {
      await kcAsync(['-n', NS, 'rollout', 'restart', 'deployment/portico']);
      await kcAsync(['-n', NS, 'rollout', 'status', 'deployment/portico', '--timeout=300s']);
      await until('old pods gone', () => podsOf().every((p) => !before0.has(p.metadata.name)), 300_000, 500);
    } finally {
      r = await l.stop();
    }
    console.log(`[install] rollout restart: ${r.ok} requests, ${r.failed.length} failed`);
    assert.ok(r.ok > 50, `load ran (${r.ok})`);
    assert.deepEqual(r.failed, []);
  });

  test('kubectl drain under steady load: the PDB keeps one replica serving, 0 failed requests', async () => {
    const node = podsOf()[0]!.spec.nodeName!;
    const l = load();
    // Evicting both replicas would violate minAvailable 1 and the cordoned node cannot take a replacement: drain
    // evicts one, then keeps being refused for the other (429 from the eviction API) until its timeout.
    let d: { ok: boolean; out: string };
    let r: Awaited<ReturnType<typeof l.stop>>;
    try {
      d = await kcAsync(['drain', node, '--pod-selector=app.kubernetes.io/name=portico', '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=40s']);
    } finally {
      r = await l.stop();
      kc(['uncordon', node]);
    }
    console.log(`[install] drain: ${r.ok} requests, ${r.failed.length} failed`);
    assert.equal(d.ok, false, 'drain cannot finish while the PDB protects the last replica');
    assert.match(d.out, /disruption budget/);
    assert.ok(r.ok > 50, `load ran (${r.ok})`);
    assert.deepEqual(r.failed, []);
    kc(['-n', NS, 'rollout', 'status', 'deployment/portico', '--timeout=240s']);
    assert.equal(readyPods().length, 2);
  });

  test('scaled to 0, the webhook fails open (failurePolicy Ignore): writes are admitted', async () => {
    kc(['-n', NS, 'scale', 'deployment/portico', '--replicas=0']);
    await until('no Portico pods', () => podsOf().length === 0, 120_000, 500);
    const r = kcAll(['apply', '-f', '-'], `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: while-down
  namespace: ${APP_NS}
  annotations: { ${N}proxy-body-size: "lots" }
spec:
  ingressClassName: portico
  rules: [{ host: down.install.test, http: { paths: [{ path: /, pathType: Prefix, backend: { service: { name: echo, port: { number: 80 } } } }] } }]
`);
    assert.equal(r.ok, true, r.out);
    kc(['-n', NS, 'scale', 'deployment/portico', '--replicas=2']);
    kc(['-n', NS, 'rollout', 'status', 'deployment/portico', '--timeout=240s']);
    // Back up, the controller judges what was admitted meanwhile: a Warning Event on it.
    await until('Warning Event on the Ingress admitted while down', () => /proxy-body-size/.test(kc(['-n', APP_NS, 'get', 'events', '--field-selector', 'involvedObject.name=while-down', '-o', 'json'])), 90_000, 1000);
  });
});
