// Debian's optional nginx modules that ConfigMap keys ask for, loaded (load_module) only then:
//   - brotli (enable-brotli): libnginx-mod-http-brotli-filter's ngx_http_brotli_filter_module.so. Without it nginx
//     serves without brotli (a missing module must not fail every reload) and the problem is reported.
//   - GeoIP2 (use-geoip2): libnginx-mod-http-geoip2's ngx_http_geoip2_module.so and MaxMind databases (.mmdb) in
//     geoip2-database-directory, under the file names MaxMind gives its editions. Each database present defines
//     ingress-nginx v1.15.1's variables for its edition (rootfs/etc/nginx/template/nginx.tmpl), looked up by
//     $remote_addr. nginx refuses to load a configuration naming a database it cannot open, so only the files that
//     are there, readable and carry MaxMind's metadata marker are named; a missing one is reported instead.
// Every $geoip2_* variable that no database defines is defined empty (a constant map), so log formats, headers and
// hash keys naming them load whatever is installed (values/nginx-variables.ts lists them as known; a unit test holds
// that list equal to the editions' variables here).
import { closeSync, constants, accessSync, openSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import type { NginxTuning } from '../../config/nginx-tuning.ts';
import { GEOIP2_VARIABLES } from '../../values/nginx-variables.ts';
import { UnsafeValueError } from './escape.ts';

/** Debian bookworm's module files. */
export const OPTIONAL_MODULE_FILES = {
  brotli: '/usr/lib/nginx/modules/ngx_http_brotli_filter_module.so',
  geoip2: '/usr/lib/nginx/modules/ngx_http_geoip2_module.so',
} as const;

type Lookup = readonly [variable: string, path: string];

const COUNTRY: readonly Lookup[] = [
  ['geoip2_country_code', 'country iso_code'], ['geoip2_country_name', 'country names en'], ['geoip2_country_geoname_id', 'country geoname_id'],
  ['geoip2_continent_code', 'continent code'], ['geoip2_continent_name', 'continent names en'], ['geoip2_continent_geoname_id', 'continent geoname_id'],
];
const CITY: readonly Lookup[] = [
  ['geoip2_city_country_code', 'country iso_code'], ['geoip2_city_country_name', 'country names en'], ['geoip2_city_country_geoname_id', 'country geoname_id'],
  ['geoip2_city', 'city names en'], ['geoip2_city_geoname_id', 'city geoname_id'], ['geoip2_postal_code', 'postal code'],
  ['geoip2_dma_code', 'location metro_code'], ['geoip2_latitude', 'location latitude'], ['geoip2_longitude', 'location longitude'],
  ['geoip2_time_zone', 'location time_zone'], ['geoip2_region_code', 'subdivisions 0 iso_code'], ['geoip2_region_name', 'subdivisions 0 names en'],
  ['geoip2_region_geoname_id', 'subdivisions 0 geoname_id'], ['geoip2_subregion_code', 'subdivisions 1 iso_code'],
  ['geoip2_subregion_name', 'subdivisions 1 names en'], ['geoip2_subregion_geoname_id', 'subdivisions 1 geoname_id'],
  ['geoip2_city_continent_code', 'continent code'], ['geoip2_city_continent_name', 'continent names en'],
];
const ASN: readonly Lookup[] = [['geoip2_asn', 'autonomous_system_number'], ['geoip2_org', 'autonomous_system_organization']];
const ISP: readonly Lookup[] = [['geoip2_isp', 'isp'], ['geoip2_isp_org', 'organization'], ['geoip2_asn', 'default=0 autonomous_system_number']];
const CONNECTION_TYPE: readonly Lookup[] = [['geoip2_connection_type', 'connection_type']];
const ANONYMOUS: readonly Lookup[] = [
  ['geoip2_is_anon', 'is_anonymous'], ['geoip2_is_anonymous', 'default=0 is_anonymous'], ['geoip2_is_anonymous_vpn', 'default=0 is_anonymous_vpn'],
  ['geoip2_is_hosting_provider', 'default=0 is_hosting_provider'], ['geoip2_is_public_proxy', 'default=0 is_public_proxy'],
  ['geoip2_is_tor_exit_node', 'default=0 is_tor_exit_node'],
];

/**
 * The editions Portico reads, as ingress-nginx renders them, in order of preference: a variable two present databases
 * define comes from the first (the commercial edition over GeoLite2's; GeoIP2-ISP's $geoip2_asn over the ASN databases').
 */
export const GEOIP2_EDITIONS: readonly { file: string; lookups: readonly Lookup[] }[] = [
  { file: 'GeoIP2-City.mmdb', lookups: CITY },
  { file: 'GeoLite2-City.mmdb', lookups: CITY },
  { file: 'GeoIP2-Country.mmdb', lookups: COUNTRY },
  { file: 'GeoLite2-Country.mmdb', lookups: COUNTRY },
  { file: 'GeoIP2-ISP.mmdb', lookups: ISP },
  { file: 'GeoIP2-ASN.mmdb', lookups: ASN },
  { file: 'GeoLite2-ASN.mmdb', lookups: ASN },
  { file: 'GeoIP2-Connection-Type.mmdb', lookups: CONNECTION_TYPE },
  { file: 'GeoIP2-Anonymous-IP.mmdb', lookups: ANONYMOUS },
];

/** Every $geoip2_* variable any edition defines (without "$"): the list log formats may name. */
export const EDITION_VARIABLES: readonly string[] = [...new Set(GEOIP2_EDITIONS.flatMap((e) => e.lookups.map(([v]) => v)))];

const LOOKUPS = new Set(GEOIP2_EDITIONS.flatMap((e) => e.lookups.map(([v, p]) => `${v} ${p}`)));

/** Template helper: one variable line of a geoip2 block, only exactly as the table above has it. */
export function geoip2Lookup(v: unknown): string {
  const l = v as Lookup | null;
  if (!Array.isArray(l) || l.length !== 2 || !LOOKUPS.has(`${l[0]} ${l[1]}`)) throw new UnsafeValueError(`not a GeoIP2 lookup of Portico's table: ${JSON.stringify(v).slice(0, 100)}`);
  return `$${l[0]} source=$remote_addr ${l[1]}`;
}

/** Template helper: "$name" of a $geoip2_* variable of the table. */
export function geoip2Variable(v: unknown): string {
  if (typeof v !== 'string' || !(GEOIP2_VARIABLES as readonly string[]).includes(v)) throw new UnsafeValueError(`not a GeoIP2 variable: ${JSON.stringify(v).slice(0, 100)}`);
  return `$${v}`;
}

/** The metadata marker every MaxMind DB file carries (within its last 128 KiB). */
const MMDB_MARKER = Buffer.from('\xab\xcd\xefMaxMind.com', 'latin1');

/** Null when `file` is a readable MaxMind DB file; else why not. */
export function mmdbProblem(file: string): string | null {
  let size: number;
  try {
    const st = statSync(file);
    if (!st.isFile()) return 'not a regular file';
    size = st.size;
    accessSync(file, constants.R_OK);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : `unreadable (${(e as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  const n = Math.min(size, 128 * 1024);
  const buf = Buffer.alloc(n);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buf, 0, n, size - n);
  } finally {
    closeSync(fd);
  }
  return buf.lastIndexOf(MMDB_MARKER) === -1 ? 'not a MaxMind DB file (no metadata marker)' : null;
}

export interface OptionalModules {
  /** The brotli filter module to load, or null (off, or not installed). */
  brotliModule: string | null;
  /** The GeoIP2 module to load and the databases it reads, or null. */
  geoip2: { module: string; databases: { file: string; lookups: readonly Lookup[] }[]; autoReloadMinutes: number } | null;
  /** The $geoip2_* variables no database defines: defined empty. */
  geoip2Empty: string[];
  /** What was asked for and cannot be had, one sentence each (reported, never a failing reload). */
  problems: { reason: 'OptionalModuleMissing' | 'GeoIP2DatabaseMissing'; message: string }[];
}

/** What the tuning asks for, as far as this machine has it. */
export function optionalModules(t: Pick<NginxTuning, 'enableBrotli' | 'useGeoip2' | 'geoip2AutoreloadInMinutes' | 'geoip2DatabaseDirectory'>, files: { brotli: string; geoip2: string } = OPTIONAL_MODULE_FILES): OptionalModules {
  const problems: OptionalModules['problems'] = [];
  let brotliModule: string | null = null;
  if (t.enableBrotli) {
    if (accessible(files.brotli)) brotliModule = files.brotli;
    else problems.push({ reason: 'OptionalModuleMissing', message: `enable-brotli is "true" but nginx's brotli module (${files.brotli}, Debian's libnginx-mod-http-brotli-filter) is not installed: serving without brotli` });
  }
  let geoip2: OptionalModules['geoip2'] = null;
  if (t.useGeoip2 && !accessible(files.geoip2)) {
    problems.push({ reason: 'OptionalModuleMissing', message: `use-geoip2 is "true" but nginx's GeoIP2 module (${files.geoip2}, Debian's libnginx-mod-http-geoip2) is not installed: the $geoip2_* variables are empty` });
  } else if (t.useGeoip2) {
    const defined = new Set<string>();
    const databases: NonNullable<OptionalModules['geoip2']>['databases'] = [];
    const missing: string[] = [];
    for (const e of GEOIP2_EDITIONS) {
      const file = path.join(t.geoip2DatabaseDirectory, e.file);
      const problem = mmdbProblem(file);
      if (problem) {
        if (problem !== 'missing') missing.push(`${e.file}: ${problem}`);
        continue;
      }
      const lookups = e.lookups.filter(([v]) => !defined.has(v));
      if (!lookups.length) continue;
      for (const [v] of lookups) defined.add(v);
      databases.push({ file, lookups });
    }
    for (const m of missing) problems.push({ reason: 'GeoIP2DatabaseMissing', message: `use-geoip2: ${path.join(t.geoip2DatabaseDirectory, m)}; left out` });
    if (databases.length) geoip2 = { module: files.geoip2, databases, autoReloadMinutes: t.geoip2AutoreloadInMinutes };
    else problems.push({ reason: 'GeoIP2DatabaseMissing', message: `use-geoip2 is "true" but ${t.geoip2DatabaseDirectory} holds no usable MaxMind database (${GEOIP2_EDITIONS.map((e) => e.file).join(', ')}): the $geoip2_* variables are empty` });
  }
  const defined = new Set(geoip2?.databases.flatMap((d) => d.lookups.map(([v]) => v)) ?? []);
  return { brotliModule, geoip2, geoip2Empty: GEOIP2_VARIABLES.filter((v) => !defined.has(v)), problems };
}

/**
 * A reporter of optionalModules' problems for each configuration nginx is given: each problem once, until the set of
 * problems changes (a rebuild with the same problems says nothing again; one that fixes them and a later one that
 * brings them back does).
 */
export function moduleProblemReporter(report: (p: OptionalModules['problems'][number]) => void, files: { brotli: string; geoip2: string } = OPTIONAL_MODULE_FILES): (t: Parameters<typeof optionalModules>[0]) => void {
  let last = '[]';
  return (t) => {
    const problems = optionalModules(t, files).problems;
    const key = JSON.stringify(problems);
    if (key === last) return;
    last = key;
    for (const p of problems) report(p);
  };
}

function accessible(file: string): boolean {
  try {
    accessSync(file, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}
