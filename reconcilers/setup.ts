// Wires Portico's reconcilers and the gateway into a manager: one shared informer per kind, one small
// reconciler per kind writing into the shared model, and the gateway reconciler reading it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Config } from '../operator/config.ts';
import type { Manager } from '../operator/manager.ts';
import { keyOf, type KubeObject } from '../operator/kube/object.ts';
import { Resources } from '../operator/kube/resources.ts';
import { ConfigMapReconciler } from './configmap.ts';
import { GatewayReconciler } from './gateway/gateway.ts';
import { IngressReconciler } from './ingress.ts';
import { IngressClassReconciler } from './ingressclass.ts';
import { Model, secretsOf } from './model/model.ts';
import { serviceKeyOfSlice } from './model/normalize.ts';
import type { TlsMaterial } from './model/types.ts';
import { SecretReconciler, secretTransform, type SecretObject } from './secret.ts';
import { ServiceReconciler, SLICES_BY_SERVICE } from './service.ts';
import { StatusReconciler } from './status.ts';

export interface Portico {
  model: Model;
  gateway: GatewayReconciler;
}

/** A self-signed certificate for unknown SNI when no --default-ssl-certificate is given (fixed subject). */
export function generateFallbackCertificate(): TlsMaterial {
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-cert-'));
  try {
    const r = spawnSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '3650', '-subj', '/CN=Portico Fake Certificate',
        '-keyout', path.join(dir, 'k.pem'), '-out', path.join(dir, 'c.pem')],
      { stdio: 'ignore' },
    );
    if (r.status !== 0) throw new Error('openssl could not generate the fallback certificate');
    const cert = readFileSync(path.join(dir, 'c.pem'), 'utf8');
    const key = readFileSync(path.join(dir, 'k.pem'), 'utf8');
    return { key: '(generated)', ok: true, cert, privateKey: key, hosts: [], notAfter: new Date(Date.now() + 3650 * 86400_000).toISOString(), fingerprint: '' };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function setupPortico(m: Manager, cfg: Config): Promise<Portico> {
  const model = new Model();
  if (cfg['enable-test-hooks']) m.log.warn('--enable-test-hooks is set: portico.dev/test-invalid-directive is honoured; never use this in production');
  const classes = m.informer<KubeObject>(Resources.IngressClass);
  const ingresses = m.informer<KubeObject>(Resources.Ingress);
  const services = m.informer<KubeObject>(Resources.Service);
  const slices = m.informer<KubeObject>(Resources.EndpointSlice, {
    indexers: { [SLICES_BY_SERVICE]: (s) => { const k = serviceKeyOfSlice(s); return k ? [k] : []; } },
  });
  const secrets = m.informer<SecretObject>(Resources.Secret, {
    fieldSelector: 'type=kubernetes.io/tls',
    transform: secretTransform(model),
  });

  const classCtrl = m.controller({ name: 'ingressclass', reconciler: new IngressClassReconciler(classes, model) });
  classCtrl.watch(classes);
  const ingressCtrl = m.controller({ name: 'ingress', reconciler: new IngressReconciler(ingresses, model, m.events), workers: 2 });
  ingressCtrl.watch(ingresses);
  const serviceCtrl = m.controller({ name: 'service', reconciler: new ServiceReconciler(services, slices, model), workers: 2 });
  serviceCtrl.watch(services);
  serviceCtrl.watch(slices, (s) => { const k = serviceKeyOfSlice(s); return k ? [k] : []; });
  const secretCtrl = m.controller({ name: 'secret', reconciler: new SecretReconciler(secrets, model, m.client, m.events) });
  secretCtrl.watch(secrets);

  // A Secret becomes (un)referenced when an Ingress changes in the model: re-check the Secrets it names now and
  // the ones it named before.
  const lastSecrets = new Map<string, string[]>();
  model.onChange((changes) => {
    for (const c of changes) {
      if (c.kind !== 'Ingress') continue;
      const ing = model.snapshot().ingresses.get(c.key);
      const now = ing ? secretsOf(ing) : [];
      for (const s of new Set([...(lastSecrets.get(c.key) ?? []), ...now])) secretCtrl.enqueue(s);
      if (now.length) lastSecrets.set(c.key, now);
      else lastSecrets.delete(c.key);
    }
  });

  if (cfg.configmap) {
    const [ns, name] = cfg.configmap.split('/') as [string, string];
    const cms = m.informer<KubeObject & { data?: Record<string, string> }>(Resources.ConfigMap, {
      namespace: ns,
      fieldSelector: `metadata.name=${name}`,
    });
    const cmCtrl = m.controller({ name: 'configmap', reconciler: new ConfigMapReconciler(cms, model, m.events, cfg.configmap) });
    cmCtrl.watch(cms);
    cmCtrl.enqueue(cfg.configmap);
  }

  const defaultKey = cfg['default-ssl-certificate'] ?? null;
  model.setDefaultCertificate(defaultKey, generateFallbackCertificate());
  if (defaultKey) secretCtrl.enqueue(defaultKey);

  const podName = process.env.POD_NAME;
  const podNamespace = process.env.POD_NAMESPACE;
  const gateway = new GatewayReconciler(
    {
      translate: {
        controllerClass: cfg['controller-class'],
        ingressClassName: cfg['ingress-class'],
        watchWithoutClass: cfg['watch-ingress-without-class'],
        listen: { httpPort: cfg['http-port'], httpsPort: cfg['https-port'], statusPort: cfg['status-port'], address: cfg['listen-address'] },
        testHooks: cfg['enable-test-hooks'],
      },
      nginxBinary: cfg['nginx-binary'],
      runtimeDir: cfg['runtime-dir'],
      quietMs: cfg['sync-quiet'],
      maxWaitMs: cfg['sync-max-wait'],
      shutdownTimeoutMs: cfg['worker-shutdown-timeout'],
    },
    {
      model,
      events: m.events,
      metrics: m.metrics,
      log: m.log,
      ingressObject: (key) => ingresses.store.get(key),
      controllerObject: () =>
        podName && podNamespace
          ? { apiVersion: 'v1', kind: 'Pod', metadata: { name: podName, namespace: podNamespace } }
          : classes.store.list().find((c) => c.metadata.name === cfg['ingress-class']) ??
            classes.store.list().find((c) => (c as { spec?: { controller?: string } }).spec?.controller === cfg['controller-class']),
    },
  );
  m.add('gateway', (signal) => gateway.run(signal));

  // Status publishing (leader only).
  if (cfg['publish-service'] || cfg['publish-status-address']) {
    const statusRec = new StatusReconciler(
      {
        ingresses: ingresses as never,
        services: services as never,
        client: m.client,
        metrics: m.metrics,
        isLeader: () => m.isLeader(),
        programmed: (k) => gateway.programmed.has(k),
      },
      { publishService: cfg['publish-service'], publishStatusAddress: cfg['publish-status-address'] },
    );
    const statusCtrl = m.controller({ name: 'status', reconciler: statusRec, workers: 2 });
    gateway.onProgrammedChange((keys) => keys.forEach((k) => statusCtrl.enqueue(k)));
    // Our own status writes come back as Ingress updates; re-checking them is a cheap no-op.
    statusCtrl.watch(ingresses);
    if (cfg['publish-service']) {
      const pub = cfg['publish-service'];
      statusCtrl.watch(services, (s) => (keyOf(s) === pub ? [...gateway.programmed] : []));
    }
    m.leader?.onStartedLeading(() => {
      for (const k of ingresses.store.keys()) statusCtrl.enqueue(k);
    });
  }
  m.addReadyCheck('nginx', () => gateway.isReady());
  return { model, gateway };
}
