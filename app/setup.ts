import { isNotFound } from '../operator/kube/client.ts';
// Wires Portico's kinds and the gateway into a manager: every kind of the registry (reconcilers/kinds/registry.ts)
// creates its shared informers and its small reconcilers writing into the shared model, in its own start-up stage;
// the gateway reconciler reads the model. Start-up is staged (see operator/manager.ts): stage 0 lists
// IngressClasses, stage 1 Ingresses and Portico's CRDs, reconciling them all, so the model knows which Secrets
// served objects reference before stage 2 lists Secrets, Services, EndpointSlices and ConfigMaps — each Secret's
// key material is kept or dropped right at list time, with no per-Secret GET.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import path from 'node:path';
import type { Config } from './flags.ts';
import type { Manager } from '../operator/manager.ts';
import { Resources } from '../reconcilers/resources.ts';
import { NginxDriver } from '../reconcilers/nginx-driver/driver.ts';
import type { TranslateOptions } from '../reconcilers/translate/translate.ts';
import { detectModsecurity } from '../reconcilers/nginx-driver/nginx/modsecurity.ts';
import { METRICS_MODULE, VARS_MODULE } from '../reconcilers/nginx-driver/nginx/runtime.ts';
import { AdmissionWebhook } from './webhook/server.ts';
import { compatMetricsOptions, registerControllerCompatMetrics } from './metrics.ts';
import { caBundleProblem } from '../reconcilers/values/safe.ts';
import { Model } from '../reconcilers/model/model.ts';
import type { TlsMaterial } from '../reconcilers/model/types.ts';
import type { SecretObject } from '../reconcilers/kinds/secret/reconciler.ts';
import { reservedPorts } from '../reconcilers/kinds/configmap/tcpudp.ts';
import { wireCrdStatus } from '../reconcilers/kinds/crd-status.ts';
import type { KindContext, KindOptions, Wired } from '../reconcilers/kinds/kind.ts';
import { KINDS, kindOf } from '../reconcilers/kinds/registry.ts';
import { clusterTrustBundle, ClusterTrustBundleResource, TRUST_BUNDLE_VERSIONS } from '../reconcilers/kinds/clustertrustbundle/index.ts';

export interface Portico {
  model: Model;
  gateway: NginxDriver;
  webhook?: AdmissionWebhook;
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
  const o: KindOptions = {
    classes: { controllerClass: cfg['controller-class'], ingressClassName: cfg['ingress-class'], watchWithoutClass: cfg['watch-ingress-without-class'], ingressClassByName: cfg['ingress-class-by-name'] },
    // --watch-namespace: only that namespace's Ingresses and CRDs are listed (Services, Secrets... stay cluster-wide).
    watched: cfg['watch-namespace'] ? { namespace: cfg['watch-namespace'] } : {},
    ...(cfg.configmap ? { configmap: cfg.configmap } : {}),
    ...(cfg['tcp-services-configmap'] ? { tcpServices: cfg['tcp-services-configmap'] } : {}),
    ...(cfg['udp-services-configmap'] ? { udpServices: cfg['udp-services-configmap'] } : {}),
    reservedPorts: reservedPorts(cfg),
    status: {
      update: cfg['update-status'],
      ...(cfg['publish-service'] ? { publishService: cfg['publish-service'] } : {}),
      ...(cfg['publish-status-address'] ? { publishStatusAddress: cfg['publish-status-address'] } : {}),
      clearOnShutdown: cfg['update-status-on-shutdown'],
    },
  };

  // Gateway API: on when asked, or (auto) when the API server serves it; its kinds are wired only then.
  const gatewayApi = await gatewayApiOn(m, cfg['enable-gateway-api']);
  if (gatewayApi) {
    o.gatewayApi = {
      controllerName: cfg['gateway-controller-name'],
      reservedPorts: [cfg['http-port'], cfg['https-port'], cfg['status-port'], ...o.reservedPorts],
      namespace: process.env.POD_NAMESPACE || cfg['publish-service']?.split('/')[0] || 'default',
      ...(cfg['publish-service'] ? { publishService: cfg['publish-service'] } : {}),
    };
  }
  // Route kinds newer than the CRDs installed (TCPRoute, UDPRoute, TLSRoute joined the standard channel in v1.5) are
  // left out, said once: the others work without them.
  const absent = KINDS.filter((k) => gatewayApi && k.feature === 'gateway-api' && k.resource.group === 'gateway.networking.k8s.io' && k.resource.version === 'v1' && !gatewayApi.has(k.resource.plural));
  if (absent.length) m.log.info(`Gateway API: the API server does not serve ${absent.map((k) => k.resource.plural).join(', ')} (gateway.networking.k8s.io/v1): those kinds are not served; install the v1.7 CRDs and restart Portico to serve them`);
  // ClusterTrustBundles (certificates.k8s.io, which Gateways and BackendTLSPolicies may name) are served by Kubernetes
  // 1.37 (v1) or by 1.33+ with the ClusterTrustBundle feature gate and v1beta1 turned on: their kind is wired only then.
  const trustBundles = gatewayApi ? await trustBundleVersion(m) : undefined;
  if (trustBundles) o.clusterTrustBundleVersion = trustBundles;
  else if (gatewayApi) {
    absent.push(clusterTrustBundle);
    m.log.info('Gateway API: the API server does not serve clustertrustbundles (certificates.k8s.io v1 or v1beta1): caCertificateRefs naming a ClusterTrustBundle are refused (InvalidKind); restart Portico once it serves them');
  }
  const kinds = KINDS.filter((k) => !k.feature || (k.feature === 'gateway-api' && gatewayApi && !absent.includes(k)));

