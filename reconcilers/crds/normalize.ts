// Portico's CRDs → normalized model records. Pure: the object (and, for Plugins and Consumers, the Secrets they
// read) in, a record or a reason out. Every spec is parsed with exactly the zod schema its CRD was generated from
// (crds/schema), so what the apiserver admitted and what Portico accepts cannot drift; what the CRD cannot say
// (PCRE regexes, config of a plugin type) is checked here with a message naming the field.
import { createHash } from 'node:crypto';
import { loadYaml } from '@kubernetes/client-node';
import { consumerSpecSchema, durationMs, parsePluginConfig, pluginSpecSchema, routeSpecSchema, upstreamSpecSchema, type PluginConfig } from '../../crds/schema/index.ts';
import type { PluginInstance, RouteConditions } from '../config/types.ts';
import { BCRYPT_SHAPE, checkPasswordHash } from '../config/password-hash.ts';
import type { KubeObject } from '../../operator/kube/object.ts';
import type { CrdMeta, NormalizedConsumer, NormalizedPlugin, NormalizedRoute, NormalizedUpstream, RouteRuleN } from '../model/types.ts';
import { regexPathProblem } from '../values/regex-path.ts';
import { caBundleProblem } from '../values/safe.ts';
import type { z } from 'zod';

export type CrdResult<T> = { ok: true; record: T } | { ok: false; reason: string };

export type SecretData = { type?: string; data?: Record<string, string> };
/** Reads a Secret ("namespace/name") from the cache; undefined when it does not exist. */
export type SecretLookup = (key: string) => SecretData | undefined;

function metaOf(obj: KubeObject): CrdMeta {
  const m = obj.metadata;
  return {
    key: `${m.namespace}/${m.name}`,
    namespace: m.namespace ?? '',
    name: m.name,
    uid: m.uid ?? '',
    generation: m.generation ?? 0,
    creationTimestamp: m.creationTimestamp ?? '',
  };
}

/** One line naming each failing field, e.g. "spec.rules.0.matches.0.path.value: must start with /". */
export function issuesText(error: z.ZodError, prefix = 'spec'): string {
  return error.issues
    .map((i) => {
      const at = [prefix, ...i.path.map(String)].join('.');
      return i.code === 'unrecognized_keys' ? i.keys.map((k) => `${at}.${k}: unknown field`).join('; ') : `${at}: ${i.message}`;
    })
    .join('; ');
}

const seconds = (d: string | undefined): number | undefined => (d === undefined ? undefined : durationMs(d) / 1000);
function timeoutsOf(t: { connect?: string; read?: string; send?: string } | undefined): RouteRuleN['timeouts'] | undefined {
  if (!t) return undefined;
  const out = { connect: seconds(t.connect), read: seconds(t.read), send: seconds(t.send) };
  for (const k of ['connect', 'read', 'send'] as const) {
    if (out[k] === undefined) delete out[k];
    else if (out[k] === 0) return undefined;
  }
  return Object.keys(out).length ? out : undefined;
}

