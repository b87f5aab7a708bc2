import MarkdownIt from "markdown-it";
import { describe, expect, it } from "vitest";
import { imagePreviews, isUploadedImage, MAX_IMAGE_PREVIEWS, NO_PREVIEWS } from "./previews";

const md = new MarkdownIt({ linkify: true });
md.use(imagePreviews);
const render = (s: string, env: Record<string, unknown> = {}) => md.render(s, env).trimEnd();

const IMG = "/user_uploads/2/ab/cDeF/photo.png";
const preview = (href: string, title?: string) =>
  `<div class="message_inline_image"><a href="${href}"${title === undefined ? "" : ` title="${title}"`}><img src="${href}"></a></div>`;

describe("uploaded image previews", () => {
  it("follows the paragraph of an uploaded image link, which stays", () => {
    expect(render(`[photo.png](${IMG})`)).toBe(`<p><a href="${IMG}">photo.png</a></p>\n${preview(IMG, "photo.png")}`);
  });

  it("previews each image of a paragraph in order, and nothing else", () => {
    const other = "/user_uploads/2/cd/x/diagram.JPEG";
    const out = render(`see [a](${IMG}), [notes](/user_uploads/2/ef/y/notes.pdf) and [b](${other})\n\nnext`);
    expect(out).toBe(
      `<p>see <a href="${IMG}">a</a>, <a href="/user_uploads/2/ef/y/notes.pdf">notes</a> and <a href="${other}">b</a></p>\n` +
        `${preview(IMG, "a")}\n${preview(other, "b")}\n<p>next</p>`,
    );
  });

  it("leaves out images elsewhere on the web, other paths and quoted images", () => {
    expect(render("https://example.com/cat.png")).not.toContain("message_inline_image");
    expect(render("[x](/static/cat.png)")).not.toContain("message_inline_image");
    expect(render("[x](/user_uploads/abc/cat.png)")).not.toContain("message_inline_image");
    expect(render(`> [q](${IMG})`)).not.toContain("message_inline_image");
    expect(render(`[q](${IMG})`, { [NO_PREVIEWS]: true })).not.toContain("message_inline_image");
  });

  it("escapes the link text into the title, and previews in headings and list items", () => {
    expect(render(`[a "b" <c>](${IMG})`)).toContain(`title="a &quot;b&quot; &lt;c&gt;"`);
    expect(render(`# [h](${IMG})`)).toBe(`<h1><a href="${IMG}">h</a></h1>\n${preview(IMG, "h")}`);
    expect(render(`- [l](${IMG})`)).toBe(`<ul>\n<li><a href="${IMG}">l</a>${preview(IMG, "l")}\n</li>\n</ul>`);
  });

  it("stops after the per-message limit", () => {
    const out = render(Array.from({ length: MAX_IMAGE_PREVIEWS + 5 }, (_, i) => `[${i}](/user_uploads/2/aa/${i}/p.gif)`).join("\n\n"));
    expect(out.split("message_inline_image").length - 1).toBe(MAX_IMAGE_PREVIEWS);
  });

  it("decides by the path's extension, ignoring a query or fragment", () => {
    expect(isUploadedImage("/user_uploads/2/aa/b/p.webp?x=1")).toBe(true);
    expect(isUploadedImage("/user_uploads/2/aa/b/p.png.txt")).toBe(false);
    expect(isUploadedImage("https://chat.example.com/user_uploads/2/aa/b/p.png")).toBe(false);
  });
});
