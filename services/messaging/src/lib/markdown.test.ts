import { describe, expect, it } from "vitest";
import { compileLinkifiers } from "./linkifiers";
import { emptyDirectory, renderMarkdown, scanMentionCandidates } from "./markdown";

function dir() {
  const d = emptyDirectory();
  const alice = { id: 5, fullName: "Alice Smith" };
  const bob = { id: 6, fullName: "Bob <b>" };
  d.usersByName.set("alice smith", [alice]);
  d.usersByName.set("bob <b>", [bob]);
  d.usersById.set(5, alice).set(6, bob);
  d.groupsByName.set("support", { id: 30, name: "support" });
  d.streamsByName.set("general chat", { id: 9, name: "general chat" });
  return d;
}

describe("renderMarkdown", () => {
  it("renders paragraphs, emphasis, code and line breaks", () => {
    expect(renderMarkdown("**bold** *it* `x<y`").html).toBe("<p><strong>bold</strong> <em>it</em> <code>x&lt;y</code></p>");
    expect(renderMarkdown("a\nb").html).toBe("<p>a<br>\nb</p>");
  });
  it("never emits executable HTML", () => {
    const html = renderMarkdown("<script>alert(1)</script> [x](javascript:alert(1)) <img src=x onerror=y>").html;
    expect(html).not.toContain("<script");
    expect(html).not.toContain("<img");
    expect(html).not.toContain('href="javascript:');
  });
  it("renders links and flags them", () => {
    const r = renderMarkdown("see https://example.com and [file](/user_uploads/2/ab/x.png)");
    expect(r.html).toContain('<a href="https://example.com">https://example.com</a>');
    expect(r.hasLink && r.hasAttachment && r.hasImage).toBe(true);
  });
  it("renders fenced code the way Zulip clients style it", () => {
    expect(renderMarkdown("```py\nprint('<')\n```").html).toBe(
      '<div class="codehilite" data-code-language="Python"><pre><span></span><code><span class="nb">print</span>(<span class="s1">\'&lt;\'</span>)\n</code></pre></div>',
    );
  });
  it("renders user mentions with ids and escapes names", () => {
    const r = renderMarkdown("hi @**Alice Smith** and @**Bob <b>|6** and @_**alice smith**", dir());
    expect(r.html).toBe(
      '<p>hi <span class="user-mention" data-user-id="5">@Alice Smith</span> and <span class="user-mention" data-user-id="6">@Bob &lt;b&gt;</span> and <span class="user-mention silent" data-user-id="5">Alice Smith</span></p>',
    );
    expect([...r.mentionedUserIds].sort()).toEqual([5, 6]);
  });
  it("leaves unknown names alone and ignores mentions in code", () => {
    const r = renderMarkdown("`@**Alice Smith**` @**Nobody**", dir());
    expect(r.mentionedUserIds.size).toBe(0);
    expect(r.html).toContain("<code>@**Alice Smith**</code>");
  });
  it("detects wildcards; silent ones notify nobody", () => {
    expect(renderMarkdown("@**all**").streamWildcard).toBe(true);
    // Clients tell a channel wildcard from a user by its channel-wildcard-mention class.
    expect(renderMarkdown("@**channel**").html).toBe('<p><span class="user-mention channel-wildcard-mention" data-user-id="*">@channel</span></p>');
    expect(renderMarkdown("@_**all**").html).toBe('<p><span class="user-mention channel-wildcard-mention silent" data-user-id="*">all</span></p>');
    expect(renderMarkdown("@_**everyone**").streamWildcard).toBe(false);
    const t = renderMarkdown("@**topic**");
    expect(t.topicWildcard).toBe(true);
    expect(t.html).toBe('<p><span class="topic-mention">@topic</span></p>');
  });
  it("renders group mentions and channel links", () => {
    const r = renderMarkdown("@*support* #**general chat** #**general chat>lunch**", dir());
    expect(r.html).toBe(
      '<p><span class="user-group-mention" data-user-group-id="30">@support</span> <a class="stream" data-stream-id="9" href="/#narrow/channel/9-general-chat">#general chat</a> <a class="stream-topic" data-stream-id="9" href="/#narrow/channel/9-general-chat/topic/lunch">#general chat &gt; lunch</a></p>',
    );
    expect([...r.mentionedGroupIds]).toEqual([30]);
  });
  it("scans candidates before lookup", () => {
    expect(scanMentionCandidates("@**Ann** @**X|7** @*grp* #**chan>t** :party:parrot: 12:30")).toEqual({
      userNames: ["ann"],
      userIds: [7],
      groupNames: ["grp"],
      streamNames: ["chan"],
      emojiNames: ["party", "parrot"],
    });
  });
  it("applies the organization's linkifiers outside code and links", () => {
    const d = emptyDirectory();
    d.linkifiers = compileLinkifiers([
      { pattern: "#(?P<id>[0-9]+)", url_template: "https://tracker.example/issue/{id}" },
      { pattern: "BAD(?P<x>[0-9])", url_template: "javascript:alert({x})" },
    ]);
    const r = renderMarkdown("fixes #42, not `#43` nor [#44](https://x.example) BAD1", d);
    expect(r.html).toBe(
      '<p>fixes <a href="https://tracker.example/issue/42">#42</a>, not <code>#43</code> nor <a href="https://x.example">#44</a> BAD1</p>',
    );
    expect(r.hasLink).toBe(true);
  });
});

