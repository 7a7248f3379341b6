// What the pure translation costs with many HTTPRoutes (no cluster, no nginx): one Gateway (an HTTP listener that
// allows routes from every namespace), N HTTPRoutes each with its own hostname and Service, translated in full three
// times; the Gateway API state (attachment and statuses) computed anew, and updated after one new HTTPRoute; then
// the incremental translation (what the configuration lane runs) of one new, one edited and one deleted HTTPRoute,
// several times each, next to the full translation of the same model. Figures only: nothing here passes or fails.
// Usage: node e2e/bench/gateway-api-translate.ts [routes=10000] [repetitions=15]
import { Model } from '../../reconcilers/model/model.ts';
import { normalizeService } from '../../reconcilers/model/normalize.ts';
import { normalizeGateway } from '../../reconcilers/kinds/gateway/normalize.ts';
import { normalizeGatewayClass } from '../../reconcilers/kinds/gatewayclass/index.ts';
import { normalizeHttpRoute } from '../../reconcilers/kinds/httproute/normalize.ts';
import { translate, type TranslateOptions } from '../../reconcilers/translate/translate.ts';
import { IncrementalTranslator } from '../../reconcilers/translate/incremental.ts';
import { gatewayApiState, gatewayApiStateAnew } from '../../reconcilers/translate/gateway-api/attach.ts';
import type { KubeObject } from '../../operator/kube/object.ts';

const N = Number(process.argv[2] ?? 10000);
const REPS = Number(process.argv[3] ?? 15);
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
const since = (t: number) => performance.now() - t;
const ms = (x: number) => `${x.toFixed(1)} ms`;
for (let k = 1; k <= 3; k++) {
  const t = performance.now();
  const r = translate(m.snapshot(), O);
  console.log(`${N} HTTPRoutes: full translation #${k}: ${ms(since(t))} (${Object.keys(r.config.data.routes).length} hosts)`);
}
let t = performance.now();
gatewayApiStateAnew(m.snapshot(), GA);
console.log(`Gateway API state computed anew: ${ms(since(t))}`);
gatewayApiState(m.snapshot(), GA);
m.setCrd('HTTPRoute', ok(route('first-new', 'first-new.example.com', 's1')));
t = performance.now();
gatewayApiState(m.snapshot(), GA);
console.log(`Gateway API state after one new HTTPRoute (updated): ${ms(since(t))}`);

// The configuration lane's translator: a full translation first, then each change alone.
const translator = new IncrementalTranslator();
translator.translate(m.snapshot(), O, null);
const NONE = new Set<string>();
const times: Record<'new' | 'edited' | 'deleted' | 'full', number[]> = { new: [], edited: [], deleted: [], full: [] };
const timed = (what: keyof typeof times, key: string) => {
  const snap = m.snapshot();
  const before = translator.stats.full;
  const t0 = performance.now();
  translator.translate(snap, O, NONE, new Set([key]));
  times[what].push(since(t0));
  if (translator.stats.full !== before) throw new Error(`${what} ${key}: the full translation ran`);
};
for (let k = 0; k < REPS; k++) {
  m.setCrd('HTTPRoute', ok(route(`new${k}`, `new${k}.example.com`, `s${k}`)));
  timed('new', `apps/new${k}`);
  const edited = `r${(k * 631) % N}`;
  m.setCrd('HTTPRoute', ok(route(edited, `edited${k}.example.com`, `s${(k * 631 + 1) % N}`)));
  timed('edited', `apps/${edited}`);
  m.deleteCrd('HTTPRoute', `apps/new${k}`);
  timed('deleted', `apps/new${k}`);
  if (k < 3) {
    const t0 = performance.now();
    translate(m.snapshot(), O);
    times.full.push(since(t0));
  }
}
const summary = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `median ${ms(s[Math.floor(s.length / 2)] as number)}, max ${ms(s[s.length - 1] as number)} (${s.length} runs)`;
};
console.log(`incremental translation of one new HTTPRoute:     ${summary(times.new)}`);
console.log(`incremental translation of one edited HTTPRoute:  ${summary(times.edited)}`);
console.log(`incremental translation of one deleted HTTPRoute: ${summary(times.deleted)}`);
console.log(`full translation of the same model:               ${summary(times.full)}`);
