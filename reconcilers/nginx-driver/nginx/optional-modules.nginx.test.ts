// brotli and GeoIP2 inside a real nginx (Debian's, with libnginx-mod-http-brotli-filter and libnginx-mod-http-geoip2):
// the configuration comes from the pure translation and a ConfigMap with enable-brotli and use-geoip2, the MaxMind
// databases are written by the test (mmdb.test-helpers.ts: a City and an ASN database for 127.1.2.0/24), the
// backend answers in this file's network namespace (testnet.test-helpers.ts, subnet 231). Requests from an address
// of the databases (a client bound to 127.1.2.3; all of 127/8 is loopback) get its values in the access log, others
// none; a client accepting br gets the backend's answer brotli-compressed (decoded with node:zlib), others not.
// Ports 32960-32963 belong to this file: nginx 32960-32962, the backend 32963.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { defaultGlobalConfig, parseGlobalConfig } from '../../model/global-config.ts';
import { translate } from '../../translate/translate.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { until } from '../../../e2e/harness/http.ts';
import { buildMmdb } from './mmdb.test-helpers.ts';
import { TestNet } from './testnet.test-helpers.ts';
import { capturingLogger, liveNginx, startLive, stopLive } from './live.test-helpers.ts';
import type { NginxProcess } from './process.ts';
import type { DynamicClient } from './dynamic.ts';

const LISTEN = { httpPort: 32960, httpsPort: 32961, statusPort: 32962, address: '127.0.0.1' };
const BACKEND_PORT = 32963;
const net = new TestNet(231);
const { logger } = capturingLogger();
const FORMAT = '$remote_addr|$geoip2_city_country_code|$geoip2_city|$geoip2_region_name|$geoip2_latitude|$geoip2_time_zone|$geoip2_asn|$geoip2_org|$geoip2_country_code';

const geoDir = mkdtempSync(path.join(tmpdir(), 'portico-geoip-live-'));
writeFileSync(path.join(geoDir, 'GeoLite2-City.mmdb'), buildMmdb('GeoLite2-City', {
  '127.1.2.0/24': {
    city: { geoname_id: 2643743, names: { en: 'London', de: 'London' } },
    country: { geoname_id: 2635167, iso_code: 'GB', names: { en: 'United Kingdom' } },
    continent: { code: 'EU', names: { en: 'Europe' } },
    location: { latitude: { double: 51.5142 }, longitude: { double: -0.0931 }, time_zone: 'Europe/London' },
    subdivisions: [{ iso_code: 'ENG', names: { en: 'England' } }],
  },
  '127.9.0.0/16': { country: { iso_code: 'NZ' } },
}));
writeFileSync(path.join(geoDir, 'GeoLite2-ASN.mmdb'), buildMmdb('GeoLite2-ASN', {
  '127.1.2.0/24': { autonomous_system_number: 64500, autonomous_system_organization: 'Example Net' },
}));

let nginx: NginxProcess;
let dynamic: DynamicClient;

