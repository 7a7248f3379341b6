// The validating admission webhook: an HTTPS server on every replica (POST /validate, AdmissionReview v1), its
// certificate from one Secret that every replica watches (hot-swapped with setSecureContext, no restart) — or from
// files, with ingress-nginx's --validating-webhook-certificate/-key — and — on
// the leader only — the PKI upkeep: create the CA and serving certificate, rotate them before they expire, and write
// the CA bundle into the ValidatingWebhookConfiguration. Decisions are in admission.ts (pure); keys in certs.ts.
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { DEFAULT_CONST_LABELS, PREFIX, type ConstLabels } from '../../reconcilers/nginx-driver/compat-metrics.ts';
import type { KubeClient } from '../../operator/kube/client.ts';
import { isAlreadyExists, isConflict, isNotFound } from '../../operator/kube/client.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import { resourcePath } from '../../operator/kube/resources.ts';
import { Resources } from '../../reconcilers/resources.ts';
import type { Logger } from '../../operator/log.ts';
import type { Metrics } from '../../operator/metrics.ts';
import type { Model } from '../../reconcilers/model/model.ts';
import type { TranslateOptions } from '../../reconcilers/translate/translate.ts';
import { describe } from '../../operator/informer.ts';
import { apply, plan, pkiFromSecretData, secretDataOf, type WebhookPki } from './certs.ts';
import { responseOf, reviewObject, subjectOf, type AdmissionRequest, type Verdict } from './admission.ts';

export interface WebhookOptions {
  port: number;
  address: string;
  /** Portico's namespace: the Secret and the Service live there. */
  namespace: string;
  secretName: string;
  serviceName: string;
  configurationName: string;
  /** Extra names/addresses in the serving certificate (a webhook reached by URL, e.g. out-of-cluster tests). */
  extraHosts: string[];
  /**
   * PEM CA certificates (--webhook-client-ca): when set, only callers with a client certificate they issued get past
   * the TLS handshake — the API server, given a kubeconfig for this webhook in its AdmissionConfiguration.
   */
  clientCa?: string;
}

const WEBHOOK_CONFIGS = { group: 'admissionregistration.k8s.io', version: 'v1', plural: 'validatingwebhookconfigurations', kind: 'ValidatingWebhookConfiguration', namespaced: false };
const MAX_BODY = 3 * 1024 * 1024;
const RECHECK_MS = 3_600_000;
/** How often certificate files (--validating-webhook-certificate) are read again for a renewed certificate. */
const FILE_RECHECK_MS = 60_000;
/** POST paths answered: Portico's own and the one ingress-nginx's chart writes into its ValidatingWebhookConfiguration. */
const REVIEW_PATHS = new Set(['/validate', '/networking/v1/ingresses']);

export class AdmissionWebhook {
  private server: https.Server | null = null;
  private loaded: string | null = null;
  private readonly requests: Counter;
  private readonly duration: Histogram;
  private upkeepRunning = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly o: WebhookOptions;
  private readonly d: { client: KubeClient; log: Logger; metrics: Metrics; model: Model; translate: TranslateOptions; isLeader: () => boolean; compatLabels?: ConstLabels };
  /** ingress-nginx's admission metrics (nginx_ingress_controller_check_* and admission_*), for Ingress reviews. */
  private readonly compat: ReturnType<typeof admissionCompatMetrics>;