  // Every kind of the registry, in its order and in its own start-up stage (see reconcilers/kinds/registry.ts).
  const wired = new Map<string, Wired>();
  const provided: NonNullable<Wired['provides']> = {};
  const ctx: KindContext = {
    m,
    model,
    o,
    kinds,
    informerOf: (kind) => {
      const w = wired.get(kind);
      if (!w) throw new Error(`kind ${kind} is not wired yet (reconcilers/kinds/registry.ts order)`);
      return w.informer;
    },
    enqueue: (kind, key) => wired.get(kind)?.controller.enqueue(key),
    secrets: (key) => provided.secrets?.(key),
    configMaps: (key) => provided.configMaps?.(key),
    // No reader at all when ClusterTrustBundles are not served: a reference to one is then of a kind Portico cannot read.
    clusterTrustBundles: kinds.includes(clusterTrustBundle) ? (name) => provided.clusterTrustBundles?.(name) : undefined,
  };
  for (const k of kinds) {
    const w = k.wire(ctx);
    wired.set(k.kind, w);
    Object.assign(provided, w.provides);
  }

  const defaultKey = cfg['default-ssl-certificate'] ?? null;
  model.setDefaultCertificate(defaultKey, generateFallbackCertificate());
  if (defaultKey) ctx.enqueue('Secret', defaultKey);

  // Portico's variables module (nginx-assets/modules/portico_vars) is in every nginx.conf: nginx cannot start without it.
  if (!existsSync(VARS_MODULE)) throw new Error(`Portico's nginx module ${VARS_MODULE} is not installed (make deps or the image build it): nginx cannot start without it`);
  // Per-request metrics are counted by Portico's nginx module (nginx-assets/modules/portico_metrics): nginx cannot
  // start with them without it, so a machine that lacks it serves traffic without them, and says so.
  const metricsOn = cfg['enable-metrics'] && existsSync(METRICS_MODULE);
  if (cfg['enable-metrics'] && !metricsOn) m.log.error(`per-request metrics are off: Portico's nginx module ${METRICS_MODULE} is not installed (make deps or the image build it); --enable-metrics=false turns them off without this error`);
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
    ...(o.gatewayApi ? { gatewayApi: { controllerName: o.gatewayApi.controllerName, reservedPorts: o.gatewayApi.reservedPorts } } : {}),
    ownAddresses: ownAddresses(cfg['listen-address']),
    // Portico's own Service: its addresses and its pods' join ownAddresses (the gateway reads them from the model).
    ...(cfg['publish-service'] ? { selfService: cfg['publish-service'] } : {}),
    sslPassthrough: cfg['enable-ssl-passthrough'],
    // ingress-nginx's --default-backend-service: where custom-http-errors go for Ingresses without default-backend.
    ...(cfg['default-backend-service'] ? { defaultBackendService: cfg['default-backend-service'] } : {}),
    // What this machine has of ModSecurity: without the module, paths that ask for it fail closed.
    modsecurity: detectModsecurity(),
    ...(metricsOn ? { metrics: { undefinedHosts: cfg['metrics-per-undefined-host'], buckets: { time: cfg['time-buckets'], length: cfg['length-buckets'], size: cfg['size-buckets'] } } } : {}),
  };
  const podName = process.env.POD_NAME;
  const podNamespace = process.env.POD_NAMESPACE;
  const compatMetrics = { ...compatMetricsOptions(cfg, podName, podNamespace, m.log), enabled: metricsOn };
  registerControllerCompatMetrics(m, compatMetrics.constLabels, cfg['election-id']);
  const gateway = new NginxDriver(
    {
      translate: translateOptions,
      nginxBinary: cfg['nginx-binary'],
      runtimeDir: cfg['runtime-dir'],
      accessLog: cfg['access-log-path'],
      quietMs: cfg['sync-quiet'],
      maxWaitMs: cfg['sync-max-wait'],
      shutdownTimeoutMs: cfg['worker-shutdown-timeout'],
      compatMetrics,
    },
    {
      model,
      events: m.events,
      metrics: m.metrics,
      log: m.log,
      objectFor: (ref) => {
        // Kind-qualified refs ("Ingress/ns/name", "Route/ns/name") of the kinds the gateway reports on.
        const slash = ref.indexOf('/');
        const kind = ref.slice(0, slash);
        return kindOf(kind)?.reportedByGateway ? wired.get(kind)?.informer.store.get(ref.slice(slash + 1)) : undefined;
      },
      initialReconciled: () => m.initialReconciled(),
      isLeader: () => m.isLeader(),
      controllerObject: () =>
        podName && podNamespace
          ? { apiVersion: 'v1', kind: 'Pod', metadata: { name: podName, namespace: podNamespace } }
          : ctx.informerOf('IngressClass').store.list().find((c) => c.metadata.name === cfg['ingress-class']) ??
            ctx.informerOf('IngressClass').store.list().find((c) => (c as { spec?: { controller?: string } }).spec?.controller === cfg['controller-class']),
    },
  );
  m.add('gateway', (signal) => gateway.run(signal));

  // Status writers (leader only): each kind's own (Ingress status), then the CRDs' conditions.
  for (const k of kinds) k.status?.(ctx, wired.get(k.kind)!, gateway);
  wireCrdStatus(ctx, wired, gateway);

  m.addReadyCheck('nginx', () => gateway.isReady());

  const webhook = cfg['webhook-port'] > 0 ? setupWebhook(m, cfg, { model, gateway, translate: translateOptions, compatLabels: compatMetrics.constLabels }) : undefined;
  return { model, gateway, webhook };
}

