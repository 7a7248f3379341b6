// Ingress status publishing: the leader writes status.loadBalancer.ingress on every Ingress Portico serves and
// programs, from --publish-status-address or from the --publish-service Service (its LoadBalancer status, else its
// externalIPs, else its clusterIP). It clears the addresses from Ingresses it stops serving — only when they are
// the ones Portico wrote, so another controller's status is never wiped. Non-leaders never write. An Ingress of a
// class Portico does not serve (ingress-nginx's, side by side) is never "programmed", so its status is left alone
// unless it holds exactly Portico's addresses (an Ingress moved from Portico to the other controller).
//
// On shutdown (--update-status-on-shutdown, off by default unlike ingress-nginx: a rolling update or a restart
// would otherwise withdraw every address and make external-dns flap), the leader clears the addresses it wrote.
import { Counter } from 'prom-client';
import type { Reconciler, ReconcileContext } from '../../../operator/controller.ts';
import type { Informer } from '../../../operator/informer.ts';
import type { KubeClient } from '../../../operator/kube/client.ts';
import { isNotFound } from '../../../operator/kube/client.ts';
import type { KubeObject } from '../../../operator/kube/object.ts';
import { resourcePath } from '../../../operator/kube/resources.ts';
import { Resources } from '../../resources.ts';
import type { Metrics } from '../../../operator/metrics.ts';

export interface LbIngress {
  ip?: string;
  hostname?: string;
}

type ServiceObj = KubeObject & {
  spec?: { clusterIP?: string; externalIPs?: string[]; type?: string };
  status?: { loadBalancer?: { ingress?: LbIngress[] } };
};
type IngressObj = KubeObject & { status?: { loadBalancer?: { ingress?: LbIngress[] } } };

const IP = /^[0-9.]+$|^[0-9a-fA-F:]+$/;

/** Pure: the addresses to publish. */
export function publishedAddresses(statusAddress: string | undefined, svc: ServiceObj | undefined): LbIngress[] {
  if (statusAddress) {
    return statusAddress
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean)
      .map((a) => (IP.test(a) ? { ip: a } : { hostname: a }));
  }
  if (!svc) return [];
  const lb = (svc.status?.loadBalancer?.ingress ?? []).map((x) => (x.ip ? { ip: x.ip } : { hostname: x.hostname ?? '' })).filter((x) => x.ip || x.hostname);
  if (lb.length) return lb;
  if (svc.spec?.externalIPs?.length) return svc.spec.externalIPs.map((ip) => ({ ip }));
  if (svc.spec?.clusterIP && svc.spec.clusterIP !== 'None') return [{ ip: svc.spec.clusterIP }];
  return [];
}

const same = (a: LbIngress[], b: LbIngress[]) => JSON.stringify(a) === JSON.stringify(b);

export class StatusReconciler implements Reconciler {
  private readonly ingresses: Informer<IngressObj>;
  private readonly services: Informer<ServiceObj>;
  private readonly client: KubeClient;
  private readonly isLeader: () => boolean;
  private readonly programmed: (key: string) => boolean;
  private readonly o: { publishService?: string; publishStatusAddress?: string };
  private readonly writes: Counter;

  constructor(
    deps: { ingresses: Informer<IngressObj>; services: Informer<ServiceObj>; client: KubeClient; metrics: Metrics; isLeader: () => boolean; programmed: (key: string) => boolean },
    o: { publishService?: string; publishStatusAddress?: string },
  ) {
    this.ingresses = deps.ingresses;
    this.services = deps.services;
    this.client = deps.client;
    this.isLeader = deps.isLeader;
    this.programmed = deps.programmed;
    this.o = o;
    this.writes = new Counter({ name: 'portico_status_updates_total', help: 'Ingress status writes (leader only)', registers: [deps.metrics.registry] });
  }

  addresses(): LbIngress[] {
    return publishedAddresses(this.o.publishStatusAddress, this.o.publishService ? this.services.store.get(this.o.publishService) : undefined);
  }

  async reconcile(_ctx: ReconcileContext, key: string): Promise<void> {
    if (!this.isLeader()) return;
    const ing = this.ingresses.store.get(key);
    if (!ing) return;
    const ours = this.addresses();
    const current = ing.status?.loadBalancer?.ingress ?? [];
    let want: LbIngress[];
    if (this.programmed(key)) want = ours;
    else if (current.length && same(current, ours)) want = [];
    else return;
    if (same(current, want)) return;
    await this.patch(key, want);
  }

  /**
   * --update-status-on-shutdown: the leader removes its addresses from the Ingresses it serves (only where the
   * status is exactly what Portico writes). Returns how many were cleared; errors are left to the caller to log.
   */
  async clearAll(isLeader: () => boolean = this.isLeader): Promise<number> {
    if (!isLeader()) return 0;
    const ours = this.addresses();
    if (!ours.length) return 0;
    let n = 0;
    for (const key of this.ingresses.store.keys()) {
      const current = this.ingresses.store.get(key)?.status?.loadBalancer?.ingress ?? [];
      if (!this.programmed(key) || !same(current, ours)) continue;
      await this.patch(key, []);
      n++;
    }
    return n;
  }

  private async patch(key: string, want: LbIngress[]): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    try {
      await this.client.request('PATCH', resourcePath(Resources.Ingress, ns, name, 'status'), {
        contentType: 'application/merge-patch+json',
        body: { status: { loadBalancer: { ingress: want } } },
      });
      this.writes.inc();
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}
