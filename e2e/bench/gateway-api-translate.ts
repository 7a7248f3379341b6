// What the pure translation costs with many HTTPRoutes (no cluster, no nginx): one Gateway (an HTTP listener that
// allows routes from every namespace), N HTTPRoutes each with its own hostname and Service, translated in full three
// times, then once more after one new HTTPRoute; the Gateway API state (attachment and statuses) timed on its own.
// HTTPRoute changes run the full translation today (Ingress changes have the incremental one): this is that cost.
// Usage: node e2e/bench/gateway-api-translate.ts [routes=10000]
import { Model } from '../../reconcilers/model/model.ts';
import { normalizeService } from '../../reconcilers/model/normalize.ts';
import { normalizeGateway } from '../../reconcilers/kinds/gateway/normalize.ts';
import { normalizeGatewayClass } from '../../reconcilers/kinds/gatewayclass/index.ts';
import { normalizeHttpRoute } from '../../reconcilers/kinds/httproute/normalize.ts';
import { translate, type TranslateOptions } from '../../reconcilers/translate/translate.ts';
import { gatewayApiState } from '../../reconcilers/translate/gateway-api/attach.ts';
import type { KubeObject } from '../../operator/kube/object.ts';

const N = Number(process.argv[2] ?? 10000);
const GA = { controllerName: 'portico.dev/gateway-controller', reservedPorts: [8080, 8443, 10246] };
const O: TranslateOptions = { controllerClass: 'portico.dev/ingress-controller', ingressClassName: 'portico', watchWithoutClass: false, listen: { httpPort: 8080, httpsPort: 8443, statusPort: 10246, address: '127.0.0.1' }, gatewayApi: GA };
const meta = (name: string, ns?: string) => ({ name, ...(ns ? { namespace: ns } : {}), uid: `${ns ?? ''}-${name}`, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' });
const ok = <T>(r: { ok: true; record: T } | { ok: false; reason: string }): T => {
  if (!r.ok) throw new Error(r.reason);
  return r.record;
};
const route = (name: string, host: string, svc: string) =>
  normalizeHttpRoute({ metadata: meta(name, 'apps'), spec: { parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: [host], rules: [{ backendRefs: [{ name: svc, port: 80 }] }] } } as unknown as KubeObject);

const m = new Model();
m.setCrd('GatewayClass', ok(normalizeGatewayClass({ metadata: meta('portico'), spec: { controllerName: GA.controllerName } } as unknown as KubeObject)));
m.setCrd('Gateway', ok(normalizeGateway({ metadata: meta('gw', 'infra'), spec: { gatewayClassName: 'portico', listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }] } } as unknown as KubeObject)));
for (let i = 0; i < N; i++) {
  m.setService(normalizeService({ metadata: { name: `s${i}`, namespace: 'apps' }, spec: { ports: [{ port: 80 }] } } as unknown as KubeObject));
  m.setCrd('HTTPRoute', ok(route(`r${i}`, `h${i}.example.com`, `s${i}`)));
}
const ms = (t: number) => `${(performance.now() - t).toFixed(0)} ms`;
for (let k = 1; k <= 3; k++) {
  const t = performance.now();
  const r = translate(m.snapshot(), O);
  console.log(`${N} HTTPRoutes: full translation #${k}: ${ms(t)} (${Object.keys(r.config.data.routes).length} hosts)`);
}
m.setCrd('HTTPRoute', ok(route('new', 'new.example.com', 's1')));
const snap = m.snapshot();
let t = performance.now();
gatewayApiState(snap, GA);
console.log(`after one new HTTPRoute: Gateway API state ${ms(t)}`);
t = performance.now();
translate(snap, O);
console.log(`after one new HTTPRoute: full translation ${ms(t)}`);
