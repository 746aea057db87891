/**
 * Web Push endpoints name a URL the server will POST to: without a check, a client registers
 * `https://127.0.0.1/…` or `https://169.254.169.254/…` and the delivery worker probes the server's
 * own network (SSRF). An endpoint must be `https:` and its host must resolve only to public
 * addresses — not loopback, private, link-local (cloud metadata), carrier-grade NAT, unique-local,
 * multicast or unspecified — unless PUSH_WEB_ENDPOINT_HOSTS names it (docs/reference/push.md).
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const)
  blocked.addSubnet(net, bits, 'ipv6');

/** True for an address the worker must not be sent to. */
export function isPrivateAddress(address: string): boolean {
  const v = isIP(address);
  if (v === 4) return blocked.check(address, 'ipv4');
  if (v !== 6) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blocked.check(mapped[1]!, 'ipv4');
  return blocked.check(address, 'ipv6');
}

/** Why `hostname` may not receive pushes, or undefined when every address it resolves to is public. */
export async function privateEndpointReason(hostname: string): Promise<string | undefined> {
  const host = hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch {
      return 'its host does not resolve';
    }
  }
  if (addresses.length === 0) return 'its host does not resolve';
  if (addresses.some(isPrivateAddress)) return 'its host is a loopback, private or link-local address';
  return undefined;
}
