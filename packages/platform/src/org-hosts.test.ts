import { describe, expect, it } from "vitest";
import { organizationUrl, subdomainOfHost } from "./org-hosts";

const on = (url: string) => ({ EXTERNAL_URL: url, ORGANIZATION_SUBDOMAINS: true });
const off = (url: string) => ({ EXTERNAL_URL: url, ORGANIZATION_SUBDOMAINS: false });

describe("organizationUrl", () => {
  it("is EXTERNAL_URL without subdomains, less a trailing slash", () => {
    expect(organizationUrl(off("https://chat.example.com/"), "acme")).toBe("https://chat.example.com");
    expect(organizationUrl(off("http://127.0.0.1:9991"), "acme")).toBe("http://127.0.0.1:9991");
  });

  it("puts the string_id before the host with subdomains, keeping port and path", () => {
    expect(organizationUrl(on("https://chat.example.com"), "acme")).toBe("https://acme.chat.example.com");
    expect(organizationUrl(on("http://localhost:9991/"), "acme")).toBe("http://acme.localhost:9991");
    expect(organizationUrl(on("https://example.com/chat/"), "acme")).toBe("https://acme.example.com/chat");
  });

  it("is the deployment's own URL for no organization", () => {
    expect(organizationUrl(on("https://chat.example.com/"), "")).toBe("https://chat.example.com");
  });
});

describe("subdomainOfHost", () => {
  const config = on("https://chat.example.com");

  it("is the one label before the deployment's host, without case, port or final dot", () => {
    expect(subdomainOfHost(config, "acme.chat.example.com")).toBe("acme");
    expect(subdomainOfHost(config, "ACME.Chat.Example.com:8443")).toBe("acme");
    expect(subdomainOfHost(config, "acme.chat.example.com.")).toBe("acme");
    expect(subdomainOfHost(config, "demo-1-2.chat.example.com:443")).toBe("demo-1-2");
  });

  it("is null for the deployment's host, other names, deeper names and addresses", () => {
    for (const host of ["chat.example.com", "chat.example.com:443", "example.com", "evilchat.example.com", "a.b.chat.example.com", ".chat.example.com", "127.0.0.1:9991", "[::1]:9991", "", undefined]) {
      expect(subdomainOfHost(config, host)).toBeNull();
    }
  });

  it("is always null without subdomains", () => {
    expect(subdomainOfHost(off("https://chat.example.com"), "acme.chat.example.com")).toBeNull();
  });
});