/** Whether to serve Gateway API: --enable-gateway-api, and for `auto` whether the API server serves its v1 group. */
async function gatewayApiOn(m: Manager, flag: 'auto' | 'true' | 'false'): Promise<ReadonlySet<string> | false> {
  if (flag === 'false') return false;
  try {
    const list = await m.client.request<{ resources?: { name: string }[] }>('GET', '/apis/gateway.networking.k8s.io/v1');
    const served = new Set((list.resources ?? []).map((r) => r.name));
    const missing = ['gatewayclasses', 'gateways', 'httproutes'].filter((r) => !served.has(r));
    if (!missing.length) {
      m.log.info('Gateway API: serving GatewayClasses, Gateways and HTTPRoutes (gateway.networking.k8s.io/v1)');
      return served;
    }
    if (flag === 'true') throw new Error(`--enable-gateway-api=true: the API server does not serve ${missing.join(', ')} of gateway.networking.k8s.io/v1 (install the Gateway API CRDs)`);
    m.log.info(`Gateway API: off (the API server does not serve ${missing.join(', ')}; install its CRDs and restart Portico to serve it)`);
    return false;
  } catch (e) {
    if (flag === 'true' || !isNotFound(e)) throw e;
    m.log.info('Gateway API: off (the API server does not serve gateway.networking.k8s.io/v1; install its CRDs and restart Portico to serve it)');
    return false;
  }
}

/** The newest version of certificates.k8s.io that serves ClusterTrustBundles, or undefined when none does. */
async function trustBundleVersion(m: Manager): Promise<string | undefined> {
  for (const v of TRUST_BUNDLE_VERSIONS) {
    try {
      const list = await m.client.request<{ resources?: { name: string }[] }>('GET', `/apis/${ClusterTrustBundleResource.group}/${v}`);
      if ((list.resources ?? []).some((r) => r.name === ClusterTrustBundleResource.plural)) return v;
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
  return undefined;
}

/**
 * The validating admission webhook (every replica serves it): its certificate from ingress-nginx's files when
 * --validating-webhook names them, else from --webhook-secret, which the leader keeps current with the CA bundle.
 */
function setupWebhook(m: Manager, cfg: Config, p: { model: Model; gateway: NginxDriver; translate: TranslateOptions; compatLabels: ReturnType<typeof compatMetricsOptions>['constLabels'] }): AdmissionWebhook {
  const { gateway } = p;
  const wh = new AdmissionWebhook(
    {
      port: cfg['webhook-port'],
      address: cfg.webhookAddress,
      namespace: cfg.namespace,
      secretName: cfg['webhook-secret'],
      serviceName: cfg['webhook-service'],
      configurationName: cfg['webhook-configuration'],
      extraHosts: cfg['webhook-extra-hosts'],
      ...(cfg['webhook-client-ca'] ? { clientCa: webhookClientCa(cfg['webhook-client-ca']) } : {}),
    },
    { client: m.client, log: m.log.child({ component: 'webhook' }), metrics: m.metrics, model: p.model, translate: p.translate, isLeader: () => m.isLeader(), compatLabels: p.compatLabels },
  );
  const certFile = cfg['validating-webhook-certificate'];
  const keyFile = cfg['validating-webhook-key'];
  if (cfg['validating-webhook'] !== undefined && certFile !== undefined && keyFile !== undefined) {
    // ingress-nginx's certificate files: served as they are; whoever wrote them keeps the CA bundle.
    wh.serveFiles(certFile, keyFile);
  } else {
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
  }
  m.add('webhook', async (signal) => {
    if (!signal.aborted) await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
    await wh.stop();
  });
  return wh;
}

/** The CA bundle of --webhook-client-ca: PEM certificates only; anything else stops the start (as a bad flag). */
function webhookClientCa(file: string): string {
  const pem = readFileSync(file, 'utf8');
  const problem = caBundleProblem(pem);
  if (problem) throw new Error(`--webhook-client-ca ${file}: ${problem}`);
  return pem;
}
