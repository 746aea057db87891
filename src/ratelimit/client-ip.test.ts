import { describe, expect, it } from 'vitest';
import { clientKey, createAddressOf, createClientIp, normalizeIp, trustedProxyList } from './client-ip.js';

describe('createAddressOf without trusted proxies (the default, docs/reference/rate-limits.md)', () => {
  const clientIp = createAddressOf([]);
  it('answers the socket address and ignores X-Forwarded-For', () => {
    expect(clientIp('203.0.113.7', '198.51.100.1')).toBe('203.0.113.7');
    expect(clientIp('2001:db8::1', '198.51.100.1')).toBe('2001:db8::1');
  });
  it('unmaps IPv4-mapped IPv6 peers so one client has one key', () => {
    expect(clientIp('::ffff:127.0.0.1', undefined)).toBe('127.0.0.1');
  });
  it('is the default', () => {
    expect(createAddressOf()('10.0.0.1', '1.2.3.4')).toBe('10.0.0.1');
  });
});

describe('createAddressOf with trusted proxies', () => {
  const clientIp = createAddressOf(['10.0.0.0/8', '192.168.1.5', 'fd00::/8', '::1']);

  it('ignores X-Forwarded-For from an untrusted peer', () => {
    expect(clientIp('203.0.113.7', '1.1.1.1')).toBe('203.0.113.7');
    expect(clientIp('192.168.1.6', '1.1.1.1')).toBe('192.168.1.6');
  });

  it('takes the right-most address that is not a trusted proxy', () => {
    expect(clientIp('10.1.2.3', '198.51.100.9')).toBe('198.51.100.9');
    // The client forged "6.6.6.6"; the proxies appended the real peer and each other.
    expect(clientIp('10.1.2.3', '6.6.6.6, 198.51.100.9, 192.168.1.5, 10.9.9.9')).toBe('198.51.100.9');
    expect(clientIp('192.168.1.5', '6.6.6.6,198.51.100.9')).toBe('198.51.100.9');
  });

  it('answers the socket address when the header is absent or empty', () => {
    expect(clientIp('10.1.2.3', undefined)).toBe('10.1.2.3');
    expect(clientIp('10.1.2.3', '')).toBe('10.1.2.3');
  });

  it('handles IPv6 and IPv4-mapped peers and entries', () => {
    expect(clientIp('::1', '2001:DB8:0:0::1')).toBe('2001:db8::1');
    expect(clientIp('fd12::7', '2001:db8::1, fd00::1')).toBe('2001:db8::1');
    expect(clientIp('::ffff:10.0.0.2', '198.51.100.9')).toBe('198.51.100.9');
    expect(clientIp('10.0.0.2', '::ffff:198.51.100.9')).toBe('198.51.100.9');
    expect(clientIp('10.0.0.2', '::ffff:c633:6409')).toBe('198.51.100.9');
    // A trusted proxy written in mapped form is still recognised as trusted.
    expect(clientIp('10.0.0.2', '198.51.100.9, ::ffff:10.4.4.4')).toBe('198.51.100.9');
  });

  it('accepts entries with ports and brackets', () => {
    expect(clientIp('10.0.0.2', '198.51.100.9:4711')).toBe('198.51.100.9');
    expect(clientIp('10.0.0.2', '[2001:db8::5]:443')).toBe('2001:db8::5');
    expect(clientIp('10.0.0.2', '[2001:db8::6]')).toBe('2001:db8::6');
  });

  it('stops at an entry that is not an address and never believes what lies left of it', () => {
    expect(clientIp('10.0.0.2', '198.51.100.9, garbage')).toBe('10.0.0.2');
    expect(clientIp('10.0.0.2', '198.51.100.9, 10.0.0.3, not-an-ip')).toBe('10.0.0.2');
    expect(clientIp('10.0.0.2', '198.51.100.9, not-an-ip, 10.0.0.3')).toBe('10.0.0.3');
    expect(clientIp('10.0.0.2', '198.51.100.9, , 10.0.0.3')).toBe('10.0.0.3');
    expect(clientIp('10.0.0.2', '198.51.100.9:99999')).toBe('10.0.0.2');
    expect(clientIp('10.0.0.2', '[2001:db8::5]x')).toBe('10.0.0.2');
    expect(clientIp('10.0.0.2', 'fe80::1%eth0')).toBe('10.0.0.2');
  });

  it('answers the left-most hop when every hop is a trusted proxy', () => {
    expect(clientIp('10.0.0.2', '10.0.0.9, 10.0.0.8')).toBe('10.0.0.9');
  });

  it('keeps answering correctly past its bounded trust cache', () => {
    for (let i = 0; i < 10_000; i++) {
      const untrusted = `198.51.${(i >> 8) & 255}.${i & 255}`;
      const trustedHop = `10.${(i >> 8) & 255}.${i & 255}.1`;
      expect(clientIp(trustedHop, `6.6.6.6, ${untrusted}, ${trustedHop}`)).toBe(untrusted);
    }
    expect(clientIp('203.0.113.7', '1.1.1.1')).toBe('203.0.113.7');
  });

  it('examines only the right-most hops of a huge header', () => {
    const header = `${'10.0.0.1, '.repeat(5000)}10.0.0.1`;
    expect(clientIp('10.0.0.2', header)).toBe('10.0.0.1');
    const forged = `203.0.113.1, ${'10.0.0.1, '.repeat(100)}10.0.0.1`;
    expect(clientIp('10.0.0.2', forged)).toBe('10.0.0.1');
  });
});