export function normalizeRoute(obj: KubeObject): CrdResult<NormalizedRoute> {
  const r = routeSpecSchema.safeParse((obj as { spec?: unknown }).spec ?? {});
  if (!r.success) return { ok: false, reason: issuesText(r.error) };
  const spec = r.data;
  const problems: string[] = [];
  const rules: RouteRuleN[] = spec.rules.map((rule, i) => {
    const at = `spec.rules.${i}`;
    const matches = (rule.matches ?? [{}]).map((m, j) => {
      const type = m.path?.type ?? 'Prefix';
      let path = m.path?.value ?? '/';
      const match = type === 'Exact' ? 'exact' : type === 'Prefix' ? 'prefix' : 'regex';
      if (match === 'regex') {
        const p = regexPathProblem(path);
        if (p) problems.push(`${at}.matches.${j}.path.value: regular expression ${p}`);
      }
      if (match === 'prefix' && path.length > 1) path = path.replace(/\/+$/, '') || '/';
      const conditions: RouteConditions = {};
      if (m.methods?.length) conditions.methods = [...m.methods];
      const values = (list: { name: string; type: string; value: string }[] | undefined, what: string, lower: boolean) =>
        list?.map((h, k) => {
          if (h.type === 'RegularExpression') {
            const p = regexPathProblem(h.value);
            if (p) problems.push(`${at}.matches.${j}.${what}.${k}.value: regular expression ${p}`);
          }
          return { name: lower ? h.name.toLowerCase() : h.name, type: h.type === 'RegularExpression' ? ('regex' as const) : ('exact' as const), value: h.value };
        });
      if (m.headers?.length) conditions.headers = values(m.headers, 'headers', true);
      if (m.queryParams?.length) conditions.query = values(m.queryParams, 'queryParams', false);
      return Object.keys(conditions).length ? { path, match, conditions } : { path, match };
    }) as RouteRuleN['matches'];
    const out: RouteRuleN = {
      name: rule.name ?? `rule-${i}`,
      matches,
      backends: (rule.backends ?? []).map((b) => ({ service: b.service.name, port: b.service.port, weight: b.weight })),
      plugins: [...new Set([...(spec.plugins ?? []), ...(rule.plugins ?? [])])],
      websocket: rule.websocket ?? spec.websocket,
      priority: rule.priority ?? spec.priority,
    };
    const t = timeoutsOf(rule.timeouts ?? spec.timeouts);
    if (t) out.timeouts = t;
    const retries = rule.retries ?? spec.retries;
    if (retries) out.retries = { attempts: retries.attempts, on: [...(retries.on ?? [])] };
    return out;
  });
  if (problems.length) return { ok: false, reason: problems.join('; ') };
  return {
    ok: true,
    record: {
      ...metaOf(obj),
      className: spec.ingressClassName ?? null,
      hosts: [...(spec.hosts ?? [])],
      tls: (spec.tls ?? []).map((t) => ({ hosts: [...t.hosts], secretName: t.secretName })),
      rules,
    },
  };
}

const ALGORITHM = { RoundRobin: 'round_robin', EWMA: 'ewma', ConsistentHash: 'chash', Cookie: 'cookie' } as const;

export function normalizeUpstream(obj: KubeObject, secrets: SecretLookup = () => undefined): CrdResult<NormalizedUpstream> {
  const r = upstreamSpecSchema.safeParse((obj as { spec?: unknown }).spec ?? {});
  if (!r.success) return { ok: false, reason: issuesText(r.error) };
  const s = r.data;
  const meta = metaOf(obj);
  const rec: NormalizedUpstream = { ...meta, serviceKey: `${meta.namespace}/${s.service.name}`, ports: s.ports ? [...s.ports] : null, protocol: s.protocol ?? 'HTTP' };
  const lb = s.loadBalancer;
  if (lb) {
    rec.balance = ALGORITHM[lb.algorithm];
    const h = lb.hashOn as { header?: string; cookie?: string; query?: string; variable?: string } | undefined;
    if (h?.header) rec.hashBy = `$http_${h.header.toLowerCase().replace(/-/g, '_')}`;
    else if (h?.cookie) {
      if (!/^[A-Za-z0-9_]+$/.test(h.cookie)) return { ok: false, reason: 'spec.loadBalancer.hashOn.cookie: nginx can hash only on cookies named with letters, digits and "_"' };
      rec.hashBy = `$cookie_${h.cookie}`;
    } else if (h?.query) {
      if (!/^[A-Za-z0-9_]+$/.test(h.query)) return { ok: false, reason: 'spec.loadBalancer.hashOn.query: nginx can hash only on query parameters named with letters, digits and "_"' };
      rec.hashBy = `$arg_${h.query}`;
    } else if (h?.variable) rec.hashBy = `$${h.variable}`;
    if (lb.cookie) {
      rec.cookie = { name: lb.cookie.name, mode: lb.cookie.mode === 'Persistent' ? 'persistent' : 'balanced' };
      if (lb.cookie.maxAge) rec.cookie.maxAgeSeconds = Math.round(durationMs(lb.cookie.maxAge) / 1000);
    }
  }
  if (s.retries) rec.retries = { attempts: s.retries.attempts, on: [...(s.retries.on ?? [])] };
  const t = timeoutsOf(s.timeouts);
  if (t) rec.timeouts = t;
  if (s.tls) {
    rec.tls = { verify: s.tls.verify === true };
    if (s.tls.serverName) rec.tls.serverName = s.tls.serverName;
    if (s.tls.caSecret) rec.tls.caSecret = s.tls.caSecret;
    if (rec.tls.verify && s.tls.caSecret) {
      const key = `${meta.namespace}/${s.tls.caSecret}`;
      const sec = secrets(key);
      const pem = decode(sec?.data?.['ca.crt']);
      const problem = !sec ? `Secret ${key} not found` : pem === undefined ? `Secret ${key} has no ca.crt` : caBundleProblem(pem);
      if (problem) rec.tls.caError = `spec.tls.caSecret: ${problem}`;
      else rec.tls.caPem = (pem as string).trim() + '\n';
    }
  }
  const p = s.healthCheck?.passive;
  if (p) {
    const sts = (p as { httpStatuses?: number[] }).httpStatuses;
    rec.passiveHealth = { failures: p.failures, statuses: sts ? [...sts] : [502, 503, 504], ejectSeconds: Math.max(1, Math.round(durationMs(p.ejectDuration) / 1000)) };
  }
  return { ok: true, record: rec };
}