/** A request from `from` (a loopback address) with `headers`: status, headers and the raw body. */
function request(from: string, p: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: LISTEN.httpPort, localAddress: from, path: p, headers: { host: 'geo.example.com', ...headers }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

let seen = 0;
/** The access log's next line, once nginx has written it (lines to a file are buffered up to a second). */
async function nextLine(): Promise<string> {
  const line = await until('the next access-log line', () => {
    let text = '';
    try {
      text = readFileSync(nginx.runtime.accessLog, 'utf8');
    } catch {
      return false;
    }
    return text.split('\n').filter(Boolean)[seen] ?? false;
  });
  seen += 1;
  return line;
}

before(async () => {
  net.up();
  await net.start('web', BACKEND_PORT, 'echo');
  const cfg = parseGlobalConfig({ 'enable-brotli': 'true', 'use-gzip': 'true', 'gzip-types': 'application/json', 'use-geoip2': 'true', 'geoip2-database-directory': geoDir, 'log-format-upstream': FORMAT }, defaultGlobalConfig());
  assert.deepEqual(cfg.errors, []);
  const m = modelOf({
    services: [svc('web', [{ port: 80, targetPort: BACKEND_PORT }])],
    slices: [slice('web-1', 'web', [{ port: BACKEND_PORT }], [{ ip: net.ip }])],
    ingresses: [ing('geo', { rules: [rule('geo.example.com', [{ path: '/', backend: svcRef('web', 80) }])] })],
  });
  m.setGlobalConfig(cfg.values);
  ({ nginx, dynamic } = liveNginx('portico-optional-modules-', logger));
  await startLive(nginx, dynamic, translate(m.snapshot(), { ...OPTS, listen: LISTEN }).config);
});
after(() => stopLive(nginx, dynamic, net));

test('Accept-Encoding: br gets the answer brotli-compressed (also when gzip is accepted too); gzip only: gzip; neither: as the backend sent it', async () => {
  const br = await request('127.0.0.1', '/compress/me?x=1', { 'accept-encoding': 'br' });
  assert.equal(br.status, 200);
  assert.equal(br.headers['content-encoding'], 'br');
  const decoded = JSON.parse(brotliDecompressSync(br.body).toString('utf8')) as { url: string; headers: Record<string, string> };
  assert.equal(decoded.url, '/compress/me?x=1');
  assert.equal(decoded.headers['accept-encoding'], 'br', 'the backend saw the client\'s header');
  assert.ok(br.body.length < Buffer.byteLength(JSON.stringify(decoded)), 'compressed is smaller');
  await nextLine();

  // With use-gzip on too: a client accepting both gets brotli, one accepting gzip only gets gzip.
  const both = await request('127.0.0.1', '/compress/both', { 'accept-encoding': 'gzip, br' });
  assert.equal(both.headers['content-encoding'], 'br');
  assert.equal((JSON.parse(brotliDecompressSync(both.body).toString('utf8')) as { url: string }).url, '/compress/both');
  await nextLine();
  const gz = await request('127.0.0.1', '/compress/gz', { 'accept-encoding': 'gzip' });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.equal((JSON.parse(gunzipSync(gz.body).toString('utf8')) as { url: string }).url, '/compress/gz');
  await nextLine();

  const plain = await request('127.0.0.1', '/compress/me?x=1');
  assert.equal(plain.status, 200);
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.equal((JSON.parse(plain.body.toString('utf8')) as { url: string }).url, '/compress/me?x=1');
  await nextLine();
});

test('the $geoip2_* variables: an address in the databases gets its values, others empty ones', async () => {
  const inDb = await request('127.1.2.3', '/where');
  assert.equal(inDb.status, 200);
  const [addr, countryCode, city, region, latitude, timeZone, asn, org, country] = (await nextLine()).split('|');
  assert.equal(addr, '127.1.2.3');
  assert.equal(countryCode, 'GB');
  assert.equal(city, 'London');
  assert.equal(region, 'England');
  assert.match(latitude ?? '', /^51\.514/);
  assert.equal(timeZone, 'Europe/London');
  assert.equal(asn, '64500');
  assert.equal(org, 'Example Net');
  assert.equal(country, '', 'no Country database: defined empty');

  // A lookup that finds nothing leaves its variable "not found", which nginx logs as "-" (as in ingress-nginx); a
  // variable no database defines (the Country database's) is the empty string.
  const partly = await request('127.9.8.7', '/where');
  assert.equal(partly.status, 200);
  assert.equal(await nextLine(), '127.9.8.7|NZ|-|-|-|-|-|-|', 'only what its record holds');

  const outside = await request('127.0.0.1', '/where');
  assert.equal(outside.status, 200);
  assert.equal(await nextLine(), '127.0.0.1|-|-|-|-|-|-|-|');
});
