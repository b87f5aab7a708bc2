import { describe, expect, it } from "vitest";
import { line, link, mailBody } from "./mail-body";

describe("mailBody", () => {
  it("writes the lines as text, and as paragraphs of escaped text with links in HTML", () => {
    const body = mailBody([
      line`${"A <b>&"} invited you to ${link("http://x.test/?a=1&b=2")}.`,
      "",
      "Open this link:",
      link("http://x.test/k"),
      "",
      "Their message:\nsee <i>you</i>",
    ]);
    expect(body.text).toBe("A <b>& invited you to http://x.test/?a=1&b=2.\n\nOpen this link:\nhttp://x.test/k\n\nTheir message:\nsee <i>you</i>");
    expect(body.html).toBe(
      [
        "<!DOCTYPE html>",
        "<html><body>",
        '<p>A &lt;b&gt;&amp; invited you to <a href="http://x.test/?a=1&amp;b=2">http://x.test/?a=1&amp;b=2</a>.</p>',
        "<p>Open this link:<br>",
        '<a href="http://x.test/k">http://x.test/k</a></p>',
        "<p>Their message:<br>",
        "see &lt;i&gt;you&lt;/i&gt;</p>",
        "</body></html>",
        "",
      ].join("\n"),
    );
  });
});
