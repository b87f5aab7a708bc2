import { describe, expect, it } from "vitest";
import { isUrl } from "./url";

describe("isUrl (Django's URLValidator, behind Zulip's check_url)", () => {
  it("accepts http(s) and ftp(s) URLs to a named host with a top-level domain, localhost or an IP", () => {
    for (const url of [
      "http://127.0.0.1:5002",
      "http://127.0.0.1:5002/bots?abc=123",
      "https://bots.example.com/hook#x",
      "HTTPS://Example.COM",
      "http://localhost:8080/zulip",
      "http://user:pass@example.com/",
      "ftp://files.example.org/",
      "http://[::1]:9000/",
      "http://例え.テスト/",
      "http://xn--r8jz45g.xn--zckzah/",
    ]) {
      expect(isUrl(url), url).toBe(true);
    }
  });

  it("refuses other schemes, hosts without a top-level domain, bad addresses and stray characters", () => {
    for (const url of [
      "",
      "example.com",
      "javascript:alert(1)",
      "mailto:bot@example.com",
      "file:///etc/passwd",
      "http://",
      "http://bot:8080/",
      "http://-bad.example.com/",
      "http://256.1.1.1/",
      "http://[::1::2]/",
      "http://127.0.0.1:123456/",
      "http://exa mple.com/",
      "http://example.com/a b",
      "http://example.com/\n",
      `http://example.com/${"a".repeat(2048)}`,
    ]) {
      expect(isUrl(url), url).toBe(false);
    }
  });
});
