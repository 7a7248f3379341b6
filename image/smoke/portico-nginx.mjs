// image/smoke.sh runs this inside the Portico image (uid 101, read-only root, /run/portico and /tmp on tmpfs, a
// network namespace with only loopback). It renders Portico's real nginx.conf (one Ingress) and runs it the
// way the gateway does: placeholder certificate (openssl), nginx -t, start, the configuration confirmed live over
// the Lua API socket, graceful stop. The Ingress asks for ModSecurity with the CRS, so the module and the rules
// load too. Any write outside the runtime directory or /tmp fails (read-only root).
import { Model } from '/app/reconcilers/model/model.js';
import { normalizeIngress, normalizeIngressClass } from '/app/reconcilers/model/normalize.js';
import { detectModsecurity, writeModsecurityRules } from '/app/reconcilers/nginx-driver/nginx/modsecurity.js';
import { translate } from '/app/reconcilers/translate/translate.js';
import { structureChecksum } from '/app/reconcilers/translate/diff.js';
import { renderNginxConf, runtimePaths } from '/app/reconcilers/nginx-driver/nginx/render.js';
import { NginxProcess } from '/app/reconcilers/nginx-driver/nginx/process.js';
import { DynamicClient } from '/app/reconcilers/nginx-driver/nginx/dynamic.js';
import { nullLogger } from '/app/operator/log.js';
import { DEFAULT_BUCKETS } from '/app/reconcilers/nginx-driver/compat-metrics.js';

const opts = {
  controllerClass: 'portico.dev/ingress-controller',
  ingressClassName: 'portico',
  watchWithoutClass: false,
  listen: { httpPort: 8080, httpsPort: 8443, statusPort: 10246, address: '0.0.0.0' },
};
// One Ingress with ModSecurity and the OWASP CRS (Debian's packages in the image): its rules file is written to the
// runtime directory and the module loaded, as the gateway does.
const modsecurity = detectModsecurity();
if (!modsecurity?.crs) {
  console.error(`ModSecurity is not complete in the image: ${JSON.stringify(modsecurity)}`);
  process.exit(1);
}
const model = new Model();
model.setIngressClass(normalizeIngressClass({ metadata: { name: 'portico' }, spec: { controller: opts.controllerClass } }));
const ing = normalizeIngress({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { name: 'waf', namespace: 'default', annotations: { 'nginx.ingress.kubernetes.io/enable-modsecurity': 'true', 'nginx.ingress.kubernetes.io/enable-owasp-core-rules': 'true' } },
  spec: { ingressClassName: 'portico', rules: [{ host: 'waf.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'app', port: { number: 80 } } } }] } }] },
});
if (!ing.ok) throw new Error(ing.reason);
model.setIngress(ing.ingress);
// With the per-request metrics (on by default): Portico's own nginx module must be in the image and load.
const structure = translate(model.snapshot(), { ...opts, modsecurity, metrics: { undefinedHosts: false, buckets: DEFAULT_BUCKETS } }).config.structure;
if (!structure.profiles.some((p) => p.modsecurity?.crs)) throw new Error('no ModSecurity profile');
const checksum = structureChecksum(structure);
const runtime = runtimePaths('/run/portico', { accessLog: '/dev/stdout' });
const nginx = new NginxProcess({ binary: '/usr/sbin/nginx', runtime, shutdownTimeoutMs: 5_000 }, new DynamicClient(), nullLogger());
nginx.prepare();
writeModsecurityRules(structure, runtime);
const conf = renderNginxConf(structure, runtime, checksum);
if (!conf.includes('ngx_http_portico_metrics_module.so')) throw new Error('the metrics module is not loaded');
const validated = await nginx.writeValidated(conf);
if (!validated.ok) {
  console.error(`nginx -t rejected Portico's nginx.conf:\n${validated.output}`);
  process.exit(1);
}
nginx.start();
const live = await nginx.waitLive(checksum, 15_000);
await nginx.stop();
if (!live) {
  console.error('nginx did not confirm the configuration over the Lua API');
  process.exit(1);
}
console.log(`portico smoke: nginx.conf rendered, validated, started and confirmed live in ${runtime.dir} (with ModSecurity and the OWASP CRS, and Portico's metrics module)`);
