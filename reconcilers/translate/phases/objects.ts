// Phases: the objects served (class, age order) and those whose every path fails closed.
import { byOwnerAge } from '../objects.ts';
import { FASTCGI_MAX_SETTINGS } from '../../annotations/groups/fastcgi.ts';
import { NGINX_PREFIX } from '../../annotations/table.ts';
import { fastcgiSettingsKey, modsecurityClosedReason, proxySslClosedReason } from '../profiles.ts';
import type { Draft } from '../draft.ts';

/** Which objects of each kind with paths are served (their status either way), oldest first; rejected ones' Events. */
export function admitObjects(d: Draft): void {
  const { snap, o, owners } = d;
  // Classes are few; resolve "is it served" against them once instead of per object.
  const mine = [...snap.classes.values()].filter((c) => c.controller === o.controllerClass);
  const classes = new Map(mine.map((c) => [c.name, c]));
  for (const p of d.processors) p.admit(d, classes);
  owners.sort(byOwnerAge);
}

/** Ingresses whose every path fails closed (503): access control, proxy-ssl-*, ModSecurity or FastCGI params Portico cannot apply. */
export function failClosedObjects(d: Draft): void {
  const { snap, o, served, closedReason, sslClosed, wafClosed, fcgiClosed } = d;
  // Access control Portico cannot apply: the Ingress fails closed (its locations get no backend → 503).
  for (const ing of served) {
    if (!ing.accessControl.length) continue;
    const what = ing.accessControl.map((a) => `${a.annotation} (${a.kind})`).join(', ');
    closedReason.set(ing.key, `access control requested by ${what} cannot be applied by Portico`);
  }
  // proxy-ssl-*: a backend is never proxied without the client certificate or verification an Ingress asks for; when
  // that cannot be done its paths fail closed (503) too. A canary's own proxy-ssl-* do not apply (its traffic goes
  // through the main Ingress's location, as in ingress-nginx).
  for (const ing of served) {
    const why = ing.annotations.canary === true ? undefined : proxySslClosedReason(snap.ingresses.get(ing.key) ?? ing, ing);
    if (why) sslClosed.set(ing.key, why);
  }
  // ModSecurity: paths it is on for are never served without it (module or CRS missing, snippet refused). A canary's
  // own ModSecurity annotations do not apply (its traffic goes through the main Ingress's profile).
  for (const ing of served) {
    const why = ing.annotations.canary === true ? undefined : modsecurityClosedReason(snap.ingresses.get(ing.key) ?? ing, ing, snap.global, o.modsecurity);
    if (why) wafClosed.set(ing.key, why);
  }
  // FastCGI: params that cannot be read or applied (another namespace, missing, invalid) are never left out — a
  // FastCGI application given other params may run another script. Each distinct set of FastCGI settings is a
  // directive profile (nginx.conf grows, a new one reloads): a namespace gets FASTCGI_MAX_SETTINGS of them, the oldest
  // Ingresses first; the paths of a newer Ingress with yet another set fail closed. (Ingresses with FCGI are always
  // translated in full, incremental.ts, so the count sees every Ingress of the namespace.)
  const perNamespace = new Map<string, Set<string>>();
  for (const ing of served) {
    if (ing.annotations.canary === true) continue;
    const key = fastcgiSettingsKey(ing);
    if (key === undefined) continue;
    // (A fastcgi-params-configmap the ConfigMap's annotations-risk-level refused is not read: its Warning says so.)
    if (ing.fastcgi?.error && ing.annotations['fastcgi-params-configmap'] !== undefined) {
      fcgiClosed.set(ing.key, ing.fastcgi.error);
      continue;
    }
    let seen = perNamespace.get(ing.namespace);
    if (!seen) perNamespace.set(ing.namespace, (seen = new Set()));
    if (seen.has(key)) continue;
    if (seen.size >= FASTCGI_MAX_SETTINGS) {
      fcgiClosed.set(ing.key, `namespace ${ing.namespace} already uses ${FASTCGI_MAX_SETTINGS} distinct FastCGI settings (${NGINX_PREFIX}fastcgi-index and the params of ${NGINX_PREFIX}fastcgi-params-configmap), the most one namespace may (each is a directive profile in nginx.conf); share a ConfigMap with an older Ingress`);
      continue;
    }
    seen.add(key);
  }
}
