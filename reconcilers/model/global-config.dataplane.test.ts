// The ConfigMap keys of the data plane's shared memory and trusted proxies: lua-shared-dicts, proxy-real-ip-cidr.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultGlobalConfig, luaSharedDictsSchema, parseGlobalConfig, realIpCidrSchema } from './global-config.ts';

test('lua-shared-dicts: ingress-nginx format (MB by default, k/m suffixes), its names and Portico\'s, bounded', () => {
  assert.deepEqual(defaultGlobalConfig().luaSharedDicts, { dataKb: 131072, certsKb: 32768 });
  assert.deepEqual(luaSharedDictsSchema.parse('configuration_data: 256, certificate_data: 64'), { dataKb: 262144, certsKb: 65536 });
  assert.deepEqual(luaSharedDictsSchema.parse('certificate_data:2048k'), { dataKb: 131072, certsKb: 2048 });
  assert.deepEqual(luaSharedDictsSchema.parse('portico_data: 1m, portico_certs: 1024M'), { dataKb: 1024, certsKb: 1048576 });
  assert.deepEqual(luaSharedDictsSchema.parse(''), { dataKb: 131072, certsKb: 32768 });
  for (const bad of ['configuration_data: 0', 'configuration_data: 2000', 'configuration_data: 512k', 'balancer_ewma: 10', 'configuration_data 10', 'configuration_data: 10g', 'configuration_data: -1']) {
    assert.equal(luaSharedDictsSchema.safeParse(bad).success, false, bad);
  }
  const r = parseGlobalConfig({ 'lua-shared-dicts': 'balancer_ewma: 10' }, defaultGlobalConfig());
  assert.equal(r.errors.length, 1);
  assert.match(r.errors[0]?.message ?? '', /unknown shared dict "balancer_ewma"/);
  assert.deepEqual(r.values.luaSharedDicts, { dataKb: 131072, certsKb: 32768 }, 'a bad value keeps the previous one');
});

test('proxy-real-ip-cidr: IPv4/IPv6 addresses and CIDRs; default every IPv4 peer (ingress-nginx\'s 0.0.0.0/0); empty trusts none; junk refused', () => {
  assert.deepEqual(defaultGlobalConfig().proxyRealIpCidr, ['0.0.0.0/0']);
  assert.deepEqual(realIpCidrSchema.parse(''), []);
  assert.deepEqual(realIpCidrSchema.parse('192.0.2.0/24, 2001:db8::/32,198.51.100.7'), ['192.0.2.0/24', '2001:db8::/32', '198.51.100.7']);
  for (const bad of ['10.0.0.0/33', '::/129', 'all', '10.0.0.0/8; include x', '10.0.0/8', 'example.com']) {
    assert.equal(realIpCidrSchema.safeParse(bad).success, false, bad);
  }
  assert.equal(realIpCidrSchema.safeParse(Array.from({ length: 65 }, (_, i) => `10.0.${i}.0/24`).join(',')).success, false);
});
