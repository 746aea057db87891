/**
 * The client IP that rate limits count by (docs/reference/rate-limits.md): the socket's peer address, unless
 * that peer is a configured trusted proxy, in which case X-Forwarded-For is walked from the right
 * past trusted proxies and the first address that is not one is the client. Entries to the left
 * of it were written by the client itself and are never believed.
 */
import { BlockList, isIP, isIPv4 } from 'node:net';

export type ClientIp = (socketAddress: string, xForwardedFor: string | undefined) => string;

/** Hops examined at most; a longer chain of trusted proxies is not a real deployment. */
const MAX_HOPS = 32;
/** Trust decisions remembered per client-IP function. */
const TRUST_CACHE_SIZE = 4096;

/**
 * The one spelling an address is keyed under: IPv4-mapped IPv6 (`::ffff:127.0.0.1`, as dual-stack
 * sockets report IPv4 peers) becomes plain IPv4, and IPv6 is compressed and lowercased, so one
 * client cannot look like many. Answers null for anything that is not an IP address.
 */
export function normalizeIp(raw: string): string | null {
  const family = isIP(raw);
  if (family === 4) return raw;
  if (family !== 6) return null;
  if (raw.startsWith('::ffff:') && isIPv4(raw.slice(7))) return raw.slice(7);
  let host: string;
  try {
    // The WHATWG URL parser canonicalises IPv6 (RFC 5952); zone ids ("%eth0") are rejected.
    host = new URL(`http://[${raw}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (mapped) {
    const hi = parseInt(mapped[1]!, 16);
    const lo = parseInt(mapped[2]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return host;
}

const isPort = (text: string): boolean => /^\d{1,5}$/.test(text) && Number(text) <= 65535;

/** One X-Forwarded-For element: an address, optionally bracketed and/or with a port (some proxies add one). */
function parseForwarded(entry: string): string | null {
  let s = entry.trim();
  if (s.startsWith('[')) {
    const end = s.indexOf(']');
    if (end < 0) return null;
    const rest = s.slice(end + 1);
    if (rest !== '' && !(rest.startsWith(':') && isPort(rest.slice(1)))) return null;
    s = s.slice(1, end);
  } else {
    const colon = s.indexOf(':');
    // One colon is never IPv6 (which has at least two): it is IPv4 with a port.
    if (colon !== -1 && colon === s.lastIndexOf(':')) {
      if (!isPort(s.slice(colon + 1))) return null;
      s = s.slice(0, colon);
    }
  }
  return normalizeIp(s);
}

/**
 * The key one client is counted under (docs/reference/rate-limits.md): an IPv4 address as is; an IPv6 address by its
 * /64 prefix, since one subscriber usually holds a whole /64 and could otherwise rotate through
 * 2^64 addresses to reset every limit and stream cap. Expects Node's canonical spelling
 * (inet_ntop or normalizeIp); answers e.g. `2001:db8:0:7::/64`.
 */
export function clientKey(ip: string): string {
  if (!ip.includes(':')) return ip;
  const cut = ip.indexOf('::');
  let groups: string[];
  if (cut < 0) groups = ip.split(':');
  else {
    const head = cut === 0 ? [] : ip.slice(0, cut).split(':');
    const tail = ip.slice(cut + 2) === '' ? [] : ip.slice(cut + 2).split(':');
    // An embedded IPv4 tail (`::1.2.3.4`) holds two groups; it lies in the low 64 bits anyway.
    const tailGroups = tail.length + (tail.length > 0 && tail[tail.length - 1]!.includes('.') ? 1 : 0);
    groups = [...head, ...Array<string>(Math.max(0, 8 - head.length - tailGroups)).fill('0'), ...tail];
  }
  return `${groups
    .slice(0, 4)
    .map((g) => (parseInt(g, 16) || 0).toString(16))
    .join(':')}::/64`;
}

/** Parses `trustedProxies` (IPs and CIDRs, v4 or v6); throws naming the bad entry. */
export function trustedProxyList(trustedProxies: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of trustedProxies) {
    if (typeof entry !== 'string') throw new Error(`server.trustedProxies: entries must be strings, got ${typeof entry}`);
    const slash = entry.indexOf('/');
    const address = slash === -1 ? entry.trim() : entry.slice(0, slash).trim();
    const family = isIP(address);
    if (family === 0) throw new Error(`server.trustedProxies: "${entry}" is not an IP address or CIDR`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (slash === -1) {
      list.addAddress(address, type);
      continue;
    }
    const prefixText = entry.slice(slash + 1).trim();
    const prefix = Number(prefixText);
    if (!/^\d{1,3}$/.test(prefixText) || prefix > (family === 4 ? 32 : 128)) {
      throw new Error(`server.trustedProxies: "${entry}" has an invalid prefix length`);
    }
    list.addSubnet(address, prefix, type);
  }
  return list;
}

/**
 * Builds the client-key function of one server: the client's address as `clientKey` spells it
 * (IPv6 by /64). With no trusted proxies (the default, docs/reference/rate-limits.md) it keys the socket address
 * and never reads X-Forwarded-For.
 */
export function createClientIp(trustedProxies: readonly string[] = []): ClientIp {
  const resolve = createAddressOf(trustedProxies);
  return (socketAddress, xForwardedFor) => clientKey(resolve(socketAddress, xForwardedFor));
}

/** The client's full address (no /64 keying): the socket peer, or the X-Forwarded-For hop past trusted proxies. */
export function createAddressOf(trustedProxies: readonly string[] = []): ClientIp {
  // Node reports peers already in canonical form (inet_ntop), except IPv4 peers of a dual-stack
  // socket, which arrive IPv4-mapped; only that needs rewriting on the hot path.
  const socketIp = (socketAddress: string): string => (socketAddress.startsWith('::ffff:') && isIPv4(socketAddress.slice(7)) ? socketAddress.slice(7) : socketAddress);
  if (trustedProxies.length === 0) return socketIp;
  const trusted = trustedProxyList(trustedProxies);
  // BlockList.check costs microseconds (it builds a SocketAddress); the peers asking are mostly
  // the same few proxies, so remember answers. Bounded: cleared when full, so hostile address
  // churn costs at most a re-check, never memory.
  const seen = new Map<string, boolean>();
  const isTrusted = (ip: string): boolean => {
    let answer = seen.get(ip);
    if (answer === undefined) {
      answer = trusted.check(ip, isIPv4(ip) ? 'ipv4' : 'ipv6');
      if (seen.size >= TRUST_CACHE_SIZE) seen.clear();
      seen.set(ip, answer);
    }
    return answer;
  };

  return function clientIp(socketAddress, xForwardedFor) {
    let ip = socketIp(socketAddress);
    if (xForwardedFor === undefined || !isTrusted(ip)) return ip;
    // Walk right to left without splitting the whole header: a hostile client controls its
    // length (up to the header size limit), but only the right-most hops are ever examined.
    let end = xForwardedFor.length;
    for (let hops = 0; hops < MAX_HOPS && end > 0; hops++) {
      const start = xForwardedFor.lastIndexOf(',', end - 1);
      const entry = parseForwarded(xForwardedFor.slice(start + 1, end));
      // An entry a trusted proxy wrote that is not an address breaks the chain: whatever lies to
      // its left came from an unknown peer, so stop at the last hop we could verify.
      if (entry === null) return ip;
      ip = entry;
      if (!isTrusted(ip)) return ip;
      end = start;
    }
    // Every examined hop is a trusted proxy (e.g. a proxy's own health check): the left-most.
    return ip;
  };
}