describe("uploaded image previews in messages", () => {
  const img = "/user_uploads/2/ab/cDeF/photo.png";
  const preview = `<div class="message_inline_image"><a href="${img}" title="photo.png"><img src="${img}"></a></div>`;

  it("follow the upload link, which marks the message as having an image and an attachment", () => {
    const r = renderMarkdown(`look: [photo.png](${img})`);
    expect(r.html).toBe(`<p>look: <a href="${img}">photo.png</a></p>\n${preview}`);
    expect(r).toMatchObject({ hasImage: true, hasAttachment: true, hasLink: true });
  });

  it("are left out of quotes, both > and ```quote, but not out of spoilers", () => {
    expect(renderMarkdown(`> [photo.png](${img})`).html).not.toContain("message_inline_image");
    const fenced = renderMarkdown("```quote\n[photo.png](" + img + ")\n```\n\n[photo.png](" + img + ")").html;
    expect(fenced.split("message_inline_image").length - 1).toBe(1);
    expect(fenced.endsWith(preview)).toBe(true);
    expect(renderMarkdown("```spoiler s\n[photo.png](" + img + ")\n```").html).toContain(`<div class="spoiler-content" aria-hidden="true">\n<p><a href="${img}">photo.png</a></p>\n${preview}`);
  });
});

describe("custom emoji", () => {
  const withEmoji = () => {
    const d = emptyDirectory();
    d.customEmoji.set("party_parrot", "/user_avatars/2/emoji/images/7-abc.gif");
    d.customEmoji.set("smile", "/user_avatars/2/emoji/images/8-def.png");
    d.customEmoji.set("zulip", "/user_avatars/2/emoji/images/9-ghi.png");
    return d;
  };

  it("render as Zulip's img.emoji, and shadow the Unicode and Zulip emoji of their name", () => {
    expect(renderMarkdown(":party_parrot: :smile: :zulip: :grinning:", withEmoji()).html).toBe(
      '<p><img alt=":party_parrot:" class="emoji" src="/user_avatars/2/emoji/images/7-abc.gif" title="party parrot"> ' +
        '<img alt=":smile:" class="emoji" src="/user_avatars/2/emoji/images/8-def.png" title="smile"> ' +
        '<img alt=":zulip:" class="emoji" src="/user_avatars/2/emoji/images/9-ghi.png" title="zulip"> ' +
        '<span aria-label="grinning" class="emoji emoji-1f600" role="img" title="grinning">:grinning:</span></p>',
    );
  });

  it("stay as typed in code, and when the organization has none of the name", () => {
    expect(renderMarkdown("`:party_parrot:` :party_parrot:").html).toBe("<p><code>:party_parrot:</code> :party_parrot:</p>");
  });
});