describe('trustedProxyList', () => {
  it('parses IPv4, IPv6 and mapped addresses and CIDRs', () => {
    const list = trustedProxyList(['127.0.0.1', '172.16.0.0/12', '2001:db8::/32', '::ffff:192.0.2.1']);
    expect(list.check('127.0.0.1', 'ipv4')).toBe(true);
    expect(list.check('172.31.255.255', 'ipv4')).toBe(true);
    expect(list.check('172.32.0.0', 'ipv4')).toBe(false);
    expect(list.check('2001:db8:ffff::1', 'ipv6')).toBe(true);
    expect(list.check('2001:db9::1', 'ipv6')).toBe(false);
    expect(list.check('192.0.2.1', 'ipv4')).toBe(true);
  });

  it.each(['localhost', '10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/8/8', '1.2.3', '10.0.0.0/-1', ''])('rejects %j at start', (bad) => {
    expect(() => trustedProxyList([bad])).toThrow(/server.trustedProxies/);
  });
});

describe('normalizeIp', () => {
  it('canonicalises and rejects', () => {
    expect(normalizeIp('1.2.3.4')).toBe('1.2.3.4');
    expect(normalizeIp('2001:0DB8:0000::0001')).toBe('2001:db8::1');
    expect(normalizeIp('0:0:0:0:0:ffff:7f00:1')).toBe('127.0.0.1');
    expect(normalizeIp('01.2.3.4')).toBeNull();
    expect(normalizeIp('example.com')).toBeNull();
  });
});

describe('clientKey: IPv6 clients are keyed by their /64 (docs/reference/rate-limits.md)', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:db8:0:0:ffff:1:2:3', '2001:db8:0:0::/64'],
    ['2001:db8:aa:bb:cc::', '2001:db8:aa:bb::/64'],
    ['2001:db8:aa:bb::1', '2001:db8:aa:bb::/64'],
    ['::1', '0:0:0:0::/64'],
    ['::', '0:0:0:0::/64'],
    ['fe80::1:2:3:4', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.33', '64:ff9b:0:0::/64'],
  ])('%s → %s', (ip, key) => expect(clientKey(ip)).toBe(key));

  it('gives every address of one /64 one key, and neighbouring /64s different keys', () => {
    const key = createClientIp();
    expect(key('2001:db8:1:2::1', undefined)).toBe(key('2001:db8:1:2:ffff:ffff:ffff:ffff', undefined));
    expect(key('2001:db8:1:2::1', undefined)).not.toBe(key('2001:db8:1:3::1', undefined));
    expect(createClientIp(['10.0.0.0/8'])('10.0.0.2', '2001:db8:5:6::9')).toBe('2001:db8:5:6::/64');
  });
});
