// The injection corpus (issue: ingress-nginx drop-in, "Proof"): every payload class of ingress-nginx's
// configuration-injection CVEs — ";", "}", newlines, "#", "$", quotes, *_by_lua, include, NUL, unicode line
// separators — through every ingress-nginx annotation (supported or not, snippets allowed by the ConfigMap), every
// ConfigMap key, Ingress paths and hosts. Each payload carries the marker "pwn_": what is asserted is that the marker
// never reaches nginx.conf (0 directives injected; the rendered file also passes nginx -t), and that each payload is
// refused with a Warning naming what carried it — or, where the value is inert data (a header value sent literally,
// a regex the Lua router matches), listed as accepted in ACCEPTED_AS_DATA with why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CATALOGUE, NGINX_PREFIX } from '../../annotations/table.ts';
import { CONFIG_KEYS, defaultGlobalConfig, parseGlobalConfig } from '../../model/global-config.ts';
import { Model } from '../../model/model.ts';
import { normalizeIngress, normalizeIngressClass, normalizeService } from '../../model/normalize.ts';
import { structureChecksum } from '../../translate/diff.ts';
import { ing, OPTS, portico, rule, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { translate } from '../../translate/translate.ts';
import { renderNginxConf, writeTrustedCas } from './render.ts';
import { nginxTest, runtimeDir } from './nginx-t.test-helpers.ts';

const PAYLOADS: Record<string, string> = {
  semicolon: 'x; pwn_semicolon on;',
  brace: 'x } pwn_brace { ',
  newline: 'x\npwn_newline on;',
  crlf: 'x\r\npwn_crlf: 1',
  hash: 'x # pwn_hash',
  dollar: '$pwn_dollar',
  dquote: 'x" pwn_dquote "',
  squote: "x' pwn_squote '",
  lua: 'content_by_lua_block { pwn_lua() }',
  include: 'include /etc/pwn_include.conf;',
  nul: 'x\u0000pwn_nul',
  ls: 'x\u2028pwn_ls',
  ps: 'x\u2029pwn_ps',
  nel: 'x\u0085pwn_nel',
};
const MARK = 'pwn_';

/**
 * Annotations whose value is kept as inert data for some payloads: nothing of it reaches nginx.conf (asserted), and
 * the data plane uses it literally. Annotation → payload classes accepted, and why.
 */
const ACCEPTED_AS_DATA: Record<string, { classes: string[]; why: string }> = {
  'auth-realm': { classes: ['semicolon', 'brace', 'hash', 'dollar', 'squote', 'lua', 'include'], why: 'the literal text of the basic-auth challenge, inside its quoted realm (quotes and control characters are refused)' },
  'canary-by-header-value': { classes: ['semicolon', 'brace', 'hash', 'dollar', 'dquote', 'squote', 'lua', 'include'], why: 'compared literally with the request header by the Lua router' },
  'canary-by-header-pattern': { classes: ['semicolon', 'dollar', 'include'], why: 'a regex the Lua router matches (ngx.re), never nginx.conf text' },
  'x-forwarded-prefix': { classes: ['semicolon', 'brace', 'hash', 'dollar', 'dquote', 'squote', 'lua', 'include'], why: 'the literal value of the X-Forwarded-Prefix request header (the request-headers plugin sends it as is)' },
  'cors-allow-headers': { classes: ['dollar'], why: '"$pwn_dollar" is a valid header-name token, listed literally in Access-Control-Allow-Headers' },
  'cors-expose-headers': { classes: ['dollar'], why: '"$pwn_dollar" is a valid header-name token, listed literally in Access-Control-Expose-Headers' },
};

/** Log formats (single-quoted in nginx.conf) keep these payload classes as literal text: see the ConfigMap test. */
const LOG_FORMAT_KEYS = ['log-format-upstream', 'log-format-stream'];
const LOG_FORMAT_TEXT = ['hash', 'brace', 'dquote', 'lua'];

const SNIPPETS_ALLOWED = { allowSnippetAnnotations: true, annotationsRiskLevel: 'critical' as const };
// Companions that switch on the code paths an annotation belongs to (its value is then the payload).
const BASE: Record<string, string> = {
  [`${NGINX_PREFIX}enable-cors`]: 'true',
  [`${NGINX_PREFIX}affinity`]: 'cookie',
  [`${NGINX_PREFIX}proxy-redirect-from`]: 'http://a.internal/',
  [`${NGINX_PREFIX}proxy-redirect-to`]: 'http://b.internal/',
  [`${NGINX_PREFIX}limit-rps`]: '10',
  [`${NGINX_PREFIX}backend-protocol`]: 'HTTPS',
};

function model(): Model {
  const m = new Model();
  m.setIngressClass(normalizeIngressClass(portico()));
  m.setService(normalizeService(svc('web', [{ port: 80 }])));
  m.setGlobalConfig({ ...m.globalConfig(), ...SNIPPETS_ALLOWED });
  return m;
}

test('every annotation × every payload class: nothing reaches nginx.conf, each refused with a Warning naming the annotation (or kept as inert data)', () => {
  const rt = runtimeDir();
  const names = Object.keys(CATALOGUE).sort();
  const refused: string[] = [];
  const accepted: string[] = [];
  for (const [cls, payload] of Object.entries(PAYLOADS)) {
    // One Ingress per annotation, all in one translation: the combined nginx.conf must also pass nginx -t.
    const m = model();
    names.forEach((n, i) => {
      const annotations = { ...BASE, [`${NGINX_PREFIX}${n}`]: payload };
      const r = normalizeIngress(ing(`i${i}`, { rules: [rule(`h${i}.example.com`, [{ path: '/', backend: svcRef('web', 80) }])] }, { annotations }), () => undefined, () => undefined);
      assert.ok(r.ok, `${n}/${cls}: the Ingress itself is still served`);
      m.setIngress(r.ingress);
    });
    const out = translate(m.snapshot(), OPTS);
    const conf = renderNginxConf(out.config.structure, rt, structureChecksum(out.config.structure));
    assert.ok(!conf.includes(MARK), `${cls}: the marker reached nginx.conf:\n${conf.split('\n').filter((l) => l.includes(MARK)).join('\n')}`);
    writeTrustedCas(out.config.structure, rt);
    nginxTest(rt, conf);
    names.forEach((n, i) => {
      const ref = `Ingress/default/i${i}`;
      const warned = out.events.some((e) => e.ref === ref && e.type === 'Warning' && e.message.includes(n));
      if (warned) refused.push(`${n}/${cls}`);
      else {
        assert.ok(ACCEPTED_AS_DATA[n]?.classes.includes(cls), `${n} accepted the ${cls} payload ${JSON.stringify(payload)} without a Warning`);
        accepted.push(`${n}/${cls}`);
      }
    });
  }
  console.log(`[injection] annotations: ${names.length} × ${Object.keys(PAYLOADS).length} payload classes = ${refused.length + accepted.length} cases; ${refused.length} refused with a Warning, ${accepted.length} kept as inert data; 0 reached nginx.conf`);
});

test('every ConfigMap key × every payload class: refused with an InvalidConfiguration message naming the key, nothing reaches nginx.conf', () => {
  const rt = runtimeDir();
  let cases = 0;
  const accepted: string[] = [];
  for (const [cls, payload] of Object.entries(PAYLOADS)) {
    for (const key of Object.keys(CONFIG_KEYS)) {
      cases++;
      // The other global-auth-* keys only matter with a global-auth-url (of an existing Service).
      const data: Record<string, string> = key.startsWith('global-auth-') && key !== 'global-auth-url' ? { 'global-auth-url': 'http://auth.default.svc.cluster.local/check' } : {};
      const r = parseGlobalConfig({ ...data, [key]: payload }, defaultGlobalConfig());
      const m = model();
      m.setService(normalizeService(svc('auth', [{ port: 80 }])));
      m.setGlobalConfig({ ...r.values, ...SNIPPETS_ALLOWED });
      const r0 = normalizeIngress(ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] }), () => undefined, () => undefined);
      assert.ok(r0.ok);
      m.setIngress(r0.ingress);
      const out = translate(m.snapshot(), OPTS);
      const conf = renderNginxConf(out.config.structure, rt, structureChecksum(out.config.structure));
      const marked = conf.split('\n').filter((l) => l.includes(MARK));
      if (LOG_FORMAT_KEYS.includes(key) && LOG_FORMAT_TEXT.includes(cls)) {
        // "#", braces, double quotes (and so "content_by_lua_block { ... }" as words) are characters of a log format (JSON formats need them): the text stays inside
        // the single-quoted format string (no comment, no block, no directive), and nginx -t parses it as such.
        // log-format-stream is rendered only with TCP/UDP services: then nothing of it is in this file.
        assert.ok(marked.every((l) => new RegExp(`^\\s*log_format \\w+ '[^']*${payload.replace(/[{}()[\]\\^$.|?*+]/g, '\\$&')}[^']*';$`).test(l)), marked.join('\n'));
        if (key === 'log-format-upstream') assert.equal(marked.length, 1, `${key}/${cls}`);
        nginxTest(rt, conf);
        continue;
      }
      assert.deepEqual(marked, [], `${key}/${cls}: the marker reached nginx.conf`);
      if (r.errors.some((e) => e.key === key)) continue;
      // annotation-value-word-blocklist holds exactly such text (the words a cluster bans from annotations: "{",
      // "_by_lua", "load_module"...) and is only ever compared with annotation values, never rendered: kept as words.
      if (key === 'annotation-value-word-blocklist') {
        assert.ok(r.values.annotationValueWordBlocklist.every((w) => payload.includes(w)), `${key}/${cls}: kept as words`);
        accepted.push(`${key}/${cls}`);
        continue;
      }
      // Accepted as text the translation judges later (global-auth-*: an invalid one fails the Ingresses closed).
      const judged = out.events.some((e) => e.type === 'Warning' && (e.message.includes(key) || e.message.includes('global external authentication')));
      assert.ok(judged, `${key} accepted the ${cls} payload ${JSON.stringify(payload)} with no message`);
      accepted.push(`${key}/${cls}`);
    }
  }
  console.log(`[injection] ConfigMap: ${Object.keys(CONFIG_KEYS).length} keys × ${Object.keys(PAYLOADS).length} = ${cases} cases; ${cases - accepted.length} refused by the key's schema, ${accepted.length} refused later by the translation; 0 reached nginx.conf`);
});

