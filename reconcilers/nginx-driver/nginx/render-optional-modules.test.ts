// brotli and GeoIP2 in nginx.conf (optional-modules.ts): load_module only when asked for and installed, ingress-nginx's
// directives and variables, nginx -t with Debian's modules and databases the test writes (mmdb.test-helpers.ts), and
// what happens without the module or the databases: left out and reported, and nginx -t still passes — also with a
// log format naming $geoip2_* variables.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Structure } from '../../config/types.ts';
import { DEFAULT_NGINX_TUNING } from '../../config/nginx-tuning.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../../model/global-config.ts';
import { OPTS, ing, modelOf, rule, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { translate } from '../../translate/translate.ts';
import { GEOIP2_VARIABLES, isKnownVariable } from '../../values/nginx-variables.ts';
import { UnsafeValueError } from './escape.ts';
import { buildMmdb } from './mmdb.test-helpers.ts';
import { nginxTest, runtimeDir } from './nginx-t.test-helpers.ts';
import { EDITION_VARIABLES, GEOIP2_EDITIONS, OPTIONAL_MODULE_FILES, geoip2Lookup, geoip2Variable, mmdbProblem, moduleProblemReporter, optionalModules } from './optional-modules.ts';
import { renderNginxConf } from './render.ts';

function structureFrom(data: Record<string, string>): Structure {
  const r = parseGlobalConfig(data, defaultGlobalConfig());
  assert.deepEqual(r.errors, []);
  const m = modelOf({ services: [svc('web', [{ port: 80 }])], ingresses: [ing('a', { rules: [rule('a.example.com', [{ path: '/', backend: svcRef('web', 80) }])] })] });
  m.setGlobalConfig(r.values);
  return translate(m.snapshot(), OPTS).config.structure;
}

const rt = runtimeDir();
const LOG = '$remote_addr $geoip2_city_country_code $geoip2_city $geoip2_asn $geoip2_org $geoip2_is_anonymous';

function geoDir(files: string[]): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-geoip-'));
  for (const f of files) writeFileSync(path.join(dir, f), buildMmdb(f.replace('.mmdb', ''), { '192.0.2.0/24': { city: { names: { en: 'Testville' } }, autonomous_system_number: 64500 } }));
  return dir;
}

