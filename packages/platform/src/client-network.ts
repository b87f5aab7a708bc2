import { isIPv4, isIPv6 } from "node:net";

/** An IPv6 address's eight 16-bit groups (a trailing dotted IPv4 part is two of them). */
function ipv6Groups(address: string): number[] {
  const parse = (part: string): number[] =>
    part === ""
      ? []
      : part.split(":").flatMap((g) => {
          if (!g.includes(".")) return [parseInt(g, 16)];
          const [a, b, c, d] = g.split(".").map(Number);
          return [(a << 8) | b, (c << 8) | d];
        });
  const [head, tail] = address.split("::");
  if (tail === undefined) return parse(head);
  const before = parse(head);
  const after = parse(tail);
  return [...before, ...Array<number>(8 - before.length - after.length).fill(0), ...after];
}

/**
 * What per-address limits count a client by: an IPv4 address whole, an IPv6 one by its /64
 * prefix (one subscriber's network hands out a whole /64, so the address alone would let a
 * client take a fresh one per request), an IPv4-mapped IPv6 address as the IPv4 address it is.
 * Anything else (not an address) counts as it is.
 */
export function clientNetwork(ip: string): string {
  const address = ip.trim().replace(/^\[(.*)\]$/, "$1").split("%", 1)[0];
  if (isIPv4(address)) return address;
  if (!isIPv6(address)) return ip;
  const groups = ipv6Groups(address);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6] >> 8, groups[6] & 255, groups[7] >> 8, groups[7] & 255].join(".");
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(":")}::/64`;
}
