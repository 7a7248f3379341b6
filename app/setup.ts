// Wires Portico's reconcilers and the gateway into a manager: one shared informer per kind, one small
// reconciler per kind writing into the shared model, and the gateway reconciler reading it.
// Start-up is staged (see operator/manager.ts): stage 0 lists IngressClasses and Ingresses and reconciles them
// all, so the model knows which TLS Secrets served Ingresses reference before stage 1 lists Secrets, Services and
// EndpointSlices — each Secret's key material is kept or dropped right at list time, with no per-Secret GET.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import path from 'node:path';
import type { Config } from './flags.ts';
import type { Manager } from '../operator/manager.ts';
import { keyOf, type KubeObject } from '../operator/kube/object.ts';
import { Resources } from '../reconcilers/resources.ts';
import { ConfigMapReconciler } from '../reconcilers/kinds/configmap/reconciler.ts';
import { GatewayReconciler } from '../reconcilers/gateway/gateway.ts';
import { ingressKeyOf, ingressRef, type TranslateOptions } from '../reconcilers/translate/translate.ts';
import { detectModsecurity } from '../reconcilers/gateway/nginx/modsecurity.ts';
import { AdmissionWebhook } from './webhook/server.ts';
import { caBundleProblem } from '../reconcilers/values/safe.ts';
import { IngressReconciler } from '../reconcilers/kinds/ingress/reconciler.ts';
import { IngressClassReconciler } from '../reconcilers/kinds/ingressclass/reconciler.ts';
import { configMapsOf, ingressCredentialSecrets, Model, secretsOf } from '../reconcilers/model/model.ts';
import { serviceKeyOfSlice } from '../reconcilers/model/normalize.ts';
import type { TlsMaterial } from '../reconcilers/model/types.ts';
import { serviceCacheTransform, sliceCacheTransform } from '../reconcilers/kinds/service/cache-transforms.ts';
import { SecretReconciler, secretTransform, type SecretObject } from '../reconcilers/kinds/secret/reconciler.ts';
import { ServiceReconciler, SLICES_BY_SERVICE } from '../reconcilers/kinds/service/reconciler.ts';
import { StatusReconciler } from '../reconcilers/kinds/ingress/status.ts';
import { CrdReconciler } from '../reconcilers/kinds/crd-reconciler.ts';
import { CrdStatusReconciler } from '../reconcilers/kinds/crd-status.ts';
import { crdSecretsOf, type ChangeKind, type CrdKind } from '../reconcilers/model/model.ts';
import { CredentialSecretReconciler } from '../reconcilers/kinds/secret/credentials.ts';
import { reservedPorts, TcpUdpReconciler } from '../reconcilers/kinds/configmap/tcpudp.ts';
import { configMapTransform, ReferencedConfigMapReconciler, type ConfigMapObject } from '../reconcilers/kinds/configmap/references.ts';

export interface Portico {
  model: Model;
  gateway: GatewayReconciler;
  webhook?: AdmissionWebhook;
}

/** The Secrets an object in the model reads: TLS ones (certificates) and the others (credentials and the like). */
function secretsReadBy(model: Model, kind: ChangeKind, key: string): { tls: string[]; other: string[] } {
  if (kind === 'Ingress') {
    const ing = model.ingress(key);
    return { tls: ing ? secretsOf(ing) : [], other: ing ? ingressCredentialSecrets(ing) : [] };
  }
  if (kind === 'Route' || kind === 'Plugin' || kind === 'Consumer' || kind === 'Upstream') {
    const rec = model.crd(kind, key);
    const list = rec ? crdSecretsOf(kind, rec) : [];
    return kind === 'Route' ? { tls: list, other: [] } : { tls: [], other: list };
  }
  return { tls: [], other: [] };
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

/**
 * Addresses that are Portico itself: nginx's listeners and, when they bind a wildcard, every address of this
 * host/pod. No tenant-controlled endpoint or ExternalName may resolve to one of them (nor to loopback, link-local
 * or unspecified addresses, which the address filter refuses anyway).
 */
export function ownAddresses(listenAddress: string): string[] {
  const out = new Set<string>([listenAddress]);
  if (listenAddress === '0.0.0.0' || listenAddress === '::') {
    for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) out.add(a.address);
  }
  return [...out].sort();
}

