// The objects a translation serves: kind-qualified references, age order (oldest wins), IngressClass selection.
import type { IngressClassInfo, NormalizedIngress } from '../model/types.ts';
import type { TranslateOptions } from './types.ts';

export function isIngressServed(
  ing: Pick<NormalizedIngress, 'className' | 'classFromAnnotation'>,
  classes: ReadonlyMap<string, IngressClassInfo>,
  o: Pick<TranslateOptions, 'controllerClass' | 'ingressClassName' | 'watchWithoutClass' | 'ingressClassByName'>,
): boolean {
  const mine = [...classes.values()].filter((c) => c.controller === o.controllerClass);
  if (ing.className) {
    if (mine.some((c) => c.name === ing.className)) return true;
    // --ingress-class-by-name (ingress-nginx): the class named --ingress-class, whatever its controller.
    if (o.ingressClassByName && !ing.classFromAnnotation && ing.className === o.ingressClassName) return true;
    return ing.classFromAnnotation && ing.className === o.ingressClassName;
  }
  return o.watchWithoutClass || mine.some((c) => c.isDefault);
}

export const byAge = (a: NormalizedIngress, b: NormalizedIngress): number =>
  a.creationTimestamp < b.creationTimestamp ? -1 : a.creationTimestamp > b.creationTimestamp ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0;

/** Kind-qualified reference of an Ingress ("Ingress/ns/name"): how routes, events and status name their object. */
export const ingressRef = (key: string) => `Ingress/${key}`;
/** "Ingress/ns/name" → "ns/name"; null for a reference to another kind. */
export const ingressKeyOf = (ref: string): string | null => (ref.startsWith('Ingress/') ? ref.slice('Ingress/'.length) : null);

/** Kind-qualified reference of a Route ("Route/ns/name"). */
export const routeRef = (key: string) => `Route/${key}`;

/** The namespace of a "namespace/name" key. */
export const secretNs = (key: string): string => key.slice(0, key.indexOf('/'));

/** Owners (draft.ts) by age across kinds: oldest first, then by kind-qualified ref. */
export const byOwnerAge = (a: { created: string; ref: string }, b: { created: string; ref: string }): number => (a.created < b.created ? -1 : a.created > b.created ? 1 : a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0);
