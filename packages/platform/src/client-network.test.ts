import { describe, expect, it } from "vitest";
import { clientNetwork } from "./client-network";

describe("clientNetwork", () => {
  it("keeps an IPv4 address whole, and so an IPv4-mapped IPv6 one", () => {
    expect(clientNetwork("203.0.113.7")).toBe("203.0.113.7");
    expect(clientNetwork("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(clientNetwork("::FFFF:cb00:7107")).toBe("203.0.113.7");
    expect(clientNetwork("0:0:0:0:0:ffff:203.0.113.7")).toBe("203.0.113.7");
  });

  it("counts an IPv6 address by its /64, however it is written", () => {
    const net = "2001:db8:0:42::/64";
    for (const ip of ["2001:db8:0:42::1", "2001:DB8::42:0:0:0:9", "2001:0db8:0000:0042:ffff:ffff:ffff:ffff", "[2001:db8:0:42::2]", "2001:db8:0:42::3%eth0"]) {
      expect(clientNetwork(ip), ip).toBe(net);
    }
    expect(clientNetwork("2001:db8:0:43::1")).toBe("2001:db8:0:43::/64");
    expect(clientNetwork("::1")).toBe("0:0:0:0::/64");
    expect(clientNetwork("64:ff9b::203.0.113.7")).toBe("64:ff9b:0:0::/64");
  });

  it("leaves what is not an address as it is", () => {
    expect(clientNetwork("unknown")).toBe("unknown");
    expect(clientNetwork("")).toBe("");
  });
});