  constructor(o: WebhookOptions, d: AdmissionWebhook['d']) {
    this.o = o;
    this.d = d;
    this.compat = admissionCompatMetrics(d.metrics.registry, d.compatLabels ?? DEFAULT_CONST_LABELS);
    this.requests = new Counter({ name: 'portico_admission_requests_total', help: 'Admission reviews by kind and verdict', labelNames: ['kind', 'verdict'], registers: [d.metrics.registry] });
    this.duration = new Histogram({ name: 'portico_admission_duration_seconds', help: 'Time to decide an admission review', buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5], registers: [d.metrics.registry] });
  }

  get dnsNames(): string[] {
    const s = `${this.o.serviceName}.${this.o.namespace}`;
    return [...new Set([s, `${s}.svc`, `${s}.svc.cluster.local`, ...this.o.extraHosts.filter((h) => isIP(h) === 0)])];
  }
  get ips(): string[] {
    return this.o.extraHosts.filter((h) => isIP(h) !== 0);
  }
  get serving(): boolean {
    return this.loaded !== null;
  }

  /** The Secret changed (any replica): serve its certificate. */
  onSecret(secret: (KubeObject & { data?: Record<string, string> }) | undefined): void {
    const pki = pkiFromSecretData(secret?.data);
    if (pki && pki.cert !== this.loaded) this.serve(pki);
    if (this.d.isLeader()) void this.upkeep();
  }

  /**
   * ingress-nginx's --validating-webhook-certificate/-key: serve these PEM files instead of the Secret (whoever wrote
   * them — the ingress-nginx chart's jobs — also owns the CA bundle, so there is no upkeep), read again every minute
   * and hot-swapped when they change.
   */
  serveFiles(certFile: string, keyFile: string, recheckMs = FILE_RECHECK_MS): void {
    const load = () => {
      let pem: { cert: string; key: string };
      try {
        pem = { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
      } catch (e) {
        this.d.log.error('admission webhook: cannot read the certificate files', { certificate: certFile, key: keyFile, error: describe(e) });
        return;
      }
      if (pem.cert !== this.loaded) this.serve(pem, `files ${certFile}, ${keyFile}`);
    };
    load();
    this.timer ??= setInterval(load, recheckMs);
    this.timer.unref();
  }

  private serve(pki: Pick<WebhookPki, 'cert' | 'key'>, source = `Secret ${this.o.namespace}/${this.o.secretName}`): void {
    try {
      if (!this.server) {
        this.server = https.createServer({ ...this.tlsOptions(pki), ...(this.o.clientCa ? { requestCert: true, rejectUnauthorized: true } : {}) }, (req, res) => void this.handle(req, res));
        this.server.requestTimeout = 10_000;
        this.server.headersTimeout = 5_000;
        this.server.on('error', (e) => this.d.log.error('admission webhook server error', { error: describe(e) }));
        this.server.listen(this.o.port, this.o.address);
        this.d.log.info('admission webhook serving', { address: this.o.address, port: this.o.port });
      } else {
        this.server.setSecureContext(this.tlsOptions(pki));
        this.d.log.info('admission webhook certificate reloaded');
      }
      this.loaded = pki.cert;
    } catch (e) {
      this.d.log.error('admission webhook: the certificate cannot be used', { source, error: describe(e) });
    }
  }

  private tlsOptions(pki: Pick<WebhookPki, 'cert' | 'key'>): https.ServerOptions {
    return { cert: pki.cert, key: pki.key, minVersion: 'TLSv1.2', ...(this.o.clientCa ? { ca: this.o.clientCa } : {}) };
  }

  /** Leader: hourly PKI check (and at once). */
  startUpkeep(): void {
    void this.upkeep();
    this.timer ??= setInterval(() => void this.upkeep(), RECHECK_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const s = this.server;
    this.server = null;
    if (s) await new Promise<void>((r) => s.close(() => r()));
  }

  /**
   * One upkeep pass (leader only): bring the Secret to a valid state step by step, publishing the bundle after
   * each step, so a new CA is trusted by the API server before any certificate it signed is served.
   */
  async upkeep(): Promise<void> {
    if (this.upkeepRunning || !this.d.isLeader()) return;
    this.upkeepRunning = true;
    try {
      for (let step = 0; step < 3; step++) {
        const current = await this.readSecret();
        const next = plan(current.pki, this.dnsNames, this.ips, Date.now());
        if (next.action === 'none') {
          await this.publishBundle(current.pki!.bundle);
          return;
        }
        this.d.log.info('admission webhook certificate', { action: next.action, why: next.why });
        const pki = apply(next, current.pki, this.dnsNames, this.ips, Date.now())!;
        if (!(await this.writeSecret(pki, current.resourceVersion))) return; // another writer: its watch event re-runs us
        await this.publishBundle(pki.bundle);
      }
    } catch (e) {
      this.d.log.error('admission webhook certificate upkeep failed; retrying within the hour', { error: describe(e) });
    } finally {
      this.upkeepRunning = false;
    }
  }

  private async readSecret(): Promise<{ pki: WebhookPki | null; resourceVersion: string | null }> {
    try {
      const s = await this.d.client.request<KubeObject & { data?: Record<string, string> }>('GET', resourcePath(Resources.Secret, this.o.namespace, this.o.secretName));
      return { pki: pkiFromSecretData(s.data), resourceVersion: s.metadata.resourceVersion ?? null };
    } catch (e) {
      if (isNotFound(e)) return { pki: null, resourceVersion: null };
      throw e;
    }
  }

  private async writeSecret(pki: WebhookPki, resourceVersion: string | null): Promise<boolean> {
    const body = {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: { name: this.o.secretName, namespace: this.o.namespace, labels: { 'app.kubernetes.io/name': 'portico', 'app.kubernetes.io/component': 'admission-webhook' }, ...(resourceVersion ? { resourceVersion } : {}) },
      data: secretDataOf(pki),
    };
    try {
      if (resourceVersion) await this.d.client.request('PUT', resourcePath(Resources.Secret, this.o.namespace, this.o.secretName), { body });
      else await this.d.client.request('POST', resourcePath(Resources.Secret, this.o.namespace), { body });
      return true;
    } catch (e) {
      if (isConflict(e) || isAlreadyExists(e)) return false;
      throw e;
    }
  }

  /** Writes the CA bundle into every webhook of the configuration (only when it differs). */
  private async publishBundle(bundle: string): Promise<void> {
    const path = resourcePath(WEBHOOK_CONFIGS, undefined, this.o.configurationName);
    const want = Buffer.from(bundle, 'utf8').toString('base64');
    let cfg: KubeObject & { webhooks?: { name: string; clientConfig?: { caBundle?: string } }[] };
    try {
      cfg = await this.d.client.request('GET', path);
    } catch (e) {
      if (isNotFound(e)) {
        this.d.log.warn('admission webhook: ValidatingWebhookConfiguration not found; nothing to publish the CA bundle to', { name: this.o.configurationName });
        return;
      }
      throw e;
    }
    const webhooks = cfg.webhooks ?? [];
    if (webhooks.every((w) => w.clientConfig?.caBundle === want)) return;
    for (const w of webhooks) w.clientConfig = { ...w.clientConfig, caBundle: want };
    await this.d.client.request('PUT', path, { body: cfg });
    this.d.log.info('admission webhook CA bundle published', { configuration: this.o.configurationName, webhooks: webhooks.length });
  }

  // ---- requests ------------------------------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const send = (code: number, body: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST' || !REVIEW_PATHS.has((req.url ?? '').split('?')[0] as string)) return send(404, { error: 'POST /validate (or /networking/v1/ingresses) only' });
    const t0 = process.hrtime.bigint();
    let kind = 'unknown';
    try {
      const raw = await readBody(req);
      const review = JSON.parse(raw) as { request?: AdmissionRequest };
      const r = review.request;
      if (!r?.uid) return send(400, { error: 'not an AdmissionReview with a request' });
      const t1 = process.hrtime.bigint();
      const decided = this.decide(r);
      kind = decided.kind;
      const verdict = decided.verdict;
      if (kind === 'Ingress') this.compat.record(r, verdict.allowed, Number(process.hrtime.bigint() - t1) / 1e9, Number(process.hrtime.bigint() - t0) / 1e9);
      this.requests.inc({ kind, verdict: verdict.allowed ? (verdict.warnings.length ? 'warned' : 'allowed') : 'denied' });
      send(200, responseOf(r.uid, verdict));
    } catch (e) {
      // The API server applies the configuration's failurePolicy to an error answer.
      this.requests.inc({ kind, verdict: 'error' });
      this.d.log.error('admission review failed', { error: describe(e) });
      send(500, { error: 'admission review failed' });
    } finally {
      this.duration.observe(Number(process.hrtime.bigint() - t0) / 1e9);
    }
  }

  /**
   * The verdict on one AdmissionRequest: pure and in memory. No Secret is read — not through the API, not from the
   * model's cache — whoever the caller is (admission.ts says why); the controller judges what Secrets hold.
   */
  decide(r: AdmissionRequest): { kind: string; verdict: Verdict } {
    const subject = subjectOf(r);
    if (!subject) return { kind: 'unknown', verdict: { allowed: true, warnings: [] } };
    const snap = this.d.model.snapshot();
    const verdict = reviewObject(subject.kind, subject.obj, snap, this.d.translate);
    return { kind: subject.kind, verdict };
  }
}

