import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";

/**
 * Addresses a user's outgoing webhook must not reach unless the operator allows it: this host,
 * private networks (a cluster's services), link-local (cloud metadata endpoints), and the
 * reserved ranges. Zulip sends its webhooks through Smokescreen for the same reason.
 */
const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 3],
] as const) {
  PRIVATE.addSubnet(net, prefix, "ipv4");
}
for (const [net, prefix] of [
  // The unspecified address, loopback, and the old IPv4-compatible form (`::127.0.0.1`).
  ["::", 96],
  // NAT64, SIIT's IPv4-translated form, 6to4 and Teredo carry an IPv4 address inside, so may
  // lead to any of the above. (IPv4-mapped `::ffff:a.b.c.d` is checked as its IPv4 address.)
  ["64:ff9b::", 96],
  ["64:ff9b:1::", 48],
  ["::ffff:0:0:0", 96],
  ["2002::", 16],
  // The IETF's protocol block: Teredo, benchmarking, ORCHID; and the discard prefix.
  ["2001::", 23],
  ["100::", 64],
  ["2001:db8::", 32],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
] as const) {
  PRIVATE.addSubnet(net, prefix, "ipv6");
}

/** Whether an address (IPv4, IPv6, or IPv4 mapped into IPv6) is one of those. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return PRIVATE.check(mapped[1], "ipv4");
  const family = isIP(address);
  if (family === 0) return true;
  return PRIVATE.check(address, family === 4 ? "ipv4" : "ipv6");
}

/**
 * Whether a URL's host is (or resolves to) such an address, checked before the request. The
 * request itself goes through platform's guardedFetch, which checks again on the address it
 * connects to: a name resolved differently a moment later (DNS rebinding) is refused there.
 */
export async function reachesPrivateAddress(url: string): Promise<boolean> {
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, "$1");
  if (isIP(host)) return isPrivateAddress(host);
  const addresses = await lookup(host, { all: true, verbatim: true });
  return addresses.some((a) => isPrivateAddress(a.address));
}