test('Ingress paths (every pathType, with and without use-regex) and hosts × every payload class: refused with a Warning, never in nginx.conf', () => {
  const rt = runtimeDir();
  for (const [cls, payload] of Object.entries(PAYLOADS)) {
    const m = model();
    const cases: { name: string; obj: ReturnType<typeof ing> }[] = [];
    for (const pathType of ['Prefix', 'Exact', 'ImplementationSpecific'] as const) {
      for (const regex of [false, true]) {
        const name = `p-${pathType.toLowerCase()}-${regex}`;
        cases.push({ name, obj: ing(name, { rules: [{ host: `${name}.example.com`, http: { paths: [{ path: `/ok`, pathType, backend: svcRef('web', 80) }, { path: `/${payload}`, pathType, backend: svcRef('web', 80) }] } }] }, regex ? { annotations: { [`${NGINX_PREFIX}use-regex`]: 'true' } } : {}) });
      }
    }
    cases.push({ name: 'host', obj: ing('host', { rules: [rule('ok.example.com', [{ path: '/', backend: svcRef('web', 80) }]), rule(payload, [{ path: '/', backend: svcRef('web', 80) }])], tls: [{ hosts: [payload], secretName: 'x' }] }) });
    for (const c of cases) {
      const r = normalizeIngress(c.obj, () => undefined, () => undefined);
      assert.ok(r.ok, `${c.name}/${cls}`);
      m.setIngress(r.ingress);
    }
    const out = translate(m.snapshot(), OPTS);
    const conf = renderNginxConf(out.config.structure, rt, structureChecksum(out.config.structure));
    assert.ok(!conf.includes(MARK), `${cls}: marker in nginx.conf`);
    nginxTest(rt, conf);
    const data = JSON.stringify(out.config.data.routes);
    for (const c of cases) {
      assert.ok(out.events.some((e) => e.ref === `Ingress/default/${c.name}` && e.type === 'Warning' && e.reason === 'InvalidConfiguration'), `${c.name}/${cls}: no Warning`);
    }
    assert.ok(!data.includes(MARK), `${cls}: a refused path or host still reached the route data`);
  }
});
