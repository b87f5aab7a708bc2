import { serviceClient } from "@chat/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org } from "./helpers";

let m: Messaging;
let org: Org;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  await m.createStream(org.owner, "general", [org.owner, org.member, org.member2]);
});
afterAll(async () => m?.close());

/** Sends `content` to #general and returns the HTML a client fetching the message gets, and the mentioned flag of member2. */
async function rendered(content: string): Promise<{ html: string; member2Flags: string[] }> {
  const id = await m.send(org.member, { type: "stream", to: "general", topic: "markdown", content });
  const mine = await m.ok(await m.call("GET", `/messages/${id}`, org.member));
  const theirs = await m.ok(await m.call("GET", `/messages/${id}`, org.member2));
  return { html: mine.message.content, member2Flags: theirs.message.flags };
}

describe("Markdown as Zulip renders it", () => {
  it("@**Name|id** mentions only when the name is the user's (or left out)", async () => {
    const id = org.member2.user_id;
    const wrong = await rendered(`@**Somebody Else|${id}**`);
    expect(wrong.html).toBe(`<p>@<strong>Somebody Else|${id}</strong></p>`);
    expect(wrong.member2Flags).not.toContain("mentioned");
    const bare = await rendered(`@**|${id}**`);
    expect(bare.html).toBe(`<p><span class="user-mention" data-user-id="${id}">@Max Member</span></p>`);
    expect(bare.member2Flags).toContain("mentioned");
    const named = await rendered(`@_**Max Member|${id}**`);
    expect(named.html).toBe(`<p><span class="user-mention silent" data-user-id="${id}">Max Member</span></p>`);
  });
});

describe("emphasis, strikethrough and headings", () => {
  it("only `*` emphasizes; `~~` strikes through as <del>; there are no underlined headings", async () => {
    expect((await rendered("_under_ __strong__ snake_case *it* **bold**")).html).toBe(
      "<p>_under_ __strong__ snake_case <em>it</em> <strong>bold</strong></p>",
    );
    expect((await rendered("~~gone~~")).html).toBe("<p><del>gone</del></p>");
    expect((await rendered("Title\n===")).html).toBe("<p>Title<br>\n===</p>");
    expect((await rendered("above\n---\nbelow")).html).toBe("<p>above</p>\n<hr>\n<p>below</p>");
    expect((await rendered("# Real heading")).html).toBe("<h1>Real heading</h1>");
  });
});

describe("channel and topic links", () => {
  it("encode names in links as Zulip's narrow URLs do (`.` for `%`)", async () => {
    const id = await m.createStream(org.owner, "dev.ops (eu)", [org.owner, org.member]);
    expect((await rendered("#**dev.ops (eu)>deploy 1.2: done!**")).html).toBe(
      `<p><a class="stream-topic" data-stream-id="${id}" href="/#narrow/channel/${id}-dev.2Eops-.28eu.29/topic/deploy.201.2E2.3A.20done.21">#dev.ops (eu) &gt; deploy 1.2: done!</a></p>`,
    );
    expect((await rendered("#**dev.ops (eu)**")).html).toBe(
      `<p><a class="stream" data-stream-id="${id}" href="/#narrow/channel/${id}-dev.2Eops-.28eu.29">#dev.ops (eu)</a></p>`,
    );
  });
});

describe("quote and spoiler blocks", () => {
  it("```quote is a block quote of Markdown, mentions included", async () => {
    const r = await rendered("```quote\nwise words from @**Max Member**\n```");
    expect(r.html).toBe(`<blockquote>\n<p>wise words from <span class="user-mention" data-user-id="${org.member2.user_id}">@Max Member</span></p>\n</blockquote>`);
    expect(r.member2Flags).toContain("mentioned");
  });

  it("```spoiler renders a header and hidden content", async () => {
    expect((await rendered("```spoiler The *ending*\nEveryone **wins**.\n```")).html).toBe(
      '<div class="spoiler-block"><div class="spoiler-header">\n<p>The <em>ending</em></p>\n</div><div class="spoiler-content" aria-hidden="true">\n<p>Everyone <strong>wins</strong>.</p>\n</div></div>',
    );
    expect((await rendered("```spoiler\nno header\n```")).html).toBe(
      '<div class="spoiler-block"><div class="spoiler-header">\n</div><div class="spoiler-content" aria-hidden="true">\n<p>no header</p>\n</div></div>',
    );
  });
});