/**
 * check_success / check_errors {namespace, ingress} per reviewed Ingress and the admission_* gauges of the last review,
 * with ingress-nginx's names. Portico's review is the pure translation of the Ingress with the others (no nginx.conf
 * is written or tested: admission_config_size has no meaning here and is not served), so tested and rendered are both
 * that one Ingress and both durations the translation's.
 */
function admissionCompatMetrics(registry: Registry, labels: ConstLabels) {
  const r = [registry];
  const cl = Object.keys(labels);
  const g = (name: string, help: string) => new Gauge({ name: `${PREFIX}admission_${name}`, help, labelNames: cl, registers: r });
  const success = new Counter({ name: `${PREFIX}check_success`, help: 'Cumulative number of Ingress controller syntax check operations', labelNames: [...cl, 'namespace', 'ingress'], registers: r });
  const errors = new Counter({ name: `${PREFIX}check_errors`, help: 'Cumulative number of Ingress controller errors during syntax check operations', labelNames: [...cl, 'namespace', 'ingress'], registers: r });
  const tested = g('tested_ingresses', 'The length of ingresses processed by the admission controller');
  const testedDuration = g('tested_duration', 'The processing duration of the admission controller tests (float seconds)');
  const rendered = g('render_ingresses', 'The length of ingresses rendered by the admission controller');
  const renderDuration = g('render_duration', 'The processing duration of ingresses rendering by the admission controller (float seconds)');
  const roundtrip = g('roundtrip_duration', 'The complete duration of the admission controller at the time to process a new event (float seconds)');
  return {
    record(req: AdmissionRequest, allowed: boolean, decideSeconds: number, totalSeconds: number): void {
      const meta = req.object?.metadata;
      const who = { ...labels, namespace: meta?.namespace ?? req.namespace ?? '', ingress: meta?.name ?? '' };
      (allowed ? success : errors).inc(who);
      tested.set({ ...labels }, 1);
      rendered.set({ ...labels }, 1);
      testedDuration.set({ ...labels }, decideSeconds);
      renderDuration.set({ ...labels }, decideSeconds);
      roundtrip.set({ ...labels }, totalSeconds);
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error('request body larger than 3 MiB'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
