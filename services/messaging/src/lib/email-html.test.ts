import { describe, expect, it } from "vitest";
import { absoluteUrl, messageHtmlForMail, SPOILER_NOTE } from "./email-html";
import { htmlToText } from "./missed-message-email";

const url = "https://acme.chat.example.com";

describe("messageHtmlForMail", () => {
  it("makes this server's addresses absolute and leaves others alone", () => {
    expect(absoluteUrl("/user_uploads/1/a.pdf", url)).toBe(`${url}/user_uploads/1/a.pdf`);
    expect(absoluteUrl("#narrow/channel/1-a", url)).toBe(`${url}/#narrow/channel/1-a`);
    expect(absoluteUrl("user_uploads/1/a.pdf", url)).toBe(`${url}/user_uploads/1/a.pdf`);
    for (const other of ["https://example.org/x", "mailto:ada@example.org", "//cdn.example.org/x.png"]) expect(absoluteUrl(other, url)).toBe(other);
  });

  it("drops an upload's inline preview, keeps its link and the text around, and writes emoji as characters", () => {
    const html =
      '<p>See <a href="/user_uploads/1/ab/cat.png">cat.png</a></p>\n' +
      '<div class="message_inline_image"><a href="/user_uploads/1/ab/cat.png" title="cat.png"><img src="/user_uploads/1/ab/cat.png"></a></div>' +
      '<p>Nice <span aria-label="thumbs up" class="emoji emoji-1f44d" role="img" title="thumbs up">:thumbs_up:</span> &amp; done</p>';
    expect(messageHtmlForMail(html, url)).toBe(
      `<p>See <a href="${url}/user_uploads/1/ab/cat.png">cat.png</a></p>\n` +
        '<p>Nice <span aria-label="thumbs up" class="emoji emoji-1f44d" role="img" title="thumbs up">👍</span> &amp; done</p>',
    );
  });

  it("keeps a spoiler's header and leaves its content out, with a note in its place, in HTML and text alike", () => {
    const spoiler = (header: string, content: string) =>
      `<div class="spoiler-block"><div class="spoiler-header">\n${header}</div><div class="spoiler-content" aria-hidden="true">\n${content}</div></div>\n`;
    const html =
      "<p>Before</p>\n" +
      spoiler("<p>The <em>ending</em></p>\n", "<p>Everyone <strong>wins</strong>.</p>\n") +
      `<blockquote>\n${spoiler("", "<p>quoted secret</p>\n")}</blockquote>\n<p>After</p>`;
    const mail = messageHtmlForMail(html, url);
    expect(mail).toContain(`<p>The <em>ending</em> <em>${SPOILER_NOTE}</em></p>`);
    expect(mail).toContain(`<blockquote>\n<div class="spoiler-block">\n<p><em>${SPOILER_NOTE}</em></p>\n</div>`);
    expect(mail).not.toMatch(/wins|quoted secret|spoiler-content/);
    expect(mail).toContain("<p>After</p>");
    expect(htmlToText(html, url)).toBe(`Before\n\nThe ending ${SPOILER_NOTE}\n\n> ${SPOILER_NOTE}\n\nAfter`);
  });
});