describe("global times", () => {
  it("<time:...> becomes a <time> in UTC, or Zulip's error span", async () => {
    expect((await rendered("meet at <time:2024-03-01T10:30:00+01:00>")).html).toBe(
      '<p>meet at <time datetime="2024-03-01T09:30:00Z">2024-03-01T10:30:00+01:00</time></p>',
    );
    expect((await rendered("<time:1496701800>")).html).toBe('<p><time datetime="2017-06-05T22:30:00Z">1496701800</time></p>');
    expect((await rendered("<time:the Ides of March>")).html).toBe('<p><span class="timestamp-error">Invalid time format: the Ides of March</span></p>');
  });
});

describe("emoji", () => {
  it(":name: and emoji characters render as Zulip's emoji spans; unknown names and code stay as typed", async () => {
    expect((await rendered("great :smile: :thumbs_up: :no_such_emoji: `:smile:`")).html).toBe(
      '<p>great <span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span> ' +
        '<span aria-label="thumbs up" class="emoji emoji-1f44d" role="img" title="thumbs up">:thumbs_up:</span> :no_such_emoji: <code>:smile:</code></p>',
    );
    expect((await rendered("ok 👍 ❤️ ©")).html).toBe(
      '<p>ok <span aria-label="+1" class="emoji emoji-1f44d" role="img" title="+1">:+1:</span> ' +
        '<span aria-label="heart" class="emoji emoji-2764" role="img" title="heart">:heart:</span> ©</p>',
    );
  });
});

describe("code blocks", () => {
  it("a fence naming no language takes the organization's default_code_block_language", async () => {
    const accounts = serviceClient(m.accountsApp, m.deps.config.INTERNAL_TOKEN);
    const plain = '<div class="codehilite"><pre><span></span><code>None\n</code></pre></div>';
    expect((await rendered("```\nNone\n```")).html).toBe(plain);
    await m.ok(await accounts("PATCH", "/realm", { as: org.owner.as, params: { default_code_block_language: "python" } }));
    try {
      const python = '<div class="codehilite" data-code-language="Python"><pre><span></span><code><span class="kc">None</span>\n</code></pre></div>';
      expect((await rendered("```\nNone\n```")).html).toBe(python);
      expect((await m.ok(await m.call("POST", "/messages/render", org.member, { content: "~~~\nNone\n~~~" }))).rendered).toBe(python);
      // A fence naming its language keeps it.
      expect((await rendered("```text\nNone\n```")).html).toBe(plain.replace('class="codehilite"', 'class="codehilite" data-code-language="Text only"'));
    } finally {
      await m.ok(await accounts("PATCH", "/realm", { as: org.owner.as, params: { default_code_block_language: "" } }));
    }
  });
});

describe("renderings too large to keep", () => {
  // 39 characters of TeX whose HTML is about 5,500: 250 of them, under 10,000 characters, make 1.4 MB.
  const huge = "$$\\overbrace{\\underbrace{x}_{a}}^{b}$$ ".repeat(250);

  it("a message whose HTML is over 100 times the longest message is refused, and nothing is stored", async () => {
    const newest = async () => (await m.ok(await m.call("GET", "/messages", org.member, { anchor: "newest", num_before: 1, num_after: 0 }))).messages;
    const before = await newest();
    expectError(
      await m.call("POST", "/messages", org.member, { type: "stream", to: "general", topic: "markdown", content: huge }),
      400,
      "BAD_REQUEST",
      "Unable to render message",
    );
    expect(await newest()).toEqual(before);
    expectError(await m.call("POST", "/messages/render", org.member, { content: huge }), 400, "BAD_REQUEST", "Unable to render message");
    // A tenth of it renders as usual.
    const tenth = huge.slice(0, 39 * 25);
    expect((await rendered(tenth)).html).toContain('class="katex"');
  });
});