function decode(b64: string | undefined): string | undefined {
  return b64 === undefined ? undefined : Buffer.from(b64, 'base64').toString('utf8');
}

/**
 * Rate-limit counters are keyed by the plugin and its limits: a changed limit starts from fresh counters (a bucket
 * filled under a lower limit would otherwise keep refusing for as long as that limit said).
 */
export function limitKey(base: string, c: PluginConfig): string {
  if (c.type !== 'rate-limit') return base;
  return `${base}_${createHash('sha256').update(`${c.requestsPerSecond}/${c.requestsPerMinute}/${c.burst}/${c.by}/${c.header}`).digest('hex').slice(0, 8)}`;
}

/** PluginConfig (validated) → what the Lua plugin runs. `key` namespaces rate-limit counters. */
export function pluginInstanceOf(c: PluginConfig, namespace: string, key: string): Omit<NormalizedPlugin, keyof CrdMeta | 'type'> {
  const lower = (xs: readonly string[] | undefined) => (xs ?? []).map((x) => x.toLowerCase());
  let instance: DistributiveOmitName;
  let authService: NormalizedPlugin['authService'];
  switch (c.type) {
    case 'rate-limit':
      instance = {
        type: 'rate-limit',
        rate: (c.requestsPerSecond ?? c.requestsPerMinute) as number,
        periodSeconds: c.requestsPerSecond !== undefined ? 1 : 60,
        burst: c.burst,
        by: c.by,
        status: c.status,
        key,
        ...(c.header ? { header: c.header.toLowerCase() } : {}),
        ...(c.exempt?.length ? { exempt: [...c.exempt] } : {}),
      };
      break;
    case 'key-auth':
      instance = { type: 'key-auth', namespace, header: c.header.toLowerCase(), hideCredentials: c.hideCredentials, ...(c.query ? { query: c.query } : {}) };
      break;
    case 'basic-auth':
      instance = { type: 'basic-auth', namespace, realm: c.realm, hideCredentials: c.hideCredentials };
      break;
    case 'ip-restriction':
      instance = { type: 'ip-restriction', status: c.status, ...(c.allow ? { allow: [...c.allow] } : {}), ...(c.deny ? { deny: [...c.deny] } : {}) };
      break;
    case 'cors':
      instance = {
        type: 'cors',
        allowOrigins: [...c.allowOrigins],
        allowMethods: [...c.allowMethods],
        allowHeaders: lower(c.allowHeaders),
        exposeHeaders: lower(c.exposeHeaders),
        allowCredentials: c.allowCredentials,
        maxAgeSeconds: c.maxAge,
      };
      break;
    case 'request-headers':
    case 'response-headers': {
      const pairs = (xs: { name: string; value: string }[] | undefined) => (xs ?? []).map((x) => ({ name: x.name.toLowerCase(), value: x.value }));
      instance = { type: c.type, set: pairs(c.set), add: pairs(c.add), remove: lower(c.remove) };
      break;
    }
    case 'external-auth':
      instance = {
        type: 'external-auth',
        backendId: '',
        path: c.path,
        method: c.method,
        forwardHeaders: lower(c.forwardHeaders),
        upstreamHeaders: lower(c.upstreamHeaders),
        clientHeaders: lower(c.clientHeaders),
        timeoutMs: durationMs(c.timeout),
      };
      authService = { service: c.service.name, port: c.service.port };
      break;
    case 'redirect':
      instance = {
        type: 'redirect',
        status: c.statusCode,
        keepQuery: c.keepQuery,
        ...(c.scheme ? { scheme: c.scheme } : {}),
        ...(c.hostname ? { host: c.hostname } : {}),
        ...(c.port ? { port: c.port } : {}),
        ...(c.path ? { path: c.path } : {}),
        ...(c.prefix ? { prefix: { ...c.prefix } } : {}),
      };
      break;
    case 'rewrite':
      instance = {
        type: 'rewrite',
        ...(c.path ? { path: c.path } : {}),
        ...(c.prefix ? { prefix: { ...c.prefix } } : {}),
        ...(c.regex ? { regex: { ...c.regex } } : {}),
        ...(c.host ? { host: c.host } : {}),
      };
      break;
  }
  return authService ? { instance, authService } : { instance };
}
type DistributiveOmitName = PluginInstance extends infer T ? (T extends unknown ? Omit<T, 'name'> : never) : never;

