// log-format-upstream: every $variable is checked against the set nginx and Portico's templates define, because
// an unknown one fails `nginx -t` and blocks every reload. The known set itself is checked against the real nginx
// through the real templates.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ASSETS_DIR, renderNginxConf } from '../nginx-driver/nginx/render.ts';
import { runtimeDir } from '../nginx-driver/nginx/nginx-t.test-helpers.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../model/global-config.ts';
import { KNOWN_VARIABLES, logFormatProblem, PORTICO_VARIABLES, VARIABLE_PREFIXES } from './nginx-variables.ts';
import { structureChecksum } from '../translate/diff.ts';
import { translate } from '../translate/translate.ts';
import { OPTS, ing, modelOf, rule, svc, svcRef } from '../translate/fixtures.test-helpers.ts';

test('log format variables: known ones pass; dangling, ${...}, unknown and upper-case ones are named with their position', () => {
  assert.equal(logFormatProblem('$remote_addr - [$time_local] "$request" $status $portico_backend $http_user_agent $upstream_http_x_id'), null);
  assert.equal(logFormatProblem('no variables at all'), null);
  assert.equal(logFormatProblem('$status.$msec,$request_time'), null);
  // ingress-nginx's own variables are Portico's too.
  assert.equal(logFormatProblem('[$proxy_upstream_name] [$proxy_alternative_upstream_name] $req_id $namespace $ingress_name $service_name $service_port $location_path'), null);
  // The stream section has its own set.
  assert.equal(logFormatProblem('[$remote_addr] $protocol $session_time $upstream_addr', 'stream'), null);
  assert.match(logFormatProblem('$protocol $request_uri', 'stream') ?? '', /^at character 11: unknown variable \$request_uri of the stream section/);
  assert.match(logFormatProblem('$protocol', 'http') ?? '', /unknown variable \$protocol$/);
  const cases: [string, RegExp][] = [
    ['$status $', /^at character 9: dangling "\$"/],
    ['a $ b', /^at character 3: dangling "\$"/],
    ['$-x', /^at character 1: dangling "\$"/],
    ['x ${status}', /^at character 3: "\$\{\.\.\.\}" is not supported/],
    ['$status $nosuchvar', /^at character 9: unknown variable \$nosuchvar$/],
    ['$statusx', /unknown variable \$statusx/],
    ['$http_', /unknown variable \$http_/],
    ['$1', /unknown variable \$1/],
    ['$Status', /must be written in lower case/],
    ['$the_real_ip', /unknown variable \$the_real_ip \(an ingress-nginx variable: use \$portico_client_ip/],
    ['$constructor', /^at character 1: unknown variable \$constructor$/],
  ];
  for (const [f, why] of cases) assert.match(logFormatProblem(f) ?? '', why, f);
});

test('ConfigMap log-format-upstream: a bad variable keeps the previous format and is reported', () => {
  const prev = { ...defaultGlobalConfig(), logFormatUpstream: '$remote_addr $status' };
  for (const bad of ['$remote_addr $bogus', '$status $', '$status ${host}', '$the_real_ip']) {
    const r = parseGlobalConfig({ 'log-format-upstream': bad }, prev);
    assert.equal(r.values.logFormatUpstream, '$remote_addr $status', bad);
    assert.equal(r.errors.length, 1, bad);
    assert.match(r.errors[0]?.message ?? '', /^log-format-upstream=.*(unknown variable|dangling|not supported).*keeping "\$remote_addr \$status"$/, bad);
  }
  const ok = parseGlobalConfig({ 'log-format-upstream': '$remote_addr $portico_backend $cookie_session' }, prev);
  assert.equal(ok.values.logFormatUpstream, '$remote_addr $portico_backend $cookie_session');
  assert.deepEqual(ok.errors, []);
});

/** Defined only under some settings, so a global log format must not rely on them. */
// Defined only with some settings: use-forwarded-headers, use-proxy-protocol, --enable-ssl-passthrough, the ConfigMap's block-* filters.
const CONDITIONAL = new Set(['portico_loggable', 'portico_trusted_peer', 'portico_pp_port', 'portico_peer_addr', 'portico_block_cidr', 'portico_block_ua', 'portico_block_referer']);

test('every $portico_* variable the templates define is in the known set, and only those', () => {
  const dir = path.join(ASSETS_DIR, 'templates');
  const defined = new Set<string>();
  // The stream section's variables (TLS passthrough's SNI maps) are not the HTTP log format's.
  for (const f of readdirSync(dir).filter((x) => x !== 'stream.hbs')) {
    const src = readFileSync(path.join(dir, f), 'utf8');
    // map, geo, set, and the derivations of Portico's variables module (portico_hop defines two).
    const definitions = [
      /(?:\b(?:map|geo)\s+(?:"[^"]*"|\$[a-z0-9_]+)\s+|\bset\s+|\bportico_(?:coalesce|if|hop)\s+)\$(portico_[a-z0-9_]+)/g,
      /\bportico_hop\s+\$[a-z0-9_]+\s+\$(portico_[a-z0-9_]+)/g,
    ];
    for (const re of definitions) for (const m of src.matchAll(re)) if (!CONDITIONAL.has(m[1] as string)) defined.add(m[1] as string);
  }
  // Defined for every request by Portico's variables module itself (nginx-assets/modules/portico_vars).
  defined.add('portico_routed_natively');
  assert.deepEqual([...PORTICO_VARIABLES].sort(), [...defined].sort());
});

test('the known set is what the real nginx defines: a format using every variable passes nginx -t', () => {
  const everything = [...KNOWN_VARIABLES, ...VARIABLE_PREFIXES.map((p) => `${p}x_test`)].map((v) => `$${v}`).join(' ');
  assert.equal(logFormatProblem(everything), null);
  const cfg = parseGlobalConfig({ 'log-format-upstream': everything }, defaultGlobalConfig());
  assert.deepEqual(cfg.errors, []);
  const m = modelOf({ services: [svc('web', [{ port: 80 }])], ingresses: [ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] })] });
  m.setGlobalConfig(cfg.values);
  const s = translate(m.snapshot(), OPTS).config.structure;
  assert.equal(s.global.logFormatUpstream, everything);
  const rt = runtimeDir();
  const dir = rt.dir;
  try {
    const file = path.join(dir, 'nginx.conf');
    // Both ways the templates define the forwarded-header variables.
    for (const useForwardedHeaders of [false, true]) {
      const variant = { ...s, global: { ...s.global, useForwardedHeaders } };
      writeFileSync(file, renderNginxConf(variant, rt, structureChecksum(variant)));
      const r = spawnSync('nginx', ['-t', '-q', '-p', dir, '-c', file, '-e', 'stderr'], { encoding: 'utf8' });
      assert.equal(r.status, 0, `use-forwarded-headers=${useForwardedHeaders}: ${r.stderr}`);
    }
    // And the check is real: one unknown variable makes the same configuration fail.
    writeFileSync(file, renderNginxConf({ ...s, global: { ...s.global, logFormatUpstream: `${everything} $nosuchvar` } }, rt, 'x'));
    const bad = spawnSync('nginx', ['-t', '-q', '-p', dir, '-c', file, '-e', 'stderr'], { encoding: 'utf8' });
    assert.notEqual(bad.status, 0);
    assert.match(bad.stderr, /unknown "nosuchvar" variable/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
