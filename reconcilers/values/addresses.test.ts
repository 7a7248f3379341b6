import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addressKey, forbiddenAddressReason, parseIp } from './addresses.ts';

test('forbidden: every class of address no tenant may reach, in every spelling', () => {
  const cases: [string, RegExp][] = [
    // loopback
    ['127.0.0.1', /loopback.*127\.0\.0\.0\/8/],
    ['127.255.255.254', /loopback/],
    ['127.0.0.53', /loopback/],
    ['::1', /loopback address \(::1\)/],
    ['0:0:0:0:0:0:0:1', /loopback address \(::1\)/],
    ['0000:0000:0000:0000:0000:0000:0000:0001', /loopback address \(::1\)/],
    // unspecified / this network
    ['0.0.0.0', /unspecified/],
    ['0.1.2.3', /unspecified/],
    ['::', /unspecified address \(::\)/],
    ['0:0::0', /unspecified address \(::\)/],
    // link-local (cloud metadata)
    ['169.254.169.254', /link-local/],
    ['169.254.0.1', /link-local/],
    ['fe80::1', /link-local address \(fe80::\/10\)/],
    ['FEBF:ffff::1', /link-local/],
    ['fd00:ec2::254', /AWS's IPv6 metadata address/],
    // metadata and host-agent addresses outside link-local
    ['100.100.100.200', /Alibaba Cloud's metadata address/],
    ['::ffff:100.100.100.200', /IPv4-mapped form of Alibaba Cloud's metadata address/],
    ['64:ff9b::6464:64c8', /NAT64 form of Alibaba Cloud's metadata address/],
    ['168.63.129.16', /Azure's wireserver/],
    ['::ffff:a83f:8110', /IPv4-mapped form of Azure's wireserver/],
    // multicast, broadcast, reserved
    ['224.0.0.1', /multicast/],
    ['239.255.255.250', /multicast/],
    ['ff02::1', /multicast address \(ff00::\/8\)/],
    ['255.255.255.255', /broadcast or reserved/],
    ['240.0.0.1', /broadcast or reserved/],
    // IPv4 inside IPv6
    ['::ffff:127.0.0.1', /IPv4-mapped form of a loopback/],
    ['::FFFF:7f00:1', /IPv4-mapped form of a loopback/],
    ['0:0:0:0:0:ffff:7f00:0001', /IPv4-mapped form of a loopback/],
    ['::ffff:169.254.169.254', /IPv4-mapped form of a link-local/],
    ['::ffff:0.0.0.0', /IPv4-mapped form of an unspecified/],
    ['::127.0.0.1', /IPv4-compatible form of a loopback/],
    ['::ffff:0:127.0.0.1', /IPv4-translated form of a loopback/],
    ['64:ff9b::127.0.0.1', /NAT64 form of a loopback/],
    ['64:ff9b::a9fe:a9fe', /NAT64 form of a link-local/],
    // anything that is not a plain, canonical IP address
    ['localhost', /not a plain IP address/],
    ['127.1', /not a plain IP address/],
    ['0127.0.0.1', /not a plain IP address/],
    ['0x7f.0.0.1', /not a plain IP address/],
    ['2130706433', /not a plain IP address/],
    ['127.0.0.1.', /not a plain IP address/],
    ['256.0.0.1', /not a plain IP address/],
    ['fe80::1%eth0', /not a plain IP address/],
    ['[::1]', /not a plain IP address/],
    ['1::2:3:4:5:6:7:8', /not a plain IP address/],
    ['1:2:3:4:5:6:7', /not a plain IP address/],
    ['::1::', /not a plain IP address/],
    ['1.2.3.4::', /not a plain IP address/],
    ['', /not a plain IP address/],
  ];
  for (const [a, why] of cases) assert.match(forbiddenAddressReason(a) ?? 'ALLOWED', why, a);
});

test('allowed: ordinary pod, node and external addresses', () => {
  for (const a of ['100.100.100.201', '100.100.0.200', '168.63.129.17', '168.63.1.16', '10.0.0.1', '198.18.0.5', '192.0.2.10', '172.16.3.4', '100.64.0.1', '8.8.8.8', '2001:db8::1', 'fd12:3456::1', '::ffff:10.0.0.1', '64:ff9b::a00:1', '1:2:3:4:5:6:7:8', '::10.0.0.1']) {
    assert.equal(forbiddenAddressReason(a), null, a);
  }
});

test("Portico's own listener addresses are forbidden whatever the spelling", () => {
  const own = new Set(['198.18.0.7', '2001:db8::7']);
  for (const a of ['198.18.0.7', '::ffff:198.18.0.7', '::ffff:c612:7', '2001:DB8:0:0:0:0:0:7', '2001:db8::0:7']) {
    assert.equal(forbiddenAddressReason(a, own), "one of Portico's own listener addresses", a);
  }
  assert.equal(forbiddenAddressReason('198.18.0.8', own), null);
  assert.equal(forbiddenAddressReason('198.18.0.7', new Set(['not-an-ip'])), null);
});

test('parsing: one key per address; strict forms only', () => {
  assert.equal(addressKey('10.0.0.5'), addressKey('::ffff:10.0.0.5'));
  assert.equal(addressKey('2001:db8::1'), addressKey('2001:0DB8:0000::0001'));
  assert.notEqual(addressKey('10.0.0.5'), addressKey('10.0.0.6'));
  assert.equal(parseIp('1.2.3'), null);
  assert.equal(parseIp('01.2.3.4'), null);
  assert.equal(parseIp('12345::'), null);
  assert.equal(parseIp(':::'), null);
  assert.deepEqual([...(parseIp('::1.2.3.4') ?? [])].slice(12), [1, 2, 3, 4]);
});