/** A Plugin: its instance, or the zod message (Accepted=False) / the missing Secret (ResolvedRefs=False). */
export function normalizePlugin(obj: KubeObject, secrets: SecretLookup): CrdResult<NormalizedPlugin> {
  const r = pluginSpecSchema.safeParse((obj as { spec?: unknown }).spec ?? {});
  if (!r.success) return { ok: false, reason: issuesText(r.error) };
  const spec = r.data;
  const meta = metaOf(obj);
  const base = { ...meta, type: spec.type };
  let config: unknown = spec.config;
  let secretKey: string | undefined;
  if (spec.configFrom) {
    const ref = spec.configFrom.secretKeyRef;
    secretKey = `${meta.namespace}/${ref.name}`;
    const s = secrets(secretKey);
    const raw = decode(s?.data?.[ref.key]);
    if (!s) return { ok: true, record: { ...base, instance: null, secretKey, unresolved: true, error: `spec.configFrom: Secret ${secretKey} not found` } };
    if (raw === undefined) return { ok: true, record: { ...base, instance: null, secretKey, unresolved: true, error: `spec.configFrom: Secret ${secretKey} has no key ${ref.key}` } };
    try {
      config = loadYaml(raw);
    } catch (e) {
      // The parser's message quotes the text around the error: nothing of a Secret may reach an Event or a log.
      void e;
      return { ok: true, record: { ...base, instance: null, secretKey, error: `spec.configFrom: key ${ref.key} of Secret ${secretKey} is not JSON or YAML` } };
    }
  }
  const pc = parsePluginConfig(spec.type, config);
  if (!pc.ok) {
    // A configuration from a Secret is judged without quoting it: schema messages name fields (which, for unknown
    // fields and maps, are the Secret's own text) and sometimes values. The fix is found by trying the same
    // configuration as spec.config of a Plugin, where the messages are complete.
    const problems = pc.error.split('; ').length;
    const error = spec.configFrom
      ? `spec.configFrom: key ${spec.configFrom.secretKeyRef.key} of Secret ${secretKey} is not a valid ${spec.type} configuration (${problems} problem${problems > 1 ? 's' : ''}; not quoted, as it comes from a Secret: try it as spec.config to see them)`
      : pc.error.replace(/^config\b/, 'spec.config').replace(/; config\b/g, '; spec.config');
    const rec: NormalizedPlugin = { ...base, instance: null, error };
    if (secretKey) rec.secretKey = secretKey;
    return { ok: true, record: rec };
  }
  if (pc.config.type === 'rewrite' && pc.config.regex) {
    const p = regexPathProblem(pc.config.regex.pattern);
    if (p) return { ok: true, record: { ...base, instance: null, error: `spec.config.regex.pattern: regular expression ${p}` } };
  }
  const rec: NormalizedPlugin = { ...base, ...pluginInstanceOf(pc.config, meta.namespace, limitKey(`${meta.namespace}_${meta.name}`, pc.config)) };
  if (secretKey) rec.secretKey = secretKey;
  return { ok: true, record: rec };
}