export async function setupPortico(m: Manager, cfg: Config): Promise<Portico> {
  const model = new Model();
  if (cfg['enable-test-hooks']) m.log.warn('--enable-test-hooks is set: portico.dev/test-invalid-directive is honoured; never use this in production');
  const classOptions = { controllerClass: cfg['controller-class'], ingressClassName: cfg['ingress-class'], watchWithoutClass: cfg['watch-ingress-without-class'], ingressClassByName: cfg['ingress-class-by-name'] };
  // --watch-namespace: only that namespace's Ingresses and CRDs are listed (Services, Secrets... stay cluster-wide).
  const watched = cfg['watch-namespace'] ? { namespace: cfg['watch-namespace'] } : {};
  // Stage 0: classes first (the Ingress reconciler filters by class), then Ingresses.
  const classes = m.informer<KubeObject>(Resources.IngressClass, { stage: 0 });
  const ingresses = m.informer<KubeObject>(Resources.Ingress, { stage: 1, ...watched });
  // Stage 2: everything an Ingress refers to.
  // Both cached lean (reconcilers/cache-transforms.ts): only the fields Portico reads.
  const services = m.informer<KubeObject>(Resources.Service, { stage: 2, transform: serviceCacheTransform });
  const slices = m.informer<KubeObject>(Resources.EndpointSlice, {
    stage: 2,
    transform: sliceCacheTransform,
    indexers: { [SLICES_BY_SERVICE]: (s) => { const k = serviceKeyOfSlice(s); return k ? [k] : []; } },
  });
  const secrets = m.informer<SecretObject>(Resources.Secret, {
    stage: 2,
    fieldSelector: 'type=kubernetes.io/tls',
    transform: secretTransform(model),
  });
  // Portico's CRDs. Routes, Upstreams, Plugins and Consumers are listed with the Ingresses (stage 1), so the
  // Secrets they read are known to be referenced before Secrets are listed.
  const CRD_KINDS: CrdKind[] = ['Route', 'Upstream', 'Plugin', 'Consumer'];
  const crdInformers = Object.fromEntries(CRD_KINDS.map((k) => [k, m.informer<KubeObject>(Resources[k], { stage: 1, ...watched })])) as Record<CrdKind, ReturnType<typeof m.informer<KubeObject>>>;
  // Credential and plugin-config Secrets (any type but TLS): data kept only for Secrets a Consumer or Plugin names.
  const otherSecrets = m.informer<SecretObject>(Resources.Secret, {
    stage: 2,
    fieldSelector: 'type!=kubernetes.io/tls',
    transform: secretTransform(model),
  });

  const classCtrl = m.controller({ name: 'ingressclass', reconciler: new IngressClassReconciler(classes, model), stage: 0 });
  classCtrl.watch(classes);
  // Secrets a Plugin, Consumer, Upstream or an Ingress's auth-secret or proxy-ssl-secret reads (see reconcilers/credentials.ts).
  const credentials = new CredentialSecretReconciler({
    model,
    informers: [otherSecrets, secrets],
    client: m.client,
    enqueue: (ref) => {
      const slash = ref.indexOf('/');
      const kind = ref.slice(0, slash);
      const key = ref.slice(slash + 1);
      if (kind === 'Ingress') ingressCtrl.enqueue(key);
      else if (kind === 'Plugin' || kind === 'Consumer' || kind === 'Upstream') crdCtrls[kind].enqueue(key);
    },
  });
  const secretLookup = credentials.lookup;
  // ConfigMaps an Ingress's custom-headers names (data kept only for those, see reconcilers/configmap-refs.ts).
  const refConfigMaps = m.informer<ConfigMapObject>(Resources.ConfigMap, { stage: 2, ...watched, transform: configMapTransform(model) });
  const configMapRefs = new ReferencedConfigMapReconciler({ model, informer: refConfigMaps, client: m.client, enqueueIngress: (key) => ingressCtrl.enqueue(key) });
  const ingressCtrl = m.controller({ name: 'ingress', reconciler: new IngressReconciler(ingresses, model, classOptions, secretLookup, configMapRefs.lookup), workers: 2, stage: 1 });
  ingressCtrl.watch(ingresses);
  // Which Ingresses Portico owns depends on the classes: re-check every Ingress when a class changes.
  ingressCtrl.watch(classes, () => ingresses.store.keys());
  const serviceCtrl = m.controller({ name: 'service', reconciler: new ServiceReconciler(services, slices, model, m.events), workers: 2, stage: 2 });
  serviceCtrl.watch(services);
  serviceCtrl.watch(slices, (s) => { const k = serviceKeyOfSlice(s); return k ? [k] : []; });
  const secretCtrl = m.controller({ name: 'secret', reconciler: new SecretReconciler(secrets, model, m.client, m.events), stage: 2 });
  secretCtrl.watch(secrets);

  // CRD reconcilers.
  const crdCtrls = {} as Record<CrdKind, ReturnType<typeof m.controller>>;
  for (const kind of CRD_KINDS) {
    const ctrl = m.controller({ name: kind.toLowerCase(), reconciler: new CrdReconciler(kind, crdInformers[kind], model, secretLookup, classOptions, m.events), stage: 1 });
    ctrl.watch(crdInformers[kind]);
    crdCtrls[kind] = ctrl;
  }
  crdCtrls.Route.watch(classes, () => crdInformers.Route.store.keys());
  const credentialCtrl = m.controller({ name: 'credential-secret', reconciler: credentials, stage: 2 });
  credentialCtrl.watch(otherSecrets);
  credentialCtrl.watch(secrets);

  // A Secret becomes (un)referenced when an object that reads it changes in the model: re-check the Secrets it names
  // now and the ones it named before — TLS Secrets (Ingress and Route TLS) with the TLS reconciler, the others
  // (credentials, plugin configs, CA bundles, auth-secrets, proxy-ssl-secrets) with the credential reconciler.
  const lastRead = new Map<string, { tls: string[]; other: string[] }>();
  model.onChange((changes) => {
    for (const c of changes) {
      if (c.kind !== 'Ingress' && c.kind !== 'Route' && c.kind !== 'Plugin' && c.kind !== 'Consumer' && c.kind !== 'Upstream') continue;
      const ref = `${c.kind}/${c.key}`;
      const now = secretsReadBy(model, c.kind, c.key);
      const before = lastRead.get(ref) ?? { tls: [], other: [] };
      for (const s of new Set([...before.tls, ...now.tls])) secretCtrl.enqueue(s);
      for (const s of new Set([...before.other, ...now.other])) credentialCtrl.enqueue(s);
      if (now.tls.length || now.other.length) lastRead.set(ref, now);
      else lastRead.delete(ref);
    }
  });

  const configMapRefCtrl = m.controller({ name: 'ingress-configmap', reconciler: configMapRefs, stage: 2 });
  configMapRefCtrl.watch(refConfigMaps);
  // An Ingress that starts (or stops) naming a ConfigMap: load (or drop) it.
  const lastConfigMaps = new Map<string, string[]>();
  model.onChange((changes) => {
    for (const c of changes) {
      if (c.kind !== 'Ingress') continue;
      const ing = model.ingress(c.key);
      const now = ing ? configMapsOf(ing) : [];
      for (const k of new Set([...(lastConfigMaps.get(c.key) ?? []), ...now])) configMapRefCtrl.enqueue(k);
      if (now.length) lastConfigMaps.set(c.key, now);
      else lastConfigMaps.delete(c.key);
    }
  });

  if (cfg.configmap) {
    const [ns, name] = cfg.configmap.split('/') as [string, string];
    const cms = m.informer<KubeObject & { data?: Record<string, string> }>(Resources.ConfigMap, {
      stage: 2,
      namespace: ns,
      fieldSelector: `metadata.name=${name}`,
    });
    const cmCtrl = m.controller({ name: 'configmap', reconciler: new ConfigMapReconciler(cms, model, m.events, cfg.configmap), stage: 2 });
    cmCtrl.watch(cms);
    cmCtrl.enqueue(cfg.configmap);
  }

  // TCP/UDP services (ingress-nginx's --tcp-services-configmap / --udp-services-configmap), see reconcilers/tcpudp.ts.
  for (const [protocol, key] of [['TCP', cfg['tcp-services-configmap']], ['UDP', cfg['udp-services-configmap']]] as const) {
    if (!key) continue;
    const [ns, name] = key.split('/') as [string, string];
    const inf = m.informer<KubeObject & { data?: Record<string, string> }>(Resources.ConfigMap, { stage: 2, namespace: ns, fieldSelector: `metadata.name=${name}` });
    const reconciler = new TcpUdpReconciler({ protocol, informer: inf, model, events: m.events, key, reservedPorts: reservedPorts(cfg) });
    const ctrl = m.controller({ name: `${protocol.toLowerCase()}-services`, reconciler, stage: 2 });
    ctrl.watch(inf);
    ctrl.enqueue(key);
  }

  const defaultKey = cfg['default-ssl-certificate'] ?? null;
  model.setDefaultCertificate(defaultKey, generateFallbackCertificate());
  if (defaultKey) secretCtrl.enqueue(defaultKey);

  const translateOptions: TranslateOptions = {
    controllerClass: cfg['controller-class'],
    ingressClassName: cfg['ingress-class'],
    watchWithoutClass: cfg['watch-ingress-without-class'],
    ingressClassByName: cfg['ingress-class-by-name'],
    listen: {
      httpPort: cfg['http-port'],
      httpsPort: cfg['https-port'],
      statusPort: cfg['status-port'],
      address: cfg['listen-address'],
      publishedHttpPort: cfg['published-http-port'],
      publishedHttpsPort: cfg['published-https-port'],
    },
    testHooks: cfg['enable-test-hooks'],
    ownAddresses: ownAddresses(cfg['listen-address']),
    // Portico's own Service: its addresses and its pods' join ownAddresses (the gateway reads them from the model).
    ...(cfg['publish-service'] ? { selfService: cfg['publish-service'] } : {}),
    sslPassthrough: cfg['enable-ssl-passthrough'],
    // What this machine has of ModSecurity: without the module, paths that ask for it fail closed.
    modsecurity: detectModsecurity(),
  };
  const podName = process.env.POD_NAME;
  const podNamespace = process.env.POD_NAMESPACE;
  const gateway = new GatewayReconciler(
    {
      translate: translateOptions,
      nginxBinary: cfg['nginx-binary'],
      runtimeDir: cfg['runtime-dir'],
      accessLog: cfg['access-log-path'],
      quietMs: cfg['sync-quiet'],
      maxWaitMs: cfg['sync-max-wait'],
      shutdownTimeoutMs: cfg['worker-shutdown-timeout'],
    },
    {
      model,
      events: m.events,
      metrics: m.metrics,
      log: m.log,
      objectFor: (ref) => {
        const key = ingressKeyOf(ref);
        if (key) return ingresses.store.get(key);
        const slash = ref.indexOf('/');
        const inf = crdInformers[ref.slice(0, slash) as CrdKind];
        return inf?.store.get(ref.slice(slash + 1));
      },
      initialReconciled: () => m.initialReconciled(),
      controllerObject: () =>
        podName && podNamespace
          ? { apiVersion: 'v1', kind: 'Pod', metadata: { name: podName, namespace: podNamespace } }
          : classes.store.list().find((c) => c.metadata.name === cfg['ingress-class']) ??
            classes.store.list().find((c) => (c as { spec?: { controller?: string } }).spec?.controller === cfg['controller-class']),
    },
  );
  m.add('gateway', (signal) => gateway.run(signal));

  // Status publishing (leader only).
  if (cfg['update-status'] && (cfg['publish-service'] || cfg['publish-status-address'])) {
    const statusRec = new StatusReconciler(
      {
        ingresses: ingresses as never,
        services: services as never,
        client: m.client,
        metrics: m.metrics,
        // Status is written only once the first complete configuration is live: before that, "not programmed"
        // means "not known yet", and clearing addresses then would make external-dns see every Ingress flap.
        isLeader: () => m.isLeader() && gateway.isReady(),
        programmed: (k) => gateway.programmed.has(ingressRef(k)),
      },
      { publishService: cfg['publish-service'], publishStatusAddress: cfg['publish-status-address'] },
    );
    const statusCtrl = m.controller({ name: 'status', reconciler: statusRec, workers: 2 });
    const ingressKeys = (refs: Iterable<string>) => [...refs].map(ingressKeyOf).filter((k): k is string => k !== null);
    gateway.onProgrammedChange((refs) => ingressKeys(refs).forEach((k) => statusCtrl.enqueue(k)));
    // Our own status writes come back as Ingress updates; re-checking them is a cheap no-op.
    statusCtrl.watch(ingresses);
    if (cfg['publish-service']) {
      const pub = cfg['publish-service'];
      statusCtrl.watch(services, (s) => (keyOf(s) === pub ? ingressKeys(gateway.programmed) : []));
    }
    const all = () => {
      for (const k of ingresses.store.keys()) statusCtrl.enqueue(k);
    };
    m.leader?.onStartedLeading(all);
    gateway.onReady(all);
    if (cfg['update-status-on-shutdown']) {
      // When the manager stops, the leader (still holding the lease) removes the addresses it wrote.
      m.add('status-on-shutdown', async (signal) => {
        if (!signal.aborted) await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
        try {
          const n = await statusRec.clearAll(() => m.isLeader());
          if (n) m.log.info('cleared Ingress status on shutdown', { ingresses: n });
        } catch (e) {
          m.log.warn('could not clear Ingress status on shutdown', { error: String(e) });
        }
      });
    }
  }
  // CRD status conditions (leader only).
  const crdStatus = new CrdStatusReconciler({
    informers: crdInformers,
    model,
    client: m.client,
    isLeader: () => (m.leader ? m.isLeader() : true) && gateway.isReady(),
    routeStatus: (ref) => gateway.statusOf(ref),
    programmed: (ref) => gateway.programmed.has(ref),
    synced: () => gateway.isReady(),
  });
  const crdStatusCtrl = m.controller({ name: 'crd-status', reconciler: crdStatus, workers: 2 });
  for (const kind of CRD_KINDS) crdStatusCtrl.watch(crdInformers[kind], (o) => [`${kind}/${keyOf(o)}`]);
  model.onChange((changes) => {
    for (const c of changes) if (c.kind === 'Route' || c.kind === 'Upstream' || c.kind === 'Plugin' || c.kind === 'Consumer') crdStatusCtrl.enqueue(`${c.kind}/${c.key}`);
    // An Upstream's ResolvedRefs follows its Service.
    for (const c of changes) if (c.kind === 'Service') for (const u of model.snapshot().upstreams.values()) if (u.serviceKey === c.key) crdStatusCtrl.enqueue(`Upstream/${u.key}`);
  });
  gateway.onReported((refs) => refs.forEach((r) => crdStatusCtrl.enqueue(r)));
  const allCrds = () => {
    for (const kind of CRD_KINDS) for (const k of crdInformers[kind].store.keys()) crdStatusCtrl.enqueue(`${kind}/${k}`);
  };
  m.leader?.onStartedLeading(allCrds);
  gateway.onReady(allCrds);

  m.addReadyCheck('nginx', () => gateway.isReady());

  // Validating admission webhook (every replica serves it; the leader keeps its certificate and CA bundle current).
  let webhook: AdmissionWebhook | undefined;
  if (cfg['webhook-port'] > 0) {
    const wh = new AdmissionWebhook(
      {
        port: cfg['webhook-port'],
        address: cfg['listen-address'],
        namespace: cfg.namespace,
        secretName: cfg['webhook-secret'],
        serviceName: cfg['webhook-service'],
        configurationName: cfg['webhook-configuration'],
        extraHosts: cfg['webhook-extra-hosts'],
        ...(cfg['webhook-client-ca'] ? { clientCa: webhookClientCa(cfg['webhook-client-ca']) } : {}),
      },
      { client: m.client, log: m.log.child({ component: 'webhook' }), metrics: m.metrics, model, translate: translateOptions, isLeader: () => m.isLeader() },
    );
    webhook = wh;
    const certSecret = m.informer<SecretObject>(Resources.Secret, { stage: 2, namespace: cfg.namespace, fieldSelector: `metadata.name=${cfg['webhook-secret']}` });
    const certCtrl = m.controller({
      name: 'webhook-cert',
      reconciler: { reconcile: async (_ctx, key) => wh.onSecret(certSecret.store.get(key) as never) },
      stage: 2,
    });
    certCtrl.watch(certSecret);
    certCtrl.enqueue(`${cfg.namespace}/${cfg['webhook-secret']}`);
    if (m.leader) m.leader.onStartedLeading(() => wh.startUpkeep());
    else gateway.onReady(() => wh.startUpkeep());
    m.add('webhook', async (signal) => {
      if (!signal.aborted) await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
      await wh.stop();
    });
  }
  return { model, gateway, webhook };
}

/** The CA bundle of --webhook-client-ca: PEM certificates only; anything else stops the start (as a bad flag). */
function webhookClientCa(file: string): string {
  const pem = readFileSync(file, 'utf8');
  const problem = caBundleProblem(pem);
  if (problem) throw new Error(`--webhook-client-ca ${file}: ${problem}`);
  return pem;
}