test('defaults: no module loaded, no brotli, every $geoip2_* variable defined empty; nginx -t passes with a format naming them', () => {
  const conf = renderNginxConf(structureFrom({ 'log-format-upstream': LOG }), rt, 'c');
  assert.doesNotMatch(conf, /brotli|load_module[^;]*geoip2|geoip2 "/);
  for (const v of GEOIP2_VARIABLES) assert.ok(conf.includes(`map "" $${v} { default ""; }`), v);
  nginxTest(rt, conf, { withOutput: true });
});

test('enable-brotli: the module is loaded and the directives carry the keys\' values (ingress-nginx\'s defaults, then others)', () => {
  const conf = renderNginxConf(structureFrom({ 'enable-brotli': 'true' }), rt, 'c');
  assert.ok(conf.includes(`load_module "${OPTIONAL_MODULE_FILES.brotli}";`));
  assert.match(conf, /\n  brotli on;\n  brotli_comp_level 4;\n  brotli_min_length 20;\n  brotli_types application\/xml\+rss application\/atom\+xml [^;]* text\/x-component;\n/);
  nginxTest(rt, conf, { withOutput: true });
  const other = renderNginxConf(structureFrom({ 'enable-brotli': 'true', 'brotli-level': '11', 'brotli-min-length': '0', 'brotli-types': '*' }), rt, 'c');
  assert.match(other, /brotli_comp_level 11;\n  brotli_min_length 0;\n  brotli_types \*;/);
  nginxTest(rt, other, { withOutput: true });
  assert.equal(DEFAULT_NGINX_TUNING.enableBrotli, false, 'off by default, as in ingress-nginx');
});

test('enable-brotli or use-geoip2 without the module: no module to load, the problem named, the variables empty', () => {
  const missing = { ...OPTIONAL_MODULE_FILES, brotli: '/nonexistent/ngx_http_brotli_filter_module.so' };
  const m = optionalModules({ ...DEFAULT_NGINX_TUNING, enableBrotli: true }, missing);
  assert.equal(m.brotliModule, null);
  assert.equal(m.problems.length, 1);
  assert.equal(m.problems[0]?.reason, 'OptionalModuleMissing');
  assert.match(m.problems[0]?.message ?? '', /libnginx-mod-http-brotli-filter.*serving without brotli/);
  assert.deepEqual(optionalModules({ ...DEFAULT_NGINX_TUNING, enableBrotli: true }).problems, [], 'installed here');
  const g = optionalModules({ ...DEFAULT_NGINX_TUNING, useGeoip2: true, geoip2DatabaseDirectory: geoDir(['GeoLite2-City.mmdb']) }, { ...OPTIONAL_MODULE_FILES, geoip2: '/nonexistent/geoip2.so' });
  assert.equal(g.geoip2, null);
  assert.match(g.problems[0]?.message ?? '', /libnginx-mod-http-geoip2/);
  assert.deepEqual(g.geoip2Empty, [...GEOIP2_VARIABLES]);
});

test('use-geoip2: one geoip2 block per database present, ingress-nginx\'s variables, auto_reload; nginx -t with the real module', () => {
  const dir = geoDir(['GeoLite2-City.mmdb', 'GeoLite2-ASN.mmdb']);
  const conf = renderNginxConf(structureFrom({ 'use-geoip2': 'true', 'geoip2-database-directory': dir, 'geoip2-autoreload-in-minutes': '30', 'log-format-upstream': LOG }), rt, 'c');
  assert.ok(conf.includes(`load_module "${OPTIONAL_MODULE_FILES.geoip2}";`));
  assert.ok(conf.includes(`geoip2 "${dir}/GeoLite2-City.mmdb" {\n    auto_reload 30m;\n    $geoip2_city_country_code source=$remote_addr country iso_code;\n`), conf);
  assert.ok(conf.includes('    $geoip2_region_name source=$remote_addr subdivisions 0 names en;\n'));
  assert.ok(conf.includes(`geoip2 "${dir}/GeoLite2-ASN.mmdb" {\n    auto_reload 30m;\n    $geoip2_asn source=$remote_addr autonomous_system_number;\n    $geoip2_org source=$remote_addr autonomous_system_organization;\n  }`));
  assert.ok(!conf.includes('map "" $geoip2_city '), 'defined by the database, not empty');
  assert.ok(conf.includes('map "" $geoip2_country_code { default ""; }'), 'no Country database: empty');
  nginxTest(rt, conf, { withOutput: true });
  const noReload = renderNginxConf(structureFrom({ 'use-geoip2': 'true', 'geoip2-database-directory': dir }), rt, 'c');
  assert.doesNotMatch(noReload, /auto_reload/);
});

test('use-geoip2: a commercial edition wins over GeoLite2\'s for the same variables; GeoIP2-ISP\'s $geoip2_asn over the ASN database\'s', () => {
  const dir = geoDir(['GeoLite2-City.mmdb', 'GeoIP2-City.mmdb', 'GeoIP2-ISP.mmdb', 'GeoLite2-ASN.mmdb']);
  const m = optionalModules({ ...DEFAULT_NGINX_TUNING, useGeoip2: true, geoip2DatabaseDirectory: dir });
  assert.deepEqual(m.geoip2?.databases.map((d) => [path.basename(d.file), d.lookups.map(([v]) => v)]), [
    ['GeoIP2-City.mmdb', GEOIP2_EDITIONS[0]?.lookups.map(([v]) => v)],
    ['GeoIP2-ISP.mmdb', ['geoip2_isp', 'geoip2_isp_org', 'geoip2_asn']],
    ['GeoLite2-ASN.mmdb', ['geoip2_org']],
  ]);
  assert.deepEqual(m.problems, []);
  nginxTest(rt, renderNginxConf(structureFrom({ 'use-geoip2': 'true', 'geoip2-database-directory': dir }), rt, 'c'), { withOutput: true });
});

test('use-geoip2 without usable databases: no module, the variables empty, the reason named, nginx -t passes', () => {
  const empty = geoDir([]);
  const none = optionalModules({ ...DEFAULT_NGINX_TUNING, useGeoip2: true, geoip2DatabaseDirectory: empty });
  assert.equal(none.geoip2, null);
  assert.deepEqual(none.problems.map((p) => p.reason), ['GeoIP2DatabaseMissing']);
  assert.match(none.problems[0]?.message ?? '', new RegExp(`${empty} holds no usable MaxMind database .*GeoLite2-City\\.mmdb.*empty`));
  const conf = renderNginxConf(structureFrom({ 'use-geoip2': 'true', 'geoip2-database-directory': empty, 'log-format-upstream': LOG }), rt, 'c');
  assert.doesNotMatch(conf, /load_module[^;]*geoip2|geoip2 "/);
  nginxTest(rt, conf, { withOutput: true });

  // A file that is not a database, and one nginx could not read: left out, each named; the good one is used.
  const dir = geoDir(['GeoLite2-ASN.mmdb']);
  writeFileSync(path.join(dir, 'GeoLite2-City.mmdb'), 'not a database');
  writeFileSync(path.join(dir, 'GeoLite2-Country.mmdb'), buildMmdb('GeoLite2-Country', {}));
  chmodSync(path.join(dir, 'GeoLite2-Country.mmdb'), 0o000);
  const some = optionalModules({ ...DEFAULT_NGINX_TUNING, useGeoip2: true, geoip2DatabaseDirectory: dir });
  assert.deepEqual(some.geoip2?.databases.map((d) => path.basename(d.file)), process.getuid?.() === 0 ? ['GeoLite2-Country.mmdb', 'GeoLite2-ASN.mmdb'] : ['GeoLite2-ASN.mmdb']);
  assert.match(some.problems[0]?.message ?? '', /GeoLite2-City\.mmdb: not a MaxMind DB file .*left out/);
  const bad = renderNginxConf(structureFrom({ 'use-geoip2': 'true', 'geoip2-database-directory': dir, 'log-format-upstream': LOG }), rt, 'c');
  assert.ok(!bad.includes('GeoLite2-City.mmdb'));
  nginxTest(rt, bad, { withOutput: true });
  assert.equal(mmdbProblem(path.join(dir, 'nothing.mmdb')), 'missing');
  assert.equal(mmdbProblem(dir), 'not a regular file');
});

test('the $geoip2_* variables: every edition\'s are the known ones log formats may name; the helpers emit only the table', () => {
  assert.deepEqual([...EDITION_VARIABLES].sort(), [...GEOIP2_VARIABLES].sort());
  for (const v of GEOIP2_VARIABLES) assert.ok(isKnownVariable(v), v);
  assert.equal(parseGlobalConfig({ 'log-format-upstream': LOG }, defaultGlobalConfig()).errors.length, 0);
  assert.equal(geoip2Lookup(['geoip2_city', 'city names en']), '$geoip2_city source=$remote_addr city names en');
  for (const bad of [['geoip2_city', 'city names de'], ['geoip2_x', 'city names en'], ['geoip2_city', 'city names en; include /etc/passwd'], 'geoip2_city', null]) {
    assert.throws(() => geoip2Lookup(bad), UnsafeValueError, JSON.stringify(bad));
  }
  assert.equal(geoip2Variable('geoip2_asn'), '$geoip2_asn');
  for (const bad of ['geoip2_asn;', 'remote_addr', '', 1]) assert.throws(() => geoip2Variable(bad), UnsafeValueError);
});

test('the modules are Debian packages both the test machine and the image install', () => {
  const root = path.resolve(import.meta.dirname, '../../..');
  const image = readFileSync(path.join(root, 'image/debian-packages'), 'utf8').split('\n').map((l) => l.replace(/#.*/, '').trim());
  const deps = readFileSync(path.join(root, 'e2e/setup/install-deps.sh'), 'utf8');
  for (const p of ['libnginx-mod-http-brotli-filter', 'libnginx-mod-http-geoip2']) {
    assert.ok(image.includes(p), `image/debian-packages lists ${p}`);
    assert.match(deps, new RegExp(`PKGS\\+=\\([^)]*\\b${p}\\b`), `install-deps.sh installs ${p}`);
  }
  for (const f of Object.values(OPTIONAL_MODULE_FILES)) assert.ok(existsSync(f), `${f} is installed here`);
});

test('the problems are reported once per change: again only after they were fixed and came back, or changed', () => {
  const seen: string[] = [];
  const files = { ...OPTIONAL_MODULE_FILES, brotli: '/nonexistent/brotli.so' };
  const report = moduleProblemReporter((p) => seen.push(`${p.reason}: ${p.message}`), files);
  const brotli = { ...DEFAULT_NGINX_TUNING, enableBrotli: true };
  report(DEFAULT_NGINX_TUNING);
  assert.deepEqual(seen, [], 'nothing asked for, nothing to say');
  report(brotli);
  report(brotli);
  assert.equal(seen.length, 1);
  assert.match(seen[0] ?? '', /^OptionalModuleMissing: enable-brotli/);
  const empty = geoDir([]);
  report({ ...brotli, useGeoip2: true, geoip2DatabaseDirectory: empty });
  assert.equal(seen.length, 3, 'a new set: both said');
  assert.match(seen[2] ?? '', /^GeoIP2DatabaseMissing: use-geoip2 is "true" but .* holds no usable MaxMind database/);
  report(DEFAULT_NGINX_TUNING);
  report(brotli);
  assert.equal(seen.length, 4, 'fixed, then back: said again');
});