const sha256hex = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/**
 * The password hash the data plane compares against: bcrypt ($2a$/$2b$/$2y$) and htpasswd {SHA} hashes are kept as
 * given; a plain password becomes "sha256$<salt>$<hex of sha256(salt .. password)>", the salt derived from the
 * consumer's uid and user name (stable, so the data does not change while the Secret does not).
 */
export function passwordHash(password: string, uid: string, username: string): string {
  if (BCRYPT_SHAPE.test(password) || /^\{SHA\}[A-Za-z0-9+/]{27}=$/.test(password)) return password;
  const salt = sha256hex(`portico:${uid}:${username}`).slice(0, 16);
  return `sha256$${salt}$${sha256hex(salt + password)}`;
}

/** A Consumer with its credentials read from the Secrets it names (only those); missing ones are problems. */
export function normalizeConsumer(obj: KubeObject, secrets: SecretLookup): CrdResult<NormalizedConsumer> {
  const r = consumerSpecSchema.safeParse((obj as { spec?: unknown }).spec ?? {});
  if (!r.success) return { ok: false, reason: issuesText(r.error) };
  const spec = r.data;
  const meta = metaOf(obj);
  const rec: NormalizedConsumer = { ...meta, username: spec.username, keys: [], basic: [], secretKeys: [], plugins: [...(spec.plugins ?? [])], problems: [] };
  for (const [i, c] of (spec.credentials ?? []).entries()) {
    const key = `${meta.namespace}/${c.secretRef.name}`;
    if (!rec.secretKeys.includes(key)) rec.secretKeys.push(key);
    const s = secrets(key);
    const at = `spec.credentials.${i}`;
    if (!s) {
      rec.problems.push(`${at}: Secret ${key} not found`);
      continue;
    }
    if (c.type === 'key-auth') {
      const k = decode(s.data?.key);
      if (!k) rec.problems.push(`${at}: Secret ${key} has no data.key (the API key)`);
      else if (k.length < 8) rec.problems.push(`${at}: the key in Secret ${key} is shorter than 8 characters`);
      else rec.keys.push(sha256hex(k));
    } else {
      const u = decode(s.data?.username);
      const p = decode(s.data?.password);
      if (!u || !p) rec.problems.push(`${at}: Secret ${key} needs data.username and data.password`);
      else if (!/^[\x21-\x39\x3b-\x7e]{1,128}$/.test(u)) rec.problems.push(`${at}: the user name in Secret ${key} must be printable ASCII without spaces or ":"`);
      else {
        // A stored bcrypt hash is verified by the nginx worker: its cost is bounded (config/password-hash.ts).
        const bad = BCRYPT_SHAPE.test(p) ? checkPasswordHash(p) : undefined;
        if (bad && !bad.ok) rec.problems.push(`${at}: Secret ${key}, user ${u}: the password is a bcrypt hash whose ${bad.reason.replace(/^bcrypt /, '')}; this credential is not used`);
        else rec.basic.push({ username: u, hash: passwordHash(p, meta.uid, u) });
      }
    }
  }
  rec.secretKeys.sort();
  return { ok: true, record: rec };
}
