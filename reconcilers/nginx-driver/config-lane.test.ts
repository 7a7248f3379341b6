// The configuration lane on a model with Gateway API objects, nginx replaced by stand-ins (no process, no socket):
// which translation each sync runs — only the closure of what changed when only HTTPRoutes (and Ingresses) did,
// the full one after any other change (a Gateway) — and what it pushes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../operator/log.ts';
import { Metrics } from '../../operator/metrics.ts';
import type { EventRecorder } from '../../operator/events.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import type { GatewayConfig } from '../config/types.ts';
import type { DataDelta } from '../translate/diff.ts';
import { normalizeGateway } from '../kinds/gateway/normalize.ts';
import { normalizeGatewayClass } from '../kinds/gatewayclass/index.ts';
import { normalizeHttpRoute } from '../kinds/httproute/normalize.ts';
import { normalizeIngress } from '../model/normalize.ts';
import type { Model } from '../model/model.ts';
import { gatewayApiState, listenerHost } from '../translate/gateway-api/attach.ts';
import { OPTS, ing, modelOf, rule, svc, svcRef } from '../translate/fixtures.test-helpers.ts';
import type { TranslateOptions } from '../translate/translate.ts';
import { CertificateZone } from './certificate-zone.ts';
import { ConfigurationLane } from './config-lane.ts';
import { Exclusion } from './exclusion.ts';
import type { DynamicClient } from './nginx/dynamic.ts';
import type { NginxProcess } from './nginx/process.ts';
import { NginxState } from './nginx-state.ts';
import { OwnAddresses } from './own-addresses.ts';
import { PushLock } from './push-lock.ts';
import { Readiness } from './readiness.ts';
import { IngressReporting } from './reporting.ts';
import { ExternalNameResolver } from './resolver.ts';
import { StreamServices } from './stream.ts';
import type { StructureApplier } from './structure-apply.ts';
import { SyncReporting } from './sync-reporting.ts';

