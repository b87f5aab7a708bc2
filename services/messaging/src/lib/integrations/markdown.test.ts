import { describe, expect, it } from "vitest";
import { escapeInline, inlineCode, link, quoteBlock, withoutMentions } from "./markdown";

describe("a third party's text in an integration's message", () => {
  it("inline: Markdown's characters escaped, on one line", () => {
    expect(escapeInline("Fix *bold* _it_ [x](y) `code` ~~s~~ <time:1> $$m$$ a\\b")).toBe("Fix \\*bold\\* \\_it\\_ \\[x\\](y) \\`code\\` \\~\\~s\\~\\~ \\<time:1\\> \\$\\$m\\$\\$ a\\\\b");
    expect(escapeInline("@**all** and @*group*")).toBe("@\\*\\*all\\*\\* and @\\*group\\*");
    expect(escapeInline("two\n  lines")).toBe("two lines");
    // The renderer starts a line at a lone carriage return as well.
    expect(escapeInline("one\r# heading")).toBe("one # heading");
  });

  it("links: the label escaped, the URL's spaces and parentheses encoded", () => {
    expect(link("a [b]", "https://x.example/a b(c)")).toBe("[a \\[b\\]](https://x.example/a%20b%28c%29)");
    // A line break would end the link and start Markdown of the payload's own.
    expect(link("x", "https://x.example/a\r\n\n@**all**\u0000")).toBe("[x](https://x.example/a%0D%0A%0A@**all**%00)");
  });

  it("inline code: a fence longer than any backtick run inside", () => {
    expect(inlineCode("main")).toBe("`main`");
    expect(inlineCode("a`b")).toBe("``a`b``");
    expect(inlineCode("`x``")).toBe("``` `x`` ```");
  });

  it("quoted blocks: the text's own fences cannot end the quote, its mentions mention nobody, and it is cut when long", () => {
    expect(quoteBlock("hello\r\n*world*")).toBe("~~~ quote\nhello\n*world*\n~~~");
    expect(quoteBlock("a\n~~~~~\nb")).toBe("~~~~~~ quote\na\n~~~~~\nb\n~~~~~~");
    expect(quoteBlock("ping @**all**, @_**Ana|3** and @*ops*")).toBe("~~~ quote\nping \\@**all**, \\@_**Ana|3** and \\@*ops*\n~~~");
    expect(quoteBlock("x".repeat(20), 10)).toBe("~~~ quote\nxxxxxxxxxx […]\n~~~");
    expect(withoutMentions("mail me@example.com")).toBe("mail me@example.com");
    // A backslash of the text's own escapes the added one, not the `@`.
    expect(withoutMentions("\\@**all** \\\\@*ops* \\\\\\@**x**")).toBe("\\@**all** \\\\\\@*ops* \\\\\\@**x**");
  });
});
