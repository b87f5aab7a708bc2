import { describe, expect, it } from "vitest";
import { compileLinkifiers, expandUrlTemplate, findLinkifierMatches } from "./linkifiers";

describe("linkifiers", () => {
  it("expands RFC 6570 templates", () => {
    expect(expandUrlTemplate("https://t.example/{id}", { id: "12 3" })).toBe("https://t.example/12%203");
    expect(expandUrlTemplate("https://t.example/{+path}", { path: "a/b" })).toBe("https://t.example/a/b");
    expect(expandUrlTemplate("https://t.example/s{?q,lang}", { q: "x y", lang: "en" })).toBe("https://t.example/s?q=x%20y&lang=en");
  });
  it("matches standalone occurrences, earlier linkifiers first", () => {
    const ls = compileLinkifiers([
      { pattern: "#(?P<id>[0-9]+)", url_template: "https://issues.example/{id}" },
      { pattern: "PR(?P<n>[0-9]+)", url_template: "https://pr.example/{n}" },
    ]);
    expect(findLinkifierMatches("see #12, (PR7) and x#5 and #9a", ls)).toEqual([
      { start: 4, end: 7, url: "https://issues.example/12" },
      { start: 10, end: 13, url: "https://pr.example/7" },
    ]);
  });
  it("skips patterns it cannot compile", () => {
    expect(compileLinkifiers([{ pattern: "(", url_template: "x" }])).toEqual([]);
  });
});
