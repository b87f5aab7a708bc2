import { describe, expect, it } from "vitest";
import { domainError, emailRefusal, isDisposableDomain, type RealmEmailRules } from "./email-validation";

describe("domainError (Zulip's validate_domain)", () => {
  it("accepts lowercase dotted names of letters, digits and inner hyphens", () => {
    for (const d of ["example.com", "a.b.c.example.org", "x-y.co", "123.example.net", "xn--bcher-kva.example"]) expect([d, domainError(d)]).toEqual([d, null]);
  });

  it("refuses the rest with Zulip's reason, checked in Zulip's order", () => {
    const cases: Array<[string, string]> = [
      ["", "Domain can't be empty."],
      ["localhost", "Domain must have at least one dot (.)"],
      [`${"a".repeat(252)}.com`, "Domain is too long"],
      [".example.com", "Domain cannot start or end with a dot (.)"],
      ["example.com.", "Domain cannot start or end with a dot (.)"],
      ["example..com", "Consecutive '.' are not allowed."],
      ["-example.com", "Subdomains cannot start or end with a '-'."],
      ["example.com-", "Subdomains cannot start or end with a '-'."],
      ["exa-.com", "Subdomains cannot start or end with a '-'."],
      ["Example.com", "Domain can only have letters, numbers, '.' and '-'s."],
      ["exa_mple.com", "Domain can only have letters, numbers, '.' and '-'s."],
      ["exa mple.com", "Domain can only have letters, numbers, '.' and '-'s."],
      ["bücher.example", "Domain can only have letters, numbers, '.' and '-'s."],
      // Too long wins over a bad character: length is checked first.
      [`${"_".repeat(252)}.com`, "Domain is too long"],
    ];
    for (const [d, reason] of cases) expect([d, domainError(d)]).toEqual([d, reason]);
    // 255 characters is still a domain.
    expect(domainError(`${"a".repeat(251)}.com`)).toBeNull();
  });
});

describe("isDisposableDomain", () => {
  it("finds the domains of the blocklist Zulip uses, in any case, but not their parents or look-alikes", () => {
    for (const d of ["mailinator.com", "MAILINATOR.COM", "guerrillamail.com", "10minutemail.com"]) expect([d, isDisposableDomain(d)]).toEqual([d, true]);
    for (const d of ["example.com", "gmail.com", "zulip.com", "sub.mailinator.com.example.org"]) expect([d, isDisposableDomain(d)]).toEqual([d, false]);
  });

  it("keeps Zulip's exceptions: Abine's masked addresses are real people's", () => {
    for (const d of ["opayq.com", "abinemail.com", "blurmail.net", "maskmemail.com"]) expect([d, isDisposableDomain(d)]).toEqual([d, false]);
  });
});

describe("emailRefusal (Zulip's get_realm_email_validator)", () => {
  const open: RealmEmailRules = { emailsRestrictedToDomains: false, disallowDisposableEmailAddresses: false, domains: [] };
  const restricted: RealmEmailRules = {
    emailsRestrictedToDomains: true,
    disallowDisposableEmailAddresses: true,
    domains: [
      { domain: "example.com", allow_subdomains: false },
      { domain: "corp.example.org", allow_subdomains: true },
      { domain: "mailinator.com", allow_subdomains: false },
    ],
  };

  it("an open organization refuses nothing, or only disposable addresses when it says so", () => {
    expect(emailRefusal(open, "a+b@mailinator.com")).toBeNull();
    const noDisposable = { ...open, disallowDisposableEmailAddresses: true };
    expect(emailRefusal(noDisposable, "a@mailinator.com")).toBe("disposable");
    expect(emailRefusal(noDisposable, "a@Mailinator.COM")).toBe("disposable");
    expect(emailRefusal(noDisposable, "a+b@example.com")).toBeNull();
    expect(emailRefusal(noDisposable, "a@opayq.com")).toBeNull();
  });

  it("a restricted organization lets in its domains (any case) and, where allowed, their subdomains", () => {
    for (const e of ["a@example.com", "a@EXAMPLE.com", "a@corp.example.org", "a@eu.corp.example.org", "a@x.y.corp.example.org"]) {
      expect([e, emailRefusal(restricted, e)]).toEqual([e, null]);
    }
    for (const e of ["a@sub.example.com", "a@example.org", "a@xcorp.example.org", "a@example.com.evil.net", "a@other.test"]) {
      expect([e, emailRefusal(restricted, e)]).toEqual([e, "domain"]);
    }
  });

  it("a restricted organization refuses a + in the local part, and trusts its own domains over the disposable list", () => {
    expect(emailRefusal(restricted, "a+tag@example.com")).toBe("plus");
    expect(emailRefusal(restricted, "a+tag@other.test")).toBe("plus");
    expect(emailRefusal(restricted, "a@mailinator.com")).toBeNull();
    expect(emailRefusal({ ...restricted, domains: [] }, "a@example.com")).toBe("domain");
  });
});