const GA = { controllerName: 'portico.dev/gateway-controller', reservedPorts: [8080, 8443, 10246] };
const O: TranslateOptions = { ...OPTS, gatewayApi: GA };
const meta = (name: string, ns?: string) => ({ name, ...(ns ? { namespace: ns } : {}), uid: `uid-${name}`, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' });
const ok = <T>(r: { ok: true; record: T } | { ok: false; reason: string }): T => {
  if (!r.ok) throw new Error(r.reason);
  return r.record;
};
const gateway = (listeners: unknown[]) => ok(normalizeGateway({ metadata: meta('gw', 'infra'), spec: { gatewayClassName: 'portico', listeners } } as unknown as KubeObject));
const route = (name: string, host: string, service: string) =>
  ok(normalizeHttpRoute({ metadata: meta(name, 'default'), spec: { parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: [host], rules: [{ backendRefs: [{ name: service, port: 80 }] }] } } as unknown as KubeObject));

/** A lane over `m` whose nginx always takes the structure and the data; `pushes` records each data delta. */
function laneOver(m: Model) {
  const log = createLogger('error');
  const events = { event: () => {} } as unknown as EventRecorder;
  const state = new NginxState();
  const reporting = new SyncReporting(new Metrics({ prefix: 'portico' }), events, () => undefined, log);
  const nginx = { isRunning: () => true, waitLive: async () => true } as unknown as NginxProcess;
  const own = new OwnAddresses(O, m, log);
  const pushes: DataDelta[] = [];
  const reloads: GatewayConfig[] = [];
  const lane = new ConfigurationLane(
    { quietMs: 0, maxWaitMs: 0 },
    {
      model: m,
      state,
      lock: new PushLock(),
      own,
      stream: new StreamServices(m, events, log, { own: own.addresses, address: '127.0.0.1' }),
      resolver: new ExternalNameResolver(() => {}, log, { refuse: () => null, lookup: async () => [] }),
      exclusion: new Exclusion(),
      applier: {
        apply: async (desired: GatewayConfig) => {
          reloads.push(desired);
          state.structure = desired.structure;
          return true;
        },
      } as unknown as StructureApplier,
      certificates: new CertificateZone(reporting, log),
      nginx,
      dynamic: { pushData: async (delta: DataDelta) => (pushes.push(delta), { bytes: 1 }) } as unknown as DynamicClient,
      reporting,
      objects: new IngressReporting(events, () => undefined),
      readiness: new Readiness(nginx, reporting, log),
      log,
    },
  );
  m.onChange((changes) => {
    for (const c of changes) if (c.kind !== 'EndpointSlice') lane.noteChange(c);
  });
  /** One sync, as the lane runs it after a change. */
  const sync = async () => {
    lane.lane.trigger();
    await lane.lane.flush();
  };
  return { lane, pushes, reloads, sync, stats: lane.translator.stats };
}

test('the lane translates an HTTPRoute-only change alone and pushes its host; a Gateway change runs the full translation', async () => {
  const m = modelOf({ services: Array.from({ length: 40 }, (_, i) => svc(`s${i}`, [{ port: 80 }])) });
  m.setCrd('GatewayClass', ok(normalizeGatewayClass({ metadata: meta('portico'), spec: { controllerName: GA.controllerName } } as unknown as KubeObject)));
  m.setCrd('Gateway', gateway([{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }]));
  for (let i = 0; i < 40; i++) m.setCrd('HTTPRoute', route(`r${i}`, `h${i}.example.com`, `s${i}`));
  const { pushes, reloads, sync, stats } = laneOver(m);
  await sync();
  assert.deepEqual([stats.full, stats.scoped], [1, 0], 'the first sync translates everything');
  assert.equal(reloads.length, 1, 'and applies the structure (the Gateway port)');
  const port = gatewayApiState(m.snapshot(), GA).gateways.get('infra/gw')!.listeners[0]!.podPort!;

  m.setCrd('HTTPRoute', route('new', 'new.example.com', 's7'));
  await sync();
  assert.deepEqual([stats.full, stats.scoped], [1, 1], 'a new HTTPRoute: the scoped translation');
  assert.ok(stats.lastTranslated <= 2, `${stats.lastTranslated} objects translated`);
  assert.deepEqual(Object.keys(pushes.at(-1)!.routes.upsert), [listenerHost(port, 'new.example.com')]);
  assert.equal(reloads.length, 1, 'data only: no reload');

  m.setCrd('HTTPRoute', route('new', 'moved.example.com', 's7'));
  await sync();
  m.deleteCrd('HTTPRoute', 'default/r3');
  await sync();
  assert.deepEqual([stats.full, stats.scoped], [1, 3], 'an edited and a deleted HTTPRoute: scoped too');
  assert.deepEqual(pushes.at(-1)!.routes.remove, [listenerHost(port, 'h3.example.com')]);

  // An Ingress and an HTTPRoute changed before one sync: one scoped translation of both.
  const n = normalizeIngress(ing('i', { rules: [rule('i.example.com', [{ path: '/', backend: svcRef('s9', 80) }])] }));
  assert.ok(n.ok);
  m.setIngress(n.ingress);
  m.setCrd('HTTPRoute', route('other', 'other.example.com', 's8'));
  await sync();
  assert.deepEqual([stats.full, stats.scoped], [1, 4]);
  assert.deepEqual(Object.keys(pushes.at(-1)!.routes.upsert).sort(), ['i.example.com', listenerHost(port, 'other.example.com')].sort());

  // The Gateway gets a second listener: the full translation (and a reload, for its port).
  m.setCrd('Gateway', gateway([{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }, { name: 'alt', port: 81, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }]));
  await sync();
  assert.deepEqual([stats.full, stats.scoped], [2, 4], 'a Gateway change: the full translation');
  assert.equal(reloads.length, 2);
  // And the next HTTPRoute change is scoped again.
  m.setCrd('HTTPRoute', route('after', 'after.example.com', 's1'));
  await sync();
  assert.deepEqual([stats.full, stats.scoped], [2, 5]);
});
