import { describe, expect, it } from '@jest/globals';
import {
  assertPublicLiteral,
  isPublicAddress,
} from '../../activities/webhooks/endpoint-address.js';

describe('webhook receiver addresses', () => {
  it.each([
    // IPv4 special-purpose ranges.
    '0.0.0.0',
    '10.1.2.3',
    '100.64.0.1',
    '127.0.0.1',
    '127.255.255.254',
    '169.254.169.254',
    '172.16.0.1',
    '192.0.0.8',
    '192.0.2.1',
    '192.168.0.1',
    '198.18.0.1',
    '198.51.100.1',
    '203.0.113.1',
    '224.0.0.1',
    '240.0.0.1',
    '255.255.255.255',
    // IPv6 special-purpose ranges.
    '::',
    '::1',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    'ff02::1',
    '2001:db8::1',
    '100::1',
    // IPv6 forms that embed an IPv4 address.
    '::ffff:127.0.0.1',
    '::ffff:169.254.169.254',
    '::127.0.0.2',
    '::7f00:2',
    '64:ff9b::7f00:2',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b:1::a9fe:a9fe',
    '2002:7f00:2::',
    '2002:a9fe:a9fe::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    // Not addresses at all.
    'localhost',
    '',
  ])('%s is not a public address', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '::ffff:8.8.8.8',
    '2606:4700::1111',
    '2a00:1450::1',
  ])('%s is public', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it.each([
    'http://[::127.0.0.2]/h',
    'http://[64:ff9b::7f00:2]/h',
    'http://[2002:7f00:2::]/h',
    'http://[64:ff9b::a9fe:a9fe]/h',
    'http://2130706433/h',
    'http://0x7f.1/h',
    'http://[::ffff:7f00:1]/h',
  ])('refuses the literal %s before connecting', (url) => {
    expect(() => {
      assertPublicLiteral(new URL(url));
    }).toThrow(/loopback, private or link-local/);
  });
});