describe("fenced code languages", () => {
  it("an unknown language is its data-code-language in lower case, as Zulip lower-cases the fence's word", () => {
    expect(renderMarkdown("```MyDSL\nx\n```").html).toBe('<div class="codehilite" data-code-language="mydsl"><pre><span></span><code>x\n</code></pre></div>');
  });

  it("a fence naming none takes the organization's default language; one naming its own keeps it", () => {
    const d = emptyDirectory();
    d.defaultCodeBlockLanguage = "py";
    expect(renderMarkdown("```\nNone\n```", d).html).toBe(
      '<div class="codehilite" data-code-language="Python"><pre><span></span><code><span class="kc">None</span>\n</code></pre></div>',
    );
    expect(renderMarkdown("```text\nNone\n```", d).html).toBe('<div class="codehilite" data-code-language="Text only"><pre><span></span><code>None\n</code></pre></div>');
    // The default may name a block kind too (Zulip hands the fence to that kind's handler).
    d.defaultCodeBlockLanguage = "quote";
    expect(renderMarkdown("```\nwise\n```", d).html).toBe("<blockquote>\n<p>wise</p>\n</blockquote>");
  });
});

describe("where Zulip's Markdown differs from CommonMark", () => {
  it("a list may follow a line of text, keeping its start number; `1)` numbers nothing", () => {
    expect(renderMarkdown("text\n2. a\n3. b").html).toBe('<p>text</p>\n<ol start="2">\n<li>a</li>\n<li>b</li>\n</ol>');
    expect(renderMarkdown("> quoted\n2. a").html).toBe('<blockquote>\n<p>quoted</p>\n</blockquote>\n<ol start="2">\n<li>a</li>\n</ol>');
    expect(renderMarkdown("1) a\n2) b").html).toBe("<p>1) a<br>\n2) b</p>");
    expect(renderMarkdown("text\n1) a").html).toBe("<p>text<br>\n1) a</p>");
    expect(renderMarkdown("1. a\n2) b").html).toBe("<ol>\n<li>a<br>\n2) b</li>\n</ol>");
    // Zulip splits off a list only at a line that is an item as typed: not one of a `>` quote.
    expect(renderMarkdown("> text\n> - a").html).toBe("<blockquote>\n<p>text<br>\n- a</p>\n</blockquote>");
    // What stays as before: lists after a blank line, a bullet list after text, `text\n10.` (two digits).
    expect(renderMarkdown("text\n- a").html).toBe("<p>text</p>\n<ul>\n<li>a</li>\n</ul>");
    expect(renderMarkdown("text\n\n10. a").html).toBe('<p>text</p>\n<ol start="10">\n<li>a</li>\n</ol>');
    expect(renderMarkdown("text\n10. a").html).toBe("<p>text<br>\n10. a</p>");
  });

  it("***x*** is strong around em", () => {
    expect(renderMarkdown("***x*** and *a* ***b c*** **d *e***").html).toBe(
      "<p><strong><em>x</em></strong> and <em>a</em> <strong><em>b c</em></strong> <strong>d <em>e</em></strong></p>",
    );
  });

  it("aligned table cells carry Python-Markdown's style attribute", () => {
    expect(renderMarkdown("| a | b | c | d |\n|:-|:-:|-:|-|\n| 1 | 2 | 3 | 4 |").html).toBe(
      '<table>\n<thead>\n<tr>\n<th style="text-align: left;">a</th>\n<th style="text-align: center;">b</th>\n<th style="text-align: right;">c</th>\n<th>d</th>\n</tr>\n</thead>\n' +
        '<tbody>\n<tr>\n<td style="text-align: left;">1</td>\n<td style="text-align: center;">2</td>\n<td style="text-align: right;">3</td>\n<td>4</td>\n</tr>\n</tbody>\n</table>',
    );
  });

  it("has no reference links: a definition stays a line of text", () => {
    expect(renderMarkdown("[docs][1]\n\n[1]: https://example.com").html).toBe(
      '<p>[docs][1]</p>\n<p>[1]: <a href="https://example.com">https://example.com</a></p>',
    );
  });
});
