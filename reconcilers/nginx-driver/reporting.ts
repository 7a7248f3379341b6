// Events and status of the objects routes come from (Ingresses today), keyed by kind-qualified reference
// ("Ingress/ns/name"), after each sync: each problem is posted once per generation of its object, "Programmed" when
// a generation goes live, and the set of programmed objects (what status publishing writes) kept in step. A sync
// reports only the objects it touched (`only`), or all of them after a full translation.
import type { EventRecorder } from '../../operator/events.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import type { IngressStatus, TranslateEvent } from '../translate/translate.ts';

export class IngressReporting {
  /** References of the objects programmed in nginx after the last sync. */
  readonly programmed = new Set<string>();
  /** Per Ingress: the events already recorded (key: generation, reason, message), so each is posted once. */
  private reportedEvents = new Map<string, Set<string>>();
  private readonly programmedGeneration = new Map<string, number>();
  private readonly listeners: ((changed: string[]) => void)[] = [];
  /** Last reported status of each object other than an Ingress (Routes): what their status conditions show. */
  readonly crdStatus = new Map<string, IngressStatus>();
  private readonly reportedListeners: ((refs: string[]) => void)[] = [];

  private readonly events: EventRecorder;
  private readonly objectFor: (ref: string) => KubeObject | undefined;

  constructor(events: EventRecorder, objectFor: (ref: string) => KubeObject | undefined) {
    this.events = events;
    this.objectFor = objectFor;
  }

  /** Called after each sync with the references of the non-Ingress objects (Routes) it reported on. */
  onReported(cb: (refs: string[]) => void): void {
    this.reportedListeners.push(cb);
  }

  /** Called with the keys whose programmed state changed. */
  onProgrammedChange(cb: (changed: string[]) => void): void {
    this.listeners.push(cb);
  }

  /**
   * Events on Ingresses: problems when they first appear, and "Programmed" when a generation goes live — for the
   * Ingresses in `only` (what the sync touched), or for all (null).
   */
  report(events: readonly TranslateEvent[], status: ReadonlyMap<string, IngressStatus>, only: ReadonlySet<string> | null, reload: boolean, announce: boolean): void {
    this.updateProgrammed(status, only);
    const crds: string[] = [];
    for (const k of only ?? status.keys()) {
      if (k.startsWith('Ingress/')) continue;
      const st = status.get(k);
      if (st) this.crdStatus.set(k, st);
      else this.crdStatus.delete(k);
      crds.push(k);
    }
    if (!only) {
      for (const k of this.crdStatus.keys()) {
        if (!status.has(k)) {
          this.crdStatus.delete(k);
          crds.push(k);
        }
      }
    }
    const next = new Map<string, Set<string>>();
    for (const e of events) {
      if (only && !only.has(e.ref)) continue;
      const obj = this.objectFor(e.ref);
      // Once per generation: the same problem is reported again only for a new generation of the object.
      const k = `${obj?.metadata.generation ?? 0}\u0000${e.reason}\u0000${e.message}`;
      let seen = next.get(e.ref);
      if (!seen) next.set(e.ref, (seen = new Set()));
      seen.add(k);
      if (this.reportedEvents.get(e.ref)?.has(k)) continue;
      if (obj) this.events.event(obj, e.type, e.reason, 'Programming', e.message);
    }
    if (only) {
      for (const key of only) {
        const seen = next.get(key);
        if (seen) this.reportedEvents.set(key, seen);
        else this.reportedEvents.delete(key);
      }
    } else this.reportedEvents = next;
    for (const key of only ?? status.keys()) {
      const st = status.get(key);
      const obj = st && this.objectFor(key);
      if (!st || !obj) {
        this.programmedGeneration.delete(key);
        continue;
      }
      const gen = obj.metadata.generation ?? 0;
      if (!st.served || !st.programmed) {
        this.programmedGeneration.delete(key);
        continue;
      }
      if (this.programmedGeneration.get(key) === gen) continue;
      this.programmedGeneration.set(key, gen);
      if (!announce) continue;
      const how = reload ? 'with a reload' : 'dynamically';
      this.events.event(obj, 'Normal', 'Programmed', 'Programming', `${obj.kind ?? 'Ingress'} generation ${gen} is served by nginx (applied ${how})`);
    }
    if (!only) for (const key of this.programmedGeneration.keys()) if (!status.has(key)) this.programmedGeneration.delete(key);
    if (crds.length) for (const cb of this.reportedListeners) cb(crds);
  }

  /** Keeps `programmed` in step with the status map: for the Ingresses in `only`, or for all (null). */
  private updateProgrammed(status: ReadonlyMap<string, IngressStatus>, only: ReadonlySet<string> | null): void {
    const changed: string[] = [];
    for (const k of only ?? status.keys()) {
      const st = status.get(k);
      const on = !!st && st.served && st.programmed;
      if (on !== this.programmed.has(k)) {
        changed.push(k);
        if (on) this.programmed.add(k);
        else this.programmed.delete(k);
      }
    }
    if (!only) {
      for (const k of this.programmed) {
        if (!status.has(k)) {
          this.programmed.delete(k);
          changed.push(k);
        }
      }
    }
    if (changed.length) for (const cb of this.listeners) cb(changed);
  }
}
